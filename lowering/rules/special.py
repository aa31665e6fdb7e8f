"""Lowering of the special-function primitives (``staging/primitives/special.py``)."""

from __future__ import annotations
