"""Schur and Hessenberg decompositions as primitives: filled in by the scipy.linalg work."""

from __future__ import annotations
