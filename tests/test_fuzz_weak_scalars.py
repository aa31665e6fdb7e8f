"""Python scalars (int, float, bool) meeting arrays of every dtype, through every transform and control-flow form.

A scalar is weakly typed: it adopts the array's dtype (NumPy 2 / JAX rules), and a float keeps every digit until it
meets the array (``f64 + 0.1`` is exact; a float with an integer array is a ``DTypeError``). Each context below runs
all (dtype, scalar) combinations at once, called eagerly (the scalars static) and inside a program (the scalars its
arguments), and every result must equal, bit for bit and in dtype, NumPy computing in float64 and then casting.
Seeded, one compiled program per context and mode.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

HERE = os.path.basename(__file__)
RNG = np.random.default_rng(20240607)
FLOATS = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32), np.dtype(np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32)]
BOOL = np.dtype(np.bool_)


def _scalars(dtype: np.dtype[Any]) -> list[Any]:
    """Python scalars that every context combines with an array of ``dtype`` (ints that fit it)."""
    if dtype == BOOL:
        return [True]
    small = int(RNG.integers(0, min(100, np.iinfo(dtype).max) if dtype.kind in "iu" else 100))
    ints = [small, True]
    if dtype.kind == "f":
        # Floats with more digits than f32 holds: a rounding before they meet an f64 array shows.
        return [float(RNG.normal() * 10), -small, True]
    return ints


def _array(dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    if dtype == BOOL:
        return np.array([True, False, True])
    if dtype.kind == "f":
        return RNG.normal(size=3).astype(dtype)
    return RNG.integers(0, 20, size=3).astype(dtype)


COMBOS = [(d, s) for d in (*FLOATS, *INTS, BOOL) for s in _scalars(d)]
ARRAYS = [_array(d) for d, _ in COMBOS]
SCALARS = [s for _, s in COMBOS]


def op(a: Any, s: Any) -> Any:
    """The binary op a context applies: ``|`` for bool arrays (which have no ``+``), ``+`` otherwise."""
    return a | s if a.dtype == np.bool_ else a + s


def expected(a: np.ndarray[Any, Any], s: Any) -> np.ndarray[Any, Any]:
    """NumPy's weak-scalar result: the scalar cast to the array's dtype, floats computed in f64 and rounded once."""
    cast = np.asarray(s, a.dtype)
    if a.dtype == BOOL:
        return a | cast
    if a.dtype.kind == "f":
        return (a.astype(np.float64) + cast.astype(np.float64)).astype(a.dtype)
    return a + cast


def ops(arrays: Any, scalars: Any) -> list[Any]:
    return [op(a, s) for a, s in zip(arrays, scalars)]


def _one_trip(loop: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    """A context running ``ops`` once in a loop whose carry is (arrays, scalars): the scalars pass through."""
    return lambda arrays, scalars: loop((list(arrays), list(scalars)))


def _while(carry: Any) -> Any:
    out = ts.while_loop(lambda c: c[0] < 1, lambda c: (c[0] + 1, ops(c[1], c[2]), c[2]), (0, *carry))
    return out[1]


def _fori(lower: Any, upper: Any) -> Callable[[Any], Any]:
    return lambda carry: ts.fori_loop(lower, upper, lambda i, c: (ops(*c), c[1]), carry)[0]


def _scan(carry: Any) -> Any:
    return ts.scan(lambda c, _: ((ops(*c), c[1]), None), carry, None, length=1)[0][0]


def _custom_jvp() -> Any:
    f = ts.custom_jvp(op)

    @f.defjvp
    def rule(p: Any, t: Any) -> Any:
        return op(*p), t[0]

    return f


def _custom_vjp() -> Any:
    f = ts.custom_vjp(op)
    f.defvjp(lambda a, s: (op(a, s), s), lambda s, ct: (ct, None))
    return f


CJ, CV = _custom_jvp(), _custom_vjp()
INNER = ts.program(ops)

# Each context computes ``ops(arrays, scalars)`` some way; the result must not depend on which.
VALUE_CONTEXTS: dict[str, Callable[[Any, Any], Any]] = {
    "plain": ops,
    "nested program": lambda xs, ss: INNER(xs, ss),
    "cond": lambda xs, ss: ts.cond(True, ops, lambda xs, ss: list(xs), xs, ss),
    "cond staged pred": lambda xs, ss: ts.cond(tnp.asarray(0) < 1, ops, lambda xs, ss: list(xs), xs, ss),
    "switch": lambda xs, ss: ts.switch(2, [lambda xs, ss: list(xs), lambda xs, ss: list(xs), ops], xs, ss),
    "while_loop carry": _one_trip(_while),
    "while_loop closure": lambda xs, ss: ts.while_loop(lambda c: c[0] < 1, lambda c: (1, ops(c[1], ss)), (0, xs))[1],
    "fori_loop static carry": _one_trip(_fori(0, 1)),
    "fori_loop staged carry": _one_trip(_fori(tnp.asarray(0), 1)),
    "fori_loop closure": lambda xs, ss: ts.fori_loop(0, 1, lambda i, c: ops(c, ss), list(xs)),
    "scan carry": _one_trip(_scan),
    "scan closure": lambda xs, ss: ts.scan(lambda c, _: (ops(c, ss), None), list(xs), None, length=1)[0],
    "vmap": lambda xs, ss: ts.vmap(ops, in_axes=(0, None))(xs, ss),
    "checkpoint": lambda xs, ss: ts.checkpoint(ops)(xs, ss),
    "custom_jvp": lambda xs, ss: [CJ(a, s) for a, s in zip(xs, ss)],
    "custom_vjp": lambda xs, ss: [CV(a, s) for a, s in zip(xs, ss)],
}


def _check(results: Any, arrays: list[Any], scalars: list[Any], what: str) -> None:
    assert len(results) == len(arrays)
    for r, a, s in zip(results, arrays, scalars):
        got, want = np.asarray(r), expected(a, s)
        assert got.dtype == want.dtype, f"{what}: {a.dtype} with {s!r}: dtype {got.dtype}, expected {want.dtype}"
        assert got.tobytes() == want.tobytes(), f"{what}: {a.dtype} with {s!r}: {got!r} != {want!r}"


def test_eager_ops_follow_numpy() -> None:
    _check([op(ts.asarray(a), s) for a, s in zip(ARRAYS, SCALARS)], ARRAYS, SCALARS, "eager op")


@pytest.mark.parametrize("name", VALUE_CONTEXTS)
def test_value_contexts(name: str) -> None:
    context = VALUE_CONTEXTS[name]
    xs = [ts.asarray(a) for a in ARRAYS]
    if name != "nested program":  # outside a program: the scalars are static
        _check(context(xs, SCALARS), ARRAYS, SCALARS, f"{name} (eager)")
    _check(ts.program(context)(xs, SCALARS), ARRAYS, SCALARS, f"{name} (in a program)")


# ----------------------------------------------------------------------------------------------- derivatives

FLOAT_COMBOS = [(i, d, s) for i, (d, s) in enumerate(COMBOS) if d.kind == "f"]
FXS = [ARRAYS[i] for i, _, _ in FLOAT_COMBOS]
FSS = [s for _, _, s in FLOAT_COMBOS]


def scaled(xs: Any, ss: Any) -> list[Any]:
    return [a * s for a, s in zip(xs, ss)]


def loss(xs: Any, ss: Any) -> Any:
    """A float64 scalar whose gradient in each array is its scalar, cast to the array's dtype (exactly)."""
    return sum(tnp.sum(a * s).astype(ts.f64) for a, s in zip(xs, ss))


