"""Host callbacks: ``ts.pure_callback``, ``ts.io_callback``, ``ts.debug.print`` and ``ts.debug.callback`` inside
compiled programs, under control flow and every transform, and their errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import backend, compile_cache
from tensorstage.staging.primitives.callback import CallbackError

from conftest import PLATFORM

F32 = np.float32


def vec(n: int) -> ts.Spec:
    return ts.Spec((n,), ts.f32)


@pytest.fixture
def calls() -> Iterator[list[Any]]:
    yield []


def recorder(log: list[Any]) -> Any:
    def record(*values: Any) -> None:
        log.append(tuple(np.array(v) for v in values))

    return record


# --------------------------------------------------------------------------------------------------- values


def test_pure_callback_computes_on_the_host_staged_and_eager(rng: np.random.Generator) -> None:
    x = rng.standard_normal(5).astype(F32)
    staged = ts.program(lambda v: ts.pure_callback(np.sinh, vec(5), v * 2.0) + 1.0)
    np.testing.assert_allclose(staged(x), np.sinh(x * 2) + 1, rtol=1e-6)
    eager = ts.pure_callback(np.sinh, vec(5), x)
    assert isinstance(eager, ts.Array)
    np.testing.assert_allclose(eager, np.sinh(x), rtol=1e-6)


def test_pytrees_keywords_and_static_leaves_reach_the_callback(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal(3).astype(F32), rng.standard_normal(3).astype(F32)
    seen: list[Any] = []

    def host(pair: dict[str, Any], scale: Any, *, mode: str) -> dict[str, Any]:
        seen.append((type(pair["a"]), mode))
        return {"sum": pair["a"] + pair["b"], "prod": (pair["a"] * pair["b"] * scale).astype(F32)}

    specs = {"sum": vec(3), "prod": vec(3)}
    out = ts.program(lambda p, q: ts.pure_callback(host, specs, {"a": p, "b": q}, 2.0, mode="x"))(a, b)
    np.testing.assert_allclose(out["sum"], a + b, rtol=1e-6)
    np.testing.assert_allclose(out["prod"], a * b * 2, rtol=1e-6)
    assert seen == [(np.ndarray, "x")]


def test_debug_print_formats_the_run_values(capsys: pytest.CaptureFixture[str]) -> None:
    def f(x: Any) -> Any:
        ts.debug.print("x={} total={total:.2f}", x, total=x.sum())
        return x * 2

    ts.program(f)(np.arange(3, dtype=F32))
    assert capsys.readouterr().out == "x=[0. 1. 2.] total=3.00\n"


def test_every_callback_runs_and_data_orders_them(capsys: pytest.CaptureFixture[str]) -> None:
    def f(x: Any) -> Any:
        for i in range(12):
            ts.debug.print(f"line {i}")
        seen = ts.io_callback(lambda v: (print("first"), v)[1], ts.Spec((), ts.f32), x)
        ts.debug.print("then {}", seen)  # reads the first callback's result: runs after it
        return x

    ts.program(f)(F32(1))
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines[i] for i in range(len(lines)) if lines[i].startswith("line")) == sorted(
        f"line {i}" for i in range(12)
    )
    assert lines.index("first") < lines.index("then 1.0")


def test_effects_are_never_dropped_and_run_once_per_call(calls: list[Any]) -> None:
    def f(x: Any) -> Any:
        ts.debug.callback(recorder(calls), x)  # no result
        ts.io_callback(lambda v: (calls.append("io"), v)[1], vec(2), x)  # result unused
        return x + 1

    program = ts.program(f)
    for _ in range(3):  # the second and third take the validated fast path
        program(np.ones(2, F32))
    assert len(calls) == 6 and calls.count("io") == 3


def test_io_callback_results_feed_the_program() -> None:
    counter = iter(range(100))
    draw = ts.program(lambda x: x + ts.io_callback(lambda: np.float32(next(counter)), ts.Spec((), ts.f32)))
    assert [float(draw(F32(0.5))) for _ in range(3)] == [0.5, 1.5, 2.5]


# ------------------------------------------------------------------------------------------------ control flow


def test_scan_while_and_cond_bodies_call_back_per_step(calls: list[Any]) -> None:
    def body(c: Any, x: Any) -> Any:
        ts.debug.callback(recorder(calls), c, x)
        return c + x, c

    xs = np.arange(1, 5, dtype=F32)
    ts.program(lambda v: ts.scan(body, tnp.zeros((), tnp.float32), v))(xs)
    assert [(float(c), float(x)) for c, x in calls] == [(0, 1), (1, 2), (3, 3), (6, 4)]
    calls.clear()
    loop = ts.program(lambda n: ts.while_loop(lambda i: i < n, lambda i: (ts.debug.callback(recorder(calls), i), i + 1)[1], 0))
    assert int(loop(4)) == 4 and [int(c[0]) for c in calls] == [0, 1, 2, 3]
    calls.clear()
    branch = ts.program(lambda p, v: ts.cond(p, lambda u: (ts.debug.callback(recorder(calls), u), u)[1], lambda u: -u, v))
    branch(False, F32(2))
    assert calls == []
    branch(True, F32(3))
    assert [float(c[0]) for c in calls] == [3.0]


# ---------------------------------------------------------------------------------------------------- vmap


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_pure_callback_under_nested_vmap(method: str, rng: np.random.Generator) -> None:
    shapes: list[tuple[tuple[int, ...], ...]] = []

    def host(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        shapes.append((a.shape, b.shape))
        return np.asarray(a * b + 1, dtype=F32)

    inner = ts.vmap(lambda a, b: ts.pure_callback(host, vec(3), a, b, vmap_method=method), in_axes=(0, None))
    f = ts.vmap(inner, in_axes=(None, 1))
    a, b = rng.standard_normal((4, 3)).astype(F32), rng.standard_normal((3, 5)).astype(F32)
    np.testing.assert_allclose(f(a, b), a[None] * b.T[:, None] + 1, rtol=1e-6)
    expected = {
        "sequential": [((3,), (3,))] * 20,
        "expand_dims": [((1, 4, 3), (5, 1, 3))],
        "broadcast_all": [((5, 4, 3), (5, 4, 3))],
    }[method]
    assert shapes == expected


def test_vmap_of_debug_callback_calls_once_per_member_and_unbatched_once(calls: list[Any]) -> None:
    rows = np.arange(6, dtype=F32).reshape(3, 2)
    ts.vmap(lambda r, c: (ts.debug.callback(recorder(calls), r, c), r)[1], in_axes=(0, None))(rows, F32(7))
    assert [(c[0].tolist(), float(c[1])) for c in calls] == [([0, 1], 7), ([2, 3], 7), ([4, 5], 7)]
    calls.clear()
    ts.vmap(lambda r, c: (ts.debug.callback(recorder(calls), c), r)[1], in_axes=(0, None))(rows, F32(7))
    assert len(calls) == 1


def test_vmap_of_an_empty_batch_never_calls(calls: list[Any]) -> None:
    f = ts.vmap(lambda v: ts.pure_callback(lambda u: (calls.append(1), u)[1], vec(2), v, vmap_method="sequential"))
    assert f(np.zeros((0, 2), F32)).shape == (0, 2) and calls == []


def test_vmap_without_a_method_names_the_choice() -> None:
    with pytest.raises(ts.TransformError, match="vmap_method") as info:
        ts.vmap(lambda v: ts.pure_callback(np.cos, vec(2), v))(np.ones((3, 2), F32))
    assert "test_callbacks.py" in str(info.value)


# ----------------------------------------------------------------------------------------------- derivatives


def test_grad_runs_debug_callbacks_once_on_primal_values(calls: list[Any], rng: np.random.Generator) -> None:
    x = rng.standard_normal(3).astype(F32)

    def f(v: Any) -> Any:
        ts.debug.callback(recorder(calls), v)
        return tnp.sin(v).sum()

    np.testing.assert_allclose(ts.grad(f)(x), np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(ts.jvp(f, (x,), (np.ones(3, F32),))[1], np.cos(x).sum(), rtol=1e-5)
    np.testing.assert_allclose(ts.grad(ts.checkpoint(f))(x), np.cos(x), rtol=1e-6)
    assert len(calls) == 3 and all(np.array_equal(c[0], x) for c in calls)


def test_linearize_and_vjp_functions_do_not_repeat_effects(calls: list[Any]) -> None:
    def f(v: Any) -> Any:
        ts.debug.callback(recorder(calls), v)
        return v * v

    x = np.arange(3, dtype=F32)
    _, lin = ts.linearize(f, x)
    _, pull = ts.vjp(f, x)
    assert len(calls) == 2
    np.testing.assert_allclose(lin(np.ones(3, F32)), 2 * x)
    np.testing.assert_allclose(pull(np.ones(3, F32))[0], 2 * x)
    assert len(calls) == 2


def test_grad_of_scan_calls_back_once_per_step(calls: list[Any]) -> None:
    def body(c: Any, x: Any) -> Any:
        ts.debug.callback(recorder(calls), x)
        return c * x, c

    xs = np.arange(1, 5, dtype=F32)
    g = ts.grad(lambda v: ts.scan(body, tnp.ones((), tnp.float32), v)[0])(xs)
    np.testing.assert_allclose(g, np.prod(xs) / xs, rtol=1e-6)
    assert [float(c[0]) for c in calls] == [1, 2, 3, 4]


def test_pure_callback_has_no_derivative_but_custom_jvp_gives_one() -> None:
    with pytest.raises(ts.TransformError, match="pure_callback sin .*custom_jvp") as info:
        ts.grad(lambda v: ts.pure_callback(np.sin, ts.Spec((), ts.f32), v))(F32(1))
    assert "test_callbacks.py" in str(info.value)

    @ts.custom_jvp
    def host_sin(v: Any) -> Any:
        return ts.pure_callback(np.sin, ts.Spec((), ts.f32), v)

    @host_sin.defjvp
    def _(primals: Any, tangents: Any) -> Any:
        (v,), (t,) = primals, tangents
        return host_sin(v), tnp.cos(v) * t

    np.testing.assert_allclose(ts.grad(host_sin)(F32(0.5)), np.cos(0.5), rtol=1e-6)
    # Not differentiated: the callback's value passes through stop_gradient'ed paths untouched.
    value = ts.grad(lambda v: v * ts.pure_callback(np.sin, ts.Spec((), ts.f32), ts.stop_gradient(v)))(F32(0.5))
    np.testing.assert_allclose(value, np.sin(0.5), rtol=1e-6)


# ---------------------------------------------------------------------------------------------------- errors


def test_results_of_other_types_than_declared_raise_with_the_staging_line() -> None:
    program = ts.program(lambda v: ts.pure_callback(lambda u: u.astype(np.float64), vec(3), v))
    with pytest.raises(CallbackError, match=r"returned float64\[3\] for result 0.*declare float32\[3\]") as info:
        program(np.ones(3, F32))
    assert "test_callbacks.py" in str(info.value)
    with pytest.raises(CallbackError, match=r"returned a value structured \(\*, \*\), but result_shape_dtypes is \[\*\]"):
        ts.program(lambda v: ts.pure_callback(lambda u: (u, u), [vec(3)], v))(np.ones(3, F32))


def test_a_callbacks_exception_reaches_the_caller_and_the_program_still_works() -> None:
    def host(v: np.ndarray) -> np.ndarray:
        if v[0] < 0:
            raise ValueError("negative input")
        return v

    program = ts.program(lambda v: ts.pure_callback(host, vec(2), v) * 2.0)
    with pytest.raises(ValueError, match="negative input") as info:
        program(np.array([-1, 1], F32))
    assert any("host callback pure_callback host" in note for note in getattr(info.value, "__notes__", []))
    np.testing.assert_allclose(program(np.array([1, 2], F32)), [2, 4])


def test_bad_arguments_are_refused_when_staging() -> None:
    with pytest.raises(ValueError, match="does not fit the arguments"):
        ts.program(lambda v: ts.debug.print("{} {}", v))(F32(1))
    with pytest.raises(TypeError, match=r"need \.shape and \.dtype"):
        ts.program(lambda v: ts.pure_callback(np.sin, "f32", v))(F32(1))
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        ts.pure_callback(np.sin, vec(1), np.ones(1, F32), vmap_method="loop")
    with pytest.raises(TypeError, match="dtype"):
        ts.pure_callback(np.sin, ts.Spec((1,), np.dtype("U3")), np.ones(1, F32))


def test_a_gpu_program_calls_the_cuda_plugins_handler() -> None:
    staged = ts.program(lambda v: ts.pure_callback(np.sin, vec(2), v)).stage(np.ones(2, F32))
    assert 'call_target_name = "xla_ffi_python_gpu_callback"' in staged.stablehlo("gpu")
    assert 'call_target_name = "xla_ffi_python_cpu_callback"' in staged.stablehlo("cpu")


@pytest.mark.skipif(PLATFORM != "gpu", reason="needs a GPU client")
def test_a_gpu_without_the_callback_handlers_refuses_with_the_callbacks_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "gpu_host_callbacks_unavailable", lambda: "no handlers here")
    staged = ts.program(lambda v: ts.pure_callback(np.cos, vec(2), v)).stage(np.ones(2, F32))
    with pytest.raises(NotImplementedError, match=r"pure_callback cos \(staged at .*test_callbacks.py:\d+\): no handlers"):
        staged.compile("gpu")


def test_a_program_with_callbacks_never_uses_the_disk_cache(tmp_path: Path, calls: list[Any]) -> None:
    saved = compile_cache._active
    compile_cache.enable(str(tmp_path))
    try:
        staged = ts.program(lambda v: (ts.debug.callback(recorder(calls), v), v)[1]).stage(np.ones(2, F32))
        first, second = staged.compile("cpu"), staged.compile("cpu")
        assert not first.from_disk_cache and not second.from_disk_cache
        second(np.ones(2, F32))
        assert len(calls) == 1 and not any(tmp_path.iterdir())
    finally:
        compile_cache._active = saved


def test_pmap_calls_back_on_every_device_and_refuses_ordered_callbacks(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import json
        import numpy as np, tensorstage as ts
        seen = []
        f = ts.pmap(lambda x: (ts.debug.callback(lambda v: seen.append(v.tolist()), x), x * 2)[1])
        out = f(np.arange(8, dtype=np.float32).reshape(4, 2))
        g = ts.pmap(lambda x: ts.pure_callback(lambda v: v + 1, ts.Spec((2,), ts.f32), x))
        try:
            ts.pmap(lambda x: (ts.debug.print("{}", x, ordered=True), x)[1])(np.ones((4, 2), np.float32))
            refused = ""
        except NotImplementedError as exc:
            refused = str(exc)
        print(json.dumps([sorted(seen), np.asarray(out).tolist(), np.asarray(g(np.ones((4, 2), np.float32))).tolist(),
                          refused]))
        """
    )
    env = {**os.environ, "TENSORSTAGE_CPU_DEVICES": "4", "TENSORSTAGE_DEFAULT_DEVICE": "cpu"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen, out, plus_one, refused = json.loads(done.stdout.strip().splitlines()[-1])
    assert "ordered callbacks are not supported in programs that run on several devices (pmap, shard_map)" in refused
    assert seen == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert out == [[0, 2], [4, 6], [8, 10], [12, 14]] and plus_one == [[2, 2]] * 4


def test_effects_in_nested_graphs_survive_unused_results(calls: list[Any]) -> None:
    def body(c: Any, x: Any) -> Any:
        ts.debug.callback(recorder(calls), x)
        return c + x, x

    def f(v: Any) -> Any:
        ts.scan(body, tnp.zeros((), tnp.float32), v)  # results unused
        ts.cond(v[0] > 0, lambda u: (ts.debug.callback(recorder(calls), u), u)[1], lambda u: u, v)
        ts.checkpoint(lambda u: (ts.debug.callback(recorder(calls), u), u * 2)[1])(v)
        return v.sum()

    ts.program(f)(np.arange(1, 4, dtype=F32))
    assert len(calls) == 3 + 1 + 1


def test_value_and_grad_of_a_checkpoint_runs_its_effect_once(calls: list[Any]) -> None:
    f = ts.checkpoint(lambda v: (ts.debug.callback(recorder(calls), v), tnp.sin(v).sum())[1])
    value, grad = ts.value_and_grad(f)(np.arange(3, dtype=F32))
    np.testing.assert_allclose(grad, np.cos(np.arange(3)), rtol=1e-6)
    assert len(calls) == 1
