"""``jax.lax``'s staging tools: ``platform_dependent``, ``composite``, ``dtype``, ``empty``, ``shape_as_value``
and ``stage``.

Deliberate differences from jax.lax:
- ``platform_dependent`` picks its branch when staged, for the default platform (``TENSORSTAGE_DEFAULT_DEVICE``:
  ``'cpu'``; ``'gpu'`` picks the ``cuda`` branch, else ``rocm``): a program compiled for another device keeps that
  choice. JAX picks when lowering.
- ``composite`` calls its decomposition (the staged program is that decomposition; no ``stablehlo.composite``).
- ``empty`` gives zeros; ``stage`` gives its operand as a tensor (outside staging: an Array).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from typing_extensions import Unpack

from ... import pytree
from ...dtypes import to_numpy
from ...staging import dtypes as _dt
from ...tensor import Tensor
from ...transfers import default_backend
from ..numpy._core import as_tensor, op
from ._operands import dtype_argument
from .structural import full

__all__ = ["composite", "dtype", "empty", "platform_dependent", "shape_as_value", "stage"]

T = TypeVar("T")
AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]


_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def platform_dependent(*args: Any, default: Callable[..., T] | None = None, **per_platform: Callable[..., T]) -> T:
    """``per_platform[platform](*args)`` for the platform the program is staged for (the default one:
    ``TENSORSTAGE_DEFAULT_DEVICE``; a GPU is ``cuda``, or ``rocm`` when only that branch is given), else
    ``default(*args)``."""
    for name, branch in per_platform.items():
        if name == "gpu":
            raise ValueError("lax.platform_dependent: use 'cuda' or 'rocm' for a GPU branch (as JAX), not 'gpu'")
        if name not in _PLATFORMS:
            raise ValueError(f"lax.platform_dependent: unknown platform {name!r}; expected one of {_PLATFORMS}")
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the {name!r} branch must be a callable")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable")
    names = ("cuda", "rocm") if default_backend() == "gpu" else (default_backend(),)
    chosen = next((per_platform[n] for n in names if n in per_platform), default)
    if chosen is None:
        raise ValueError(f"lax.platform_dependent: no branch for platform {names[0]!r} and no default "
                         f"(branches: {sorted(per_platform)})")
    return chosen(*args)


def composite(decomposition: Callable[..., T], name: str, version: int = 0) -> Callable[..., T]:
    """``decomposition`` as JAX's composite op ``name``: here it is simply called (keyword arguments are its
    static attributes and must not be staged tensors, as in JAX)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"lax.composite: name must be a non-empty string, got {name!r}")

    @functools.wraps(decomposition)
    def call(*args: Any, **attributes: Any) -> T:
        staged = [k for k, v in attributes.items() if any(isinstance(leaf, Tensor) for leaf in pytree.leaves(v))]
        if staged:
            raise TypeError(f"lax.composite {name!r}: attributes {staged} hold tensors; attributes are static "
                            "(pass NumPy arrays, or pass the tensors as positional arguments)")
        return decomposition(*args, **attributes)

    return call


_PYTHON_SCALARS: dict[type, np.dtype[Any]] = {
    bool: _dt.BOOL, int: _dt.DEFAULT_INT, float: _dt.DEFAULT_FLOAT, complex: _dt.DEFAULT_COMPLEX,
}


def dtype(x: Any) -> np.dtype[Any]:
    """The dtype of a value (an array, a tensor, a Python or NumPy scalar) or of a dtype-like (``ts.f32``,
    ``np.float32``, ``'float32'``, ``float``), as the ``np.dtype`` it gives ``ts`` arrays."""
    if x is None:
        raise ValueError("lax.dtype: None has no dtype")
    if type(x) in _PYTHON_SCALARS:
        return _PYTHON_SCALARS[type(x)]
    held = getattr(x, "dtype", None)
    if held is not None and not isinstance(x, type):
        return to_numpy(held)
    try:
        return to_numpy(x)
    except (TypeError, ValueError):
        raise TypeError(f"lax.dtype: {x!r} is neither an array nor a dtype") from None


def empty(shape: int | Sequence[int], dtype: Any, *, out_sharding: Any = None) -> AnyTensor:
    """An array of ``shape`` and ``dtype`` whose values are not to be relied on (zeros here)."""
    sizes = (shape,) if isinstance(shape, int) else tuple(shape)
    return full(sizes, 0, dtype_argument("empty", dtype))


def shape_as_value(shape: Sequence[int]) -> np.ndarray[Any, np.dtype[Any]]:
    """``shape`` as a 1-d signed integer array (int32, or int64 for sizes beyond it), as JAX's for static shapes."""
    sizes = [operator.index(n) for n in shape]
    wide = any(n > np.iinfo(np.int32).max for n in sizes)
    return np.asarray(sizes, dtype=np.int64 if wide else np.int32)


def stage(x: Any, /) -> AnyTensor:
    """``x`` (an array, NumPy array or Python scalar) as a tensor of the program being staged (outside staging:
    an Array), unchanged in value."""
    return _staged(x)


@op
def _staged(x: Any) -> AnyTensor:
    return as_tensor(x)
