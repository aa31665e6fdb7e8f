"""Fuzzing the array-building and rearranging ops against NumPy (f64, seeded inputs, many cases per compile).

Covers reshape/ravel/squeeze/expand_dims, the axis movers, broadcasting, joining and splitting, tile/repeat/roll,
flips and rot90, every ``pad`` mode, resize, atleast_Nd, the creation functions, triangles and diagonals,
meshgrid, vander, kron, outer/inner/tensordot and einsum; on every dtype family, empty and 0-d operands, eagerly
and staged, with grad (vs finite differences of the NumPy reference) and vmap (vs a Python loop) on a sample.

Deliberate differences from NumPy:
- creation functions default to f32 / i32 (Python floats and ints too), as in JAX; ``empty``/``empty_like`` give
  zeros; ``linspace(..., retstep=True)`` gives the step as a tensor;
- array dtypes never promote (``concatenate`` of f32 and f64 is a DTypeError); bool operands of einsum,
  tensordot and inner are a DTypeError (NumPy computes logical sums);
- broadcasting never adds leading axes to one operand while stretching another (``broadcast_arrays`` of (3, 1)
  and (2, 1, 4) is a ShapeError: the (N,) vs (N, 1) trap);
- ``pad``: ``mode="empty"`` fills zeros, callable modes are not supported, ``stat_length=0`` and an unknown
  ``reflect_type`` raise (NumPy gives NaN / treats it as ``"even"``), integer ``linear_ramp`` floors the exact
  ramp (NumPy's float step can floor one lower);
- axis 0 of a 0-d array is out of range (NumPy's ``squeeze``/``repeat`` accept it);
- ``tril``/``triu`` need rank >= 2 (NumPy lifts a 1-D operand), ``geomspace`` needs static bounds and
  ``trim_zeros`` concrete arrays (their values decide the result), ``tensordot(axes=-1)`` raises.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp

Op = Callable[[Any, Any], Any]  # (module, operand) -> result, the module being numpy or tensorstage.numpy


def _same(got: Any, want: Any, what: Any, dtype: bool = True, tol: float = 1e-12) -> None:
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), what
        for g, w in zip(got, want):
            _same(g, w, what, dtype, tol)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if dtype:
        assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=repr(what))
    else:
        np.testing.assert_array_equal(got, want, err_msg=repr(what))


def _check_ops(ops: dict[str, Op], *xs: np.ndarray, eager: int = 1) -> None:
    """Every op staged in one program per operand (NumPy's module in the same code), plus a few eagerly."""
    for x in xs:
        names = list(ops)
        outs = ts.program(lambda t: tuple(ops[n](tnp, t) for n in names))(x)
        for name, got in zip(names, outs):
            _same(got, ops[name](np, x), (name, x.dtype, x.shape))
        for name in names[:eager]:
            _same(ops[name](tnp, ts.asarray(x)), ops[name](np, x), ("eager", name, x.dtype))


# ------------------------------------------------------------------------------------- shapes and axes

SHAPE_OPS: dict[str, Op] = {
    "reshape -1": lambda m, t: m.reshape(t, (-1,)),
    "reshape (4, -1)": lambda m, t: m.reshape(t, (4, -1)),
    "reshape (3, 1, 8)": lambda m, t: m.reshape(t, (3, 1, 8)),
    "reshape int": lambda m, t: m.reshape(t, 24),
    "ravel": lambda m, t: m.ravel(t),
    "squeeze": lambda m, t: m.squeeze(m.expand_dims(t, (0, -1))),
    "squeeze axis": lambda m, t: m.squeeze(m.expand_dims(t, (0, 2)), (-3, 0)),
    "expand_dims neg": lambda m, t: m.expand_dims(t, (-1, 1, -3)),
    "transpose": lambda m, t: m.transpose(t),
    "transpose axes": lambda m, t: m.transpose(t, (-1, 0, 1)),
    "permute_dims": lambda m, t: m.permute_dims(t, (1, 2, 0)),
    "swapaxes": lambda m, t: m.swapaxes(t, 0, -1),
    "moveaxis": lambda m, t: m.moveaxis(t, -1, 0),
    "moveaxis tuple": lambda m, t: m.moveaxis(t, (0, 1), (2, 0)),
    "moveaxis neg tuple": lambda m, t: m.moveaxis(t, (2, -3), (-3, 1)),
    "rollaxis": lambda m, t: m.rollaxis(t, 2, 1),
    "rollaxis end": lambda m, t: m.rollaxis(t, 0, 3),
    "broadcast_to": lambda m, t: m.broadcast_to(t[:, :1], (5, 2, 3, 4)),
    "flip": lambda m, t: m.flip(t),
    "flip axes": lambda m, t: m.flip(t, (0, -1)),
    "fliplr": lambda m, t: m.fliplr(t),
    "flipud": lambda m, t: m.flipud(t),
    "roll": lambda m, t: m.roll(t, 5),
    "roll tuple": lambda m, t: m.roll(t, (1, -7), (0, 2)),
    "roll same axis twice": lambda m, t: m.roll(t, (1, 2), (1, 1)),
    "tile": lambda m, t: m.tile(t, (2, 1, 1, 2)),
    "tile short reps": lambda m, t: m.tile(t, 2),
    "repeat flat": lambda m, t: m.repeat(t, 2),
    "repeat counts": lambda m, t: m.repeat(t, [1, 0, 3], axis=1),
    "repeat neg axis": lambda m, t: m.repeat(t, 2, axis=-1),
    "resize grow": lambda m, t: m.resize(t, (5, 7)),
    "resize shrink": lambda m, t: m.resize(t, (3,)),
    "atleast_3d": lambda m, t: m.atleast_3d(t[0, 0]),
    "atleast_2d many": lambda m, t: m.atleast_2d(t[0, 0, 0], t[0, 0], t),
    "tril": lambda m, t: m.tril(t, 1),
    "triu": lambda m, t: m.triu(t, -2),
    "diagonal": lambda m, t: m.diagonal(t, 1, 2, 0),
    "diagonal far": lambda m, t: m.diagonal(t, -7),
    "diag": lambda m, t: m.diag(t[0], 2),
    "diag vec": lambda m, t: m.diag(t[0, 0], -1),
    "diagflat": lambda m, t: m.diagflat(t[0], -1),
    "meshgrid": lambda m, t: m.meshgrid(t[0, 0], t[1, 1, :2]),
    "meshgrid ij sparse": lambda m, t: m.meshgrid(t[0, 0], t[0, 1], indexing="ij", sparse=True),
}
for _k in (-5, -1, 2, 3):
    SHAPE_OPS[f"rot90 k={_k}"] = lambda m, t, k=_k: m.rot90(t, k)
    SHAPE_OPS[f"rot90 k={_k} axes"] = lambda m, t, k=_k: m.rot90(t, k, (2, -3))



def _kept(m: Any, t: Any, y: Any, sums: bool = False) -> Any:
    """NumPy's result in tensorstage's dtype: vander never promotes and integer sums accumulate in (at least) 32
    bits, as the README says; NumPy gives 64-bit integers."""
    if m is tnp:
        return y
    kind, size = t.dtype.kind, t.dtype.itemsize
    return y.astype(f"{kind}{max(size, 4)}" if sums and kind in "iu" else t.dtype)


NUMERIC_OPS: dict[str, Op] = {
    "trace": lambda m, t: _kept(m, t, m.trace(t, 1), sums=True),
    "trace axes": lambda m, t: _kept(m, t, m.trace(t, -1, 2, 1), sums=True),
    "kron": lambda m, t: m.kron(t[0], t[1, :2]),
    "kron 3d": lambda m, t: m.kron(t, t[0, :2, :1]),
    "vander": lambda m, t: _kept(m, t, m.vander(t[0, 0], 3)),
    "vander increasing": lambda m, t: _kept(m, t, m.vander(t[0, 0], increasing=True)),
    "outer": lambda m, t: m.outer(t[0], t[1, 0]),
    "inner": lambda m, t: m.inner(t, t[0]),
    "tensordot 2": lambda m, t: m.tensordot(t, t[0], 2),
    "tensordot pairs": lambda m, t: m.tensordot(t, t, ((2, 0), (2, 0))),
    "tensordot 0": lambda m, t: m.tensordot(t[0, 0], t[1, 1], 0),
}


def test_shape_ops_match_numpy(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 4))
    ints = rng.integers(-50, 50, (2, 3, 4)).astype(np.int32)
    _check_ops({**SHAPE_OPS, **NUMERIC_OPS}, x)
    sample = dict(list(SHAPE_OPS.items())[::3])  # the same code for every dtype: a sample for the others
    _check_ops({**sample, **NUMERIC_OPS}, ints, ints.astype(np.uint8), eager=0)
    _check_ops(sample, rng.random((2, 3, 4)) < 0.5, eager=0)


