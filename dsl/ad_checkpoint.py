"""JAX's ``jax.ad_checkpoint`` names: ``checkpoint`` (``remat``), ``checkpoint_name`` and ``checkpoint_policies``."""

from __future__ import annotations

from . import checkpoint_policies
from .checkpoint import checkpoint, checkpoint_name

remat = checkpoint

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
