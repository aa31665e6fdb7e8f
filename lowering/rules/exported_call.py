"""StableHLO for ``exported_call``: the exported module's ``@main`` becomes a private function of this module
(with the functions it calls, renamed under its symbol), and the equation a ``func.call`` of it."""

from __future__ import annotations

from collections.abc import Sequence

from ...staging.errors import TransformError
from ...staging.ir import Aval
from ...staging.primitives import exported_call as X
from .. import lapack
from ..emit import Emitter, Value, lowers

_MAIN = "  func.func public @main("
_OWN_FUNCTIONS = "@tensorstage_function_"  # the symbols ``Emitter.module_function`` gives


def is_module_text(text: str) -> bool:
    """Whether ``text`` has the layout ``embedded_function`` reads: tensorstage's module header, ``@main``
    first, and the module's closing lines."""
    lines = text.split("\n")
    header_ok = len(lines) >= 5 and lines[0].startswith("module @") and lines[1].startswith(_MAIN)
    return header_ok and lines[-2:] == ["}", ""]


def embedded_function(module: str, symbol: str) -> str:
    """``module``'s functions as functions of another module: ``@main`` as the private ``@symbol``, the functions
    it calls under names derived from ``symbol`` (so nested exports cannot collide with the caller's)."""
    body = "\n".join(module.split("\n")[1:-2]).replace(_OWN_FUNCTIONS, f"@{symbol}_")
    return f"  func.func private @{symbol}(" + body[len(_MAIN):]


@lowers(X.exported_call_p)
def _exported_call(
    em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, exported: X.ExportedModule
) -> list[Value]:
    module = exported.modules.get(em.platform)
    if module is None:
        raise TransformError(
            f"{exported.fun_name} was exported for {', '.join(exported.modules)}, not {em.platform}: export it with "
            f"platforms=({', '.join(repr(p) for p in (*exported.modules, em.platform))})",
            "exported_call",
            em.source,
        )
    if em.platform == "cpu" and '"lapack_' in module and not lapack.available():
        raise TransformError(
            f"{exported.fun_name} was exported with LAPACK kernels, which this process cannot provide (they need "
            "SciPy)", "exported_call", em.source,
        )
    symbol = em.module_function((exported, em.platform), lambda name: embedded_function(module, name))
    return em.op("func.call", args, outs, f"callee = @{symbol}")
