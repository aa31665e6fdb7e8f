"""Robustness: no bad input crashes the process or gives a silently wrong answer.

Hypothesis draws shapes (0-size and rank-0 included), every dtype, axis values in and out of range, Dim classes
that are and are not on the operand, index forms, broadcasting combinations and wrong arguments to compiled
programs, eager and staged. Every case either matches NumPy (float64 reference with tolerances, where NumPy's
semantics apply and tensorstage's policy agrees: no dtype promotion between arrays, no ``(N,)`` vs ``(N, 1)``
outer-product broadcast), or raises a clean exception of an allowed type whose message names the op (and, for
staging errors, this file: the user's source line). Examples are derandomized and bounded: each new signature
costs an XLA compile.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp

# ----------------------------------------------------------------------------------------------- helpers

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES: list[np.dtype[Any]] = [
    np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int8),
    np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint8), np.dtype(np.uint32),
    np.dtype(np.bool_),
]
FLOATS = frozenset(DTYPES[:4])
INTS = frozenset(DTYPES[4:10])
UNSIGNED = frozenset((np.dtype(np.uint8), np.dtype(np.uint32)))
BOOL = np.dtype(np.bool_)
HERE = "test_robustness.py"
ALLOWED: tuple[type[Exception], ...] = (TypeError, ValueError, IndexError)
INTERNAL: tuple[type[Exception], ...] = (AttributeError, KeyError, AssertionError, NotImplementedError, RuntimeError)

ALIASES = {"rint": ("round",), "absolute": ("abs",), "true_divide": ("divide",), "mod": ("remainder",)}

FUZZ = settings(
    derandomize=True, max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


def fuzz(n: int) -> settings:
    return settings(FUZZ, max_examples=n)


class A(Dim): ...
class B(Dim): ...
class C(Dim): ...
class Missing(Dim): ...


DIM_CLASSES: list[type[Dim]] = [A, B, C]


def data(shape: Sequence[int], dtype: np.dtype[Any], seed: int, *, nonzero: bool = False) -> np.ndarray[Any, Any]:
    """Deterministic values a little outside [-3, 3] (nonnegative for unsigned; no zeros when asked)."""
    r = np.random.default_rng(seed)
    if dtype == BOOL:
        x: np.ndarray[Any, Any] = r.integers(0, 2, size=tuple(shape)).astype(bool)
        return np.ones(tuple(shape), bool) if nonzero else x
    if dtype in FLOATS:
        v = np.round(r.standard_normal(tuple(shape)) * 2.5, 2)
        if nonzero:
            v = np.where(v == 0, 0.5, v)
        return v.astype(dtype)
    lo = 0 if dtype in UNSIGNED else -4
    v = r.integers(lo, 5, size=tuple(shape))
    if nonzero:
        v = np.where(v == 0, 1, v)
    return v.astype(dtype)


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        out = fn()
        if isinstance(out, (list, tuple)):
            return "ok", [np.asarray(o) for o in out]
        return "ok", np.asarray(out)
    except Exception as exc:  # noqa: BLE001 - classified by the caller
        return "error", exc


def check_clean(exc: BaseException, op_name: str) -> None:
    """A user-facing error: an allowed type, naming the op, and (staging errors) the user's file and line."""
    assert not isinstance(exc, INTERNAL), f"{op_name}: internal {type(exc).__name__}: {exc}"
    assert isinstance(exc, ALLOWED), f"{op_name}: disallowed {type(exc).__name__}: {exc}"
    text = str(exc)
    assert "stablehlo" not in text and "error: '" not in text, f"{op_name}: XLA/MLIR error surfaced: {text}"
    names = (op_name, *ALIASES.get(op_name, ()))
    assert any(n in text for n in names), f"{op_name}: message does not name the op: {text}"
    if isinstance(exc, ts.StagingError):
        assert HERE in text, f"{op_name}: message does not point at the user's line: {text}"


def expect_error(result: tuple[str, Any], op_name: str, kinds: tuple[type[Exception], ...] = ALLOWED) -> None:
    status, value = result
    assert status == "error", f"{op_name}: expected an error, got a result {value!r}"
    check_clean(value, op_name)
    assert isinstance(value, kinds), f"{op_name}: expected {kinds}, got {type(value).__name__}: {value}"


def tolerance(dtype: np.dtype[Any]) -> float:
    return {np.dtype(np.float16): 4e-3, BF16: 3e-2, np.dtype(np.float32): 2e-6}.get(dtype, 1e-12)


