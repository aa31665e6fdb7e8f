"""Device arrays, host transfer for every dtype, devices, async dispatch, and the no-jax guarantee."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

ALL_DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.uint32, np.bool_]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_host_round_trip_is_exact_for_every_dtype(dtype: type, rng: np.random.Generator) -> None:
    if dtype is np.bool_:
        host = rng.random((3, 5)) < 0.5
    elif np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        host = rng.integers(info.min, info.max, size=(3, 5), dtype=np.int64, endpoint=True).astype(dtype)
    else:
        host = rng.standard_normal((3, 5)).astype(dtype)
    array = ts.device_put(host)
    assert array.dtype == np.dtype(dtype) and array.shape == (3, 5)
    back = np.asarray(array)
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, host)


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i2", ">i4", ">i8", ">u4", ">f2"])
def test_big_endian_host_data_is_converted_not_misread(dtype: str, rng: np.random.Generator) -> None:
    """Non-native byte order is NumPy-legal input (e.g. from files): every entry point converts it."""
    native = rng.integers(-50, 50, size=(2, 3)).astype(np.dtype(dtype).newbyteorder("="))
    if native.dtype.kind == "u":
        native = np.abs(native)
    swapped = native.astype(dtype)
    expected = native * 2 + native[0]
    double_plus_row = ts.program(lambda a, row: a * 2 + row)
    for _ in range(2):  # the validating first call and the cached fast path
        np.testing.assert_array_equal(np.asarray(double_plus_row(swapped, swapped[0])), expected)
    np.testing.assert_array_equal(np.asarray(ts.asarray(swapped)), native)
    assert ts.asarray(swapped).dtype == native.dtype
    closure = ts.program(lambda a: a * 2 + swapped[0])  # a captured constant
    np.testing.assert_array_equal(np.asarray(closure(native)), expected)
    np.testing.assert_array_equal(np.asarray(tnp.add(swapped * 2, swapped[0])), expected)


@pytest.mark.parametrize(("value", "dtype"), [
    (0, np.int32), (-7, np.int32), (1.5, np.float32), (True, np.bool_), ([1, 2], np.int32), ([[1.0], [2.5]], np.float32),
    (np.float64(2.0), np.float64), (np.float32(3.0), np.float32), (np.int64(4), np.int64),
    (np.arange(3, dtype=np.int16), np.int16),
], ids=repr)
def test_asarray_gives_one_dtype_eagerly_and_staged(value: object, dtype: type) -> None:
    """Python ints and floats are i32 and f32 in both modes (a staged ``tnp.asarray(0)`` used to be i64, so a
    loop counter built from it was 64-bit); NumPy scalars and arrays keep their dtype."""
    staged = []

    def build(x: ts.Array) -> ts.Array:
        staged.append(tnp.asarray(value).dtype)
        return x

    ts.program(build).stage(np.zeros(1, np.float32))
    assert tnp.asarray(value).dtype == np.dtype(dtype)
    assert staged == [np.dtype(dtype)]


def test_computation_on_bf16_round_trips(rng: np.random.Generator) -> None:
    host = rng.standard_normal(8).astype(ml_dtypes.bfloat16)
    doubled = np.asarray(ts.device_put(host) * 2)
    np.testing.assert_array_equal(doubled, (host.astype(np.float32) * 2).astype(ml_dtypes.bfloat16))


def test_devices_and_device_put() -> None:
    (cpu, *_) = ts.devices()
    assert cpu.platform == "cpu" and str(cpu) == "cpu:0"
    x = ts.device_put(np.arange(3, dtype=np.float32), cpu)
    assert x.device == cpu
    assert ts.device_put(x, cpu) is x


def test_gpu_without_a_gpu_is_a_clear_error() -> None:
    try:
        ts.devices("gpu")
    except ts.DeviceUnavailableError as err:  # no plugin or no device: the message says which
        assert "gpu" in str(err).lower()
    else:
        pytest.skip("a GPU is available here")
    staged = ts.program(lambda x: x + 1.0).stage(ts.Spec((2,), ts.f32))
    with pytest.raises(ts.DeviceUnavailableError, match="gpu"):
        staged.compile(device="gpu")


def test_dispatch_is_asynchronous_and_block_until_ready_waits(rng: np.random.Generator) -> None:
    @ts.program
    def heavy(x: ts.Tensor[ts.f32, ts.Dim, ts.Dim]) -> ts.Tensor[ts.f32, ts.Dim, ts.Dim]:
        for _ in range(4):
            x = tnp.tanh(x @ x)
        return x

    x = ts.device_put(rng.standard_normal((256, 256)).astype(np.float32) / 16)
    heavy(x).block_until_ready()  # compile once
    y = heavy(x)
    assert y.block_until_ready() is y and y.is_ready()


def test_array_conversions(rng: np.random.Generator) -> None:
    x = ts.asarray(np.array([1.5, -2.0], np.float32))
    assert x.tolist() == [1.5, -2.0]
    assert float(ts.asarray(np.float32(2.5))) == 2.5
    assert "Array(" in repr(x) and "f32" in repr(x)
    assert ts.asarray([1.0, 2.0]).dtype == np.float32  # Python floats default to f32, as in JAX
    assert ts.asarray([1, 2]).dtype == np.int32
    with pytest.raises(TypeError, match="not supported"):
        ts.asarray(np.array(["a"]))


def test_import_never_imports_jax() -> None:
    code = "import sys, tensorstage, tensorstage.numpy; tensorstage.numpy.add(1.0, 2.0); print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
