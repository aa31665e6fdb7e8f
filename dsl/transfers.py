"""Pytree-wide host transfers and waits (``jax.device_get``, ``jax.block_until_ready``,
``jax.copy_to_host_async``) and device counts."""

from __future__ import annotations

from typing import Any, TypeVar

from . import pytree
from .array import Array, Device, default_platform, devices
from .staging.errors import ConcretizationError
from .staging.source import user_location
from .tensor import Traced

T = TypeVar("T")


def _host(leaf: Any) -> Any:
    if isinstance(leaf, Array):
        return leaf.numpy()
    if isinstance(leaf, Traced):
        raise ConcretizationError("device_get of a staged value: it has no data until the program runs",
                                  "device_get", user_location())
    return leaf


def device_get(tree: Any) -> Any:
    """``tree`` with every ``ts.Array`` copied to a NumPy array (other leaves as they are)."""
    return pytree.tree_map(_host, tree)


def block_until_ready(tree: T) -> T:
    """Wait until every ``ts.Array`` in ``tree`` is computed; returns ``tree``."""
    for leaf in pytree.leaves(tree):
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    return tree


def copy_to_host_async(tree: T) -> T:
    """Start copying every ``ts.Array`` in ``tree`` to the host (``Array.copy_to_host_async``); returns ``tree``."""
    for leaf in pytree.leaves(tree):
        if isinstance(leaf, Array):
            leaf.copy_to_host_async()
    return tree


def local_devices(backend: str | None = None) -> list[Device]:
    """The devices of ``backend`` (``'cpu'``/``'gpu'``; the default platform when None)."""
    return devices(backend or default_platform())


def device_count(backend: str | None = None) -> int:
    return len(local_devices(backend))


local_device_count = device_count  # one process: every device is local


def default_backend() -> str:
    """The default platform: ``'cpu'`` or ``'gpu'`` (``TENSORSTAGE_DEFAULT_DEVICE``)."""
    return default_platform()


