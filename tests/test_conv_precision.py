"""Convolution precision, as ``dot_general``'s: ``lax.conv_general_dilated(..., precision=...)`` and
``ts.default_matmul_precision(...)`` reach StableHLO's ``precision_config`` (forward, derivative and batched
convolutions), key the program cache, and leave CPU results unchanged (against a float64 NumPy correlation)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import lax

HERE = re.escape(__file__.rsplit("/", 1)[-1])


def _operands() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2026)
    return rng.standard_normal((2, 3, 7, 6)).astype(np.float32), rng.standard_normal((4, 3, 3, 2)).astype(np.float32)


def _reference(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """'VALID' NCHW x OIHW cross-correlation in float64."""
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), k.shape[2:], axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", windows, k.astype(np.float64))


def _precisions(text: str) -> list[str]:
    """The precision_config of every convolution in a module's text ('' where it has none)."""
    found = []
    for line in text.splitlines():
        if '"stablehlo.convolution"' in line:
            m = re.search(r"precision_config = \[#stablehlo<precision (\w+)>, #stablehlo<precision (\w+)>\]", line)
            assert m is None or m.group(1) == m.group(2), line
            found.append(m.group(1) if m else "")
    return found


def _conv(x: Any, k: Any, precision: Any = None) -> Any:
    return lax.conv_general_dilated(x, k, (1, 1), "VALID", precision=precision)


@pytest.mark.parametrize(("precision", "expected"), [
    (None, ""), (lax.Precision.HIGHEST, "HIGHEST"), (lax.Precision.DEFAULT, "DEFAULT"), ("tensorfloat32", "HIGH"),
    ("HIGH", "HIGH"), (("bfloat16", "float32"), "HIGHEST"), (lax.DotAlgorithmPreset.F32_F32_F32, ""),
])
def test_explicit_precision_reaches_stablehlo(precision: Any, expected: str) -> None:
    x, k = _operands()
    staged = ts.make_jaxpr(lambda x, k: _conv(x, k, precision))(x, k)
    assert _precisions(staged.stablehlo("cpu")) == [expected]
    # Without one, GPUs still get full f32 (as every f32 product here); with one, exactly what was asked.
    assert _precisions(staged.stablehlo("gpu")) == [expected or "HIGHEST"]


def test_default_matmul_precision_reaches_forward_derivative_and_batched_convolutions() -> None:
    x, k = _operands()

    def loss(x: Any, k: Any) -> Any:
        return (_conv(x, k) ** 2).sum()

    def everything(x: Any, k: Any) -> Any:
        grads = ts.grad(loss, argnums=(0, 1))(x, k)
        per_example = ts.vmap(lambda xi: _conv(xi[None], k)[0])(x)
        kernels = ts.vmap(lambda ki: _conv(x, ki[None])[:, 0], out_axes=1)(k)
        return _conv(x, k), grads, per_example, kernels

    program = ts.program(everything)
    with ts.default_matmul_precision("tensorfloat32"):
        inside = program.stage(x, k)
        results = program(x, k)
        explicit = _precisions(ts.make_jaxpr(lambda x, k: _conv(x, k, "highest"))(x, k).stablehlo())
    found = _precisions(inside.stablehlo())
    assert len(found) >= 5 and set(found) == {"HIGH"}, found  # forward, both cotangents, both batched forms
    assert explicit == ["HIGHEST"]  # an explicit precision wins over the block's, as in JAX
    outside = program.stage(x, k)
    assert set(_precisions(outside.stablehlo())) == {""}
    again = program(x, k)  # a new compile: the setting is part of the cache key
    assert any("default_matmul_precision" in reason for reason in program.recompile_reasons)

    reference = _reference(x, k)
    for got, want in zip(ts.tree_util.tree_leaves(results), ts.tree_util.tree_leaves(again)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))  # CPUs compute f32 exactly either way
    np.testing.assert_allclose(np.asarray(results[0]), reference, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(results[2]), reference, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(results[3]), reference, rtol=2e-5, atol=2e-5)
    # d/dx sum(conv^2) = conv_transpose(2 conv): the same at every precision on CPU; checked against float64
    np.testing.assert_allclose(np.asarray(results[1][1]), _kernel_gradient(x, reference), rtol=2e-4, atol=2e-4)


def _kernel_gradient(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 2), axis=(2, 3))
    return np.einsum("nchwij,nohw->ocij", windows, 2 * out)


def test_convolutions_built_on_it_carry_the_precision() -> None:
    x, k = _operands()
    dims = ("NCHW", "OIHW", "NCHW")
    transposed = ts.make_jaxpr(
        lambda x, k: lax.conv_transpose(x, k, (2, 2), "SAME", dimension_numbers=dims, precision="highest"))(x, k)
    assert _precisions(transposed.stablehlo()) == ["HIGHEST"]
    with ts.default_matmul_precision("bfloat16"):
        plain = ts.make_jaxpr(lambda x, k: lax.conv(x, k, (1, 1), "SAME"))(x, k)
    assert _precisions(plain.stablehlo()) == ["DEFAULT"]


def test_a_bad_precision_names_the_op_and_the_line() -> None:
    x, k = _operands()
    with pytest.raises(ValueError, match=rf"conv_general_dilated: unknown precision 'fastest-ever'(.|\n)*{HERE}:\d+"):
        _conv(x, k, "fastest-ever")
