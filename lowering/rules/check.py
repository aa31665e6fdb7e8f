"""Lowering of ``check``: there is none. ``checkify`` replaces every check by updates of the error values it
returns, so a check that reaches lowering was staged in a program no ``checkify`` transformed (JAX refuses these
too); the error names the line that staged it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...staging.errors import TransformError
from ...staging.ir import Aval
from ...staging.primitives import check as K
from ..emit import Emitter, Value, lowers


@lowers(K.check_p)
def _check(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, message: str, tree: Any) -> list[Value]:
    raise TransformError(
        f"check({message!r}) is in a program that checkify did not transform, so its failure could not be "
        "reported: wrap the function in ts.experimental.checkify.checkify (or use debug_check, which is dropped "
        "outside checkify)",
        "check",
        em.source,
    )
