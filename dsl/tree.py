"""``tensorstage.tree``: JAX's ``jax.tree`` names for the pytree utilities of ``tensorstage.tree_util``."""

from .tree_util import tree_all as all  # noqa: A004 - jax.tree's names
from .tree_util import tree_flatten as flatten
from .tree_util import tree_leaves as leaves
from .tree_util import tree_map as map  # noqa: A004
from .tree_util import tree_reduce as reduce
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["all", "flatten", "leaves", "map", "reduce", "structure", "transpose", "unflatten"]
