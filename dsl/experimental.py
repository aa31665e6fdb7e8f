"""``tensorstage.experimental``: JAX's ``jax.experimental`` pieces (``checkify``)."""

from . import checkify  # ts.experimental.checkify: runtime errors as values

__all__ = ["checkify"]