def _diag(jac: Any) -> list[Any]:
    """The diagonal blocks' diagonals of a list-to-list Jacobian (or Hessian)."""
    return [tnp.diagonal(jac[i][i]) for i in range(len(jac))]


def _ones(xs: Any) -> list[Any]:
    return [tnp.ones_like(a) for a in xs]


# Each context is the derivative of ``a * s`` in ``a``, for every float array: the scalar in the array's dtype.
DERIVATIVE_CONTEXTS: dict[str, Callable[[Any, Any], Any]] = {
    "grad": lambda xs, ss: ts.grad(loss)(xs, ss),
    "value_and_grad": lambda xs, ss: ts.value_and_grad(loss)(xs, ss)[1],
    "jvp": lambda xs, ss: ts.jvp(lambda xs: scaled(xs, ss), (xs,), (_ones(xs),))[1],
    "vjp": lambda xs, ss: ts.vjp(lambda xs: scaled(xs, ss), xs)[1](_ones(xs))[0],
    "linearize": lambda xs, ss: ts.linearize(lambda xs: scaled(xs, ss), xs)[1](_ones(xs)),
    "jacfwd": lambda xs, ss: _diag(ts.jacfwd(lambda xs: scaled(xs, ss))(xs)),
    "jacrev": lambda xs, ss: _diag(ts.jacrev(lambda xs: scaled(xs, ss))(xs)),
    "hessian": lambda xs, ss: _diag(ts.hessian(lambda xs: loss([a * a * 0.5 for a in xs], ss))(xs)),
    "checkpoint": lambda xs, ss: ts.grad(lambda xs: loss(ts.checkpoint(scaled)(xs, ss), [1] * len(xs)))(xs),
    "custom_jvp": lambda xs, ss: ts.jvp(lambda xs: [CJS(a, s) for a, s in zip(xs, ss)], (xs,), (_ones(xs),))[1],
    "custom_vjp": lambda xs, ss: ts.grad(lambda xs: loss([CVS(a, s) for a, s in zip(xs, ss)], [1] * len(xs)))(xs),
    "vmap of grad": lambda xs, ss: ts.vmap(lambda xs, ss: [GRAD(a, s) for a, s in zip(xs, ss)], in_axes=(0, None))(
        xs, ss
    ),
}