def assert_close(op_name: str, got: Any, want: Any, dtype: np.dtype[Any], scale: float = 1.0) -> None:
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{op_name}: shape {got.shape} != NumPy's {want.shape}"
    if want.dtype == BOOL or got.dtype == BOOL or (dtype not in FLOATS and want.dtype.kind in "iub"):
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64), err_msg=op_name)
        return
    tol = tolerance(dtype) * scale
    np.testing.assert_allclose(
        got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True, err_msg=op_name
    )


def run(fn: Callable[..., Any], args: Sequence[Any], staged: bool) -> tuple[str, Any]:
    """Call ``fn`` eagerly on NumPy arrays, or inside a program staged from this file."""
    if not staged:
        return outcome(lambda: fn(*args))
    prog = ts.program(lambda *a: fn(*a))
    return outcome(lambda: prog(*args))


def f64(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return x.astype(np.float64) if x.dtype in FLOATS else x


shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)
dtypes = st.sampled_from(DTYPES)
seeds = st.integers(0, 2**16)


# ----------------------------------------------------------------------------------------- unary ufuncs


def _sigmoid(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return 1 / (1 + np.exp(-x))  # type: ignore[no-any-return]


FLOAT_UNARY: dict[str, Callable[[Any], Any]] = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "floor": np.floor,
    "ceil": np.ceil, "round": np.round, "rint": np.rint, "sigmoid": _sigmoid, "reciprocal": np.reciprocal,
    "log2": np.log2, "log10": np.log10, "isfinite": np.isfinite, "isnan": np.isnan, "isinf": np.isinf,
}
NUMERIC_UNARY: dict[str, Callable[[Any], Any]] = {
    "abs": np.abs, "negative": np.negative, "sign": np.sign, "square": np.square,
}
INTEGRAL_UNARY: dict[str, Callable[[Any], Any]] = {"invert": np.invert}
BOOL_UNARY: dict[str, Callable[[Any], Any]] = {"logical_not": np.logical_not}
UNARY = {**FLOAT_UNARY, **NUMERIC_UNARY, **INTEGRAL_UNARY, **BOOL_UNARY}


def _unary_supported(name: str, dtype: np.dtype[Any]) -> bool:
    if name in FLOAT_UNARY:
        return dtype in FLOATS
    if name in NUMERIC_UNARY:
        return dtype != BOOL
    if name in INTEGRAL_UNARY:
        return dtype not in FLOATS
    return dtype == BOOL


@fuzz(150)
@given(st.sampled_from(sorted(UNARY)), dtypes, shapes, seeds, st.booleans())
def test_unary(name: str, dtype: np.dtype[Any], shape: tuple[int, ...], seed: int, staged: bool) -> None:
    x = data(shape, dtype, seed)
    result = run(getattr(tnp, name), [x], staged)
    if not _unary_supported(name, dtype):
        expect_error(result, name, (ts.DTypeError,))
        return
    status, got = result
    if status == "error":
        raise AssertionError(f"{name} on {dtype}{list(shape)} failed: {type(got).__name__}: {got}") from got
    if name in FLOAT_UNARY:
        with np.errstate(all="ignore"):
            want = UNARY[name](x.astype(np.float64))
        if want.dtype != BOOL:
            want = want.astype(dtype)
        assert_close(name, got, want, dtype, scale=4.0)
    else:
        with np.errstate(all="ignore"):
            want = UNARY[name](x)
        assert_close(name, got, want, dtype)
    assert got.dtype == (BOOL if name in ("isfinite", "isnan", "isinf") else dtype)


# ---------------------------------------------------------------------------------------- binary ufuncs

ARITH = ("add", "subtract", "multiply", "maximum", "minimum", "floor_divide", "remainder")
FLOAT_BINARY = ("divide", "power")
COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")
LOGICAL = ("logical_and", "logical_or", "logical_xor")
BINARY = ARITH + FLOAT_BINARY + COMPARE + BITWISE + LOGICAL
NP_NAMES = {"divide": "true_divide"}


def _binary_supported(name: str, dtype: np.dtype[Any]) -> bool:
    if name in FLOAT_BINARY:
        return dtype in FLOATS
    if name in ("maximum", "minimum") or name in COMPARE:
        return True
    if name in ARITH:
        return dtype != BOOL
    if name in BITWISE:
        return dtype not in FLOATS
    return dtype == BOOL


