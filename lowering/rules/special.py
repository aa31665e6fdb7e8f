"""Lowering of the special-function primitives (``staging/primitives/special.py``).

``lgamma``, ``digamma``, ``zeta``, ``bessel_i1e`` and ``erfc`` are CHLO ops, which XLA's compile path (jaxlib
0.10.2) parses and expands per dtype. CHLO has no ``igamma``, ``betainc`` or ``bessel_i0e`` that this jaxlib parses:
those are expansions written with staging primitives (a graph, staged once per operand type and emitted inline), ported from
JAX's own (``jax/_src/lax/special.py``: Cephes' Chebyshev series for i0e; for P(a, x) a power series below
``x = max(a, 1)`` and a continued fraction above it, both in ONE loop (each element's state in shared slots: half
the kernels of a loop per expansion, and a program with both P and Q runs it once); for I_x(a, b) the continued
fraction DLMF 8.17.22 by the modified Lentz algorithm, at most 200 (f32) / 600 (f64) terms; all in ``while`` loops
that stop when every element has converged). float16 and bfloat16 operands are computed in float32 and rounded once.

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
igamma(c), a (20, 1e12), see below  (ulps)       (ulps)
betainc, a, b (0.1, 10), x (0, 1)  3.0e-08      5.6e-14  (f32 computed in f64)
betainc, a, b (10, 1000), x (0, 1) 3.0e-08      6.2e-12  (the prefactor's lgamma differences lose digits)
betainc, a, b (1e3, 1e6), x (0,1)  1.6e-07      1.5e-07  (NaN beyond 2e6, where they lose all)
=================================  ===========  ===========

For large ``a`` near ``x = a`` (``a > 20``, ``|x - a| < 0.3 a``; and ``a > 200``, ``a / 2 < x < 2 a``) P, Q and
dP/da come from Temme's uniform asymptotic expansion (``_temme``, as SciPy and Boost; JAX's and XLA's series and
fraction alone gave gammaincc(1e10, 1e10) = 0.934 instead of 0.5, and take ~8 sqrt(a) terms there), and the
prefactor ``x^a e^-x / Gamma(a)`` of the series and fraction from Stirling's series (``SP.log_gamma_prefactor``,
without the cancellation of ``a log x - x - lgamma(a)``). Max errors in ulps, P / Q, against mpmath (to a = 1e4;
SciPy above, inside its own Temme window):

==================================  ==============  ==============  ==========================
range                               f32             f64             before: f32, f64
==================================  ==============  ==============  ==========================
a (1e-3, 1), x/a (1e-3, 1e3)        16 / 51         10 / 111 (a)    16 / 1.7e4, 10 / 1.6e4
a (20, 1e4], x/a (1e-3, 1e3)        103 / 90        735 / 1090 (b)  6e4 / 6e4, 1.3e5 / 8.8e4
a (20, 1e12), x = a ± 4.4 sqrt(a)   31 / 20         34 / 25         inf (c), 3e13 / 4.5e15 (c)
==================================  ==============  ==============  ==========================

(a) Q by its own series below ``x = 1.1`` (``_q_series``, as SciPy), not ``1 - P``. (b) in the deep tails
(results to 1e-300), ~|log result| ulps: the rounding of ``(x - a) / a`` times the exponent's size; SciPy's own
errors there are 2.6e4 / 1.1e5 ulps. (c) gammaincc(1e10, 1e10) was 0.934 for 0.5; float32 gave NaN from a = 1e10.
SciPy itself is wrong just outside its window for ``a > 1e7`` (its series stops at 2000 terms): gammainc(3.298e8,
3.297e8) is 3.04e-7 there, 7.10e-7 here (the normal approximation gives 7.1e-7). ``igamma_grad_a`` (dP/da, JAX's
derivative mode of the same loops) agrees with differences of SciPy's gammainc to ~1e-10 relative in f64 (the
differences' own accuracy), and with 5-point differences to 1e-5 in Temme's region up to a = 1e8.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...staging.builder import bind, building
from ...staging.ir import Atom, Aval, Graph, Var, literal
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


# The loop's slots: the fraction's last two numerators and denominators (their a-derivatives after them, for
# igamma_grad_a); the series keeps its sum and term in the first two (their a-derivatives in the fifth and sixth).
_TERM, _DSUM, _DTERM = 1, 4, 5


def _series_step(slots: list[Atom], n: Atom, a: Atom, x: Atom, derivative: bool) -> tuple[list[Atom], Atom]:
    """Term ``n`` of P's power series ``x^a e^-x / Gamma(a + 1) sum_n x^n / ((a+1)...(a+n))`` (and of its derivative
    in ``a``); whether the element goes on."""
    out = list(slots)
    r = E.add(a, n)
    eps = _c(_eps(x), x)
    if derivative:
        dc_da = E.sub(E.mul(out[_DTERM], E.div(x, r)), E.div(E.mul(out[_TERM], x), E.mul(r, r)))
        out[_DSUM], out[_DTERM] = E.add(out[_DSUM], dc_da), dc_da
        going = E.gt(E.abs(E.div(dc_da, out[_DSUM])), eps)
    out[_TERM] = E.mul(out[_TERM], E.div(x, r))
    out[0] = E.add(out[0], out[_TERM])
    return out, going if derivative else E.gt(E.div(out[_TERM], out[0]), eps)


def _convergents(slots: list[Atom], derivative: bool) -> tuple[Atom, Atom]:
    """The fraction's value ``p1 / q1`` and its ``a``-derivative (the value again without ``derivative``) from its
    slots: recomputed, not carried (the rescaling by eps, a power of 2, leaves the ratios exact)."""
    ans = E.div(slots[0], slots[1])
    if not derivative:
        return ans, ans
    return ans, E.div(E.sub(slots[4], E.mul(ans, slots[5])), slots[1])


def _fraction_step(slots: list[Atom], n: Atom, a: Atom, x: Atom, derivative: bool) -> tuple[list[Atom], Atom]:
    """Term ``n`` of Legendre's continued fraction for Q (Cephes' igamc; and of its derivative in ``a``), its
    numerators and denominators rescaled so they never overflow; whether the element goes on."""
    pkm1, qkm1, pkm2, qkm2 = slots[:4]
    ans, dans = _convergents(slots, derivative)
    y = E.add(E.sub(_c(1, a), a), n)  # y and z as Cephes' (1 - a + n, x + y + 1 + n), from the shared counter
    z = E.add(E.add(x, y), E.add(n, _c(1, x)))
    yc = E.mul(y, n)
    pk = E.sub(E.mul(pkm1, z), E.mul(pkm2, yc))
    qk = E.sub(E.mul(qkm1, z), E.mul(qkm2, yc))
    nonzero = bind(E.ne_p, qk, _c(0, qk))
    r = E.div(pk, qk)
    one = S.full_like(r, 1)
    t = E.select(nonzero, E.abs(E.div(E.sub(ans, r), r)), one)
    values = [pkm1, pk, qkm1, qk]
    if derivative:
        dpkm1, dqkm1, dpkm2, dqkm2 = slots[4:]
        dpk = E.add(E.sub(E.sub(E.mul(dpkm1, z), pkm1), E.mul(dpkm2, yc)), E.mul(pkm2, n))
        dqk = E.add(E.sub(E.sub(E.mul(dqkm1, z), qkm1), E.mul(dqkm2, yc)), E.mul(qkm2, n))
        dans_new = E.div(E.sub(dpk, E.mul(r, dqk)), qk)
        t = E.select(nonzero, E.abs(E.sub(dans_new, dans)), one)  # the derivative's own step decides
        values += [dpkm1, dpk, dqkm1, dqk]
    eps = _eps(x)
    rescale = E.gt(E.abs(pk), _c(1 / eps, pk))
    pkm2, pkm1, qkm2, qkm1, *derivatives = [E.select(rescale, E.mul(v, _c(eps, v)), v) for v in values]
    out = [pkm1, qkm1, pkm2, qkm2]
    if derivative:
        dpkm2, dpkm1, dqkm2, dqkm1 = derivatives
        out += [dpkm1, dqkm1, dpkm2, dqkm2]
    return out, E.gt(t, _c(eps, t))


def _expansion_init(a: Atom, x: Atom, fraction: Atom, derivative: bool) -> list[Atom]:
    """The slots' first values: the series' (sum and term 1, derivatives 0) or the fraction's first convergents."""
    zero, one = S.full_like(x, 0), S.full_like(x, 1)
    z = E.add(E.add(x, E.sub(_c(1, a), a)), _c(1, x))
    cf = [E.add(x, _c(1, x)), E.mul(z, x), one, x] + ([zero, E.neg(x), zero, zero] if derivative else [])
    series = [one, one] + [zero] * (len(cf) - 2)
    return [E.select(fraction, f, s_) for f, s_ in zip(cf, series)]