def test_empty_and_zero_d_operands(rng: np.random.Generator) -> None:
    empty_ops: dict[str, Op] = {
        "reshape": lambda m, t: m.reshape(t, (3, 0, 5)),
        "ravel": lambda m, t: m.ravel(t),
        "transpose": lambda m, t: m.transpose(t),
        "moveaxis": lambda m, t: m.moveaxis(t, (0, 1), (1, 0)),
        "broadcast_to": lambda m, t: m.broadcast_to(t[:, :, :1], (2, 0, 0, 5)),
        "roll": lambda m, t: m.roll(t, 2),
        "tile": lambda m, t: m.tile(t, (2, 3)),
        "repeat": lambda m, t: m.repeat(t, 3, axis=0),
        "flip": lambda m, t: m.flip(t),
        "rot90": lambda m, t: m.rot90(t, 3),
        "pad": lambda m, t: m.pad(t, ((1, 0), (0, 0), (2, 1))),
        "pad edge": lambda m, t: m.pad(t, ((0, 0), (0, 0), (2, 1)), "edge"),
        "concat": lambda m, t: m.concatenate([t, t], axis=1),
        "split": lambda m, t: m.array_split(t, 3, axis=2),
        "diagonal": lambda m, t: m.diagonal(t, 0, 0, 2),
        "trace": lambda m, t: m.trace(t, 0, 1, 2),
        "einsum": lambda m, t: m.einsum("ijk,ijk->k", t, t),
        "tensordot": lambda m, t: m.tensordot(t, t, ((0, 1), (0, 1))),
    }
    _check_ops(empty_ops, np.zeros((0, 0, 3)))
    _check_ops({k: empty_ops[k] for k in ("ravel", "transpose", "moveaxis", "roll", "tile", "flip", "concat",
                                          "pad", "pad edge", "einsum")}, rng.standard_normal((2, 0, 3)))
    scalar_ops: dict[str, Op] = {
        "reshape": lambda m, t: m.reshape(t, (1, 1)),
        "reshape -1": lambda m, t: m.reshape(t, -1),
        "ravel": lambda m, t: m.ravel(t),
        "expand_dims": lambda m, t: m.expand_dims(t, (0, -1)),
        "transpose": lambda m, t: m.transpose(t),
        "broadcast_to": lambda m, t: m.broadcast_to(t, (2, 3)),
        "tile": lambda m, t: m.tile(t, (2, 2)),
        "repeat": lambda m, t: m.repeat(t, 3),
        "roll": lambda m, t: m.roll(t, 1),
        "flip": lambda m, t: m.flip(t),
        "atleast_3d": lambda m, t: m.atleast_3d(t),
        "pad": lambda m, t: m.pad(t, 2, "reflect"),
        "resize": lambda m, t: m.resize(t, (2, 2)),
        "kron": lambda m, t: m.kron(t, t),
        "einsum": lambda m, t: m.einsum(",->", t, t),
        "tensordot": lambda m, t: m.tensordot(t, t, 0),
        "diagflat": lambda m, t: m.diagflat(t, 1),
    }
    _check_ops(scalar_ops, np.array(1.5))


