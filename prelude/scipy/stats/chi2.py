"""``tensorstage.scipy.stats.chi2``: the chi-squared distribution, ``gamma(df / 2, scale=2)``."""

from __future__ import annotations

from typing import Any

from . import gamma
from ._common import AnyTensor, as_shape1, floats

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _as_gamma(name: str, x: Any, df: Any, loc: Any, scale: Any) -> tuple[AnyTensor, ...]:
    x, df, loc, scale = floats(name, x, df, loc, scale)
    return x, df / 2, loc, 2 * scale


@as_shape1
def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gamma.logpdf(*_as_gamma("chi2.logpdf", x, df, loc, scale))


@as_shape1
def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gamma.pdf(*_as_gamma("chi2.pdf", x, df, loc, scale))


@as_shape1
def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gamma.cdf(*_as_gamma("chi2.cdf", x, df, loc, scale))


@as_shape1
def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gamma.logcdf(*_as_gamma("chi2.logcdf", x, df, loc, scale))


@as_shape1
def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gamma.sf(*_as_gamma("chi2.sf", x, df, loc, scale))


@as_shape1
def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gamma.logsf(*_as_gamma("chi2.logsf", x, df, loc, scale))


@as_shape1
def ppf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gamma.ppf(*_as_gamma("chi2.ppf", q, df, loc, scale))


@as_shape1
def isf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gamma.isf(*_as_gamma("chi2.isf", q, df, loc, scale))
