"""Lowering of the special-function primitives (``staging/primitives/special.py``).

``lgamma``, ``digamma``, ``zeta``, ``bessel_i1e`` and ``erfc`` are CHLO ops, which XLA's compile path (jaxlib
0.10.2) parses and expands per dtype. CHLO has no ``igamma``, ``betainc`` or ``bessel_i0e`` that this jaxlib parses:
those are expansions written with staging primitives (a graph, staged once per operand type and emitted inline), ported from
JAX's own (``jax/_src/lax/special.py``: Cephes' Chebyshev series for i0e; for P(a, x) a power series below
``x = max(a, 1)`` and a continued fraction above it; for I_x(a, b) the continued fraction DLMF 8.17.22 by the
modified Lentz algorithm, at most 200 (f32) / 600 (f64) terms; all in ``while`` loops that stop when every element
has converged). float16 and bfloat16 operands are computed in float32 and rounded once.

Measured on CPU against SciPy 1.17 (float64 references on 100k uniform random operands per range; error =
|got - ref| / max(|ref|, 1), i.e. absolute near the zeros of lgamma and digamma, relative elsewhere; the inputs are
the f32-rounded operands, so the f32 column is the function's own error):

=================================  ===========  ===========
primitive, range                   f32          f64
=================================  ===========  ===========
lgamma, x in (0, 100]              2.2e-06      3.4e-15
lgamma, x in (-10, 0)              4.0e-06      7.2e-15
digamma, x in (0, 100]             9.6e-07      1.8e-15
digamma, x in (-10, 0)             1.3e-06      5.3e-12 (near the poles)
zeta, s in (1.1, 10), q (0.1, 20)  5.6e-07      8.6e-16  (at most 7 / 4 ulps)
erfc, x in (-5, 10)                3.9e-06      2.0e-15  (64 / 12 ulps)
bessel_i0e, x in (-50, 50)         3.1e-07      7.6e-16  (4 / 6 ulps)
bessel_i1e, x in (-50, 50)         1.1e-06      2.1e-15  (10 / 10 ulps)
igamma, a (0.1, 10), x (0, 20)     7.6e-06      1.4e-14  (104 / 120 ulps)
igammac, a (0.1, 10), x (0, 20)    1.9e-05      7.9e-14  (201 / 411 ulps)
igamma(c), a (10, 1000), x≈a±30%   1.3e-03      2.9e-12  (~2e4 ulps: the series/fraction lose accuracy for large a)
betainc, a, b (0.1, 10), x (0, 1)  3.0e-08      5.6e-14  (f32 computed in f64)
betainc, a, b (10, 1000), x (0, 1) 3.0e-08      6.2e-12  (the prefactor's lgamma differences lose digits)
betainc, a, b (1e3, 1e6), x (0,1)  1.6e-07      1.5e-07  (NaN beyond 2e6, where they lose all)
=================================  ===========  ===========

SciPy switches to Temme's uniform asymptotic expansion for large ``a`` near ``x = a``; this expansion (JAX's, XLA's)
does not, hence the igamma(c) row for large ``a``. ``igamma_grad_a`` (dP/da, JAX's derivative mode of the same loops) agrees with
differences of SciPy's gammainc to ~1e-10 relative in f64 (the differences' own accuracy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...staging.builder import bind, building
from ...staging.ir import Atom, Aval, Graph, Var
from ...staging.primitives import control_flow as CF
from ...staging.primitives import elementwise as E
from ...staging.primitives import reductions as R
from ...staging.primitives import special as SP
from ...staging.primitives import structural as S
from ..emit import PLAIN_OPS, SPLAT_SCALAR_OPERANDS, Emitter, Value, lowers, remember
from .elementwise import _simple_rule

_CHLO = {
    SP.lgamma_p: "chlo.lgamma", SP.digamma_p: "chlo.digamma", SP.zeta_p: "chlo.zeta",
    SP.bessel_i1e_p: "chlo.bessel_i1e", SP.erfc_p: "chlo.erfc",
}

for _prim, _name in _CHLO.items():
    lowers(_prim)(_simple_rule(_name))
    SPLAT_SCALAR_OPERANDS.add(_prim)
    PLAIN_OPS[_prim] = _name

# --------------------------------------------------------------------------------- expansions as graphs

Expansion = Callable[..., Atom]
_GRAPHS: dict[tuple[Any, ...], Graph] = {}
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _expansion_graph(impl: Expansion, out: Aval, n_args: int, work: np.dtype[Any]) -> Graph:
    """``impl`` staged on ``n_args`` operands of ``out``'s type, computed in ``work`` where that is wider."""
    key = (impl, out.shape, out.dtype, n_args, work)
    graph = _GRAPHS.get(key)
    if graph is None:
        plain = Aval(out.shape, out.dtype)
        with building() as b:
            ins = [Var(plain) for _ in range(n_args)]
            wide = [E.convert(v, work) if out.dtype.itemsize < work.itemsize else v for v in ins]
            result = E.convert(impl(*wide), out.dtype)
        graph = remember(_GRAPHS, key, Graph(ins, b.eqns, [result]))
    return graph


