"""tensorstage on a real GPU, against NumPy float64 references.

Skipped (at import, quickly) when the CUDA PJRT plugin or a GPU is not usable. ``TENSORSTAGE_TEST_GPU_PLATFORM=cpu``
runs every check on the CPU instead, to validate the tests themselves without a GPU:

    TENSORSTAGE_CACHE_DIR=$(mktemp -d) TENSORSTAGE_TEST_GPU_PLATFORM=cpu python -m pytest tests/test_gpu.py -q

Checks are grouped into one compiled program per family (compiling is slow on a GPU with autotuning). Every
assertion message names the op, the dtype and the error. The tests named ``test_f32_matmul_precision_*`` ask for
full f32 precision of matmuls and convolutions and fail for TF32; other checks whose results go through device
matmuls widen their tolerances when a sentinel dot shows reduced precision (``dot_tol``), and say so.
"""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.dtypes import to_numpy
from tensorstage.lowering import backend

PLATFORM = os.environ.get("TENSORSTAGE_TEST_GPU_PLATFORM", "gpu")

try:
    if PLATFORM == "gpu":
        backend.gpu_client()
    DEVICES = ts.devices(PLATFORM)
    if not DEVICES:
        raise ts.DeviceUnavailableError(f"ts.devices({PLATFORM!r}) is empty")
except ts.DeviceUnavailableError as _exc:
    pytest.skip(f"no usable {PLATFORM} device: {_exc}", allow_module_level=True)
except Exception as _exc:  # noqa: BLE001 - any failure to start the plugin means: no GPU here
    pytest.skip(f"{PLATFORM} client failed to start: {type(_exc).__name__}: {_exc}", allow_module_level=True)

DEV = DEVICES[0]
CPU = ts.devices("cpu")[0]
BF16 = to_numpy(ts.bf16)

# Tolerances: correctness checks (wrong lowering gives O(1) errors) vs the f32 precision checks.
TRANSCENDENTAL_RTOL = 1e-5  # f32 exp/log/tanh/sin/erf: a few ulps on any backend
DOT_RTOL = 1e-4  # results of a few small f32 matmuls (full f32 precision: ~1e-6); see dot_tol
F32_MATMUL_NORMALIZED_TOL = 5e-6  # |C - C64| / (|A| @ |B|): full f32 gives 1e-7..3e-7 here, TF32 1.2e-4..1.6e-4


@functools.cache
def dots_reduced() -> bool:
    """Whether f32 dots on the device round their inputs below f32 precision (TF32 does: 1 + 2**-13 becomes 1).
    Correctness checks whose results go through device matmuls widen their tolerance then (``dot_tol``); the
    ``test_f32_matmul_precision_*`` tests never do."""
    s = np.full((1, 256), 1 + 2.0**-13, np.float32)
    o = np.ones((256, 1), np.float32)
    out = on_device(lambda s, o: s @ o, s, o)(ts.device_put(s, PLATFORM), ts.device_put(o, PLATFORM))
    return float(host(out)[0, 0]) != 256 + 2.0**-5


def dot_tol(full: float) -> float:
    """``full`` (a tolerance for f32 results of device matmuls), times 50 where the device's f32 dots are
    reduced-precision (TF32's 10-bit mantissa: ~5e-4 relative per product)."""
    return full * 50 if dots_reduced() else full


def _dot_note() -> str:
    if dots_reduced.cache_info().currsize and dots_reduced():
        return " [device f32 dots are reduced precision (TF32?): dot tolerances widened 50x]"
    return ""


def on_device(fn: Callable[..., Any], *examples: Any, platform: str = PLATFORM, **options: Any) -> Any:
    """``fn`` staged for ``examples`` and compiled for ``platform``."""
    return ts.program(fn, **options).stage(*examples).compile(device=platform)


def host(x: Any) -> np.ndarray[Any, Any]:
    return np.asarray(x)


