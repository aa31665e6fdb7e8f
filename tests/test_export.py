"""ts.export: programs exported, serialized, loaded in another process and called eagerly, inside programs and under
vmap; against NumPy float64 references on fresh random inputs, and every refusal with its message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import lapack

f32, f64 = np.float32, np.float64


def _model(params: dict[str, Any], x: Any) -> tuple[Any, Any]:
    h = tnp.tanh(x @ params["w"] + params["b"])
    return h, tnp.sum(h * h, axis=1)


def _model_reference(params: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = np.tanh(x.astype(f64) @ params["w"].astype(f64) + params["b"])
    return h, np.sum(h * h, axis=1)


def _specs() -> tuple[dict[str, ts.Spec], ts.Spec]:
    return {"w": ts.Spec((4, 3), ts.f32), "b": ts.Spec((3,), ts.f32)}, ts.Spec((5, 4), ts.f32)


def _arrays(rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray]:
    params = {"w": rng.standard_normal((4, 3)).astype(f32), "b": rng.standard_normal(3).astype(f32)}
    return params, rng.standard_normal((5, 4)).astype(f32)


def test_round_trip_in_process_eager_in_programs_and_under_vmap(rng: np.random.Generator) -> None:
    exported = ts.export.export(_model)(*_specs())
    assert exported.platforms == (ts.default_device().platform,)
    assert [s.shape for s in exported.in_avals] == [(3,), (4, 3), (5, 4)]  # dict leaves in key order
    assert [(s.shape, s.dtype) for s in exported.out_avals] == [((5, 3), f32), ((5,), f32)]
    loaded = ts.export.deserialize(exported.serialize())
    assert repr(loaded) == repr(exported) and loaded.in_tree == exported.in_tree
    assert loaded.mlir_module() == exported.mlir_module()
    params, x = _arrays(rng)
    want_h, want_n = _model_reference(params, x)
    for run in (exported, loaded):
        h, n = run.call(params, x)
        np.testing.assert_allclose(np.asarray(h), want_h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(n), want_n, rtol=1e-5, atol=1e-6)

    # Inside another program, twice: the module is embedded once and called twice.
    twice = ts.program(lambda p, x: loaded.call(p, loaded.call(p, x)[0] @ p["w"].T)[1] * 2.0)
    assert twice.stage(params, x).stablehlo().count("func.func private") == 1
    h1, _ = _model_reference(params, x)
    _, n2 = _model_reference(params, (h1 @ params["w"].T.astype(f64)).astype(f32))
    np.testing.assert_allclose(np.asarray(twice(params, x)), 2 * n2, rtol=1e-4, atol=1e-5)

    # vmap: one call per member (the params unbatched).
    xs = rng.standard_normal((3, 5, 4)).astype(f32)
    hs, ns = ts.vmap(lambda x: loaded.call(params, x))(xs)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(ns)[i], _model_reference(params, xs[i])[1], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(hs)[i], _model_reference(params, xs[i])[0], rtol=1e-5, atol=1e-6)


def test_exports_nest_and_python_numbers_take_the_exported_dtype(rng: np.random.Generator) -> None:
    scale = ts.export.deserialize(
        ts.export.export(lambda v, s: v * s)(ts.Spec((3,), ts.f64), ts.Spec((), ts.f64)).serialize()
    )
    # An export whose function calls another export: its module carries the inner one as its own function.
    outer = ts.export.export(lambda v: scale.call(tnp.exp(v), 0.5) + scale.call(v, 3))(ts.Spec((3,), ts.f64))
    again = ts.export.deserialize(outer.serialize())
    v = rng.standard_normal(3)
    want = 0.5 * np.exp(v) + 3 * v
    np.testing.assert_allclose(np.asarray(again.call(v)), want, rtol=1e-14)
    # Called inside a program beside the inner export itself: the symbols do not collide.
    both = ts.program(lambda v: again.call(v) - scale.call(v, 2.0))
    np.testing.assert_allclose(np.asarray(both(v)), want - 2 * v, rtol=1e-13)
    assert np.asarray(scale.call(v, 2)).dtype == f64  # the Python int became the exported f64


def test_another_process_runs_the_artifact_without_the_function(tmp_path: Path, rng: np.random.Generator) -> None:
    def solve_spd(a: Any, b: Any) -> Any:
        return tnp.linalg.solve(a @ a.T + 4.0 * tnp.eye(4, dtype=tnp.float64), b)  # LAPACK on CPU when SciPy is there

    blob = tmp_path / "solve.tsx"
    blob.write_bytes(ts.export.export(solve_spd)(ts.Spec((4, 4), ts.f64), ts.Spec((4, 2), ts.f64)).serialize())
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    script = textwrap.dedent(f"""
        import json, numpy as np, tensorstage as ts
        loaded = ts.export.deserialize(open({str(blob)!r}, "rb").read())
        out = loaded.call(np.load({str(tmp_path / "a.npy")!r}), np.load({str(tmp_path / "b.npy")!r}))
        print(json.dumps(np.asarray(out).tolist()))
    """)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    got = np.array(json.loads(done.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(got, np.linalg.solve(a @ a.T + 4 * np.eye(4), b), rtol=1e-12)
    if lapack.available():
        assert '"lapack_' in ts.export.deserialize(blob.read_bytes()).mlir_module()


def test_refusals_name_the_op_types_and_line() -> None:
    exported = ts.export.export(_model)(*_specs())
    params, x = _arrays(np.random.default_rng(0))
    with pytest.raises(ts.ShapeError, match=r"exported_call: argument 2 of _model must be f32\[5, 4\] .* got "
                                            r"f32\[6, 4\]") as info:
        exported.call(params, np.zeros((6, 4), f32))
    assert info.value.loc is not None and Path(info.value.loc.file).name == "test_export.py"
    with pytest.raises(TypeError, match="exported for arguments structured"):
        exported.call((params["w"], params["b"]), x)
    with pytest.raises(ts.TransformError, match="_model is an exported program, which carries no derivative"):
        ts.grad(lambda x: exported.call(params, x)[1].sum())(x)
    # A derivative that never flows through the call is fine: the call is then a constant.
    assert np.asarray(ts.grad(lambda w: (w * ts.stop_gradient(exported.call(params, x)[1])).sum())(f32(1))) > 0
    with pytest.raises(ts.TransformError, match=r"calls host callbacks \(debug.print|calls host callbacks"):
        ts.export.export(lambda v: (ts.debug.print("v {}", v), v)[1])(ts.Spec((2,), ts.f32))
    with pytest.raises(TypeError, match="argument leaf 1 is float 2.0; exported programs take arrays or ts.Spec"):
        ts.export.export(lambda v, s: v * s)(ts.Spec((2,), ts.f32), 2.0)
    with pytest.raises(TypeError, match=r"Point\(\*, \*\) has a namedtuple container, which has no portable form"):
        from collections import namedtuple

        point = namedtuple("Point", "x y")
        ts.export.export(lambda p: p.x + p.y)(point(ts.Spec((2,), ts.f32), ts.Spec((2,), ts.f32)))
    with pytest.raises(ValueError, match="unknown platform 'tpu'"):
        ts.export.export(_model, platforms=("cpu", "tpu"))
    # Exported for the CPU only: lowering a caller for the GPU says so.
    caller = ts.program(lambda p, x: exported.call(p, x)[1])
    with pytest.raises(ts.TransformError, match=r"_model was exported for cpu, not gpu: export it with "
                                                r"platforms=\('cpu', 'gpu'\)"):
        caller.stage(params, x).stablehlo("gpu")
    both = ts.export.export(_model, platforms=("cpu", "gpu"))(*_specs())
    assert both.platforms == ("cpu", "gpu") and "func.func public @main" in both.mlir_module("gpu")
    assert "func.call" in ts.program(lambda p, x: both.call(p, x)[1]).stage(params, x).stablehlo("gpu")


@pytest.mark.parametrize("payload, message", [
    (b"not an export", "not a tensorstage export"),
    (b"tensorstage.export\n{", "the payload is not valid"),
    (b'tensorstage.export\n{"version": 99}', "serialization version 99, this tensorstage reads 1"),
])
def test_bad_payloads_are_value_errors(payload: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ts.export.deserialize(payload)


def test_tampered_payloads_are_value_errors() -> None:
    good = json.loads(bytes(ts.export.export(lambda v: v + 1)(ts.Spec((2,), ts.f32)).serialize())[19:])
    for key, value, message in [
        ("modules", {"cpu": "module @x {}"}, "not tensorstage modules"),
        ("in_avals", [[[2], "f128", [None]]], "unknown dtype 'f128'"),
        ("in_avals", [[[2, 1], "f32", [None]]], "bad dim names"),
        ("out_tree", {"set": []}, "bad structure"),
        ("in_tree", {"tuple": ["leaf", "leaf"]}, "structures and types disagree"),
    ]:
        with pytest.raises(ValueError, match=message):
            ts.export.deserialize(b"tensorstage.export\n" + json.dumps({**good, key: value}).encode())
