"""Ordered host callbacks (``ordered=True`` on ``io_callback``, ``debug.callback``, ``debug.print``) run in
the order they were staged, whatever data they read, step by step through loops and branches, once under
transforms, and in call order across calls; ``ts.effects_barrier`` waits for every run's callbacks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

F32 = np.float32
Log = list[tuple[str, float]]


def tagger(log: Log, tag: str) -> Callable[[Any], None]:
    def record(value: Any) -> None:
        log.append((tag, float(np.asarray(value).sum())))

    return record


def note(log: Log, tag: str, value: Any) -> None:
    ts.debug.callback(tagger(log, tag), value, ordered=True)


def heavy(x: Any) -> Any:
    """A value that takes a while to compute: an unordered print of it tends to come after cheaper ones."""
    for _ in range(6):
        x = tnp.tanh(x @ x.T) @ x
    return tnp.sum(x)


def test_staging_order_beats_data_order(rng: np.random.Generator) -> None:
    log: Log = []

    def f(x: Any) -> Any:
        note(log, "late", heavy(x))
        note(log, "early", x[0, 0])
        note(log, "late again", heavy(x * 2.0))
        note(log, "early again", x[1, 1])
        return x

    program = ts.program(f)
    assert "!stablehlo.token" in program.stage(ts.Spec((64, 64), ts.f32)).stablehlo()
    for _ in range(3):
        x = rng.standard_normal((64, 64)).astype(F32) * 0.1
        program(x)
        assert [tag for tag, _ in log] == ["late", "early", "late again", "early again"]
        assert log[1][1] == pytest.approx(float(x[0, 0]))
        log.clear()


def test_loops_and_branches_keep_the_order_step_by_step(rng: np.random.Generator) -> None:
    log: Log = []

    def f(x: Any) -> Any:
        note(log, "start", x)

        def outer(c: Any, row: Any) -> tuple[Any, Any]:
            note(log, "row", row)

            def inner(d: Any, v: Any) -> tuple[Any, Any]:
                note(log, "element", v)
                return d + v, v

            total, _ = ts.scan(inner, c * 0.0, row)
            return c + total, total

        total, sums = ts.scan(outer, x[0, 0] * 0.0, x)
        note(log, "after scan", total)
        branch = ts.switch(tnp.argmax(sums), [
            lambda s: (note(log, "branch 0", s), s)[1],
            lambda s: s * 2.0,  # no effect: hands the token through
            lambda s: (note(log, "branch 2", s), -s)[1],
        ], sums)

        def body(i: Any) -> Any:
            note(log, "while", i)
            return i + 1

        count = ts.while_loop(lambda i: i < 2, body, 0)
        ts.fori_loop(0, 2, lambda i, c: (note(log, "fori", i), c)[1], 0.0)
        note(log, "end", branch)
        return branch, count

    x = rng.standard_normal((3, 2)).astype(F32)
    ts.program(f)(x)
    sums = x.sum(axis=1)
    picked = int(np.argmax(sums))
    expected = [("start", x.sum())]
    for row in x:
        expected += [("row", row.sum())] + [("element", v) for v in row]
    expected += [("after scan", x.sum())]
    expected += {0: [("branch 0", sums.sum())], 1: [], 2: [("branch 2", sums.sum())]}[picked]
    expected += [("while", 0), ("while", 1), ("fori", 0), ("fori", 1)]
    want_end = {0: sums, 1: sums * 2, 2: -sums}[picked].sum()
    expected += [("end", want_end)]
    assert [tag for tag, _ in log] == [tag for tag, _ in expected]
    np.testing.assert_allclose([v for _, v in log], [v for _, v in expected], rtol=1e-5, atol=1e-6)


def test_calls_of_programs_with_ordered_callbacks_run_in_call_order() -> None:
    log: Log = []
    first = ts.program(lambda v: (note(log, "first", heavy(v)), v)[1])
    second = ts.program(lambda v: (note(log, "second", v[0, 0]), v)[1])
    x = np.full((64, 64), 0.01, F32)
    for _ in range(4):
        first(x)
        second(x)
    assert [tag for tag, _ in log] == ["first", "second"] * 4


def test_transforms_run_ordered_effects_once_in_order(rng: np.random.Generator) -> None:
    log: Log = []

    def f(w: Any) -> Any:
        note(log, "in", w)
        y = tnp.sum(tnp.sin(w) ** 2)
        note(log, "out", y)
        return y

    w = rng.standard_normal(4).astype(F32)
    value, grad = ts.value_and_grad(f)(w)
    np.testing.assert_allclose(grad, 2 * np.sin(w) * np.cos(w), rtol=1e-5)
    assert [tag for tag, _ in log] == ["in", "out"]
    np.testing.assert_allclose(log[1][1], float(value), rtol=1e-6)
    log.clear()
    ts.jvp(f, (w,), (np.ones(4, F32),))
    ts.grad(ts.checkpoint(f))(w)
    assert [tag for tag, _ in log] == ["in", "out"] * 2
    log.clear()

    batch = rng.standard_normal((3, 4)).astype(F32)
    ts.vmap(f)(batch)
    # Each ordered callback runs for every member (in member order) before the next one starts.
    assert [tag for tag, _ in log] == ["in"] * 3 + ["out"] * 3
    np.testing.assert_allclose([v for _, v in log[:3]], batch.sum(axis=1), rtol=1e-5)


def test_ordered_io_callback_results_feed_the_program(rng: np.random.Generator) -> None:
    counter = [0]

    def next_count(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        counter[0] += 1
        return np.asarray(x * counter[0], F32)

    spec = ts.Spec((3,), ts.f32)
    program = ts.program(lambda v: ts.io_callback(next_count, spec, v, ordered=True)
                         - ts.io_callback(next_count, spec, v, ordered=True))
    x = rng.standard_normal(3).astype(F32)
    np.testing.assert_allclose(program(x), x * 1 - x * 2, rtol=1e-6)
    np.testing.assert_allclose(program(x), x * 3 - x * 4, rtol=1e-6)
    # Eager, it just runs now.
    np.testing.assert_allclose(ts.io_callback(next_count, spec, x, ordered=True), x * 5, rtol=1e-6)


def test_an_ordered_callback_in_a_while_condition_is_refused_clearly() -> None:
    def cond(i: Any) -> Any:
        ts.debug.print("i = {}", i, ordered=True)
        return i < 3

    staged = ts.program(lambda n: ts.while_loop(cond, lambda i: i + 1, n)).stage(np.int32(0))
    with pytest.raises(NotImplementedError, match=r"ordered callback in cond_fun.*\n  at .*test_callbacks_ordered"):
        staged.stablehlo()


def test_an_ordered_callbacks_exception_reaches_the_caller(capsys: pytest.CaptureFixture[str]) -> None:
    def check(v: np.ndarray[Any, Any]) -> None:
        if v < 0:
            raise ValueError("negative")

    def f(v: Any) -> Any:
        ts.debug.print("before {}", v, ordered=True)
        ts.debug.callback(check, v, ordered=True)
        return v * 2.0

    program = ts.program(f)
    with pytest.raises(ValueError, match="negative"):
        program(F32(-1))
    assert float(program(F32(2))) == 4.0
    assert capsys.readouterr().out.splitlines()[-1] == "before 2.0"



def test_effects_barrier_waits_for_every_run_and_keeps_a_bounded_list() -> None:
    from tensorstage.lowering import runtime

    log: Log = []
    program = ts.program(lambda v: (ts.debug.callback(tagger(log, "run"), v), v * 2.0)[1])
    for i in range(300):
        program(F32(i))
    assert len(runtime._PENDING_EFFECTS) <= runtime._PENDING_LIMIT
    ts.effects_barrier()
    assert not runtime._PENDING_EFFECTS
    assert sorted(v for _, v in log) == list(range(300))


def test_each_nested_graph_is_asked_about_effects_once() -> None:
    """Lowering asks "does this loop or branch hold ordered effects?" at every level of nesting: each graph answers
    each such question once, so deep nesting stays linear, and the answers still find a print six loops down."""
    from tensorstage.staging.primitive import graph_holds

    def f(x: Any) -> Any:
        def nest(depth: int, v: Any) -> Any:
            if depth == 0:
                ts.debug.print("deep {}", tnp.sum(v), ordered=True)
                return v * 2.0
            return ts.lax.fori_loop(0, 2, lambda i, w: nest(depth - 1, w), v)

        return nest(6, x)

    graph = ts.program(f).stage(ts.Spec((3,), ts.f32)).graph
    asked: list[str] = []

    def is_print(eqn: Any) -> bool:
        asked.append(eqn.primitive.name)
        return eqn.primitive.name == "io_callback"

    assert graph_holds(graph, is_print)
    first = len(asked)
    for _ in range(3):  # asked again at every level (as lowering does): nothing is walked twice
        assert graph_holds(graph, is_print)
    assert len(asked) == first and first <= 7 * 8  # a handful of equations per level, each asked once
