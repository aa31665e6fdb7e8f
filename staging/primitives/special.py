"""Special functions as primitives (lgamma, digamma, ...): filled in by the scipy.special work."""

from __future__ import annotations
