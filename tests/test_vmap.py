"""vmap: every primitive's batching rule against a Python loop, the public API (axes, pytrees, nesting, closures,
programs), composition with grad, errors, and the layout the rules choose."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp
from tensorstage.staging import REGISTRY, bind
from tensorstage.staging.builder import building
from tensorstage.staging.ir import Graph, Var
from tensorstage.staging.primitives.convolution import ConvDims
from tensorstage.staging.transforms.batching import batch_graph
from tensorstage.staging.typecheck import typecheck
from tensorstage.tensor import Traced

from primitive_cases import EIG_RUNS

F32, I32, BOOL = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)
Operands = Callable[[np.random.Generator], list[np.ndarray]]


@attrs.frozen
class Case:
    """Per-example operands (a fresh draw per example) and how to apply the primitive to staged operands."""

    operands: Operands
    params: dict[str, Any] = attrs.field(factory=dict)
    apply: Callable[..., Any] | None = None  # for primitives reached through a public API (nested graphs)


def normal(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.standard_normal(shape).astype(np.float32)


def complex_normal(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def positive(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.uniform(0.5, 2.0, shape).astype(np.float32)


def _unit_interval(rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0.05, 0.95, (2, 3)).astype(np.float32)


def ints(*shape: int, low: int = -4, high: int = 5) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.integers(low, high, shape).astype(np.int32)


def bools(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.random(shape) < 0.5


def with_nonfinite(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    def draw(rng: np.random.Generator) -> np.ndarray:
        x = rng.standard_normal(shape).astype(np.float32)
        x[rng.random(shape) < 0.3] = np.inf
        x[rng.random(shape) < 0.2] = np.nan
        return x

    return draw


def spd(n: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Well-conditioned symmetric positive definite matrices, for cholesky and eigh."""

    def draw(rng: np.random.Generator) -> np.ndarray:
        b = rng.standard_normal((n, n))
        return (b @ b.T + n * np.eye(n)).astype(np.float32)

    return draw