def _expansion_loop(ax: Atom, x: Atom, a: Atom, enabled: Atom, fraction: Atom, derivative: bool) -> Atom:
    """P(a, x) by its power series, or Q(a, x) by its continued fraction where ``fraction`` (or their derivatives in
    ``a``; the callers turn either into what they return), in ONE while loop of at most 2000 terms (the series
    needs < 70 terms outside Temme's region): each element's state sits in shared slots and every step
    computes both expansions' terms and keeps its own. One loop, not one per expansion, halves the kernels XLA
    compiles (compile time tracks them), and costs no more steps: each loop ran until its slowest element. The
    fraction's convergent is not carried but recomputed from the slots (one kernel less per carried value)."""

    def body(vals: list[Atom]) -> list[Atom]:
        on, n, a_, x_, fraction_, *slots = vals
        n = E.add(n, _c(1, n))
        wide_n = S.broadcast_in_dim(n, x_.aval.shape, ())
        series, series_going = _series_step(slots, wide_n, a_, x_, derivative)
        cf, cf_going = _fraction_step(slots, wide_n, a_, x_, derivative)
        new = [E.select(on, E.select(fraction_, f, s_), old) for f, s_, old in zip(cf, series, slots)]
        return [_and(on, E.select(fraction_, cf_going, series_going)), n, a_, x_, fraction_, *new]

    counter = S.full_like(Aval((), x.aval.dtype), 0)  # terms taken, shared by every element
    init = [enabled, counter, a, x, fraction, *_expansion_init(a, x, fraction, derivative)]
    slots = _while(lambda vs: _and(E.lt(vs[1], _c(2000, vs[1])), _any(vs[0])), body, init)[5:]
    cf_ans, cf_dans = _convergents(slots, derivative)
    ans = E.select(fraction, cf_ans, slots[0])
    if derivative:  # d/da of log(x^a e^-x / Gamma(a + 1)) for the series, of Gamma(a) for the fraction
        psi = SP.digamma(E.select(fraction, a, E.add(a, _c(1, a))))
        ans = E.add(E.mul(ans, E.sub(E.log(x), psi)), E.select(fraction, cf_dans, slots[_DSUM]))
        return E.div(E.mul(ax, ans), E.select(fraction, S.full_like(a, 1), a))
    return E.div(E.mul(ans, ax), E.select(fraction, S.full_like(a, 1), a))


