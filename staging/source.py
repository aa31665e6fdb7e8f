"""Finding the user's source line: the first stack frame outside the tensorstage package, and the named scopes
(``ts.named_scope``) open while it stages, which a location carries as a ``ScopedLoc``."""

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


class ScopedLoc(SourceLoc):
    """A source location staged inside ``ts.named_scope`` blocks: ``scope`` is their names, outermost first, joined
    by ``/`` (JAX's name stack). Printed after the line; lowered as an MLIR name location, which XLA keeps as the
    ops' ``op_name`` metadata (profiles and HLO dumps show it)."""

    scope: str

    def __new__(cls, file: str, line: int, scope: str) -> ScopedLoc:
        loc = super().__new__(cls, file, line)
        loc.scope = scope
        return loc

    def __str__(self) -> str:
        return f"{self.file}:{self.line} [{self.scope}]"

    # A scoped location is not its plain line: locations key caches (the lowering's location text).
    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScopedLoc) and tuple.__eq__(self, other) and self.scope == other.scope

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.scope))

    def __getnewargs__(self) -> tuple[str, int, str]:  # pickling passes the scope too
        return (self.file, self.line, self.scope)


# The names of the open ``named_scope`` blocks, innermost last (``ts.named_scope`` pushes and pops); read per
# equation staged, so one list.
SCOPES: list[str] = []

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
            if SCOPES:
                return _scoped(filename, frame.f_lineno)
            key = (filename, frame.f_lineno)
            loc = _locs.get(key)
            if loc is None:
                loc = remember(_locs, key, SourceLoc(_display_path(filename), frame.f_lineno), 8192)
            return loc
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _scoped(filename: str, line: int) -> ScopedLoc:
    scope = "/".join(SCOPES)
    key = (filename, line, scope)
    loc = _scoped_locs.get(key)
    if loc is None:
        loc = remember(_scoped_locs, key, ScopedLoc(_display_path(filename), line, scope), 8192)
    return loc


_scoped_locs: dict[tuple[str, int, str], ScopedLoc] = {}  # one ScopedLoc per (line, scope) (bounded)
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
