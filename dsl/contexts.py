"""Switches that change what calling a program does: ``ts.disable_jit`` and ``ts.default_matmul_precision``
(also ``ts.config.update("jax_disable_jit", True)`` / ``("jax_default_matmul_precision", "float32")``).

``disable_jit``: a program made with ``ts.program`` / ``ts.jit`` runs its Python function as it is, op by op on
concrete arrays (each op still compiled once per signature and cached), so ``print`` shows values and a debugger
stops inside it. Transforms (``grad``, ``vmap``, ``jvp``...) still stage the functions they transform and
``ts.make_jaxpr`` still stages, as in JAX (where they trace with their own tracers); a jitted function called
inside one of them is inlined there as usual.

``default_matmul_precision(name)``: every ``dot_general`` and convolution staged inside the block (``@``,
``tnp.matmul``, ``tnp.dot``, ``tnp.einsum``, ``tnp.tensordot``, ``ts.lax.dot_general``, ``ts.lax.conv_general_dilated``
and the convolutions built on it, the linear algebra built on them, and their derivatives and batched forms) asks
XLA for that operand precision: ``'bfloat16'`` / ``'default'``
(StableHLO ``DEFAULT``: one bf16 pass on GPUs), ``'tensorfloat32'`` / ``'high'`` (``HIGH``), ``'float32'`` /
``'highest'`` (``HIGHEST``), as JAX maps them. The setting is part of every program's cache key, as in JAX: a
program called inside and outside the block compiles once for each. Outside any block, f32 products run at full
precision on every platform (see ``lowering/rules/linalg.py``).

Deliberate differences from JAX: the switches are global, not per thread; ``disable_jit`` leaves ``cond``,
``while_loop``, ``scan`` and ``fori_loop`` staged (JAX runs them as Python loops and branches), and only programs
made with ``ts.program`` / ``ts.jit`` run eagerly (a ``ts.Program(...)`` built directly, ``pmap`` and
``shard_map`` stay compiled); ``default_matmul_precision`` takes the precision names, not JAX's dot-algorithm
presets (``'BF16_BF16_F32'``...) and does not key the caches of ``pmap`` and ``shard_map``; an explicit
``precision=`` argument of a dot is still advisory (the block's setting applies), while a convolution's is
honoured, as JAX's (see ``prelude/lax/convolution.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator

from .staging.primitives import linalg as _linalg

__all__ = ["default_matmul_precision", "disable_jit"]

DISABLE_JIT: list[bool] = [False]  # read by a program call that misses its fast path
_LISTENERS: list[Callable[[], None]] = []

# JAX's names for each StableHLO operand precision.
_PRECISION_NAMES = {
    "default": "DEFAULT", "bfloat16": "DEFAULT",
    "high": "HIGH", "tensorfloat32": "HIGH",
    "highest": "HIGHEST", "float32": "HIGHEST",
}
_precision_name: list[str | None] = [None]  # the setting as the user named it (``config.jax_default_matmul_precision``)


def on_change(callback: Callable[[], None]) -> None:
    """Call ``callback`` whenever a switch here changes (programs forget the calls they remembered)."""
    _LISTENERS.append(callback)


def _changed() -> None:
    for callback in _LISTENERS:
        callback()


def stage_key() -> Hashable:
    """What staging reads from these switches: part of every program's cache key."""
    return _linalg.DEFAULT_PRECISION[0]


def jit_disabled() -> bool:
    return DISABLE_JIT[0]


def set_disable_jit(value: bool) -> None:
    if DISABLE_JIT[0] != bool(value):
        DISABLE_JIT[0] = bool(value)
        _changed()


def matmul_precision() -> str | None:
    """The default matmul precision as named when set (None: unset)."""
    return _precision_name[0]


def set_default_matmul_precision(name: str | None) -> None:
    """Set the precision of dots staged from now on (None: the platform default)."""
    if name is None:
        precision = None
    elif not isinstance(name, str):
        raise TypeError(f"default_matmul_precision: expected a precision name (a string) or None, got {name!r:.60}")
    else:
        precision = _PRECISION_NAMES.get(name.lower())
        if precision is None:
            raise ValueError(
                f"default_matmul_precision: unknown precision {name!r}; tensorstage takes "
                f"{', '.join(repr(n) for n in _PRECISION_NAMES)} (or None), not JAX's dot-algorithm presets"
            )
    _precision_name[0] = name
    if _linalg.DEFAULT_PRECISION[0] != precision:
        _linalg.DEFAULT_PRECISION[0] = precision
        _changed()


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Within the block, ``ts.program`` / ``ts.jit`` functions run eagerly, op by op (see the module docstring)."""
    saved = DISABLE_JIT[0]
    set_disable_jit(disable)
    try:
        yield
    finally:
        set_disable_jit(saved)


@contextlib.contextmanager
def default_matmul_precision(name: str | None) -> Iterator[None]:
    """Within the block, matrix products are staged at precision ``name`` (``'bfloat16'``, ``'tensorfloat32'``,
    ``'float32'``, or ``'default'``, ``'high'``, ``'highest'``)."""
    saved = _precision_name[0]
    set_default_matmul_precision(name)
    try:
        yield
    finally:
        set_default_matmul_precision(saved)
