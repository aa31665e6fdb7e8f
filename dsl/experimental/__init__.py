"""``tensorstage.experimental``: JAX's ``jax.experimental`` pieces: ``ode.odeint`` (implemented in
``tensorstage.prelude.experimental``) and ``checkify`` (runtime errors as values). A package, so JAX's imports
work as they are: ``from tensorstage.experimental.ode import odeint``."""

from . import checkify, ode

__all__ = ["checkify", "ode"]
