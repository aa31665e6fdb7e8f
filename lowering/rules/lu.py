"""Lowering of the ``lu`` primitive (``staging/primitives/lu.py``)."""

from __future__ import annotations
