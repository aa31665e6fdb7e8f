"""``ts.debug``: print staged values, or run a Python function on them, while a compiled program runs (JAX's
``jax.debug``). Both are host callbacks (``callbacks.py``), run once per execution (once per
member under ``vmap``), on the primal values under differentiation, never dropped as dead code.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .callbacks import debug_callback as callback
from .staging.source import user_location

__all__ = ["callback", "print"]


class _Placeholder:
    """Formats as anything: used to check a format string's fields against the arguments when staging."""

    def __format__(self, spec: str) -> str:
        return ""


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001 - JAX's name
    """Print ``fmt.format(*args, **kwargs)`` with the values the program computes (``str.format`` syntax; not an
    f-string, whose values would be the staged placeholders). NumPy's print options at the call apply."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}")
    try:
        fmt.format(*[_Placeholder()] * len(args), **{k: _Placeholder() for k in kwargs})
    except (IndexError, KeyError, ValueError) as exc:
        raise ValueError(f"debug.print: format {fmt!r} does not fit the arguments ({type(exc).__name__}: {exc})"
                         f"\n  at {user_location()}") from None
    options = np.get_printoptions()

    def show(*values: Any, **named: Any) -> None:
        with np.printoptions(**options):
            builtins.print(fmt.format(*values, **named))

    show.__name__ = "print"
    callback(show, *args, ordered=ordered, **kwargs)

