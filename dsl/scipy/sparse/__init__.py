"""``tensorstage.scipy.sparse``: as ``jax.scipy.sparse``, the Krylov solvers of ``tensorstage.scipy.sparse.linalg``
(``cg``, ``gmres``, ``bicgstab``)."""

from . import linalg

__all__ = ["linalg"]
