"""``tensorstage.flatten_util`` (implemented in ``tensorstage.prelude.tree_flatten``): ``ravel_pytree``, as
``jax.flatten_util``."""

from .prelude.tree_flatten import *  # noqa: F403
from .prelude.tree_flatten import __all__ as __all__
