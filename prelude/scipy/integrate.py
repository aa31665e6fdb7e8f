"""``tensorstage.scipy.integrate``: JAX's ``jax.scipy.integrate``: ``trapezoid``, the trapezoidal rule (the same
function as ``tensorstage.numpy.trapezoid``, as JAX's is ``jax.numpy.trapezoid``: floating-point samples, ``x``
1-D along ``axis`` or broadcastable against ``y``, ``dx`` a number or a 0-d tensor)."""

from __future__ import annotations

from ..numpy.sampled_calculus import trapezoid

__all__ = ["trapezoid"]