def _lowers_as(prim: Any, impl: Expansion, work: np.dtype[Any] = _F32) -> None:
    """Lower ``prim`` as the expansion ``impl``, computed in at least ``work`` (half-precision types, by default)."""

    @lowers(prim)
    def rule(em: Emitter, args: Sequence[Value], outs: Sequence[Aval]) -> list[Value]:
        from .elementwise import widen

        out = outs[0]
        wide = [widen(em, a, out.shape) for a in args]  # rank-0 operands of shaped ones
        return em.graph_body(_expansion_graph(impl, out, len(args), work), wide)


def _c(value: float, like: Atom) -> Atom:
    return E.scalar(value, like)


def _eps(x: Atom) -> float:
    return float(np.finfo(x.aval.dtype).eps)


def _while(cond: Callable[[list[Atom]], Atom], body: Callable[[list[Atom]], list[Atom]], init: list[Atom]) -> list[Atom]:
    """A ``while`` loop over ``init`` (every value the body reads is in the carry)."""
    graphs = []
    for fn in (lambda vs: [cond(vs)], body):
        with building() as b:
            ins = [Var(a.aval) for a in init]
            outs = fn(list(ins))
        graphs.append(Graph(ins, b.eqns, outs))
    return CF.while_loop([], [], init, graphs[0], graphs[1])


def _any(pred: Atom) -> Atom:
    return R.reduce_max(pred, tuple(range(pred.aval.ndim))) if pred.aval.ndim else pred


def _and(a: Atom, b: Atom) -> Atom:
    return bind(E.and_p, a, b)  # type: ignore[no-any-return]


def _or(*preds: Atom) -> Atom:
    out = preds[0]
    for p in preds[1:]:
        out = bind(E.or_p, out, p)
    return out


def _not(a: Atom) -> Atom:
    return bind(E.not_p, a)  # type: ignore[no-any-return]


def _isnan(a: Atom) -> Atom:
    return bind(E.ne_p, a, a)  # type: ignore[no-any-return]


def _chebyshev(x: Atom, coefficients: Sequence[float]) -> Atom:
    b0 = b1 = b2 = S.full_like(x, 0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = E.add(E.sub(E.mul(x, b1), b2), _c(c, x))
    return E.mul(_c(0.5, x), E.sub(b0, b2))


# Cephes' i0e: Chebyshev coefficients on [0, 8] and on (8, inf) (in 32/x); float32 uses the tails of the float64 sets.
_I0E_A = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16, 1.71539128555513303061E-15,
    -1.16853328779934516808E-14, 7.67618549860493561688E-14, -4.85644678311192946090E-13, 2.95505266312963983461E-12,
    -1.72682629144155570723E-11, 9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7, 1.11738753912010371815E-6,
    -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5, 1.88502885095841655729E-4,
    -5.76375574538582365885E-4, 1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2, 1.71620901522208775349E-1,
    -3.04682672343198398683E-1, 6.76795274409476084995E-1,
)
_I0E_B = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17, 3.46122286769746109310E-17,
    -2.82762398051658348494E-16, -3.42548561967721913462E-16, 1.77256013305652638360E-15, 3.81168066935262242075E-15,
    -9.55484669882830764870E-15, -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11, -3.14991652796324136454E-11,
    1.18891471078464383424E-11, 4.94060238822496958910E-10, 3.39623202570838634515E-9, 2.26666899049817806459E-8,
    2.04891858946906374183E-7, 2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1,
)


