"""Named mapped axes in scope while staging: which axis names collectives may use, and their sizes.

``pmap`` and ``vmap`` push a frame while they stage the mapped function (``shard_map`` one per mesh axis), so
``psum(x, "i")`` can check that ``"i"`` is bound and read its size. Batching does not read these frames: ``vmap``
hands the axis name to the batching walker, which asks each primitive whether an equation uses it
(``Primitive.uses_axis``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from .errors import TransformError
from .source import user_location


class AxisFrame(NamedTuple):
    name: str | None  # None: an unnamed vmap (no collective can name it)
    size: int
    kind: str  # "pmap", "shard_map" or "vmap"


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
        f"[{op}] axis name {name!r} is not bound: collectives run only inside ts.pmap(f, axis_name={name!r}), "
        f"ts.vmap(f, axis_name={name!r}) or ts.shard_map over a mesh with an axis {name!r} ({where})",
        None,
        user_location(),
    )


def inside(kind: str) -> bool:
    return any(f.kind == kind for f in _FRAMES)