# ---------------------------------------------------------------------------------- joining and splitting


def test_joining_and_splitting_match_numpy(rng: np.random.Generator) -> None:
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    v, s = rng.standard_normal(3), np.array(0.5)
    cube = rng.standard_normal((4, 6, 4))
    join: list[tuple[str, Callable[..., Any]]] = [
        ("concatenate", lambda m, a, b, v, s, c: m.concatenate([a, b, a[:0]], axis=-2)),
        ("concatenate None", lambda m, a, b, v, s, c: m.concatenate([a, v], axis=None)),
        ("stack", lambda m, a, b, v, s, c: m.stack([b, b * 2], axis=-1)),
        ("stack 0-d", lambda m, a, b, v, s, c: m.stack([s, s, s])),
        ("hstack", lambda m, a, b, v, s, c: m.hstack([v, v, s[None]])),
        ("vstack", lambda m, a, b, v, s, c: m.vstack([a, v, b])),
        ("dstack", lambda m, a, b, v, s, c: m.dstack([v, v])),
        ("column_stack", lambda m, a, b, v, s, c: m.column_stack([v, a.T, v])),
        ("append flat", lambda m, a, b, v, s, c: m.append(a, v)),
        ("append axis", lambda m, a, b, v, s, c: m.append(a, b, axis=0)),
        ("block", lambda m, a, b, v, s, c: m.block([[a, a], [b, b]])),
        ("block 1-d", lambda m, a, b, v, s, c: m.block([v, s[None], v])),
        ("block lifts", lambda m, a, b, v, s, c: m.block([[v], [a]])),
    ]
    for sections in (2, 3, 5, [1, 3], [4, 1], [-2], [0, 10], []):
        for axis in (0, 1, -1):
            join.append((f"array_split {sections} {axis}",
                         lambda m, a, b, v, s, c, k=sections, ax=axis: m.array_split(c, k, axis=ax)))
        if not isinstance(sections, int) or 4 % sections == 0:
            join.append((f"split {sections}", lambda m, a, b, v, s, c, k=sections: m.split(c, k, axis=2)))
    for name in ("hsplit", "vsplit", "dsplit"):
        join.append((name, lambda m, a, b, v, s, c, f=name: getattr(m, f)(c, 2)))
        join.append((f"{name} at", lambda m, a, b, v, s, c, f=name: getattr(m, f)(c, [1, 3])))
    join.append(("hsplit 1-d", lambda m, a, b, v, s, c: m.hsplit(v, 3)))
    args = (a, b, v, s, cube)
    outs = ts.program(lambda *t: tuple(f(tnp, *t) for _, f in join))(*args)
    for (name, f), got in zip(join, outs):
        _same(got, f(np, *args), name)
    for name, f in join[:3]:
        _same(f(tnp, *args), f(np, *args), ("eager", name))
    ints = [rng.integers(0, 9, (2, 3)).astype(np.int16) for _ in range(2)]
    _same(tnp.concatenate(ints, axis=1), np.concatenate(ints, axis=1), "int16")
    _same(tnp.block([[ints[0], ints[1]]]), np.block([[ints[0], ints[1]]]), "block int16")


