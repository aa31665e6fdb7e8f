"""Host callbacks: Python functions a compiled program calls on the host, with its values as NumPy arrays.

- ``pure_callback(*args; callback)``: a pure function computed on the host; its results are ``callback.out_avals``.
  XLA may drop it when nothing reads its results, and run it again or not at all. Not differentiable (wrap it in
  ``custom_jvp`` / ``custom_vjp`` to give it a derivative): both derivative rules raise when a derivative would
  flow through it.
- ``io_callback(*args; callback)``: a function run for its effect (``debug.print``, ``debug.callback``, a log
  write), with or without results. Effectful: dead-code elimination keeps it and loops do not hoist it. Without
  results it is transparent to differentiation (it runs once, on the primal values); with results it is not
  differentiable. An *ordered* one (``callback.ordered``) runs after every ordered one staged before it: the
  lowering threads a token through them, and through the loops and branches that hold them.

Batching happens on the host: the batched equation is one callback on the batched operands (batch axis moved to
the front), and ``HostCallback`` splits them again as its ``vmap_method`` says: ``sequential`` calls the function
once per batch member (io callbacks always do), ``expand_dims`` once with a size-1 axis on unbatched operands,
``broadcast_all`` once with them broadcast. Nested vmaps add one level each (outermost axis first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..builder import bind
from ..errors import TransformError
from ..ir import Atom, Aval, Equation, Graph, SourceLoc
from ..primitive import Primitive, graph_holds
from ..zeros import def_no_derivative
from .subgraph_edits import batch_size_and_name

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")

FlatFunction = Callable[..., Sequence[Any]]


class CallbackError(Exception):
    """A host callback's results do not have the types it declared (raised on the host, inside the run)."""


class HostCallback:
    """The flat Python function an equation calls: one NumPy array per operand in, one per declared result out
    (checked against ``out_avals``). ``levels``: the vmaps applied to it, innermost first, each ``(size, which
    operands are batched)``."""

    __slots__ = (
        "function", "name", "result_avals", "vmap_method", "loc", "levels", "out_avals", "ordered", "failure"
    )

    def __init__(
        self, function: FlatFunction, name: str, result_avals: tuple[Aval, ...], vmap_method: str | None,
        loc: SourceLoc | None, levels: tuple[tuple[int, tuple[bool, ...]], ...] = (),
        out_avals: tuple[Aval, ...] | None = None, ordered: bool = False,
    ) -> None:
        self.function = function
        self.name = name
        self.result_avals = result_avals
        self.vmap_method = vmap_method
        self.loc = loc
        self.levels = levels
        self.out_avals = result_avals if out_avals is None else out_avals
        # Sequenced after the ordered callbacks staged before it. Its compiled call then takes the ordering token
        # first and returns it first (None on the host: XLA passes no data for a token).
        self.ordered = ordered
        # The exception of a failed call, for the caller to raise: XLA reports it as a runtime error in text.
        self.failure: BaseException | None = None

    def __repr__(self) -> str:
        return f"<host callback {self.name}>"

    def described(self) -> str:
        """Its name and the line that staged it, for errors about the callback as a whole."""
        return f"{self.name}{_at(self.loc)}"

    def batched(self, size: int, batched: tuple[bool, ...], name: Any) -> HostCallback:
        """This callback under one more vmap of ``size`` members (``batched``: which operands carry its axis,
        moved to the front)."""
        out_avals = tuple(Aval((size, *a.shape), a.dtype, (name, *a.dims)) for a in self.out_avals)
        return HostCallback(
            self.function, self.name, self.result_avals, self.vmap_method, self.loc,
            (*self.levels, (size, batched)), out_avals, self.ordered,
        )

    def __call__(self, *arrays: Any) -> tuple[np.ndarray[Any, Any] | None, ...]:
        try:
            if self.ordered:
                return (None, *self._checked(self._run(list(arrays[1:]), len(self.levels) - 1, 0)))
            return self._checked(self._run(list(arrays), len(self.levels) - 1, 0))
        except BaseException as exc:
            self.failure = exc
            raise

    def take_failure(self) -> BaseException | None:
        """The exception of the last failed call (once), noted with where the callback was staged."""
        failure, self.failure = self.failure, None
        if failure is not None:
            failure.add_note(f"raised in the host callback {self.name}{_at(self.loc)}")
        return failure

    def _run(self, arrays: list[Any], level: int, outer: int) -> tuple[Any, ...]:
        """The results for ``arrays``, whose leading axes are the vmap levels above ``level`` (``outer`` of them,
        present on every operand: expanded ones) followed by ``level``'s axis on its batched operands."""
        if level < 0:
            results = tuple(self.function(*arrays))
            if len(results) != len(self.result_avals):
                raise CallbackError(
                    f"{self.name} returned {len(results)} values, but its result_shape_dtypes declare "
                    f"{len(self.result_avals)}{_at(self.loc)}"
                )
            return results
        size, batched = self.levels[level]
        if self.vmap_method in ("expand_dims", "broadcast_all"):
            widened = [a if b else _widen(a, outer, size if self.vmap_method == "broadcast_all" else 1)
                       for a, b in zip(arrays, batched)]
            return self._run(widened, level - 1, outer + 1)
        members = [self._run([a[i] if b else a for a, b in zip(arrays, batched)], level - 1, 0) for i in range(size)]
        if not members:  # an empty batch: no call, empty results of the member types
            depth = len(self.levels) - level
            return tuple(np.zeros((0, *a.shape[depth:]), a.dtype) for a in self.out_avals)
        return tuple(np.stack([np.asarray(m[i]) for m in members]) for i in range(len(self.out_avals)))

    def _checked(self, results: tuple[Any, ...]) -> tuple[np.ndarray[Any, Any], ...]:
        out = []
        for i, (value, aval) in enumerate(zip(results, self.out_avals)):
            array = np.asarray(value)
            if array.shape != aval.shape or array.dtype != aval.dtype:
                raise CallbackError(
                    f"{self.name} returned {array.dtype}{list(array.shape)} for result {i}, but its "
                    f"result_shape_dtypes declare {aval.dtype}{list(aval.shape)}{_at(self.loc)}"
                )
            out.append(array)
        return tuple(out)


