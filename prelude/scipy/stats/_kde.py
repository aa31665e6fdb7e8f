"""``tensorstage.scipy.stats.gaussian_kde``: SciPy's Gaussian kernel density estimator, as a pytree (so a fitted
estimator can be passed to and returned from programs, or built inside one from staged data).

``dataset`` is ``(d, n)`` (a 1-D one is ``(1, n)``), floating-point (dtypes never change: integer data is a
DTypeError, where SciPy converts); ``weights`` optional, normalized. The kernel covariance is the data's weighted
covariance times ``factor**2``, ``factor`` by ``bw_method``: 'scott' (default) ``neff ** (-1 / (d + 4))``,
'silverman', a number, or a callable taking the estimator. Deliberate differences from SciPy (as JAX):
``resample(key, shape)`` takes a PRNG key; ``integrate_box`` and ``set_bandwidth`` raise; a singular data covariance
gives NaN or inf instead of raising (its values are not known while staging).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ....pytree import register_pytree_node
from ....staging import dtypes as _dt
from ... import numpy as tnp
from ...numpy._core import dtype_error, shape_error
from ...numpy.linalg_decompositions import cholesky, solve_triangular
from ...numpy.linalg_solvers import inv
from ...random import _continuous, _discrete, _keys
from ..special import logsumexp, ndtr
from ._common import AnyTensor

__all__ = ["gaussian_kde"]

BandwidthMethod = str | float | Callable[["gaussian_kde"], Any] | None


class gaussian_kde:  # noqa: N801 - SciPy's name
    """A Gaussian kernel density estimate of ``dataset`` (``(d, n)``, or ``(n,)`` for one dimension)."""

    __slots__ = ("neff", "dataset", "weights", "covariance", "inv_cov")
    neff: AnyTensor
    dataset: AnyTensor
    weights: AnyTensor
    covariance: AnyTensor
    inv_cov: AnyTensor

    def __init__(self, dataset: Any, bw_method: BandwidthMethod = None, weights: Any = None) -> None:
        data = tnp.atleast_2d(_real_floats("gaussian_kde", dataset))
        if data.ndim != 2 or data.size < 2:
            raise shape_error("gaussian_kde", f"dataset must be (d, n) with more than one element, got {data.aval}")
        d, n = data.shape
        if weights is None:
            w = tnp.full((n,), 1.0 / n, dtype=data.dtype)
        else:
            w = _real_floats("gaussian_kde", weights)
            if w.ndim != 1 or w.shape[0] != n or w.dtype != data.dtype:
                raise shape_error("gaussian_kde", f"weights must be ({n},) {data.dtype} for dataset {data.aval}, "
                                  f"got {w.aval}")
            w = w / tnp.sum(w)
        self.dataset, self.weights = data, w
        self.neff = 1 / tnp.sum(w * w)
        factor = self._factor("scott" if bw_method is None else bw_method)
        data_covariance = tnp.atleast_2d(tnp.cov(data, rowvar=True, bias=False, aweights=w))
        self.covariance = data_covariance * factor**2
        self.inv_cov = inv(data_covariance) / factor**2

    def _factor(self, method: BandwidthMethod) -> Any:
        d = self.d
        if isinstance(method, str):
            if method == "scott":
                return self.neff ** (-1.0 / (d + 4))
            if method == "silverman":
                return (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(method):
            return method(self)
        elif isinstance(method, (int, float)) and not isinstance(method, bool):
            return method
        raise ValueError(f"gaussian_kde: bw_method must be 'scott', 'silverman', a number or a callable, got {method!r}")

    @property
    def d(self) -> int:
        return int(self.dataset.shape[0])

    @property
    def n(self) -> int:
        return int(self.dataset.shape[1])

    def evaluate(self, points: Any) -> AnyTensor:
        """The estimated density at ``points`` (``(d, m)``; ``(m,)`` when ``d`` is 1, ``(d,)`` for one point)."""
        return _mixture(self._points("evaluate", points), self.dataset, self.weights, self.covariance, log=False)

    __call__ = evaluate
    pdf = evaluate

    def logpdf(self, x: Any) -> AnyTensor:
        """The log of the estimated density at ``x``, summed in log space (no underflow far from the data)."""
        return _mixture(self._points("logpdf", x), self.dataset, self.weights, self.covariance, log=True)

    def integrate_gaussian(self, mean: Any, cov: Any) -> AnyTensor:
        """The integral of the density times the normal density of ``mean`` (``(d,)``) and ``cov`` (``(d, d)``)."""
        mu = _real_floats("integrate_gaussian", mean)
        sigma = tnp.atleast_2d(_real_floats("integrate_gaussian", cov))
        if mu.size != self.d or sigma.shape != (self.d, self.d):
            raise shape_error("integrate_gaussian", f"mean must be ({self.d},) and cov ({self.d}, {self.d}) for a "
                              f"{self.d}-dimensional estimate, got {mu.aval} and {sigma.aval}")
        centre = tnp.reshape(mu, (self.d, 1))
        return _mixture(centre, self.dataset, self.weights, self.covariance + sigma, log=False)[0]

    def integrate_box_1d(self, low: Any, high: Any) -> AnyTensor:
        """The probability of ``[low, high]`` (one-dimensional estimates, scalar limits)."""
        if self.d != 1:
            raise shape_error("integrate_box_1d", f"only one-dimensional estimates, this one has d = {self.d}")
        lo, hi = (_real_floats("integrate_box_1d", v, self.dataset) for v in (low, high))
        if lo.ndim or hi.ndim:
            raise shape_error("integrate_box_1d", f"the limits must be scalars, got {lo.aval} and {hi.aval}")
        sigma = tnp.sqrt(self.covariance[0, 0])
        centres = self.dataset[0]
        return tnp.sum(self.weights * (ndtr((hi - centres) / sigma) - ndtr((lo - centres) / sigma)))

    def integrate_kde(self, other: gaussian_kde) -> AnyTensor:
        """The integral of the product of this density and ``other``'s."""
        if other.d != self.d:
            raise shape_error("integrate_kde", f"the estimates have dimensions {self.d} and {other.d}")
        at_other = _mixture(other.dataset, self.dataset, self.weights, self.covariance + other.covariance, log=False)
        return tnp.sum(other.weights * at_other)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> AnyTensor:
        """Draws from the estimate, ``(d, *shape)``: a data point chosen by weight plus kernel noise."""
        pick, noise = _keys.split(key)
        index = _discrete.choice(pick, self.n, shape=shape, p=self.weights)
        mean = tnp.zeros((self.d,), dtype=self.dataset.dtype)
        eps = _continuous.multivariate_normal(noise, mean, self.covariance, shape=shape, dtype=self.dataset.dtype)
        return self.dataset[:, index] + tnp.moveaxis(eps, -1, 0)

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> AnyTensor:
        raise NotImplementedError("gaussian_kde.integrate_box: only integrate_box_1d is supported (as in JAX)")

    def set_bandwidth(self, bw_method: BandwidthMethod = None) -> None:
        raise NotImplementedError("gaussian_kde.set_bandwidth: build a new estimate instead (it is immutable)")

    def _points(self, name: str, points: Any) -> AnyTensor:
        """``points`` as ``(d, m)``: SciPy reads a ``(d,)`` vector as one point when ``d > 1``."""
        p = tnp.atleast_2d(_real_floats(name, points))
        if p.ndim == 2 and p.shape[0] == self.d and p.dtype == self.dataset.dtype:
            return p
        if p.ndim == 2 and p.shape == (1, self.d) and p.dtype == self.dataset.dtype:
            return tnp.reshape(p, (self.d, 1))
        raise shape_error(name, f"points must be ({self.d}, m) {self.dataset.dtype} for a {self.d}-dimensional "
                          f"estimate of {self.dataset.aval}, got {p.aval}")

    def tree_flatten(self) -> tuple[tuple[AnyTensor, ...], None]:
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux: object, children: Any) -> gaussian_kde:
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde


