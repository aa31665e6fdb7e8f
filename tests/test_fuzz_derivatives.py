"""Derivative rules of ``tensorstage.numpy`` / ``tensorstage.nn`` functions, fuzzed against central finite
differences in float64 and against jax (when installed; x64 only inside ``jax.enable_x64`` scopes).

Unary and binary elementwise functions are checked at seeded random points of their domains (first derivatives by
grad, jvp and vjp, which must agree; second derivatives by grad of grad) and at special points (0, -0, the ends of
a domain such as ±1 for arcsin, large values, ±inf, NaN, ties), in f32 and f64; reductions, cumulative ops, sort,
linalg products, indexing and scatters with repeated indices, joining / padding / reshaping and control flow by
directional finite differences and against jax (with ties in the input). Then vmap(grad) against a Python loop,
hessian against jacfwd(jacrev) and finite differences, linearize against jvp, and the errors for integer and bool
inputs. One staged program per family of cases.

Deliberate differences from JAX's derivatives, tested here (``KNOWN`` lists the points the jax comparison skips):
- ``abs'(0)`` is ``sign(0) = 0`` (JAX: 1), and so is the derivative of functions built on ``|x|`` at its kink:
  ``copysign(x, y)`` at ``x = 0`` (JAX: ±1), ``hypot`` at the origin (JAX: 0.5), ``softsign''(0)`` (JAX: -2).
- ``fmax``/``fmin`` split ties evenly, as ``maximum``/``minimum`` do (JAX gives all of it to the second operand).
- ``leaky_relu'(0)`` is the negative slope (JAX: 1); ``relu'(0)`` is 0 in both.
- Where the value is NaN (outside the domain: ``arccosh`` below 1, ``arctanh`` at ±inf) the derivative is 0 or
  NaN (JAX: whatever its formula gives, e.g. 0.89 for ``arccosh'(-1.5)``).
- ``arcsin''``/``arccos''`` at ±1 and ``arccosh''`` at 1 are NaN (JAX: ±inf); the first derivatives are ±inf
  in both. ``arctanh''(±1)`` is ±inf and ``arcsinh''`` and ``arccosh''`` at inf are 0 (JAX: NaN).
- ``where``/``select``: reverse mode sends the unused branch a zero cotangent, which an infinite or NaN slope
  there turns into NaN (``grad`` of ``where(x > 0, sqrt(x), x)`` at 0), where forward mode gives the chosen
  branch's derivative: as in JAX.
- Where JAX loses digits and tensorstage does not: ``logaddexp(x, x)'`` for large x (JAX: up to 2, true: 1),
  ``sinc'`` at tiny x in f32 (JAX: -inf) and ``sinc''`` near 0 in f32, ``hypot(x, 2)''`` at ``|x| = 2``
  (JAX: 0), ``logaddexp'`` with an infinite operand (JAX: ``exp(x)``, true: 0 or 1), ``heaviside'`` and
  ``copysign'`` at NaN.
- ``sinc`` at ±inf is NaN, as NumPy's, and so are its derivatives there (jax 0.11 gives 0 for all three; jax
  0.10 NaN).
- ``partition``: which of several tied elements lands at which position (NumPy leaves it unspecified) differs from
  JAX's, and with it which of them gets which derivative.
- ``logaddexp``/``logaddexp2`` of two equal infinities give the whole derivative to the first operand (JAX: NaN
  or 1 to each).
- ``power``'s derivatives follow JAX's formulas exactly: ``d/dx x**0.0`` at 0 is NaN (a float exponent; an int
  exponent stages ``integer_pow``, whose derivative there is 0), ``d/dy`` of a negative base is NaN.
- ``jvp``/``vjp``/``linearize`` with integer primals give integer zero tangents (JAX: float0 zeros or an error);
  ``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev`` and ``hessian`` raise a TransformError (a TypeError) for
  integer or bool inputs, as JAX raises a TypeError.

Platforms: the jax comparisons run tensorstage on the platform jax computes on (``conftest.jax_platform``: the CPU
in a GPU run, where tensorstage owns the CUDA plugin), since the two differ by ulps across platforms and a ulp
decides a derivative at a kink: XLA:GPU's float32 ``1.7 / 1.7`` is 0.99999994 (``div.full.f32``), so
``remainder(x, y)``'s ``d/dy = -trunc(x / y)`` is 0 there instead of -1. ``GPU_SKIPS`` lists the cases not
checked on a GPU, each with its reason.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from conftest import PLATFORM, jax_platform
from tensorstage import nn as tnn
from tensorstage import numpy as tnp

try:
    import jax
    import jax.numpy as jnp
except ImportError:  # the finite-difference checks run without it
    jax = jnp = None

needs_jax = pytest.mark.skipif(jax is None, reason="jax is not installed")
# Cases the finite-difference checks skip on a GPU, each with its reason. (``set_repeated`` was one: XLA:GPU
# applied a set scatter's repeated indices in any order, so the forward pass and its derivative could pick
# different winners; array-index sets now drop all but the last update to an element first, on every platform.)
GPU_SKIPS: dict[str, str] = {}
EPS = 1e-6
INF, NAN = math.inf, math.nan


def _jx(name: str) -> Callable[..., Any]:
    """A jax function by dotted name, looked up lazily (so the table builds without jax)."""

    def call(*args: Any) -> Any:
        obj: Any = jax
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj(*args)

    return call


def _lam(ts_fn: Callable[..., Any], jax_fn: Callable[..., Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return ts_fn, jax_fn


# name: (tensorstage function, jax function, (lo, hi) of the random points: inside the domain, off any kink)
UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple[float, float]]] = {
    "sqrt": (tnp.sqrt, _jx("numpy.sqrt"), (0.1, 4)),
    "cbrt": (tnp.cbrt, _jx("numpy.cbrt"), (0.1, 4)),
    "exp": (tnp.exp, _jx("numpy.exp"), (-3, 3)),
    "expm1": (tnp.expm1, _jx("numpy.expm1"), (-3, 3)),
    "exp2": (tnp.exp2, _jx("numpy.exp2"), (-3, 3)),
    "log": (tnp.log, _jx("numpy.log"), (0.1, 4)),
    "log1p": (tnp.log1p, _jx("numpy.log1p"), (-0.9, 4)),
    "log2": (tnp.log2, _jx("numpy.log2"), (0.1, 4)),
    "log10": (tnp.log10, _jx("numpy.log10"), (0.1, 4)),
    "sin": (tnp.sin, _jx("numpy.sin"), (-4, 4)),
    "cos": (tnp.cos, _jx("numpy.cos"), (-4, 4)),
    "tan": (tnp.tan, _jx("numpy.tan"), (-1.4, 1.4)),
    "arcsin": (tnp.arcsin, _jx("numpy.arcsin"), (-0.95, 0.95)),
    "arccos": (tnp.arccos, _jx("numpy.arccos"), (-0.95, 0.95)),
    "arctan": (tnp.arctan, _jx("numpy.arctan"), (-4, 4)),
    "sinh": (tnp.sinh, _jx("numpy.sinh"), (-3, 3)),
    "cosh": (tnp.cosh, _jx("numpy.cosh"), (-3, 3)),
    "tanh": (tnp.tanh, _jx("numpy.tanh"), (-3, 3)),
    "arcsinh": (tnp.arcsinh, _jx("numpy.arcsinh"), (-4, 4)),
    "arccosh": (tnp.arccosh, _jx("numpy.arccosh"), (1.05, 4)),
    "arctanh": (tnp.arctanh, _jx("numpy.arctanh"), (-0.95, 0.95)),
    "sigmoid": (tnp.sigmoid, _jx("nn.sigmoid"), (-4, 4)),
    "erf": (tnn.erf, _jx("scipy.special.erf"), (-2, 2)),
    "sinc": (tnp.sinc, _jx("numpy.sinc"), (-3, 3)),
    "abs": (tnp.abs, _jx("numpy.abs"), (0.1, 3)),
    "sign": (tnp.sign, _jx("numpy.sign"), (0.1, 3)),
    "floor": (tnp.floor, _jx("numpy.floor"), (0.1, 0.9)),
    "ceil": (tnp.ceil, _jx("numpy.ceil"), (0.1, 0.9)),
    "round": (tnp.round, _jx("numpy.round"), (0.6, 1.4)),
    "trunc": (tnp.trunc, _jx("numpy.trunc"), (0.1, 0.9)),
    "square": (tnp.square, _jx("numpy.square"), (-3, 3)),
    "reciprocal": (tnp.reciprocal, _jx("numpy.reciprocal"), (0.2, 3)),
    "rsqrt": (tnp.rsqrt, _jx("lax.rsqrt"), (0.2, 3)),
    "nan_to_num": (tnp.nan_to_num, _jx("numpy.nan_to_num"), (-3, 3)),
    "deg2rad": (tnp.deg2rad, _jx("numpy.deg2rad"), (-3, 3)),
    "pow_int0": _lam(lambda x: x**0, lambda x: x**0) + ((-3, 3),),
    "pow_int3": _lam(lambda x: x**3, lambda x: x**3) + ((-3, 3),),
    "pow_int-2": _lam(lambda x: x**-2, lambda x: x**-2) + ((0.3, 3),),
    "pow_x_0.0": _lam(lambda x: x**0.0, lambda x: x**0.0) + ((0.3, 3),),
    "pow_x_0.5": _lam(lambda x: x**0.5, lambda x: x**0.5) + ((0.3, 3),),
    "pow_x_3.0": _lam(lambda x: tnp.power(x, 3.0), lambda x: jnp.power(x, 3.0)) + ((-3, 3),),
    "pow_0_y": _lam(lambda x: tnp.power(0.0, x), lambda x: jnp.power(0.0, x)) + ((0.3, 3),),
    "pow_-2_y": _lam(lambda x: tnp.power(-2.0, x), lambda x: jnp.power(-2.0, x)) + ((0.3, 3),),
    "clip": _lam(lambda x: tnp.clip(x, -1.0, 1.0), lambda x: jnp.clip(x, -1.0, 1.0)) + ((-2, 2),),
    "maximum0": _lam(lambda x: tnp.maximum(x, 0.0), lambda x: jnp.maximum(x, 0.0)) + ((-2, 2),),
    "fmin0": _lam(lambda x: tnp.fmin(x, 0.0), lambda x: jnp.fmin(x, 0.0)) + ((-2, 2),),
    "remainder": _lam(lambda x: tnp.remainder(x, 1.5), lambda x: jnp.remainder(x, 1.5)) + ((0.1, 1.4),),
    "rremainder": _lam(lambda x: tnp.remainder(2.5, x), lambda x: jnp.remainder(2.5, x)) + ((1.3, 2.4),),
    "fmod": _lam(lambda x: tnp.fmod(x, -1.5), lambda x: jnp.fmod(x, -1.5)) + ((0.1, 1.4),),
    "floor_divide": _lam(lambda x: tnp.floor_divide(x, 1.5), lambda x: jnp.floor_divide(x, 1.5)) + ((0.1, 1.4),),
    "copysign": _lam(lambda x: tnp.copysign(x, -1.0), lambda x: jnp.copysign(x, -1.0)) + ((-3, 3),),
    "logaddexp": _lam(lambda x: tnp.logaddexp(x, 0.5), lambda x: jnp.logaddexp(x, 0.5)) + ((-3, 3),),
    "logaddexp_xx": _lam(lambda x: tnp.logaddexp(x, x), lambda x: jnp.logaddexp(x, x)) + ((-3, 3),),
    "logaddexp2": _lam(lambda x: tnp.logaddexp2(x, 0.5), lambda x: jnp.logaddexp2(x, 0.5)) + ((-3, 3),),
    "hypot0": _lam(lambda x: tnp.hypot(x, 0.0), lambda x: jnp.hypot(x, 0.0)) + ((0.1, 3),),
    "hypot2": _lam(lambda x: tnp.hypot(x, 2.0), lambda x: jnp.hypot(x, 2.0)) + ((-3, 3),),
    "arctan2_x1": _lam(lambda x: tnp.arctan2(x, 1.0), lambda x: jnp.arctan2(x, 1.0)) + ((-3, 3),),
    "arctan2_1x": _lam(lambda x: tnp.arctan2(1.0, x), lambda x: jnp.arctan2(1.0, x)) + ((-3, 3),),
    "where_sqrt": _lam(lambda x: tnp.where(x > 0, tnp.sqrt(tnp.abs(x)), x), lambda x: jnp.where(
        x > 0, jnp.sqrt(jnp.abs(x)), x)) + ((0.1, 3),),
    "divide": _lam(lambda x: 1.0 / x, lambda x: 1.0 / x) + ((0.2, 3),),
    "relu": (tnn.relu, _jx("nn.relu"), (-2, 2)),
    "leaky_relu": (tnn.leaky_relu, _jx("nn.leaky_relu"), (-2, 2)),
    "silu": (tnn.silu, _jx("nn.silu"), (-3, 3)),
    "gelu": (tnn.gelu, _jx("nn.gelu"), (-3, 3)),
    "softplus": (tnn.softplus, _jx("nn.softplus"), (-3, 3)),
    "log_sigmoid": (tnn.log_sigmoid, _jx("nn.log_sigmoid"), (-3, 3)),
    "elu": (tnn.elu, _jx("nn.elu"), (-3, 3)),
    "softsign": (tnn.softsign, _jx("nn.soft_sign"), (-3, 3)),
    "mish": (tnn.mish, _jx("nn.mish"), (-3, 3)),
    "hard_tanh": (tnn.hard_tanh, _jx("nn.hard_tanh"), (-2, 2)),
}
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.0, -2.0, 3.0, 1e-30, 30.0, -30.0, 1e4, 1e20, -1e20,
           INF, -INF, NAN, 0.999, -0.999]
# Second derivatives are staged for these (the kinks and the compositions whose curvature is easy to lose).
SECOND = ["cbrt", "tan", "arcsin", "sinh", "cosh", "arccosh", "arctanh", "sinc", "abs", "round", "pow_int3",
          "clip", "maximum0", "floor_divide", "logaddexp", "logaddexp2", "hypot2", "softsign"]
RANDOM_ROWS = 4


def _known(name: str, x: np.ndarray, second: bool) -> np.ndarray:
    """The points where tensorstage deliberately differs from jax (see the module docstring)."""
    zero, nan, big = x == 0, np.isnan(x), np.abs(x)
    first = {
        "abs": zero | nan, "copysign": zero | nan, "hypot0": big < 1e-20, "leaky_relu": zero, "fmin0": zero,
        "arccosh": x < 1, "arctanh": np.isinf(x), "logaddexp_xx": (big >= 1e4) | np.isinf(x),
        "sinc": ((big > 0) & (big < 1e-20)) | np.isinf(x), "softsign": zero,
    }
    seconds = {
        "arcsin": big == 1, "arccos": big == 1, "arccosh": (x <= 1) | np.isinf(x), "arctanh": (big == 1) | np.isinf(x),
        "sinc": (big < 0.01) | np.isinf(x),
        "softsign": zero, "hypot2": big == 2, "hypot0": zero, "abs": zero, "copysign": zero,
        "logaddexp_xx": (big >= 1e4) | np.isinf(x), "arcsinh": np.isinf(x),
    }
    return (seconds if second else first).get(name, np.zeros(x.shape, bool))


# Regressions, checked without jax: derivative, second derivative at the points below (None: not checked).
EXACT: list[tuple[str, float, float | None, float | None]] = [
    ("arcsin", 1.0, INF, None), ("arcsin", -1.0, INF, None), ("arccos", 1.0, -INF, None),
    ("arccos", -1.0, -INF, None), ("arctanh", 1.0, INF, INF), ("arctanh", -1.0, INF, -INF),
    ("arccosh", 1.0, INF, None), ("sinc", 1e20, 0.0, None), ("sinc", -1e20, 0.0, None), ("sinc", 0.0, 0.0, None),
    ("cosh", 0.0, 0.0, 1.0), ("cosh", -0.0, 0.0, 1.0), ("cbrt", 0.0, INF, -INF), ("cbrt", -0.0, INF, INF),
    ("logaddexp", 0.5, 0.5, 0.25), ("logaddexp2", 0.5, 0.5, math.log(2) / 4), ("logaddexp_xx", 3.0, 1.0, 0.0),
    ("hypot2", 0.0, 0.0, 0.5), ("hypot2", 2.0, 2 / math.sqrt(8), 4 / 8**1.5), ("floor_divide", 1.5, 0.0, 0.0),
    ("floor_divide", 0.0, 0.0, 0.0), ("abs", 0.0, 0.0, 0.0), ("sqrt", 0.0, INF, None), ("relu", 0.0, 0.0, None),
    ("maximum0", 0.0, 0.5, 0.0), ("clip", 1.0, 0.5, 0.0), ("clip", -1.0, 0.5, 0.0), ("pow_int0", 0.0, 0.0, None),
    ("pow_int3", 0.0, 0.0, 0.0), ("pow_x_0.0", 0.0, NAN, None), ("pow_0_y", 2.0, 0.0, None),
    ("pow_-2_y", 3.0, NAN, None), ("floor", 1.0, 0.0, None), ("round", 0.5, 0.0, 0.0), ("sign", 0.0, 0.0, None),
    ("nan_to_num", INF, 0.0, None), ("hard_tanh", 2.0, 0.0, None),
    # the where/select gotcha, as in JAX: the unused branch's infinite slope times a zero cotangent
    ("where_sqrt", 0.0, NAN, None),
]


def _inputs(dtype: Any) -> np.ndarray:
    """One column per function: random points of its domain, the same shifted by ±EPS, the special points, and
    each ``EXACT`` point in its function's column (0.25 in the others)."""
    rng = np.random.default_rng(2026)
    x = np.stack([rng.uniform(lo, hi, RANDOM_ROWS) for _, _, (lo, hi) in UNARY.values()], axis=1)
    specials = np.repeat(np.array(SPECIAL)[:, None], len(UNARY), 1)
    exact = np.full((len(EXACT), len(UNARY)), 0.25)
    for row, (name, at, _, _) in enumerate(EXACT):
        exact[row, list(UNARY).index(name)] = at
    return np.concatenate([x, x + EPS, x - EPS, specials, exact]).astype(dtype)


