"""StableHLO for host callbacks: a custom call to jaxlib's Python-callback FFI handler, naming the callback by its
index in the module's callback list (the compiler receives the list with the module). An ordered callback also
takes the ordering token and returns the next one (XLA hands the Python function None for it), so ordered
callbacks run in the order they were staged whatever their operands.

On a GPU the custom call names the CUDA plugin's handler instead, which copies operands to the host, calls the
same Python function and copies its results back; ``backend`` registers that handler when it loads the plugin.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...staging.ir import Aval
from ...staging.primitives import callback as C
from ..emit import TOKEN, Emitter, Value, layout, lowers

_CPU_TARGET = "xla_ffi_python_cpu_callback"
_GPU_TARGET = "xla_ffi_python_gpu_callback"


def _lower(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], callback: C.HostCallback, effectful: bool
) -> list[Value]:
    index = len(em.host_callbacks)
    em.host_callbacks.append(callback)
    side_effect = "true" if effectful else "false"
    target = _CPU_TARGET if em.platform == "cpu" else _GPU_TARGET
    operands, results = ([em.ordering_token(), *args], [TOKEN, *outs]) if callback.ordered else (list(args), list(outs))
    props = (
        f'api_version = 4 : i32, backend_config = {{index = {index} : ui64}}, call_target_name = "{target}", '
        f"has_side_effect = {side_effect}, operand_layouts = [{_layouts(v.aval for v in operands)}], "
        f"result_layouts = [{_layouts(results)}]"
    )
    if not callback.ordered:
        return em.op("stablehlo.custom_call", operands, results, props)
    token, *values = em.op("stablehlo.custom_call", operands, results, props)
    em.token = token
    return values


def _layouts(avals: Iterable[Aval]) -> str:
    """Row major, as the handlers read and write their NumPy arrays (a token has no layout)."""
    return ", ".join(layout(0 if aval is TOKEN else aval.ndim) for aval in avals)


@lowers(C.pure_callback_p)
def _pure_callback(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, callback: C.HostCallback) -> list[Value]:
    return _lower(em, args, outs, callback, effectful=False)


@lowers(C.io_callback_p)
def _io_callback(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, callback: C.HostCallback) -> list[Value]:
    return _lower(em, args, outs, callback, effectful=True)