def _prefactor(a: Atom, x: Atom) -> tuple[Atom, Atom]:
    """``x^a e^-x / Gamma(a)`` and whether it underflows (the series and fraction then give 0); for large ``a``
    without the cancellation of ``a log x - x - lgamma(a)`` (``SP.log_gamma_prefactor``)."""
    log_ax = SP.log_gamma_prefactor(a, x)
    underflow = E.lt(log_ax, _c(-float(np.log(np.finfo(x.aval.dtype).max)), x))
    return E.exp(log_ax), underflow


_TEMME = (  # d[k][n]: c_k(eta) = sum_n d[k][n] eta^n (generated with 90-digit arithmetic; see _temme)
    (-0.3333333333333333, 0.08333333333333333, -0.014814814814814815, 0.0011574074074074073, 0.0003527336860670194,
     -0.0001787551440329218, 3.919263178522438e-05, -2.1854485106799924e-06, -1.85406221071516e-06,
     8.296711340953087e-07, -1.7665952736826078e-07, 6.707853543401498e-09, 1.0261809784240309e-08,
     -4.382036018453353e-09, 9.14769958223679e-10, -2.551419399494625e-11, -5.830772132550426e-11,
     2.4361948020667415e-11, -5.0276692801141755e-12, 1.1004392031956135e-13, 3.3717632624009856e-13,
     -1.392388722418162e-13, 2.8534893807047445e-14, -5.139111834242572e-16, -1.9752288294349442e-15),
    (-0.001851851851851852, -0.003472222222222222, 0.0026455026455026454, -0.0009902263374485596,
     0.00020576131687242798, -4.018775720164609e-07, -1.8098550334489977e-05, 7.64916091608111e-06,
     -1.6120900894563446e-06, 4.647127802807434e-09, 1.378633446915721e-07, -5.752545603517705e-08,
     1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09, 4.162792991842583e-10,
     -8.56390702649298e-11, 6.067215101604758e-14, 7.1624989648114856e-12, -2.933186643771437e-12,
     5.996696365683689e-13, -2.1671786527323313e-16, -4.978339972369262e-14, 2.0291628823713425e-14,
     -4.13125571381061e-15),
    (0.004133597883597883, -0.0026813271604938273, 0.0007716049382716049, 2.0093878600823047e-06,
     -0.00010736653226365161, 5.2923448829120125e-05, -1.2760635188618728e-05, 3.423578734096138e-08,
     1.3721957309062932e-06, -6.298992138380055e-07, 1.4280614206064242e-07, -2.0477098421990866e-10,
     -1.409252991086752e-08, 6.228974084922022e-09, -1.3670488396617112e-09, 9.428356159014678e-13,
     1.2872252400089318e-10, -5.5645956134363323e-11, 1.197593554636698e-11, -4.1689782251838634e-15,
     -1.0940640427884595e-12, 4.662239946390136e-13, -9.905105763906907e-14, 1.8931876768373515e-17,
     8.859221872591127e-15),
    (0.0006494341563786008, 0.00022947209362139917, -0.0004691894943952557, 0.00026772063206283885,
     -7.561801671883977e-05, -2.396505113867297e-07, 1.1082654115347302e-05, -5.6749528269915965e-06,
     1.4230900732435883e-06, -2.7861080291528143e-11, -1.6958404091930278e-07, 8.099464905388083e-08,
     -1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09, -9.460496661855133e-10,
     2.1541049775774907e-10, -1.388823336813903e-14, -2.1894761681963938e-11, 9.790998951171684e-12,
     -2.178219188018096e-12, 6.208819573407901e-17, 2.126978363279737e-13, -9.344688791517433e-14,
     2.045367122678285e-14),
    (-0.0008618882909167117, 0.0007840392217200666, -0.0002990724803031902, -1.4638452578843418e-06,
     6.641498215465122e-05, -3.968365047179435e-05, 1.1375726970678419e-05, 2.507497226237533e-10,
     -1.6954149536558305e-06, 8.907507532205309e-07, -2.292934834000805e-07, 2.956794137544049e-11,
     2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09, -2.3024517174528067e-13,
     -3.9409233028046403e-10, 1.86023389685045e-10, -4.356323005056618e-11, 1.278600101629623e-15,
     4.67927502665792e-12, -2.149246470613483e-12, 4.908815614809652e-13, -6.33859148489156e-18,
     -5.045332069080094e-14),
    (-0.00033679855336635813, -6.972813758365858e-05, 0.0002772753244959392, -0.00019932570516188847,
     6.797780477937208e-05, 1.419062920643967e-07, -1.3594048189768693e-05, 8.018470256334202e-06,
     -2.291481176508095e-06, -3.252473551298454e-10, 3.4652846491085265e-07, -1.8447187191171344e-07,
     4.8240967037894184e-08, -1.7989466721743514e-14, -6.306194500013523e-09, 3.162417628774568e-09,
     -7.840924253697429e-10, 5.192679165254041e-15, 9.358944242306784e-11, -4.513426216163278e-11,
     1.0799129993116828e-11, -3.661886712685252e-17, -1.210902069055155e-12, 5.680743584990564e-13,
     -1.3249659916340829e-13),
    (0.0005313079364639922, -0.0005921664373536939, 0.0002708782096718045, 7.902353232660328e-07,
     -8.153969367561969e-05, 5.61168275310625e-05, -1.8329116582843375e-05, -3.0796134506033047e-09,
     3.465155368803609e-06, -2.0291327396058603e-06, 5.788792863149004e-07, 2.338630673826657e-13,
     -8.828600746330484e-08, 4.7435958880408125e-08, -1.2545415020710382e-08, 8.649648858010293e-14,
     1.6846058979264062e-09, -8.575492823577594e-10, 2.1598224929232125e-10, -7.613230520476153e-16,
     -2.6639822008536144e-11, 1.3065700536611057e-11, -3.1799163902367977e-12, 4.710976121367431e-18,
     3.6902800842763465e-13),
    (0.00034436760689237765, 5.171790908260592e-05, -0.00033493161081142234, 0.0002812695154763237,
     -0.00010976582244684731, -1.2741009095484485e-07, 2.7744451511563645e-05, -1.8263488805711332e-05,
     5.7876949497350525e-06, 4.93875893393627e-10, -1.0595367014026043e-06, 6.166714376110408e-07,
     -1.7562973359060463e-07, -1.297447328701544e-12, 2.695423606288966e-08, -1.4578352908731272e-08,
     3.887645959386175e-09, -3.881002251019412e-17, -5.327994173877286e-10, 2.7437977643314844e-10,
     -6.995796092070568e-11, 2.589986387486848e-17, 8.856689099669639e-12, -4.403168815871311e-12,
     1.0865561947091654e-12),
    (-0.0006526239185953094, 0.0008394987206720873, -0.000438297098541721, -6.969091458420552e-07,
     0.00016644846642067547, -0.00012783517679769218, 4.629953263691304e-05, 4.557909867922708e-09,
     -1.0595271125805195e-05, 6.783342904865167e-06, -2.1075476666258803e-06, -1.7213731432817144e-11,
     3.773587741611098e-07, -2.1867506700122867e-07, 6.220228804018927e-08, 6.597703826733e-16,
     -9.590386497425686e-09, 5.213214492280807e-09, -1.3991589583935709e-09, 5.382058999060575e-16,
     1.9484714275467745e-10, -1.0127287556389682e-10, 2.6077347197254926e-11, -5.090418699993299e-18,
     -3.3721464474854593e-12),
    (-0.0005967612901927463, -7.204895416020011e-05, 0.0006782308837667328, -0.0006401475260262758,
     0.00027750107634328704, 1.819700838046515e-07, -8.479507117068503e-05, 6.105192082501531e-05,
     -2.1073920183404862e-05, -8.858589014125599e-10, 4.5284535953805374e-06, -2.8427815022504407e-06,
     8.708234177864641e-07, 3.6886101871706966e-12, -1.534469519070206e-07, 8.862466778790695e-08,
     -2.5184812301826817e-08, -1.0225912098215092e-14, 3.896947075815478e-09, -2.1267304792235634e-09,
     5.737013552805138e-10, -1.8877498501697116e-19, -8.093153869465787e-11, 4.23827232834492e-11,
     -1.1002224534207727e-11),
    (0.0013324454494800656, -0.0019144384985654776, 0.0011089369134596636, 9.9324041226423e-07,
     -0.0005087450129309319, 0.00042735056665392886, -0.000168588537679108, -8.1301893922785e-09,
     4.5284402370562144e-05, -3.127053674781734e-05, 1.044986828530338e-05, 4.8435226265680926e-11,
     -2.148256587345626e-06, 1.329369701097492e-06, -4.029569309210103e-07, -1.756787766632329e-13,
     7.014504316366825e-08, -4.040787734999483e-08, 1.1474026743371962e-08, 3.964274685356394e-18,
     -1.7804938269892715e-09, 9.748026254873165e-10, -2.6405338676507616e-10, 5.79487516340376e-18,
     3.764774955354384e-11),
    (0.001579727660730835, 0.00016251626278391583, -0.0020633421035543276, 0.00213896861856891,
     -0.0010108559391263003, -3.99127055299192e-07, 0.0003623502508476469, -0.00028143901463712157,
     0.00010449513336495887, 2.12114184918303e-09, -2.5779417251947842e-05, 1.7281818956040464e-05,
     -5.641377387290428e-06, -1.1024320105776174e-11, 1.1223224418895176e-06, -6.869339637952674e-07,
     2.0653236975414888e-07, 4.6714772409838506e-14, -3.5609886164949055e-08, 2.0470855345905963e-08,
     -5.809173863328336e-09, -1.3328212875828647e-16, 9.035460439133513e-10, -4.959878251733084e-10,
     1.3481607129399748e-10),
    (-0.004072512119514016, 0.00640336283380807, -0.004041016108167662, -2.183732802866233e-06, 0.002174044180125464,
     -0.001970044051841889, 0.0008359546974796246, 1.9445447567109655e-08, -0.000257793871204217,
     0.00019009987368139304, -6.769649993743896e-05, -1.4440629666426571e-10, 1.5712512518742267e-05,
     -1.0304008744776892e-05, 3.304517767401387e-06, 7.982976024232571e-13, -6.4097794149313e-07,
     3.8894624761300054e-07, -1.161834764494887e-07, -2.8168086305964423e-15, 1.9878012911297094e-08,
     -1.1407719956357511e-08, 3.2355857064185554e-09, 4.1759462466484876e-20, -5.042311271810582e-10),
    (-0.0059475779383993, -0.0005401647678926045, 0.00879104135507679, -0.009857631558785612, 0.005013469503102154,
     1.2807521786221875e-06, -0.0020626019342754685, 0.0017109128573523059, -0.000676953127141338,
     -6.901154567656214e-09, 0.00018855128143995903, -0.0001339521566349197, 4.626318303352804e-05,
     4.003423061332135e-11, -1.0255652921494033e-05, 6.612086372797651e-06, -2.0913022027253007e-06,
     -2.095177564960382e-13, 3.975602904199325e-07, -2.395621197881589e-07, 7.118288338214586e-08,
     8.925574871713252e-16, -1.2101547235064675e-08, 6.935061824833439e-09, -1.966146445385609e-09),
    (0.01740202778752271, -0.029527880945699123, 0.020045875571402798, 7.0289515966903405e-06, -0.012375421071343148,
     0.011976293444235253, -0.0054156038466518525, -6.329089339641862e-08, 0.0018855118129005065,
     -0.001473473274825001, 0.0005551581009770838, 5.240683441255066e-10, -0.00014357913535784837,
     9.91812932249433e-05, -3.346083474947831e-05, -3.5755837291098967e-12, 7.1560851960630075e-06,
     -4.551680262815553e-06, 1.4236576649271474e-06, 1.8803149079275236e-14, -2.662340389892921e-07,
     1.5950642189595716e-07, -4.718751467384107e-08, -6.510781264821694e-17, 7.979509102674677e-09),
    (0.03024912416090589, 0.0024817436002649977, -0.049939134373457025, 0.05991564300930787, -0.03248320760162339,
     -5.721296865210344e-06, 0.015085251778569354, -0.013261324005088445, 0.0055515262632426145,
     3.026318225703001e-08, -0.0017229548406756724, 0.0012893570099929638, -0.00046845138348319875,
     -1.8302599378930447e-10, 0.00011449739014822654, -7.737856522124447e-05, 2.5625836246985202e-05,
     1.0766165332658074e-12, -5.324680928242262e-06, 3.3496348630644643e-06, -1.038125312868401e-06,
     -5.608908533478749e-15, 1.9150821930676722e-07, -1.1418365800203776e-07, 3.365442520915233e-08),
    (-0.09905102088015905, 0.17954011706123485, -0.12989606383463778, -3.1478872752284355e-05, 0.09051063527684813,
     -0.0928288244111844, 0.04441211283987781, 2.7779236316835886e-07, -0.017229543805449696, 0.014182925050891573,
     -0.005621416163374734, -2.3959850918638095e-09, 0.0016029634366079909, -0.0011606784674435774,
     0.00041001337768153875, 1.8365800753181603e-11, -9.58442565636559e-05, 6.364306233776471e-05,
     -2.0762506244890635e-05, -1.1806017999805488e-13, 4.213180823912094e-06, -2.6262241337013133e-06,
     8.077062049488396e-07, 5.996409690563338e-16, -1.47297373744462e-07),
    (-0.19994542198219728, -0.015056113040026424, 0.36470239469348487, -0.4643519231173355, 0.26640934719197895,
     3.403826602714719e-05, -0.13784338709329624, 0.1276467178337056, -0.056213828755200985, -1.7531508854830108e-07,
     0.019235592956768112, -0.015088821281095314, 0.005740185445135012, 1.0622382710173866e-09,
     -0.0015335082692563998, 0.0010819320643228215, -0.0003737251019394563, -6.617090419433389e-12,
     8.42636173809102e-05, -5.5150706827484874e-05, 1.7769536448337797e-05, 3.879070571006568e-14,
     -3.5351369749902462e-06, 2.1865832127706725e-06, -6.681284949240542e-07),
    (0.7243860850402943, -1.3918010932653375, 1.0654143352413967, 0.0001876173868950258, -0.827055011761527,
     0.8935243334782842, -0.44971003995291337, -1.6107401567546651e-06, 0.1923559016527109, -0.1659770216004261,
     0.06888222268181433, 1.391009172443142e-08, -0.02146911561508663, 0.016228980898865892, -0.005979601617258422,
     -1.1287468171928069e-10, 0.001516745111978496, -0.0010478634293554165, 0.00035539072889105875,
     8.162616536150783e-13, -7.777301344470885e-05, 5.029141389162907e-05, -1.6035083877747675e-05,
     -5.0260094840152135e-15, 3.1369106037108428e-06),
    (1.6668949727276812, 0.1165462765994632, -3.3288393225018904, 4.469232548286404, -2.6977693045875806,
     -0.0002600667859891061, 1.5389017615694538, -1.4937962361134611, 0.6888196463323315, 1.3077482004532885e-06,
     -0.2576296332559629, 0.2109767610212545, -0.08371440835921982, -7.792042747000674e-09, 0.024267923064833764,
     -0.017813678334552763, 0.006397033038886307, 4.9415957307924725e-11, -0.0015554602758916928,
     0.0010561196918773697, -0.00035277184484116647, -3.0939103274354235e-13, 7.528585452877513e-05,
     -4.8186515801973e-05, 1.5227272261135095e-05),
    (-6.618829886137293, 13.397985455142589, -10.789350606845145, -0.0014352254537875018, 9.23336945961898,
     -10.456552819547769, 5.510552602903347, 1.2024439690699191e-05, -2.5762961164755818, 2.320744274538718,
     -1.0045728797216278, -1.0207833106546672e-07, 0.33975092171169696, -0.26720517450758147, 0.10235252851556788,
     8.430448585452676e-10, -0.02799828495925492, 0.020066274142830732, -0.007055436896237373,
     -6.510036896790042e-12, 0.0016562887995937561, -0.0011082898634291512, 0.0003654545342639166,
     4.504194082820455e-14, -7.634011300557932e-05),
    (-17.112706061976095, -1.1208044642899115, 37.131966511885445, -52.29827102534896, 33.058589696624615,
     0.0024791298976198995, -20.61089403411526, 20.886727751455822, -10.045703956517746, -1.2238783428880736e-05,
     4.077013427422142, -3.473667358470283, 1.4329352617303721, 7.135612771732799e-08, -0.4479725716041533,
     0.34112666076996123, -0.12699786335106672, -4.5009172627885263e-10, 0.033125776059235765, -0.023274087133486544,
     0.008039999749288682, 2.9014850241350154e-12, -0.0018321627125162138, 0.001210814074308124,
     -0.00039487195597625305),
    (73.89033153567425, -156.80141270402274, 132.2177542759164, 0.013692876877323932, -123.66496885920151,
     146.2068939106273, -80.36558772486529, -0.00011259851130717249, 40.770132196180214, -38.210340013274006,
     17.195222942763678, 9.351478525225111e-07, -6.271615990956665, 5.116899906638013, -2.0319658125917894,
     -7.68015576927279e-09, 0.5962639690008922, -0.44220765550893937, 0.1607999949801386, 6.105452322399745e-11,
     -0.04030757967497879, 0.02784872370893079, -0.00947692694339809, -4.5311013227974904e-13, 0.002105335093633221),
    (212.1683709838252, 13.107863022633866, -496.9828593287175, 731.2159526696921, -482.13821720890815,
     -0.028817248691623405, 326.1672030294732, -343.89340280087987, 171.9519387080629, 0.00014038023228364068,
     -75.25941959194343, 66.51969983809508, -28.44751976721878, -8.023117747524886e-07, 9.540223647451496,
     -7.51753014765263, 2.894399900499762, 4.980023807118572e-09, -0.8061515942879215, 0.5848231979048016,
     -0.20849239270188827, -3.225438491326594e-11, 0.05052804225167161, -0.03441205280628807, 0.011560069800937042),
    (-989.5964309832236, 2192.555536090523, -1928.3586782723344, -0.1592573812157951, 1956.998594591999,
     -2407.251476508217, 1375.6149959328543, 0.0012920686502737788, -752.5941716166408, 731.7166873438302,
     -341.37023489099647, -1.0517978697205148e-05, 133.56313092981054, -112.76295215735033, 46.31039839600551,
     8.49948412810344e-08, -14.510728696418298, 11.111640759871898, -4.169847853971864, -6.787845238126073e-10,
     1.1116169295323557, -0.7914772145428005, 0.277441675222115, 5.226168222780974e-12, -0.06531439992499116),
)