def _custom_jvp_scaled() -> Any:
    f = ts.custom_jvp(lambda a, s: a * s)

    @f.defjvp
    def rule(p: Any, t: Any) -> Any:
        return p[0] * p[1], t[0] * p[1]

    return f


def _custom_vjp_scaled() -> Any:
    f = ts.custom_vjp(lambda a, s: a * s)
    f.defvjp(lambda a, s: (a * s, s), lambda s, ct: (ct * s, None))
    return f


CJS, CVS = _custom_jvp_scaled(), _custom_vjp_scaled()
GRAD = ts.grad(lambda a, s: a * s)


def _check_derivative(results: Any, what: str) -> None:
    assert len(results) == len(FXS)
    for r, a, s in zip(results, FXS, FSS):
        got = np.asarray(r)
        want = np.broadcast_to(np.asarray(s, a.dtype), got.shape)
        assert got.dtype == a.dtype, f"{what}: {a.dtype} with {s!r}: dtype {got.dtype}"
        assert got.tobytes() == want.tobytes(), f"{what}: {a.dtype} with {s!r}: {got!r}, expected {want!r}"


@pytest.mark.parametrize("name", DERIVATIVE_CONTEXTS)
def test_derivative_contexts(name: str) -> None:
    context = DERIVATIVE_CONTEXTS[name]
    xs = [ts.asarray(a) for a in FXS]
    _check_derivative(context(xs, FSS), f"{name} (eager)")
    _check_derivative(ts.program(context)(xs, FSS), f"{name} (in a program)")


def test_differentiated_python_float_has_a_default_float_gradient() -> None:
    """As in JAX without x64: the gradient w.r.t. a Python float is f32, whatever array it met."""
    xs = [ts.asarray(np.arange(1.0, 4.0).astype(d)) for d in FLOATS]
    g = ts.grad(lambda ss, xs: loss(xs, ss))
    for grads in (g([0.1] * len(xs), xs), ts.program(g)([0.1] * len(xs), xs)):
        assert [np.asarray(x).dtype for x in grads] == [np.float32] * len(xs)
        assert [float(np.asarray(x)) for x in grads] == [6.0] * len(xs)


# ---------------------------------------------------------------------------------------------------- errors

BAD = [(np.arange(3, dtype=np.int32), 0.5), (np.array([True, False]), 2), (np.arange(3, dtype=np.uint8), 1.0)]


@pytest.mark.parametrize("name", VALUE_CONTEXTS)
@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_combinations_raise_dtype_errors_at_the_users_line(name: str, case: int) -> None:
    """A float scalar with an integer array, an int scalar with a bool array: a DTypeError naming the op and this
    file's line, eagerly and in a program (never an XLA error)."""
    a, s = BAD[case]
    context = VALUE_CONTEXTS[name]
    calls = [ts.program(context)] if name == "nested program" else [context, ts.program(context)]
    for call in calls:
        with pytest.raises(ts.DTypeError) as info:
            call([ts.asarray(a)], [s])
        assert HERE in str(info.value) and ("add" in str(info.value) or "or" in str(info.value)), str(info.value)


