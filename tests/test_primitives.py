"""Every registered primitive, run through staging, typecheck, lowering and XLA, against NumPy in float64."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage.staging.builder import bind
from tensorstage.staging.primitive import REGISTRY, Primitive
from tensorstage.staging.typecheck import typecheck
from tensorstage.lowering.emit import LOWERINGS

from primitive_cases import CASES, Case

# Primitives that carry subgraphs or effects are exercised by their own feature tests.
COVERED_ELSEWHERE = {"custom_vjp_call", "custom_jvp_call", "cond", "while", "scan", "stop_gradient", "no_derivative"}
# Collectives need a named mapped axis (pmap/vmap): tests/test_pmap.py covers their forward, grad and vmap rules.
COVERED_ELSEWHERE |= {"psum", "pmax", "pmin", "all_gather", "ppermute", "axis_index"}
COVERED_ELSEWHERE |= {"psum_scatter", "all_to_all"}  # tests/test_collectives_more.py
COVERED_ELSEWHERE |= {"checkpoint_call", "optimization_barrier"}  # tests/test_checkpoint.py
COVERED_ELSEWHERE |= {"pure_callback", "io_callback"}  # tests/test_callbacks.py: they call Python functions
COVERED_ELSEWHERE |= {"check"}  # no results, no lowering outside checkify: tests/test_checkify.py
COVERED_ELSEWHERE |= {"exported_call"}  # needs an exported module: tests/test_export.py
COVERED_ELSEWHERE |= {"custom_vmap_call"}  # needs a user rule: tests/test_custom_batching.py


def _params() -> list[Any]:
    out = []
    for name, cases in sorted(CASES.items()):
        for i, c in enumerate(cases):
            for dtype in c.dtypes:
                out.append(pytest.param(name, c, dtype, id=f"{name}-{c.label or i}-{dtype}"))
    return out


def _program(prim: Primitive, params: dict[str, Any]) -> ts.Program[Any, Any]:
    from tensorstage.tensor import Traced

    def apply(*xs: Any) -> Any:
        out = bind(prim, *(x.atom for x in xs), **params)
        return tuple(Traced(o) for o in out) if prim.multiple_results else Traced(out)

    return ts.Program(apply, name=prim.name, check_annotations=False)


def _tolerance(dtype: np.dtype[Any]) -> dict[str, float]:
    if dtype == np.complex64:  # sums of products (a DFT's) in single precision
        return {"rtol": 1e-5, "atol": 1e-5}
    return {"rtol": 2e-6, "atol": 2e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize(("name", "case", "dtype"), _params())
def test_primitive_matches_numpy(name: str, case: Case, dtype: str, rng: np.random.Generator) -> None:
    prim = REGISTRY[name]
    inputs = case.make(rng, np.dtype(dtype))
    program = _program(prim, case.params)
    staged = program.stage(*inputs)
    typecheck(staged.graph)
    got = staged.compile()(*inputs)
    wide = [
        x.astype(np.float64) if np.issubdtype(x.dtype, np.floating)
        else x.astype(np.complex128) if np.issubdtype(x.dtype, np.complexfloating) else x
        for x in inputs
    ]
    expected = case.reference(*wide, **case.params)
    if not prim.multiple_results:
        got, expected = (got,), (expected,)
    assert len(got) == len(expected)
    for out, reference in zip(got, expected):  # output by output: qr's and eigh's outputs differ in shape
        result, reference = np.asarray(out), np.asarray(reference)
        assert result.shape == reference.shape
        if np.issubdtype(result.dtype, np.inexact):
            np.testing.assert_allclose(result, reference, **_tolerance(result.dtype))
        else:
            np.testing.assert_array_equal(result, reference.astype(result.dtype))


def test_every_primitive_has_cases_and_a_lowering() -> None:
    missing_cases = sorted(n for n in REGISTRY if n not in CASES and n not in COVERED_ELSEWHERE)
    missing_lowering = sorted(n for n, p in REGISTRY.items() if p not in LOWERINGS)
    assert not missing_cases, f"primitives without forward test cases: {missing_cases}"
    assert not missing_lowering, f"primitives without a lowering: {missing_lowering}"


@pytest.mark.parametrize("sizes", [(2.5,), (-1,), (True,)])
def test_result_sizes_must_be_non_negative_ints(sizes: tuple[Any, ...]) -> None:
    from tensorstage.staging.builder import building
    from tensorstage.staging.ir import literal
    from tensorstage.staging.primitives import slicing, structural

    with building(), pytest.raises(ts.ShapeError, match="non-negative ints"):
        structural.broadcast_in_dim(literal(1.0, np.dtype(np.float32)), sizes, (), (None,))
    with building(), pytest.raises(ts.ShapeError, match="non-negative ints"):
        slicing.iota(np.dtype(np.int32), sizes)
