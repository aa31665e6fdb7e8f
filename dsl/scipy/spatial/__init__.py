"""``tensorstage.scipy.spatial``: as ``jax.scipy.spatial``, the rotations of ``tensorstage.scipy.spatial.transform``
(``Rotation``, ``Slerp``)."""

from . import transform

__all__ = ["transform"]