def _at(loc: SourceLoc | None) -> str:
    return f" (staged at {loc})" if loc is not None else ""


def _widen(array: Any, axis: int, size: int) -> Any:
    expanded = np.expand_dims(array, axis)
    if size == 1:
        return expanded
    shape = list(expanded.shape)
    shape[axis] = size
    return np.broadcast_to(expanded, shape)


# ------------------------------------------------------------------------------------------------ the primitives


def _not_differentiable(callback: HostCallback, kind: str) -> TransformError:
    return TransformError(
        f"{callback.name} is a {kind}, which has no derivative: wrap it in ts.custom_jvp or ts.custom_vjp to give "
        "it one, or ts.stop_gradient its operands",
        kind,
        callback.loc,
    )


def _define(name: str, effectful: bool) -> Primitive:
    prim = Primitive(name, multiple_results=True, effectful=effectful)

    @prim.def_shape
    def _shape(*avals: Aval, callback: HostCallback) -> tuple[Aval, ...]:
        return callback.out_avals

    def_no_derivative(prim, lambda params: _not_differentiable(params["callback"], name))

    @prim.def_batch
    def _batch(
        args: Sequence[Atom], dims: Sequence[int | None], *, callback: HostCallback
    ) -> tuple[list[Atom], list[int]]:
        from ..transforms.batching import move_batch_axis

        size, dim_name = batch_size_and_name(args, dims)
        if callback.vmap_method is None:
            raise TransformError(
                f"{callback.name}: vmap of a pure_callback needs vmap_method= ('sequential', 'expand_dims' or "
                "'broadcast_all'): how the function handles a batch",
                "vmap",
                callback.loc,
            )
        moved = [a if d is None else move_batch_axis(a, d, 0, size) for a, d in zip(args, dims)]
        batched = callback.batched(size, tuple(d is not None for d in dims), dim_name)
        outs = bind(prim, *moved, callback=batched)
        return list(outs), [0] * len(outs)

    return prim


pure_callback_p = _define("pure_callback", effectful=False)
io_callback_p = _define("io_callback", effectful=True)


def pure_callback(args: Sequence[Atom], callback: HostCallback) -> list[Atom]:
    return list(bind(pure_callback_p, *args, callback=callback))


def has_ordered_effects(graph: Graph) -> bool:
    """Whether ``graph`` (or a graph nested in it: a loop body, a branch) holds an ordered io callback."""
    return graph_holds(graph, _is_ordered_callback)


def _is_ordered_callback(eqn: Equation) -> bool:
    return eqn.primitive is io_callback_p and eqn.params["callback"].ordered


def io_callback(args: Sequence[Atom], callback: HostCallback) -> list[Atom]:
    if _REPLAYING[0] and not callback.out_avals:  # its effect already happened with the primal values
        return []
    return list(bind(io_callback_p, *args, callback=callback))


_REPLAYING = [0]


@contextmanager
def replaying() -> Iterator[None]:
    """Staging a function again for values an earlier run already computed (the functions ``linearize`` and
    ``vjp`` return): io callbacks without results are left out, as their effects ran with that run."""
    _REPLAYING[0] += 1
    try:
        yield
    finally:
        _REPLAYING[0] -= 1