@st.composite
def shape_pairs(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes: often broadcast-compatible (suffixes, size-1 axes), sometimes not, sometimes the trap."""
    base = draw(st.lists(st.integers(0, 3), max_size=3))
    kind = draw(st.sampled_from(["same", "suffix", "ones", "random", "trap"]))
    other = list(base)
    if kind == "suffix":
        other = base[draw(st.integers(0, len(base))):]
    elif kind == "ones":
        other = [1 if draw(st.booleans()) else n for n in base]
    elif kind == "random":
        other = draw(st.lists(st.integers(0, 3), max_size=3))
    elif kind == "trap" and base:
        other = base[1:] + [1]
    first, second = (tuple(base), tuple(other))
    return (second, first) if draw(st.booleans()) else (first, second)


def _broadcast(s1: tuple[int, ...], s2: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(s1, s2))
    except ValueError:
        return None


def _is_trap(s1: tuple[int, ...], s2: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """NumPy would add leading axes to one operand while stretching size-1 axes of the other."""
    if len(s1) == len(s2) or min(len(s1), len(s2)) == 0:
        return False
    longer = s1 if len(s1) > len(s2) else s2
    return longer != out


@fuzz(250)
@given(st.sampled_from(BINARY), dtypes, dtypes, shape_pairs(), seeds, st.integers(0, 3), st.booleans())
def test_binary(
    name: str,
    dt1: np.dtype[Any],
    dt2: np.dtype[Any],
    pair: tuple[tuple[int, ...], tuple[int, ...]],
    seed: int,
    scalar_kind: int,
    staged: bool,
) -> None:
    s1, s2 = pair
    if scalar_kind == 0 or dt1 != dt2 and scalar_kind == 1:
        dt2 = dt1  # mostly the same dtype, sometimes mismatched
    x = data(s1, dt1, seed)
    y: Any = data(s2, dt2, seed + 1, nonzero=name in ("floor_divide", "remainder"))
    if scalar_kind == 3:  # a Python scalar adopts the array's dtype (floats only with float arrays)
        y = [2, 1.5, True][seed % 3]
        if name in ("floor_divide", "remainder") and y is True:
            y = 3
    result = run(getattr(tnp, name), [x, y], staged)
    if scalar_kind != 3 and dt1 != dt2:
        expect_error(result, name, (ts.DTypeError,))
        return
    out = _broadcast(s1, np.shape(y))
    if out is None or _is_trap(s1, np.shape(y), out):
        expect_error(result, name, (ts.ShapeError, ts.DTypeError))
        return
    if scalar_kind == 3 and type(y) is float and dt1 not in FLOATS:
        expect_error(result, name, (ts.DTypeError,))
        return
    if not _binary_supported(name, dt1):
        expect_error(result, name, (ts.DTypeError,))
        return
    status, got = result
    if status == "error":
        raise AssertionError(f"{name} on {dt1}{list(s1)}, {y!r:.40}: {type(got).__name__}: {got}") from got
    np_fn = getattr(np, NP_NAMES.get(name, name))
    yy = np.asarray(y, dtype=dt1)
    with np.errstate(all="ignore"):
        if dt1 in FLOATS:
            want = np_fn(x.astype(np.float64), yy.astype(np.float64))
            want = want if want.dtype == BOOL else want.astype(dt1)
        else:
            want = np_fn(x, yy)
    assert_close(name, got, want, dt1, scale=4.0)


# ------------------------------------------------------------------------------------------- reductions

REDUCTIONS = ("sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "logsumexp", "argmax", "argmin")
FLOAT_REDUCTIONS = ("mean", "var", "std", "logsumexp")


def _np_reduce(name: str, x: np.ndarray[Any, Any], axis: Any, keepdims: bool, ddof: int) -> Any:
    kw: dict[str, Any] = {"axis": axis, "keepdims": keepdims}
    with np.errstate(all="ignore"):
        if name in ("sum", "prod"):
            dtype = np.int64 if x.dtype == BOOL else x.dtype
            return getattr(np, name)(f64(x), dtype=np.float64 if x.dtype in FLOATS else dtype, **kw)
        if name in ("var", "std"):
            return getattr(np, name)(f64(x), ddof=ddof, **kw)
        if name == "logsumexp":
            if x.size == 0:
                return np.log(np.sum(np.exp(f64(x)), **kw))
            peak = np.max(f64(x), axis=axis, keepdims=True)
            peak = np.where(np.isfinite(peak), peak, 0)
            out = np.log(np.sum(np.exp(f64(x) - peak), axis=axis, keepdims=True)) + peak
            return out if keepdims else np.squeeze(out, axis=axis)
        if name in ("argmax", "argmin"):
            return getattr(np, name)(x, axis=axis)
        return getattr(np, name)(f64(x), **kw)


def _axis_in_range(axis: Any, ndim: int, dims: Sequence[type[Dim]]) -> bool:
    items = axis if isinstance(axis, tuple) else (axis,)
    seen = set()
    for a in items:
        if isinstance(a, type):
            if a not in dims:
                return False
            a = dims.index(a)
        if not -ndim <= a < ndim:
            return False
        seen.add(a % ndim)
    return len(seen) == len(items)


axes = st.one_of(
    st.none(), st.integers(-4, 3), st.tuples(st.integers(-3, 2), st.integers(-3, 2)),
    st.sampled_from([A, B, C, Missing]), st.tuples(st.sampled_from([A, B]), st.integers(-2, 1)),
)


def _named_program(fn: Callable[[Any], Any], ndim: int, dtype: np.dtype[Any]) -> Any:
    """A program whose operand's axes are named A, B, C (so Dim-class axes resolve)."""
    dt = {np.dtype(k): v for k, v in [(np.float16, ts.f16), (BF16, ts.bf16), (np.float32, ts.f32),
                                         (np.float64, ts.f64), (np.int8, ts.i8), (np.int16, ts.i16),
                                         (np.int32, ts.i32), (np.int64, ts.i64), (np.uint8, ts.u8),
                                         (np.uint32, ts.u32), (np.bool_, ts.bool_)]}[dtype]
    if ndim == 0:
        def f0(x: Tensor[Any]) -> Any:
            return fn(x)
        f0.__annotations__["x"] = Tensor[dt]  # type: ignore[valid-type]
        return ts.program(f0)
    if ndim == 1:
        def f1(x: Tensor[Any, A]) -> Any:
            return fn(x)
        f1.__annotations__["x"] = Tensor[dt, A]  # type: ignore[valid-type]
        return ts.program(f1)
    if ndim == 2:
        def f2(x: Tensor[Any, A, B]) -> Any:
            return fn(x)
        f2.__annotations__["x"] = Tensor[dt, A, B]  # type: ignore[valid-type]
        return ts.program(f2)

    def f3(x: Tensor[Any, A, B, C]) -> Any:
        return fn(x)
    f3.__annotations__["x"] = Tensor[dt, A, B, C]  # type: ignore[valid-type]
    return ts.program(f3)


@fuzz(200)
@given(st.sampled_from(REDUCTIONS), dtypes, shapes, axes, st.booleans(), st.integers(0, 3), seeds, st.booleans())
def test_reductions(
    name: str, dtype: np.dtype[Any], shape: tuple[int, ...], axis: Any, keepdims: bool, ddof: int, seed: int,
    staged: bool,
) -> None:
    x = data(shape, dtype, seed)
    fn = getattr(tnp, name)
    kwargs: dict[str, Any] = {} if name in ("argmax", "argmin") else {"keepdims": keepdims}
    if name in ("var", "std"):
        kwargs["ddof"] = ddof
    # Dim classes only resolve on named operands: stage with names A, B, C on the axes.
    dims = DIM_CLASSES[: len(shape)] if staged else []
    if staged:
        result = outcome(lambda: _named_program(lambda t: fn(t, axis, **kwargs), len(shape), dtype)(x))
    else:
        result = outcome(lambda: fn(x, axis, **kwargs))
    if name in ("argmax", "argmin") and isinstance(axis, tuple):
        expect_error(result, name)
        return
    if axis is not None and not _axis_in_range(axis, len(shape), dims):
        expect_error(result, name, (ts.ShapeError, ts.DTypeError, ValueError, IndexError))
        return
    if name in FLOAT_REDUCTIONS and dtype not in FLOATS or name == "prod" and dtype == BOOL:
        expect_error(result, name, (ts.DTypeError,))
        return
    np_axis = axis
    if axis is not None:
        items = axis if isinstance(axis, tuple) else (axis,)
        np_axis = tuple(dims.index(a) if isinstance(a, type) else a for a in items)
        if name in ("argmax", "argmin"):
            (np_axis,) = np_axis
    reduced = range(len(shape)) if axis is None else [a % max(len(shape), 1) for a in np_axis if True] \
        if isinstance(np_axis, tuple) else [np_axis % max(len(shape), 1)]
    empty = (x.size == 0 if axis is None else any(shape[a] == 0 for a in reduced)) if shape else False
    if name in ("max", "min", "argmax", "argmin") and empty:
        expect_error(result, name, (ts.ShapeError, ValueError))
        return
    status, got = result
    if status == "error":
        raise AssertionError(f"{name} of {dtype}{list(shape)} axis={axis}: {type(got).__name__}: {got}") from got
    want = _np_reduce(name, x, np_axis, keepdims, ddof)
    if name in ("sum", "prod") and dtype in INTS:
        want = np.asarray(want).astype(dtype)  # tensorstage accumulates in the operand's dtype (wrapping)
    assert_close(name, got, want, dtype if dtype in FLOATS else np.dtype(np.int64), scale=8.0 * max(x.size, 1))


# --------------------------------------------------------------------------------------------- shaping


@st.composite
def reshape_targets(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    size = math.prod(shape)
    kind = draw(st.sampled_from(["factor", "minus1", "bad", "negative", "random"]))
    if kind in ("factor", "minus1") and size > 0:
        factors = [d for d in range(1, size + 1) if size % d == 0]
        first = draw(st.sampled_from(factors))
        target: list[int] = [first, size // first]
        if draw(st.booleans()):
            target.insert(draw(st.integers(0, 2)), 1)
        if kind == "minus1":
            target[draw(st.integers(0, len(target) - 1))] = -1
        return tuple(target)
    if kind == "bad":
        return (size + 1,)
    if kind == "negative":
        return (-1, -1) if draw(st.booleans()) else (-2, -size or -1)
    return tuple(draw(st.lists(st.integers(-1, 4), max_size=3)))


def _np_outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        with np.errstate(all="ignore"):
            return "ok", np.asarray(fn())
    except (ValueError, TypeError, IndexError) as exc:
        return "error", exc


def agree_with_numpy(name: str, ours: tuple[str, Any], theirs: tuple[str, Any], dtype: np.dtype[Any]) -> None:
    """Where NumPy raises we raise cleanly; where NumPy computes we match (or refuse, cleanly, by policy)."""
    if theirs[0] == "error":
        expect_error(ours, name)
        return
    status, got = ours
    if status == "error":
        raise AssertionError(f"{name}: NumPy gives {theirs[1]!r:.60} but we raised {type(got).__name__}: {got}")
    if isinstance(theirs[1], list):
        assert isinstance(got, list) and len(got) == len(theirs[1]), name
        for g, w in zip(got, theirs[1]):
            assert_close(name, g, w, dtype)
        return
    assert_close(name, got, theirs[1], dtype)


SHAPING: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "transpose": (tnp.transpose, np.transpose),
    "swapaxes": (tnp.swapaxes, np.swapaxes),
    "moveaxis": (tnp.moveaxis, np.moveaxis),
    "squeeze": (tnp.squeeze, np.squeeze),
    "expand_dims": (tnp.expand_dims, np.expand_dims),
    "broadcast_to": (tnp.broadcast_to, np.broadcast_to),
}


@st.composite
def shaping_cases(draw: st.DrawFn) -> tuple[str, tuple[int, ...], tuple[Any, ...]]:
    shape = draw(st.lists(st.sampled_from([0, 1, 2, 3]), max_size=3).map(tuple))
    name = draw(st.sampled_from(["reshape", "ravel", *SHAPING]))
    ax = st.integers(-4, 3)
    if name == "reshape":
        return name, shape, (draw(reshape_targets(shape)),)
    if name == "ravel":
        return name, shape, ()
    if name == "transpose":
        perm = draw(st.one_of(st.none(), st.permutations(range(len(shape))).map(tuple),
                              st.lists(ax, max_size=3).map(tuple)))
        return name, shape, (perm,)
    if name in ("swapaxes", "moveaxis"):
        return name, shape, (draw(ax), draw(ax))
    if name == "squeeze":
        return name, shape, (draw(st.one_of(st.none(), ax, st.tuples(ax, ax))),)
    if name == "expand_dims":
        return name, shape, (draw(st.one_of(ax, st.tuples(ax, ax))),)
    target = draw(st.one_of(
        st.just(shape), st.lists(st.integers(-1, 3), max_size=4).map(tuple),
        st.integers(1, 3).map(lambda n: (n, *shape)),
    ))
    return name, shape, (target,)


@fuzz(200)
@given(shaping_cases(), st.sampled_from([np.dtype(np.float32), np.dtype(np.int8), BOOL, BF16]), st.booleans())
def test_shaping(case: tuple[str, tuple[int, ...], tuple[Any, ...]], dtype: np.dtype[Any], staged: bool) -> None:
    name, shape, args = case
    x = data(shape, dtype, 0)
    ours_fn, np_fn = (tnp.reshape, np.reshape) if name == "reshape" else (
        (tnp.ravel, np.ravel) if name == "ravel" else SHAPING[name])
    theirs = _np_outcome(lambda: np_fn(x, *args))
    if name == "squeeze" and shape == () and args[0] is not None:
        theirs = ("error", None)  # NumPy's quirk: axis 0 of a rank-0 array squeezes; we call it out of range
    ours = run(lambda t: ours_fn(t, *args), [x], staged)
    agree_with_numpy(name, ours, theirs, dtype)
