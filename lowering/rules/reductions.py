"""StableHLO for reductions: ``stablehlo.reduce`` with a scalar body; argmax/argmin as a variadic reduce."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...staging import dtypes
from ...staging.ir import Aval, scalar_aval
from ...staging.primitive import Primitive
from ...staging.primitives import reductions as R
from ..emit import (
    _TYPE_TEXT, Emitter, Value, _new_value, cached_i64_array, dense_attr, i64_array, lowers, remember, tensor_type,
)
from .elementwise import compare


def _identity(prim: Primitive, dtype: np.dtype[Any]) -> Any:
    if prim is R.reduce_sum_p:
        return 0
    if prim is R.reduce_prod_p:
        return 1
    if dtype == dtypes.BOOL:
        return prim is R.reduce_min_p
    if dtypes.is_float(dtype):
        return -np.inf if prim is R.reduce_max_p else np.inf
    info = np.iinfo(dtype)
    return info.min if prim is R.reduce_max_p else info.max


def _combiner(prim: Primitive, dtype: np.dtype[Any]) -> str:
    if dtype == dtypes.BOOL and prim in (R.reduce_max_p, R.reduce_min_p):
        return "stablehlo.or" if prim is R.reduce_max_p else "stablehlo.and"
    return {
        R.reduce_sum_p: "stablehlo.add",
        R.reduce_prod_p: "stablehlo.multiply",
        R.reduce_max_p: "stablehlo.maximum",
        R.reduce_min_p: "stablehlo.minimum",
    }[prim]


def _reduce_rule(prim: Primitive) -> Any:
    # The identity's constant props, the combiner's name and the scalar type by dtype (a function of the dtype
    # alone; bounded).
    texts: dict[np.dtype[Any], tuple[str, str, Aval]] = {}

    def rule(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axes: Any) -> list[Value]:
        (x,) = args
        dtype = x.aval.dtype
        known = texts.get(dtype)
        if known is None or known[2].dtype is not dtype:  # ``is``: an equal dtype object stays as given
            scalar = scalar_aval(dtype)
            init = em.scalar(_identity(prim, dtype), dtype)
            combiner = _combiner(prim, dtype)
            if scalar.dtype is dtype:
                init_text = f"value = {dense_attr(np.asarray(_identity(prim, dtype), dtype=dtype), scalar)}"
                remember(texts, dtype, (init_text, combiner, scalar), limit=64)
        elif len(outs) == 1:
            # ``em.binary_region`` and ``em.op`` of the reduce, written out: the same lines (one reduce per
            # broadcast's VJP and per sum). The init constant and the axes' text are mostly at hand already.
            (out,) = outs
            scalar = known[2]
            init = em.constants.get(known[0]) or em.shared_constant(known[0], scalar)
            t = init.type
            result_type = _TYPE_TEXT.get((out.shape, out.dtype)) or tensor_type(out)
            dimensions = cached_i64_array(axes) or i64_array(axes)
            counter = em.counter
            n = counter[0]
            counter[0] = n + 4
            indent, loc = em.indent, em.loc
            em.lines.append(
                f'{indent}%{n + 4} = "stablehlo.reduce"({x.name}, {init.name}) '
                f"<{{dimensions = {dimensions}}}> ({{\n"
                f"{indent}  ^bb0(%{n + 1}: {t}, %{n + 2}: {t}):\n"
                f'{indent}    %{n + 3} = "{known[1]}"(%{n + 1}, %{n + 2}) : ({t}, {t}) -> {t} {loc}\n'
                f'{indent}    "stablehlo.return"(%{n + 3}) : ({t}) -> () {loc}\n{indent}}}) : '
                f"({x.type}, {t}) -> {result_type} {loc}"
            )
            return [_new_value((f"%{n + 4}", out, result_type))]
        else:
            scalar = known[2]
            init = em.shared_constant(known[0], scalar)
            combiner = known[1]
        body = em.binary_region(combiner, scalar)
        return em.op("stablehlo.reduce", [x, init], outs, f"dimensions = {i64_array(axes)}", [body])

    return rule


for _prim in (R.reduce_sum_p, R.reduce_prod_p, R.reduce_max_p, R.reduce_min_p):
    lowers(_prim)(_reduce_rule(_prim))


def _arg_reduce_rule(direction: str) -> Any:
    def rule(em: Emitter, args: Sequence[Value], outs: Sequence[Aval], *, axis: int, index_dtype: Any) -> list[Value]:
        (x,) = args
        dtype = x.aval.dtype
        index_aval = Aval(x.aval.shape, index_dtype)
        indices = em.op("stablehlo.iota", [], [index_aval], f"iota_dimension = {axis} : i64")[0]
        value_init = em.scalar(_identity(R.reduce_max_p if direction == "GT" else R.reduce_min_p, dtype), dtype)
        index_init = em.scalar(0, index_dtype)
        scalar, index_scalar = Aval((), dtype), Aval((), index_dtype)

        def body(r: Emitter, a: list[Value]) -> list[Value]:
            x1, i1, x2, i2 = a
            # NumPy semantics: the first NaN wins, then the first extremum. Two NaNs tie, so the lower index
            # wins whatever order the reduction visits them in (GPU reductions combine out of order).
            better = compare(r, x1, x2, direction)
            tie = compare(r, x1, x2, "EQ")
            if dtypes.is_float(dtype):
                flag = Aval((), dtypes.BOOL)
                x1_nan, x2_nan = compare(r, x1, x1, "NE"), compare(r, x2, x2, "NE")
                better = r.op("stablehlo.or", [better, x1_nan], [flag])[0]
                both_nan = r.op("stablehlo.and", [x1_nan, x2_nan], [flag])[0]
                tie = r.op("stablehlo.or", [tie, both_nan], [flag])[0]
            first = r.op("stablehlo.minimum", [i1, i2], [index_scalar])[0]
            best_x = r.op("stablehlo.select", [better, x1, x2], [scalar])[0]
            pick = r.op("stablehlo.select", [better, i1, i2], [index_scalar])[0]
            best_i = r.op("stablehlo.select", [tie, first, pick], [index_scalar])[0]
            return [best_x, best_i]

        region = em.region([scalar, index_scalar, scalar, index_scalar], body)
        value_out = Aval(outs[0].shape, dtype)
        results = em.op(
            "stablehlo.reduce", [x, indices, value_init, index_init], [value_out, outs[0]],
            f"dimensions = {i64_array([axis])}", [region],
        )
        return [results[1]]

    return rule


lowers(R.argmax_p)(_arg_reduce_rule("GT"))
lowers(R.argmin_p)(_arg_reduce_rule("LT"))