def _i0e(x: Atom) -> Atom:
    single = x.aval.dtype == _F32
    a, b = (_I0E_A[-18:], _I0E_B[-7:]) if single else (_I0E_A, _I0E_B)
    x = E.abs(x)
    small = bind(E.le_p, x, _c(8, x))
    near = _chebyshev(E.sub(E.mul(_c(0.5, x), x), _c(2, x)), a)
    safe_x = E.select(small, _c(8, x), x)  # the tail's branch never sees 0 (32/0 would leak a NaN to gradients)
    far = E.div(_chebyshev(E.sub(E.div(_c(32, x), safe_x), _c(2, x)), b), bind(E.sqrt_p, safe_x))
    return E.select(small, near, far)


_lowers_as(SP.bessel_i0e_p, _i0e)

# ------------------------------------------------------------------------------ incomplete gamma function


def _series(ax: Atom, x: Atom, a: Atom, enabled: Atom, derivative: bool) -> Atom:
    """P(a, x) (or dP/da) by its power series ``x^a e^-x / Gamma(a + 1) sum_n x^n / ((a+1)...(a+n))``."""
    eps = _eps(x)

    def body(vals: list[Atom]) -> list[Atom]:
        on, r, c, ans, x_, dc_da, dans_da = vals
        r = E.add(r, _c(1, r))
        dc_da = E.sub(E.mul(dc_da, E.div(x_, r)), E.div(E.mul(c, x_), E.mul(r, r)))
        dans_da = E.add(dans_da, dc_da)
        c = E.mul(c, E.div(x_, r))
        ans = E.add(ans, c)
        going = E.gt(E.abs(E.div(dc_da, dans_da)), _c(eps, x_)) if derivative else E.gt(E.div(c, ans), _c(eps, x_))
        return [_and(on, going)] + [E.select(on, new, old) for new, old in zip([r, c, ans, x_, dc_da, dans_da], vals[1:])]

    one, zero = S.full_like(a, 1), S.full_like(a, 0)
    out = _while(lambda vs: _any(vs[0]), body, [enabled, a, one, one, x, zero, zero])
    ans, dans_da = out[3], out[6]
    if not derivative:
        return E.div(E.mul(ans, ax), a)
    dlogax_da = E.sub(E.log(x), SP.digamma(E.add(a, _c(1, a))))
    return E.div(E.mul(ax, E.add(E.mul(ans, dlogax_da), dans_da)), a)


