"""``debug_nans`` / ``debug_infs`` (JAX's ``jax_debug_nans`` / ``jax_debug_infs``): every program run (eager ops
included) checks its floating-point results, and a NaN (or an infinity) raises ``FloatingPointError`` naming the
equation that produced it from clean operands, with the user's line.

How the culprit is found: the program's graph is compiled once more with every intermediate value as an output,
and run again on the same arguments; the first equation (in program order) whose result is bad while its operands
are not is the one reported (an argument already holding one is reported as such). An equation that holds a graph
(a ``scan`` or ``while_loop`` body, a branch of ``cond``) is reported as a whole, at the line that staged it.
Programs with host callbacks or donated arguments are not run again (the callbacks would run twice, the donated
buffers are gone): their error names the program's bad result only.

The check reads every result back to the host and waits for it, so it costs a synchronization per run: a
debugging aid, off by default (``TENSORSTAGE_DEBUG_NANS=1`` / ``TENSORSTAGE_DEBUG_INFS=1`` turn it on for a
process). ``pmap`` programs are not checked.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import contexts, transfer_guards
from .lowering import backend, emit, runtime
from .staging import dtypes as _dt
from .staging.ir import Atom, Equation, Graph, Literal
from .staging.primitive import equation_has_effects, nested_graphs
from .staging.source import user_location

if TYPE_CHECKING:
    from .array import Device
    from .staged import Staged

__all__ = ["config", "debug_infs", "debug_nans"]

# [check NaNs, check infinities]; read by every run (``any(CHECKS)``), so kept as one small list.
CHECKS: list[bool] = [os.environ.get("TENSORSTAGE_DEBUG_NANS") == "1", os.environ.get("TENSORSTAGE_DEBUG_INFS") == "1"]
ACTIVE: list[bool] = [any(CHECKS)]  # what a run reads first: one lookup when both checks are off


class Config:
    """``ts.config``: the switches JAX keeps in ``jax.config`` that tensorstage has (JAX's ``jax_`` prefix is
    accepted): ``debug_nans``, ``debug_infs``, ``disable_jit`` (bools), ``default_matmul_precision`` (a precision
    name or None; ``contexts.py``), ``transfer_guard`` and its ``_host_to_device`` / ``_device_to_device`` /
    ``_device_to_host`` forms (a level or None; ``transfer_guard.py``). ``config.update(name, value)`` sets one;
    ``config.name`` (or ``config.jax_name``) reads it."""

    _NAMES = ("debug_nans", "debug_infs")
    _BOOLS = ("debug_nans", "debug_infs", "disable_jit")

    def update(self, name: str, value: bool | str | None) -> None:
        key = name.removeprefix("jax_")
        setter = _SETTERS.get(key)
        if setter is None:
            raise ValueError(f"config.update: unknown option {name!r}; tensorstage has {', '.join(_SETTERS)}")
        if key in self._BOOLS and not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"config.update({name!r}, ...): the value must be a bool, got {value!r}")
        setter(value)

    def __getattr__(self, name: str) -> Any:
        getter = _GETTERS.get(name.removeprefix("jax_"))
        if getter is None:
            raise AttributeError(f"ts.config has no option {name!r}; it has {', '.join(_GETTERS)}")
        return getter()


def _set_check(name: str) -> Callable[[Any], None]:
    def set_check(value: Any) -> None:
        CHECKS[Config._NAMES.index(name)] = bool(value)
        ACTIVE[0] = any(CHECKS)

    return set_check


def _set_guard(direction: str | None) -> Callable[[Any], None]:
    return lambda value: transfer_guards.set_level(direction, value)


def _get_guard(direction: str) -> Callable[[], str]:
    return lambda: transfer_guards.level(direction)


_SETTERS: dict[str, Callable[[Any], None]] = {
    "debug_nans": _set_check("debug_nans"),
    "debug_infs": _set_check("debug_infs"),
    "disable_jit": contexts.set_disable_jit,
    "default_matmul_precision": contexts.set_default_matmul_precision,
    "transfer_guard": _set_guard(None),
    **{f"transfer_guard_{d}": _set_guard(d) for d in transfer_guards.DIRECTIONS},
}
_GETTERS: dict[str, Callable[[], Any]] = {
    "debug_nans": lambda: CHECKS[0],
    "debug_infs": lambda: CHECKS[1],
    "disable_jit": contexts.jit_disabled,
    "default_matmul_precision": contexts.matmul_precision,
    **{f"transfer_guard_{d}": _get_guard(d) for d in transfer_guards.DIRECTIONS},
}


config = Config()


@contextlib.contextmanager
def _switched(name: str, value: bool) -> Iterator[None]:
    saved = CHECKS[Config._NAMES.index(name)]
    config.update(name, value)
    try:
        yield
    finally:
        config.update(name, saved)


def debug_nans(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, every program run raises ``FloatingPointError`` at the equation that made a NaN."""
    return _switched("debug_nans", enabled)


