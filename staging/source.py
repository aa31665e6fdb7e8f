"""Finding the user's source line: the first stack frame outside the tensorstage package."""

from __future__ import annotations

import os
import sys
from typing import Final

from .bounded import remember
from .ir import SourceLoc


def _library_dirs() -> tuple[str, ...]:
    staging_dir = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(staging_dir)
    if os.path.basename(root) == "tensorstage":  # installed from a wheel: one folder holds everything
        return (root + os.sep,)
    return tuple(os.path.join(root, d) + os.sep for d in ("dsl", "staging", "lowering", "prelude"))


def _numpy_dirs() -> tuple[str, ...]:
    """NumPy calls back into staged values (``np.eye(n)`` with a staged ``n``): its frames are not the user's."""
    import numpy

    return (os.path.dirname(os.path.abspath(numpy.__file__)) + os.sep,)


_LIBRARY_DIRS: Final = _library_dirs() + _numpy_dirs()
# Frames of context managers and functools wrappers sit between library code and the user's line.
_STDLIB_WRAPPERS: Final = frozenset({"contextlib.py", "functools.py"})
_is_library: dict[str, bool] = {}
_library_files: set[str] = set()  # the files ``_is_library`` maps to True
_user_files: set[str] = set()  # ... and to False


def is_library_file(filename: str) -> bool:
    known = _is_library.get(filename)
    if known is None:
        known = (
            os.path.abspath(filename).startswith(_LIBRARY_DIRS)
            or filename.startswith("<frozen")
            or os.path.basename(filename) in _STDLIB_WRAPPERS
        )
        _is_library[filename] = known
        (_library_files if known else _user_files).add(filename)
    return known


def user_location() -> SourceLoc | None:
    # Every caller is library code: the walk starts at the caller's caller (one frame object fewer to make; this
    # runs per op staged).
    try:
        frame = sys._getframe(2)
    except ValueError:  # called from the outermost frame: no user code above
        return None
    library_files = _library_files
    user_files = _user_files
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename in library_files:  # the common case first: this runs per equation, for every library frame
            frame = frame.f_back  # type: ignore[assignment]
            continue
        if filename in user_files or not is_library_file(filename):
            key = (filename, frame.f_lineno)
            loc = _locs.get(key)
            if loc is None:
                loc = remember(_locs, key, SourceLoc(_display_path(filename), frame.f_lineno), 8192)
            return loc
        frame = frame.f_back  # type: ignore[assignment]
    return None


_display: dict[str, str] = {}
_locs: dict[tuple[str, int], SourceLoc] = {}  # one SourceLoc per user line (bounded): equations share it


def _display_path(filename: str) -> str:
    shown = _display.get(filename)
    if shown is None:
        try:
            rel = os.path.relpath(filename)
        except ValueError:
            rel = filename
        shown = filename if rel.startswith("..") else rel
        _display[filename] = shown
    return shown
