"""Continuous distributions beyond uniform/normal: inverse-CDF samplers (exponential, laplace, logistic, gumbel,
cauchy, truncated_normal), multivariate_normal, and the gamma family (gamma, beta, dirichlet, chisquare, t).

The inverse-CDF samplers apply JAX's formulas to the same uniforms, so their f32 draws equal ``jax.random``'s
(bit for bit where the lowering of ``log``/``log1p``/``tan`` agrees). They are reparameterized: ``ts.grad``
flows through the transformed parameters (``truncated_normal``'s bounds, ``multivariate_normal``'s mean and cov).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ...control_flow import while_loop
from ...custom_derivatives import stop_gradient
from ...dtypes import Floating, f32
from ...staging.primitives import autodiff as A
from ...staging.primitives import elementwise as E
from ..numpy import (
    abs as abs_, broadcast_to, clip, exp, log, log1p, logaddexp, logical_and,
    isfinite, logical_not, logical_or, logsumexp, matmul, maximum, sign, sqrt, swapaxes, tan, where,
)
from ..numpy.linalg_decompositions import cholesky, eigh
from ..numpy.linalg_svd import svd
from ..numpy._core import ShapeLike, as_tensor, describe, op, parse_shape, shape_error, wrap
from ._distributions import _float_dtype, _uniform, normal
from ._keys import AnyTensor, Key, check_key, split
from ._params import float_dtypes, open_uniform, param, sample_shape, until_done


def _finfo(dtype: np.dtype[Any]) -> Any:
    return ml_dtypes.finfo(dtype)  # type: ignore[no-untyped-call]  # np.finfo has no bf16


def _inverse_cdf(op_name: str, key: Key, shape: ShapeLike, dtype: Any, low: str, transform: Any) -> AnyTensor:
    """``transform(u)`` for ``u`` uniform in ``[low, 1)`` (``low``: a finfo attribute, or '0'), computed in f32
    for half-precision results."""
    check_key(op_name, key)
    target = _float_dtype(op_name, dtype)
    work = target if target.itemsize >= 4 else np.dtype(np.float32)
    lo = 0.0 if low == "0" else (-1.0 + float(_finfo(work).epsneg) if low == "-1+epsneg" else float(getattr(_finfo(work), low)))
    u = as_tensor(_uniform(op_name, key, shape, work, lo, 1.0))
    out = as_tensor(transform(u))
    return out if work == target else out.astype(target)


@op
def exponential(key: Key, shape: ShapeLike = (), dtype: type[Floating] | Any = f32) -> AnyTensor:
    """Standard exponential floats: ``-log1p(-u)``."""
    return _inverse_cdf("exponential", key, shape, dtype, "0", lambda u: -log1p(-u))


@op
def laplace(key: Key, shape: ShapeLike = (), dtype: type[Floating] | Any = f32) -> AnyTensor:
    """Standard Laplace floats (density ``exp(-|x|) / 2``): ``sign(u) * log1p(-|u|)`` for ``u`` in (-1, 1)."""
    return _inverse_cdf("laplace", key, shape, dtype, "-1+epsneg", lambda u: sign(u) * log1p(-abs_(u)))


@op
def logistic(key: Key, shape: ShapeLike = (), dtype: type[Floating] | Any = f32) -> AnyTensor:
    """Standard logistic floats: ``log(u) - log1p(-u)``."""
    return _inverse_cdf("logistic", key, shape, dtype, "tiny", lambda u: log(u) - log1p(-u))


@op
def gumbel(key: Key, shape: ShapeLike = (), dtype: type[Floating] | Any = f32) -> AnyTensor:
    """Standard Gumbel floats: ``-log(-log(u))``."""
    return _inverse_cdf("gumbel", key, shape, dtype, "tiny", lambda u: -log(-log(u)))


@op
def cauchy(key: Key, shape: ShapeLike = (), dtype: type[Floating] | Any = f32) -> AnyTensor:
    """Standard Cauchy floats: ``tan(pi * (u - 1/2))``."""
    return _inverse_cdf("cauchy", key, shape, dtype, "eps", lambda u: tan(float(np.pi) * (u - 0.5)))


@op
def truncated_normal(
    key: Key, lower: Any, upper: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None
) -> AnyTensor:
    """Standard normal floats conditioned on ``lower < x < upper`` (by the inverse CDF; differentiable with
    respect to the bounds). ``shape`` defaults to the bounds' broadcast shape; NaN where ``lower >= upper``.

    As in JAX, the inverse CDF goes through ``erf``, whose values near ±1 are coarse: intervals far in a tail
    (both bounds beyond about 4 in f32, 8 in f64) are sampled coarsely, and beyond about 5.5 (f32) the draws
    collapse onto a bound."""
    check_key("truncated_normal", key)
    target, work = float_dtypes("truncated_normal", dtype, lower, upper)
    sizes, names = sample_shape("truncated_normal", shape, lower, upper)
    lo, hi = param(lower, work, sizes), param(upper, work, sizes)
    root2 = float(np.sqrt(2.0))
    a, b = (wrap(E.erf(as_tensor(bound / root2).atom)) for bound in (lo, hi))
    u = as_tensor(_uniform("truncated_normal", key, sizes, work, a, b))
    x = root2 * wrap(E.erf_inv(u.atom))
    # Rounding (or u landing on a) must not put a draw on or past a bound: clip to just inside them (at least
    # one ulp), passing the bounds no gradient through the clip.
    eps, tiny = float(_finfo(work).eps), float(_finfo(work).tiny)
    lo_s, hi_s = stop_gradient(lo), stop_gradient(hi)
    lo_in = where(isfinite(lo_s), lo_s + abs_(lo_s) * eps + tiny, lo_s)
    hi_in = where(isfinite(hi_s), hi_s - abs_(hi_s) * eps - tiny, hi_s)
    out = as_tensor(where(lo_s < hi_s, clip(x, lo_in, hi_in), float("nan")))  # an empty interval has no draws
    return out if work == target else out.astype(target)


# ------------------------------------------------------------------------------------- multivariate normal


@op
def multivariate_normal(
    key: Key, mean: Any, cov: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None,
    method: str = "cholesky",
) -> AnyTensor:
    """Multivariate normal vectors ``mean + A z`` with ``A Aᵀ = cov``; ``A`` by ``method``: 'cholesky' (default),
    'eigh' or 'svd' (these two accept singular covariances). Result shape ``(*shape, n)``; ``shape`` defaults to
    the broadcast of ``mean.shape[:-1]`` and ``cov.shape[:-2]``."""
    check_key("multivariate_normal", key)
    if method not in ("cholesky", "eigh", "svd"):
        raise ValueError(f"method must be 'cholesky', 'eigh' or 'svd', got {method!r}")
    target, work = float_dtypes("multivariate_normal", dtype, mean, cov)
    m: Any = as_tensor(mean)
    c: Any = as_tensor(cov)
    if m.aval.ndim < 1 or c.aval.ndim < 2 or c.aval.shape[-2:] != (m.aval.shape[-1],) * 2:
        raise shape_error(
            "multivariate_normal", f"mean must be (..., n) and cov (..., n, n); got {describe(m)} and {describe(c)}"
        )
    n = m.aval.shape[-1]
    sizes, _ = _mvn_shape(shape, m, c)
    c = c.astype(work)
    factor: Any
    w: Any
    v: Any
    u: Any
    s: Any
    _vt: Any
    if method == "cholesky":
        factor = cholesky(c)
    elif method == "eigh":
        w, v = eigh(c)
        factor = v * sqrt(maximum(w, 0.0))[..., None, :]
    else:
        u, s, _vt = svd(c)
        factor = u * sqrt(s)[..., None, :]
    z: Any = as_tensor(normal(key, (*sizes, n), work))
    if c.aval.ndim == 2:
        draws = matmul(z, swapaxes(factor, -1, -2))
    else:
        full: Any = broadcast_to(factor, (*sizes, n, n))
        draws = matmul(full, z[..., None])[..., 0]
    out = as_tensor(broadcast_to(m.astype(work), (*sizes, n)) + draws)
    return out if work == target else out.astype(target)


def _mvn_shape(shape: ShapeLike | None, m: Any, c: Any) -> tuple[tuple[int, ...], None]:
    batch = (m.aval.shape[:-1], c.aval.shape[:-2])
    try:
        implied = tuple(np.broadcast_shapes(*batch))
    except ValueError:
        raise shape_error(
            "multivariate_normal", f"mean {describe(m)} and cov {describe(c)} have batch shapes that do not broadcast"
        ) from None
    if shape is None:
        return implied, None
    sizes, _ = parse_shape("multivariate_normal", shape)
    try:
        if tuple(np.broadcast_shapes(sizes, implied)) != sizes:
            raise ValueError
    except ValueError:
        raise shape_error(
            "multivariate_normal", f"shape {sizes} must be one the batch shape {implied} of mean and cov broadcasts to"
        ) from None
    return sizes, None


# ---------------------------------------------------------------------------------------------- gamma family

_GAMMA_ROUNDS = 32  # Marsaglia–Tsang accepts with probability >= 0.95, so 32 rounds all fail with p < 1e-41


def log_gamma_sample(op_name: str, key: Key, alpha: Any, sizes: tuple[int, ...]) -> Any:
    """``log`` of Gamma(alpha) draws (``alpha``: a working-dtype tensor of shape ``sizes``), by Marsaglia and
    Tsang's squeeze-rejection method, vectorized: a bounded ``while_loop`` redraws the rejected elements; alpha < 1
    is boosted to alpha + 1 and multiplied by ``U**(1/alpha)`` (added in log space so tiny alphas keep their
    scale). Differentiating with respect to alpha raises (see ``gamma``)."""
    boost_key, loop_key = split(key)
    valid = alpha > 0.0
    safe = where(valid, alpha, 1.0)
    boosted = where(safe < 1.0, safe + 1.0, safe)
    d = boosted - 1.0 / 3.0
    c = 1.0 / sqrt(9.0 * d)
    nan = float("nan")
    dtype = as_tensor(safe).aval.dtype

    def body(carry: Any) -> Any:
        rounds, logx, done, round_key = carry
        # The key is carried, not ``fold_in(loop_key, rounds)``: jaxlib 0.11's CPU compiler never finishes a
        # loop whose bounded condition meets random bits derived from the counter.
        next_key, k1, k2 = split(round_key, 3)
        z = as_tensor(normal(k1, sizes, dtype))
        u = open_uniform(op_name, k2, sizes, dtype)
        v = (1.0 + c * z) ** 3
        positive = v > 0.0
        logv = log(where(positive, v, 1.0))
        accept = logical_and(positive, log(u) < 0.5 * z * z + d - d * v + d * logv)
        new = logical_and(accept, logical_not(done))
        return rounds + 1, where(new, log(d) + logv, logx), logical_or(done, accept), next_key

    init = (as_tensor(np.int32(0)), as_tensor(param(nan, dtype, sizes)),
            as_tensor(logical_not(valid)), loop_key)
    logx: Any
    _, logx, _, _ = while_loop(until_done(_GAMMA_ROUNDS), body, init)
    boost = log(open_uniform(op_name, boost_key, sizes, dtype)) / safe
    logx = where(safe < 1.0, logx + boost, logx)
    # Holding the accepted draws fixed would give a biased derivative: refuse to give one.
    reason = (f"{op_name}: no derivative with respect to its shape parameter (rejection sampling; the "
              "implicit-reparameterization gradient is not implemented): wrap the parameter in ts.stop_gradient")
    return wrap(A.no_derivative(as_tensor(where(valid, logx, nan)).atom, reason))


def _gamma_like(op_name: str, key: Key, params: tuple[Any, ...], shape: ShapeLike | None, dtype: Any) -> Any:
    check_key(op_name, key)
    target, work = float_dtypes(op_name, dtype, *params)
    sizes, _ = sample_shape(op_name, shape, *params)
    return target, work, sizes, [param(p, work, sizes) for p in params]


def _result(out: Any, work: np.dtype[Any], target: np.dtype[Any]) -> AnyTensor:
    t = as_tensor(out)
    return t if work == target else t.astype(target)


@op
def gamma(key: Key, a: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """Gamma(a, 1) floats (Marsaglia–Tsang rejection, at most 32 vectorized rounds); NaN where ``a <= 0``.

    ``shape`` defaults to ``a``'s shape. Derivatives with respect to ``a`` (either mode) raise a TransformError:
    JAX's implicit-reparameterization gradient is not implemented, and differentiating the accepted draws
    would be biased."""
    target, work, sizes, (alpha,) = _gamma_like("gamma", key, (a,), shape, dtype)
    return _result(exp(log_gamma_sample("gamma", key, alpha, sizes)), work, target)


@op
def beta(key: Key, a: Any, b: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """Beta(a, b) floats: ``X / (X + Y)`` for X ~ Gamma(a), Y ~ Gamma(b), formed from their logs so small
    parameters do not give 0/0."""
    target, work, sizes, (pa, pb) = _gamma_like("beta", key, (a, b), shape, dtype)
    ka, kb = split(key)
    lx = log_gamma_sample("beta", ka, pa, sizes)
    ly = log_gamma_sample("beta", kb, pb, sizes)
    return _result(exp(lx - logaddexp(lx, ly)), work, target)


@op
def dirichlet(key: Key, alpha: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """Dirichlet(alpha) probability vectors along the last axis (normalized Gamma draws, in log space); the
    result has shape ``(*shape, k)``, ``shape`` defaulting to ``alpha.shape[:-1]``."""
    check_key("dirichlet", key)
    target, work = float_dtypes("dirichlet", dtype, alpha)
    conc = as_tensor(alpha)
    if conc.aval.ndim < 1:
        raise shape_error("dirichlet", f"alpha needs a last axis of categories, got {describe(alpha)}")
    k = conc.aval.shape[-1]
    sizes, _ = sample_shape("dirichlet", shape, conc, core=1)
    full = (*sizes, k)
    logs = log_gamma_sample("dirichlet", key, param(conc, work, sizes, (k,)), full)
    return _result(exp(logs - logsumexp(logs, axis=-1, keepdims=True)), work, target)


@op
def chisquare(key: Key, df: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """Chi-square floats with ``df`` degrees of freedom: ``2 * Gamma(df / 2)``."""
    target, work, sizes, (dof,) = _gamma_like("chisquare", key, (df,), shape, dtype)
    return _result(2.0 * exp(log_gamma_sample("chisquare", key, dof * 0.5, sizes)), work, target)


@op
def t(key: Key, df: Any, shape: ShapeLike | None = None, dtype: type[Floating] | Any = None) -> AnyTensor:
    """Student's t floats with ``df`` degrees of freedom: ``Z * sqrt(df / V)``, V ~ chi-square(df)."""
    target, work, sizes, (dof,) = _gamma_like("t", key, (df,), shape, dtype)
    kz, kv = split(key)
    z = as_tensor(normal(kz, sizes, work))
    log_half_v = log_gamma_sample("t", kv, dof * 0.5, sizes)  # V / 2 ~ Gamma(df / 2)
    return _result(z * sqrt(dof * 0.5) * exp(-0.5 * log_half_v), work, target)
