"""``tensorstage.experimental``'s prelude part: JAX's ``jax.experimental.ode`` (``odeint``)."""

from . import ode

__all__ = ["ode"]