def test_trim_zeros_and_broadcast_shapes() -> None:
    x = np.array([0, 0, 1.5, 0, 2, 0])
    for trim in ("fb", "f", "b", "B"):
        _same(tnp.trim_zeros(x, trim), np.trim_zeros(x, trim), trim)
    _same(tnp.trim_zeros(np.zeros(3)), np.trim_zeros(np.zeros(3)), "all zeros")
    for shapes in (((3, 1), (2, 1, 4), ()), ((0, 1), (5,)), (3, (2, 1))):
        assert tnp.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    with pytest.raises(ts.ShapeError, match="broadcast_shapes"):
        tnp.broadcast_shapes((3, 2), (4,))
    with pytest.raises(ts.ShapeError, match="trim_zeros"):
        ts.program(lambda t: tnp.trim_zeros(t))(x)


# ------------------------------------------------------------------------------------------------- pad

PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum", "reflect", "symmetric",
             "wrap")


def _pad_cases(rng: np.random.Generator, x: np.ndarray, count: int) -> list[tuple[Any, str, dict[str, Any]]]:
    """Random widths (scalar, pair or per axis; often wider than the axis) and each mode's options."""
    cases: list[tuple[Any, str, dict[str, Any]]] = []
    unsigned = x.dtype.kind == "u"
    for k in range(count):
        mode = PAD_MODES[k % len(PAD_MODES)]
        form = int(rng.integers(0, 3))
        widths: Any = (int(rng.integers(0, 9)) if form == 0 else tuple(int(w) for w in rng.integers(0, 9, 2))
                       if form == 1 else tuple(tuple(int(w) for w in rng.integers(0, 9, 2)) for _ in x.shape))
        options: dict[str, Any] = {}
        if mode == "constant" and k % 3:
            options["constant_values"] = tuple((int(rng.integers(0, 9)), int(rng.integers(0, 9))) for _ in x.shape)
        if mode == "linear_ramp" and k % 3:
            low = 0 if unsigned else -9
            options["end_values"] = tuple((int(rng.integers(low, 9)), int(rng.integers(low, 9))) for _ in x.shape)
        if mode in ("maximum", "mean", "median", "minimum") and k % 3:
            options["stat_length"] = tuple(int(n) for n in rng.integers(1, 5, 2)) if k % 2 else int(rng.integers(1, 5))
        if mode in ("maximum", "mean", "median", "minimum") and k % 3 == 0:
            options["stat_length"] = None
        if mode in ("reflect", "symmetric") and k % 2:
            options["reflect_type"] = "odd"
        cases.append((widths, mode, options))
    return cases


def test_pad_every_mode_matches_numpy(rng: np.random.Generator) -> None:
    xs = [(rng.standard_normal((3, 4)) * 20).astype(dtype) for dtype in (np.float64, np.int32, np.float32)]
    xs.append(rng.integers(0, 99, (2, 3)).astype(np.uint8))
    cases = [_pad_cases(rng, x, count) for x, count in zip(xs, (20, 10, 4, 4))]
    outs = ts.program(lambda *ts_: tuple(
        tuple(tnp.pad(t, w, mode, **o) for w, mode, o in group) for t, group in zip(ts_, cases)))(*xs)
    for x, group, results in zip(xs, cases, outs):
        for (w, mode, options), got in zip(group, results):
            want = np.pad(x, w, mode, **options)
            if mode == "linear_ramp" and x.dtype.kind in "iu":  # floors of the exact ramp: NumPy may be 1 lower
                np.testing.assert_allclose(np.asarray(got).astype(float), want.astype(float), atol=1, err_msg=mode)
                continue
            _same(got, want, (mode, w, options, x.dtype), tol=1e-5 if x.dtype == np.float32 else 1e-12)


