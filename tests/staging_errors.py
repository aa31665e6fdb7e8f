"""The shared check of the test files' tables of bad calls: each must fail while staging with the right exception,
a message holding the expected parts, and the calling test file's line."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest

import tensorstage as ts

# (function, argument specs, exception type, message parts) or, in older tables, parts before the type
Case = tuple[Callable[..., Any], Sequence[Any], Any, Any]


def check_staging_errors(cases: Iterable[Case], test_file: str) -> None:
    """Stage each case's function on its specs; its error must be of its type and name every part and
    ``test_file:`` (the user's line, which for these tables is in the test file)."""
    for fn, specs, first, second in cases:
        kind, parts = (first, second) if isinstance(first, type) else (second, first)
        with pytest.raises(kind) as info:
            ts.program(fn).stage(*specs)
        message = str(info.value)
        for part in [*parts, f"{test_file}:"]:
            assert part in message, (part, message)
