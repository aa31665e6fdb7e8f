"""ts.image.resize and scale_and_translate: small cases computed by hand, JAX as the oracle (float64 and float32,
when installed), gradients against finite differences, vmap against a loop, and the refusals of bad arguments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import image
from tensorstage import numpy as tnp

from directional_grads import assert_grads_match_finite_differences
from staging_errors import check_staging_errors

METHODS = ("nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area")
SHAPES = ((2, 4, 5, 3), (3, 5, 11, 2))  # down; up in one axis and down in another, batch and channels resized too
SOME = ("nearest", "linear", "lanczos3", "area")


def test_small_cases_computed_by_hand() -> None:
    ramp = np.array([0.0, 1.0])
    steps = np.array([1.0, 2.0, 3.0, 4.0])

    @ts.program
    def run(ramp: Any, steps: Any) -> Any:
        return (image.resize(ramp, (4,), "linear"), image.resize(steps, (2,), "nearest"),
                image.resize(steps, (2,), "area"), image.resize(steps, (2,), "linear"),
                image.resize(steps, (2,), "linear", antialias=False),
                image.scale_and_translate(steps, (4,), (0,), [1.0], [1.0], "linear"))

    up, nearest, area, down, aliased, shifted = (np.asarray(r) for r in run(ramp, steps))
    # output centres at -0.25, 0.25, 0.75, 1.25 in input pixels; the edge ones see one pixel (weights renormalized)
    np.testing.assert_allclose(up, [0.0, 0.25, 0.75, 1.0], atol=1e-7)
    np.testing.assert_array_equal(nearest, [2.0, 4.0])
    np.testing.assert_allclose(area, [1.5, 3.5], atol=1e-7)
    # antialiased: the triangle widened to radius 2 around centres 0.5 and 2.5
    np.testing.assert_allclose(down, [(0.75 * 1 + 0.75 * 2 + 0.25 * 3) / 1.75, (0.25 * 2 + 0.75 * 3 + 0.75 * 4) / 1.75],
                               atol=1e-6)
    np.testing.assert_allclose(aliased, [1.5, 3.5], atol=1e-7)
    # shifted right by one pixel: the first output pixel samples outside the input (0)
    np.testing.assert_allclose(shifted, [0.0, 1.0, 2.0, 3.0], atol=1e-7)


def _resizes(x: Any, y: Any, resize: Any) -> dict[str, Any]:
    """Every method on ``x`` (f64) at the mixed shape, some at the downsampling one (and without antialiasing where
    that changes the kernel), and some on ``y`` (f32). One jit of JAX's side: its compiles dominate the test."""
    out = {f"{m}{s}": resize(x, s, m) for m in METHODS for s in SHAPES if s == SHAPES[1] or m in SOME}
    out |= {f"{m}aliased": resize(x, SHAPES[0], m, False) for m in ("linear", "cubic-pytorch")}
    return out | {f"f32{m}": resize(y, SHAPES[1], m) for m in ("linear", "lanczos3")}


def test_resize_matches_jax(rng: np.random.Generator) -> None:
    jax = pytest.importorskip("jax")
    x = rng.standard_normal((2, 9, 7, 3))
    y = x.astype(np.float32)
    got = ts.program(lambda x, y: _resizes(x, y, image.resize))(x, y)
    with jax.enable_x64(True):  # one jit: a compile per call would dominate the test
        want = jax.jit(lambda x, y: _resizes(x, y, jax.image.resize))(x, y)
    for key, w in want.items():
        result = np.asarray(got[key])
        tol = 1e-5 if key.startswith("f32") else 1e-13
        assert result.shape == w.shape and result.dtype == w.dtype, key
        np.testing.assert_allclose(result, np.asarray(w), rtol=tol, atol=tol, err_msg=key)