def _continued_fraction(ax: Atom, x: Atom, a: Atom, enabled: Atom, derivative: bool) -> Atom:
    """Q(a, x) (or dQ/da) by Legendre's continued fraction (Cephes' igamc), at most 2000 terms, rescaled so the
    convergents never overflow."""
    eps = _eps(x)

    def body(vals: list[Atom]) -> list[Atom]:
        on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans = vals
        c = E.add(c, _c(1, c))
        y = E.add(y, _c(1, y))
        z = E.add(z, _c(2, z))
        yc = E.mul(y, c)
        pk = E.sub(E.mul(pkm1, z), E.mul(pkm2, yc))
        qk = E.sub(E.mul(qkm1, z), E.mul(qkm2, yc))
        nonzero = bind(E.ne_p, qk, _c(0, qk))
        r = E.div(pk, qk)
        one = S.full_like(r, 1)
        t = E.select(nonzero, E.abs(E.div(E.sub(ans, r), r)), one)
        ans = E.select(nonzero, r, ans)
        dpk = E.add(E.sub(E.sub(E.mul(dpkm1, z), pkm1), E.mul(dpkm2, yc)), E.mul(pkm2, c))
        dqk = E.add(E.sub(E.sub(E.mul(dqkm1, z), qkm1), E.mul(dqkm2, yc)), E.mul(qkm2, c))
        dans_new = E.select(nonzero, E.div(E.sub(dpk, E.mul(ans, dqk)), qk), dans)
        step = E.select(nonzero, E.abs(E.sub(dans_new, dans)), one)
        rescale = E.gt(E.abs(pk), _c(1 / eps, pk))
        shrink = [E.select(rescale, E.mul(v, _c(eps, v)), v) for v in (pkm1, pk, qkm1, qk, dpkm1, dqkm1, dpk, dqk)]
        pkm2, pkm1, qkm2, qkm1, dpkm2, dqkm2, dpkm1, dqkm1 = shrink
        going = E.gt(step if derivative else t, _c(eps, t))
        new = [ans, t, y, z, None, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans_new]
        kept = [c if n is None else E.select(on, n, old) for n, old in zip(new, vals[1:])]
        return [_and(on, going)] + kept

    y = E.sub(_c(1, a), a)
    z = E.add(E.add(x, y), _c(1, x))
    pkm1 = E.add(x, _c(1, x))
    qkm1 = E.mul(z, x)
    ans = E.div(pkm1, qkm1)
    zero = S.full_like(x, 0)
    dqkm1 = E.neg(x)
    dans = E.div(E.neg(E.mul(ans, dqkm1)), qkm1)
    counter = S.full_like(Aval((), x.aval.dtype), 0)  # terms taken, shared by every element
    init = [enabled, ans, S.full_like(x, 1), y, z, counter, pkm1, qkm1, S.full_like(x, 1), x, zero, zero, zero,
            dqkm1, dans]
    out = _while(lambda vs: _and(E.lt(vs[5], _c(2000, vs[5])), _any(vs[0])), body, init)
    if not derivative:
        return E.mul(out[1], ax)
    dlogax_da = E.sub(E.log(x), SP.digamma(a))
    return E.mul(ax, E.add(E.mul(out[1], dlogax_da), out[14]))


def _prefactor(a: Atom, x: Atom) -> tuple[Atom, Atom]:
    """``x^a e^-x / Gamma(a)`` and whether it underflows (the series and fraction then give 0)."""
    log_ax = E.sub(E.sub(E.mul(a, E.log(x)), x), SP.lgamma(a))
    underflow = E.lt(log_ax, _c(-float(np.log(np.finfo(x.aval.dtype).max)), x))
    return E.exp(log_ax), underflow


def _domain_error(a: Atom, x: Atom) -> Atom:
    zero = _c(0, x)
    return _or(E.lt(x, zero), E.lt(a, zero), _and(E.eq(a, zero), E.eq(x, zero)), _isnan(a), _isnan(x))


def _igamma(a: Atom, x: Atom) -> Atom:
    x_inf, x_zero = E.eq(x, _c(np.inf, x)), E.eq(x, _c(0, x))
    domain = _domain_error(a, x)
    use_fraction = _and(bind(E.ge_p, x, _c(1, x)), E.gt(x, a))
    ax, underflow = _prefactor(a, x)
    enabled = _not(_or(x_zero, domain, underflow, x_inf))
    out = E.select(
        use_fraction,
        E.sub(_c(1, x), _continued_fraction(ax, x, a, _and(enabled, use_fraction), False)),
        _series(ax, x, a, _and(enabled, _not(use_fraction)), False),
    )
    out = E.select(x_zero, S.full_like(out, 0), out)
    out = E.select(x_inf, S.full_like(out, 1), out)
    return E.select(domain, S.full_like(out, np.nan), out)