def diagonal_heavy(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Matrices whose triangles are well conditioned, for triangular solves."""
    return lambda rng: (rng.standard_normal(shape) + 2 * np.eye(shape[-1])).astype(np.float32)


def ops(*draws: Callable[[np.random.Generator], np.ndarray]) -> Operands:
    return lambda rng: [d(rng) for d in draws]


def same(draw: Callable[..., Callable[[np.random.Generator], np.ndarray]], n: int) -> list[Case]:
    """An n-ary elementwise primitive: full operands, and a variant where the last operand is rank 0."""
    return [Case(ops(*[draw(2, 3)] * n)), Case(ops(*[draw(2, 3)] * (n - 1), draw()))]


CASES: dict[str, list[Case]] = {
    **{name: [Case(ops(normal(2, 3)))] for name in (
        "neg", "exp", "expm1", "tanh", "logistic", "sin", "cos", "abs", "sign", "floor", "ceil", "round",
        "stop_gradient", "cbrt", "erf",
    )},
    **{name: [Case(ops(positive(2, 3)))] for name in ("log", "log1p", "sqrt", "rsqrt")},
    **{name: [Case(ops(normal(2, 3)))] for name in ("erfc", "bessel_i0e", "bessel_i1e")},
    **{name: [Case(ops(positive(2, 3)))] for name in ("lgamma", "digamma")},
    **{name: same(positive, 2) for name in ("zeta", "igamma", "igammac", "igamma_grad_a")},
    "betainc": [Case(ops(positive(2, 3), positive(2, 3), _unit_interval)),
                Case(ops(positive(), positive(2, 3), _unit_interval))],
    "integer_pow": [Case(ops(normal(2, 3)), {"y": 3})],
    "no_derivative": [Case(ops(normal(2, 3)), {"reason": "a value without a derivative"})],
    **{name: same(normal, 2) for name in ("add", "sub", "mul", "max", "min", "atan2")},
    "conv_general_dilated": [Case(ops(normal(2, 3, 7), normal(4, 3, 3)), {
        "window_strides": (2,), "padding": ((1, 0),), "lhs_dilation": (1,), "rhs_dilation": (1,),
        "dimension_numbers": ConvDims.channels_first(1), "feature_group_count": 1, "batch_group_count": 1,
    })],
    "erf_inv": [Case(ops(lambda rng: rng.uniform(-0.9, 0.9, (2, 3)).astype(np.float32)))],
    "div": same(positive, 2),
    "rem": same(positive, 2),
    "pow": same(positive, 2),
    **{name: same(ints, 2) for name in ("eq", "ne", "lt", "le", "gt", "ge")},
    **{name: same(bools, 2) for name in ("and", "or", "xor")},
    "not": [Case(ops(bools(2, 3)))],
    "is_finite": [Case(ops(with_nonfinite(2, 3)))],
    "shift_left": [Case(ops(ints(2, 3, low=0, high=100), ints(2, 3, low=0, high=8)))],
    "shift_right_logical": [Case(ops(ints(2, 3, low=-100, high=100), ints(2, 3, low=0, high=8)))],
    "select": [Case(ops(bools(2, 3), normal(2, 3), normal(2, 3))), Case(ops(bools(), normal(2, 3), normal()))],
    "clamp": [Case(ops(normal(), normal(2, 3), positive())), Case(ops(normal(2, 3), normal(2, 3), positive(2, 3)))],
    "convert": [Case(ops(normal(2, 3)), {"new_dtype": I32}), Case(ops(ints(4)), {"new_dtype": F32})],
    "bitcast_convert": [Case(ops(normal(2, 3)), {"new_dtype": I32})],
    **{name: [Case(ops(normal(2, 3, 4)), {"axes": (0, 2)}), Case(ops(normal(3)), {"axes": (0,)})]
       for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod")},
    **{name: [Case(ops(normal(3, 4)), {"axis": 1, "index_dtype": I32})] for name in ("argmax", "argmin")},
    "dot_general": [
        Case(ops(normal(2, 3), normal(3, 4)), {"contracting": ((1,), (0,)), "batch": ((), ())}),
        Case(ops(normal(4, 3), normal(3)), {"contracting": ((1,), (0,)), "batch": ((), ())}),
        Case(ops(normal(3), normal(3, 4)), {"contracting": ((0,), (0,)), "batch": ((), ())}),
        Case(ops(normal(3), normal(2)), {"contracting": ((), ()), "batch": ((), ())}),
        Case(ops(normal(2, 3, 5), normal(5, 2, 4)), {"contracting": ((2,), (0,)), "batch": ((0,), (1,))}),
        Case(ops(normal(3, 2), normal(4, 3)), {"contracting": ((0,), (1,)), "batch": ((), ())}),
    ],
    "broadcast_in_dim": [
        Case(ops(normal(3)), {"shape": (2, 3), "broadcast_dimensions": (1,), "names": (None, None)}),
        Case(ops(normal(3, 1)), {"shape": (3, 2, 4), "broadcast_dimensions": (0, 2), "names": (None,) * 3}),
        Case(ops(normal()), {"shape": (2, 2), "broadcast_dimensions": (), "names": (None, None)}),
    ],
    "reshape": [
        Case(ops(normal(2, 3, 4)), {"new_sizes": (6, 4), "names": (None, None)}),
        Case(ops(normal(3, 4)), {"new_sizes": (3, 2, 2), "names": (None,) * 3}),
    ],
    "transpose": [Case(ops(normal(2, 3, 4)), {"permutation": (2, 0, 1)})],
    # slicing family (staging/primitives/slicing.py)
    "slice": [Case(ops(normal(5, 6)), {"start_indices": (1, 0), "limit_indices": (4, 6), "strides": (1, 2)})],
    "rev": [Case(ops(normal(3, 4)), {"dimensions": (1,)})],
    "dynamic_slice": [Case(ops(normal(5, 4), ints(low=0, high=5), ints(low=-1, high=3)), {"slice_sizes": (2, 3)})],
    "dynamic_update_slice": [Case(ops(normal(5, 4), normal(2, 3), ints(low=0, high=5), ints(low=-1, high=3)))],
    "concatenate": [Case(ops(normal(2, 3), normal(4, 3), normal(1, 3)), {"dimension": 0})],
    "pad": [Case(ops(normal(3, 4), normal()), {"padding_config": ((1, 2, 1), (0, -1, 0))})],
    "sort": [Case(ops(normal(3, 4), ints(3, 4)), {"dimension": 1})],
    "svd": [Case(ops(normal(4, 3)), {"full_matrices": False, "compute_uv": True}),
            Case(ops(normal(2, 5)), {"full_matrices": True, "compute_uv": True}),
            Case(ops(normal(3, 3)), {"full_matrices": False, "compute_uv": False})],
    # decompositions (staging/primitives/decompositions.py)
    "cholesky": [Case(ops(spd(3)))],
    "triangular_solve": [
        Case(ops(diagonal_heavy(3, 3), normal(3, 2)),
             {"left_side": True, "lower": True, "transpose_a": False, "unit_diagonal": False}),
        Case(ops(diagonal_heavy(3, 3), normal(2, 3)),
             {"left_side": False, "lower": False, "transpose_a": True, "unit_diagonal": True}),
    ],
    "qr": [Case(ops(normal(4, 3)), {"full_matrices": False})],
    "eigh": [Case(ops(spd(3)))],
    "solve": [Case(ops(diagonal_heavy(3, 3), normal(3, 2)), {"transpose_a": False}),
              Case(ops(diagonal_heavy(4, 4), normal(4, 1)), {"transpose_a": True})],
    "slogdet": [Case(ops(diagonal_heavy(3, 3)))],
    "det": [Case(ops(diagonal_heavy(3, 3)))],
    "cofactors": [Case(ops(diagonal_heavy(3, 3)))],
    "lu": [Case(ops(normal(4, 4))), Case(ops(normal(5, 3))), Case(ops(normal(2, 3, 4)))],  # staging/primitives/lu.py
}


def _gather_scatter_cases() -> None:
    """Row gathers and scatters (``x[idx]`` and ``x.at[idx].add(u)``), with indices that may be batched."""
    if "gather" not in REGISTRY:
        return
    from tensorstage.staging.primitives.gather_scatter import GatherDims, ScatterDims

    rows = GatherDims(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1)
    CASES["gather"] = [
        Case(ops(normal(5, 4), ints(3, 1, low=0, high=5)), {"dimension_numbers": rows, "slice_sizes": (1, 4)})
    ]
    into_rows = ScatterDims(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                            index_vector_dim=1)
    CASES["scatter"] = [
        Case(ops(normal(5, 4), ints(3, 1, low=0, high=5), normal(3, 4)),
             {"dimension_numbers": into_rows, "combiner": combiner})
        for combiner in ("add", "max")
    ]


_gather_scatter_cases()

# Primitives with no operands can never be batched by a rule (the walker copies them); vmap still handles them.
NO_OPERANDS = {"iota"}
# Primitives added by other work streams whose table entries are still to be written (listed in the report).
PENDING: set[str] = set()
# Collectives batch only under vmap(..., axis_name=...): tests/test_pmap.py covers their batching rules.
COVERED_ELSEWHERE = {"psum", "pmax", "pmin", "all_gather", "ppermute", "axis_index"}
COVERED_ELSEWHERE |= {"psum_scatter", "all_to_all"}  # tests/test_collectives_more.py
# Host callbacks batch on the host, by their vmap_method: tests/test_callbacks.py.
COVERED_ELSEWHERE |= {"pure_callback", "io_callback"}
# checkify's check has no results and lowers only through checkify: tests/test_checkify.py batches it both ways.
COVERED_ELSEWHERE |= {"check"}
# An exported program carries only its module text: tests/test_export.py batches calls of one.
COVERED_ELSEWHERE |= {"exported_call"}
COVERED_ELSEWHERE |= {"custom_vmap_call"}  # its batching rule is the user's: tests/test_custom_batching.py


def _custom_cases() -> None:
    """custom_jvp_call / custom_vjp_call are reached through ts.custom_jvp / ts.custom_vjp."""
    if hasattr(ts, "custom_jvp"):

        def apply_jvp(x: Any, y: Any) -> Any:
            @ts.custom_jvp
            def f(a: Any, b: Any) -> Any:
                return tnp.sin(a) * b

            @f.defjvp
            def f_jvp(primals: Any, tangents: Any) -> Any:
                (a, b), (ta, tb) = primals, tangents
                return tnp.sin(a) * b, tnp.cos(a) * b * ta + tnp.sin(a) * tb

            return f(x, y)

        CASES["custom_jvp_call"] = [Case(ops(normal(2, 3), normal(2, 3)), apply=apply_jvp)]
    if hasattr(ts, "custom_vjp"):

        def apply_vjp(x: Any, y: Any) -> Any:
            @ts.custom_vjp
            def g(a: Any, b: Any) -> Any:
                return tnp.exp(a) + b

            def g_fwd(a: Any, b: Any) -> Any:
                return tnp.exp(a) + b, tnp.exp(a)

            def g_bwd(res: Any, ct: Any) -> Any:
                return res * ct, ct

            g.defvjp(g_fwd, g_bwd)
            return g(x, y)

        CASES["custom_vjp_call"] = [Case(ops(normal(2, 3), normal(2, 3)), apply=apply_vjp)]


_custom_cases()


def _implicit_solve_cases() -> None:
    """linear_solve / root_solve are reached through ts.lax.custom_linear_solve / ts.lax.custom_root."""

    def apply_linear(m: Any, b: Any) -> Any:
        return ts.lax.custom_linear_solve(lambda v: m @ v, b, lambda mv, r: tnp.linalg.solve(m, r),
                                          lambda vm, r: tnp.linalg.solve(m.T, r))

    def apply_root(c: Any, guess: Any) -> Any:  # x² = c, solved by sqrt: a batched guess alone batches x too
        return ts.lax.custom_root(lambda x: x * x - c, guess, lambda f, g: tnp.sqrt(c),
                                  lambda g, y: y / g(tnp.ones_like(y)))

    CASES["linear_solve"] = [Case(ops(diagonal_heavy(3, 3), normal(3, 2)), apply=apply_linear)]
    CASES["root_solve"] = [Case(ops(positive(4), normal(4)), apply=apply_root)]


_implicit_solve_cases()


def _control_flow_cases() -> None:
    """cond / while / scan carry subgraphs; they are reached through ts.cond, ts.while_loop and ts.scan."""
    if not hasattr(ts, "scan"):
        return

    def apply_cond(p: Any, x: Any, y: Any) -> Any:
        return ts.cond(p, lambda a, b: a * b, lambda a, b: a - b, x, y)

    def apply_while(n: Any, x: Any) -> Any:
        return ts.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0), (n * 0, x))[1]

    def apply_scan(init: Any, xs: Any) -> Any:
        return ts.scan(lambda c, x: (c * 0.5 + x, tnp.sin(c) * x), init, xs)

    CASES["cond"] = [Case(ops(bools(), normal(2, 3), normal(2, 3)), apply=apply_cond)]
    CASES["while"] = [Case(ops(ints(low=0, high=4), normal(3)), apply=apply_while)]
    CASES["scan"] = [Case(ops(normal(3), normal(4, 3)), apply=apply_scan)]


_control_flow_cases()
CASES["checkpoint_call"] = [
    Case(ops(normal(2, 3), normal(3, 3)), apply=lambda x, w: ts.checkpoint(lambda a, b: tnp.tanh(a @ b))(x, w))
]
CASES["optimization_barrier"] = [Case(ops(normal(2, 3), ints(4)))]
CASES["checkpoint_name"] = [Case(ops(normal(2, 3)), {"name": "hidden"})]
CASES["sharding_constraint"] = [  # on a one-device mesh (tests/test_named_sharding.py: four devices)
    Case(ops(normal(2, 3)), {"sharding": ts.NamedSharding(ts.make_mesh((1, 1), ("i", "j")), ts.P("i")),
                             "unconstrained": ()}),
]
CASES.update({name: [Case(ops(complex_normal(2, 3)))] for name in ("real", "imag", "conj")})
CASES["complex"] = same(normal, 2)
CASES["eig"] = [] if not EIG_RUNS else [  # LAPACK on CPU only
    Case(ops(normal(3, 3)), {"compute_left": True, "compute_right": True}),
    Case(ops(complex_normal(2, 3, 3)), {"compute_left": False, "compute_right": False}),
]
CASES["schur"] = [] if not EIG_RUNS else [  # LAPACK on CPU only (tests/test_scipy_linalg_more.py checks the rest)
    Case(ops(normal(3, 3)), {"compute_vectors": True}),
    Case(ops(complex_normal(2, 3, 3)), {"compute_vectors": False}),
]
CASES["hessenberg"] = [] if not EIG_RUNS else [
    Case(ops(normal(4, 4)), {"compute_q": True}),
    Case(ops(complex_normal(2, 3, 3)), {"compute_q": False}),
]
CASES["fft"] = [
    Case(ops(complex_normal(3, 4)), {"fft_type": "FFT", "fft_length": (4,)}),
    Case(ops(complex_normal(2, 3, 4)), {"fft_type": "IFFT", "fft_length": (3, 4)}),
    Case(ops(normal(3, 6)), {"fft_type": "RFFT", "fft_length": (6,)}),
    Case(ops(complex_normal(2, 4)), {"fft_type": "IRFFT", "fft_length": (7,)}),
]
# One generator per key of the batch (tests/test_lax_extras_more.py checks the bits against jax's).
CASES["rng_bit_generator"] = [
    Case(ops(lambda rng: rng.integers(0, 2**32, size=4, dtype=np.uint32)),
         {"shape": (2, 3), "dtype": np.dtype(np.uint32), "algorithm": algorithm})
    for algorithm in ("RNG_THREE_FRY", "RNG_PHILOX")
]


def _batched_names() -> list[str]:
    return sorted(name for name, prim in REGISTRY.items() if prim.batch is not None)


def test_every_batchable_primitive_has_a_case() -> None:
    skipped = NO_OPERANDS | PENDING | COVERED_ELSEWHERE
    missing = [n for n in _batched_names() if n not in CASES and n not in skipped]
    assert not missing, f"add batching test cases for: {missing}"


def _applier(name: str, case: Case) -> Callable[..., Any]:
    if case.apply is not None:
        return case.apply
    prim = REGISTRY[name]

    def apply(*xs: Any) -> Any:
        out = bind(prim, *(x.atom for x in xs), **case.params)
        return tuple(Traced(o) for o in out) if prim.multiple_results else Traced(out)

    return apply


def _draw_batched(
    case: Case, rng: np.random.Generator, size: int, mixed: bool
) -> tuple[list[Any], list[int | None], list[list[np.ndarray]]]:
    """Batched operands along random axes, and the per-example operands. Every operand is batched, or with
    ``mixed`` a random non-empty proper subset (unbatched operands next to batched ones)."""
    first = case.operands(rng)
    n = len(first)
    mask = np.ones(n, bool)
    if mixed and n > 1:
        mask = rng.random(n) < 0.5
        mask[rng.integers(n)] = True
        if mask.all():
            mask[rng.choice(np.flatnonzero(mask))] = False
    axes: list[int | None] = [int(rng.integers(0, x.ndim + 1)) if m else None for x, m in zip(first, mask)]
    draws = [first] + [case.operands(rng) for _ in range(size - 1)]
    batched: list[Any] = []
    for i, axis in enumerate(axes):
        if axis is None:
            batched.append(first[i])
        else:
            batched.append(np.stack([d[i] for d in draws], axis=axis))
    examples = [[d[i] if axes[i] is not None else first[i] for i in range(n)] for d in draws]
    # Negative axes are part of the API: use them half of the time.
    signed = [a - (batched[i].ndim) if a is not None and rng.random() < 0.5 else a for i, a in enumerate(axes)]
    return batched, signed, examples


# Elementwise primitives whose lowerings take seconds each to compile (series and continued fractions in while
# loops) and whose batching rule is the shared elementwise one (test_slow_lowerings_share_the_elementwise_rule):
# that rule is checked on every configuration by add, atan2, zeta, ...; two configurations (every operand batched,
# and a rank-0 operand among mixed batched and unbatched ones) check each primitive's own wiring.
SHARED_RULE_SLOW_LOWERINGS = ("igamma", "igammac", "igamma_grad_a", "betainc")
SHARED_RULE_CONFIGURATIONS = ((0, 0), (1, 1))  # (case, trial)


def _cases() -> list[tuple[str, int, int]]:
    """(primitive, case, trial): trial 0 batches every operand, trial 1 mixes batched and unbatched operands."""
    return [
        (name, i, trial)
        for name in sorted(CASES)
        if name in REGISTRY
        for i in range(len(CASES[name]))
        for trial in range(2)
        if name not in SHARED_RULE_SLOW_LOWERINGS or (i, trial) in SHARED_RULE_CONFIGURATIONS
    ]


def test_slow_lowerings_share_the_elementwise_rule() -> None:
    """The premise of SHARED_RULE_SLOW_LOWERINGS: a primitive given its own batching rule needs every configuration."""
    shared = REGISTRY["add"].batch.__qualname__
    assert shared == "batch_elementwise.<locals>.rule"
    for name in SHARED_RULE_SLOW_LOWERINGS:
        assert REGISTRY[name].batch.__qualname__ == shared, f"{name} has its own batching rule: test it on every case"
        assert len(CASES[name]) == 2, name


@pytest.mark.parametrize("name,index,trial", _cases(), ids=[f"{n}-{i}-{t}" for n, i, t in _cases()])
def test_batch_rule_matches_loop(name: str, index: int, trial: int, rng: np.random.Generator) -> None:
    case = CASES[name][index]
    size = 3
    apply = _applier(name, case)
    batched, axes, examples = _draw_batched(case, rng, size, mixed=trial == 1)
    per_example = ts.Program(apply, check_annotations=False, name=name)
    expected = [per_example(*ex) for ex in examples]
    flat_expected = [[np.asarray(o) for o in (e if isinstance(e, tuple) else (e,))] for e in expected]
    out_ranks = [o.ndim for o in flat_expected[0]]
    single = not isinstance(expected[0], tuple)
    out_axes: Any = int(rng.integers(-out_ranks[0] - 1, out_ranks[0] + 1)) if single else 0
    mapped = ts.vmap(apply, in_axes=tuple(axes), out_axes=out_axes)
    mapped.stage(*batched).typecheck()
    got = mapped(*batched)
    got_flat = [np.asarray(g) for g in (got if isinstance(got, tuple) else (got,))]
    for k, g in enumerate(got_flat):
        target = out_axes if single else 0
        want = np.stack([e[k] for e in flat_expected], axis=target)
        assert g.shape == want.shape and g.dtype == want.dtype, (name, axes, out_axes)
        if np.issubdtype(want.dtype, np.inexact):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} axes={axes}")
        else:
            np.testing.assert_array_equal(g, want, err_msg=f"{name} axes={axes}")


def test_batch_graph_keeps_unbatched_equations_and_types() -> None:
    with building() as b:
        x, w = Var(ts.Spec((3,), f32).aval), Var(ts.Spec((3, 4), f32).aval)
        ww = bind(REGISTRY["tanh"], w)  # depends only on the unbatched input: must stay unbatched
        y = bind(REGISTRY["dot_general"], x, ww, contracting=((0,), (0,)), batch=((), ()))
    graph = Graph([x, w], b.eqns, [y, ww])
    batched, out_dims = batch_graph(graph, [0, None], 5, axis_name="N")
    typecheck(batched)
    assert out_dims == [0, None]
    assert batched.in_avals[0].shape == (5, 3) and batched.in_avals[0].dims == ("N", None)
    assert batched.out_avals == (ts.Spec((5, 4), f32, ("N", None)).aval, ts.Spec((3, 4), f32).aval)
    forced, dims = batch_graph(graph, [0, None], 5, out_dims=[1, 0])
    typecheck(forced)
    assert dims == [1, 0] and forced.out_avals[0].shape == (4, 5) and forced.out_avals[1].shape == (5, 3, 4)


# -------------------------------------------------------------------------------------------- public API


class Batch(Dim): ...
class In(Dim): ...
class Out(Dim): ...


def test_in_axes_pytree_prefix_none_and_negative(rng: np.random.Generator) -> None:
    params = {"w": rng.standard_normal((3, 4)).astype(np.float32), "b": rng.standard_normal(4).astype(np.float32)}
    xs = rng.standard_normal((3, 5)).astype(np.float32)  # mapped along its last axis

    def layer(p: dict[str, Any], x: Any) -> Any:
        return tnp.tanh(x @ p["w"] + p["b"])

    got = np.asarray(ts.vmap(layer, in_axes=({"w": None, "b": None}, -1))(params, xs))
    want = np.tanh(xs.T.astype(np.float64) @ params["w"] + params["b"])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # A prefix: one None for the whole dict.
    np.testing.assert_allclose(np.asarray(ts.vmap(layer, (None, 1))(params, xs)), want, rtol=1e-5, atol=1e-6)


def test_out_axes_pytree_and_unbatched_outputs(rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 3)).astype(np.float32)

    def f(v: Any) -> Any:
        return {"double": v * 2.0, "const": tnp.ones(2), "sum": v.sum()}

    got = ts.vmap(f, out_axes={"double": 1, "const": 0, "sum": -1})(x)
    np.testing.assert_allclose(np.asarray(got["double"]), (x * 2).T, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got["const"]), np.ones((4, 2)))
    np.testing.assert_allclose(np.asarray(got["sum"]), x.sum(1), rtol=1e-5)
    kept = ts.vmap(lambda v, c: (v * c, c + 1.0), in_axes=(0, None), out_axes=(0, None))(x, np.float32(2.0))
    np.testing.assert_allclose(np.asarray(kept[1]), 3.0)


def test_nested_vmap_is_an_outer_product(rng: np.random.Generator) -> None:
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((5, 3)).astype(np.float32)
    pairwise = ts.vmap(ts.vmap(lambda u, v: tnp.sum((u - v) ** 2), in_axes=(None, 0)), in_axes=(0, None))
    want = ((a[:, None, :].astype(np.float64) - b[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(np.asarray(pairwise(a, b)), want, rtol=1e-5, atol=1e-5)


def test_vmap_inside_program_closing_over_staged_values(rng: np.random.Generator) -> None:
    w: Any = rng.standard_normal((3, 3)).astype(np.float32)
    x: Any = rng.standard_normal((6, 3)).astype(np.float32)

    @ts.program
    def apply(w: Tensor[f32, In, In], x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, In]:
        scale = tnp.sum(w)  # a staged value of the outer program, closed over below
        out: Tensor[f32, Batch, In] = ts.vmap(lambda row: tnp.tanh(row @ w) * scale)(x)
        return out

    want = np.tanh(x.astype(np.float64) @ w) * w.sum()
    np.testing.assert_allclose(np.asarray(apply(w, x)), want, rtol=1e-5, atol=1e-5)
    staged = apply.stage(w, x)
    staged.typecheck()
    assert "transpose" not in str(staged)


def test_vmap_of_a_program_is_a_program(rng: np.random.Generator) -> None:
    @ts.program
    def affine(w: Tensor[f32, In, Out], x: Tensor[f32, In]) -> Tensor[f32, Out]:
        return x @ w + 1.0

    w: Any = rng.standard_normal((3, 2)).astype(np.float32)
    x: Any = rng.standard_normal((5, 3)).astype(np.float32)
    batched = ts.vmap(affine, Batch, in_axes=(None, 0))
    assert isinstance(batched, ts.Program)
    staged = batched.stage(w, x)
    assert staged.out_avals[0].dims == ("Batch", "Out")
    np.testing.assert_allclose(np.asarray(batched(w, x)), x @ w + 1, rtol=1e-5, atol=1e-6)

    @ts.program
    def twice(w: Tensor[f32, In, Out], x: Tensor[f32, Batch, In]) -> Tensor[f32, Batch, Out]:
        out: Tensor[f32, Batch, Out] = batched(w, x) * 2.0
        return out

    np.testing.assert_allclose(np.asarray(twice(w, x)), (x @ w + 1) * 2, rtol=1e-5, atol=1e-6)


def test_typed_form_names_the_batch_axis(rng: np.random.Generator) -> None:
    x = rng.standard_normal((7, 3)).astype(np.float32)
    staged = ts.vmap(lambda v: tnp.exp(v) + v, Batch).stage(x)
    assert staged.in_avals[0].dims == (None, None)
    assert staged.out_avals[0].dims == ("Batch", None)
    assert "Batch=7" in str(staged)

    class Fixed(Dim, size=4): ...

    with pytest.raises(ts.TransformError, match=r"\[vmap\].*size 7.*axis_size=4"):
        ts.vmap(lambda v: v, Fixed)(x)


def test_keyword_arguments_map_along_axis_zero_and_dims_select_axes(rng: np.random.Generator) -> None:
    x: Any = rng.standard_normal((4, 3)).astype(np.float32)
    scale = rng.standard_normal(4).astype(np.float32)
    got = ts.vmap(lambda v, s: v * s, in_axes=[0])(x, s=scale)
    np.testing.assert_allclose(np.asarray(got), x * scale[:, None], rtol=1e-6)

    @ts.program
    def column_sums(m: Tensor[f32, In, Batch]) -> Tensor[f32, Batch]:
        out: Tensor[f32, Batch] = ts.vmap(tnp.sum, in_axes=Batch)(m)  # map the axis named Batch, wherever it is
        return out

    np.testing.assert_allclose(np.asarray(column_sums(x)), x.sum(0), rtol=1e-5)


def test_random_numbers_under_vmap_match_a_loop() -> None:
    keys = np.stack([np.asarray(k) for k in ts.random.split(ts.random.key(7), 3)])
    got = np.asarray(ts.vmap(lambda k: ts.random.normal(k, (4,)))(keys))
    want = np.stack([np.asarray(ts.random.normal(k, (4,))) for k in keys])
    np.testing.assert_array_equal(got, want)


def test_axis_size_with_no_mapped_argument() -> None:
    out = ts.vmap(lambda c: c * 2.0, in_axes=None, axis_size=3)(np.float32(1.5))
    np.testing.assert_allclose(np.asarray(out), [3.0, 3.0, 3.0])


# ------------------------------------------------------------------------------------------------- errors


def test_inconsistent_sizes_name_the_arguments(rng: np.random.Generator) -> None:
    def f(xs: Any, ys: Any) -> Any:
        return xs + ys

    with pytest.raises(ts.TransformError) as info:
        ts.vmap(f)(np.zeros((3, 2), np.float32), np.zeros((4, 2), np.float32))
    message = str(info.value)
    assert message.startswith("[vmap]")
    assert "argument xs (f32[3, 2]) has size 3" in message and "argument ys (f32[4, 2]) has size 4" in message
    assert "test_vmap.py:" in message


def test_out_of_range_axis_names_argument_and_rank() -> None:
    def f(xs: Any) -> Any:
        return xs

    with pytest.raises(ts.TransformError) as info:
        ts.vmap(f, in_axes=2)(np.zeros((3, 2), np.float32))
    message = str(info.value)
    assert message.startswith("[vmap]") and "argument xs" in message and "rank 2" in message
    assert "test_vmap.py:" in message
    with pytest.raises(ts.TransformError, match=r"\[vmap\] out_axes 3 .*output.* rank 2"):
        ts.vmap(lambda v: v, out_axes=3)(np.zeros((3, 2), np.float32))


def test_structure_mismatch_and_unbatched_out_axes_errors() -> None:
    x = np.zeros((3, 2), np.float32)
    with pytest.raises(ts.TransformError, match=r"\[vmap\] in_axes has 1 entries .* 2 positional"):
        ts.vmap(lambda a, b: a + b, in_axes=(0,))(x, x)
    with pytest.raises(ts.TransformError, match=r"\[vmap\] in_axes\[0\] must be an axis or a prefix"):
        ts.vmap(lambda a: a, in_axes=((0, 0),))(x)
    with pytest.raises(ts.TransformError, match=r"\[vmap\] output .* out_axes is None"):
        ts.vmap(lambda a: a * 2.0, out_axes=None)(x)
    with pytest.raises(ts.TransformError, match=r"\[vmap\] no argument is mapped"):
        ts.vmap(lambda a: a, in_axes=None)(x)
    with pytest.raises(TypeError, match="in_axes must be a pytree"):
        ts.vmap(lambda a: a, in_axes="0")


def test_shape_errors_inside_carry_the_user_line_and_batch_name(rng: np.random.Generator) -> None:
    w = np.zeros((4, 3), np.float32)

    def f(x: Any) -> Any:
        return x @ w  # wrong way round: x has 4 features, w expects 4 rows but x is (3,)

    with pytest.raises(ts.ShapeError) as info:
        ts.vmap(f)(np.zeros((5, 3), np.float32))
    assert "test_vmap.py:" in str(info.value)


# --------------------------------------------------------------------------------------------- layout


def test_matrix_times_batched_vectors_needs_no_transpose() -> None:
    w = ts.Spec((4, 3), f32)
    xs = ts.Spec((8, 3), f32)
    text = str(ts.vmap(lambda w, x: w @ x, in_axes=(None, 0)).stage(w, xs))
    assert "transpose" not in text and "f32[8, 4]" in text
    # A trailing batch axis stays trailing through a broadcast (out_axes=-1 asks for it there).
    text = str(ts.vmap(lambda x: tnp.broadcast_to(x, (2, 3)), in_axes=1, out_axes=-1).stage(ts.Spec((3, 8), f32)))
    assert "transpose" not in text and "f32[2, 3, 8]" in text
    # Elementwise ops keep the batch axis of their full-shape operand; per-example scalars are broadcast to it.
    text = str(ts.vmap(lambda x, s: x * s, in_axes=(1, 0), out_axes=1).stage(ts.Spec((3, 8), f32), ts.Spec((8,), f32)))
    assert "transpose" not in text
    # So does a trailing batch axis through a reshape that merges the axes before it.
    text = str(ts.vmap(lambda x: tnp.reshape(x, (12,)), in_axes=2, out_axes=1).stage(ts.Spec((3, 4, 8), f32)))
    assert "transpose" not in text and "f32[12, 8]" in text


# ------------------------------------------------------------------------------------ composition with grad


def _mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = tnp.tanh(x @ params["w1"] + params["b1"])
    return tnp.sum((h @ params["w2"] - y) ** 2)


def _mlp_inputs(rng: np.random.Generator, batch: int = 5) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    params = {
        "w1": rng.standard_normal((3, 4)).astype(np.float32),
        "b1": rng.standard_normal(4).astype(np.float32),
        "w2": rng.standard_normal((4, 2)).astype(np.float32),
    }
    return params, rng.standard_normal((batch, 3)).astype(np.float32), rng.standard_normal((batch, 2)).astype(np.float32)


def test_vmap_of_grad_gives_per_example_gradients_in_row_major_layout(rng: np.random.Generator) -> None:
    params, xs, ys = _mlp_inputs(rng)
    per_example = ts.vmap(ts.grad(_mlp_loss), in_axes=(None, 0, 0))
    got = per_example(params, xs, ys)
    single = ts.grad(_mlp_loss)
    for i in range(len(xs)):
        want = single(params, xs[i], ys[i])
        for key in params:
            np.testing.assert_allclose(np.asarray(got[key])[i], np.asarray(want[key]), rtol=1e-4, atol=1e-5)
    staged = per_example.stage(params, xs, ys)
    staged.typecheck()
    assert "transpose" not in str(staged)  # gradients come out batch-major with no copy back
    assert staged.out_avals[0].shape == (5, 4) and staged.out_avals[1].shape == (5, 3, 4)


def test_grad_of_vmap(rng: np.random.Generator) -> None:
    w = rng.standard_normal((3, 4)).astype(np.float32)
    xs = rng.standard_normal((6, 3)).astype(np.float32)

    def total(w: Any, xs: Any) -> Any:
        return tnp.sum(ts.vmap(lambda x: tnp.tanh(x @ w))(xs))

    got = np.asarray(ts.grad(total)(w, xs))
    y = np.tanh(xs.astype(np.float64) @ w)
    np.testing.assert_allclose(got, xs.T.astype(np.float64) @ (1 - y**2), rtol=1e-4, atol=1e-5)


def test_vmap_of_second_derivative(rng: np.random.Generator) -> None:
    xs = rng.standard_normal(7).astype(np.float32)
    d2 = ts.vmap(ts.grad(ts.grad(lambda x: tnp.sin(x) * x)))
    want = 2 * np.cos(xs) - xs * np.sin(xs)
    np.testing.assert_allclose(np.asarray(d2(xs)), want, rtol=1e-4, atol=1e-5)


def test_jacobians_and_vmapped_jacobians(rng: np.random.Generator) -> None:
    w = rng.standard_normal((2, 3)).astype(np.float32)
    xs = rng.standard_normal((4, 3)).astype(np.float32)

    def f(x: Any) -> Any:
        return tnp.tanh(w @ x)

    def analytic(x: np.ndarray) -> Any:
        y = np.tanh(w.astype(np.float64) @ x)
        return (1 - y**2)[:, None] * w

    for jac in (ts.jacfwd(f), ts.jacrev(f)):
        np.testing.assert_allclose(np.asarray(jac(xs[0])), analytic(xs[0]), rtol=1e-4, atol=1e-5)
        batched = np.asarray(ts.vmap(jac)(xs))
        np.testing.assert_allclose(batched, np.stack([analytic(x) for x in xs]), rtol=1e-4, atol=1e-5)
    hess = np.asarray(ts.vmap(ts.hessian(lambda x: tnp.sum(x**3)))(xs))
    np.testing.assert_allclose(hess, np.stack([np.diag(6 * x) for x in xs]), rtol=1e-4, atol=1e-4)


def test_typed_vmap_of_a_typed_program_stages_by_dim_names() -> None:
    @ts.program
    def affine(w: Tensor[f32, In, Out], x: Tensor[f32, In]) -> Tensor[f32, Out]:
        return x @ w

    batched = ts.vmap(affine, Batch, in_axes=(None, 0))
    staged = batched.stage(Batch=6, In=3, Out=2)  # no examples: the dims come from the annotations
    assert staged.in_avals[1].dims == ("Batch", "In") and staged.in_avals[1].shape == (6, 3)
    assert staged.out_avals[0].dims == ("Batch", "Out")
    with pytest.raises(ts.ShapeError):
        batched.stage(ts.Spec((3, 2), f32), ts.Spec((6, 4), f32))  # In is 3 for w but 4 for x


def test_indexing_with_batched_indices(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((4, 5)).astype(np.float32)
    idx = rng.integers(0, 5, 4).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(ts.vmap(lambda x, i: x[i])(xs, idx)), xs[np.arange(4), idx])
    bumped = np.asarray(ts.vmap(lambda x, i: x.at[i].add(1.0))(xs, idx))
    want = xs.copy()
    want[np.arange(4), idx] += 1
    np.testing.assert_allclose(bumped, want, rtol=1e-6)
