"""Registry cases for the convolution primitives (merged into ``primitive_cases.CASES``), and the float64 NumPy
reference convolution the nn tests use too."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from tensorstage.staging.primitives.convolution import ConvDims


def _dilate_and_pad(x: np.ndarray, axis: int, dilation: int, low: int, high: int) -> np.ndarray:
    """Axis ``axis`` of ``x`` spread ``dilation`` apart, then padded by (low, high); negative amounts crop."""
    n = x.shape[axis]
    spread = (n - 1) * dilation + 1 if n else 0
    positions = np.arange(spread + low + high) - low  # index into the dilated axis of each padded element
    valid = (positions >= 0) & (positions < spread) & (positions % dilation == 0)
    taken = np.take(x, np.where(valid, positions // dilation, 0), axis=axis)
    mask = valid.reshape([-1 if a == axis else 1 for a in range(x.ndim)])
    return np.where(mask, taken, 0)


def conv_reference(
    lhs: np.ndarray, rhs: np.ndarray, *, window_strides: Any, padding: Any, lhs_dilation: Any, rhs_dilation: Any,
    dimension_numbers: ConvDims, feature_group_count: int, batch_group_count: int = 1,
) -> np.ndarray:
    """The convolution by its definition: one ``einsum`` per window tap over strided views of the padded input."""
    dn = dimension_numbers
    x = np.transpose(lhs, dn.lhs)  # (B, C, *S)
    w = np.transpose(rhs, dn.rhs)  # (O, I, *S)
    n = x.ndim - 2
    for i in range(n):
        x = _dilate_and_pad(x, 2 + i, lhs_dilation[i], *padding[i])
    batch, features = x.shape[:2]
    outs, groups = w.shape[0], feature_group_count
    window = w.shape[2:]
    sizes = [
        (x.shape[2 + i] - ((window[i] - 1) * rhs_dilation[i] + 1)) // window_strides[i] + 1 for i in range(n)
    ]
    xg = x.reshape(batch, groups, features // groups, *x.shape[2:])
    wg = w.reshape(groups, outs // groups, *w.shape[1:])
    result = np.zeros((batch, groups, outs // groups, *sizes), np.result_type(lhs, rhs))
    for tap in itertools.product(*map(range, window)):
        view = tuple(
            slice(k * d, k * d + (m - 1) * s + 1, s) for k, d, m, s in zip(tap, rhs_dilation, sizes, window_strides)
        )
        result += np.einsum("bgc...,gqc->bgq...", xg[(Ellipsis, *view)], wg[(Ellipsis, *tap)])
    return np.transpose(result.reshape(batch, outs, *sizes), np.argsort(dn.out))


def conv_case_params(
    dims: ConvDims, strides: tuple[int, ...], padding: tuple[tuple[int, int], ...], lhs_dilation: tuple[int, ...] | None = None,
    rhs_dilation: tuple[int, ...] | None = None, groups: int = 1,
) -> dict[str, Any]:
    n = len(strides)
    return {
        "window_strides": strides, "padding": padding, "lhs_dilation": lhs_dilation or (1,) * n,
        "rhs_dilation": rhs_dilation or (1,) * n, "dimension_numbers": dims, "feature_group_count": groups,
        "batch_group_count": 1,
    }


def _operands(*shapes: tuple[int, ...]) -> Any:
    def make(rng: np.random.Generator, dtype: np.dtype[Any]) -> list[np.ndarray]:
        return [rng.standard_normal(s).astype(dtype) for s in shapes]

    return make


FIRST, LAST = ConvDims.channels_first, ConvDims.channels_last
# Batch last, features first, the one spatial axis between; kernel (W, O, I); result (O, N, W).
ODD = ConvDims(lhs=(2, 0, 1), rhs=(1, 2, 0), out=(1, 0, 2))

# (label, lhs shape, rhs shape, params)
SPECS: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ("1d", (2, 3, 7), (4, 3, 3), conv_case_params(FIRST(1), (1,), ((0, 0),))),
    ("2d nhwc stride 2 padded", (2, 7, 6, 3), (3, 2, 3, 4), conv_case_params(LAST(2), (2, 2), ((1, 1), (0, 2)))),
    ("2d dilated groups 2", (1, 5, 6, 4), (2, 2, 2, 6),
     conv_case_params(LAST(2), (1, 2), ((1, 0), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1), groups=2)),
    ("1d depthwise stride 2", (2, 7, 3), (3, 1, 6), conv_case_params(LAST(1), (2,), ((2, 1),), groups=3)),
    ("3d", (1, 2, 4, 3, 3), (2, 2, 2, 1, 2), conv_case_params(FIRST(3), (1, 2, 1), ((0, 1), (1, 0), (0, 0)))),
    ("negative padding stride 3", (1, 2, 9), (3, 2, 2), conv_case_params(FIRST(1), (3,), ((-1, 2),), lhs_dilation=(2,))),
    ("odd layout", (3, 5, 2), (2, 4, 3), conv_case_params(ODD, (2,), ((1, 1),))),
]

CASES: dict[str, list[Any]] = {}


def _register() -> None:
    import primitive_cases

    CASES["conv_general_dilated"] = [
        primitive_cases.Case(_operands(lhs, rhs), conv_reference, params, label=label)
        for label, lhs, rhs, params in SPECS
    ]
    # When this module is imported first, primitive_cases merged it while CASES was still empty.
    primitive_cases.CASES.update(CASES)


_register()
