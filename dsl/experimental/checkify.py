"""``ts.experimental.checkify``: runtime errors as values, JAX's ``jax.experimental.checkify``.

``checkify(f, errors=user_checks)`` returns a function giving ``(err, out)``: ``out`` is what ``f`` returns and
``err`` an ``Error`` that says which check failed first, if any, with the values its message reads (``err.get()``,
``err.throw()``). It stages ``f``, rewrites the graph so that every check updates error values the program
returns (``staging.transforms.checkify``), and inlines it; called on arrays it compiles and caches, inside a
program it inlines, and it composes with ``grad``, ``vmap`` and ``jit`` both ways round. Error sets (combine with
``|``): ``user_checks`` (``check`` and ``debug_check``), ``nan_checks`` (a NaN made by an equation whose operands
hold none), ``div_checks`` (integer division or remainder by zero), ``index_checks`` (a gather, scatter or dynamic
slice whose indices XLA would clamp or drop), ``float_checks`` = nan | div, ``automatic_checks`` = float | index,
``all_checks``. ``init_error`` is the error of a run where nothing failed; ``check_error(err)`` raises ``err``'s
failure, or, in a function ``checkify`` transforms, records it again (so an error returned through ``jit`` can be
re-checked).

Deliberate differences from JAX:
- messages end with the line that staged the check (``... (`check` failed) at model.py:12``; JAX keeps it in a
  traceback), and the index message has no trailing ``". "``;
- a NaN already in the function's arguments is no error: a NaN check fires only where an equation makes a NaN from
  operands without one (JAX reports the first primitive that outputs one);
- ``check`` accepts a bool array predicate (every element must hold) and Python numbers as format arguments;
- ``check`` staged in a program without ``checkify`` is refused when staged (JAX: when lowered), with its line;
- a ``check`` inside ``custom_jvp``/``custom_vjp`` functions, linear solves and other primitives that carry
  functions (besides cond, switch, while, scan and checkpoint) is refused; automatic checks treat such an
  equation's results as a whole;
- ``check_error`` re-records a failure as a ``check`` at its own line: an automatic one's message is its text plus
  `` (`check` failed) at <line>`` (an index message without the axis size); ``ErrorCategory`` is a category's
  name (JAX's are exception classes);
- index checks also flag clamped starts of ``ts.lax.dynamic_slice`` / ``dynamic_update_slice`` (as JAX) and of
  library functions that gather with deliberately clamped indices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, TypeVar

import numpy as np

from .. import pytree
from ..program import Program
from ..staging.builder import is_staging
from ..staging.errors import TransformError
from ..staging.ir import SourceLoc
from ..staging.primitives import check as K
from ..staging.source import user_location
from ..staging.transforms import checkify as C
from ..subgraph import as_program, function_name, param_names, stage_subgraph
from ..tensor import Tensor
from ..trace import to_atom, wrap

__all__ = [
    "CheckifyError", "Error", "ErrorCategory", "ErrorSet", "JaxRuntimeError", "all_checks", "automatic_checks",
    "check", "check_error", "checkify", "debug_check", "div_checks", "float_checks", "index_checks", "init_error",
    "nan_checks", "user_checks",
]

R = TypeVar("R")
ErrorCategory = str  # one kind of check (JAX's are exception classes; the error sets below hold these names)
ErrorSet = frozenset[ErrorCategory]

user_checks: Final[ErrorSet] = frozenset({C.USER})
nan_checks: Final[ErrorSet] = frozenset({C.NAN})
div_checks: Final[ErrorSet] = frozenset({C.DIV})
index_checks: Final[ErrorSet] = frozenset({C.INDEX})
float_checks: Final[ErrorSet] = nan_checks | div_checks
automatic_checks: Final[ErrorSet] = float_checks | index_checks
all_checks: Final[ErrorSet] = automatic_checks | user_checks


class CheckifyError(RuntimeError):
    """A check failed (``Error.throw``, or ``check`` called on concrete values); also ``JaxRuntimeError``."""


JaxRuntimeError = CheckifyError

_ACTIVE = [0]  # how many checkify transforms are staging their function now


@contextmanager
def _checkifying() -> Iterator[None]:
    _ACTIVE[0] += 1
    try:
        yield
    finally:
        _ACTIVE[0] -= 1


# ----------------------------------------------------------------------------------------------- the error value


class Error:
    """The errors of a checkified run: ``get()`` gives the message of the first failed check (None if none
    failed), ``throw()`` raises it as a ``CheckifyError``. A pytree (its arrays are the error code and the values
    messages read), so a program can return it and ``vmap`` batch it: a batched error reports every member that
    failed, ``at mapped index i: ...``, in order."""

    __slots__ = ("_code", "_payloads", "_sites")

    def __init__(self, code: Any, payloads: Sequence[Any], sites: tuple[C.Site, ...]) -> None:
        self._code = code
        self._payloads = tuple(payloads)
        self._sites = sites

    def get(self) -> str | None:
        exc = self.get_exception()
        return None if exc is None else str(exc)

    def get_exception(self) -> CheckifyError | None:
        code = np.asarray(self._code)
        if code.ndim == 0:
            message = self._message(int(code), ())
            return None if message is None else CheckifyError(message)
        lines = []
        for index in np.ndindex(*code.shape):
            message = self._message(int(code[index]), index)
            if message is not None:
                lines.append(f"at mapped index {', '.join(map(str, index))}: {message}")
        return CheckifyError("\n".join(lines)) if lines else None

    def throw(self) -> None:
        exc = self.get_exception()
        if exc is not None:
            raise exc

    def __str__(self) -> str:
        return f"Error({self.get()})"

    def _message(self, code: int, index: tuple[int, ...]) -> str | None:
        if code == 0:
            return None
        start = sum(len(s.payload) for s in self._sites[: code - 1])
        site = self._sites[code - 1]
        values = [np.asarray(p)[index] for p in self._payloads[start : start + len(site.payload)]]
        return _describe(site, values)


init_error: Final[Error] = Error(np.zeros((), np.int32), (), ())  # no check failed: what ``checkify`` starts from


def _flatten_error(err: Error) -> tuple[list[Any], tuple[C.Site, ...]]:
    return [err._code, *err._payloads], err._sites


def _unflatten_error(sites: Any, children: list[Any]) -> Error:
    return Error(children[0], children[1:], sites)


pytree.register_pytree_node(Error, _flatten_error, _unflatten_error)


def _describe(site: C.Site, values: Sequence[np.ndarray[Any, Any]]) -> str:
    where = f" at {site.loc}" if site.loc is not None else ""
    if site.kind == C.USER:
        args, kwargs = pytree.unflatten(site.detail, list(values))
        return f"{site.what.format(*args, **kwargs)} (`check` failed){where}"
    if site.kind == C.NAN:
        return f"nan generated by primitive: {site.what}{where}"
    if site.kind == C.DIV:
        return f"division by zero{where}"
    index, axis = (int(v) for v in values)
    shape = tuple(site.detail)
    return (f"out-of-bounds indexing for array of shape {shape}: index {index} is out of bounds for axis {axis} "
            f"with size {shape[axis]}{where}")


# ----------------------------------------------------------------------------------------------------- check


def check_error(error: Error) -> None:
    """Raise ``error``'s failure as ``CheckifyError`` (``err.throw()``); inside a function ``checkify`` transforms,
    record it again instead, so a checkified result can be passed on through ``jit`` and re-checked. Re-recorded
    failures end with this call's line (a user check keeps its message and values; an automatic one says what it
    found and where, as text)."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got {type(error).__name__} {error!r:.60}")
    if not is_staging():
        error.throw()
        return
    start = 0
    for code, site in enumerate(error._sites, 1):
        values = list(error._payloads[start : start + len(site.payload)])
        start += len(site.payload)
        failed = error._code != code
        if site.kind == C.USER:
            args, kwargs = pytree.unflatten(site.detail, values)
            _check(failed, site.what, args, kwargs, debug=False)
        else:
            text, args = _automatic_text(site)
            _check(failed, text, tuple(values) if args else (), {}, debug=False)


