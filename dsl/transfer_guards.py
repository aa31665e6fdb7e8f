"""Transfer guards (JAX's ``jax.transfer_guard``): ``ts.transfer_guard(level)`` and its one-direction forms
``transfer_guard_host_to_device``, ``transfer_guard_device_to_host``, ``transfer_guard_device_to_device``
(also ``ts.config.update("jax_transfer_guard", level)`` and ``"jax_transfer_guard_host_to_device"``...).

Levels, as in JAX: ``'allow'`` (the default), ``'log'`` (log implicit transfers as warnings of the
``tensorstage`` logger), ``'disallow'`` (raise ``RuntimeError`` on implicit ones), ``'log_explicit'`` and
``'disallow_explicit'`` (the same for explicit transfers too).

Implicit transfers: NumPy arrays and Python scalars passed to a compiled program or an eager op (host to
device), ``ts.asarray`` / ``tnp.asarray`` of host data (as ``jnp.asarray``), an Array on another device passed
to a program (device to device), and reading an Array as host data through NumPy or Python: ``np.asarray(x)``,
``float(x)``, ``x.item()``, ``x.tolist()``, ``bool(x)``, printing it (device to host). Explicit ones:
``ts.device_put`` (host to device, or device to device), ``ts.device_get`` and ``x.numpy()`` (device to host).
Calls on Arrays already on the program's device transfer nothing and are never checked (the check sits on the
paths that copy, never on the per-call fast path).

Deliberate differences from JAX: the levels are global, not per thread; device-to-host reads are guarded on CPU
too (JAX's CPU arrays are host memory and are not), so a CPU test catches what a GPU run would refuse; a Python
scalar that an eager op takes as a setting is part of its program, not a transfer, so ``x + 1.0`` is never
refused (JAX transfers the scalar); ``pmap`` and ``shard_map`` arguments are not guarded.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from .staging.source import user_location

__all__ = [
    "transfer_guard", "transfer_guard_device_to_device", "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
]

LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
DIRECTIONS = ("host_to_device", "device_to_device", "device_to_host")
_levels: dict[str, str] = dict.fromkeys(DIRECTIONS, "allow")
# Whether any direction is guarded: what transfer paths read first (one lookup while every guard allows).
ACTIVE: list[bool] = [False]
_LOG = logging.getLogger("tensorstage")


def level(direction: str) -> str:
    return _levels[direction]


def set_level(direction: str | None, value: str | None) -> None:
    """Set one direction's level (``direction`` None: all three); ``value`` None is ``'allow'``."""
    if value is not None and value not in LEVELS:
        raise ValueError(f"transfer guard level must be None or one of {', '.join(map(repr, LEVELS))}, got {value!r}")
    for name in DIRECTIONS if direction is None else (direction,):
        _levels[name] = value or "allow"
    ACTIVE[0] = any(v != "allow" for v in _levels.values())


def check(direction: str, what: Any, explicit: bool = False) -> None:
    """Log or refuse a transfer in ``direction`` of ``what`` (an aval, or a description) where its guard says so;
    callers read ``ACTIVE[0]`` first."""
    setting = _levels[direction]
    if setting == "allow" or (explicit and not setting.endswith("_explicit")):
        return
    kind = "explicit " if explicit else ""
    text = f"{kind}{direction.replace('_', '-')} transfer: {what}"
    loc = user_location()
    if loc is not None:
        text += f"\n  at {loc}"
    if setting.startswith("disallow"):
        raise RuntimeError(f"Disallowed {text}\n  (ts.transfer_guard is {setting!r}; pass device arrays, or "
                           "move data with ts.device_put / ts.device_get)")
    _LOG.warning(text)


@contextlib.contextmanager
def _guarding(direction: str | None, value: str) -> Iterator[None]:
    saved = dict(_levels)
    set_level(direction, value)
    try:
        yield
    finally:
        _levels.update(saved)
        ACTIVE[0] = any(v != "allow" for v in _levels.values())


def transfer_guard(new_val: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, every direction's transfers are guarded at level ``new_val``."""
    return _guarding(None, new_val)


def transfer_guard_host_to_device(new_val: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, host-to-device transfers are guarded at level ``new_val``."""
    return _guarding("host_to_device", new_val)


def transfer_guard_device_to_device(new_val: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, device-to-device transfers are guarded at level ``new_val``."""
    return _guarding("device_to_device", new_val)


def transfer_guard_device_to_host(new_val: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, device-to-host transfers are guarded at level ``new_val``."""
    return _guarding("device_to_host", new_val)
