"""Shared fixtures: a seeded generator per test so every run is deterministic but inputs are not hand-picked."""

from __future__ import annotations

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
