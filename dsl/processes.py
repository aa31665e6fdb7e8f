"""JAX's multi-process queries, for tensorstage's one process: ``ts.process_index()`` (0), ``ts.process_count()``
(1), ``ts.process_indices()`` (``[0]``), and JAX's older names for them, ``ts.host_id``, ``ts.host_count`` and
``ts.host_ids``. Every device is local (``ts.local_devices() == ts.devices()``); a ``backend`` the machine does not
have raises, as in JAX.

Deliberate difference from JAX: there is no ``jax.distributed.initialize``, so no run spans several processes.
"""

from __future__ import annotations

from .transfers import local_devices

__all__ = ["host_count", "host_id", "host_ids", "process_count", "process_index", "process_indices"]


def _check_backend(backend: str | None) -> None:
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"backend must be a platform name such as 'cpu' or 'gpu', or None; got {backend!r:.60}")
    local_devices(backend)  # raises for a platform this machine does not have


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes of the run: always 0 here."""
    _check_backend(backend)
    return 0


def process_count(backend: str | None = None) -> int:
    """How many processes the run has: always 1 here."""
    _check_backend(backend)
    return 1


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of the run's processes: ``[0]`` here."""
    _check_backend(backend)
    return [0]


host_id = process_index  # JAX's older names
host_count = process_count
host_ids = process_indices
