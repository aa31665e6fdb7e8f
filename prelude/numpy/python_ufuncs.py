"""``frompyfunc`` and ``ufunc``: a function of scalars as a NumPy-style universal function, as in JAX.

The function is written with tensor operations on 0-d tensors (it is batched with ``vectorize``, i.e. ``vmap``,
and called once, not once per element), so ``frompyfunc(lambda a, b: a * b + 1, 2, 1)`` works while a function
that branches on a value in Python does not (use ``tnp.where``). Calls broadcast under the library's policy.

Methods: ``outer``, ``reduce`` and ``accumulate`` (for two inputs and one output; ``reduce`` and ``accumulate``
fold along one axis with ``ts.scan``, left to right, so any function works, associative or not). Not here: ``at``
(write ``x.at[i].set(f(x[i], v))``) and ``reduceat``. tensorstage's own functions (``tnp.add``...) are plain
functions, not ``ufunc`` instances: ``tnp.add.reduce`` is ``tnp.sum``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...control_flow import scan
from ...tensor import Tensor
from ._core import as_tensor, describe, normalize_axes, shape_error
from .creation import asarray, full
from .index_tools import AnyTensor, _error
from .joining import concatenate
from .shaping import expand_dims, moveaxis, ravel, reshape
from .vectorizing import vectorize

__all__ = ["frompyfunc", "ufunc"]


class ufunc:  # noqa: N801 - NumPy's name
    """A universal function made from ``func``, a function of ``nin`` scalars giving ``nout`` results (a tuple
    when ``nout > 1``). ``identity`` is the value ``reduce`` gives over an empty axis."""

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *, name: str | None = None,
                 identity: Any = None) -> None:
        if not callable(func):
            raise _error(TypeError, "ufunc", f"func must be callable, got {func!r}")
        if not (isinstance(nin, int) and nin >= 1 and isinstance(nout, int) and nout >= 1):
            raise _error(ValueError, "ufunc", f"nin and nout must be positive ints, got nin={nin!r}, nout={nout!r}")
        self.func = func
        self.nin = nin
        self.nout = nout
        self.nargs = nin + nout
        self.identity = identity
        self._name = name or str(getattr(func, "__name__", "ufunc"))
        self.__name__ = self._name
        self._vectorized = vectorize(func)

    def __repr__(self) -> str:
        return f"<tnp.ufunc '{self._name}'>"

    def __call__(self, *args: Any) -> Any:
        """``func`` applied elementwise to the broadcast ``args``: a tensor, or a tuple of ``nout`` of them."""
        if len(args) != self.nin:
            raise _error(TypeError, self._name, f"takes {self.nin} inputs, got {len(args)}")
        return self._vectorized(*args)

    def _binary(self, method: str) -> str:
        name = f"{self._name}.{method}"
        if self.nin != 2 or self.nout != 1:
            raise _error(ValueError, name, f"needs a ufunc of 2 inputs and 1 output, this has nin={self.nin}, "
                         f"nout={self.nout}")
        return name

    def outer(self, A: Any, B: Any, /) -> AnyTensor:
        """``func(a, b)`` for every pair: the result has ``A``'s axes, then ``B``'s."""
        self._binary("outer")
        a, b = _tensor(A), _tensor(B)
        a, b = reshape(a, (*a.shape, *(1,) * b.ndim)), reshape(b, (*(1,) * a.ndim, *b.shape))
        result: AnyTensor = self(a, b)
        return result

    def reduce(self, a: Any, axis: int | None = 0, *, keepdims: bool = False, initial: Any = None) -> AnyTensor:
        """``func`` folded along ``axis`` (the flattened array when None), left to right, starting from
        ``initial`` if given (else the first element; an empty axis gives ``identity``)."""
        name = self._binary("reduce")
        t, ax = _along(name, a, axis)
        rest = moveaxis(t, ax, 0)
        if initial is not None:
            start: AnyTensor = full(rest.shape[1:], initial, dtype=rest.dtype)
        elif rest.shape[0]:
            start, rest = rest[0], rest[1:]
        elif self.identity is not None:
            start = full(rest.shape[1:], self.identity, dtype=rest.dtype)
        else:
            raise _error(ValueError, name, f"zero-size reduction of {describe(t)} along axis {ax} without an "
                         "identity or initial value")
        if rest.shape[0]:
            start = scan(lambda carry, x: (self(carry, x), None), start, rest)[0]
        if keepdims:
            return expand_dims(start, ax) if axis is not None else reshape(start, (1,) * as_tensor(a).ndim)
        return start

    def accumulate(self, a: Any, axis: int = 0) -> AnyTensor:
        """The running ``reduce`` along ``axis``: element ``i`` folds elements ``0..i``."""
        name = self._binary("accumulate")
        if axis is None:
            raise _error(TypeError, name, "axis must be an int (NumPy's accumulate has no flattened form)")
        t, ax = _along(name, a, axis)
        rows = moveaxis(t, ax, 0)
        if rows.shape[0] <= 1:
            return t
        folded = scan(lambda carry, x: (self(carry, x),) * 2, rows[0], rows[1:])[1]
        return moveaxis(concatenate([expand_dims(rows[0], 0), folded]), 0, ax)


def _tensor(x: Any) -> AnyTensor:
    return x if isinstance(x, Tensor) else asarray(x)


def _along(name: str, a: Any, axis: int | None) -> tuple[AnyTensor, int]:
    t = _tensor(a)
    if axis is None:
        return ravel(t), 0
    if t.ndim == 0:
        raise shape_error(name, f"needs an operand of rank >= 1, got {describe(t)}")
    if isinstance(axis, (tuple, list)):
        raise _error(TypeError, name, f"takes one axis (an int) or None, got {axis!r}")
    return t, normalize_axes(name, axis, t, allow_none=False)[0]


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """``func``, a function of ``nin`` scalars giving ``nout`` results, as a ``ufunc`` (see the module
    docstring)."""
    return ufunc(func, nin, nout, identity=identity)
