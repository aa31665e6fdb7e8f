"""The core pipeline end to end: typed program -> staged graph -> StableHLO -> XLA -> device arrays."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


@ts.program
def dense(w: Tensor[f32, In, Out], b: Tensor[f32, Out], x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, Out]:
    return tnp.tanh(x @ w + b)


def _dense_inputs(rng: np.random.Generator, batch: int = 8, n_in: int = 5, n_out: int = 3) -> tuple[np.ndarray, ...]:
    w = rng.standard_normal((n_in, n_out)).astype(np.float32)
    b = rng.standard_normal(n_out).astype(np.float32)
    x = rng.standard_normal((batch, n_in)).astype(np.float32)
    return w, b, x


def _reference(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.tanh(x.astype(np.float64) @ w.astype(np.float64) + b)


def test_stage_by_dim_names_prints_typed_ir() -> None:
    staged = dense.stage(Batch=32, In=784, Out=10)
    text = str(staged)
    assert "dot_general" in text and "tanh" in text
    assert "f32[Batch=32, Out=10]" in text
    assert "test_pipeline.py:" in text  # every equation points at the user's line
    assert staged.in_avals[2].dims == ("Batch", "In")


def test_stablehlo_module_text() -> None:
    module = dense.stage(Batch=4, In=6, Out=2).stablehlo()
    assert "stablehlo.dot_general" in module and "stablehlo.tanh" in module
    assert "tensor<4x6xf32>" in module and "func.func public @main" in module


def test_every_stablehlo_op_carries_its_equations_user_line() -> None:
    def scaled(x: Tensor[f32, Batch]) -> Tensor[f32, Batch]:
        y = tnp.sin(x)
        return y * 3.5  # the constant 3.5 belongs to this line, not the previous one

    module = ts.program(scaled).stage(Batch=3).stablehlo()
    line = scaled.__code__.co_firstlineno + 2
    (constant,) = [op for op in module.splitlines() if '"stablehlo.constant"' in op and "0x00006040" in op]
    assert f'test_pipeline.py":{line}:' in constant


def test_compile_and_run_matches_numpy(rng: np.random.Generator) -> None:
    w, b, x = _dense_inputs(rng)
    exe = dense.stage(w, b, x).compile(device="cpu")
    y = exe(w, b, x)
    assert isinstance(y, ts.Array)
    assert y.shape == (8, 3) and y.dtype == np.float32 and y.device.platform == "cpu"
    np.testing.assert_allclose(np.asarray(y.block_until_ready()), _reference(w, b, x), rtol=1e-5, atol=1e-6)


def test_convenience_call_caches_by_signature(rng: np.random.Generator) -> None:
    @ts.program
    def f(x: Tensor[f32, Batch]) -> Tensor[f32, Batch]:
        return x * 2.0 + 1.0

    x = rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(np.asarray(f(x)), x * 2 + 1, rtol=1e-6)
    f(x + 1)
    assert f.recompile_reasons == []
    f(rng.standard_normal(5).astype(np.float32))
    assert len(f.recompile_reasons) == 1 and "f32[4] -> f32[5]" in f.recompile_reasons[0]


def test_stage_from_specs() -> None:
    staged = dense.stage(ts.Spec((5, 3), f32), ts.Spec((3,), f32), ts.Spec((7, 5), f32))
    assert staged.out_avals[0].shape == (7, 3)
    assert staged.out_avals[0].dims == ("Batch", "Out")


def test_dim_conflict_between_arguments_is_reported(rng: np.random.Generator) -> None:
    w, b, x = _dense_inputs(rng)
    with pytest.raises(ts.ShapeError) as info:
        dense.stage(w, b, x[:, :4])
    message = str(info.value)
    assert "In" in message and "test_pipeline.py" in message


def test_shape_error_points_at_user_line() -> None:
    @ts.program
    def bad(x: Tensor[f32, Batch, In], w: Tensor[f32, Out, In]) -> Tensor[f32, Batch, Out]:
        return x @ w  # contracted axes differ

    with pytest.raises(ts.ShapeError) as info:
        bad.stage(Batch=2, In=3, Out=4)
    message = str(info.value)
    assert "matmul" in message and "In=3" in message and "Out=4" in message
    assert "test_pipeline.py" in message


def test_same_size_different_dims_do_not_unify() -> None:
    @ts.program
    def bad(x: Tensor[f32, Batch, In], w: Tensor[f32, Out, Out]) -> Tensor[f32, Batch, Out]:
        return x @ w

    with pytest.raises(ts.ShapeError) as info:
        bad.stage(Batch=2, In=4, Out=4)
    assert "In" in str(info.value) and "Out" in str(info.value)


def test_compiled_rejects_wrong_shapes_and_dtypes(rng: np.random.Generator) -> None:
    w, b, x = _dense_inputs(rng)
    exe = dense.stage(w, b, x).compile()
    with pytest.raises(TypeError, match="expected"):
        exe(w, b, x[:4])
    with pytest.raises(TypeError, match="f64"):
        exe(w, b, x.astype(np.float64))


def test_return_annotation_is_checked() -> None:
    @ts.program
    def wrong(x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, Out]:
        return x * 2.0

    with pytest.raises(ts.ShapeError, match="return annotation"):
        wrong.stage(Batch=2, In=3, Out=5)


def test_dtype_mismatch_is_an_error_not_a_promotion(rng: np.random.Generator) -> None:
    x = ts.asarray(rng.standard_normal(3).astype(np.float32))
    y = ts.asarray(np.arange(3, dtype=np.int32))
    with pytest.raises(ts.DTypeError) as info:
        x + y
    assert "add" in str(info.value) and "f32" in str(info.value) and "i32" in str(info.value)


def test_outer_product_trap_is_rejected() -> None:
    x = ts.asarray(np.zeros(3, np.float32))
    col = ts.asarray(np.zeros((3, 1), np.float32))
    with pytest.raises(ts.ShapeError, match="outer product"):
        x + col


def test_staged_values_cannot_be_concretized() -> None:
    @ts.program
    def branchy(x: Tensor[f32, Batch]) -> Tensor[f32, Batch]:
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(ts.ConcretizationError, match="cond"):
        branchy.stage(Batch=3)


def test_arrays_are_immutable() -> None:
    x = ts.asarray(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"\.at\["):
        x[0] = 1.0  # type: ignore[misc]


def test_pytree_arguments_and_results(rng: np.random.Generator) -> None:
    @ts.program
    def affine(params: dict[str, Tensor[f32, In, Out]], x: Tensor[f32, Batch, In]) -> tuple[Tensor[f32, Batch, Out], Tensor[f32]]:
        y = x @ params["w"]
        return y, tnp.sum(y)

    w = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    y, total = affine({"w": w}, x)
    np.testing.assert_allclose(np.asarray(y), x.astype(np.float64) @ w, rtol=1e-5)
    np.testing.assert_allclose(float(total), (x.astype(np.float64) @ w).sum(), rtol=1e-4)


def test_static_argnums_and_donation(rng: np.random.Generator) -> None:
    def scale(x: Tensor[f32, Batch], power: int) -> Tensor[f32, Batch]:
        return x**power

    prog = ts.program(static_argnums=(1,))(scale)
    x = rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(np.asarray(prog(x, 3)), x.astype(np.float64) ** 3, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(prog(x, 2)), x.astype(np.float64) ** 2, rtol=1e-5)

    step = ts.program(donate_argnums=(0,))(lambda v: v + 1.0)
    module = step.stage(ts.Spec((4,), f32)).stablehlo()
    assert "tf.aliasing_output" in module


def test_narrow_integer_sums_accumulate_in_32_bits(rng: np.random.Generator) -> None:
    counts = rng.integers(0, 256, size=300).astype(np.uint8)
    total = tnp.sum(ts.asarray(counts))
    assert total.dtype == np.uint32 and int(total) == int(counts.astype(np.int64).sum())
    small = rng.integers(-3, 4, size=(4, 5)).astype(np.int8)
    np.testing.assert_array_equal(np.asarray(tnp.prod(ts.asarray(small), axis=1)), small.astype(np.int64).prod(axis=1))


def test_sum_and_prod_with_a_dtype_accumulate_in_it_as_numpy(rng: np.random.Generator) -> None:
    pixels = rng.integers(0, 256, size=(6, 40)).astype(np.uint8)
    x = rng.standard_normal((6, 40)).astype(np.float32) * 3
    small = rng.integers(-4, 5, size=(6, 5)).astype(np.int8)
    cases = [
        (lambda p, x, s: tnp.sum(p, dtype=ts.u8), lambda: np.sum(pixels, dtype=np.uint8)),  # wraps, as NumPy
        (lambda p, x, s: p.sum(axis=1, dtype=ts.i64), lambda: pixels.sum(axis=1, dtype=np.int64)),
        (lambda p, x, s: tnp.sum(x, axis=0, keepdims=True, dtype=ts.f64), lambda: x.sum(0, np.float64, keepdims=True)),
        (lambda p, x, s: tnp.sum(x, dtype=ts.i32), lambda: np.sum(x, dtype=np.int32)),  # each element converted first
        (lambda p, x, s: s.prod(axis=1, dtype=ts.i8), lambda: small.prod(axis=1, dtype=np.int8)),
        (lambda p, x, s: tnp.prod(s, axis=0, dtype=ts.f32), lambda: small.prod(axis=0, dtype=np.float32)),
        (lambda p, x, s: tnp.cumsum(p, axis=1, dtype=ts.u8), lambda: np.cumsum(pixels, axis=1, dtype=np.uint8)),
    ]
    staged = ts.program(lambda p, x, s: tuple(f(p, x, s) for f, _ in cases))(pixels, x, small)
    for (fn, reference), got_staged in zip(cases, staged):
        want = reference()
        for got in (fn(ts.asarray(pixels), ts.asarray(x), ts.asarray(small)), got_staged):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    grads = ts.grad(lambda v: tnp.sum(v * v, dtype=ts.f64))(x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(grads), 2 * x.astype(np.float64), rtol=1e-12)


def test_mean_var_std_with_a_dtype_compute_in_it_as_numpy(rng: np.random.Generator) -> None:
    counts = rng.integers(0, 100, size=(6, 5)).astype(np.int32)
    x = (rng.standard_normal((6, 5)) * 3 + 1000).astype(np.float32)  # a large mean: f32 and f64 spreads differ
    cases = [
        (lambda c, v: tnp.mean(c, dtype=ts.f32), lambda: np.mean(counts, dtype=np.float32)),
        (lambda c, v: c.mean(axis=0, dtype=ts.f64), lambda: counts.mean(axis=0, dtype=np.float64)),
        (lambda c, v: tnp.var(v, axis=1, ddof=1, dtype=ts.f64), lambda: np.var(x, axis=1, ddof=1, dtype=np.float64)),
        (lambda c, v: tnp.std(c, axis=0, keepdims=True, dtype=ts.f32),
         lambda: np.std(counts, axis=0, keepdims=True, dtype=np.float32)),
        (lambda c, v: v.var(axis=0, ddof=1), lambda: x.var(axis=0, ddof=1)),
        (lambda c, v: c.std(1, False, 2, dtype=ts.f64), lambda: counts.std(1, dtype=np.float64, ddof=2)),
    ]
    staged = ts.program(lambda c, v: tuple(f(c, v) for f, _ in cases))(counts, x)
    for (fn, reference), got_staged in zip(cases, staged):
        want = reference()
        for got in (fn(ts.asarray(counts), ts.asarray(x)), got_staged):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5 if want.dtype == np.float32 else 1e-12)
    with pytest.raises(ts.DTypeError, match=r"mean\(\.\.\., dtype=i32\): dtype must be a float dtype"):
        tnp.mean(ts.asarray(counts), dtype=ts.i32)
    grads = ts.grad(lambda v: tnp.mean(v, dtype=ts.f64))(x)
    assert grads.dtype == np.float32
    np.testing.assert_allclose(np.asarray(grads), np.full(x.shape, 1 / x.size), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_sums_and_means_accumulate_in_32_bits(dtype: str, rng: np.random.Generator) -> None:
    half = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16)
    x = np.concatenate([np.full((256, 1), 30.125), 30 + rng.standard_normal((256, 2))], axis=1).astype(half)
    wide = x.astype(np.float64)
    results = ts.program(lambda v: (tnp.sum(v, 0), tnp.mean(v, 0), tnp.var(v, 0)))(x)
    for got, want in zip(results, (wide.sum(0), wide.mean(0), wide.var(0))):
        assert got.dtype == half
        # One rounding of the f32 result to the half type, not 256 roundings of a running sum (bf16: off by units).
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=2 * float(ml_dtypes.finfo(half).eps))


@pytest.mark.parametrize("decimals", [-1, 0, 2])
def test_round_matches_numpy(decimals: int, rng: np.random.Generator) -> None:
    x = rng.standard_normal(16) * 100
    # XLA may turn the division by 10**decimals into a multiplication: equal to NumPy within an ulp.
    np.testing.assert_allclose(np.asarray(tnp.round(ts.asarray(x), decimals)), np.round(x, decimals), rtol=3e-16)


def test_stage_leaves_parameters_with_defaults_at_their_defaults() -> None:
    def scaled(x: Tensor[f32, Batch], scale: float = 2.0) -> Tensor[f32, Batch]:
        return x * scale

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(ts.program(scaled).stage(Batch=3).compile()(x)), 2 * x)
    low = ts.program(tnp.linalg.cholesky).stage(np.eye(2, dtype=np.float32)).compile()  # upper=False by default
    np.testing.assert_array_equal(np.asarray(low(np.diag([4.0, 9.0]).astype(np.float32))), np.diag([2.0, 3.0]))
