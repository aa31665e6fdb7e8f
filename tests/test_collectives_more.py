"""psum_scatter, all_to_all, pswapaxes and pshuffle: values, derivatives, batching rules and errors.

The registry tests list these collectives as covered here. They run
- in this process through ``vmap(f, axis_name="i")`` (their ``axis_batch`` rules), eager and staged, against
  NumPy references and jax's own ``vmap(axis_name)`` where jax is installed;
- on four CPU devices in a subprocess (``tests/collectives_more_cases.py``): the StableHLO ``reduce_scatter`` and
  ``all_to_all``, gradients across devices, and the ``batch`` rules under ``pmap(vmap(...))``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import lax
from tensorstage import numpy as tnp
from tensorstage.staging.errors import DTypeError, ShapeError

import collectives_more_cases as cases
import spmd_cases
from collectives_more_cases import N, OPS, all_data, cotangents, data, every_op, nested, nested_reference

THIS_FILE = Path(__file__).name


# ------------------------------------------------------------------------------- under vmap(axis_name), in here


@pytest.mark.parametrize("name", sorted(OPS))
def test_vmap_axis_name_matches_numpy(name: str) -> None:
    fn, ref, _ = OPS[name]
    xs = data(name, 11)
    got = np.asarray(ts.vmap(fn, axis_name="i")(xs))
    assert got.shape == ref(xs).shape
    np.testing.assert_allclose(got, ref(xs), rtol=1e-12, atol=1e-12)


def test_staged_program_matches_numpy() -> None:
    inputs = all_data(12)
    got = ts.program(ts.vmap(every_op, axis_name="i"))(inputs)
    cases.assert_all_close(got, {name: OPS[name][1](x) for name, x in inputs.items()}, 1e-12, 1e-12)


def test_grads_match_finite_differences() -> None:
    inputs = all_data(13)
    cs = cotangents(inputs, 14)
    got = ts.program(ts.vmap(cases.every_grad, axis_name="i"))(inputs, cs)
    cases.assert_all_close(got, cases.reference_grads(inputs, cs), 1e-6, 1e-7)


def test_jvp_matches_finite_differences() -> None:
    inputs, tangents = all_data(15), all_data(16)
    got = ts.program(ts.vmap(lambda x, t: ts.jvp(every_op, (x,), (t,))[1], axis_name="i"))(inputs, tangents)
    eps = 1e-6
    want = {
        name: (OPS[name][1](x + eps * tangents[name]) - OPS[name][1](x - eps * tangents[name])) / (2 * eps)
        for name, x in inputs.items()
    }
    cases.assert_all_close(got, want, 1e-6, 1e-7)


def test_transposes_are_all_gather_and_the_swapped_all_to_all() -> None:
    """The VJP of psum_scatter is exactly an all_gather of the cotangent, and all_to_all's is all_to_all with
    split and concat swapped (linear maps: gradient = transpose applied to the cotangent)."""
    rng = np.random.default_rng(17)
    xs, cs = rng.standard_normal((N, 3, 2 * N)), rng.standard_normal((N, 3, 2))
    grad = ts.vmap(cases.per_member_grad(lambda x: lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True)),
                   axis_name="i")(xs, cs)
    gathered = ts.vmap(lambda c: lax.all_gather(c, "i", axis=1, tiled=True), axis_name="i")(cs)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(gathered), rtol=1e-12)
    xs, cs = rng.standard_normal((N, 2 * N, 3)), rng.standard_normal((N, 2, 3 * N))
    grad = ts.vmap(cases.per_member_grad(lambda x: lax.all_to_all(x, "i", 0, 1, tiled=True)), axis_name="i")(xs, cs)
    back = ts.vmap(lambda c: lax.all_to_all(c, "i", 1, 0, tiled=True), axis_name="i")(cs)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(back), rtol=1e-12)


def test_unbatched_operand_under_vmap() -> None:
    """An operand every member shares (in_axes=None): psum_scatter scales it, all_to_all hands out its blocks."""
    w = np.random.default_rng(18).standard_normal((N, 3))
    xs = np.zeros((N, 1))
    got = ts.vmap(lambda x, w: (lax.psum_scatter(w, "i"), lax.all_to_all(w, "i", 0, 1), lax.pswapaxes(w, "i", 0)),
                  in_axes=(0, None), axis_name="i")(xs, w)
    stacked = np.broadcast_to(w, (N, N, 3))
    np.testing.assert_allclose(np.asarray(got[0]), N * w, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got[1]), cases.np_all_to_all(stacked, 0, 1, False), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got[2]), cases.np_all_to_all(stacked, 0, 0, False), rtol=1e-12)


def test_nested_vmaps_use_the_batch_and_axis_batch_rules() -> None:
    xs = np.random.default_rng(19).standard_normal((N, 2, 2, 2 * N))
    got = ts.vmap(ts.vmap(nested, axis_name="j"), axis_name="i")(xs)
    for value, want in zip(got, nested_reference(xs)):
        np.testing.assert_allclose(np.asarray(value), want, rtol=1e-12)
    # the walked axis batched at a position other than 0 (in_axes=1 of the inner vmap)
    moved = np.moveaxis(xs, 1, 2)  # (N, 2, 2, 2N) with j now at axis 2
    got = ts.vmap(ts.vmap(nested, in_axes=1, axis_name="j"), axis_name="i")(moved)
    for value, want in zip(got, nested_reference(xs)):
        np.testing.assert_allclose(np.asarray(value), want, rtol=1e-12)


def test_psum_scatter_over_two_axes_flattens_them() -> None:
    """Member (i, j) of 2 x 3 members gets block i * 3 + j of the total, as jax orders a tuple of names."""
    xs = np.random.default_rng(20).standard_normal((2, 3, 12, 2))
    for tiled, per in ((True, xs), (False, xs[:, :, :6])):
        f = lambda x: lax.psum_scatter(x, ("i", "j"), tiled=tiled)  # noqa: E731
        got = np.asarray(ts.vmap(ts.vmap(f, axis_name="j"), axis_name="i")(per))
        blocks = np.split(per.sum((0, 1)), 6)
        want = np.stack([np.stack([blocks[i * 3 + j] if tiled else blocks[i * 3 + j][0] for j in range(3)])
                         for i in range(2)])
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_integer_and_bool_values() -> None:
    ints = np.arange(N * 2 * N, dtype=np.int32).reshape(N, 2 * N)
    got = ts.vmap(lambda x: lax.psum_scatter(x, "i", tiled=True), axis_name="i")(ints)
    assert np.asarray(got).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), cases.np_psum_scatter(ints, 0, True))
    flags = ints.reshape(N, N, 2) % 3 == 0
    got = ts.vmap(lambda x: lax.all_to_all(x, "i", 0, 1), axis_name="i")(flags)
    np.testing.assert_array_equal(np.asarray(got), cases.np_all_to_all(flags, 0, 1, False))


@pytest.mark.parametrize("tiled", [False, True])
def test_matches_jax(tiled: bool) -> None:
    jax = pytest.importorskip("jax")
    from jax import lax as jlax

    rng = np.random.default_rng(21 + tiled)
    xs = rng.standard_normal((N, 2, N * (1 + tiled), 3)).astype(np.float32)
    for split, concat in ((1, 0), (0, 2), (1, 1)):
        shaped = np.moveaxis(xs, 2, split + 1)
        want = jax.vmap(lambda x: jlax.all_to_all(x, "i", split, concat, tiled=tiled), axis_name="i")(shaped)
        got = ts.vmap(lambda x: lax.all_to_all(x, "i", split, concat, tiled=tiled), axis_name="i")(shaped)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, err_msg=f"{split}, {concat}")
    want = jax.vmap(lambda x: jlax.psum_scatter(x, "i", scatter_dimension=1, tiled=tiled), axis_name="i")(xs)
    got = ts.vmap(lambda x: lax.psum_scatter(x, "i", scatter_dimension=1, tiled=tiled), axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    want = jax.vmap(lambda x: jlax.pshuffle(x, "i", cases.SHUFFLE), axis_name="i")(xs)
    np.testing.assert_allclose(np.asarray(ts.vmap(lambda x: lax.pshuffle(x, "i", cases.SHUFFLE), axis_name="i")(xs)),
                               np.asarray(want))


# ------------------------------------------------------------------------------------------------ errors


def _vmapped(fn: Any, shape: tuple[int, ...], dtype: Any = np.float32) -> Any:
    return ts.vmap(fn, axis_name="i")(np.ones((N, *shape), dtype))


@pytest.mark.parametrize(
    "fn, shape, message",
    [
        (lambda x: lax.psum_scatter(x, "i"), (3, 2), r"psum_scatter: scatter_dimension 0 of f32\[3, 2\] has size 3, "
         r"but axis 'i' has size 4"),
        (lambda x: lax.psum_scatter(x, "i", tiled=True), (6,), r"psum_scatter: .*size 6, which the size 4 of axis "
         r"'i' does not divide"),
        (lambda x: lax.psum_scatter(x, "i", scatter_dimension=2), (4, 4), r"psum_scatter: scatter_dimension 2 is out "
         r"of range"),
        (lambda x: lax.psum_scatter(x, "i"), (), r"psum_scatter: scatter_dimension 0 is out of range"),
        (lambda x: lax.psum_scatter(x, ("i", "i2")), (4,), r"psum_scatter: .*size 4, but axis \('i', 'i2'\) has "
         r"size 8"),
        (lambda x: lax.all_to_all(x, "i", 0, 1), (3, 2), r"all_to_all: split_axis 0 of .* has size 3, but axis 'i'"),
        (lambda x: lax.all_to_all(x, "i", 1, 0, tiled=True), (4, 6), r"all_to_all: split_axis 1 .*size 6, which the "
         r"size 4"),
        (lambda x: lax.all_to_all(x, "i", 0, 2), (4, 2), r"all_to_all: concat_axis 2 is out of range"),
        (lambda x: lax.all_to_all(x, "i", -3, 0), (4, 2), r"all_to_all: split_axis -3 is out of range"),
        (lambda x: lax.pswapaxes(x, "i", 1), (4, 3), r"all_to_all: split_axis 1 of .* has size 3"),
    ],
)
def test_shape_errors_name_the_op_shapes_and_line(fn: Any, shape: tuple[int, ...], message: str) -> None:
    def run() -> Any:
        if "i2" in message:  # a second axis of size 2 around the first
            return ts.vmap(ts.vmap(fn, axis_name="i"), axis_name="i2")(np.ones((2, N, *shape), np.float32))
        return _vmapped(fn, shape)

    with pytest.raises(ShapeError, match=message) as err:
        run()
    assert THIS_FILE in str(err.value), str(err.value)


def test_other_errors() -> None:
    with pytest.raises(DTypeError, match="psum_scatter"):
        _vmapped(lambda x: lax.psum_scatter(x, "i"), (N,), np.bool_)
    with pytest.raises(TypeError, match="all_to_all: split_axis must be an int"):
        _vmapped(lambda x: lax.all_to_all(x, "i", 0.0, 1), (N, 2))
    with pytest.raises(TypeError, match="an axis name must be a string"):
        _vmapped(lambda x: lax.all_to_all(x, ("i",), 0, 1), (N, 2))  # type: ignore[arg-type]
    for perm in ([0, 1, 2], [0, 1, 2, 2], [0, 1, 2, 4]):
        with pytest.raises(ValueError, match=r"pshuffle: perm must list every member 0..3 of axis 'i' once") as err:
            _vmapped(lambda x: lax.pshuffle(x, "i", perm), (2,))
        assert THIS_FILE in str(err.value)
    with pytest.raises(TypeError, match="pshuffle: a perm entry must be an int"):
        _vmapped(lambda x: lax.pshuffle(x, "i", [1.0, 0, 2, 3]), (2,))  # type: ignore[list-item]


def test_the_public_names() -> None:
    assert {"psum_scatter", "all_to_all", "pswapaxes", "pshuffle"} <= set(lax.__all__)
    got = ts.vmap(lambda x: lax.psum_scatter({"a": x, "b": [x * 2]}, "i"), axis_name="i")(np.eye(N))
    np.testing.assert_allclose(np.asarray(got["b"][0]), 2 * np.ones((N,)), rtol=1e-12)


def test_lowering_text() -> None:
    """One-device pmap: the module holds the collectives themselves, with the whole axis as the replica group."""
    f = lambda x: (lax.psum_scatter(x, "i"), lax.all_to_all(x, "i", 0, 1, tiled=True))  # noqa: E731
    text = ts.pmap(f, axis_name="i").stablehlo(np.ones((1, 1, 3), np.float32))
    assert '"stablehlo.reduce_scatter"' in text and "scatter_dimension = 0 : i64" in text
    assert '"stablehlo.all_to_all"' in text and "split_count = 1 : i64" in text
    assert text.count("replica_groups = dense<[[0]]> : tensor<1x1xi64>") == 2
    got = ts.pmap(f, axis_name="i")(np.arange(3.0).reshape(1, 1, 3))
    np.testing.assert_allclose(np.asarray(got[0]), [[0.0, 1.0, 2.0]])


# ------------------------------------------------------------------------------- four devices, subprocess


test_on_four_cpu_devices = spmd_cases.device_checks(cases)
