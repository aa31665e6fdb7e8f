"""Device placement: the default device, and calls following their Arrays across devices (the multi-device
checks run on four CPU devices in a subprocess: tests/placement_cases.py)."""

from __future__ import annotations


import numpy as np
import pytest

import tensorstage as ts
from tests import placement_cases, spmd_cases


test_placement_on_four_cpu_devices = spmd_cases.device_checks(placement_cases, "test_placement_on_four_cpu_devices")


def test_an_unknown_default_device_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORSTAGE_DEFAULT_DEVICE", "tpu")
    with pytest.raises(ValueError, match="TENSORSTAGE_DEFAULT_DEVICE='tpu' is not a platform"):
        ts.device_put(np.ones(2))


def test_the_default_device_is_cpu_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TENSORSTAGE_DEFAULT_DEVICE", raising=False)
    assert ts.default_device() == ts.devices("cpu")[0]
    monkeypatch.setenv("TENSORSTAGE_DEFAULT_DEVICE", "cpu")
    assert ts.program(lambda a: a * 2)(np.ones(2, np.float32)).device == ts.devices("cpu")[0]


def test_a_program_device_must_be_a_name_or_a_device() -> None:
    with pytest.raises(TypeError, match="device must be"):
        ts.program(device=3)(lambda a: a)  # type: ignore[call-overload]