def _errors(got: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> tuple[float, float]:
    g = got.astype(np.float64)
    w = np.asarray(want, np.float64)
    finite = np.isfinite(w)
    if not finite.any():
        return 0.0, 0.0
    diff = np.abs(g[finite] - w[finite])
    return float(diff.max(initial=0.0)), float((diff / np.maximum(np.abs(w[finite]), 1e-30)).max(initial=0.0))


def check(
    op: str, got: Any, want: Any, rtol: float, atol: float = 0.0, *, exact: bool = False, device: bool = True
) -> None:
    """``got`` (an Array, or host data) against the float64 reference ``want``: shape, non-finite positions, and
    ``|got - want| <= atol + rtol * |want|`` (or bitwise equality with ``exact``)."""
    if device and isinstance(got, ts.Array):
        assert got.device == DEV, f"{op}: result on {got.device}, expected {DEV}"
    g = host(got)
    w = np.asarray(want)
    where = f"{op} [{g.dtype}]{_dot_note()}"
    assert g.shape == w.shape, f"{where}: shape {g.shape} != expected {w.shape}"
    if exact:
        same = g.astype(w.dtype) == w if g.dtype != w.dtype else g == w
        if g.dtype.kind == "f" or w.dtype.kind == "f":
            same = same | (np.isnan(g.astype(np.float64)) & np.isnan(w.astype(np.float64)))
        bad = int((~same).sum())
        first = tuple(int(i) for i in np.argwhere(~same)[0]) if bad else ()
        assert bad == 0, (
            f"{where}: {bad}/{g.size} elements differ (exact check); first at {first}: got "
            f"{g[first] if bad else ''} expected {w[first] if bad else ''}; max abs err {_errors(g, w)[0]:.3g}"
        )
        return
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    nan_g, nan_w = np.isnan(g64), np.isnan(w64)
    assert (nan_g == nan_w).all(), f"{where}: NaN at {int((nan_g != nan_w).sum())} unexpected positions"
    inf_w = np.isinf(w64)
    assert (g64[inf_w] == w64[inf_w]).all() and not np.isinf(g64[~inf_w]).any(), f"{where}: infinities differ"
    ok = ~(nan_w | inf_w)
    diff = np.abs(g64[ok] - w64[ok])
    bound = atol + rtol * np.abs(w64[ok])
    abs_err, rel_err = _errors(g, w)
    assert (diff <= bound).all(), (
        f"{where}: max abs err {abs_err:.3g}, max rel err {rel_err:.3g} (rtol {rtol:g}, atol {atol:g}); "
        f"{int((diff > bound).sum())}/{diff.size} elements out of tolerance"
    )


def check_normwise(op: str, got: Any, want: Any, tol: float) -> None:
    """``max|got - want| <= tol * max|want|`` (for results whose small entries carry cancellation)."""
    g = host(got).astype(np.float64)
    w = np.asarray(want, np.float64)
    assert g.shape == w.shape, f"{op} [{host(got).dtype}]: shape {g.shape} != expected {w.shape}"
    err = float(np.abs(g - w).max(initial=0.0))
    scale = float(np.abs(w).max(initial=0.0)) or 1.0
    assert np.isfinite(g).all() and err <= tol * scale, (
        f"{op} [{host(got).dtype}]{_dot_note()}: max abs err {err:.3g} = {err / scale:.3g} of max|ref| "
        f"{scale:.3g} (tol {tol:g})"
    )


# ----------------------------------------------------------------------------------------------- 1. devices


def test_devices_and_transfers_round_trip_exactly() -> None:
    devs = ts.devices(PLATFORM)
    assert devs, f"ts.devices({PLATFORM!r}) is empty"
    assert all(d.platform == PLATFORM for d in devs), f"device platforms {[d.platform for d in devs]} != {PLATFORM}"
    rng = np.random.default_rng(1)
    dtypes: dict[str, Any] = {
        "f32": np.float32, "f16": np.float16, "bf16": BF16, "i8": np.int8, "i32": np.int32, "u8": np.uint8,
        "bool": np.bool_,
    }
    for name, dtype in dtypes.items():
        for shape in [(3, 5), (0,), (0, 4), (), (257,)]:
            value: Any
            if np.dtype(dtype).kind == "b":
                value = rng.random(shape) < 0.5
            elif np.dtype(dtype).kind in "iu":
                info = np.iinfo(dtype)
                value = rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np.int64)
            else:
                value = rng.normal(size=shape) * 100
            value = np.asarray(value).astype(dtype)
            if np.dtype(dtype).kind not in "iub" and value.size >= 4:
                flat = value.reshape(-1)
                flat[:4] = np.array([np.inf, -np.inf, -0.0, np.nan]).astype(dtype)
            op = f"device_put round trip {name}{list(shape)}"
            on = ts.device_put(value, PLATFORM)
            assert on.device == DEV, f"{op}: .device is {on.device}, expected {DEV}"
            assert on.dtype == np.dtype(dtype) and on.shape == shape, f"{op}: aval {on.dtype}{on.shape}"
            back = host(on)
            assert back.dtype == np.dtype(dtype), f"{op}: came back as {back.dtype}"
            same = back.tobytes() == value.tobytes()
            assert same, f"{op}: bytes differ; got {back.reshape(-1)[:6]} expected {value.reshape(-1)[:6]}"
            # device -> cpu -> device
            to_cpu = ts.device_put(on, "cpu")
            assert to_cpu.device == CPU, f"{op}: device_put(x, 'cpu').device is {to_cpu.device}"
            again = ts.device_put(to_cpu, PLATFORM)
            assert again.device == DEV, f"{op}: device_put(cpu array, {PLATFORM!r}).device is {again.device}"
            assert host(to_cpu).tobytes() == value.tobytes() and host(again).tobytes() == value.tobytes(), (
                f"{op}: bytes changed through {PLATFORM}->cpu->{PLATFORM}"
            )
    x = ts.device_put(np.arange(6, dtype=np.float32), DEV)  # a ts.Device works as well as a name
    assert x.device == DEV and ts.device_put(x, DEV) is x, "device_put to the array's own device should not copy"


# ------------------------------------------------------------------------------------- 2. compiled programs


def _elementwise(x: Any, y: Any, i: Any, j: Any) -> dict[str, Any]:
    return {
        "exp": tnp.exp(x), "log1p": tnp.log1p(x), "tanh": tnp.tanh(y), "sin": tnp.sin(y), "erf": ts.nn.erf(y),
        "sqrt": tnp.sqrt(x), "div": y / x, "pow": x ** 1.5, "logistic": 1.0 / (1.0 + tnp.exp(-y)),
        "sum0": tnp.sum(y, axis=0), "sum1": tnp.sum(y, axis=1), "mean": tnp.mean(y), "max1": tnp.max(y, axis=1),
        "min0": tnp.min(y, axis=0), "argmax1": tnp.argmax(y, axis=1), "argmin0": tnp.argmin(y, axis=0),
        "var0": tnp.var(y, axis=0), "std1": tnp.std(y, axis=1),
        "cumsum1": tnp.cumsum(y, axis=1), "sort1": tnp.sort(y, axis=1), "argsort0": tnp.argsort(y, axis=0),
        "where": tnp.where(y > 0, x, -x),
        "iadd": i + j, "imul": i * j, "ifloordiv": i // j, "imod": i % j, "ixor": i ^ j, "ishift": i >> 3,
        "isum": tnp.sum(i, axis=0), "imax": tnp.max(i, axis=1), "isort": tnp.sort(i, axis=1),
        "f2i": (y * 1000.0).astype(ts.i32), "i2f": i.astype(ts.f32), "f2h": y.astype(ts.f16),
        "f2bf": y.astype(ts.bf16), "gt_bool": (i > j).astype(ts.i32),
    }