register_pytree_node(gaussian_kde, gaussian_kde.tree_flatten, lambda aux, c: gaussian_kde.tree_unflatten(aux, c))


def _real_floats(name: str, x: Any, like: AnyTensor | None = None) -> AnyTensor:
    """``x`` as a real floating-point tensor; Python numbers take ``like``'s dtype (they are weakly typed)."""
    t = tnp.asarray(x, dtype=like.dtype) if like is not None and isinstance(x, (int, float)) else tnp.asarray(x)
    if not _dt.is_float(t.dtype):
        raise dtype_error(name, f"{name} needs real floating-point data, got {t.aval}; convert with .astype(f32)")
    return t


def _mixture(points: AnyTensor, centres: AnyTensor, weights: AnyTensor, cov: AnyTensor, *, log: bool) -> AnyTensor:
    """``sum_j weights[j] N(points[:, k]; centres[:, j], cov)`` for every ``k`` (its log with ``log``): both point
    sets whitened by ``cov``'s Cholesky factor, then exact differences (no |x|² + |y|² - 2xy cancellation)."""
    factor = cholesky(cov)
    x = solve_triangular(factor, points, lower=True).T  # (m, d)
    y = solve_triangular(factor, centres, lower=True).T  # (n, d)
    d = cov.shape[0]
    log_norm = -tnp.sum(tnp.log(tnp.diagonal(factor))) - 0.5 * d * math.log(2 * math.pi)
    exponent = log_norm - 0.5 * tnp.sum(tnp.square(x[:, None, :] - y[None, :, :]), axis=-1)  # (m, n)
    if log:
        summed: AnyTensor = logsumexp(exponent + tnp.log(weights), axis=1)
        return summed
    return tnp.sum(weights * tnp.exp(exponent), axis=1)
