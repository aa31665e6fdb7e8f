"""What lowering for a GPU changes, checked on the module text (no GPU needed): f32 matrix products ask for full
f32 precision (XLA's default lets GPUs use TF32, relative errors near 1e-3), unless the user opts out; integer
convolutions, which XLA:GPU cannot run, are a clear error naming the user's line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

HIGHEST = "#stablehlo<precision HIGHEST>"


def _products(a: Any, x: Any, w: Any) -> Any:
    return a @ a, tnp.einsum("bij,bjk->bik", a[None], a[None]), ts.nn.conv(x, w), tnp.linalg.solve(a, a)


def _module(dtype: Any, platform: str) -> str:
    a = np.eye(3, dtype=dtype)
    x, w = np.ones((1, 5, 5, 2), dtype), np.ones((3, 3, 2, 4), dtype)
    return ts.program(_products).stage(a, x, w).stablehlo(platform)


def _products_and_their_precision(text: str) -> tuple[int, int]:
    lines = [line for line in text.splitlines() if "stablehlo.dot_general" in line or "stablehlo.convolution" in line]
    return len(lines), sum(HIGHEST in line for line in lines)


def test_f32_products_ask_for_full_precision_on_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TENSORSTAGE_MATMUL_PRECISION", raising=False)
    products, highest = _products_and_their_precision(_module(np.float32, "gpu"))
    assert products >= 4 and highest == products, (products, highest)


def test_c64_products_ask_for_full_precision_on_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    # was: TF32 on an H100 (relative errors of 2e-3 in complex64 matmuls)
    monkeypatch.delenv("TENSORSTAGE_MATMUL_PRECISION", raising=False)
    a = np.eye(3, dtype=np.complex64)
    text = ts.program(lambda a: (a @ a, tnp.vdot(a, a), tnp.einsum("ij,jk->ik", a, a))).stage(a).stablehlo("gpu")
    products, highest = _products_and_their_precision(text)
    assert products == 3 and highest == products, (products, highest)


def test_cpu_and_other_dtypes_carry_no_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TENSORSTAGE_MATMUL_PRECISION", raising=False)
    assert _products_and_their_precision(_module(np.float32, "cpu"))[1] == 0  # CPUs compute f32 exactly anyway
    assert _products_and_their_precision(_module(np.float64, "gpu"))[1] == 0


def test_xla_default_precision_is_an_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORSTAGE_MATMUL_PRECISION", "default")
    products, highest = _products_and_their_precision(_module(np.float32, "gpu"))
    assert products >= 4 and highest == 0


def test_an_unknown_precision_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENSORSTAGE_MATMUL_PRECISION", "tf16")
    with pytest.raises(ValueError, match="TENSORSTAGE_MATMUL_PRECISION='tf16'"):
        _module(np.float32, "gpu")


def test_integer_convolutions_lower_on_cpu_only() -> None:
    a, v = np.arange(9, dtype=np.int32), np.arange(4, dtype=np.int32)
    ints = ts.program(lambda a, v: tnp.convolve(a, v, "same")).stage(a, v)
    assert "stablehlo.convolution" in ints.stablehlo("cpu")
    with pytest.raises(ts.DTypeError) as info:
        ints.stablehlo("gpu")
    for part in ("convolution", "i32[1, 1, 9]", "gpu", "float dtype", "test_lowering_platforms.py:"):
        assert part in str(info.value), (part, str(info.value))
    floats = ts.program(lambda a, v: tnp.convolve(a, v)).stage(np.ones(9, np.float32), np.ones(4, np.float32))
    assert "stablehlo.convolution" in floats.stablehlo("gpu")