def test_pad_singletons_large_widths_and_errors(rng: np.random.Generator) -> None:
    row = rng.standard_normal((1, 2))
    cases = [((5, 7), m, {}) for m in ("reflect", "symmetric", "wrap", "edge")]
    cases += [((9, 1), "reflect", {"reflect_type": "odd"}), ((0, 11), "symmetric", {"reflect_type": "odd"})]
    outs = ts.program(lambda t: tuple(tnp.pad(t, w, m, **o) for w, m, o in cases))(row)
    for (w, m, o), got in zip(cases, outs):
        _same(got, np.pad(row, w, m, **o), (m, w))
    _same(tnp.pad(np.zeros((0, 3)), ((0, 0), (1, 2)), "edge"), np.pad(np.zeros((0, 3)), ((0, 0), (1, 2)), "edge"),
          "empty operand")
    _same(tnp.pad(row, np.array([[1, 0], [2, 3]]), "wrap"), np.pad(row, np.array([[1, 0], [2, 3]]), "wrap"),
          "host widths")
    filled = ts.program(lambda t, v: tnp.pad(t, 1, constant_values=v))(row, np.float64(7.0))
    _same(filled, np.pad(row, 1, constant_values=7.0), "a staged fill value")
    _same(tnp.pad(np.array(2.0), (1, 2), "reflect"), np.pad(np.array(2.0), (1, 2), "reflect"), "0-d")
    bad: list[tuple[Callable[[], Any], type, str]] = [
        (lambda: tnp.pad(row, 1, "foo"), ValueError, "mode 'foo'"),
        (lambda: tnp.pad(row, 1, "edge", stat_length=2), ValueError, "does not take stat_length"),
        (lambda: tnp.pad(row, 1, "mean", stat_length=0), ValueError, "stat_length"),
        (lambda: tnp.pad(row, 1, "reflect", reflect_type="up"), ValueError, "reflect_type"),
        (lambda: tnp.pad(np.zeros((0, 2)), 1, "wrap"), ValueError, "empty axis 0"),
        (lambda: tnp.pad(row, ((1, 2),) * 3), ts.ShapeError, "pad_width"),
        (lambda: tnp.pad(row, -1), ts.ShapeError, "non-negative"),
        (lambda: tnp.pad(row, 1.5), TypeError, "integers"),
        (lambda: tnp.pad(row, 1, constant_values=((1, 2, 3),)), ts.ShapeError, "constant_values"),
    ]
    for fn, kind, text in bad:
        with pytest.raises(kind, match=text) as info:
            fn()
        assert "pad" in str(info.value) and "test_fuzz_shaping.py:" in str(info.value), str(info.value)


# -------------------------------------------------------------------------------------------- creation


def test_creation_matches_numpy() -> None:
    f64, i64 = np.float64, np.int64
    cases: list[tuple[str, Callable[[Any], Any]]] = [
        ("zeros", lambda m: m.zeros((2, 0, 3), dtype=np.int8)),
        ("ones", lambda m: m.ones(3, dtype=bool)),
        ("full", lambda m: m.full((2, 3), 2.5, dtype=f64)),
        ("full array", lambda m: m.full((2, 3), np.array([1.0, 2.0, 3.0]))),
        ("full column", lambda m: m.full((2, 3), np.array([[1], [2]]), dtype=i64)),
        ("full numpy scalar", lambda m: m.full((2,), np.int8(3))),
        ("eye", lambda m: m.eye(3, 5, 2, dtype=f64)),
        ("eye far", lambda m: m.eye(3, None, -4, dtype=i64)),
        ("identity", lambda m: m.identity(0, dtype=f64)),
        ("tri", lambda m: m.tri(3, 4, -1, dtype=i64)),
        ("indices", lambda m: m.indices((2, 3), dtype=i64)),
        ("indices sparse", lambda m: m.indices((2, 3), dtype=i64, sparse=True)),
        ("fromfunction", lambda m: m.fromfunction(lambda i, j: i * 10 + j, (3, 2), dtype=f64)),
    ]
    for start, stop, step in ((5, None, 1), (2, 10, 3), (10, 2, -3), (0.0, 1.0, 0.1), (1, 0, 1), (2.5, 7, 1),
                              (10.0, 0.0, -2.5), (-3, None, 1), (0, 1, 0.25)):
        cases.append((f"arange {start} {stop} {step}", lambda m, a=(start, stop, step): m.arange(*a, dtype=f64)))
    linspaces: list[tuple[Any, ...]] = [(0, 1, 5), (0, 1, 0), (0, 1, 1), (2, 5, 4, False), (1, 0, 7)]
    for args in linspaces:
        cases.append((f"linspace {args}", lambda m, a=args: m.linspace(*a, dtype=f64)))
        cases.append((f"logspace {args}", lambda m, a=args: m.logspace(*a, dtype=f64)))
        cases.append((f"geomspace {args}", lambda m, a=args: m.geomspace(
            a[0] + 1, -a[1] - 2, *a[2:], dtype=f64)))
    cases += [
        ("linspace int floors", lambda m: m.linspace(0, -7.5, 4, dtype=i64)),
        ("linspace uint8", lambda m: m.linspace(0, 10, 6, dtype=np.uint8)),
        ("linspace retstep", lambda m: m.linspace(2, 5, 4, retstep=True, dtype=f64)),
        ("linspace arrays", lambda m: m.linspace(np.array([0.0, 1.0]), np.array([[2.0], [5.0]]), 3, dtype=f64,
                                                axis=-1)),
        ("logspace base", lambda m: m.logspace(0, 3, 4, base=2.0, dtype=f64)),
    ]
    dummy = np.zeros(2)
    outs = ts.program(lambda t: tuple(f(tnp) for _, f in cases))(dummy)
    for (name, f), got in zip(cases, outs):
        _same(got, f(np), name)
    for name, f in cases[:4] + cases[-4:]:
        _same(f(tnp), f(np), ("eager", name))
    x = np.zeros((2, 3), np.int16)
    likes = (
        (tnp.ones_like(x, shape=(4, 1)), np.ones((4, 1), np.int16)),
        (tnp.full_like(x, 7, dtype=f64), np.full((2, 3), 7.0)),
        (tnp.empty_like(x, shape=3), np.zeros(3, np.int16)),
        (tnp.empty((2,), dtype=i64), np.zeros(2, i64)),
    )
    for made, want in likes:
        _same(made, want, "like")