def test_scale_and_translate_matches_jax(rng: np.random.Generator) -> None:
    jax = pytest.importorskip("jax")
    x = rng.standard_normal((2, 9, 7, 3))
    scale, shift = np.array([0.7, 1.8]), np.array([0.3, -1.15])  # no sample on a kink of the kernel
    settings = [("linear", True), ("lanczos3", True), ("area", True), ("cubic-pytorch", False)]

    def run(sat: Any, x: Any, scale: Any, shift: Any) -> list[Any]:
        return [sat(x, (2, 6, 11, 3), (1, 2), scale, shift, m, aa) for m, aa in settings]

    got = ts.program(lambda x, s, t: (run(image.scale_and_translate, x, s, t),
                                      run(image.scale_and_translate, x, [0.7, 1.8], [0.3, -1.15])))(x, scale, shift)
    with jax.enable_x64(True):
        want = jax.jit(lambda x, s, t: run(jax.image.scale_and_translate, x, s, t))(x, scale, shift)
    for k, w in enumerate(want):
        for result in (got[0][k], got[1][k]):  # tensor and Python settings
            np.testing.assert_allclose(np.asarray(result), np.asarray(w), rtol=1e-12, atol=1e-12, err_msg=str(k))
    # the gradient in the scale and the translation: jax's
    loss = lambda sat, np_: lambda x, s, t: np_.sum(np_.sin(sat(x, (2, 6, 11, 3), (1, 2), s, t, "linear")))  # noqa: E731
    grads = ts.grad(loss(image.scale_and_translate, tnp), argnums=(1, 2))(x, scale, shift)
    with jax.enable_x64(True):
        expected = jax.jit(jax.grad(loss(jax.image.scale_and_translate, jax.numpy), argnums=(1, 2)))(x, scale, shift)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-10, atol=1e-12)


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    cases = [
        lambda x: image.resize(x, (2, 5, 7), "linear"),
        lambda x: image.resize(x, (2, 2, 3), "lanczos3"),
        lambda x: image.scale_and_translate(x, (2, 4, 6), (1, 2), [1.3, 1.7], [0.2, -0.4], "cubic"),
        lambda x: image.scale_and_translate(x[0], (5, 6), (0, 1), tnp.exp(x[1, 0, :2]), x[1, 1, :2], "linear"),
    ]
    assert_grads_match_finite_differences(cases, rng)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    images = rng.standard_normal((3, 6, 5))
    batched = np.asarray(ts.vmap(lambda im: image.resize(im, (4, 9), "cubic"))(images))
    whole = np.asarray(image.resize(images, (3, 4, 9), "cubic"))
    np.testing.assert_allclose(batched, whole, atol=1e-13)


F32, I32 = ts.f32, ts.i32
S = ts.Spec
BAD: list[tuple[Any, list[Any], type[Exception], list[str]]] = [
    (lambda a: image.resize(a, (3,), "linear"), [S((3, 4), F32)], ts.ShapeError, ["resize", "(3,)", "f32[3, 4]"]),
    (lambda a: image.resize(a, (3, 5), "bogus"), [S((3, 4), F32)], ValueError, ["resize", '"bogus"']),
    (lambda a: image.resize(a, (3, 5), "linear"), [S((3, 4), I32)], ts.DTypeError, ["resize", "i32[3, 4]", "astype"]),
    (lambda a: image.resize(a, (3, -1), "linear"), [S((3, 4), F32)], ts.ShapeError, ["resize", "negative"]),
    (lambda a: image.scale_and_translate(a, (3, 5), (1,), [2.0], [0.0], "nearest"), [S((3, 4), F32)], ValueError,
     ["scale_and_translate", "nearest"]),
    (lambda a: image.scale_and_translate(a, (3, 5), (1,), [2.0, 1.0], [0.0], "linear"), [S((3, 4), F32)],
     ts.ShapeError, ["scale_and_translate", "scale", "1 entries"]),
    (lambda a: image.scale_and_translate(a, (4, 5), (1,), [2.0], [0.0], "linear"), [S((3, 4), F32)],
     ts.ShapeError, ["scale_and_translate", "axis 0", "keep its size"]),
]


def test_bad_arguments_raise_naming_the_function_and_the_line() -> None:
    check_staging_errors(BAD, "test_image.py")
    nearest = image.resize(np.arange(6, dtype=np.int32).reshape(2, 3), (4, 3), image.ResizeMethod.NEAREST)
    assert np.asarray(nearest).dtype == np.int32  # nearest works on any dtype
