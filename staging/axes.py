"""Named mapped axes in scope while staging: which axis names collectives may use, and their sizes.

``pmap`` and ``vmap`` push a frame while they stage the mapped function (and ``vmap`` keeps it while it batches
the staged graph), so ``psum(x, "i")`` can check that ``"i"`` is bound and read its size. The innermost frame is
the axis the batching walker is currently eliminating: a collective over that axis becomes a reduction over the
batch axis; a collective over any other (outer) axis stays a collective.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NamedTuple

from .errors import TransformError
from .ir import Graph
from .source import user_location


class AxisFrame(NamedTuple):
    name: str | None  # None: an unnamed vmap (no collective can name it)
    size: int
    kind: str  # "pmap" or "vmap"


_FRAMES: list[AxisFrame] = []


@contextmanager
def axis_frame(name: str | None, size: int, kind: str) -> Iterator[AxisFrame]:
    frame = AxisFrame(name, size, kind)
    _FRAMES.append(frame)
    try:
        yield frame
    finally:
        _FRAMES.pop()


def lookup(name: str, op: str) -> AxisFrame:
    """The innermost frame binding ``name``; a clear error naming the axis when none does."""
    for frame in reversed(_FRAMES):
        if frame.name == name:
            return frame
    bound = [f"{f.name!r} ({f.kind}, size {f.size})" for f in _FRAMES if f.name is not None]
    where = "bound axes here: " + ", ".join(bound) if bound else "no named axis is bound here"
    raise TransformError(
        f"[{op}] axis name {name!r} is not bound: collectives run only inside ts.pmap(f, axis_name={name!r}) or "
        f"ts.vmap(f, axis_name={name!r}) ({where})",
        None,
        user_location(),
    )


def inside(kind: str) -> bool:
    return any(f.kind == kind for f in _FRAMES)


DIRECT, NESTED = 1, 2


def names_walked_axis(params: Mapping[str, Any]) -> int:
    """Whether an equation with these params uses the axis being batched right now, so the batching walker must
    batch it even when none of its operands is batched: ``DIRECT`` for a collective over that axis, ``NESTED``
    for an equation whose nested graphs (cond branches, loop bodies, ...) contain one; 0 otherwise."""
    name = _FRAMES[-1].name if _FRAMES else None
    if name is None:
        return 0
    if params.get("axis_name") == name:
        return DIRECT
    return NESTED if any(_graph_names(value, name) for value in params.values()) else 0


def _graph_names(value: Any, name: str) -> bool:
    if isinstance(value, Graph):
        return any(
            eqn.params.get("axis_name") == name or any(_graph_names(v, name) for v in eqn.params.values())
            for eqn in value.eqns
            if eqn.params
        )
    if isinstance(value, tuple):
        return any(_graph_names(v, name) for v in value)
    return False


def walked_axis() -> AxisFrame | None:
    return _FRAMES[-1] if _FRAMES else None