def debug_infs(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, every program run raises ``FloatingPointError`` at the equation that made an infinity."""
    return _switched("debug_infs", enabled)


# ------------------------------------------------------------------------------------------------ the check


def _bad(values: np.ndarray[Any, Any]) -> str | None:
    """``'nan'`` or ``'inf'`` where ``values`` hold one that a switched-on check looks for, else None."""
    if not _dt.is_inexact(values.dtype) or values.size == 0:
        return None
    if CHECKS[0] and np.isnan(values).any():
        return "nan"
    if CHECKS[1] and np.isinf(values).any():
        return "inf"
    return None


def checker(staged: Staged[Any, Any], device: Device) -> Callable[[list[Any], Sequence[Any]], None]:
    """The check a Compiled of ``staged`` on ``device`` runs after each run while a check is on: its input
    buffers and result Arrays in, ``FloatingPointError`` out when a result is bad."""

    def check(buffers: list[Any], results: Sequence[Any]) -> None:
        for index, result in enumerate(results):
            kind = _bad(result.numpy())
            if kind is not None:
                message = _culprit(staged, device, buffers, kind) or (
                    f"invalid value ({kind}) in result {index} of {staged.program.name}")
                # The call's own line too: a program (or an eager op) staged once runs from many lines.
                here = user_location()
                if not message.endswith(f"\n  at {here}"):
                    message += f"\n  in the run called at {here}"
                raise FloatingPointError(message)

    return check


def _culprit(staged: Staged[Any, Any], device: Device, buffers: list[Any], kind: str) -> str | None:
    """The message naming the first equation that made a ``kind`` value from clean operands (or the argument that
    held one), found by running every intermediate value out; None where the program may not run again."""
    graph = staged.graph
    if staged.program.donate_argnums or any(equation_has_effects(e) for e in graph.eqns):
        return None
    inexact = [v for e in graph.eqns for v in e.outputs if _dt.is_inexact(v.aval.dtype)]
    probe = Graph(graph.inputs, graph.eqns, inexact)
    text, _ = emit.module_text_and_callbacks(probe, f"{staged.program.name}_nan_probe", platform=device.platform)
    executable = backend.compile_module(text, [device.xla])
    outs = executable.execute_sharded(buffers).disassemble_into_single_device_arrays()
    values: dict[Atom, np.ndarray[Any, Any]] = {
        var: runtime.to_host(out[0], var.aval.dtype) for var, out in zip(inexact, outs, strict=True)
    }
    for position, (var, buffer) in enumerate(zip(graph.inputs, buffers)):
        values[var] = runtime.to_host(buffer, var.aval.dtype)
        if _bad(values[var]) == kind:
            return f"invalid value ({kind}) in argument {position} ({var.aval}) of {staged.program.name}"
    for eqn in graph.eqns:
        if any(_bad(values[v]) == kind for v in eqn.outputs if v in values) and not any(
            _bad(_value(a, values)) for a in eqn.inputs
        ):
            return _describe(eqn, kind, staged.program.name)
    return None


def _value(atom: Atom, values: dict[Atom, np.ndarray[Any, Any]]) -> np.ndarray[Any, Any]:
    if isinstance(atom, Literal):
        return np.asarray(atom.value)
    return values.get(atom, np.zeros(0))  # an integer or bool intermediate: never bad


def _describe(eqn: Equation, kind: str, program: str) -> str:
    operands = ", ".join(str(a.aval) for a in eqn.inputs)
    nested = ""
    if eqn.primitive.graph_params:  # a loop or a branch: point at the lines its graphs were staged from
        lines = dict.fromkeys(str(e.loc) for g in nested_graphs(eqn.primitive, eqn.params) for e in g.eqns if e.loc)
        nested = f" (inside its body, staged at {', '.join(list(lines)[:3])})" if lines else ""
    within = "" if program == eqn.primitive.name else f" in {program}"  # an eager op's program is named as it
    return (f"invalid value ({kind}) encountered in {eqn.primitive.name}{nested}{within}, on operands {operands}"
            + (f"\n  at {eqn.loc}" if eqn.loc is not None else ""))
