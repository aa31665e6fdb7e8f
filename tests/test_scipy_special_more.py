"""ts.scipy.special's dawsn, spence, expn, sici, fresnel, owens_t and bernoulli against SciPy float64: one staged
program per dtype over wide seeded grids (every branch and its switch points), SciPy's values at the edges (f64, f32,
f16), gradients against the closed-form derivatives (themselves checked by finite differences) and jax, vmap,
refusals; 40-digit reference values where SciPy is less accurate."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import scipy.special as ss

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import special as tsp

# name -> (function of the operands, the operands' names)
FUNCTIONS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "dawsn": (lambda m, x: m.dawsn(x), ("dawsn",)),
    "spence": (lambda m, x: m.spence(x), ("spence",)),
    "expn": (lambda m, n, x: m.expn(n, x), ("n", "expn")),
    "si": (lambda m, x: m.sici(x)[0], ("sici",)),
    "ci": (lambda m, x: m.sici(x)[1], ("sici",)),
    "fresnel_s": (lambda m, x: m.fresnel(x)[0], ("fresnel",)),
    "fresnel_c": (lambda m, x: m.fresnel(x)[1], ("fresnel",)),
    "owens_t": (lambda m, h, a: m.owens_t(h, a), ("owens_h", "owens_a")),
}


def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every branch and switch (dawsn: 4 in f32, 6 in f64; spence: 1/2, 2; expn: x = 1, n = 25; sici: 4; fresnel:
    1.5, 2^7 in f32, 2^14 in f64)."""
    n_count = 90
    return {
        "dawsn": np.concatenate([rng.uniform(-12, 12, 70), np.geomspace(1e-30, 1e30, 20), [4.0, -6.0, 5.99]]),
        "spence": np.concatenate([rng.uniform(0, 4, 60), np.geomspace(1e-30, 1e30, 30), [0.5, 2.0, 1.0]]),
        "n": np.concatenate([rng.integers(0, 50, n_count - 10), [1, 1, 24, 25, 2, 3, 60, 1000, 10**5, 10**7]]),
        "expn": np.concatenate([rng.uniform(0, 4, n_count - 10), [1.0, 0.999, 0.5, 0.5, 5.0, 1e-8, 3.0, 2.0, 30.0,
                                                                   0.1]]),
        "sici": np.concatenate([rng.uniform(-40, 40, 70), np.geomspace(1e-30, 1e30, 20), [4.0, -4.0, 3.99]]),
        "fresnel": np.concatenate([rng.uniform(-6, 6, 60), np.geomspace(1e-30, 40, 30), [1.5, -1.5, 2**7, 30.5]]),
        "owens_h": np.concatenate([rng.uniform(-7, 7, 70), [0.0, 1.0, 9.0, 3.0, 2.0, 0.5]]),
        "owens_a": np.concatenate([rng.uniform(-12, 12, 70), [3.0, 1.0, 0.5, 1e-9, 1e5, 1.0]]),
    }


# Where SciPy itself is less accurate (checked against 50-digit references, where ours is within 3 ulps there):
# its dawsn near x = 0.011 (1.4e-14), expn for n > 50 (its expansion in n: 4e-14), spence near 1/2 (1.6e-15),
# fresnel's phase pi x² / 2 rounded (pi x² eps: 1e-14 at x = 40), owens_t (1.5e-13 for |h| < 7; see
# test_owens_t_is_accurate_where_scipys_is_not); Ci is compared absolutely beside its zeros (_ci_scale).
F64_RTOL = {"dawsn": 3e-14, "spence": 4e-15, "expn": 6e-14, "si": 2e-15, "ci": 2e-15, "fresnel_s": 3e-14,
            "fresnel_c": 3e-14, "owens_t": 4e-13}
F32_RTOL = {"owens_t": 8e-6}  # T's condition number in h is ~h²: 1 ulp of h is 25 ulps of T at h = 7