def test_elementwise_reductions_sorting_integers_casts_f32() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(0.1, 3.0, size=(64, 33)).astype(np.float32)
    y = rng.normal(size=(64, 33)).astype(np.float32)
    i = rng.integers(-(2**20), 2**20, size=(64, 33)).astype(np.int32)
    j = rng.integers(1, 1000, size=(64, 33)).astype(np.int32) * np.where(rng.random((64, 33)) < 0.5, -1, 1).astype(
        np.int32
    )
    exe = on_device(_elementwise, x, y, i, j)
    out = exe(ts.device_put(x, PLATFORM), ts.device_put(y, PLATFORM), ts.device_put(i, PLATFORM),
              ts.device_put(j, PLATFORM))
    X, Y = x.astype(np.float64), y.astype(np.float64)
    erf = np.vectorize(math.erf)
    t = TRANSCENDENTAL_RTOL
    check("exp", out["exp"], np.exp(X), t)
    check("log1p", out["log1p"], np.log1p(X), t)
    check("tanh", out["tanh"], np.tanh(Y), t, 1e-7)
    check("sin", out["sin"], np.sin(Y), t, 1e-7)
    check("erf", out["erf"], erf(Y), t, 1e-7)
    check("sqrt", out["sqrt"], np.sqrt(X), 1e-6)
    check("divide", out["div"], Y / X, 1e-6)
    check("power x**1.5", out["pow"], X ** 1.5, t)
    check("logistic", out["logistic"], 1 / (1 + np.exp(-Y)), t)
    scale = np.abs(Y).sum()
    check("sum axis=0", out["sum0"], Y.sum(0), 0, 1e-6 * scale)
    check("sum axis=1", out["sum1"], Y.sum(1), 0, 1e-6 * scale)
    check("mean", out["mean"], Y.mean(), 0, 1e-6 * np.abs(Y).mean())
    check("max axis=1", out["max1"], y.max(1), 0, exact=True)
    check("min axis=0", out["min0"], y.min(0), 0, exact=True)
    check("argmax axis=1", out["argmax1"], y.argmax(1), 0, exact=True)
    check("argmin axis=0", out["argmin0"], y.argmin(0), 0, exact=True)
    check("var axis=0", out["var0"], Y.var(0), 1e-5)
    check("std axis=1", out["std1"], Y.std(1), 1e-5)
    check("cumsum axis=1", out["cumsum1"], np.cumsum(Y, 1), 0, 1e-6 * np.abs(Y).sum(1).max())
    check("sort axis=1", out["sort1"], np.sort(y, 1), 0, exact=True)
    check("argsort axis=0", out["argsort0"], np.argsort(y, 0, kind="stable"), 0, exact=True)
    check("where", out["where"], np.where(y > 0, x, -x), 0, exact=True)
    with np.errstate(over="ignore"):
        check("i32 add", out["iadd"], i + j, 0, exact=True)
        check("i32 multiply (wraps)", out["imul"], i * j, 0, exact=True)
    check("i32 floor_divide (negative operands)", out["ifloordiv"], i // j, 0, exact=True)
    check("i32 remainder (negative operands)", out["imod"], i % j, 0, exact=True)
    check("i32 xor", out["ixor"], i ^ j, 0, exact=True)
    check("i32 right shift", out["ishift"], i >> 3, 0, exact=True)
    check("i32 sum axis=0", out["isum"], i.sum(0, dtype=np.int32), 0, exact=True)
    check("i32 max axis=1", out["imax"], i.max(1), 0, exact=True)
    check("i32 sort axis=1", out["isort"], np.sort(i, 1), 0, exact=True)
    check("cast f32->i32 (truncates)", out["f2i"], (y * np.float32(1000.0)).astype(np.int32), 0, exact=True)
    check("cast i32->f32", out["i2f"], i.astype(np.float32), 0, exact=True)
    check("cast f32->f16", out["f2h"], y.astype(np.float16), 0, exact=True)
    check("cast f32->bf16", out["f2bf"], y.astype(BF16), 0, exact=True)
    check("compare i32 > -> i32", out["gt_bool"], (i > j).astype(np.int32), 0, exact=True)


def _half(h: Any) -> dict[str, Any]:
    return {
        "exp": tnp.exp(h), "tanh": tnp.tanh(h), "mul": h * h + h, "sum": tnp.sum(h, axis=1), "mean": tnp.mean(h),
        "max": tnp.max(h, axis=0), "cumsum": tnp.cumsum(h, axis=1), "sort": tnp.sort(h, axis=1),
        "up": h.astype(ts.f32),
    }


@pytest.mark.parametrize("name", ["f16", "bf16"])
def test_half_precision_math(name: str) -> None:
    dtype = np.float16 if name == "f16" else BF16
    ulp = 2.0**-10 if name == "f16" else 2.0**-7  # relative spacing; rounding once costs half of it
    rng = np.random.default_rng(3)
    h = (rng.normal(size=(16, 24)) * 0.8).astype(dtype)
    out = on_device(_half, h)(ts.device_put(h, PLATFORM))
    H = h.astype(np.float64)
    rel = 1.01 * ulp  # one rounding of the f32 result, plus the f32 computation's own few ulps
    check(f"{name} exp", out["exp"], np.exp(H), rel)
    check(f"{name} tanh", out["tanh"], np.tanh(H), rel, 1e-6)
    # x*x may or may not be rounded to the half type before the add (XLA allows excess precision): near x = -1
    # the two differ by half an ulp of 1 in absolute terms.
    check(f"{name} x*x+x", out["mul"], (H * H).astype(dtype).astype(np.float64) + H, 2 * rel, ulp)
    check(f"{name} sum axis=1 (f32 accumulation)", out["sum"], H.sum(1), rel, 1e-3 * ulp * np.abs(H).sum())
    check(f"{name} mean", out["mean"], H.mean(), rel, 1e-3 * ulp * np.abs(H).mean())
    check(f"{name} max axis=0", out["max"], h.max(0), 0, exact=True)
    check(f"{name} cumsum axis=1", out["cumsum"], np.cumsum(H, 1), rel, ulp * np.abs(H).sum(1).max() * 0.01)
    check(f"{name} sort axis=1", out["sort"], np.sort(h.astype(np.float32), 1).astype(dtype), 0, exact=True)
    check(f"{name} -> f32", out["up"], h.astype(np.float32), 0, exact=True)


# ------------------------------------------------------------------------- 3. matmul / einsum / conv precision


def _tf32(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``a`` (f32) rounded to TF32's 10 mantissa bits (round to nearest even), as a TF32 matmul reads it."""
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & ~np.uint64(0x1FFF)
    return rounded.astype(np.uint32).view(np.float32)


def _normalized_error(got: Any, want: np.ndarray[Any, Any], bound: np.ndarray[Any, Any]) -> float:
    return float((np.abs(host(got).astype(np.float64) - want) / np.maximum(bound, 1e-30)).max())


def _precision_message(op: str, err: float, tf32_err: float) -> str:
    verdict = ""
    if err > 10 * F32_MATMUL_NORMALIZED_TOL:
        verdict = f" XLA on {PLATFORM} appears to use TF32 (or another reduced precision) for f32 dots by default."
    return (
        f"f32 matmul precision ({op}, f32): max |C - C_f64| / (|A| @ |B|) = {err:.3g}; full f32 precision gives "
        f"< {F32_MATMUL_NORMALIZED_TOL:g}, TF32 inputs (10-bit mantissa) give {tf32_err:.3g} for these operands."
        + verdict
    )


def test_f32_matmul_precision_dot() -> None:
    rng = np.random.default_rng(4)
    a = rng.normal(size=(256, 256)).astype(np.float32)
    b = rng.normal(size=(256, 256)).astype(np.float32)
    # A sentinel TF32 cannot represent: 1 + 2**-13 rounds to 1 in TF32; the exact f32 dot is 256 + 2**-5.
    s = np.full((1, 256), 1 + 2.0**-13, np.float32)
    ones = np.ones((256, 1), np.float32)
    out = on_device(lambda a, b, s, o: (a @ b, s @ o), a, b, s, ones)(
        *(ts.device_put(v, PLATFORM) for v in (a, b, s, ones))
    )
    want = a.astype(np.float64) @ b.astype(np.float64)
    bound = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    err = _normalized_error(out[0], want, bound)
    tf32_err = _normalized_error(_tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64), want, bound)
    assert out[0].device == DEV, f"matmul result on {out[0].device}"
    sentinel = float(host(out[1])[0, 0])
    assert err <= F32_MATMUL_NORMALIZED_TOL, _precision_message("a @ b, 256x256x256", err, tf32_err)
    assert sentinel == 256 + 2.0**-5, (
        f"f32 matmul precision (sentinel dot, f32): sum of 256 x (1 + 2**-13) gave {sentinel!r}, exact f32 gives "
        f"{256 + 2.0**-5!r}, TF32 gives 256.0"
    )


def test_f32_matmul_precision_batched_matmul_and_einsum() -> None:
    rng = np.random.default_rng(5)
    a = rng.normal(size=(6, 64, 128)).astype(np.float32)
    b = rng.normal(size=(6, 128, 48)).astype(np.float32)
    out = on_device(lambda a, b: (tnp.matmul(a, b), tnp.einsum("bij,bjk->bki", a, b)), a, b)(
        ts.device_put(a, PLATFORM), ts.device_put(b, PLATFORM)
    )
    A, B = a.astype(np.float64), b.astype(np.float64)
    want, bound = A @ B, np.abs(A) @ np.abs(B)
    tf32_err = _normalized_error(_tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64), want, bound)
    err = _normalized_error(out[0], want, bound)
    assert err <= F32_MATMUL_NORMALIZED_TOL, _precision_message("batched matmul 6x(64x128 @ 128x48)", err, tf32_err)
    err = _normalized_error(out[1], want.transpose(0, 2, 1), bound.transpose(0, 2, 1))
    assert err <= F32_MATMUL_NORMALIZED_TOL, _precision_message("einsum bij,bjk->bki", err, tf32_err)


