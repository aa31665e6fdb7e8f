"""The call fast path: cached calls skip re-validation only when nothing about the arguments changed.

Correctness only; speed is measured by benchmarks/dispatch.py.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import attrs
import numpy as np
import pytest
from jaxlib import xla_client as xc

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp

from conftest import PLATFORM


class N(Dim): ...


def _arr(rng: np.random.Generator, *shape: int, dtype: Any = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def test_repeated_calls_take_the_fast_path_and_stay_correct(rng: np.random.Generator) -> None:
    f = ts.program(lambda x, y: x * y + 1.0)
    x, y = ts.asarray(_arr(rng, 5)), ts.asarray(_arr(rng, 5))
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x, y)), np.asarray(x) * np.asarray(y) + 1.0, rtol=1e-6)
    assert len(f._cache) == 1 and len(f._dispatch) == 1 and f.recompile_reasons == []


def test_new_shape_or_dtype_after_warm_up_is_restaged_with_a_reason(rng: np.random.Generator) -> None:
    f = ts.program(lambda x: x + x)
    f(ts.asarray(_arr(rng, 4)))
    f(ts.asarray(_arr(rng, 4)))
    out = f(ts.asarray(_arr(rng, 6)))
    assert out.shape == (6,)
    out = f(ts.asarray(np.arange(4, dtype=np.int32)))  # same byte size as f32[4]: must not reuse that program
    assert out.dtype == np.int32 and np.asarray(out).tolist() == [0, 2, 4, 6]
    assert len(f.recompile_reasons) == 2
    assert "f32[4] -> f32[6]" in f.recompile_reasons[0] and "i32" in f.recompile_reasons[1]


def test_compiled_rejects_wrong_arguments_before_running(rng: np.random.Generator) -> None:
    @ts.program
    def g(x: Tensor[f32, N]) -> Tensor[f32, N]:
        return x * 2.0

    exe = g.stage(N=8).compile()
    good = ts.asarray(_arr(rng, 8))
    exe(good)
    with pytest.raises(TypeError, match="expected f32"):
        exe(ts.asarray(np.zeros(8, np.int32)))  # equal byte size: jaxlib would run it silently
    with pytest.raises(TypeError, match="expected f32"):
        exe(ts.asarray(_arr(rng, 9)))  # a size mismatch segfaults jaxlib 0.10.2
    with pytest.raises(TypeError, match="expected f32"):
        exe(_arr(rng, 2, 4))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be an array"):
        exe("not an array")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="argument structure"):
        exe(good, good)  # type: ignore[call-arg]
    np.testing.assert_allclose(np.asarray(exe(good)), np.asarray(good) * 2, rtol=1e-6)


def test_weak_scalars_reuse_one_program_and_keep_their_kind(rng: np.random.Generator) -> None:
    f = ts.program(lambda x, s: x * s)
    x = ts.asarray(_arr(rng, 3))
    np.testing.assert_allclose(np.asarray(f(x, 2.0)), np.asarray(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(x, 3.0)), np.asarray(x) * 3, rtol=1e-6)
    assert len(f._cache) == 1
    np.testing.assert_allclose(np.asarray(f(x, 4)), np.asarray(x) * 4, rtol=1e-6)  # int: its own signature
    assert len(f._cache) == 2


class Pair(NamedTuple):
    a: Any
    b: Any


@attrs.frozen
class Params:
    w: Any
    b: Any


def test_pytrees_statics_and_kwargs_key_the_fast_path(rng: np.random.Generator) -> None:
    def fn(tree: Any, scale: float, *, pair: Pair, params: Params, mode: str = "add") -> Any:
        total = tree["x"] + tree["ys"][0] + tree["ys"][1] + pair.a + params.w
        total = total * scale
        return {"sum": total, "both": (total, params.b if mode == "add" else -params.b)}

    f = ts.program(fn)
    v = [ts.asarray(_arr(rng, 4)) for _ in range(6)]
    h = [np.asarray(a) for a in v]
    tree = {"x": v[0], "ys": [v[1], v[2]], "none": None}
    for mode, sign in (("add", 1), ("sub", -1), ("add", 1)):
        out = f(tree, 2.0, pair=Pair(v[3], None), params=Params(v[4], v[5]), mode=mode)
        want = (h[0] + h[1] + h[2] + h[3] + h[4]) * 2
        np.testing.assert_allclose(np.asarray(out["sum"]), want, rtol=1e-5)
        np.testing.assert_allclose(np.asarray(out["both"][1]), sign * h[5], rtol=1e-6)
    assert len(f._cache) == 2  # the static string picks the program
    swapped = {"x": v[0], "ys": (v[1], v[2]), "none": None}  # tuple instead of list: another structure
    f(swapped, 2.0, pair=Pair(v[3], None), params=Params(v[4], v[5]))
    assert "argument structure changed" in f.recompile_reasons[-1]


def test_static_argnums_values_select_programs(rng: np.random.Generator) -> None:
    power = ts.Program(lambda x, n: x ** n, static_argnums=(1,))
    x = ts.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    assert np.asarray(power(x, 2)).tolist() == [1.0, 4.0, 9.0]
    assert np.asarray(power(x, 3)).tolist() == [1.0, 8.0, 27.0]
    assert np.asarray(power(x, 2)).tolist() == [1.0, 4.0, 9.0]
    assert len(power._cache) == 2


def test_numpy_arguments_are_handed_over_without_a_host_copy(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = ts.program(lambda x: x + 1.0)
    x = _arr(rng, 16)
    f(x)
    seen: list[Any] = []
    original = xc.batched_device_put

    def spy(aval: Any, sharding: Any, xs: Any, *rest: Any) -> Any:
        seen.extend(xs)
        return original(aval, sharding, xs, *rest)

    monkeypatch.setattr(xc, "batched_device_put", spy)  # the module object runtime calls through
    out = f(x)
    assert len(seen) == 1 and seen[0] is x  # the caller's buffer itself goes to the one host->device copy
    expected = x + 1.0
    x[:] = 0.0  # the device copy is the program's own: later host writes do not leak in
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    strided = _arr(rng, 32)[::2]  # non-contiguous: copied once to contiguous memory, still correct
    np.testing.assert_allclose(np.asarray(f(strided)), strided + 1.0, rtol=1e-6)


def test_dispatch_is_asynchronous(rng: np.random.Generator) -> None:
    # A GPU runs 12 of these matmuls in well under the time a call takes to return: loop long enough there.
    rounds = 12 if PLATFORM == "cpu" else 5000

    def heavy(x: Any) -> Any:
        return ts.fori_loop(0, rounds, lambda _, h: tnp.tanh(h @ h), x)

    f = ts.program(heavy)
    x = ts.asarray(_arr(rng, 600, 600) / 600)
    f(x).block_until_ready()
    out = f(x)
    assert not out.is_ready()  # the call returned while XLA is still working
    assert out.block_until_ready().is_ready()


def test_donated_arguments_are_consumed(rng: np.random.Generator) -> None:
    step = ts.program(donate_argnums=(0,))(lambda v, g: v - 0.1 * g)
    v, g = ts.asarray(_arr(rng, 64)), ts.asarray(_arr(rng, 64))
    expected = np.asarray(v) - 0.1 * np.asarray(g)
    for _ in range(2):  # the second call takes the fast path
        new = step(v, g)
        assert v.is_deleted() and not g.is_deleted()
        v = new
        np.testing.assert_allclose(np.asarray(v), expected, rtol=1e-6)
        expected = expected - 0.1 * np.asarray(g)


def test_program_cache_is_bounded_and_fast_keys_follow_it(rng: np.random.Generator) -> None:
    f = ts.Program(lambda x: x * 3.0, cache_size=2)
    for n in (1, 2, 3, 4, 5):
        assert f(ts.asarray(_arr(rng, n))).shape == (n,)
    assert len(f._cache) <= 2
    cached = list(f._cache.values())
    assert all(any(c is k for k in cached) for c in f._dispatch.values())


def test_staged_and_foreign_values_are_rejected_clearly() -> None:
    f = ts.program(lambda x: x + 1.0)
    with pytest.raises(TypeError):
        f(ts.Spec((3,), f32))
    with pytest.raises(TypeError):
        f({1, 2})


def test_programs_called_while_staging_inline(rng: np.random.Generator) -> None:
    inner = ts.program(lambda x: x * 2.0)
    outer = ts.program(lambda x: inner(x) + inner(x))
    x = ts.asarray(_arr(rng, 3))
    inner(x)  # warm inner's fast path first: staging must still inline it
    np.testing.assert_allclose(np.asarray(outer(x)), np.asarray(x) * 4, rtol=1e-6)


def test_static_floats_are_keyed_by_their_exact_value() -> None:
    x = ts.asarray(np.ones(2, np.float32))
    scale = ts.Program(lambda v, s: v * s, static_argnums=(1,))
    assert np.signbit(np.asarray(scale(x, 0.0))).tolist() == [False, False]
    assert np.signbit(np.asarray(scale(x, -0.0))).tolist() == [True, True]  # 0.0 == -0.0, but not the same program
    assert np.signbit(np.asarray(tnp.full((2,), -0.0))).all()  # eager ops: Python scalars are static
    fill = ts.Program(lambda v, s: v * 0.0 + s, scalars_dynamic=False)  # scalars static, as in eager ops
    for _ in range(2):
        assert np.isnan(np.asarray(fill(x, float("nan")))).all()
    assert len(fill._cache) == 1  # nan != nan, yet one program serves every nan



def test_static_values_python_calls_equal_pick_their_own_programs() -> None:
    x = ts.asarray(np.zeros(2, np.float32))

    def first_type(v: Tensor[f32, N], s: object) -> Tensor[f32, N]:
        leaf = s[0] if isinstance(s, tuple) else s
        return v + {bool: 1.0, int: 2.0, float: 3.0}[type(leaf)]

    tag = ts.Program(first_type, static_argnums=(1,))
    # 1 == True and (1,) == (True,) == (1.0,) in Python, but each stages its own program
    for value, expected in [(1, 2.0), (True, 1.0), ((1,), 2.0), ((True,), 1.0), ((1.0,), 3.0)] * 2:
        assert np.asarray(tag(x, value)).tolist() == [expected] * 2, value


def test_eager_ops_tell_a_scalar_on_the_left_from_one_on_the_right() -> None:
    """Eager ops take Python scalars as static arguments: the cache key must say which position holds the scalar
    (``1.0 - b`` then ``b - 1.0`` once found ``1.0 - b``'s executable and rejected ``b - 1.0``'s arguments)."""
    b = tnp.asarray(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(1.0 - b), [1.0, 0.0, -1.0])
    np.testing.assert_array_equal(np.asarray(b - 1.0), [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(tnp.subtract(b, 2.0)), [-2.0, -1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(tnp.subtract(2.0, b)), [2.0, 1.0, 0.0])


def test_clear_cache_recompiles_and_says_why() -> None:
    p = ts.program(lambda x: x + 1.0)
    x = np.arange(3.0)
    p(x)
    p.clear_cache()
    np.testing.assert_allclose(p(x), x + 1.0)
    p(x)
    assert p.recompile_reasons == ["cache cleared"]
