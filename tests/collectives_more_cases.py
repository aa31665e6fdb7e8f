"""psum_scatter / all_to_all / pswapaxes / pshuffle cases shared by tests/test_collectives_more.py, and the checks
that need several CPU devices.

``OPS`` pairs each collective (per-member code) with its NumPy reference over the stacked members and the
per-member operand shape. Run as a script (``TENSORSTAGE_CPU_DEVICES=4 python tests/collectives_more_cases.py``)
it runs every ``check_*`` on four devices, each case set as ONE pmap program (compiles are the cost), and prints
the results line ``spmd_cases.run_checks`` prints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tensorstage as ts
from tensorstage import lax
from tensorstage import numpy as tnp

from spmd_cases import N, numerical_grad, per_member_grad, run_checks

SHUFFLE = [2, 0, 3, 1]  # member i gets member SHUFFLE[i]'s value


def np_psum_scatter(xs: np.ndarray, dim: int, tiled: bool) -> np.ndarray:
    """Member k's block k (or slice k) of the sum over members."""
    blocks = np.split(xs.sum(0), N, axis=dim)
    return np.stack([b if tiled else np.squeeze(b, dim) for b in blocks])


def np_all_to_all(xs: np.ndarray, split: int, concat: int, tiled: bool) -> np.ndarray:
    """Member k gets block k of every member m along ``split``: concatenated along ``concat`` (tiled), or with
    the unit split axis dropped and stacked along a new ``concat`` axis."""
    out = []
    for k in range(N):
        pieces = [np.split(xs[m], N, axis=split)[k] for m in range(N)]
        out.append(np.concatenate(pieces, concat) if tiled else np.stack([p.squeeze(split) for p in pieces], concat))
    return np.stack(out)


def _scatter(dim: int, tiled: bool) -> Callable[[Any], Any]:
    return lambda x: lax.psum_scatter(x, "i", scatter_dimension=dim, tiled=tiled)


def _a2a(split: int, concat: int, tiled: bool) -> Callable[[Any], Any]:
    return lambda x: lax.all_to_all(x, "i", split, concat, tiled=tiled)


# name -> (per-member function, NumPy reference of the stacked members, per-member operand shape)
OPS: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], np.ndarray], tuple[int, ...]]] = {
    "psum_scatter": (_scatter(0, False), lambda xs: np_psum_scatter(xs, 0, False), (N, 3)),
    "psum_scatter_dim1": (_scatter(1, False), lambda xs: np_psum_scatter(xs, 1, False), (2, N, 3)),
    "psum_scatter_tiled": (_scatter(0, True), lambda xs: np_psum_scatter(xs, 0, True), (2 * N, 3)),
    "psum_scatter_tiled_last": (_scatter(-1, True), lambda xs: np_psum_scatter(xs, -1, True), (3, 2 * N)),
    "psum_scatter_nonlinear": (
        lambda x: lax.psum_scatter(tnp.sin(x) * x, "i") * x[0],
        lambda xs: np_psum_scatter(np.sin(xs) * xs, 0, False) * xs[:, 0],
        (N, 3),
    ),
    "all_to_all_0_1": (_a2a(0, 1, False), lambda xs: np_all_to_all(xs, 0, 1, False), (N, 3)),
    "all_to_all_2_0": (_a2a(2, 0, False), lambda xs: np_all_to_all(xs, 2, 0, False), (2, 3, N)),
    "all_to_all_1_neg1": (_a2a(1, -1, False), lambda xs: np_all_to_all(xs, 1, 2, False), (2, N, 3)),
    "all_to_all_tiled_0_1": (_a2a(0, 1, True), lambda xs: np_all_to_all(xs, 0, 1, True), (2 * N, 3)),
    "all_to_all_tiled_2_0": (_a2a(2, 0, True), lambda xs: np_all_to_all(xs, 2, 0, True), (3, 2, 2 * N)),
    "all_to_all_tiled_1_1": (_a2a(1, 1, True), lambda xs: np_all_to_all(xs, 1, 1, True), (3, 2 * N)),
    "pswapaxes": (lambda x: lax.pswapaxes(x, "i", 1), lambda xs: np_all_to_all(xs, 1, 1, False), (3, N)),
    "pshuffle": (
        lambda x: lax.pshuffle(x * x, "i", SHUFFLE), lambda xs: (xs * xs)[SHUFFLE], (3,),
    ),
}


def data(name: str, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N, *OPS[name][2]))


def all_data(seed: int) -> dict[str, np.ndarray]:
    return {name: data(name, seed + i) for i, name in enumerate(OPS)}


def cotangents(inputs: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(OPS[name][1](x).shape) for name, x in inputs.items()}


def every_op(xs: dict[str, Any]) -> dict[str, Any]:
    """Every case on its own operand: one program for them all."""
    return {name: OPS[name][0](x) for name, x in xs.items()}