def _ci_scale(x: np.ndarray) -> np.ndarray:
    """Ci's scale beside its zeros, where no relative tolerance holds: its local amplitude ``|Ci(x) + i (Si(x) -
    pi/2)|`` (= |E1(ix)|: never 0, ~1/x far out), and below ``|x| = 4`` at least 1, the size of the power series'
    terms there, which cancel to Ci's value near its zeros 0.6165 and 3.3842. Errors measured on a dense grid of
    (-40, 40) and 1e-30..1e30: at most 5.9 / 8.0 eps (f32 / f64) of this scale for |x| in [1, 4), 3.6 elsewhere (a
    fixed 2 eps absolute failed near x = 3.39 and 3.88 for some seeds, in both dtypes, and allowed 1e30 times Ci's
    size far out)."""
    si, ci = ss.sici(x)
    amplitude = np.hypot(ci, np.abs(si) - np.pi / 2)
    return np.where(np.abs(x) < 4, np.maximum(amplitude, 1.0), amplitude)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_functions_match_scipy(dtype: Any, rng: np.random.Generator) -> None:
    inputs = {k: v.astype(dtype) for k, v in _inputs(rng).items()}

    def everything(v: dict[str, Any]) -> dict[str, Any]:
        return {name: fn(tsp, *(v[a] for a in args)) for name, (fn, args) in FUNCTIONS.items()}

    got = ts.program(everything)(inputs)
    for name, (fn, args) in FUNCTIONS.items():
        with np.errstate(all="ignore"):
            want = fn(ss, *(inputs[a].astype(np.float64) for a in args))
        result = np.asarray(got[name])
        assert result.dtype == dtype and result.shape == want.shape, name
        rtol = F64_RTOL[name] if dtype == np.float64 else F32_RTOL.get(name, 2e-6)
        atol = 0.0
        if dtype == np.float32:  # subnormal results: XLA flushes them to 0 on CPU, a GPU keeps them
            atol = float(np.finfo(np.float32).tiny)
        if name == "ci":  # |got - want| <= rtol |want| + 10 eps scale, as a comparison of got / scale
            scale = _ci_scale(inputs["sici"].astype(np.float64))
            result, want, atol = result / scale, want / scale, 10 * float(np.finfo(dtype).eps)
        np.testing.assert_allclose(result, want, rtol=rtol, atol=atol, err_msg=name)


EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -1e-300, 1e-300, 1e300, 3.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_edges_are_scipys(dtype: Any) -> None:
    with np.errstate(over="ignore"):  # 1e300 becomes inf in f32 and f16: an edge too
        x = EDGES.astype(dtype)
    n = np.array([np.nan, 1.0, 0.0, 2.0, 1.0, -1.0, np.inf, 0.0, 3.0, 2.7]).astype(dtype)
    operands = {name: (n, x) if len(args) == 2 else (x,) for name, (_, args) in FUNCTIONS.items()}
    everything = ts.program(lambda v: {name: fn(tsp, *v[name]) for name, (fn, _) in FUNCTIONS.items()})(operands)
    for name, (fn, args) in FUNCTIONS.items():
        got = np.asarray(everything[name])
        assert got.dtype == dtype, name
        with np.errstate(all="ignore"):
            want = fn(ss, *(o.astype(np.float64) for o in operands[name])).astype(dtype)
        if name.startswith("fresnel"):  # SciPy's is NaN where its x² overflows (x > 1.3e154); the limit is ±1/2
            want = np.where(np.isnan(want) & ~np.isnan(x), np.copysign(0.5, x), want)
        np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == np.float16 else 1e-6, err_msg=name)
        numbers = ~np.isnan(want) & (want == 0)  # the sign of a zero is SciPy's too
        np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]), err_msg=name)