def _sqrt(x: Atom) -> Atom:
    return bind(E.sqrt_p, x)  # type: ignore[no-any-return]


def _temme_region(a: Atom, x: Atom) -> Atom:
    """Where Temme's expansion is used: ``a > 20`` with ``|x - a| < 0.3 a`` (SciPy's region for ``a < 200``, where the
    series and fraction lose digits to cancellation), and ``a > 200`` with ``0.5 a < x < 2 a`` (beyond SciPy's
    ``|x - a| < 4.5 sqrt(a)``: the series would take ~8 sqrt(a) terms, millions by ``a = 1e12``; outside, the series
    and fraction converge in < 60 terms, or the result underflows)."""
    s = E.div(E.sub(x, a), a)
    moderate = _and(E.gt(a, _c(20, a)), E.lt(E.abs(s), _c(0.3, s)))
    large = _and(E.gt(a, _c(200, a)), _and(E.gt(s, _c(-0.5, s)), E.lt(s, _c(1, s))))
    return _or(moderate, large)


def _temme_sums(eta: Atom, a: Atom) -> tuple[Atom, Atom, Atom]:
    """``S = sum_k c_k(eta) a^-k``, ``S' = sum_k c_k'(eta) a^-k`` and ``sum_k k c_k(eta) a^-k``: Horner in ``eta``
    on all ``k`` at once (an extra trailing axis of K terms: a short graph, 2N ops, instead of K N).
    25 x 25 terms in float64 (SciPy's), 10 x 15 in float32 (enough for ``a > 20``, ``|eta| < 0.8``)."""
    table = np.asarray(_TEMME)[:10, :15] if eta.aval.dtype.itemsize <= 4 else np.asarray(_TEMME)
    k_terms, n_terms = table.shape
    rank = eta.aval.ndim
    full, keep = eta.aval.shape + (k_terms,), tuple(range(rank))
    dtype = eta.aval.dtype

    def row(values: np.ndarray) -> Atom:
        return S.broadcast_in_dim(literal(values.astype(dtype), dtype), full, (rank,))

    e = S.broadcast_in_dim(eta, full, keep)
    acc, dacc = row(table[:, -1]), S.zeros(Aval(full, dtype))
    for n in range(n_terms - 2, -1, -1):
        dacc = E.add(E.mul(dacc, e), acc)
        acc = E.add(E.mul(acc, e), row(table[:, n]))
    k = row(np.arange(k_terms, dtype=np.float64))
    powers = E.exp(E.mul(k, S.broadcast_in_dim(E.neg(E.log(a)), full, keep)))  # a^-k
    weighted = E.mul(acc, powers)
    sums = [R.reduce_sum(v, (rank,)) for v in (weighted, E.mul(dacc, powers), E.mul(weighted, k))]
    return sums[0], sums[1], sums[2]


