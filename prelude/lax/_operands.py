"""What the ``lax`` functions share: strict operands. Unlike ``tensorstage.numpy``, ``lax`` never promotes and
never broadcasts: tensor operands must have one dtype and one shape (a rank-0 tensor beside a shaped one is the
exception, as in JAX), and Python scalars take the tensor operands' dtype."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...dtypes import to_numpy
from ...staging.ir import Atom
from ..numpy._core import as_tensor, atom, describe, dtype_error, is_weak, result_dtype, shape_error


def strict_atoms(name: str, *operands: Any) -> list[Atom]:
    """``operands`` as atoms of one dtype: a DTypeError naming ``lax.<name>`` and every operand when the tensor
    operands' dtypes differ (their shapes are the primitive's to check)."""
    tensors = [None if is_weak(x) else as_tensor(x) for x in operands]
    kinds = {t.aval.dtype for t in tensors if t is not None}
    if len(kinds) > 1:
        got = ", ".join(describe(t if t is not None else x) for t, x in zip(tensors, operands))
        raise dtype_error(
            name, f"lax.{name} requires operands of one dtype, got {got}; convert one with lax.convert_element_type "
            f"(tnp.{name} and the operators promote)"
        )
    dtype = kinds.pop() if kinds else result_dtype(name, operands)
    return [t.atom if t is not None else atom(x, dtype, name) for t, x in zip(tensors, operands)]


def dtype_argument(name: str, dtype: Any) -> np.dtype[Any]:
    """A dtype argument (``ts.f32``, ``np.float32``, ``"float32"``, ``np.dtype``) as a NumPy dtype."""
    try:
        return to_numpy(dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"lax.{name}: {dtype!r} is not a dtype ({exc})") from None


def same_shapes(name: str, atoms: list[Atom]) -> list[Atom]:
    """``atoms`` when their shapes agree as ``lax`` requires (equal, or rank 0 beside a shaped operand), for the
    functions built on ``tensorstage.numpy`` ones, which would broadcast further."""
    shaped = [a.aval for a in atoms if a.aval.shape]
    if any(a.shape != shaped[0].shape for a in shaped):
        raise shape_error(
            name, f"lax.{name} requires operands of one shape (or rank 0), got {', '.join(map(str, shaped))}; "
            f"broadcast them first (lax.broadcast_in_dim), or use tnp.{name}"
        )
    return atoms


def checked_axes(name: str, values: Sequence[int], ndim: int) -> tuple[int, ...]:
    """``values`` as distinct axes of a rank-``ndim`` operand (negative ones from the end), or a ShapeError."""
    out = []
    for value in values:
        a = operator.index(value)
        if not -ndim <= a < ndim:
            raise shape_error(name, f"lax.{name}: axis {a} is out of range for rank {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise shape_error(name, f"lax.{name}: repeated axes {tuple(values)}")
    return tuple(out)


def checked_axis(name: str, value: int, ndim: int) -> int:
    return checked_axes(name, (value,), ndim)[0]
