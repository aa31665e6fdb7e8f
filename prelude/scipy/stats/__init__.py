"""``tensorstage.scipy.stats``: one module per distribution (``norm``, ...), as ``jax.scipy.stats``."""

from __future__ import annotations

__all__: list[str] = []