def test_loop_results_of_python_float_carries_stay_weak() -> None:
    """Regression: a Python float carried unchanged through a loop was rounded to f32 (the body returned its f32
    view), so ``carry + f64_array`` lost digits, eagerly and in a program; the carry result stays weak."""
    a = ts.asarray(np.array([1.0]))
    out = ts.program(lambda a, s: ts.fori_loop(0, 2, lambda i, c: (c[0] + c[1], c[1]), (a, s)))(a, 0.1)
    assert np.asarray(out[0]).tobytes() == np.array([1.0 + 0.1 + 0.1]).tobytes()
    assert np.asarray(out[1]).dtype == np.float32  # returned on its own: the default float, as a Python float argument
    tail = ts.program(lambda a, s: ts.scan(lambda c, _: (c, None), s, None, length=2)[0] + a)(a, 0.1)
    assert np.asarray(tail).tobytes() == np.array([1.1]).tobytes()


def test_python_floats_returned_by_custom_derivative_functions_stay_weak() -> None:
    """Regression: a custom_jvp/custom_vjp function returning a Python float argument as it is gave a float64
    array (a program returning it gives float32); it now stays weak: the default float alone, every digit where
    it meets a float64 array, eagerly, in a program and under grad."""
    a = np.array([1.5], np.float32)
    wide = np.array([1.0])
    for make in (ts.custom_jvp, ts.custom_vjp):
        fn = make(lambda x, s: (x * 2, s))
        for call in (fn, ts.program(lambda x, s: fn(x, s))):
            assert [np.asarray(o).dtype for o in call(a, 0.1)] == [np.float32, np.float32]
        exact = ts.program(lambda x, s, w: fn(x, s)[1] + w)(a, 0.1, wide)
        assert np.asarray(exact).tobytes() == (wide + 0.1).tobytes()
        slope = ts.grad(lambda x, s: tnp.sum(fn(x, s)[0]) * fn(x, s)[1])(a, 0.25)
        assert np.asarray(slope).dtype == np.float32 and np.allclose(np.asarray(slope), 0.5)


def test_python_ints_that_would_wrap_are_refused_where_their_value_is_known() -> None:
    """A Python int meeting a narrower integer array wraps in XLA's conversion: refused when the value is known,
    at staging for a constant and at call time for a program argument, naming the op, the dtype and the line."""
    u8 = ts.asarray(np.arange(3, dtype=np.uint8))
    add = ts.program(lambda a, s: a + s)
    np.testing.assert_array_equal(np.asarray(add(u8, 255 - 2)), np.array([253, 254, 255], np.uint8))
    in_cond = ts.program(lambda a, s: ts.cond(a[0] == 0, lambda x, t: x * t, lambda x, t: x, a, s))
    in_vmap = ts.program(lambda a, s: ts.vmap(lambda x, t: x - t, in_axes=(0, None))(a, s))
    as_carry = ts.program(lambda a, s: a + ts.fori_loop(0, 2, lambda i, c: c + a[1], s))  # settles to u8
    for fn in (add, in_cond, in_vmap, as_carry):
        for bad in (256, -1, 2**31 - 1):
            with pytest.raises(ts.DTypeError, match=rf"argument {bad} does not fit u8 in \w+ at .*test_fuzz_weak"):
                fn(u8, bad)
        assert np.asarray(fn(u8, 2)).dtype == np.uint8  # the same compiled program still runs in-range values
    with pytest.raises(ts.DTypeError, match="value 300 does not fit u8"):
        ts.cond(True, lambda x, t: x + t, lambda x, t: x, u8, 300)
    with pytest.raises(ts.DTypeError, match="value 300 does not fit u8 in while_loop"):
        ts.while_loop(lambda c: c < 3, lambda c: c + u8[1], 300)
    i16 = ts.asarray(np.zeros(2, np.int16))
    with pytest.raises(ts.DTypeError, match="argument 40000 does not fit i16"):
        add(i16, 40000)
    np.testing.assert_array_equal(np.asarray(add(i16, -32768)), np.full(2, -32768, np.int16))