def test_fresnel_far_out_has_an_exact_phase() -> None:
    """x = 1e5 + 1/2: x² = 1e10 + 1e5 + 1/4 exactly, so pi x² / 2 = pi/8 mod 2 pi; SciPy rounds pi x² / 2 (phase
    error ~1e-6 here)."""
    x = 1e5 + 0.5
    s, c = (float(np.asarray(v)[0]) for v in tsp.fresnel(np.array([x])))
    f, g = 1 / (np.pi * x) * (1 - 3 / (np.pi * x * x) ** 2), 1 / (np.pi**2 * x**3)
    phase = np.pi / 8
    assert c == pytest.approx(0.5 + f * np.sin(phase) - g * np.cos(phase), rel=2e-16, abs=0)
    assert s == pytest.approx(0.5 - f * np.cos(phase) - g * np.sin(phase), rel=2e-16, abs=0)


# (h, a, T) from 40-digit quadrature; SciPy's owens_t is off by 1e-12 .. 2e-7 relative at some of these
OWENS_REFERENCE = [(0.5, 1e-9, 1.4045374430962519e-10), (3.0, 0.999, 0.0006740280335745287),
                   (7.5, 0.3, 1.560043235363449e-14), (12.0, 2.5, 8.882410560388395e-34),
                   (21.9, 0.5, 6.494517312307876e-107), (5.0, 1e6, 1.4332578593959696e-07),
                   (2.0, 30.0, 0.011375065974089604)]


def test_owens_t_is_accurate_where_scipys_is_not() -> None:
    h, a, want = (np.array(v) for v in zip(*OWENS_REFERENCE))
    got = np.asarray(tsp.owens_t(h, a))
    bound = 4 * (1 + h * h / 2) * np.finfo(np.float64).eps  # h's conditioning
    assert np.all(np.abs(got - want) <= bound * want), (got - want) / want


def test_bernoulli_is_scipys() -> None:
    got = np.asarray(tsp.bernoulli(30))
    assert got.shape == (31,) and got.dtype == np.float32
    np.testing.assert_allclose(got, ss.bernoulli(30), rtol=1e-7)
    np.testing.assert_array_equal(np.asarray(tsp.bernoulli(0)), [1.0])
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match="bernoulli: n must be a non-negative int"):
            tsp.bernoulli(bad)  # type: ignore[arg-type]


def _d_owens_h(h: np.ndarray) -> np.ndarray:
    return -np.exp(-h * h / 2) / np.sqrt(2 * np.pi) * ss.erf(0.7 * h / np.sqrt(2)) / 2


DERIVATIVES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any], Callable[[np.ndarray], np.ndarray],
                             np.ndarray]] = {
    "dawsn": (tsp.dawsn, ss.dawsn, lambda x: 1 - 2 * x * ss.dawsn(x),
              np.array([-8.0, -0.5, 0.0, 1e-3, 2.0, 4.0, 5.99, 6.0])),
    "spence": (tsp.spence, ss.spence, lambda x: np.log(x) / (1 - x),
               np.array([1e-3, 0.3, 0.5, 0.7, 1.5, 2.0, 2.5, 100.0])),
    "expn": (lambda x: tsp.expn(3.0, x), lambda x: ss.expn(3, x), lambda x: -ss.expn(2, x),
             np.array([1e-3, 0.5, 1.0, 1.5, 10.0, 100.0])),
    "si": (lambda x: tsp.sici(x)[0], lambda x: ss.sici(x)[0], lambda x: np.sinc(x / np.pi),
           np.array([-9.0, -4.0, 0.0, 0.7, 3.99, 50.0])),
    "ci": (lambda x: tsp.sici(x)[1], lambda x: ss.sici(x)[1], lambda x: np.cos(x) / x,
           np.array([1e-3, 0.7, 3.99, 4.0, 50.0])),
    "fresnel_s": (lambda x: tsp.fresnel(x)[0], lambda x: ss.fresnel(x)[0], lambda x: np.sin(np.pi * x * x / 2),
                  np.array([-3.3, 0.0, 0.4, 1.49, 1.5, 2.2, 7.7])),
    "fresnel_c": (lambda x: tsp.fresnel(x)[1], lambda x: ss.fresnel(x)[1], lambda x: np.cos(np.pi * x * x / 2),
                  np.array([-3.3, 0.0, 0.4, 1.49, 1.5, 2.2, 7.7])),
    "owens_t_h": (lambda h: tsp.owens_t(h, 0.7), lambda h: ss.owens_t(h, 0.7), _d_owens_h,
                  np.array([-3.0, -0.2, 0.0, 0.9, 2.5, 6.0])),
    "owens_t_a": (lambda a: tsp.owens_t(1.3, a), lambda a: ss.owens_t(1.3, a),
                  lambda a: np.exp(-1.3**2 * (1 + a * a) / 2) / (2 * np.pi * (1 + a * a)),
                  np.array([-4.0, -0.5, 0.0, 0.99, 1.0, 1.01, 7.0])),
}


