"""ts.scipy.special.hyp1f1 where its series cancel (``x < 0 < b < a`` and ``x > 0 > a``, through the recurrence in
``b``) against exact values (the series summed in 220-digit decimal arithmetic): values in f64 (staged, with the
gradient in a, b, x and vmap in the same program) and f32 (eager), and NaN rather than a doubtful value where even
the recurrence fails. jax.scipy.special.hyp1f1 is no oracle here: its series cancel too (wrong leading digits)."""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import scipy.special as ss

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy import special as tsp

TOLERANCE = 2.0**-36  # the module's bound: a value is returned only where its error estimate is below it


def _exact_one(a: float, b: float, x: float) -> float:
    """``1F1(a; b; x)`` for ``b > 0`` by its series in 220-digit arithmetic (the cancellation here is < 1e100)."""
    with localcontext() as context:
        context.prec = 220
        top, bottom, z = Decimal(a), Decimal(b), Decimal(x)
        term = total = Decimal(1)
        k = 0
        while top + k != 0:
            term = term * (top + k) / (bottom + k) * z / (k + 1)
            total += term
            k += 1
            if k > abs(a) + 2 * abs(x) + 10 and abs(term) < abs(total) * Decimal(10) ** -60:
                break
        return float(total)


def _exact(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    flat = [t.ravel() for t in np.broadcast_arrays(a, b, x)]
    return np.array([_exact_one(*map(float, p)) for p in zip(*flat)]).reshape(np.broadcast_shapes(a.shape, b.shape,
                                                                                                  x.shape))


def _inputs(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both cancelling regions (|a|, b up to 40, |x| up to 80), small b, and fixed points."""
    count = 110
    large = rng.uniform(0, 40, count)
    a = np.concatenate([large, rng.uniform(-40, 0, count), [-20.7, 30.2, -0.5, 45.0, -3.5]])
    b = np.concatenate([rng.uniform(0.02, 1, count) * large, rng.uniform(0.02, 40, count),
                        [10.2, 20.1, 0.3, 2.0, 1e-3]])
    x = np.concatenate([rng.uniform(-80, 0, count), rng.uniform(0, 80, count), [40.0, -60.0, 90.0, -1.0, 7.0]])
    return a, b, x


def _hard_points() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the recurrence loses digits or cannot start: ``a`` within 1e-9 of a negative integer with large ``x``
    (the recurrence's errors grow past zeros of 1F1 in b), ``|a| x`` past the loop's reach, a zero of 1F1, integer
    ``a`` (-20: a polynomial; 7 with ``x < 0``: ``exp(x)`` times one, by Kummer's transformation)."""
    a = np.array([-10.0 + 7e-8, -15.0 + 4e-14, -11.0 + 8e-12, -200.3, -60.5, 230.0, -3.0528, -20.0, 7.0])
    b = np.array([1.75, 1.9, 8.7, 3.0, 1.5, 2.0, 1.2946, 3.5, 2.5])
    x = np.array([83.0, 92.0, 84.5, 100.0, 300.0, -100.0, 2.554, 30.0, -30.0])
    return a, b, x


def test_hyp1f1_fills_the_cancelling_regions(rng: np.random.Generator) -> None:
    a, b, x = _inputs(rng)
    ha, hb, hx = _hard_points()
    values = {"a": np.concatenate([a, ha]), "b": np.concatenate([b, hb]), "x": np.concatenate([x, hx])}

    def total(v: dict[str, ts.Tensor]) -> ts.Tensor:
        return tnp.sum(tsp.hyp1f1(v["a"], v["b"], v["x"]))

    def batched(v: dict[str, ts.Tensor]) -> ts.Tensor:  # the regions' points as 2 rows (vmap over them)
        rows = {k: tnp.reshape(v[k][: 2 * (n // 2)], (2, n // 2)) for k in "abx"}
        return ts.vmap(lambda r: tsp.hyp1f1(r["a"], r["b"], r["x"]))(rows)

    n = a.size
    got, grads, by_rows = ts.program(lambda v: (tsp.hyp1f1(v["a"], v["b"], v["x"]), ts.grad(total)(v),
                                                batched(v)))(values)
    got = np.asarray(got)
    # vmap: each row as the unbatched function gives it
    np.testing.assert_array_equal(np.asarray(by_rows), got[: 2 * (n // 2)].reshape(2, n // 2))
    want = _exact(values["a"], values["b"], values["x"])
    computed = ~np.isnan(got)
    assert computed[:n].mean() > 0.95  # (before the recurrence: about half NaN)
    error = np.abs(got - want) / np.abs(want)
    assert np.all(error[computed] < TOLERANCE), error[computed].max()  # the hard points included: NaN or right
    assert np.median(error[:n][computed[:n]]) < 1e-13
    # SciPy (Boost's recurrences) agrees where we answer
    np.testing.assert_allclose(got[:n][computed[:n]], ss.hyp1f1(a, b, x)[computed[:n]], rtol=1e-10)

    # gradients: d/dx = a/b 1F1(a + 1, b + 1, x) exactly; d/da, d/db by central differences of exact values
    ok = np.flatnonzero(computed[:n] & (b > 0.05))[::5]  # both regions
    sel = {k: v[ok] for k, v in values.items()}
    want_x = sel["a"] / sel["b"] * _exact(sel["a"] + 1, sel["b"] + 1, sel["x"])
    np.testing.assert_allclose(np.asarray(grads["x"])[ok], want_x, rtol=1e-9)
    for name in "ab":
        step = 1e-6 * np.maximum(1.0, np.abs(sel[name]))
        up, down = dict(sel), dict(sel)
        up[name], down[name] = sel[name] + step, sel[name] - step
        difference = (_exact(up["a"], up["b"], up["x"]) - _exact(down["a"], down["b"], down["x"])) / (2 * step)
        np.testing.assert_allclose(np.asarray(grads[name])[ok], difference, rtol=1e-7)


def test_hyp1f1_cancelling_regions_float32_eager(rng: np.random.Generator) -> None:
    a, b, x = (t.astype(np.float32) for t in _inputs(rng))
    got = np.asarray(tsp.hyp1f1(a, b, x))
    assert got.dtype == np.float32
    want = _exact(a.astype(np.float64), b.astype(np.float64), x.astype(np.float64))
    computed = ~np.isnan(got)
    assert computed.mean() > 0.95
    normal = computed & (np.abs(want) > np.finfo(np.float32).tiny)  # (XLA on CPU flushes subnormals)
    # computed in f64 and rounded once: within half an ulp
    np.testing.assert_allclose(got[normal], want[normal], rtol=2.0**-24 * 1.01, atol=0)
