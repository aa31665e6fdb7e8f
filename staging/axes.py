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


def names_walked_axis(params: Mapping[str, Any]) -> bool:
    """Whether an equation with these params is a collective over the axis being batched right now (so the
    batching walker must hand it to its rule even when none of its operands is batched)."""
    name = params.get("axis_name")
    return name is not None and bool(_FRAMES) and _FRAMES[-1].name == name


def walked_axis() -> AxisFrame | None:
    return _FRAMES[-1] if _FRAMES else None