def _total(fns: dict[str, Callable[[Any], Any]]) -> Callable[[dict[str, Any]], Any]:
    """The sum of every function over its own points: one program whose gradient holds every derivative."""
    return lambda v: sum(tnp.sum(fn(v[name])) for name, fn in fns.items())


def test_gradients_are_the_derivatives() -> None:
    points = {name: x for name, (_, _, _, x) in DERIVATIVES.items()}
    grads = ts.grad(_total({name: fn for name, (fn, _, _, _) in DERIVATIVES.items()}))(points)
    for name, (_, reference, derivative, x) in DERIVATIVES.items():
        exact = derivative(x)
        np.testing.assert_allclose(np.asarray(grads[name]), exact, rtol=1e-12, atol=1e-14, err_msg=name)
        h = 1e-6 * np.maximum(np.abs(x), 1e-3)
        with np.errstate(all="ignore"):
            fd = (reference(x + h) - reference(x - h)) / (2 * h)
        np.testing.assert_allclose(exact, fd, rtol=1e-6, atol=1e-8, err_msg=name)  # the closed forms are right


def test_gradients_match_jax() -> None:
    jax = pytest.importorskip("jax")
    from jax.scipy import special as js

    x = np.array([0.3, 0.9, 1.7, 3.2, 5.0])
    names = ("dawsn", "si", "ci")  # (jax's spence gradient is NaN at 1.7; its fresnel costs 1 s to compile)
    got = ts.grad(_total({name: (lambda v, f=FUNCTIONS[name][0]: f(tsp, v)) for name in names}))(
        {name: x for name in names})
    with jax.enable_x64(True):
        for name in names:
            fn = FUNCTIONS[name][0]
            want = np.asarray(jax.vmap(jax.grad(lambda v: fn(js, v)))(x))
            np.testing.assert_allclose(np.asarray(got[name]), want, rtol=1e-9, atol=1e-15, err_msg=name)


def test_vmap_matches_a_loop(rng: np.random.Generator) -> None:
    x = rng.uniform(0.1, 8, (3, 5))
    n = np.array([0.0, 1.0, 2.0, 5.0, 30.0])

    def row_fn(m: Any, row: Any) -> Any:
        si, ci = m.sici(row)
        s, c = m.fresnel(row)
        return m.dawsn(row) + m.spence(row) + m.expn(n, row) + si + ci + s + c + m.owens_t(row - 4, n - 2)

    got = ts.vmap(lambda row: row_fn(tsp, row))(x)
    want = np.stack([row_fn(ss, r) for r in x])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13)


def test_integer_operands_are_refused() -> None:
    with pytest.raises(ts.DTypeError, match="dawsn needs a floating-point operand"):
        tsp.dawsn(np.array([1, 2]))
    with pytest.raises(ts.DTypeError, match="sici needs a floating-point operand"):
        tsp.sici(np.array([1, 2]))
    with pytest.raises(ts.DTypeError, match="expn"):
        tsp.expn(np.array([1, 2]), np.array([1.0, 2.0]))