def _conv_ref(x: np.ndarray[Any, Any], w: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """VALID 2-D cross-correlation, NHWC x HWIO, float64."""
    n, hh, ww, _ = x.shape
    kh, kw, _, o = w.shape
    out = np.zeros((n, hh - kh + 1, ww - kw + 1, o))
    for di in range(kh):
        for dj in range(kw):
            out += np.einsum("nhwc,co->nhwo", x[:, di:di + hh - kh + 1, dj:dj + ww - kw + 1, :], w[di, dj])
    return out


def test_f32_matmul_precision_conv() -> None:
    rng = np.random.default_rng(6)
    x = rng.normal(size=(4, 20, 20, 32)).astype(np.float32)
    w = rng.normal(size=(3, 3, 32, 16)).astype(np.float32)
    out = on_device(lambda x, w: ts.nn.conv(x, w, padding="VALID"), x, w)(
        ts.device_put(x, PLATFORM), ts.device_put(w, PLATFORM)
    )
    X, W = x.astype(np.float64), w.astype(np.float64)
    want, bound = _conv_ref(X, W), _conv_ref(np.abs(X), np.abs(W))
    assert host(out).shape == want.shape, f"conv [f32]: shape {host(out).shape} != {want.shape}"
    err = _normalized_error(out, want, bound)
    tf32_err = _normalized_error(_conv_ref(_tf32(x).astype(np.float64), _tf32(w).astype(np.float64)), want, bound)
    assert err <= F32_MATMUL_NORMALIZED_TOL, _precision_message("ts.nn.conv 3x3, 32->16 channels", err, tf32_err)


# ------------------------------------------------------------------------------------------------ 4. linalg


def _spd(rng: np.random.Generator, n: int, batch: int = 3) -> np.ndarray[Any, Any]:
    m = rng.normal(size=(batch, n, n))
    return (m @ m.transpose(0, 2, 1) / n + np.eye(n)).astype(np.float32)


def _general(rng: np.random.Generator, n: int, batch: int = 3) -> np.ndarray[Any, Any]:
    return (rng.normal(size=(batch, n, n)) * 0.3 + 2 * np.eye(n)).astype(np.float32)  # condition numbers < 10


LINALG_TOL = 2e-4  # normwise, f32 factorizations of matrices with condition numbers below ~10 (see dot_tol)


def test_linalg_cholesky() -> None:
    tol = dot_tol(LINALG_TOL)
    a = _spd(np.random.default_rng(7), 12)
    lower = on_device(lambda m: tnp.linalg.cholesky(m), a)(ts.device_put(a, PLATFORM))
    L = host(lower).astype(np.float64)
    check("cholesky: upper triangle is zero", np.triu(L, 1), np.zeros_like(L), 0, exact=True, device=False)
    check_normwise("cholesky L @ L^T == A", L @ L.transpose(0, 2, 1), a, tol)
    check_normwise("cholesky vs numpy", L, np.linalg.cholesky(a.astype(np.float64)), tol)


def test_linalg_qr() -> None:
    tol = dot_tol(LINALG_TOL)
    a = np.random.default_rng(8).normal(size=(3, 14, 9)).astype(np.float32)
    q, r = on_device(lambda m: tnp.linalg.qr(m), a)(ts.device_put(a, PLATFORM))
    Q, R = host(q).astype(np.float64), host(r).astype(np.float64)
    assert Q.shape == (3, 14, 9) and R.shape == (3, 9, 9), f"qr [f32]: shapes {Q.shape}, {R.shape}"
    check("qr: R below the diagonal is zero", np.tril(R, -1), np.zeros_like(R), 0, exact=True, device=False)
    check_normwise("qr Q @ R == A", Q @ R, a, tol)
    check_normwise("qr Q^T Q == I", Q.transpose(0, 2, 1) @ Q, np.broadcast_to(np.eye(9), (3, 9, 9)), tol)
    _, r64 = np.linalg.qr(a.astype(np.float64))
    check_normwise("qr |diag R| vs numpy", np.abs(np.diagonal(R, 0, 1, 2)), np.abs(np.diagonal(r64, 0, 1, 2)),
                   tol)


def _solvers(a: Any, b: Any) -> dict[str, Any]:
    sign, logdet = tnp.linalg.slogdet(a)
    return {"solve": tnp.linalg.solve(a, b), "inv": tnp.linalg.inv(a), "det": tnp.linalg.det(a), "sign": sign,
            "logdet": logdet}


def test_linalg_solve_inv_det_slogdet() -> None:
    tol = dot_tol(LINALG_TOL)
    rng = np.random.default_rng(9)
    a = _general(rng, 10)
    a[1, 0] = -a[1, 0]  # a negative determinant for slogdet's sign
    b = rng.normal(size=(3, 10, 4)).astype(np.float32)
    out = on_device(_solvers, a, b)(ts.device_put(a, PLATFORM), ts.device_put(b, PLATFORM))
    A, B = a.astype(np.float64), b.astype(np.float64)
    check_normwise("solve: A @ x == b", A @ host(out["solve"]).astype(np.float64), B, tol)
    check_normwise("solve vs numpy", out["solve"], np.linalg.solve(A, B), 5 * tol)
    check_normwise("inv: A @ inv(A) == I", A @ host(out["inv"]).astype(np.float64),
                   np.broadcast_to(np.eye(10), A.shape), tol)
    sign, logdet = np.linalg.slogdet(A)
    check("det", out["det"], np.linalg.det(A), 1e-3)
    check("slogdet sign", out["sign"], sign.astype(np.float32), 0, exact=True)
    check("slogdet logabsdet", out["logdet"], logdet, 1e-4, 1e-4)


def test_linalg_eigh() -> None:
    tol = dot_tol(LINALG_TOL)
    a = _spd(np.random.default_rng(10), 12)
    w, v = on_device(lambda m: tnp.linalg.eigh(m), a)(ts.device_put(a, PLATFORM))
    W, V, A = host(w).astype(np.float64), host(v).astype(np.float64), a.astype(np.float64)
    check_normwise("eigh eigenvalues vs numpy", W, np.linalg.eigvalsh(A), tol)
    assert (np.diff(W, axis=-1) >= 0).all(), f"eigh [f32]: eigenvalues not ascending: {W[0]}"
    check_normwise("eigh A v == w v", A @ V, V * W[:, None, :], tol)
    check_normwise("eigh V^T V == I", V.transpose(0, 2, 1) @ V, np.broadcast_to(np.eye(12), A.shape), tol)


def _svd_family(a: Any, b: Any) -> dict[str, Any]:
    u, s, vh = tnp.linalg.svd(a, full_matrices=False)
    x, *_ = tnp.linalg.lstsq(a[0], b[0])  # lstsq takes one 2-D matrix
    return {"u": u, "s": s, "vh": vh, "lstsq": x, "pinv": tnp.linalg.pinv(a)}


def test_linalg_svd_lstsq_pinv() -> None:
    tol = dot_tol(LINALG_TOL)
    rng = np.random.default_rng(11)
    a = rng.normal(size=(2, 12, 7)).astype(np.float32)
    b = rng.normal(size=(2, 12, 3)).astype(np.float32)
    try:
        exe = on_device(_svd_family, a, b)
    except NotImplementedError as exc:  # documented: SVD lowers only through LAPACK on CPU
        pytest.skip(f"svd/lstsq/pinv on {PLATFORM}: {str(exc)[:200]}")
    out = exe(ts.device_put(a, PLATFORM), ts.device_put(b, PLATFORM))
    A, B = a.astype(np.float64), b.astype(np.float64)
    U, S, Vh = (host(out[k]).astype(np.float64) for k in ("u", "s", "vh"))
    check_normwise("svd singular values vs numpy", S, np.linalg.svd(A, compute_uv=False), tol)
    check_normwise("svd U S Vh == A", (U * S[:, None, :]) @ Vh, A, tol)
    check_normwise("svd U^T U == I", U.transpose(0, 2, 1) @ U, np.broadcast_to(np.eye(7), (2, 7, 7)), tol)
    want = np.linalg.lstsq(A[0], B[0], rcond=None)[0]
    check_normwise("lstsq vs numpy", out["lstsq"], want, 10 * tol)
    check_normwise("pinv vs numpy", out["pinv"], np.linalg.pinv(A), 10 * tol)


def test_linalg_norms() -> None:
    a = np.random.default_rng(12).normal(size=(3, 9, 9)).astype(np.float32)
    out = on_device(
        lambda a: (tnp.linalg.norm(a, axis=(-2, -1)), tnp.linalg.norm(a, ord=1, axis=(-2, -1)),
                   tnp.linalg.norm(a[:, 0, :], axis=-1), tnp.linalg.norm(a, ord=np.inf, axis=(-2, -1))), a
    )(ts.device_put(a, PLATFORM))
    A = a.astype(np.float64)
    check("norm fro", out[0], np.linalg.norm(A, axis=(-2, -1)), 1e-5)
    check("norm ord=1", out[1], np.linalg.norm(A, ord=1, axis=(-2, -1)), 1e-5)
    check("vector norm", out[2], np.linalg.norm(A[:, 0, :], axis=-1), 1e-5)
    check("norm ord=inf", out[3], np.linalg.norm(A, ord=np.inf, axis=(-2, -1)), 1e-5)


# ------------------------------------------------------------------------------------------------ 5. random


def _random_draws(key: Any) -> dict[str, Any]:
    k1, k2, k3 = ts.random.split(key, 3)
    return {
        "bits": ts.random.bits(key, (1000,)), "uniform": ts.random.uniform(k1, (500,)),
        "normal": ts.random.normal(k2, (500,)), "split": k3, "fold_in": ts.random.fold_in(key, 7),
        "uniform_range": ts.random.uniform(k3, (64,), minval=-2.0, maxval=5.0),
    }


def test_random_is_bit_identical_to_cpu() -> None:
    key = np.asarray(ts.random.key(1234))
    gpu = on_device(_random_draws, key)(ts.device_put(key, PLATFORM))
    cpu = on_device(_random_draws, key, platform="cpu")(key)
    eager = {"bits": ts.random.bits(ts.random.key(1234), (1000,)), "fold_in": ts.random.fold_in(ts.random.key(1234), 7)}
    for name in ("bits", "uniform", "split", "fold_in"):
        check(f"random.{name} {PLATFORM} vs cpu (bitwise)", gpu[name], host(cpu[name]), 0, exact=True)
    # lo + (hi - lo) * u: a GPU contracts it into one FMA (one rounding fewer), so the last bit may differ.
    check(f"random.uniform_range {PLATFORM} vs cpu", gpu["uniform_range"], host(cpu["uniform_range"]), 1e-6, 1e-6)
    for name, value in eager.items():
        check(f"random.{name} {PLATFORM} vs eager cpu (bitwise)", gpu[name], host(value), 0, exact=True)
    g, c = host(gpu["normal"]), host(cpu["normal"])
    identical = int((g.view(np.uint32) == c.view(np.uint32)).sum())
    # normal goes through erf_inv and log: a GPU may contract the polynomial into FMAs or round log differently;
    # within 1e-6 here, within a few ulps in test_random_normal_matches_cpu_to_a_few_ulps.
    check(f"random.normal {PLATFORM} vs cpu ({identical}/{g.size} bit-identical)", g, c.astype(np.float64), 1e-6,
          1e-6)
    u = host(gpu["uniform"])
    assert (u >= 0).all() and (u < 1).all() and abs(u.mean() - 0.5) < 0.05, f"random.uniform [f32]: mean {u.mean()}"


def test_random_normal_matches_cpu_to_a_few_ulps() -> None:
    """The bits are identical (above); erf_inv's polynomial and log may round differently on a GPU (FMA
    contraction, other transcendental kernels): measured on an H100, 192 of 4096 draws differed, by at most 3 ulps."""
    key = np.asarray(ts.random.key(99))
    draw = lambda k: ts.random.normal(k, (4096,))  # noqa: E731
    g = host(on_device(draw, key)(ts.device_put(key, PLATFORM)))
    c = host(on_device(draw, key, platform="cpu")(key))
    differ = g.view(np.uint32) != c.view(np.uint32)
    ulps = np.abs(g.view(np.int32).astype(np.int64) - c.view(np.int32).astype(np.int64))
    assert ulps.max() <= 8, (
        f"random.normal [f32] on {PLATFORM} vs cpu: {int(differ.sum())}/{g.size} draws differ in their bits, by up to "
        f"{int(ulps.max())} ulps (max abs err {float(np.abs(g - c).max()):.3g}; bits/uniform are checked bitwise in "
        "test_random_is_bit_identical_to_cpu)"
    )


# --------------------------------------------------------------------------------------------- 6. transforms


def _mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    return tnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def _mlp_grad_numpy(p: dict[str, np.ndarray[Any, Any]], x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> Any:
    z = x @ p["w1"] + p["b1"]
    h = np.tanh(z)
    r = h @ p["w2"] + p["b2"] - y
    loss = (r ** 2).mean()
    dr = 2 * r / r.size
    dh = dr @ p["w2"].T
    dz = dh * (1 - h ** 2)
    return loss, {"w1": x.T @ dz, "b1": dz.sum(0), "w2": h.T @ dr, "b2": dr.sum(0)}


def test_grad_of_mlp_loss_matches_numpy_backprop() -> None:
    rng = np.random.default_rng(13)
    params = {"w1": rng.normal(size=(8, 16)) * 0.5, "b1": rng.normal(size=16) * 0.1,
              "w2": rng.normal(size=(16, 4)) * 0.5, "b2": rng.normal(size=4) * 0.1}
    params32 = {k: v.astype(np.float32) for k, v in params.items()}
    x = rng.normal(size=(32, 8)).astype(np.float32)
    y = rng.normal(size=(32, 4)).astype(np.float32)
    exe = on_device(ts.value_and_grad(_mlp_loss), params32, x, y)
    loss, grads = exe({k: ts.device_put(v, PLATFORM) for k, v in params32.items()}, ts.device_put(x, PLATFORM),
                      ts.device_put(y, PLATFORM))
    want_loss, want = _mlp_grad_numpy({k: v.astype(np.float64) for k, v in params32.items()},
                                      x.astype(np.float64), y.astype(np.float64))
    check("value_and_grad loss", loss, want_loss, dot_tol(DOT_RTOL))
    for name in params:
        check_normwise(f"grad d loss / d {name}", grads[name], want[name], dot_tol(DOT_RTOL))


def _row_stat(v: Any) -> Any:
    return tnp.sum(tnp.sin(v) * v) + tnp.max(v) - tnp.mean(tnp.exp(-v * v))


def test_vmap_matches_a_loop_and_jvp_matches_the_derivative() -> None:
    rng = np.random.default_rng(14)
    xs = rng.normal(size=(12, 40)).astype(np.float32)
    batched = on_device(ts.vmap(_row_stat), xs)(ts.device_put(xs, PLATFORM))
    single = on_device(_row_stat, xs[0])
    looped = np.stack([host(single(ts.device_put(row, PLATFORM))) for row in xs])
    check("vmap vs loop of the same program", batched, looped.astype(np.float64), 2e-6, 1e-6)
    X = xs.astype(np.float64)
    check("vmap vs numpy", batched, (np.sin(X) * X).sum(1) + X.max(1) - np.exp(-X * X).mean(1), 1e-5, 1e-5)

    t = rng.normal(size=40).astype(np.float32)
    primal, tangent = on_device(lambda v, dv: ts.jvp(lambda u: tnp.sin(u) * tnp.exp(u), (v,), (dv,)), xs[0], t)(
        ts.device_put(xs[0], PLATFORM), ts.device_put(t, PLATFORM)
    )
    V, T = X[0], t.astype(np.float64)
    check("jvp primal sin(x)*exp(x)", primal, np.sin(V) * np.exp(V), TRANSCENDENTAL_RTOL, 1e-7)
    check("jvp tangent", tangent, (np.cos(V) + np.sin(V)) * np.exp(V) * T, TRANSCENDENTAL_RTOL, 1e-6)


def _control_flow(x: Any, n: Any) -> dict[str, Any]:
    positive = ts.cond(tnp.sum(x) > 0, lambda v: v * 2.0, lambda v: -v, x)
    # Collatz steps of n: an integer while_loop whose trip count depends on the data (capped: never hangs).
    def body(c: Any) -> Any:
        value, steps = c
        return tnp.where(value % 2 == 0, value // 2, 3 * value + 1), steps + 1

    _, steps = ts.while_loop(lambda c: (c[0] != 1) & (c[1] < 1000), body, (n, tnp.zeros((), ts.i32)))
    carry, ys = ts.scan(lambda c, row: (c * 0.5 + row, tnp.sum(c)), tnp.zeros_like(x[0]), x)
    total = ts.fori_loop(0, 10, lambda k, acc: acc + k * k, tnp.zeros((), ts.i32))
    return {"cond": positive, "steps": steps, "carry": carry, "ys": ys, "fori": total}


def _collatz(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_control_flow_cond_while_scan_fori() -> None:
    rng = np.random.default_rng(15)
    x = rng.normal(size=(9, 5)).astype(np.float32)
    exe = on_device(_control_flow, x, np.int32(27))
    for sign in (1.0, -1.0):  # one sum positive, one negative: both branches run
        v = (x * sign).astype(np.float32)
        out = exe(ts.device_put(v, PLATFORM), ts.device_put(np.int32(27), PLATFORM))
        V = v.astype(np.float64)
        check(f"cond (sum {'>' if V.sum() > 0 else '<='} 0)", out["cond"], V * 2 if V.sum() > 0 else -V, 0,
              exact=True)
        carry = np.zeros(5)
        ys = []
        for row in V:
            ys.append(carry.sum())
            carry = carry * 0.5 + row
        check("scan carry", out["carry"], carry, 1e-6, 1e-6)
        check("scan ys", out["ys"], np.array(ys), 1e-6, 1e-6)
    check("while_loop Collatz(27) steps", out["steps"], np.int32(_collatz(27)), 0, exact=True)
    out = exe(ts.device_put(x, PLATFORM), ts.device_put(np.int32(97), PLATFORM))
    check("while_loop Collatz(97) steps", out["steps"], np.int32(_collatz(97)), 0, exact=True)
    check("fori_loop sum of squares", out["fori"], np.int32(sum(k * k for k in range(10))), 0, exact=True)


# ------------------------------------------------------------------------------------------------ 7. indexing


def _indexing(x: Any, xi: Any, idx: Any, vals: Any, ivals: Any, i: Any) -> dict[str, Any]:
    return {
        "gather": x[idx], "take": tnp.take(x, idx, axis=1), "row": x[i], "window": x[i, 2:6],
        "add_f": x.at[idx].add(vals), "add_i": xi.at[idx].add(ivals), "set_row": x.at[i].set(x[0] * 2.0),
        "max_i": xi.at[idx].max(ivals),
    }


def test_gather_scatter_and_dynamic_slices() -> None:
    rng = np.random.default_rng(16)
    x = rng.normal(size=(20, 7)).astype(np.float32)
    xi = rng.integers(-1000, 1000, size=(20, 7)).astype(np.int32)
    idx = rng.integers(0, 6, size=50).astype(np.int32)  # many duplicates, and indices 1..5 of axis 1 for take
    vals = rng.normal(size=(50, 7)).astype(np.float32)
    ivals = rng.integers(-(2**20), 2**20, size=(50, 7)).astype(np.int32)
    exe = on_device(_indexing, x, xi, idx, vals, ivals, np.int32(0))
    for i in (3, 19):
        out = exe(*(ts.device_put(v, PLATFORM) for v in (x, xi, idx, vals, ivals, np.int32(i))))
        check("gather x[idx]", out["gather"], x[idx], 0, exact=True)
        check("take axis=1", out["take"], np.take(x, idx, axis=1), 0, exact=True)
        check(f"dynamic row x[{i}]", out["row"], x[i], 0, exact=True)
        check(f"dynamic window x[{i}, 2:6]", out["window"], x[i, 2:6], 0, exact=True)
        want_f = x.astype(np.float64)
        np.add.at(want_f, idx, vals.astype(np.float64))
        check("scatter-add f32 with duplicate indices", out["add_f"], want_f, 1e-5, 1e-5)
        want_i = xi.copy()
        np.add.at(want_i, idx, ivals)
        check("scatter-add i32 with duplicate indices (exact)", out["add_i"], want_i, 0, exact=True)
        want_m = xi.copy()
        np.maximum.at(want_m, idx, ivals)
        check("scatter-max i32 with duplicate indices", out["max_i"], want_m, 0, exact=True)
        want_s = x.copy()
        want_s[i] = x[0] * np.float32(2)
        check(f"x.at[{i}].set", out["set_row"], want_s, 0, exact=True)


def _set_repeated(x: Any, idx: Any, vals: Any) -> tuple[Any, Any]:
    out = x.at[idx].set(vals)
    return out, ts.grad(lambda v: tnp.sum(x.at[idx].set(v) * out))(vals)


def test_set_with_repeated_indices_is_last_wins_with_a_matching_gradient() -> None:
    """XLA leaves the order of a set scatter's repeated indices unspecified (a GPU applies them in any order):
    tensorstage makes the last update win, as NumPy, and the gradient reaches exactly the winners."""
    rng = np.random.default_rng(17)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    idx = rng.integers(0, 8, size=20000).astype(np.int32)  # thousands of updates per row
    vals = rng.normal(size=(20000, 16)).astype(np.float32)
    out, grad = on_device(_set_repeated, x, idx, vals)(*(ts.device_put(v, PLATFORM) for v in (x, idx, vals)))
    want = x.copy()
    want[idx] = vals  # NumPy: the last update to a row wins
    check("x.at[idx].set with repeated indices (last wins)", out, want, 0, exact=True)
    winners = np.zeros(len(idx), bool)
    winners[[np.flatnonzero(idx == r)[-1] for r in np.unique(idx)]] = True
    want_grad = np.where(winners[:, None], want[idx], 0)
    check("grad of x.at[idx].set with repeated indices", grad, want_grad, 0, exact=True)


# ------------------------------------------------------------------------------------------------- 8. runtime


def test_async_dispatch_of_many_calls_then_block() -> None:
    x = np.linspace(-1, 1, 4096, dtype=np.float32)
    step = on_device(lambda v: v * 0.5 + 1.0, x)
    value = ts.device_put(x, PLATFORM)
    for _ in range(200):
        value = step(value)
    assert value.device == DEV, f"async dispatch: result on {value.device}"
    value.block_until_ready()
    assert value.is_ready(), "async dispatch: not ready after block_until_ready()"
    want = x.astype(np.float64)
    for _ in range(200):
        want = want * 0.5 + 1.0
    check("200 chained async calls of v*0.5+1", value, want, 1e-6)


def test_donation_on_device() -> None:
    w = np.arange(1024, dtype=np.float32)
    g = np.ones(1024, np.float32)
    exe = on_device(lambda w, g: w - 0.5 * g, w, g, donate_argnums=(0,))
    assert "tf.aliasing_output" in exe.module_text or "jax.buffer_donor" in exe.module_text, (
        "donate_argnums: the module text marks no donated input"
    )
    on = ts.device_put(w, PLATFORM)
    out = exe(on, ts.device_put(g, PLATFORM))
    check("donated w - 0.5 g", out, w.astype(np.float64) - 0.5, 0)
    assert on.is_deleted(), f"donate_argnums on {PLATFORM}: the donated input was not consumed"
    with pytest.raises((RuntimeError, ValueError)):
        exe(on, ts.device_put(g, PLATFORM))


def test_host_and_cpu_inputs_are_moved_to_the_device() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    exe = on_device(lambda v: tnp.sum(v, axis=0) * 2.0, x)
    for source, arg in (("numpy", x), ("cpu Array", ts.device_put(x, "cpu"))):
        out = exe(arg)
        check(f"program compiled for {PLATFORM} called with a {source} input", out, x.sum(0) * 2.0, 0, exact=True)
    assert exe.device == DEV, f"Compiled.device is {exe.device}"


_CACHE_SCRIPT = """
import json, os, numpy as np, tensorstage as ts
from tensorstage import numpy as tnp
platform = os.environ["TENSORSTAGE_TEST_GPU_PLATFORM"]
def body(x):
    for _ in range(10):
        x = tnp.tanh(x) * 1.5 + tnp.sum(x) * 1e-3
    return x
exe = ts.program(body).stage(np.ones(64, np.float32)).compile(device=platform)
out = exe(ts.device_put(np.linspace(-1, 1, 64, dtype=np.float32), platform))
print(json.dumps({"from_disk": exe.from_disk_cache, "device": str(out.device), "out": np.asarray(out).tolist()}))
"""


def test_persistent_executable_cache_across_processes(tmp_path: Path) -> None:
    env = {**os.environ, "TENSORSTAGE_CACHE_DIR": str(tmp_path), "TENSORSTAGE_TEST_GPU_PLATFORM": PLATFORM,
           "TF_CPP_MIN_LOG_LEVEL": "2"}
    env.pop("TENSORSTAGE_COMPILE_CACHE", None)
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # this process's GPU client already holds most memory
    runs = []
    for attempt in range(2):
        done = subprocess.run([sys.executable, "-c", _CACHE_SCRIPT], env=env, capture_output=True, text=True,
                              timeout=180)
        assert done.returncode == 0, f"cache subprocess {attempt} failed (rc {done.returncode}): {done.stderr[-2000:]}"
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[0]["from_disk"] is False, f"persistent cache: first process already loaded from disk: {runs[0]}"
    assert runs[1]["from_disk"] is True, (
        f"persistent cache on {PLATFORM}: second process did not load the executable from disk; entries: "
        f"{sorted(p.name for p in tmp_path.iterdir())}"
    )
    assert runs[0]["device"] == runs[1]["device"] == str(DEV), f"persistent cache: devices {runs}"
    assert runs[0]["out"] == runs[1]["out"], "persistent cache: the loaded executable computes another result"


def test_cost_and_memory_analysis_and_memory_stats() -> None:
    a = np.ones((128, 64), np.float32)
    exe = on_device(lambda a: tnp.tanh(a @ a.T), a)
    costs = exe.cost_analysis()
    assert isinstance(costs, dict) and costs, f"cost_analysis() on {PLATFORM}: {costs!r}"
    flops = costs.get("flops")
    assert flops is None or flops >= 2 * 128 * 128 * 64 * 0.9, f"cost_analysis() flops {flops} for a 128x64x128 dot"
    memory = exe.memory_analysis()
    argument_bytes = getattr(memory, "argument_size_in_bytes", None)
    assert argument_bytes is None or argument_bytes >= a.nbytes, f"memory_analysis(): {memory}"
    assert getattr(memory, "output_size_in_bytes", 128 * 128 * 4) >= 128 * 128 * 4, f"memory_analysis(): {memory}"
    stats_fn = getattr(DEV.xla, "memory_stats", None)
    stats = stats_fn() if stats_fn is not None else None
    if PLATFORM == "gpu":
        assert stats, f"device.memory_stats() on gpu: {stats!r}"
        assert stats.get("bytes_limit", 1) > 0 and "bytes_in_use" in stats, f"memory_stats(): {stats}"


# --------------------------------------------------------------------------------------------- 9. training


def _mlp_train(steps: int, platform: str) -> list[float]:
    rng = np.random.default_rng(17)
    x = rng.normal(size=(64, 10)).astype(np.float32)
    labels = (x[:, :3].sum(1) > 0).astype(np.int32) + (x[:, 3] > 0.5).astype(np.int32)
    k1, k2 = ts.random.split(ts.random.key(0))
    params = {"l1": ts.nn.dense(k1, 10, 32), "l2": ts.nn.dense(k2, 32, 3)}
    opt = ts.optim.sgd(0.3, momentum=0.9)

    def loss_fn(p: Any, x: Any, y: Any) -> Any:
        logits = p["l2"](ts.nn.relu(p["l1"](x)))
        return tnp.mean(ts.nn.softmax_cross_entropy_with_integer_labels(logits, y))

    def step(p: Any, state: Any, x: Any, y: Any) -> Any:
        loss, grads = ts.value_and_grad(loss_fn)(p, x, y)  # type: ignore[no-untyped-call]
        p, state = opt.update(grads, state, p)
        return p, state, loss

    state = ts.program(opt.init)(params)

    def put(tree: Any) -> Any:
        return ts.tree_map(lambda v: ts.device_put(v, platform), tree)

    params, state = put(params), put(state)
    exe = ts.program(step).stage(params, state, x, labels).compile(device=platform)
    xd, yd = ts.device_put(x, platform), ts.device_put(labels, platform)
    losses = []
    for _ in range(steps):
        params, state, loss = exe(params, state, xd, yd)
        losses.append(loss)
    assert losses[-1].device == ts.devices(platform)[0], f"training: loss on {losses[-1].device}"
    return [float(v) for v in losses]


def test_mlp_sgd_steps_match_cpu() -> None:
    on = _mlp_train(20, PLATFORM)
    ref = _mlp_train(20, "cpu")
    diff = max(abs(a - b) / max(abs(b), 1e-6) for a, b in zip(on, ref))
    tol = dot_tol(1e-4)
    assert diff <= tol, (
        f"MLP ts.nn + ts.optim.sgd 20 steps [f32]{_dot_note()}: losses on {PLATFORM} differ from cpu by max rel "
        f"{diff:.3g} (tol {tol:g}); {PLATFORM} {on[0]:.6f}->{on[-1]:.6f}, cpu {ref[0]:.6f}->{ref[-1]:.6f} (if "
        "test_f32_matmul_precision_* fail too, TF32 matmuls are the likely cause)"
    )
    assert on[-1] < 0.7 * on[0], f"MLP training [f32]: loss did not fall on {PLATFORM}: {on[0]:.4f} -> {on[-1]:.4f}"


# -------------------------------------------------------------------------------------------- 10. NaN / inf


def _nan_inf(x: Any, z: Any) -> dict[str, Any]:
    return {
        "max": tnp.max(x), "min": tnp.min(x), "max_axis": tnp.max(x.reshape(2, 4), axis=1),
        "maximum": tnp.maximum(x, 0.0), "minimum": tnp.minimum(x, 0.0), "sort": tnp.sort(x),
        "argsort": tnp.argsort(x), "div": tnp.asarray([1.0, -1.0, 0.0], ts.f32) / z, "nanmax": tnp.nanmax(x),
    }


def test_nan_and_inf_semantics() -> None:
    x = np.array([3.0, np.nan, -1.0, np.inf, 2.0, -np.inf, 0.5, np.nan], np.float32)
    z = np.zeros(3, np.float32)
    out = on_device(_nan_inf, x, z)(ts.device_put(x, PLATFORM), ts.device_put(z, PLATFORM))
    check("max with NaN propagates", out["max"], np.max(x), 0, exact=True)
    check("min with NaN propagates", out["min"], np.min(x), 0, exact=True)
    check("max axis=1 with NaN", out["max_axis"], np.max(x.reshape(2, 4), axis=1), 0, exact=True)
    check("maximum(x, 0) with NaN", out["maximum"], np.maximum(x, np.float32(0)), 0, exact=True)
    check("minimum(x, 0) with NaN", out["minimum"], np.minimum(x, np.float32(0)), 0, exact=True)
    check("sort puts NaN last", out["sort"], np.sort(x), 0, exact=True)
    check("argsort puts NaN last (stable)", out["argsort"], np.argsort(x, kind="stable"), 0, exact=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        check("[1, -1, 0] / 0 -> inf, -inf, nan", out["div"], np.array([1.0, -1.0, 0.0], np.float32) / z, 0,
              exact=True)
    check("nanmax ignores NaN", out["nanmax"], np.nanmax(x), 0, exact=True)