def _temme(a: Atom, x: Atom, kind: str) -> Atom:
    """Temme's uniform asymptotic expansion (DLMF 8.12.3-8.12.4), for large ``a`` near ``x = a``:
    ``Q = erfc(eta sqrt(a/2)) / 2 + R``, ``P = erfc(-eta sqrt(a/2)) / 2 - R``, ``R = weight S``, ``weight =
    e^(-a eta²/2) / sqrt(2 pi a)``, with ``eta²/2 = s - log(1 + s)``, ``s = (x - a) / a``, ``eta = s sqrt(g(s))``
    (``SP.log1pmx_ratio``). ``kind``: "P", "Q", or "dP/da": ``-weight (1/sqrt(g) - eta/2 + S (s - eta²/2 - 1/(2a))
    + dS/da)``, the derivative at fixed ``x`` (``d eta / da = -1 / (a sqrt(g))``), with ``dS/da = -(S' / sqrt(g) +
    sum_k k c_k a^-k) / a``. The coefficients ``c_k(eta) = 1/eta c_{k-1}'(eta) + (-1)^k gamma_k / (lambda - 1)``
    (``lambda = x / a``, ``gamma_k`` Stirling's coefficients of Gamma*(a), ``c_0 = 1/(lambda - 1) - 1/eta``) were
    expanded in powers of ``eta`` with 90-digit arithmetic (Lagrange inversion of ``eta(lambda)``): ``_TEMME``."""
    s = E.div(E.sub(x, a), a)
    g = SP.log1pmx_ratio(s)
    root_g = _sqrt(g)
    eta = E.mul(s, root_g)
    sums, slope, k_sums = _temme_sums(eta, a)
    half_eta2 = E.mul(_c(0.5, x), E.mul(eta, eta))
    weight = E.div(E.exp(E.neg(E.mul(a, half_eta2))), _sqrt(E.mul(a, _c(2 * np.pi, a))))
    if kind == "dP/da":
        inverse_a = E.div(_c(1, a), a)
        d_sums = E.neg(E.mul(E.add(E.div(slope, root_g), k_sums), inverse_a))
        drift = E.sub(E.sub(s, half_eta2), E.mul(_c(0.5, a), inverse_a))
        inner = E.sub(E.div(_c(1, g), root_g), E.mul(_c(0.5, eta), eta))
        return E.neg(E.mul(weight, E.add(E.add(inner, E.mul(sums, drift)), d_sums)))
    z = E.mul(eta, _sqrt(E.mul(a, _c(0.5, a))))
    remainder = E.mul(weight, sums)
    if kind == "P":
        return E.sub(E.mul(_c(0.5, x), SP.erfc(E.neg(z))), remainder)
    return E.add(E.mul(_c(0.5, x), SP.erfc(z)), remainder)


