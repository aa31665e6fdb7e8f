"""``with_sharding_constraint``: how XLA's partitioner must lay a value out (``jax.lax.with_sharding_constraint``).

Inside a program partitioned over a mesh (one given NamedSharding arguments or ``in_shardings``/``out_shardings``)
each constrained value lowers to XLA's ``@Sharding`` custom call; in a program on one device it changes nothing;
called on concrete arrays it lays them out as ``ts.device_put(x, sharding)`` does.

Deliberate differences from jax: shardings must be ``ts.NamedSharding``s (or None: no constraint); a bare
PartitionSpec needs jax's ambient mesh, which tensorstage does not have. A constraint does not by itself make a
program partitioned: its arguments or ``in_shardings``/``out_shardings`` must name the mesh.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ... import pytree
from ...array import device_put
from ...gspmd_call import broadcast_shardings
from ...named_sharding import NamedSharding
from ...staging.builder import is_staging
from ...staging.primitives import sharding_constraint as C
from ...staging.source import user_location
from ...trace import wrap
from ..numpy._core import as_tensor

__all__ = ["with_sharding_constraint"]

T = TypeVar("T")


def with_sharding_constraint(x: T, shardings: Any) -> T:
    """``x`` (a pytree of arrays) laid out by ``shardings`` (a pytree prefix of it: ``ts.NamedSharding`` or
    None leaves)."""
    for s in pytree.leaves(shardings, is_leaf=lambda v: v is None or isinstance(v, NamedSharding)):
        if s is not None and not isinstance(s, NamedSharding):
            raise TypeError(f"with_sharding_constraint: shardings must be ts.NamedSharding(mesh, spec) or None, got "
                            f"{s!r:.80} (a PartitionSpec alone names no mesh)\n  at {user_location()}")
    leaves, tree = pytree.flatten(x)
    targets = broadcast_shardings(shardings, x, "with_sharding_constraint: shardings")
    if not is_staging():  # concrete arrays: laid out now
        placed = [v if s is None else device_put(v, s) for v, s in zip(leaves, targets)]
        return pytree.unflatten(tree, placed)  # type: ignore[no-any-return]
    out = [v if s is None else wrap(C.sharding_constraint(as_tensor(v).atom, s)) for v, s in zip(leaves, targets)]
    return pytree.unflatten(tree, out)  # type: ignore[no-any-return]
