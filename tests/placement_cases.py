"""Where calls run when Arrays sit on several devices: checks run on four CPU devices in a subprocess by
tests/test_placement.py (the pytest process's CPU client has one device). Calls follow their Arrays, as in JAX:
Arrays off the default device choose the device, Arrays on it move, two other devices are an error."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import tensorstage as ts
from tensorstage import numpy as tnp

try:
    from tests.spmd_cases import run_checks
except ModuleNotFoundError:  # run as a script: tests/ is on the path, not the repository root
    from spmd_cases import run_checks  # type: ignore[no-redef]

HERE = Path(__file__).parent
rng = np.random.default_rng(7)
CPU = ts.devices("cpu")


def _on(x: np.ndarray, k: int) -> ts.Array:
    return ts.device_put(x, CPU[k])


def check_eager_ops_run_where_their_array_is() -> None:
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = tnp.sin(_on(x, 1)) * 2.0
    assert y.device == CPU[1], y.device
    np.testing.assert_allclose(y.numpy(), np.sin(x) * 2.0, rtol=1e-6)
    assert tnp.sum(_on(x, 2), axis=0).device == CPU[2]


def check_creation_and_host_data_use_the_default_device() -> None:
    assert tnp.zeros((2, 3)).device == CPU[0] == ts.default_device()
    assert ts.device_put(np.ones(3)).device == CPU[0]
    assert ts.program(lambda a: a + 1)(np.ones(3, np.float32)).device == CPU[0]


def check_a_program_compiles_per_device_and_keeps_both() -> None:
    f = ts.program(lambda a, b: a @ b + 1.0)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((5, 2)).astype(np.float32)
    want = a @ b + 1.0
    for k in (1, 0, 3, 1, 0, 3):  # alternating: the fast path must never run one device's executable on another's
        out = f(_on(a, k), _on(b, k))
        assert out.device == CPU[k], (k, out.device)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)
    assert len(f._cache) == 3, len(f._cache)
    assert any("another device" in reason for reason in f.recompile_reasons), f.recompile_reasons


def check_default_device_arrays_and_host_data_move_to_the_other_device() -> None:
    f = ts.program(lambda a, b, c: a * b + c)
    a, b, c = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
    for _ in range(2):  # the second call takes the fast paths
        out = f(_on(a, 0), _on(b, 2), c)
        assert out.device == CPU[2], out.device
        np.testing.assert_allclose(out.numpy(), a * b + c, rtol=1e-6)
    tree = ts.program(lambda d: d["x"] - d["y"])({"x": _on(a, 3), "y": b})
    assert tree.device == CPU[3]


def check_arrays_on_two_other_devices_are_an_error() -> None:
    x = np.ones(3, np.float32)
    for call in (lambda: tnp.add(_on(x, 1), _on(x, 2)), lambda: ts.program(lambda a, b: a - b)(_on(x, 1), _on(x, 3))):
        try:
            call()
        except ValueError as exc:
            assert "several devices" in str(exc) and "cpu:1" in str(exc), exc
        else:
            raise AssertionError("no error for arrays on cpu:1 and another non-default device")


def check_a_program_with_a_device_moves_its_arguments() -> None:
    f = ts.program(device=CPU[2])(lambda a: a * 3.0)
    x = rng.standard_normal(4).astype(np.float32)
    for k in (0, 1, 2):
        out = f(_on(x, k))
        assert out.device == CPU[2], out.device
        np.testing.assert_allclose(out.numpy(), x * 3.0, rtol=1e-6)
    compiled = ts.program(lambda a: a - 1.0).stage(x).compile(CPU[3])
    assert compiled(_on(x, 1)).device == CPU[3]


def check_transforms_follow_their_arrays() -> None:
    w = rng.standard_normal(5).astype(np.float32)
    loss = ts.program(ts.grad(lambda v: tnp.sum(tnp.tanh(v) ** 2)))
    g = loss(_on(w, 1))
    assert g.device == CPU[1]
    np.testing.assert_allclose(g.numpy(), 2 * np.tanh(w) * (1 - np.tanh(w) ** 2), rtol=1e-5)
    batched = ts.program(ts.vmap(lambda r: tnp.max(r)))(_on(np.stack([w, -w]), 3))
    assert batched.device == CPU[3]
    np.testing.assert_allclose(batched.numpy(), [w.max(), (-w).max()])


def check_random_draws_follow_their_key() -> None:
    key = ts.device_put(ts.random.key(3), CPU[1])
    here = ts.random.normal(key, (4,))
    assert here.device == CPU[1]
    np.testing.assert_array_equal(here.numpy(), ts.random.normal(ts.random.key(3), (4,)).numpy())


def check_pmap_results_go_to_the_default_device() -> None:
    split = ts.pmap(lambda r: r * 2.0)(np.arange(8, dtype=np.float32).reshape(4, 2))
    total = tnp.sum(split)
    assert total.device == CPU[0]
    assert float(total) == 56.0


if __name__ == "__main__":
    run_checks(globals())