def _domain_error(a: Atom, x: Atom) -> Atom:
    zero = _c(0, x)
    return _or(E.lt(x, zero), E.lt(a, zero), _and(E.eq(a, zero), E.eq(x, zero)), _isnan(a), _isnan(x))


def _series_or_fraction(a: Atom, x: Atom) -> tuple[Atom, Atom, Atom, Atom]:
    """P by the series, or Q by the fraction where ``x >= 1`` and ``x > a`` (returned: ``fraction``), except in
    Temme's region (``temme``) and outside the domain (``domain``). igamma and igammac stage this identically, so
    a program computing both compiles and runs one loop (XLA's CSE)."""
    domain = _domain_error(a, x)
    fraction = _and(bind(E.ge_p, x, _c(1, x)), E.gt(x, a))
    ax, underflow = _prefactor(a, x)  # also where x = 0 < a, or a = 0 < x: their P and Q are set by the callers
    temme = _temme_region(a, x)
    enabled = _not(_or(domain, underflow, E.eq(x, _c(np.inf, x)), temme))
    return _expansion_loop(ax, x, a, enabled, fraction, False), fraction, temme, domain


def _igamma(a: Atom, x: Atom) -> Atom:
    value, fraction, temme, domain = _series_or_fraction(a, x)
    out = E.select(fraction, E.sub(_c(1, x), value), value)
    out = E.select(temme, _temme(a, x, "P"), out)
    out = E.select(E.eq(x, _c(0, x)), S.full_like(out, 0), out)
    out = E.select(E.eq(x, _c(np.inf, x)), S.full_like(out, 1), out)
    return E.select(domain, S.full_like(out, np.nan), out)