def _elementwise_grad(fn: Callable[..., Any]) -> Callable[..., Any]:
    return ts.grad(lambda v: tnp.sum(fn(v)))


def _unary_program(full: bool) -> Any:
    """Per function (column of x): its derivative by grad (a vjp), for ``SECOND`` its second derivative by grad of
    grad, and if ``full`` its values and its derivative by jvp along t (ones). Full in f64 only: compiles cost."""

    def run(x: Any, t: Any) -> Any:
        out: dict[str, list[Any]] = {"grad": [], "second": [], "value": [], "jvp": []}
        for k, (name, (fn, _, _)) in enumerate(UNARY.items()):
            col = x[:, k]
            d1 = _elementwise_grad(fn)
            out["grad"].append(d1(col))
            if name in SECOND:
                out["second"].append(_elementwise_grad(d1)(col))
            if full:
                out["value"].append(fn(col))
                out["jvp"].append(ts.jvp(fn, (col,), (t,))[1])
        return out

    return ts.program(run)


_UNARY_PROGRAMS = {True: _unary_program(True), False: _unary_program(False)}


def _on(platform: str, *arrays: Any) -> tuple[Any, ...]:
    """The arrays placed on ``platform`` (programs follow their data) when it is not the default one."""
    return arrays if platform == PLATFORM else tuple(ts.device_put(a, platform) for a in arrays)