# ------------------------------------------------------------------------------------- bessel_jn and hyp1f1


def _bessel_envelope_error(got: np.ndarray, z: np.ndarray, v: int) -> np.ndarray:
    """|got - jv| in units of eps max(|J_n(z)|, min(1, sqrt(2 / (pi |z|)))): absolute beside J's zeros."""
    want = ss.jv(np.arange(v + 1)[:, None], z.astype(np.float64))
    with np.errstate(divide="ignore"):
        envelope = np.maximum(np.abs(want), np.minimum(1, np.sqrt(2 / np.pi / np.abs(z.astype(np.float64)))))
    return np.abs(got - want) / envelope / np.finfo(got.dtype).eps


def _hyp1f1_inputs(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positive a, b (JAX's domain) with x of both signs, through the series, Kummer's transformation and the
    asymptotic expansion (|x| > 30), and a < 0 (where the series may cancel: NaN allowed there)."""
    count = 300
    a = np.concatenate([rng.uniform(0, 10, count), rng.uniform(-10, 0, 60), [3.0, -2.0, 1.0, 0.5]])
    b = np.concatenate([rng.uniform(0.05, 10, count + 60), [3.0, 2.5, 2.0, 7.0]])
    x = np.concatenate([rng.uniform(-30, 30, count // 2), rng.uniform(-300, 300, count // 2),
                        rng.uniform(-20, 20, 60), [-700.0, 5.0, 650.0, 1e-5]])
    return a, b, x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bessel_jn_and_hyp1f1_match_scipy(dtype: Any, rng: np.random.Generator) -> None:
    z = np.concatenate([rng.uniform(-30, 30, 200), rng.uniform(-300, 300, 50), [0.0, 1e-30, -24.9, 25.0, 1e4]])
    a, b, x = _hyp1f1_inputs(rng)
    operands = {"z": z.astype(dtype), "a": a.astype(dtype), "b": b.astype(dtype), "x": x.astype(dtype)}
    got = ts.program(lambda v: {"j": tsp.bessel_jn(v["z"], v=13), "j2": tsp.bessel_jn(v["z"], v=2, n_iter=5),
                                "m": tsp.hyp1f1(v["a"], v["b"], v["x"])})(operands)
    j = np.asarray(got["j"])
    assert j.shape == (14, z.size) and j.dtype == dtype
    # SciPy's jv is itself off by up to ~35 eps of the envelope here (ours: within 3 of 40-digit references)
    assert _bessel_envelope_error(j, operands["z"], 13).max() < (40 if dtype == np.float64 else 12)
    assert _bessel_envelope_error(np.asarray(got["j2"]), operands["z"], 2).max() < 40  # n_iter: a lower bound
    m = np.asarray(got["m"])
    want = ss.hyp1f1(*(operands[k].astype(np.float64) for k in "abx")).astype(dtype)
    computed = ~np.isnan(m)
    positive = (operands["a"] >= 0) & ((operands["x"] >= 0) | (operands["a"] <= operands["b"]))
    assert computed[positive].all()  # no cancellation there: always computed
    assert computed.mean() > 0.9
    # SciPy's own error reaches 4e-11 at some of these (ours bounds its error by 2^-36 or returns NaN)
    np.testing.assert_allclose(m[computed], want[computed], rtol=1e-10 if dtype == np.float64 else 2e-7)


def test_bessel_jn_layout_edges_and_refusals() -> None:
    z = np.array([[0.0, -0.0, np.inf], [-np.inf, np.nan, -2.5]])
    got = np.asarray(tsp.bessel_jn(z, v=3))
    assert got.shape == (4, 2, 3)
    want = ss.jv(np.arange(4)[:, None, None], z)  # NaN at ±inf too
    want[0, 0, :2] = 1.0  # (SciPy: J_0(0) = 1, J_n(0) = 0)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300)
    assert np.asarray(tsp.bessel_jn(np.float16(3.0), v=0)).dtype == np.float16
    assert np.asarray(tsp.bessel_jn(np.float16(3.0), v=0)).shape == (1,)
    for bad, error, message in [(-1, ValueError, "v must be >= 0"), (1.5, TypeError, "v must be an int"),
                                (True, TypeError, "v must be an int")]:
        with pytest.raises(error, match=f"bessel_jn: {message}"):
            tsp.bessel_jn(z, v=bad)
    with pytest.raises(ts.DTypeError, match="bessel_jn needs a floating-point operand"):
        tsp.bessel_jn(np.array([1, 2]), v=2)


def test_hyp1f1_edges() -> None:
    inf, nan = np.inf, np.nan
    cases = [(0.0, 2.0, 5.0, 1.0), (0.0, 0.0, 1.0, inf), (1.0, 0.0, 1.0, inf), (1.0, -2.0, 1.0, inf),
             (-1.0, -2.0, 1.0, 1.5), (-1.0, -1.0, 1.0, 2.0), (-3.0, 2.0, 10.0, -17 / 3), (2.0, 2.0, 3.0, np.exp(3.0)),
             (1.0, 2.0, inf, inf), (1.0, 2.0, -inf, 0.0), (1.0, 2.0, 0.0, 1.0), (1.0, 2.0, nan, nan),
             (nan, 2.0, 1.0, nan), (1.0, 2.0, -800.0, 0.00125), (1.0, 2.0, 800.0, inf), (1.5, -2.5, 1.0, nan)]
    a, b, x, want = (np.array(c) for c in zip(*cases))
    np.testing.assert_allclose(np.asarray(tsp.hyp1f1(a, b, x)), want, rtol=1e-14)
    with pytest.raises(ts.DTypeError, match="hyp1f1"):
        tsp.hyp1f1(np.array([1, 2]), 1.0, 1.0)


def test_bessel_jn_and_hyp1f1_gradients_and_vmap(rng: np.random.Generator) -> None:
    z = np.array([-7.0, 0.0, 0.3, 2.0, 24.9, 25.0, 40.0])
    a, b = np.array([0.5, 2.0, 3.5, 1.0, 4.0, 2.0, 0.7]), np.array([1.5, 3.0, 2.0, 2.0, 6.0, 2.0, 0.2])
    x = np.array([-40.0, -3.0, 0.5, 2.0, 10.0, 45.0, -8.0])
    grads = ts.grad(lambda v: tnp.sum(tsp.bessel_jn(v["z"], v=3)[2]) + tnp.sum(tsp.hyp1f1(a, b, v["x"])))(
        {"z": z, "x": x})
    np.testing.assert_allclose(np.asarray(grads["z"]), (ss.jv(1, z) - ss.jv(3, z)) / 2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(grads["x"]), a / b * ss.hyp1f1(a + 1, b + 1, x), rtol=1e-11)
    rows = rng.uniform(-30, 30, (3, 4))
    got = ts.vmap(lambda r: tsp.bessel_jn(r, v=2)[1] + tsp.hyp1f1(1.5, 2.5, r))(rows)
    np.testing.assert_allclose(np.asarray(got), ss.jv(1, rows) + ss.hyp1f1(1.5, 2.5, rows), rtol=1e-12, atol=1e-15)
    jax = pytest.importorskip("jax")
    from jax.scipy import special as js

    with jax.enable_x64(True):  # where JAX's values are accurate: moderate z (hyp1f1's: checked by a/b 1F1 above)
        want_z = jax.vmap(jax.grad(lambda s: js.bessel_jn(s, v=3)[2]))(z[2:5])
    np.testing.assert_allclose(np.asarray(grads["z"])[2:5], np.asarray(want_z), rtol=1e-9)