def _igammac(a: Atom, x: Atom) -> Atom:
    a_zero, x_inf = E.eq(a, _c(0, a)), E.eq(x, _c(np.inf, x))
    domain = _domain_error(a, x)
    use_series = _or(E.lt(x, _c(1, x)), E.lt(x, a))
    ax, underflow = _prefactor(a, x)
    enabled = _not(_or(domain, underflow, x_inf, a_zero))
    out = E.select(
        use_series,
        E.sub(_c(1, x), _series(ax, x, a, _and(enabled, use_series), False)),
        _continued_fraction(ax, x, a, _and(enabled, _not(use_series)), False),
    )
    out = E.select(_or(x_inf, a_zero), S.full_like(out, 0), out)
    return E.select(domain, S.full_like(out, np.nan), out)


def _igamma_grad_a(a: Atom, x: Atom) -> Atom:
    x_zero = E.eq(x, _c(0, x))
    domain = _or(E.lt(x, _c(0, x)), bind(E.le_p, a, _c(0, a)), _isnan(a), _isnan(x))
    use_fraction = _and(E.gt(x, _c(1, x)), E.gt(x, a))
    ax, underflow = _prefactor(a, x)
    enabled = _not(_or(x_zero, domain, underflow))
    out = E.select(
        use_fraction,
        E.neg(_continued_fraction(ax, x, a, _and(enabled, use_fraction), True)),
        _series(ax, x, a, _and(enabled, _not(use_fraction)), True),
    )
    out = E.select(x_zero, S.full_like(out, 0), out)
    return E.select(domain, S.full_like(out, np.nan), out)


_lowers_as(SP.igamma_p, _igamma)
_lowers_as(SP.igammac_p, _igammac)
_lowers_as(SP.igamma_grad_a_p, _igamma_grad_a)

# ------------------------------------------------------------------------------ incomplete beta function


def _betainc_numerator(n: Atom, a: Atom, b: Atom, x: Atom) -> Atom:
    """The n-th partial numerator of the continued fraction DLMF 8.17.22 (1 for n = 1): ``-(a+m)(a+b+m) x /
    ((a+2m)(a+2m+1))`` for even n and ``m (b-m) x / ((a+2m-1)(a+2m))`` for odd n, ``m = (n - 1) // 2``."""
    one, two = _c(1, a), _c(2, a)
    m = E.floor(E.mul(E.sub(n, _c(1, n)), _c(0.5, n)))
    even = E.eq(E.sub(n, E.mul(two, E.floor(E.mul(n, _c(0.5, n))))), _c(0, n))
    a2m = E.add(a, E.mul(two, m))
    # at m = 0 the even term is written without (a + 2m) so a tiny a does not lose it (JAX's form)
    first = E.div(E.neg(E.mul(E.add(a, b), x)), E.add(a, one))
    later = E.div(E.neg(E.mul(E.mul(E.add(a, m), E.add(E.add(a, b), m)), x)), E.mul(a2m, E.add(a2m, one)))
    even_term = E.select(E.eq(m, _c(0, m)), first, later)
    odd_term = E.div(E.mul(E.mul(m, E.sub(b, m)), x), E.mul(E.sub(a2m, one), a2m))
    return E.select(E.eq(n, _c(1, n)), S.full_like(x, 1), E.select(even, even_term, odd_term))