def every_grad(xs: dict[str, Any], cs: dict[str, Any]) -> dict[str, Any]:
    return {name: per_member_grad(OPS[name][0])(x, cs[name]) for name, x in xs.items()}


def reference_grads(inputs: dict[str, np.ndarray], cs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Finite differences of sum(ref(xs) * c): per-member semantics make that each member's gradient."""
    return {
        name: numerical_grad(lambda v, name=name: float(np.sum(OPS[name][1](v) * cs[name])), x)  # type: ignore[misc]
        for name, x in inputs.items()
    }


def assert_all_close(got: dict[str, Any], want: dict[str, np.ndarray], rtol: float, atol: float) -> None:
    for name, expected in want.items():
        value = np.asarray(got[name])
        assert value.shape == expected.shape, (name, value.shape, expected.shape)
        np.testing.assert_allclose(value, expected, rtol=rtol, atol=atol, err_msg=name)


def nested(x: Any) -> Any:
    """Collectives over the outer axis "i" inside an inner map over "j" (their ``batch`` rules), and over "j"."""
    a = lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True)  # x: (2, 2N) per (i, j) member
    b = lax.all_to_all(x, "i", 1, 0, tiled=True)
    c = lax.psum_scatter(x, "j", scatter_dimension=0)
    return a, b, c


def nested_reference(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``nested`` over xs of shape (N, 2, 2, 2N) (members i, j): the outer axis first."""
    a = np.stack([np_psum_scatter(xs[:, j], 1, True) for j in range(2)], 1)
    b = np.stack([np_all_to_all(xs[:, j], 1, 0, True) for j in range(2)], 1)
    c = np.stack([xs[i].sum(0) for i in range(N)])  # slice j of the sum over j: member (i, j) gets row j
    return a, b, c


# ------------------------------------------------------------------------------------ checks on 4 devices


def check_values_match_numpy() -> None:
    inputs = all_data(1)
    got = ts.pmap(every_op, axis_name="i")(inputs)
    assert_all_close(got, {name: OPS[name][1](x) for name, x in inputs.items()}, 1e-12, 1e-12)
    # pmap and vmap(axis_name) agree (the axis_batch rules vs the StableHLO collectives)
    assert_all_close(got, {k: np.asarray(v) for k, v in ts.vmap(every_op, axis_name="i")(inputs).items()}, 1e-12, 1e-12)


def check_grads_across_devices() -> None:
    inputs = all_data(2)
    cs = cotangents(inputs, 3)
    got = ts.pmap(every_grad, axis_name="i")(inputs, cs)
    assert_all_close(got, reference_grads(inputs, cs), 1e-6, 1e-7)


def check_float32_int_bool_and_empty() -> None:
    f32 = np.random.default_rng(4).standard_normal((N, 2 * N, 3)).astype(np.float32)
    ints = np.arange(N * N * 2, dtype=np.int32).reshape(N, N, 2)
    flags = ints % 3 == 0
    empty = np.zeros((N, N, 0), np.float32)

    def f(a: Any, i: Any, b: Any, e: Any) -> Any:
        return (lax.psum_scatter(a, "i", tiled=True), lax.psum_scatter(i, "i"), lax.all_to_all(b, "i", 0, 0),
                lax.psum_scatter(e, "i"), lax.all_to_all(e, "i", 0, 1))

    got = ts.pmap(f, axis_name="i")(f32, ints, flags, empty)
    np.testing.assert_allclose(np.asarray(got[0]), np_psum_scatter(f32.astype(np.float64), 0, True), rtol=1e-5)
    assert np.asarray(got[0]).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got[1]), np_psum_scatter(ints, 0, False))
    np.testing.assert_array_equal(np.asarray(got[2]), np_all_to_all(flags, 0, 0, False))
    assert np.asarray(got[3]).shape == (N, 0) and np.asarray(got[4]).shape == (N, 0, N)


def check_vmap_inside_pmap() -> None:
    xs = np.random.default_rng(5).standard_normal((N, 2, 2, 2 * N))
    got = ts.pmap(ts.vmap(nested, axis_name="j"), axis_name="i")(xs)
    for value, want in zip(got, nested_reference(xs)):
        np.testing.assert_allclose(np.asarray(value), want, rtol=1e-12)


def check_scatter_then_gather_is_psum() -> None:
    """``all_gather(psum_scatter(x))`` is ``psum(x)``, the decomposition jax documents, and its gradient too."""
    xs = np.random.default_rng(6).standard_normal((N, 2 * N, 3))

    def f(x: Any) -> Any:
        split = lax.all_gather(lax.psum_scatter(x, "i", tiled=True), "i", tiled=True)
        return split, ts.grad(lambda v: tnp.sum(tnp.sin(lax.psum_scatter(v, "i", tiled=True))))(x)

    total, grads = ts.pmap(f, axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(total), np.broadcast_to(xs.sum(0), xs.shape), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grads), np.broadcast_to(np.cos(xs.sum(0)), xs.shape), rtol=1e-12)


if __name__ == "__main__":
    run_checks(globals())
