"""``vectorize``, ``apply_along_axis`` and ``apply_over_axes``, built on ``ts.vmap`` as in JAX: the function is
called once on staged tensors (not once per element), so it must be written with tensor operations.
``vectorize`` takes NumPy's ``signature`` (core dimensions), ``excluded`` and keyword arguments (broadcast after the
positional ones); broadcasting follows the library's policy (no leading axes added to one operand while another is
stretched: ``vectorize(f)(x[:, None], y)`` is an error, ``y[None, :]`` is not).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from ...array import as_host_array
from ...dtypes import to_numpy
from ...staging.ir import Aval
from ...tensor import Tensor
from ._core import broadcast_shapes, describe, shape_error
from .index_tools import _I32, AnyTensor, _error, _shape_of
from .static_settings import static_int

__all__: list[str] = ["apply_along_axis", "apply_over_axes", "vectorize"]


# ---------------------------------------------------------------------------- vectorize and friends


_NAME = r"\w+"
_CORE = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_SIGNATURE = re.compile(rf"^{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*$")

CoreDims = tuple[str, ...]


def _parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    """A gufunc signature such as ``"(m,n),(n)->(m)"`` as the core dim names of each input and output."""
    compact = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(compact):
        raise _error(ValueError, "vectorize", f"not a valid gufunc signature: {signature!r}")
    inputs, outputs = compact.split("->")
    return _core_dims(inputs), _core_dims(outputs)


def _core_dims(side: str) -> list[CoreDims]:
    return [tuple(re.findall(_NAME, arg)) for arg in re.findall(_CORE, side)]


def _bind_core(sizes: dict[str, int], shape: tuple[int, ...], core: CoreDims, what: str, exact: bool) -> None:
    if len(shape) < len(core) or (exact and len(shape) != len(core)):
        raise _error(ValueError, "vectorize", f"{what} of shape {shape} does not fit the core dims {core}")
    for name, n in zip(core, shape[len(shape) - len(core):]):
        if sizes.setdefault(name, n) != n:
            raise _error(ValueError, "vectorize", f"core dim {name!r} has sizes {sizes[name]} and {n} ({what})")


def vectorize(pyfunc: Callable[..., Any], otypes: str | Sequence[Any] | None = None, doc: str | None = None,
              excluded: Collection[int | str] = frozenset(), cache: bool = False,
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` made to broadcast over leading axes, as NumPy's ``vectorize`` and ``jax.numpy.vectorize``: it
    is called once, on staged tensors, through ``ts.vmap`` (so it must use tensor operations). Without
    ``signature`` it sees scalars (one element of each broadcast argument); with a gufunc ``signature`` such as
    ``"(m,n),(n)->(m)"`` it sees the trailing core axes. ``excluded`` positions and keyword names are passed
    through unchanged; other keyword arguments are broadcast like positional ones (after them, as in NumPy).
    ``otypes`` (typecodes, or one dtype per output; ``float`` is the default float, f32) converts the outputs,
    ``doc`` replaces the docstring; ``cache`` has nothing to do (``pyfunc`` already runs once per call)."""
    if any(not isinstance(e, (int, str)) or isinstance(e, bool) for e in excluded):
        raise _error(TypeError, "vectorize", f"excluded must hold ints and strings, got {excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise _error(ValueError, "vectorize", f"excluded={excluded!r} has negative positions")
    cores = _parse_signature(signature) if signature is not None else None
    out_dtypes = _output_dtypes(otypes)

    @functools.wraps(pyfunc)
    def vectorized(*args: Any, **kwargs: Any) -> Any:
        func, operands = _bind_excluded(pyfunc, excluded, args, kwargs)
        in_cores: list[CoreDims] = cores[0] if cores is not None else [()] * len(operands)
        if len(in_cores) != len(operands):
            raise _error(TypeError, "vectorize", f"signature {signature!r} takes {len(in_cores)} arguments, got "
                         f"{len(operands)}")
        result = _call_vectorized(func, operands, in_cores, cores[1] if cores is not None else None)
        return result if out_dtypes is None else _converted(result, out_dtypes)

    if doc is not None:
        vectorized.__doc__ = doc
    return vectorized


def _output_dtypes(otypes: str | Sequence[Any] | None) -> list[np.dtype[Any]] | None:
    if otypes is None:
        return None
    try:
        return [to_numpy(t) for t in otypes]
    except TypeError as exc:
        raise _error(TypeError, "vectorize", f"otypes {otypes!r} must be typecodes or dtypes: {exc}") from None


def _converted(result: Any, dtypes: list[np.dtype[Any]]) -> Any:
    outs = result if isinstance(result, tuple) else (result,)
    if len(outs) != len(dtypes):
        raise _error(TypeError, "vectorize", f"otypes name {len(dtypes)} outputs, the function returned {len(outs)}")
    converted = tuple(o if o.dtype == d else o.astype(d) for o, d in zip(outs, dtypes))
    return converted if isinstance(result, tuple) else converted[0]


def _bind_excluded(pyfunc: Callable[..., Any], excluded: Collection[int | str], args: Sequence[Any],
                   kwargs: dict[str, Any]) -> tuple[Callable[..., Any], list[Any]]:
    """A function of the broadcast operands only (positional ones, then non-excluded keyword ones)."""
    positions = [i for i in range(len(args)) if i not in excluded]
    names = [k for k in kwargs if k not in excluded]

    def func(*operands: Any) -> Any:
        full = list(args)
        for i, value in zip(positions, operands):
            full[i] = value
        keywords = dict(kwargs)
        keywords.update(zip(names, operands[len(positions):]))
        return pyfunc(*full, **keywords)

    return func, [args[i] for i in positions] + [kwargs[k] for k in names]


def _as_operand(x: Any) -> Any:
    return x if isinstance(x, Tensor) or type(x) in (int, float, bool) else as_host_array(x)


def _call_vectorized(func: Callable[..., Any], operands: list[Any], in_cores: list[CoreDims],
                     out_cores: list[CoreDims] | None) -> Any:
    from ...batching import vmap
    from .shaping import expand_dims, squeeze

    operands = [_as_operand(x) for x in operands]
    sizes: dict[str, int] = {}
    loops: list[tuple[int, ...]] = []
    for k, (x, core) in enumerate(zip(operands, in_cores)):
        shape = _shape_of(x)
        _bind_core(sizes, shape, core, f"argument {k}", exact=False)
        loops.append(shape[: len(shape) - len(core)])
    avals = [Aval(loop, _I32, (None,) * len(loop)) for loop in loops if loop]
    batch = broadcast_shapes("vectorize", avals).shape if avals else ()
    if out_cores is not None:
        func = _checking_outputs(func, dict(sizes), out_cores)
    # Size-1 loop axes are squeezed and mapped with in_axes=None (as JAX does): no broadcast copies are made.
    squeezed: list[Any] = []
    padded: list[tuple[int, ...]] = []
    for x, loop in zip(operands, loops):
        ones = tuple(i for i, n in enumerate(loop) if n == 1)
        squeezed.append(squeeze(x, ones) if ones else x)
        padded.append((1,) * (len(batch) - len(loop)) + loop)
    expand: list[int] = []
    mapped = func
    for axis in reversed(range(len(batch))):
        in_axes = tuple(None if p[axis] == 1 else 0 for p in padded)
        if all(a is None for a in in_axes):
            expand.append(axis)
        else:
            mapped = vmap(mapped, in_axes=in_axes)
    if mapped is func:  # nothing to map over: host arrays as tensors, as vmap would give them
        from .creation import array

        squeezed = [array(x) if isinstance(x, np.ndarray) else x for x in squeezed]
    result = mapped(*squeezed)
    if not expand:
        return result
    if isinstance(result, tuple):
        return tuple(expand_dims(r, tuple(expand)) for r in result)
    return expand_dims(result, tuple(expand))


def _checking_outputs(func: Callable[..., Any], sizes: dict[str, int], out_cores: list[CoreDims]
                      ) -> Callable[..., Any]:
    def checked(*args: Any) -> Any:
        out = func(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if (len(out_cores) > 1 and not isinstance(out, tuple)) or len(outs) != len(out_cores):
            raise _error(TypeError, "vectorize", f"the signature promises {len(out_cores)} outputs, the function "
                         f"returned {len(outs)}")
        bound = dict(sizes)
        for k, (o, core) in enumerate(zip(outs, out_cores)):
            _bind_core(bound, _shape_of(o), core, f"output {k}", exact=True)
        return out

    return checked


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """``func1d(arr_1d, *args, **kwargs)`` on every 1-D slice along ``axis``: its result axes replace ``axis``.
    Built on ``ts.vmap`` as in JAX, so ``func1d`` is called once, on a staged slice."""
    from ...batching import vmap

    ndim = len(_shape_of(arr))
    if ndim == 0:
        raise shape_error("apply_along_axis", f"needs an operand of rank >= 1, got {describe(arr)}")
    ax = static_int("apply_along_axis", axis, "axis", "it picks the slices", located=True)
    if not -ndim <= ax < ndim:
        raise shape_error("apply_along_axis", f"axis {ax} is out of range for {describe(arr)} (rank {ndim})")
    ax %= ndim

    def func(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    for i in range(1, ndim - ax):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(ax):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(_as_operand(arr))


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: int | Sequence[int]) -> AnyTensor:
    """``func(a, axis)`` applied for each of ``axes`` in turn, each result kept at ``a``'s rank (a reduced axis
    is put back with size 1), as NumPy does."""
    from .creation import asarray
    from .shaping import expand_dims

    result = a if isinstance(a, Tensor) else as_host_array(a)
    ndim = len(_shape_of(result))
    for axis in (axes,) if isinstance(axes, int) else tuple(axes):
        axis = static_int("apply_over_axes", axis, "axis", "it picks the axes", located=True)
        if not -ndim <= axis < ndim:
            raise shape_error("apply_over_axes", f"axis {axis} is out of range for {describe(a)} (rank {ndim})")
        axis %= ndim  # as NumPy: func sees the axis counted from the front
        out = func(result, axis)
        rank = len(_shape_of(out))
        if rank == ndim - 1:
            out = expand_dims(out, axis)
        elif rank != ndim:
            raise _error(ValueError, "apply_over_axes", f"func returned rank {rank} for an operand of rank {ndim} "
                         f"(axis {axis}): it must keep the rank or remove one axis")
        result = out
    return result if isinstance(result, Tensor) else asarray(result)
