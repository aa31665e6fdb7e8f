"""Lowering of the Schur and Hessenberg primitives (``staging/primitives/schur.py``)."""

from __future__ import annotations