def test_creation_default_dtypes_and_errors() -> None:
    assert np.asarray(tnp.arange(5)).dtype == np.int32 and np.asarray(tnp.arange(0.5)).dtype == np.float32
    assert np.asarray(tnp.linspace(0, 1, 3)).dtype == np.float32
    assert np.asarray(tnp.full((2,), 7)).dtype == np.int32 and np.asarray(tnp.full((2,), True)).dtype == np.bool_
    _same(tnp.arange(1, 3, dtype=bool), np.arange(1, 3, dtype=bool), "bool arange of 2")
    bad: list[tuple[Callable[[], Any], type, str]] = [
        (lambda: tnp.arange(5, dtype=bool), TypeError, "at most 2"),
        (lambda: tnp.arange(1, 2, 0), ValueError, "arange"),
        (lambda: tnp.zeros((-1, 2)), ts.ShapeError, "negative dimension"),
        (lambda: tnp.eye(-1), ValueError, "eye"),
        (lambda: tnp.linspace(0, 1, -1), ValueError, "non-negative"),
        (lambda: tnp.geomspace(0, 1, 3), ValueError, "geomspace"),
        (lambda: tnp.full((2, 3), np.array([1.0, 2.0])), ts.ShapeError, "full"),
    ]
    for fn, kind, text in bad:
        with pytest.raises(kind, match=text):
            fn()


def test_linspace_of_tensor_bounds(rng: np.random.Generator) -> None:
    lo, hi = rng.standard_normal(3), rng.standard_normal(3) + 5
    cases: list[tuple[int, dict[str, Any]]] = [
        (5, {}), (4, {"endpoint": False}), (1, {}), (0, {}), (6, {"axis": -1}), (5, {"dtype": np.int64}),
        (4, {"retstep": True}),
    ]
    outs = ts.program(lambda a, b: tuple(tnp.linspace(a, b, n, **k) for n, k in cases))(lo, hi)
    for (n, k), got in zip(cases, outs):
        _same(got, np.linspace(lo, hi, n, **k), (n, k))
    grid = ts.program(lambda a: tnp.logspace(a, 2.0, 3, base=2.0, dtype=np.float64))(lo)
    _same(grid, np.logspace(lo, 2.0, 3, base=2.0), "logspace of a tensor")


# ------------------------------------------------------------------------------------------------ einsum

EINSUM = [
    ("ij,jk->ik", "a", "b"), ("ij,jk", "a", "b"), ("ij,jk,k->i", "a", "b", "c"), ("ii->i", "q"), ("ii", "q"),
    ("iii->i", "t"), ("iij->ij", "t"), ("iji->j", "t"), ("ij->ji", "a"), ("ji", "a"), ("ij->", "a"),
    ("i,i", "c", "c"), ("i,j", "c", "c"), ("...ij,...jk->...ik", "x", "q"), ("...j,j->...", "x", "d"),
    ("ij...->...", "x"), ("...", "x"), ("...ii->...i", "y"), (",ij->ij", "s", "a"), ("", "s"), ("ij,ij", "a", "a"),
    ("bij,bjk->bik", "x", "z"), ("...i,...i->...", "u", "w"), ("ij,j->i", "a", "one"), ("ab,bc->ca", "a", "b"),
    ("i j -> j i", "a"), ("Ij,jK->KI", "a", "b"), ("ij,kj->ik", "a", "a"),
]


