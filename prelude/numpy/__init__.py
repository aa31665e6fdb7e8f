"""``tensorstage.numpy``: NumPy's API on staged tensors and device arrays.

Differences from NumPy, all deliberate: arrays are immutable (``x.at[i].set(v)``), array dtypes never promote
implicitly, and broadcasting never adds leading axes to one operand while stretching another (the ``(N,)`` vs
``(N, 1)`` outer-product trap); both raise errors that name the op, the shapes and the source line.
"""

from .creation import (
    arange, array, asarray, empty, empty_like, eye, fromfunction, full, full_like, geomspace, indices, linspace,
    logspace, ones, ones_like, zeros, zeros_like,
)
from .cumulative import (
    cummax, cummin, cumprod, cumsum, cumulative_prod, cumulative_sum, diff, ediff1d, nancumprod, nancumsum,
)
from .einsum import einsum
from .indexing import getitem
from .joining import (
    array_split, block, concatenate, dsplit, dstack, hsplit, hstack, split, stack, take, take_along_axis,
    trim_zeros, vsplit, vstack,
)
from .linalg import dot, matmul, outer, tensordot, vdot
from .mathfuncs import (
    allclose, arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, cbrt, copysign, cosh, deg2rad, degrees,
    exp2, fix, float_power, fmax, fmin, fmod, heaviside, hypot, isclose, logaddexp, logaddexp2, nan_to_num, rad2deg,
    radians, signbit, sinc, sinh, trunc,
)
from .matrices import (
    corrcoef, cov, cross, diag, diagflat, diagonal, identity, inner, kron, matrix_transpose, trace, tri, tril,
    tril_indices, tril_indices_from, triu, triu_indices, triu_indices_from, vander, vecdot,
)
from .nanreductions import (
    average, count_nonzero, nanargmax, nanargmin, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar, ptp,
)
from .padding import pad
from .reductions import (
    all, amax, amin, any, argmax, argmin, logsumexp, max, mean, min, prod, std, sum, var,
)
from .selection import (
    argwhere, bincount, choose, compress, digitize, extract, flatnonzero, histogram, histogram2d,
    histogram_bin_edges, histogramdd, intersect1d, isin, nonzero, piecewise, select, setdiff1d, setxor1d, union1d,
    unique, unique_all, unique_counts, unique_inverse, unique_values,
)
from .shaping import (
    broadcast_shapes, broadcast_to, expand_dims, moveaxis, permute_dims, ravel, reshape, rollaxis, squeeze, swapaxes,
    transpose,
)
from .rearranging import (
    append, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, column_stack, delete, flip, fliplr, flipud,
    insert, meshgrid, repeat, resize, roll, rot90, tile,
)
from .sorting import (
    argpartition, argsort, lexsort, median, nanmedian, nanpercentile, nanquantile, partition, percentile, quantile,
    searchsorted, sort,
)
from . import (
    bit_packing, complex_sorting, einsum_planning, extremes, flat_updates, float_math, host_io, index_tools, masked_indices,
    names, polynomials, printing, python_ufuncs, sampled_calculus, signal_tools, type_names, vectorizing,
)
from .bit_packing import *  # noqa: F403  (each of these modules lists its public names in __all__)
from .complex_sorting import *  # noqa: F403
from .einsum_planning import *  # noqa: F403
from .extremes import *  # noqa: F403
from .flat_updates import *  # noqa: F403
from .float_math import *  # noqa: F403
from .host_io import *  # noqa: F403
from .index_tools import *  # noqa: F403
from .masked_indices import *  # noqa: F403
from .names import *  # noqa: F403
from .polynomials import *  # noqa: F403
from .printing import *  # noqa: F403
from .python_ufuncs import *  # noqa: F403
from .sampled_calculus import *  # noqa: F403
from .signal_tools import *  # noqa: F403
from .type_names import *  # noqa: F403
from .vectorizing import *  # noqa: F403
from .ufuncs import (
    abs, absolute, add, astype, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift,
    bitwise_xor, ceil, clip, cos, divide, divmod, equal, exp, expm1, floor, floor_divide, greater, greater_equal,
    invert, isfinite, isinf, isnan, left_shift, less, less_equal, log, log1p, log2, log10, logical_and, logical_not,
    logical_or, logical_xor, maximum, minimum, mod, multiply, negative, not_equal, positive, power, reciprocal,
    remainder, right_shift, rint, round, rsqrt, sigmoid, sign, sin, sqrt, square, subtract, tan, tanh, true_divide,
    where,
)