# log Gamma(1 + t) = t (-gamma + sum_k (-1)^k zeta(k) / k t^(k-1)), k = 2..51: below 4e-18 for |t| <= 1/2
_LGAMMA1P = (
    -0.5772156649015329, 0.8224670334241132, -0.40068563438653143, 0.27058080842778454, -0.20738555102867398,
    0.1695571769974082, -0.1440498967688461, 0.12550966952474304, -0.11133426586956469, 0.1000994575127818,
    -0.09095401714582904, 0.083353840546109, -0.0769325164113522, 0.07143294629536133, -0.06666870588242046,
    0.06250095514121304, -0.058823978658684585, 0.055555767627403614, -0.05263167937961666, 0.05000004769810169,
    -0.047619070330142226, 0.04545455629320467, -0.04347826605304026, 0.04166666915034121, -0.04000000119214014,
    0.03846153903467518, -0.037037037312989324, 0.035714285847333355, -0.034482758684919304, 0.03333333336437758,
    -0.03225806453115042, 0.03125000000727597, -0.030303030306558044, 0.029411764707594344, -0.02857142857226011,
    0.027777777778181998, -0.027027027027223673, 0.02631578947377995, -0.025641025641072283, 0.025000000000022737,
    -0.024390243902450117, 0.023809523809529224, -0.023255813953491015, 0.02272727272727402, -0.022222222222222855,
    0.021739130434782917, -0.021276595744681003, 0.02083333333333341, -0.02040816326530616, 0.020000000000000018,
    -0.019607843137254912,
)


