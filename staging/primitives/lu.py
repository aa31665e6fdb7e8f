"""LU factorization with partial pivoting as a primitive: filled in by the scipy.linalg work."""

from __future__ import annotations
