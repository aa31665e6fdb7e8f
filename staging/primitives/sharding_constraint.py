"""sharding_constraint: the identity on values, telling XLA's partitioner how to lay its operand out
(``ts.lax.with_sharding_constraint``).

Params: ``sharding``, a ``ts.NamedSharding`` (held opaquely: staging only calls its ``tiles(ndim)``, which raises
ValueError for a spec longer than the operand's rank, and ``with_unsplit_dim(d)``), and ``unconstrained``, the
dimensions the partitioner may lay out as it likes (those vmap added).

- Tangents and cotangents get the same constraint (the map is linear and its own transpose).
- Batching inserts the batch dimension into the spec unsplit and marks it unconstrained.
- Lowering: in a program partitioned over a mesh (``lowering/gspmd.py``), ``stablehlo.custom_call @Sharding``
  with the ``mhlo.sharding`` of the spec (and ``unspecified_dims``); elsewhere the operand itself (a no-op).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..builder import bind
from ..errors import ShapeError
from ..ir import Atom, Aval
from ..primitive import Primitive
from ..zeros import MaybeZero, Zero

sharding_constraint_p = Primitive("sharding_constraint")


@sharding_constraint_p.def_shape
def _constraint_shape(x: Aval, *, sharding: Any, unconstrained: tuple[int, ...]) -> Aval:
    try:
        sharding.tiles(x.ndim)
    except ValueError as exc:
        raise ShapeError(f"{exc}; operand {x}", "with_sharding_constraint") from None
    if any(not 0 <= d < x.ndim for d in unconstrained):
        raise ShapeError(f"unconstrained dimensions {unconstrained} out of range for operand {x}",
                         "with_sharding_constraint")
    return x


def sharding_constraint(x: Atom, sharding: Any, unconstrained: tuple[int, ...] = ()) -> Atom:
    out = bind(sharding_constraint_p, x, sharding=sharding, unconstrained=tuple(unconstrained))
    return out  # type: ignore[no-any-return]


@sharding_constraint_p.def_jvp
def _constraint_jvp(
    primals: Sequence[Atom], tangents: Sequence[MaybeZero], outs: Sequence[Atom], **params: Any
) -> list[MaybeZero]:
    (t,) = tangents
    return [t if isinstance(t, Zero) else bind(sharding_constraint_p, t, **params)]


@sharding_constraint_p.def_vjp
def _constraint_vjp(
    cts: Sequence[MaybeZero], primals: Sequence[Atom], outs: Sequence[Atom], wants: Sequence[bool], **params: Any
) -> list[MaybeZero]:
    (ct,) = cts
    if isinstance(ct, Zero) or not wants[0]:
        return [Zero(primals[0].aval)]
    return [bind(sharding_constraint_p, ct, **params)]


@sharding_constraint_p.def_batch
def _constraint_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, sharding: Any, unconstrained: tuple[int, ...]
) -> tuple[Atom, int | None]:
    (x,), (d,) = args, dims
    assert d is not None
    moved = tuple(k + (k >= d) for k in unconstrained)
    return sharding_constraint(x, sharding.with_unsplit_dim(d), tuple(sorted((*moved, d)))), d
