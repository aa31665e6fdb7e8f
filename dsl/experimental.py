"""``tensorstage.experimental``: JAX's ``jax.experimental`` pieces: ``ode.odeint`` (implemented in
``tensorstage.prelude.experimental``) and ``checkify`` (runtime errors as values)."""

from . import checkify
from .prelude.experimental import ode

__all__ = ["checkify", "ode"]
