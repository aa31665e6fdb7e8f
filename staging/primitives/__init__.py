"""Every primitive, grouped by family; importing this package registers them all."""

from . import elementwise, linalg, reductions, structural

__all__ = ["elementwise", "linalg", "reductions", "structural"]
