"""StableHLO for host callbacks: a custom call to jaxlib's Python-callback FFI handler, naming the callback by its
index in the module's callback list (the compiler receives the list with the module). An ordered callback also
takes the ordering token and returns the next one (XLA hands the Python function None for it), so ordered
callbacks run in the order they were staged whatever their operands.

Only XLA:CPU is supported: GPU callbacks need the CUDA plugin's handlers registered, which this version does not
do, so lowering for another platform raises a clear error instead of a module XLA would reject at compile time.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...staging.ir import Aval
from ...staging.primitives import callback as C
from ..emit import TOKEN, Emitter, Value, lowers

_TARGET = "xla_ffi_python_cpu_callback"


def _lower(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], callback: C.HostCallback, effectful: bool
) -> list[Value]:
    if em.platform != "cpu":
        raise NotImplementedError(
            f"{callback.name}: host callbacks (pure_callback, io_callback, debug.print, debug.callback) run on "
            f"CPU programs only; this program is compiled for {em.platform!r}"
            + (f"\n  at {callback.loc}" if callback.loc is not None else "")
        )
    index = len(em.host_callbacks)
    em.host_callbacks.append(callback)
    side_effect = "true" if effectful else "false"
    props = (
        f'api_version = 4 : i32, backend_config = {{index = {index} : ui64}}, call_target_name = "{_TARGET}", '
        f"has_side_effect = {side_effect}"
    )
    if not callback.ordered:
        return em.op("stablehlo.custom_call", args, outs, props)
    token, *results = em.op("stablehlo.custom_call", [em.ordering_token(), *args], [TOKEN, *outs], props)
    em.token = token
    return results


@lowers(C.pure_callback_p)
def _pure_callback(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, callback: C.HostCallback) -> list[Value]:
    return _lower(em, args, outs, callback, effectful=False)


@lowers(C.io_callback_p)
def _io_callback(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, callback: C.HostCallback) -> list[Value]:
    return _lower(em, args, outs, callback, effectful=True)
