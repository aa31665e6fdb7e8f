"""Shared fixtures and constants: a seeded generator per test so every run is deterministic but inputs are not
hand-picked, and the platform under test (``TENSORSTAGE_DEFAULT_DEVICE``), for the few checks that differ by
platform."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import tensorstage as ts

# The platform the suite runs on: 'cpu', or 'gpu' under TENSORSTAGE_DEFAULT_DEVICE=gpu. Reading the default device
# here also creates its client before any test imports jax, so tensorstage (not jax) owns the CUDA plugin: jax then
# logs "PJRT_Api already exists" and computes on the CPU (see jax_platform).
PLATFORM: str = ts.default_device().platform


def jax_platform() -> str:
    """The platform jax computes on ('cpu' or 'gpu'). Where tensorstage loaded the CUDA plugin first (every GPU run
    of this suite), jax cannot load it again and falls back to the CPU: comparisons against jax run tensorstage's
    side on this platform, so both sides compute on the same hardware."""
    import jax

    backend = jax.default_backend()
    return "gpu" if backend in ("gpu", "cuda", "rocm") else backend


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