def _lgamma1p(a: Atom) -> Atom:
    """``log Gamma(1 + a)`` for ``0 <= a <= 1.5``, exact in absolute terms near its zeros at 0 and 1 (where ``lgamma(1
    + a)`` would round ``1 + a`` first): its Taylor series, or ``log(a) + lgamma1p(a - 1)`` above 1/2."""
    near_one = E.gt(a, _c(0.5, a))
    t = E.select(near_one, E.sub(a, _c(1, a)), a)
    terms = 24 if a.aval.dtype.itemsize <= 4 else len(_LGAMMA1P)
    series = E.mul(t, SP.horner(t, _LGAMMA1P[:terms]))
    return E.select(near_one, E.add(series, E.log(E.select(near_one, a, _c(1, a)))), series)


def _q_series_region(a: Atom, x: Atom) -> Atom:
    """Where Q is summed directly (SciPy's choice): ``x <= 1.1`` with ``a <= -0.4 / log(x)`` (``x <= 1/2``) or
    ``a <= 1.1 x``, where ``1 - P`` would lose Q's digits."""
    low = _and(bind(E.le_p, x, _c(0.5, x)), bind(E.le_p, a, E.div(_c(-0.4, x), E.log(x))))
    middle = _and(E.gt(x, _c(0.5, x)), bind(E.le_p, a, E.mul(x, _c(1.1, x))))
    return _and(bind(E.le_p, x, _c(1.1, x)), _or(low, middle))


def _q_series(a: Atom, x: Atom) -> Atom:
    """Q(a, x) for small ``x`` and ``a`` (DLMF 8.7.3): ``1 - x^a / Gamma(a + 1) - x^a / Gamma(a) sum_n (-x)^n / (n!
    (a + n))``, the first difference as ``-expm1(a log x - lgamma1p(a))`` (no cancellation); 25 terms (12 in
    float32) reach eps for ``x <= 1.1``."""
    total, power = S.full_like(x, 0), S.full_like(x, 1)
    for n in range(1, 13 if x.aval.dtype.itemsize <= 4 else 26):
        power = E.mul(power, E.div(E.neg(x), _c(n, x)))
        total = E.add(total, E.div(power, E.add(a, _c(n, a))))
    log_x = E.log(x)
    head = E.neg(bind(E.expm1_p, E.sub(E.mul(a, log_x), _lgamma1p(a))))
    return E.sub(head, E.mul(E.exp(E.sub(E.mul(a, log_x), SP.lgamma(a))), total))


def _igammac(a: Atom, x: Atom) -> Atom:
    value, fraction, temme, domain = _series_or_fraction(a, x)
    out = E.select(fraction, value, E.sub(_c(1, x), value))
    out = E.select(_q_series_region(a, x), _q_series(a, x), out)
    out = E.select(temme, _temme(a, x, "Q"), out)
    out = E.select(_or(E.eq(x, _c(np.inf, x)), E.eq(a, _c(0, a))), S.full_like(out, 0), out)
    return E.select(domain, S.full_like(out, np.nan), out)


def _igamma_grad_a(a: Atom, x: Atom) -> Atom:
    x_zero = E.eq(x, _c(0, x))
    domain = _or(E.lt(x, _c(0, x)), bind(E.le_p, a, _c(0, a)), _isnan(a), _isnan(x))
    use_fraction = _and(E.gt(x, _c(1, x)), E.gt(x, a))
    ax, underflow = _prefactor(a, x)
    temme = _temme_region(a, x)
    enabled = _not(_or(x_zero, domain, underflow, temme))
    value = _expansion_loop(ax, x, a, enabled, use_fraction, True)
    out = E.select(use_fraction, E.neg(value), value)
    out = E.select(temme, _temme(a, x, "dP/da"), out)
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
