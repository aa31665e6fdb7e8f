"""``tensorstage.scipy.stats.multinomial``: the multinomial distribution of ``n`` trials over K categories with
probabilities ``p``: counts ``x`` ``(..., K)``, ``n`` ``(...)`` and ``p`` ``(..., K)``, their leading dims broadcast
together (the category axis last, as SciPy and JAX). Integer counts are converted to ``p``'s dtype (JAX requires
them; float counts are accepted too).

Deliberate differences from SciPy: ``p`` is used as given, as JAX's (SciPy replaces its last entry by ``1 -
sum(p[:-1])``; the same where ``p`` sums to 1, and the gradient in every ``p_i`` is JAX's); counts that are not
integers have probability 0 and a non-integer ``n`` gives NaN (SciPy truncates both to integers). As SciPy, counts
that are negative or do not sum to ``n`` have probability 0, and a ``p_i`` outside [0, 1], a negative ``n`` or a NaN
gives NaN."""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np
from typing_extensions import Unpack

from ....tensor import Tensor
from ... import numpy as tnp
from ...numpy import _core
from ...numpy._core import op
from .. import special as sp
from ._common import FT, AnyTensor, S, counts, defined, floats, probability
from .binom import trials

__all__ = ["logpmf", "pmf"]

K = TypeVar("K")


def _operands(name: str, x: Any, n: Any, p: Any) -> tuple[AnyTensor, AnyTensor, AnyTensor]:
    """``x``, ``n`` and ``p`` as ``p``'s float dtype, their leading dims broadcast together (NumPy's rules: the
    category axis keeps ``n`` apart from them, so a batch of ``n`` beside one ``x`` is no outer-product trap)."""
    p = tnp.asarray(p)
    x = tnp.asarray(counts(name, tnp.asarray(x), p))  # (an int NumPy array too)
    n = tnp.asarray(counts(name, n, p) if isinstance(n, Tensor) else tnp.asarray(n, dtype=p.dtype))
    if x.ndim < 1 or p.ndim < 1 or x.shape[-1] != p.shape[-1]:
        raise _core.shape_error(name, f"{name}: x must be (..., K) and p (..., K) with the same K, got x {x.aval} and "
                                      f"p {p.aval}")
    try:
        batch = np.broadcast_shapes(x.shape[:-1], n.shape, p.shape[:-1])
    except ValueError:
        raise _core.shape_error(name, f"{name}: the leading dims of x {x.aval}, n {n.aval} and p {p.aval} do not "
                                      "broadcast together") from None
    k = (p.shape[-1],)
    x, n, p = floats(name, tnp.broadcast_to(x, batch + k), tnp.broadcast_to(n, batch)[..., None],
                     tnp.broadcast_to(p, batch + k))
    return x, n[..., 0], p


@op
def logpmf(x: Tensor[Any, Unpack[S], K], n: Tensor[FT, Unpack[S]] | Tensor[Any] | int | float,
           p: Tensor[FT, Unpack[S], K] | Tensor[FT, K]) -> Tensor[FT, Unpack[S]]:
    """``log n! + sum_i (x_i log p_i - log x_i!)`` where the counts are integers >= 0 summing to ``n``."""
    x, total, p = _operands("multinomial.logpmf", x, n, p)
    counts_ok = tnp.all((x >= 0) & (tnp.floor(x) == x), axis=-1) & (tnp.sum(x, axis=-1) == total)
    safe = tnp.where(counts_ok[..., None], x, 0.0)
    terms = tnp.sum(sp.xlogy(safe, p) - sp.gammaln(safe + 1), axis=-1)
    out = tnp.where(counts_ok, sp.gammaln(tnp.where(counts_ok, total, 0.0) + 1) + terms, -math.inf)
    valid = trials(total) & tnp.all(probability(p), axis=-1)
    return defined(out, tnp.sum(x, axis=-1), valid)


@op
def pmf(x: Tensor[Any, Unpack[S], K], n: Tensor[FT, Unpack[S]] | Tensor[Any] | int | float,
        p: Tensor[FT, Unpack[S], K] | Tensor[FT, K]) -> Tensor[FT, Unpack[S]]:
    return tnp.exp(logpmf(x, n, p))