__all__ = [
    "abs", "absolute", "add", "all", "amax", "amin", "any", "arange", "argmax", "argmin", "array", "asarray", "astype",
    "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "broadcast_to", "ceil", "clip", "cos", "divide", "divmod", "dot", "equal", "exp", "expand_dims", "expm1", "eye",
    "floor", "floor_divide", "full", "full_like", "getitem", "greater", "greater_equal", "invert", "isfinite", "isinf",
    "isnan", "left_shift", "less", "less_equal", "linspace", "log", "log1p", "log2", "log10", "logical_and",
    "logical_not", "logical_or", "logical_xor", "logsumexp", "matmul", "max", "maximum", "mean", "min", "minimum",
    "mod", "moveaxis", "multiply", "negative", "not_equal", "ones", "ones_like", "outer", "positive", "power", "prod",
    "ravel", "reciprocal", "remainder", "reshape", "right_shift", "rint", "round", "rsqrt", "sigmoid", "sign", "sin",
    "sqrt", "square", "squeeze", "std", "subtract", "sum", "swapaxes", "tan", "tanh", "tensordot", "transpose",
    "true_divide", "var", "vdot", "where", "zeros", "zeros_like",
    # indexing, joining and einsum
    "array_split", "concatenate", "dstack", "einsum", "hstack", "pad", "split", "stack", "take",
    "take_along_axis", "vstack",
    # sorting, cumulative, more math, NaN-aware reductions, matrices, rearranging
    "allclose", "append", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argpartition",
    "argsort", "atleast_1d", "atleast_2d", "atleast_3d", "average", "broadcast_arrays", "cbrt", "column_stack",
    "copysign", "corrcoef", "cosh", "count_nonzero", "cov", "cross", "cummax", "cummin", "cumprod", "cumsum",
    "cumulative_prod", "cumulative_sum", "deg2rad", "degrees", "delete", "diag", "diagflat", "diagonal", "diff",
    "ediff1d", "exp2", "fix", "flip", "fliplr", "flipud", "float_power", "fmax", "fmin", "fmod", "heaviside",
    "hypot", "identity", "inner", "insert", "isclose", "kron", "lexsort", "logaddexp", "logaddexp2",
    "matrix_transpose", "median", "meshgrid", "nan_to_num", "nanargmax", "nanargmin", "nancumprod", "nancumsum",
    "nanmax", "nanmean", "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum",
    "nanvar", "partition", "percentile", "ptp", "quantile", "rad2deg", "radians", "repeat", "resize", "roll",
    "rot90", "searchsorted", "signbit", "sinc", "sinh", "sort", "tile", "trace", "tri", "tril", "tril_indices",
    "tril_indices_from", "triu", "triu_indices", "triu_indices_from", "trunc", "vander", "vecdot",
    # selection by value (static sizes)
    "argwhere", "bincount", "choose", "compress", "digitize", "extract", "flatnonzero", "histogram",
    "histogram2d", "histogram_bin_edges", "histogramdd", "intersect1d", "isin", "nonzero", "piecewise", "select",
    "setdiff1d", "setxor1d", "union1d", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    # more creation, splitting and axis moves
    "block", "broadcast_shapes", "dsplit", "empty", "empty_like", "fromfunction", "geomspace", "hsplit", "indices",
    "logspace", "permute_dims", "rollaxis", "trim_zeros", "vsplit",
]
__all__ += names.__all__  # one statement per module: the form mypy follows
__all__ += float_math.__all__
__all__ += index_tools.__all__
__all__ += signal_tools.__all__
__all__ += sampled_calculus.__all__
__all__ += polynomials.__all__
__all__ += vectorizing.__all__
__all__ += bit_packing.__all__
__all__ += type_names.__all__
__all__ += flat_updates.__all__
__all__ += complex_sorting.__all__
__all__ += host_io.__all__
__all__ += printing.__all__
__all__ += einsum_planning.__all__
__all__ += masked_indices.__all__
__all__ += python_ufuncs.__all__
__all__ += extremes.__all__
