"""ts.scipy.ndimage.map_coordinates, ts.scipy.interpolate.RegularGridInterpolator and ts.scipy.integrate.trapezoid
against SciPy (float64) and JAX (when installed), in programs and eagerly; gradients against finite differences;
vmap against a loop; the interpolator as a pytree; and the refusals of bad arguments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import integrate, interpolate, ndimage

from directional_grads import assert_grads_match_finite_differences
from staging_errors import check_staging_errors

scipy_ndimage = pytest.importorskip("scipy.ndimage")
scipy_interpolate = pytest.importorskip("scipy.interpolate")
scipy_integrate = pytest.importorskip("scipy.integrate")

# JAX's modes as SciPy names them (JAX's 'constant' and 'wrap' are SciPy's grid-constant and grid-wrap)
SCIPY_MODES = {"constant": "grid-constant", "wrap": "grid-wrap", "nearest": "nearest", "mirror": "mirror",
               "reflect": "reflect"}


def _all_modes(image: Any, coordinates: Any) -> dict[str, Any]:
    return {f"{order}{mode}": ndimage.map_coordinates(image, coordinates, order, mode, cval=0.7)
            for order in (0, 1) for mode in SCIPY_MODES}


def test_map_coordinates_matches_scipy_and_jax(rng: np.random.Generator) -> None:
    image = rng.standard_normal((5, 7))
    coordinates = [rng.uniform(-3, 9, (4, 6)), rng.uniform(-3, 10, (4, 6))]
    got = ts.program(_all_modes)(image, coordinates)
    for key, result in got.items():
        order, mode = int(key[0]), key[1:]
        want = scipy_ndimage.map_coordinates(image, np.array(coordinates), order=order, mode=SCIPY_MODES[mode],
                                             cval=0.7)
        np.testing.assert_allclose(np.asarray(result), want, rtol=1e-13, atol=1e-13, err_msg=key)
    # integers are interpolated in the coordinates' float type and rounded back, as JAX; f32 stays f32
    counts = rng.integers(0, 100, (5, 7)).astype(np.int32)
    small = [c.astype(np.float32) for c in coordinates]
    rounded = ndimage.map_coordinates(counts, small, 1, "reflect")
    single = ndimage.map_coordinates(image.astype(np.float32), small, 1, "mirror")
    assert np.asarray(rounded).dtype == np.int32 and np.asarray(single).dtype == np.float32
    np.testing.assert_allclose(np.asarray(single), got["1mirror"], rtol=1e-5, atol=1e-5)
    jax = pytest.importorskip("jax")
    jax_ndimage = pytest.importorskip("jax.scipy.ndimage")
    with jax.enable_x64(True):
        for key, result in got.items():
            want = jax_ndimage.map_coordinates(image, coordinates, int(key[0]), key[1:], cval=0.7)
            np.testing.assert_allclose(np.asarray(result), np.asarray(want), rtol=1e-14, atol=1e-14, err_msg=key)
    np.testing.assert_array_equal(np.asarray(rounded), np.asarray(jax_ndimage.map_coordinates(counts, small, 1,
                                                                                              "reflect")))


def _grid(rng: np.random.Generator) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray, np.ndarray]:
    grid = (np.sort(rng.uniform(0, 5, 6)), np.sort(rng.uniform(-1, 1, 4)))
    values = rng.standard_normal((6, 4, 3))
    points = np.stack([rng.uniform(-0.5, 5.5, 10), rng.uniform(-1.2, 1.2, 10)], -1)
    return grid, values, points


def test_regular_grid_interpolator_matches_scipy(rng: np.random.Generator) -> None:
    grid, values, points = _grid(rng)

    @ts.program
    def run(grid: Any, values: Any, points: Any) -> Any:
        out = {}
        for method in ("linear", "nearest"):
            for fill in (np.nan, None, 2.0):
                r = interpolate.RegularGridInterpolator(grid, values, method, fill_value=fill)
                out[f"{method}{fill}"] = r(points)
        linear = interpolate.RegularGridInterpolator(grid, values)
        out["tuple"] = linear((points[:, 0], points[:, 1]))
        out["override"] = linear(points, method="nearest")
        return out

    got = run(grid, values, points)
    for method in ("linear", "nearest"):
        for fill in (np.nan, None, 2.0):
            want = scipy_interpolate.RegularGridInterpolator(grid, values, method, bounds_error=False,
                                                             fill_value=fill)(points)
            np.testing.assert_allclose(np.asarray(got[f"{method}{fill}"]), want, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(np.asarray(got["tuple"]), np.asarray(got["linearnan"]))
    np.testing.assert_array_equal(np.asarray(got["override"]), np.asarray(got["nearestnan"]))
    # built outside, passed into a program as a pytree, and called eagerly
    r = interpolate.RegularGridInterpolator(grid, values, fill_value=None)
    inside = ts.program(lambda r, p: r(p))(r, points)
    np.testing.assert_allclose(np.asarray(inside), np.asarray(got["linearNone"]), atol=1e-14)
    np.testing.assert_allclose(np.asarray(r(points[:3])), np.asarray(got["linearNone"])[:3], atol=1e-14)


def test_trapezoid_matches_scipy(rng: np.random.Generator) -> None:
    y, x = rng.standard_normal((3, 5)), np.sort(rng.uniform(0, 4, 5))
    got = ts.program(lambda y, x: (integrate.trapezoid(y, x), integrate.trapezoid(y, dx=0.3, axis=0)))(y, x)
    np.testing.assert_allclose(np.asarray(got[0]), scipy_integrate.trapezoid(y, x), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(got[1]), scipy_integrate.trapezoid(y, dx=0.3, axis=0), rtol=1e-14)


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    coordinates = [rng.uniform(0.1, 1.9, (3,)), rng.uniform(0.1, 2.9, (3,)), rng.uniform(0.1, 3.9, (3,))]
    grid = (np.array([0.0, 0.7, 2.0]), np.array([-1.0, 0.5, 1.0, 3.0]))
    points = np.array([[0.3, 0.9], [1.5, -0.2], [0.1, 2.5]])
    cases = [
        lambda x: ndimage.map_coordinates(x, coordinates, 1, "nearest"),
        lambda x: ndimage.map_coordinates(x[0], [x[1, 0, :3] + 1.3, x[1, 1, :3] + 1.4], 1, "wrap"),
        lambda x: interpolate.RegularGridInterpolator(grid, x[0, :, :])(points),
        lambda x: interpolate.RegularGridInterpolator(grid, x[1, :, :])(points + 0.1 * x[0, :, :2]),
        lambda x: integrate.trapezoid(x, tnp.cumsum(tnp.exp(x[0, 0]))),
    ]
    assert_grads_match_finite_differences(cases, rng)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    images, rows, cols = rng.standard_normal((4, 5, 6)), rng.uniform(0, 4, (4, 7)), rng.uniform(0, 5, (4, 7))
    batched = ts.vmap(lambda im, r, c: ndimage.map_coordinates(im, [r, c], 1, "reflect"))(images, rows, cols)
    for i in range(4):
        want = scipy_ndimage.map_coordinates(images[i], np.array([rows[i], cols[i]]), order=1, mode="reflect")
        np.testing.assert_allclose(np.asarray(batched)[i], want, atol=1e-13)


F32, I32 = ts.f32, ts.i32
S = ts.Spec
BAD: list[tuple[Any, list[Any], type[Exception], list[str]]] = [
    (lambda a: ndimage.map_coordinates(a, [a], 1), [S((3, 4), F32)], ts.ShapeError,
     ["map_coordinates", "input.ndim", "f32[3, 4]"]),
    (lambda a: ndimage.map_coordinates(a, [a[0], a[0]], 3), [S((3, 4), F32)], ValueError, ["map_coordinates", "order"]),
    (lambda a: ndimage.map_coordinates(a, [a[0], a[0]], 1, mode="grid-wrap"), [S((3, 4), F32)], ValueError,
     ["map_coordinates", "'grid-wrap'"]),
    (lambda a: ndimage.map_coordinates(a, [a[0], a[:, 0]], 1), [S((3, 4), F32)], ts.ShapeError,
     ["map_coordinates", "one shape", "f32[4]", "f32[3]"]),
    (lambda a: interpolate.RegularGridInterpolator((np.arange(3.0),), a)(tnp.zeros((2, 2))), [S((3,), F32)],
     ts.ShapeError, ["RegularGridInterpolator", "2 coordinates", "1 dimensions"]),
    (lambda a: interpolate.RegularGridInterpolator((np.arange(4.0),), a), [S((3,), F32)], ts.ShapeError,
     ["RegularGridInterpolator", "axis 0", "f32[3]"]),
    (lambda a: interpolate.RegularGridInterpolator((np.arange(3.0),), a), [S((3,), I32)], ts.DTypeError,
     ["RegularGridInterpolator", "i32[3]", "astype"]),
    (lambda a: interpolate.RegularGridInterpolator((np.arange(3.0),), a, method="cubic"), [S((3,), F32)], ValueError,
     ["RegularGridInterpolator", "'cubic'"]),
    (lambda y: integrate.trapezoid(y, tnp.zeros(4, dtype=F32)), [S((3,), F32)], ts.ShapeError, ["trapezoid", "f32[4]"]),
]


def test_bad_arguments_raise_naming_the_function_and_the_line() -> None:
    check_staging_errors(BAD, "test_scipy_interp.py")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        interpolate.RegularGridInterpolator((np.arange(3.0),), np.zeros(3), bounds_error=True)