def _unary_results(dtype: Any, platform: str = PLATFORM) -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]:
    """The inputs and, per kind of result ("grad", "second", "value", "jvp"), each function's result on
    ``platform``."""
    return _unary_results_on(np.dtype(dtype), platform)


@functools.cache
def _unary_results_on(dtype: np.dtype[Any], platform: str) -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]:
    x = _inputs(dtype)
    raw = _UNARY_PROGRAMS[dtype == np.float64](*_on(platform, x, np.ones(len(x), dtype)))
    names = {"second": [n for n in UNARY if n in SECOND]}
    return x, {kind: dict(zip(names.get(kind, UNARY), map(np.asarray, raw[kind]))) for kind in raw}


def _shifted(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows at the random points, at those + EPS, and at those - EPS."""
    n = RANDOM_ROWS
    return a[:n], a[n:2 * n], a[2 * n:3 * n]


def test_unary_derivatives_match_finite_differences() -> None:
    _, res = _unary_results(np.float64)
    for name, value in res["value"].items():
        grad, jvp = res["grad"][name], res["jvp"][name]
        _, plus, minus = _shifted(value)
        np.testing.assert_allclose(_shifted(grad)[0], (plus - minus) / (2 * EPS), rtol=1e-6, atol=1e-8, err_msg=name)
        # Forward and reverse mode agree, except where reverse mode sends an unused branch's infinite or NaN slope a
        # zero cotangent (NaN), where forward mode gives the chosen branch's derivative: as in JAX.
        keep = ~np.isnan(grad) | np.isnan(jvp)
        np.testing.assert_allclose(jvp[keep], grad[keep], rtol=1e-12, err_msg=name)
    for name, second in res["second"].items():
        _, plus, minus = _shifted(res["grad"][name])
        np.testing.assert_allclose(_shifted(second)[0], (plus - minus) / (2 * EPS), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_derivatives_at_special_points(dtype: Any) -> None:
    x, res = _unary_results(dtype)
    offset = len(x) - len(EXACT)
    for row, (name, at, d1, d2) in enumerate(EXACT, offset):
        forward = 1.0 if name == "where_sqrt" else d1  # forward mode has no where/select gotcha (see above)
        checks = [("grad", d1), ("jvp", forward), ("second", d2)]
        for kind, want in checks:
            if want is not None and name in res[kind]:
                value = float(res[kind][name][row])
                assert value == pytest.approx(want, rel=1e-5, nan_ok=True), (kind, name, at, want, value)


@needs_jax
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_derivatives_match_jax(dtype: Any) -> None:
    x, res = _unary_results(dtype, jax_platform())
    seconds = res["second"] if dtype == np.float64 else {}  # f32: first derivatives (jax compiles cost too)

    def reference(xs: Any) -> Any:
        first, second = {}, {}
        for k, (name, (_, jf, _)) in enumerate(UNARY.items()):
            d1 = jax.grad(lambda v, f=jf: jnp.sum(f(v)))
            first[name] = d1(xs[:, k])
            if name in seconds:
                second[name] = jax.grad(lambda v, g=d1: jnp.sum(g(v)))(xs[:, k])
        return first, second

    with jax.enable_x64(dtype == np.float64):
        want_first, want_second = jax.jit(reference)(x)
    tol = 2e-5 if dtype == np.float32 else 1e-9
    for k, name in enumerate(UNARY):
        for got, want, second in ((res["grad"][name], want_first[name], False),
                                  (seconds.get(name), want_second.get(name), True)):
            if got is None:
                continue
            assert got.dtype == dtype, name
            keep = ~_known(name, x[:, k], second)
            np.testing.assert_allclose(got[keep], np.asarray(want)[keep], rtol=tol, atol=tol,
                                       err_msg=f"{name} {second=}")


def test_eager_derivatives_match_staged() -> None:
    x = np.array([1.0, -1.0, 0.0, 0.3, 2.0])
    for fn in (tnp.arcsin, tnp.cosh, tnp.sinc, lambda v: tnp.logaddexp(v, v), lambda v: tnp.hypot(v, 2.0)):
        eager = ts.grad(lambda v: tnp.sum(fn(v)))(x)
        staged = ts.program(ts.grad(lambda v: tnp.sum(fn(v))))(x)
        np.testing.assert_array_equal(np.asarray(eager), np.asarray(staged))


# ----------------------------------------------------------------------------------------- binary

BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "power": (tnp.power, _jx("numpy.power")), "arctan2": (tnp.arctan2, _jx("numpy.arctan2")),
    "hypot": (tnp.hypot, _jx("numpy.hypot")), "logaddexp": (tnp.logaddexp, _jx("numpy.logaddexp")),
    "logaddexp2": (tnp.logaddexp2, _jx("numpy.logaddexp2")), "maximum": (tnp.maximum, _jx("numpy.maximum")),
    "minimum": (tnp.minimum, _jx("numpy.minimum")), "remainder": (tnp.remainder, _jx("numpy.remainder")),
    "fmod": (tnp.fmod, _jx("numpy.fmod")), "copysign": (tnp.copysign, _jx("numpy.copysign")),
    "divide": (tnp.divide, _jx("numpy.divide")), "multiply": (tnp.multiply, _jx("numpy.multiply")),
    "fmax": (tnp.fmax, _jx("numpy.fmax")), "heaviside": (tnp.heaviside, _jx("numpy.heaviside")),
    "floor_divide": (tnp.floor_divide, _jx("numpy.floor_divide")),
    "clip_lo": (lambda x, y: tnp.clip(x, y, 2.0), lambda x, y: jnp.clip(x, y, 2.0)),
    "clip_hi": (lambda x, y: tnp.clip(x, -2.0, y), lambda x, y: jnp.clip(x, -2.0, y)),
    "where": (lambda x, y: tnp.where(x > y, x * y, y - x), lambda x, y: jnp.where(x > y, x * y, y - x)),
}
GRID = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -3.0, 3.0, INF, -INF, NAN, 1.7, -0.3]


def _binary_known(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    both_zero = (x == 0) & (y == 0)
    same_inf = np.isinf(x) & (x == y)
    known = {
        "hypot": both_zero, "copysign": (x == 0) | np.isnan(x), "fmax": (x == y) | np.isnan(x) | np.isnan(y),
        "heaviside": np.isnan(x), "logaddexp": np.isinf(x) | np.isinf(y) | same_inf,
        "logaddexp2": np.isinf(x) | np.isinf(y) | same_inf,
    }
    return known.get(name, np.zeros(x.shape, bool))


@ts.program
def _binary_grads(x: Any, y: Any) -> Any:
    return [ts.grad(lambda a, b, f=f: tnp.sum(f(a, b)), argnums=(0, 1))(x, y) for f, _ in BINARY.values()]


@ts.program
def _binary_shifted(x: Any, y: Any, tx: Any, ty: Any) -> Any:
    return [(f(x + EPS * tx, y + EPS * ty), f(x - EPS * tx, y - EPS * ty)) for f, _ in BINARY.values()]


def test_binary_derivatives_match_finite_differences(rng: np.random.Generator) -> None:
    x, y = rng.uniform(0.3, 3.0, 16), rng.uniform(-3.0, 3.0, 16)
    y = np.where(np.abs(np.abs(y) - x) < 0.1, y + 0.3, y)  # off the kinks of max, min, fmod, clip...
    grads = _binary_grads(x, y)
    ones, zeros = np.ones_like(x), np.zeros_like(x)
    for which, (tx, ty) in enumerate(((ones, zeros), (zeros, ones))):
        shifted = _binary_shifted(x, y, tx, ty)
        for name, (gx_gy, (plus, minus)) in zip(BINARY, zip(grads, shifted)):
            fd = (np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
            np.testing.assert_allclose(np.asarray(gx_gy[which]), fd, rtol=1e-6, atol=1e-7, err_msg=name)


@needs_jax
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_derivatives_match_jax_on_special_grid(dtype: Any) -> None:
    x, y = (a.ravel().astype(dtype) for a in np.meshgrid(GRID, GRID))
    grads = _binary_grads(*_on(jax_platform(), x, y))
    with jax.enable_x64(dtype == np.float64):
        expected = jax.jit(lambda a, b: [jax.grad(lambda u, v, f=f: jnp.sum(f(u, v)), argnums=(0, 1))(a, b)
                                         for _, f in BINARY.values()])(x, y)
    for name, got, want in zip(BINARY, grads, expected):
        keep = ~_binary_known(name, x, y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g)[keep], np.asarray(w)[keep], rtol=1e-5, atol=1e-6,
                                       err_msg=name)


def test_maximum_gives_no_derivative_to_either_operand_of_a_nan_result() -> None:
    # regression: the non-NaN operand used to get the whole derivative of a NaN result
    gx, gy = ts.program(ts.grad(lambda a, b: tnp.sum(tnp.maximum(a, b) + tnp.minimum(a, b)), argnums=(0, 1)))(
        np.array([NAN, 1.0, 2.0, 2.0]), np.array([1.0, NAN, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(gx), [0.0, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(gy), [0.0, 0.0, 1.0, 1.0])


# ------------------------------------------------------------------------------ structural and others


def _cases(n: Any, lax: Any) -> dict[str, Callable[[Any], Any]]:
    """Functions of a (3, 4) array, written against tensorstage (``n = tnp``) or jax."""
    i = n.array
    ours = n is tnp
    cummax = n.cummax if ours else lax.cummax
    logsumexp = n.logsumexp if ours else jax.nn.logsumexp
    return {
        # reductions, cumulative ops, sorting
        "sum": lambda x: n.sum(x, axis=1), "prod": lambda x: n.prod(x, axis=1), "max": lambda x: n.max(x, axis=1),
        "var": lambda x: n.var(x, axis=1), "std": lambda x: n.std(x, axis=1), "nanmax": lambda x: n.nanmax(x, axis=1),
        "norm": lambda x: n.linalg.norm(x, axis=1), "logsumexp": lambda x: logsumexp(x, axis=1),
        "cumsum": lambda x: n.cumsum(x, axis=1), "cumprod": lambda x: n.cumprod(x, axis=1),
        "cummax": lambda x: cummax(x, axis=1), "sort": lambda x: n.sort(x, axis=1),
        "sort0": lambda x: n.sort(x, axis=0), "median": lambda x: n.median(x, axis=1),
        "quantile": lambda x: n.quantile(x, 0.3, axis=1),
        "argsort": lambda x: n.take_along_axis(x, n.argsort(x, axis=1), axis=1),
        "argmax": lambda x: n.take_along_axis(x, n.argmax(x, axis=1)[:, None], axis=1),
        # linalg
        "matmul": lambda x: x @ x.T, "dot": lambda x: n.dot(x[0], x[1]),
        "einsum": lambda x: n.einsum("ij,kj->ik", x, x * 2), "det": lambda x: n.linalg.det(x[:, :3]),
        "inv": lambda x: n.linalg.inv(x[:, :3] + 3 * n.eye(3, dtype=x.dtype)),
        # indexing, gather, scatter with repeated indices
        "getitem": lambda x: x[1:, ::2], "fancy": lambda x: x[i([0, 2, 2]), i([1, 1, 3])],
        "take": lambda x: n.take(x, i([3, 0, 3, 3]), axis=1),
        "set_repeated": lambda x: x.at[i([0, 0, 2]), 1].set(x[1, :3] * 2),
        "add_repeated": lambda x: x.at[i([0, 0, 2]), 1].add(x[1, :3] * 2),
        "multiply": lambda x: x.at[1].multiply(x[2]), "max_repeated": lambda x: x.at[i([0, 0, 2])].max(x[1] * 0.5),
        "min_repeated": lambda x: x.at[0, i([1, 1])].min(x[2, :2]),
        # joining, padding, rearranging
        "concatenate": lambda x: n.concatenate([x, x[:1] * 3], axis=0), "pad": lambda x: n.pad(x, ((1, 0), (2, 1))),
        "pad_reflect": lambda x: n.pad(x, ((1, 1), (2, 1)), mode="reflect"),
        "pad_edge": lambda x: n.pad(x, ((1, 1), (0, 2)), mode="edge"), "reshape": lambda x: n.reshape(x, (4, 3)),
        "transpose": lambda x: n.transpose(x), "roll": lambda x: n.roll(x, 2, axis=1),
        "repeat": lambda x: n.repeat(x, 2, axis=0),
        # selection and kinks
        "where": lambda x: n.where(x > 0, x, 0.0), "maximum_ties": lambda x: n.maximum(x, n.round(x)),
        "clip_array": lambda x: n.clip(x, x[0:1], 0.5), "abs_sum": lambda x: n.sum(n.abs(x - x[0:1]), axis=0),
        # control flow
        "cond": lambda x: lax.cond(n.sum(x) > 0, lambda a: n.sin(a) * 2, lambda a: a**2, x),
        "fori_loop": lambda x: lax.fori_loop(0, 3, lambda k, c: n.cos(c) * 1.5, x),
        "scan": lambda x: lax.scan(lambda c, r: (c * r, c + r), x[0], x[1:])[1],
        "scan_reverse": lambda x: lax.scan(lambda c, r: (n.sin(c) * r, c * r), x[0], x[1:], reverse=True)[0],
    }


def _while(x: Any) -> Any:  # forward mode only (here and in jax): finite differences only
    return ts.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, tnp.sin(c[1]) * 1.5), (0, x))[1]


# partition: which of tied elements lands where is unspecified (NumPy), and differs from jax's: no ties here
TS_CASES = {**_cases(tnp, ts), "while_loop": _while, "partition": lambda x: tnp.partition(x, 2, axis=1)}
# Forward mode too for these (the rest: reverse mode; the registry's tests check every JVP rule).
FORWARD = {"while_loop", "cond", "scan_reverse", "sort", "multiply", "max_repeated", "set_repeated", "cumprod",
           "det"}
TIES = np.array([[1.0, 2.0, 2.0, -1.0], [0.5, 0.5, 0.5, 0.5], [-1.0, 3.0, 3.0, 0.0]])


def _weights(rng: np.random.Generator) -> list[np.ndarray]:
    staged = ts.program(lambda x: [f(x) for f in TS_CASES.values()]).stage(TIES)  # shapes only: no compile
    return [rng.standard_normal(out.aval.shape) for out in staged.graph.outputs]


def _loss(f: Callable[[Any], Any], w: Any, n: Any) -> Callable[[Any], Any]:
    return lambda x: n.sum(n.sin(f(x)) * w)


@ts.program
def _structural(x: Any, t: Any, ws: Any) -> Any:
    """Per case: the loss at x ± EPS t, its derivative along t by jvp (``FORWARD``; else 0) and its gradient (but
    for while_loop: 0)."""
    out = []
    for name, f, w in zip(TS_CASES, TS_CASES.values(), ws):  # the jax cases come first, in the same order
        loss = _loss(f, w, tnp)
        grad = tnp.zeros_like(x) if name == "while_loop" else ts.grad(loss)(x)
        jvp = ts.jvp(loss, (x,), (t,))[1] if name in FORWARD else tnp.zeros((), x.dtype)
        out.append((loss(x + EPS * t), loss(x - EPS * t), jvp, grad))
    return out


def test_structural_derivatives_match_finite_differences(rng: np.random.Generator) -> None:
    ws = _weights(rng)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    for name, (plus, minus, jvp, grad) in zip(TS_CASES, _structural(x, t, ws)):
        if PLATFORM == "gpu" and name in GPU_SKIPS:
            continue
        expected = (float(plus) - float(minus)) / (2 * EPS)
        if name in FORWARD:
            assert float(jvp) == pytest.approx(expected, rel=1e-6, abs=1e-8), name
        if name != "while_loop":
            assert float(np.sum(np.asarray(grad) * t)) == pytest.approx(expected, rel=1e-6, abs=1e-8), name


@needs_jax
def test_structural_derivatives_match_jax_with_ties(rng: np.random.Generator) -> None:
    ws = _weights(rng)
    x = np.concatenate([TIES, rng.standard_normal((3, 4))]).reshape(2, 3, 4)
    with jax.enable_x64(True):
        cases = _cases(jnp, jax.lax)
        expected = jax.jit(jax.vmap(lambda v: [jax.grad(_loss(f, w, jnp))(v) for f, w in zip(cases.values(), ws)]))(x)
    for k in range(2):
        got = _structural(*_on(jax_platform(), x[k], np.zeros((3, 4))), list(_on(jax_platform(), *ws)))
        for j, name in enumerate(cases):
            np.testing.assert_allclose(np.asarray(got[j][3]), np.asarray(expected[j][k]), rtol=1e-8, atol=1e-10,
                                       err_msg=f"{name} ({'ties' if k == 0 else 'random'})")


def test_scatter_multiply_derivatives_with_zero_updates() -> None:
    # regression: the derivative with respect to the updates divided by them (NaN at zero updates)
    idx = np.array([0, 1, 1, 2, 2, 3, 3])
    operand, updates = np.array([1.0, 2.0, 0.5, 3.0]), np.array([2.0, 0.0, 1.5, 3.0, 0.0, 0.0, 0.0])

    def f(a: Any, u: Any) -> Any:
        return tnp.sum(a.at[idx].multiply(u) * tnp.arange(1.0, 5.0, dtype=np.float64))

    ga, gu = ts.program(ts.grad(f, argnums=(0, 1)))(operand, updates)
    np.testing.assert_array_equal(np.asarray(ga), [2.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(gu), [1.0, 2 * 2 * 1.5, 0.0, 0.0, 3 * 0.5 * 3, 0.0, 0.0])
    tangent = ts.program(lambda a, u, t: ts.jvp(lambda v: a.at[idx].multiply(v), (u,), (t,))[1])(
        operand, updates, np.ones(7))
    np.testing.assert_array_equal(np.asarray(tangent), [1.0, 3.0, 1.5, 0.0])


# ------------------------------------------------------------------------------ transforms together


def _mixed(n: Any) -> Callable[[Any], Any]:
    def f(v: Any) -> Any:
        return n.sum(n.arcsin(v) * n.logaddexp(v, v[::-1]) + n.hypot(v, 0.3) * n.cosh(v)
                     + n.maximum(v, v[::-1]) * n.sort(v))

    return f


@ts.program
def _together(x: Any, t: Any) -> Any:
    f = _mixed(tnp)
    g = ts.grad(f)
    loop = [g(x[k]) for k in range(x.shape[0])]
    y, lin = ts.linearize(f, x[0])
    return (ts.vmap(g)(x), loop, ts.hessian(f)(x[0]), ts.jacfwd(ts.jacrev(f))(x[0]), g(x[0] + EPS * t),
            g(x[0] - EPS * t), lin(t), ts.jvp(f, (x[0],), (t,))[1])


def test_vmap_grad_hessian_and_linearize_agree(rng: np.random.Generator) -> None:
    x, t = rng.uniform(-0.9, 0.9, (4, 5)), rng.standard_normal(5)
    vg, loop, hess, fwd_rev, g_plus, g_minus, lin, jvp = _together(x, t)
    np.testing.assert_allclose(np.asarray(vg), np.stack([np.asarray(r) for r in loop]), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(np.asarray(hess), np.asarray(fwd_rev), rtol=1e-12, atol=1e-12)
    fd = (np.asarray(g_plus) - np.asarray(g_minus)) / (2 * EPS)
    np.testing.assert_allclose(np.asarray(hess) @ t, fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(lin), float(jvp), rtol=1e-13)
    if jax is not None:
        with jax.enable_x64(True):
            expected = jax.jit(jax.hessian(_mixed(jnp)))(x[0])
        np.testing.assert_allclose(np.asarray(hess), np.asarray(expected), rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------------------------ integer and bool inputs

INT_CASES = {
    "grad": lambda x: ts.grad(lambda v: tnp.sum(v.astype(np.float32)))(x),
    "value_and_grad": lambda x: ts.value_and_grad(lambda v: tnp.sum(v.astype(np.float32)))(x),
    "jacfwd": lambda x: ts.jacfwd(lambda v: v.astype(np.float32))(x),
    "jacrev": lambda x: ts.jacrev(lambda v: v.astype(np.float32))(x),
    "hessian": lambda x: ts.hessian(lambda v: tnp.sum(v.astype(np.float32) ** 2))(x),
}


@pytest.mark.parametrize("name", list(INT_CASES))
@pytest.mark.parametrize("value", [np.arange(3, dtype=np.int32), np.array([True, False]), 3],
                         ids=["i32", "bool", "python_int"])
def test_integer_and_bool_inputs_are_a_clear_error(name: str, value: Any) -> None:
    with pytest.raises(TypeError, match=rf"(?s){name.split('_')[-1]}.*floating-point.*test_fuzz_derivatives\.py"):
        ts.program(INT_CASES[name])(value)


def test_integer_primals_get_zero_tangents() -> None:
    x = np.arange(3, dtype=np.int32)
    _, tangent = ts.program(lambda v: ts.jvp(lambda u: u * 2, (v,), (v,)))(x)
    (cotangent,) = ts.program(lambda v: ts.vjp(lambda u: u * 2, v)[1](v))(x)
    for out in (tangent, cotangent):
        assert np.asarray(out).dtype == np.int32 and not np.asarray(out).any()