def _automatic_text(site: C.Site) -> tuple[str, bool]:
    """An automatic site's message as a ``check`` format (its own text escaped), and whether it reads the site's
    values (an index check: the index and the axis)."""
    where = f" at {site.loc}" if site.loc is not None else ""
    if site.kind == C.INDEX:
        shape = str(tuple(site.detail)).replace("{", "{{").replace("}", "}}")
        return f"out-of-bounds indexing for array of shape {shape}: index {{}} is out of bounds for axis {{}}" + \
            where.replace("{", "{{").replace("}", "}}"), True
    text = _describe(site, [])
    return text.replace("{", "{{").replace("}", "}}"), False


class _Placeholder:
    """Formats as anything: checks a message's fields against the arguments when staging."""

    def __format__(self, spec: str) -> str:
        return ""


def check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Record an error when ``pred`` (a bool scalar or array: every element must hold) is False, with
    ``msg.format(*fmt_args, **fmt_kwargs)`` formatted from the run's values. Under ``checkify`` it becomes part of
    the returned error; called on concrete values it raises ``CheckifyError`` at once; staged in a program without
    ``checkify`` it is refused."""
    _check(pred, msg, fmt_args, fmt_kwargs, debug=False)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """``check`` under ``checkify``; dropped anywhere else (also called on concrete values)."""
    _check(pred, msg, fmt_args, fmt_kwargs, debug=True)


def _check(pred: Any, msg: str, fmt_args: tuple[Any, ...], fmt_kwargs: dict[str, Any], debug: bool) -> None:
    op = "debug_check" if debug else "check"
    loc = user_location()
    leaves, tree = pytree.flatten((fmt_args, fmt_kwargs))
    _validate(op, pred, msg, leaves, fmt_args, fmt_kwargs, loc)
    if not is_staging():
        if not debug and not bool(np.all(np.asarray(pred))):
            values = [np.asarray(leaf) for leaf in leaves]
            args, kwargs = pytree.unflatten(tree, values)
            raise CheckifyError(f"{msg.format(*args, **kwargs)} (`check` failed) at {loc}")
        return
    if not _ACTIVE[0]:
        if debug:
            return
        raise TransformError(
            "check in a staged function that checkify does not transform: its failure could not be reported. "
            "Wrap the function in ts.experimental.checkify.checkify (its result then says whether a check failed), "
            "or use debug_check, which is dropped outside checkify", op, loc,
        )
    K.check(to_atom(pred), [to_atom(leaf) for leaf in leaves], msg, tree)


def _validate(op: str, pred: Any, msg: str, leaves: list[Any], fmt_args: tuple[Any, ...],
              fmt_kwargs: dict[str, Any], loc: SourceLoc | None) -> None:
    if not isinstance(msg, str):
        raise TypeError(f"{op}: the message must be a str, got {type(msg).__name__}\n  at {loc}")
    dtype = getattr(pred, "dtype", None) if not isinstance(pred, bool) else np.dtype(np.bool_)
    if dtype is None or np.dtype(dtype) != np.dtype(np.bool_):
        raise TypeError(f"{op}: the predicate must be a bool or a bool array, got {_kind(pred)}\n  at {loc}")
    for leaf in leaves:
        if not isinstance(leaf, (Tensor, np.ndarray, np.generic, int, float, complex)):
            raise TypeError(f"{op}: format arguments must be arrays or numbers (in pytrees), got {_kind(leaf)}"
                            f"\n  at {loc}")
    try:
        msg.format(*[_Placeholder()] * len(fmt_args), **{k: _Placeholder() for k in fmt_kwargs})
    except (IndexError, KeyError, ValueError) as exc:
        raise ValueError(f"{op}: message {msg!r} does not fit the format arguments ({type(exc).__name__}: {exc})"
                         f"\n  at {loc}") from None


def _kind(x: Any) -> str:
    aval = getattr(x, "aval", None)
    return str(aval) if aval is not None else f"{type(x).__name__} {x!r:.40}"


# ------------------------------------------------------------------------------------------------ the transform


def checkify(f: Callable[..., R], errors: ErrorSet = user_checks) -> Program[..., tuple[Error, R]]:
    """``f`` -> a function returning ``(err, f(...))``, where ``err`` records the first failure among ``errors``
    (``user_checks`` by default; see the module docstring for the others)."""
    if not isinstance(errors, (set, frozenset)) or not errors <= all_checks:
        raise TypeError(f"checkify: errors must be a set of checks such as user_checks | nan_checks, got {errors!r}")
    errors = frozenset(errors)

    def body(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        with _checkifying():
            sub = stage_subgraph(f, args, kwargs, names=param_names(f))
        code, payloads, outs, sites = C.checkify_emit(sub.graph, sub.atoms, errors)
        return Error(wrap(code), [wrap(p) for p in payloads], sites), sub.outputs(outs)

    return as_program(body, f, f"checkify_{function_name(f)}")