def _lentz(a: Atom, b: Atom, x: Atom) -> Atom:
    """The continued fraction ``1 / (1 + d1 / (1 + d2 / ...))`` by the modified Lentz algorithm (XLA's
    LentzThompsonBarnett: partial denominators 0 then 1), until every element's step is within eps/2."""
    tiny = _eps(x) / 2
    limit = 200 if x.aval.dtype == _F32 else 600

    def clip(v: Atom) -> Atom:
        return E.select(E.lt(E.abs(v), _c(tiny, v)), S.full_like(v, tiny), v)

    def body(vals: list[Atom]) -> list[Atom]:
        n, _, c, d, h, a_, b_, x_ = vals
        numerator = _betainc_numerator(n, a_, b_, x_)
        c = clip(E.add(_c(1, c), E.div(numerator, c)))
        d = E.div(_c(1, d), clip(E.add(_c(1, d), E.mul(numerator, d))))
        delta = E.mul(c, d)
        going = _any(bind(E.ge_p, E.abs(E.sub(delta, _c(1, delta))), _c(tiny, delta)))
        return [E.add(n, _c(1, n)), going, c, d, E.mul(h, delta), a_, b_, x_]

    h = S.full_like(x, tiny)  # the 0th partial denominator is 0, clipped to tiny
    counter = S.full_like(Aval((), x.aval.dtype), 1)
    init = [counter, S.full_like(Aval((), np.dtype(bool)), True), h, S.full_like(x, 0), h, a, b, x]
    out = _while(lambda vs: _and(E.lt(vs[0], _c(limit, vs[0])), vs[1]), body, init)
    return out[4]


def _betainc(a: Atom, b: Atom, x: Atom) -> Atom:
    """I_x(a, b): the continued fraction where it converges fast, ``x < (a + 1) / (a + b + 2)``, else ``1 -
    I_{1-x}(b, a)``; the edge values as JAX (0 or 1 where a parameter is 0 or inf, NaN outside the domain)."""
    zero, one, inf = _c(0, x), _c(1, x), _c(np.inf, x)
    a_zero = _or(E.eq(a, zero), E.eq(b, inf))
    b_zero = _or(E.eq(b, zero), E.eq(a, inf))
    x_zero, x_one = E.eq(x, zero), E.eq(x, one)
    result_zero = _or(_and(b_zero, _not(x_one)), _and(a_zero, x_zero))
    result_one = _or(_and(a_zero, _not(x_zero)), _and(b_zero, x_one))
    domain = _or(E.lt(a, zero), E.lt(b, zero), E.lt(x, zero), E.gt(x, one), _and(a_zero, b_zero),
                 _isnan(a), _isnan(b), _isnan(x))
    direct = E.lt(x, E.div(E.add(a, one), E.add(E.add(a, b), _c(2, x))))
    a, b, x = E.select(direct, a, b), E.select(direct, b, a), E.select(direct, x, E.sub(one, x))
    fraction = _lentz(a, b, x)
    # the prefactor x^a (1-x)^b / (a B(a, b)); below 2 tiny, a B(a, b) -> Gamma(b) / Gamma(a + b) (a Gamma(a) -> 1)
    log_1mx = bind(E.log1p_p, E.neg(x))
    small_a = E.lt(a, _c(2 * float(np.finfo(x.aval.dtype).tiny), a))
    lbeta_tail = E.sub(SP.lgamma(b), SP.lgamma(E.add(a, b)))
    general = E.div(E.exp(E.sub(E.add(E.mul(E.log(x), a), E.mul(log_1mx, b)), E.add(SP.lgamma(a), lbeta_tail))), a)
    factor = E.select(small_a, E.exp(E.sub(E.mul(log_1mx, b), lbeta_tail)), general)
    result = E.mul(fraction, factor)
    result = E.select(direct, result, E.sub(one, result))
    # Beyond 2e6 the prefactor's lgamma differences have lost the answer (at 1e7: errors of 1e-2; at 1e10 JAX's
    # same construction gives -5.8): NaN there, not a wrong probability.
    largest = E.maximum(a, b)
    lost = _and(E.gt(largest, _c(2e6, a)), bind(E.is_finite_p, largest))
    result = E.select(lost, S.full_like(result, np.nan), result)
    result = E.select(result_zero, S.full_like(result, 0), result)
    result = E.select(result_one, S.full_like(result, 1), result)
    return E.select(domain, S.full_like(result, np.nan), result)


_lowers_as(SP.betainc_p, _betainc, _F64)  # f32 too: its lgamma differences lose 1e-2 by a, b = 1e4