def test_einsum_matches_numpy(rng: np.random.Generator) -> None:
    ops = {
        "a": rng.standard_normal((3, 4)), "b": rng.standard_normal((4, 5)), "c": rng.standard_normal(5),
        "d": rng.standard_normal(4), "q": rng.standard_normal((4, 4)), "t": rng.standard_normal((3, 3, 3)),
        "x": rng.standard_normal((2, 3, 4)), "y": rng.standard_normal((2, 4, 4)), "s": np.array(1.5),
        "z": rng.standard_normal((2, 4, 3)), "u": rng.standard_normal((2, 1, 4)), "w": rng.standard_normal((3, 4)),
        "one": rng.standard_normal(1),
    }
    names = sorted(ops)
    outs = ts.program(lambda *t: tuple(
        tnp.einsum(spec, *(t[names.index(n)] for n in args)) for spec, *args in EINSUM))(*(ops[n] for n in names))
    for (spec, *args), got in zip(EINSUM, outs):
        _same(got, np.einsum(spec, *(ops[n] for n in args)), spec)
    a, b = ops["a"], ops["b"]
    _same(tnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(a, [0, 1], b, [1, 2], [0, 2]), "sublists")
    _same(tnp.einsum(a, [Ellipsis, 1], a, [Ellipsis, 1]), np.einsum(a, [Ellipsis, 1], a, [Ellipsis, 1]), "sub ...")
    _same(tnp.einsum("ij,jk", a, b, optimize="greedy"), a @ b, "optimize")
    ints = rng.integers(-3, 3, (3, 4)).astype(np.int8) * 40
    _same(tnp.einsum("ij,kj->ik", ints, ints), np.einsum("ij,kj->ik", ints, ints), "int8 wraps")
    # Before: the diagonal multiplied by an identity mask, so an inf off the diagonal could make it NaN
    q = np.array([[1.0, np.inf, 2.0], [-np.inf, 3.0, np.nan], [0.0, 1.0, 4.0]])
    _same(ts.program(lambda t: (tnp.einsum("ii->i", t), tnp.einsum("ii", t)))(q), (np.diag(q), np.trace(q)), "inf")


def test_einsum_bad_subscripts_are_clean_errors(rng: np.random.Generator) -> None:
    a = ts.Spec((3, 4), ts.f64)
    cases = [
        ("ij,jk->ik", 2, "letter 'j' has sizes"), ("ij->ik", 1, "output letters k"), ("ij->ii", 1, "invalid output"),
        ("ijk", 1, "do not fit"), ("ij,jk", 1, "name 2 operands"), ("i->->j", 1, "at most one '->'"),
        ("i#j", 1, "not a letter"), ("i.j", 1, "not a letter"), ("ii->i", 1, "repeats"), ("ij->jij", 1, "invalid"),
    ]
    for spec, count, text in cases:
        with pytest.raises(ts.ShapeError, match=text) as info:
            ts.program(lambda *t, s=spec: tnp.einsum(s, *t)).stage(*[a] * count)
        assert "einsum" in str(info.value) and "test_fuzz_shaping.py:" in str(info.value)
    with pytest.raises(ts.DTypeError, match="einsum"):
        tnp.einsum("ij,jk", np.ones((2, 2)), np.ones((2, 2), np.int32))
    with pytest.raises(ts.ShapeError, match="sublist"):
        tnp.einsum(np.ones(2), [99])


# ------------------------------------------------------------------------------------------- bad inputs


