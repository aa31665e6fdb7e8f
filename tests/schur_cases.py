"""Registry cases for the Schur and Hessenberg primitives (staging/primitives/schur.py), merged into
``primitive_cases.CASES``."""

from __future__ import annotations

from primitive_cases import CASES, Case, normal, operands  # noqa: F401 - the pieces cases are built from
