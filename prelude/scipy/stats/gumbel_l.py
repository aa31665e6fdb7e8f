"""``tensorstage.scipy.stats.gumbel_l``: the left-skewed Gumbel distribution (``gumbel_r`` of ``-x``)."""

from __future__ import annotations

from typing import Any

from ... import numpy as tnp
from . import gumbel_r
from ._common import AnyTensor, as_loc_scale, floats, quantile

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _mirror(name: str, x: Any, loc: Any, scale: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    x, loc, scale = floats(name, x, loc, scale)
    return -x, -loc, scale


@as_loc_scale
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gumbel_r.logpdf(*_mirror("gumbel_l.logpdf", x, loc, scale))


@as_loc_scale
def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gumbel_r.pdf(*_mirror("gumbel_l.pdf", x, loc, scale))


@as_loc_scale
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gumbel_r.sf(*_mirror("gumbel_l.cdf", x, loc, scale))


@as_loc_scale
def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gumbel_r.logsf(*_mirror("gumbel_l.logcdf", x, loc, scale))


@as_loc_scale
def sf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gumbel_r.cdf(*_mirror("gumbel_l.sf", x, loc, scale))


@as_loc_scale
def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return gumbel_r.logcdf(*_mirror("gumbel_l.logsf", x, loc, scale))


@as_loc_scale
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> AnyTensor:
    return quantile("gumbel_l.ppf", lambda p: tnp.log(-tnp.log1p(-p)), q, loc, scale)