def test_bad_arguments_raise_clean_errors() -> None:
    x = ts.Spec((2, 3, 4), ts.f64)
    cases: list[tuple[Callable[[Any], Any], type, str]] = [
        (lambda t: tnp.reshape(t, (5, -1)), ts.ShapeError, "cannot reshape"),
        (lambda t: tnp.reshape(t, (-1, -1)), ts.ShapeError, "one -1"),
        (lambda t: tnp.reshape(t, (2.0, 12)), TypeError, "reshape"),
        (lambda t: tnp.squeeze(t, 1), ts.ShapeError, "not 1"),
        (lambda t: tnp.squeeze(t, 3), ts.ShapeError, "out of range"),
        (lambda t: tnp.expand_dims(t, 4), ts.ShapeError, "out of range"),
        (lambda t: tnp.expand_dims(t, (0, 0)), ts.ShapeError, "repeated"),
        (lambda t: tnp.transpose(t, (0, 1)), ts.ShapeError, "permutation"),
        (lambda t: tnp.swapaxes(t, 0, 3), ts.ShapeError, "out of range"),
        (lambda t: tnp.moveaxis(t, (0, 1), (2,)), ts.ShapeError, "differ in length"),
        (lambda t: tnp.moveaxis(t, (0, 0), (1, 2)), ts.ShapeError, "repeated"),
        (lambda t: tnp.rollaxis(t, 0, 5), ts.ShapeError, "start 5"),
        (lambda t: tnp.broadcast_to(t, (3, 4)), ts.ShapeError, "lower-rank"),
        (lambda t: tnp.broadcast_to(t, (2, 5, 4)), ts.ShapeError, "cannot broadcast"),
        (lambda t: tnp.concatenate([t, t[0]]), ts.ShapeError, "agree"),
        (lambda t: tnp.concatenate([t, t], axis=3), ts.ShapeError, "out of range"),
        (lambda t: tnp.stack([t, t], axis=-5), ts.ShapeError, "out of range"),
        (lambda t: tnp.split(t, 3, axis=2), ts.ShapeError, "equal sections"),
        (lambda t: tnp.split(t, 0), ts.ShapeError, "positive"),
        (lambda t: tnp.vsplit(t[0, 0], 2), ts.ShapeError, "rank >= 2"),
        (lambda t: tnp.dsplit(t, 3), ts.ShapeError, "equal sections"),
        (lambda t: tnp.block([t, [t]]), ValueError, "depths"),
        (lambda t: tnp.tile(t, -1), ts.ShapeError, "non-negative"),
        (lambda t: tnp.repeat(t, [1, 2], axis=1), ts.ShapeError, "repeat counts"),
        (lambda t: tnp.repeat(t, 2, axis=3), ts.ShapeError, "out of range"),
        (lambda t: tnp.roll(t, (1, 2), axis=(0, 1, 2)), ts.ShapeError, "broadcast"),
        (lambda t: tnp.roll(t, 1, axis=-4), ts.ShapeError, "out of range"),
        (lambda t: tnp.flip(t, 3), ts.ShapeError, "out of range"),
        (lambda t: tnp.rot90(t, 1, (0, 0)), ts.ShapeError, "repeated"),
        (lambda t: tnp.rot90(t[0, 0]), ts.ShapeError, "rank >= 2"),
        (lambda t: tnp.resize(t, (-1, 2)), ts.ShapeError, "non-negative"),
        (lambda t: tnp.diagonal(t, 0, 1, 1), ts.ShapeError, "repeated"),
        (lambda t: tnp.trace(t, 0, 0, 3), ts.ShapeError, "out of range"),
        (lambda t: tnp.diag(t), ts.ShapeError, "1-D or 2-D"),
        (lambda t: tnp.tensordot(t, t, 4), ts.ShapeError, "axes=4"),
        (lambda t: tnp.tensordot(t, t, ((0,), (1,))), ts.ShapeError, "contracting"),
        (lambda t: tnp.meshgrid(t[0, 0], indexing="ab"), ts.ShapeError, "indexing"),
        (lambda t: tnp.broadcast_arrays(t, t[0, :, :2]), ts.ShapeError, "broadcast"),
        (lambda t: tnp.concatenate([t, tnp.astype(t, ts.f32)]), ts.DTypeError, "dtypes"),
    ]
    for fn, kind, text in cases:
        with pytest.raises(kind, match=text) as info:
            ts.program(fn).stage(x)
        assert "test_fuzz_shaping.py:" in str(info.value), str(info.value)


# ------------------------------------------------------------------------------------------- transforms


def _sample(m: Any, t: Any) -> tuple[Any, ...]:
    """A sample of the ops above, each differentiable in ``t`` (3, 4); ``m`` is numpy or tensorstage.numpy."""
    lp = m.linspace(t[0], t[1], 3, axis=1) if m is tnp else np.linspace(t[0], t[1], 3, axis=1)
    return (
        m.pad(t, ((2, 5), (3, 1)), "reflect", reflect_type="odd"), m.pad(t, 2, "symmetric"),
        m.pad(t, ((1, 0), (2, 2)), "mean", stat_length=2), m.pad(t, 3, "linear_ramp", end_values=((1, 2), (0, -1))),
        m.pad(t, ((0, 2), (1, 1)), "maximum"), m.pad(t, 2, "wrap"), m.pad(t, 1, "median"),
        m.roll(t, (1, -2), (0, 1)), m.tile(t, (2, 1, 2)), m.repeat(t, [1, 0, 3], axis=0), m.rot90(t, -1),
        m.einsum("ii->i", t[:, :3]), m.einsum("...i,...i->...", t, t), m.diagonal(t, 1), m.kron(t[:2, :2], t),
        m.moveaxis(t[None], (0, 2), (2, 0)), m.resize(t, (5, 3)), m.tensordot(t, t, ((0,), (0,))), lp,
    )


def _loss(m: Any, t: Any) -> Any:
    return sum(m.sum(m.sin(y) * (k + 1)) for k, y in enumerate(_sample(m, t)))


def test_grads_match_finite_differences(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4))
    got = np.asarray(ts.grad(lambda t: _loss(tnp, t))(x))
    eps = 1e-6
    fd = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[k] += eps
        lo[k] -= eps
        fd[k] = (_loss(np, hi) - _loss(np, lo)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-5)


def test_vmap_matches_loop(rng: np.random.Generator) -> None:
    xs = rng.standard_normal((3, 3, 4))
    outs = ts.vmap(lambda t: _sample(tnp, t))(xs)
    for b in range(3):
        want = _sample(np, xs[b])
        for k, (got, w) in enumerate(zip(outs, want)):
            _same(np.asarray(got)[b], w, ("vmap", k), tol=1e-10)
