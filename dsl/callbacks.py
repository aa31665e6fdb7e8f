"""Host callbacks: ``pure_callback`` and ``io_callback`` call Python from inside a staged program, on NumPy arrays.

JAX's semantics: ``pure_callback(f, result_shape_dtypes, *args, vmap_method=..., **kwargs)`` computes
``f(*args, **kwargs)`` on the host for a pure ``f`` (the compiler may drop or repeat the call), with results of
the declared shapes and dtypes; ``io_callback`` runs ``f`` for its effect too (it is never dropped and runs once
per program execution). Array-like leaves of the arguments (staged tensors, arrays, NumPy arrays, Python numbers)
reach ``f`` as NumPy arrays; other leaves (strings, None) as they are. Outside staging both call ``f`` at once.

On a GPU, jaxlib's CUDA handler (``jax-cuda13-plugin``) copies the operands to the host and the results back,
synchronizing the stream around the call; without that package, compiling such a program for a GPU raises.

Deliberate differences from JAX: ``sharding`` is not accepted. Unordered callbacks that do not depend on each other's values may run in any order (XLA schedules
them by their operands, so a print of a value computed late comes late); ``ordered=True`` (``io_callback``,
``debug.print``, ``debug.callback``) runs them in the order they were staged, step by step in loops, and a program
with ordered callbacks runs to completion before its call returns (JAX keeps such calls asynchronous, threading a
token between them). ``pmap`` refuses ordered callbacks, as JAX does.
A callback's exception, or results of other types than declared, raise when the program runs, with the
callback's name and the line that staged it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from . import pytree
from .array import Array, asarray
from .dtypes import DType
from .lowering import runtime
from .staging import dtypes as _dt
from .staging.builder import is_staging
from .staging.ir import Aval, SourceLoc
from .staging.primitives import callback as C
from .staging.source import user_location
from .subgraph import function_name
from .tensor import Tensor, Traced
from .trace import to_atom, wrap

DT = TypeVar("DT", bound=DType)
S = TypeVarTuple("S")

_ARRAY_LEAVES = (Traced, Array, np.ndarray, np.generic, bool, int, float, complex)


def _result_avals(op: str, tree: Any, loc: SourceLoc | None) -> tuple[tuple[Aval, ...], pytree.TreeDef]:
    leaves, treedef = pytree.flatten(tree)
    avals = []
    for leaf in leaves:
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(
                f"{op}: result_shape_dtypes leaves need .shape and .dtype (ts.Spec, an array), got "
                f"{type(leaf).__name__} {leaf!r:.60}" + (f"\n  at {loc}" if loc is not None else "")
            )
        dims = getattr(getattr(leaf, "aval", None), "dims", None)
        avals.append(Aval(tuple(int(n) for n in shape), _dt.canonical(dtype), dims))
    return tuple(avals), treedef


class _FlatCall:
    """``fn(*args, **kwargs)`` on flat host arrays (the array-like leaves, in order), returning flat results."""

    def __init__(self, fn: Callable[..., Any], treedef: pytree.TreeDef, leaves: list[Any], dynamic: list[bool],
                 out_tree: pytree.TreeDef | None, name: str) -> None:
        self.fn, self.treedef, self.leaves, self.dynamic = fn, treedef, leaves, dynamic
        self.out_tree, self.name = out_tree, name

    def __call__(self, *arrays: Any) -> Sequence[Any]:
        values = iter(arrays)
        leaves = [next(values) if d else leaf for leaf, d in zip(self.leaves, self.dynamic)]
        args, kwargs = pytree.unflatten(self.treedef, leaves)
        result = self.fn(*args, **kwargs)
        if self.out_tree is None:
            return ()
        flat, tree = pytree.flatten(result)
        if tree != self.out_tree:
            raise C.CallbackError(f"{self.name} returned a value structured {tree}, but result_shape_dtypes is "
                                  f"{self.out_tree}")
        return flat


def _call(
    op: str, fn: Callable[..., Any], result_shape_dtypes: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
    vmap_method: str | None, effectful: bool, has_results: bool = True, ordered: bool = False,
) -> Any:
    loc = user_location()
    name = f"{op} {function_name(fn)}"
    avals, out_tree = _result_avals(op, result_shape_dtypes, loc) if has_results else ((), None)
    leaves, treedef = pytree.flatten((args, kwargs))
    dynamic = [isinstance(leaf, _ARRAY_LEAVES) for leaf in leaves]
    flat = _FlatCall(fn, treedef, leaves, dynamic, out_tree, name)
    results: list[Any]
    if not is_staging():  # eager: call it now (so in order), with the same conversions and checks
        arrays = [np.asarray(asarray(leaf).numpy()) for leaf, d in zip(leaves, dynamic) if d]
        results = [asarray(r) for r in C.HostCallback(flat, name, avals, vmap_method, loc)(*arrays)]
    else:
        callback = C.HostCallback(flat, name, avals, vmap_method, loc, ordered=ordered)
        operands = [to_atom(leaf) for leaf, d in zip(leaves, dynamic) if d]
        bound = C.io_callback(operands, callback) if effectful else C.pure_callback(operands, callback)
        results = [wrap(a) for a in bound]
    return pytree.unflatten(out_tree, results) if out_tree is not None else None


@overload
def pure_callback(
    callback: Callable[..., Any], result_shape_dtypes: Tensor[DT, Unpack[S]], *args: Any,
    vmap_method: str | None = None, **kwargs: Any,
) -> Tensor[DT, Unpack[S]]: ...
@overload
def pure_callback(
    callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, vmap_method: str | None = None, **kwargs: Any
) -> Any: ...
def pure_callback(
    callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, vmap_method: str | None = None, **kwargs: Any
) -> Any:
    """``callback(*args, **kwargs)`` computed on the host, for a pure ``callback`` returning values shaped as
    ``result_shape_dtypes`` (a pytree of ``ts.Spec``s or arrays). ``vmap_method`` says how it batches under
    ``vmap``: ``'sequential'`` (one call per member), ``'expand_dims'`` (one call; unbatched arguments get a
    leading axis of size 1) or ``'broadcast_all'`` (one call; all arguments batched). Not differentiable."""
    if vmap_method is not None and vmap_method not in C.VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {', '.join(C.VMAP_METHODS)} or None, got "
                         f"{vmap_method!r}")
    return _call("pure_callback", callback, result_shape_dtypes, args, kwargs, vmap_method, effectful=False)


def io_callback(
    callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any, ordered: bool = False, **kwargs: Any
) -> Any:
    """``callback(*args, **kwargs)`` run on the host for its effect (never dropped, once per run), returning values
    shaped as ``result_shape_dtypes`` (None: no results). Under ``vmap`` it runs once per member, in order.
    ``ordered=True``: after every ordered callback staged before it, whatever the data they read."""
    return _call("io_callback", callback, result_shape_dtypes, args, kwargs, "sequential", effectful=True,
                 has_results=result_shape_dtypes is not None, ordered=ordered)


def effects_barrier() -> None:
    """Wait until the host callbacks of every program run so far have run (JAX's ``jax.effects_barrier``): calls
    return as soon as their run is dispatched, so unordered callbacks may still be running after the call."""
    runtime.effects_barrier()


def debug_callback(callback: Callable[..., Any], *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """``callback(*args, **kwargs)`` on the host for its effect, results ignored: ``ts.debug.callback``
    (``ordered=True``: as ``io_callback``'s)."""

    def effect(*a: Any, **k: Any) -> None:
        callback(*a, **k)

    effect.__name__ = function_name(callback)
    _call("debug.callback", effect, None, args, kwargs, "sequential", effectful=True, has_results=False,
          ordered=ordered)
