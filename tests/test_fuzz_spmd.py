"""Fuzzing pmap and the collectives (psum, pmean, pmax, pmin, all_gather, ppermute, axis_index) against NumPy, and
against jax.vmap(axis_name=...) where jax is installed.

Random families of collectives (tests/spmd_fuzz_cases.py: every dtype, scalars and empty arrays, random all_gather
axes tiled or not, random partial permutations) run under ``vmap(axis_name="i")`` (the batching rules), inside a
staged program, under a one-device ``pmap`` and, in ONE subprocess with ``TENSORSTAGE_CPU_DEVICES=4``, on four
devices; plus gradients and jvps vs finite differences, nested and tuple axis names, in_axes/out_axes variants,
sharded results fed back, and errors.

Deliberate differences from NumPy / jax:
- ``pmean`` of integers or bools is a DTypeError (jax returns a float mean); ``psum`` of bools is a DTypeError (jax
  sums them as ints). ``pmax``/``pmin`` of bools are logical or/and.
- Integer ``psum`` wraps around in the input dtype (NumPy's ``sum(dtype=...)``, not its default widening).
- ``psum``/``pmean`` of floats may differ from NumPy's float64 sum by rounding (the order of the additions differs
  between a pmap's all_reduce and a vmap's reduce_sum, and f16/bf16 round in their own precision).
- Collectives are per member (SPMD): the gradient of a member's ``pmean(loss)`` is its local gradient (psum's
  transpose is psum), as in jax's ``shard_map``; ties in ``pmax``/``pmin`` share the derivative (jax has no
  derivative for them).
- A tuple of axis names (``psum(x, ("i", "j"))``) is one flattened axis, outermost name first, for psum, pmean,
  pmax, pmin, all_gather and axis_index (ppermute takes one name); an empty tuple is refused.
- ``pmap`` runs on concrete arrays only (grad/jvp of a pmapped function is a TransformError: transform the
  per-device function instead); over a size-0 axis it is a TransformError.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.staging.errors import DTypeError, ShapeError, TransformError

import spmd_fuzz_cases as cases
from conftest import PLATFORM
from spmd_cases import device_checks, numerical_grad
from spmd_fuzz_cases import DTYPES, N, grad_fn, grad_loss_ref, grad_ref, member_loss

THIS_FILE = Path(__file__).name


# ---------------------------------------------------------------------------- random families, one device


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(np.dtype(d)))
def test_random_collectives_under_vmap_and_staged(dtype: Any) -> None:
    rng = np.random.default_rng(int(np.dtype(dtype).num) + 100)
    fn, xs, ops = cases.random_family(rng, dtype, N)
    mapped = ts.vmap(fn, axis_name="i")
    cases.verify_family(mapped(*xs), xs, ops, N, "vmap")
    cases.verify_family(ts.Program(mapped, check_annotations=False)(*xs), xs, ops, N, "program(vmap)")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(np.dtype(d)))
def test_random_collectives_on_a_one_device_pmap(dtype: Any) -> None:
    rng = np.random.default_rng(int(np.dtype(dtype).num) + 200)
    fn, xs, ops = cases.random_family(rng, dtype, 1)
    cases.verify_family(ts.pmap(fn, axis_name="i")(*xs), xs, ops, 1, "pmap")


def test_axis_of_size_zero_and_one_under_vmap() -> None:
    rng = np.random.default_rng(3)
    for n in (0, 1):
        fn, xs, ops = cases.random_family(rng, np.float32, n, ((2,), ()))
        ops = [op for op in ops if op[0] not in ("ppermute", "pmax", "pmin") or n]  # max over no members: none
        got = ts.vmap(lambda *xs: [cases.apply(op, xs) for op in ops], axis_name="i")(*xs)
        cases.verify_family(got, xs, ops, n, f"vmap over {n}")


# ----------------------------------------------------------------------------------------- gradients, jvp


def test_grads_through_collectives_match_finite_differences() -> None:
    """The total loss (summed over members) differentiated outside the vmap, and each member's share
    differentiated inside it (per-member semantics), both equal the finite-difference gradient."""
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((N, 3))
    cs = [rng.standard_normal(o.shape) for o in grad_ref(xs)]
    want = numerical_grad(lambda v: grad_loss_ref(v, cs), xs)

    def total(xs: Any, *cs: Any) -> Any:
        return tnp.sum(ts.vmap(member_loss, in_axes=(0, 0), axis_name="i")(xs, cs))

    np.testing.assert_allclose(np.asarray(ts.grad(total)(xs, *cs)), want, rtol=1e-6, atol=1e-7)
    inside = ts.vmap(lambda x, *c: ts.grad(member_loss)(x, c), axis_name="i")(xs, *cs)
    np.testing.assert_allclose(np.asarray(inside), want, rtol=1e-6, atol=1e-7)


def test_jvp_and_jacfwd_of_collectives_match_finite_differences() -> None:
    rng = np.random.default_rng(5)
    xs, t = rng.standard_normal((N, 3)), rng.standard_normal((N, 3))
    eps = 1e-6
    expected = [(hi - lo) / (2 * eps) for hi, lo in zip(grad_ref(xs + eps * t), grad_ref(xs - eps * t))]
    got = ts.vmap(lambda x, t: ts.jvp(grad_fn, (x,), (t,))[1], axis_name="i")(xs, t)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-6, atol=1e-7)
    jac = ts.jacfwd(lambda xs: ts.vmap(lambda x: grad_fn(x)[0], axis_name="i")(xs))(xs)
    fd = np.stack([(grad_ref(xs + eps * e)[0] - grad_ref(xs - eps * e)[0]) / (2 * eps)
                   for e in np.eye(xs.size).reshape(xs.size, *xs.shape)], axis=-1).reshape(*xs.shape, *xs.shape)
    np.testing.assert_allclose(np.asarray(jac), fd, rtol=1e-6, atol=1e-7)


def test_pmax_ties_share_the_derivative() -> None:
    xs = np.ones((N, 2))
    grads = ts.vmap(lambda x: ts.grad(lambda x: tnp.sum(ts.pmax(x, "i") * ts.axis_index("i").astype(x.dtype)))(x),
                    axis_name="i")(xs)
    # every member's output is the max; each of the N tied members gets 1/N of every output's weight
    np.testing.assert_allclose(np.asarray(grads), np.full((N, 2), sum(range(N)) / N), rtol=1e-12)


def test_one_device_pmap_of_grad_and_of_vmap() -> None:
    rng = np.random.default_rng(6)
    xs = rng.standard_normal((1, 3))
    cs = [rng.standard_normal(o.shape) for o in grad_ref(xs)]
    got = ts.pmap(lambda x, *c: ts.grad(member_loss)(x, c, 1), axis_name="i")(xs, *cs)
    want = numerical_grad(lambda v: grad_loss_ref(v, cs), xs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-7)
    x = rng.standard_normal((1, 3, 2))
    inner = lambda v: (ts.psum(v, ("i", "j")), ts.all_gather(v, ("i", "j")), ts.axis_index(("i", "j")))  # noqa: E731
    by_pmap = ts.pmap(ts.vmap(inner, axis_name="j"), axis_name="i")(x)
    by_vmap = ts.vmap(ts.vmap(inner, axis_name="j"), axis_name="i")(x)
    for a, b in zip(by_pmap, by_vmap):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


# ------------------------------------------------------------------------------ nested and tuple axis names


def test_tuple_axis_names_flatten_outermost_first() -> None:
    x = np.random.default_rng(7).standard_normal((2, 3, 4))
    run = lambda f: np.asarray(ts.vmap(ts.vmap(f, axis_name="j"), axis_name="i")(x))  # noqa: E731
    every = lambda v: np.broadcast_to(v, (2, 3, *v.shape))  # noqa: E731
    flat, flat_ji = x.reshape(6, 4), x.transpose(1, 0, 2).reshape(6, 4)
    np.testing.assert_allclose(run(lambda v: ts.psum(v, ("i", "j"))), every(x.sum((0, 1))), rtol=1e-12)
    np.testing.assert_allclose(run(lambda v: ts.pmean(v, ("j", "i"))), every(x.mean((0, 1))), rtol=1e-12)
    np.testing.assert_array_equal(run(lambda v: ts.pmin(v, ("j", "i"))), every(x.min((0, 1))))
    np.testing.assert_array_equal(run(lambda v: ts.axis_index(("j", "i"))), np.arange(6).reshape(3, 2).T)
    np.testing.assert_array_equal(run(lambda v: ts.all_gather(v, ("i", "j"))), every(flat))
    np.testing.assert_array_equal(run(lambda v: ts.all_gather(v, ("j", "i"), axis=-1)), every(flat_ji.T))
    np.testing.assert_array_equal(run(lambda v: ts.all_gather(v, ("i", "j"), tiled=True)), every(flat.reshape(-1)))
    rows = run(lambda v: ts.all_gather(v[None], ("j", "i"), axis=-2, tiled=True))
    np.testing.assert_array_equal(rows, every(flat_ji))


def test_inner_vmap_batches_collectives_over_the_outer_axis() -> None:
    """An inner vmap (named or not, any in_axes) re-binds a collective over the outer axis on its batched
    operand (the ``batch`` rules), and a shadowing name binds the innermost axis."""
    x = np.random.default_rng(8).standard_normal((4, 3, 2))
    perm = [(0, 1), (1, 3), (3, 0)]
    moved = np.zeros_like(x)
    for s, d in perm:
        moved[d] = x[s]
    outer = lambda f, **kw: np.asarray(ts.vmap(ts.vmap(f, **kw), axis_name="i")(x))  # noqa: E731
    np.testing.assert_array_equal(outer(lambda v: ts.ppermute(v, "i", perm), in_axes=1, out_axes=1), moved)
    np.testing.assert_array_equal(outer(lambda v: ts.pmax(v, "i"), axis_name="j", in_axes=-1, out_axes=-1),
                                  np.broadcast_to(x.max(0), x.shape))
    np.testing.assert_array_equal(outer(lambda v: ts.all_gather(v, "i", tiled=True), in_axes=1),
                                  np.broadcast_to(x.transpose(2, 0, 1).reshape(1, 2, 12), (4, 2, 12)))
    np.testing.assert_array_equal(outer(lambda v: v + ts.axis_index("i").astype(v.dtype), axis_name="j"),
                                  x + np.arange(4)[:, None, None])
    shadowed = outer(lambda v: ts.psum(v, "i"), axis_name="i")  # the inner "i" hides the outer one
    np.testing.assert_allclose(shadowed, np.broadcast_to(x.sum(1, keepdims=True), x.shape), rtol=1e-12)


def test_matches_jax_vmap_with_axis_names() -> None:
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):  # scoped: other tests compare with jax's f32 defaults
        _compare_with_jax(jax)


def _compare_with_jax(jax: Any) -> None:
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((3, 2, 4)), rng.standard_normal(2)
    ring = [(k, (k + 1) % 4) for k in range(4)]

    def body(m: Any, v: Any, w: Any) -> Any:  # m: the collectives' module (ts or jax.lax)
        return (m.psum(v, "i") * m.pmax(w, "i"), m.pmean(v * v, "j"), m.all_gather(v, "i", axis=1),
                m.all_gather(v, "j", tiled=True), m.ppermute(v, "i", ring), m.pmin(v, ("i", "j")),
                m.axis_index("i") * 10 + m.axis_index("j"))

    def nest(vmap: Callable[..., Any], m: Any) -> Any:
        inner = vmap(lambda v, w: body(m, v, w), in_axes=(-1, None), out_axes=-1, axis_name="i")
        return vmap(inner, in_axes=(0, None), axis_name="j")

    for a, b in zip(nest(ts.vmap, ts)(x, w), nest(jax.vmap, jax.lax)(x, w)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)

    # gradients through psum, all_gather and ppermute (jax has no pmax/pmin derivative)
    def member(m: Any, v: Any) -> Any:
        mixed = m.psum(v * v, "i") + m.all_gather(v, "i", axis=1).sum() + m.ppermute(v, "i", ring) * v
        return (mixed * mixed).sum()

    ours = ts.grad(lambda xs: tnp.sum(ts.vmap(lambda v: member(ts, v), axis_name="i")(xs)))(x[0].T)
    theirs = jax.grad(lambda xs: jax.vmap(lambda v: member(jax.lax, v), axis_name="i")(xs).sum())(x[0].T)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12)


# ----------------------------------------------------------------------------------------------- errors


def _raises(kind: type[BaseException], pattern: str, fn: Callable[[], Any], located: bool = True) -> None:
    with pytest.raises(kind) as err:
        fn()
    message = str(err.value)
    assert re.search(pattern, message, re.S), message
    if located:
        assert THIS_FILE in message, f"the message does not name the user's line: {message}"


def _under_vmap(f: Callable[[Any], Any]) -> Callable[[], Any]:
    return lambda: ts.vmap(f, axis_name="i")(np.ones((4, 3)))


COLLECTIVE_ERRORS: list[tuple[type[BaseException], str, Callable[[], Any]]] = [
    (TransformError, r"\[psum\] axis name 'j' is not bound.*'i' \(vmap, size 4\)",
     _under_vmap(lambda v: ts.psum(v, "j"))),
    (TransformError, r"\[all_gather\] axis name 'i' is not bound.*no named axis",
     lambda: ts.program(lambda v: ts.all_gather(v, "i"))(np.ones(3))),
    (TransformError, r"\[axis_index\] axis name 'i' is not bound",
     lambda: ts.vmap(lambda v: ts.axis_index("i"))(np.ones(3))),
    (DTypeError, r"pmean: needs a floating-point operand.*i32\[3\]",
     _under_vmap(lambda v: ts.pmean(v.astype(np.int32), "i"))),
    (DTypeError, r"psum: expects numeric operands, got bool\[3\]", _under_vmap(lambda v: ts.psum(v > 0, "i"))),
    (ShapeError, r"all_gather: axis 3 is out of range for f64\[3\]",
     _under_vmap(lambda v: ts.all_gather(v, "i", axis=3))),
    (ShapeError, r"all_gather: axis 0 is out of range for f64\[\].*scalar",
     _under_vmap(lambda v: ts.all_gather(v[0], "i", tiled=True))),
    (TypeError, r"all_gather: axis must be an int, got 0\.0", _under_vmap(lambda v: ts.all_gather(v, "i", axis=0.0))),
    (TypeError, r"all_gather: axis must be an int, got True", _under_vmap(lambda v: ts.all_gather(v, "i", axis=True))),
    (ShapeError, r"ppermute: permutation \[\(0, 4\)\] names members outside 0\.\.3",
     _under_vmap(lambda v: ts.ppermute(v, "i", [(0, 4)]))),
    (ShapeError, r"ppermute: .*repeats a source", _under_vmap(lambda v: ts.ppermute(v, "i", [(0, 1), (0, 2)]))),
    (TypeError, r"ppermute: a perm source must be an int, got 0\.5",
     _under_vmap(lambda v: ts.ppermute(v, "i", [(0.5, 1)]))),
    (TypeError, r"ppermute: every entry of perm must be a \(source, destination\) pair, got \(0,\)",
     _under_vmap(lambda v: ts.ppermute(v, "i", [(0,)]))),
    (TypeError, r"ppermute: perm must be a sequence", _under_vmap(lambda v: ts.ppermute(v, "i", None))),
    (TypeError, r"an axis name must be a string or a Dim class, got 3", _under_vmap(lambda v: ts.psum(v, 3))),
    (TypeError, r"an axis name must be a string or a Dim class, got \('i',\)",
     _under_vmap(lambda v: ts.ppermute(v, ("i",), []))),
    (ValueError, r"at least one axis name", _under_vmap(lambda v: ts.psum(v, ()))),
    (ValueError, r"repeat a name", _under_vmap(lambda v: ts.pmax(v, ("i", "i")))),
]


@pytest.mark.parametrize("index", range(len(COLLECTIVE_ERRORS)))
def test_collective_errors_name_the_op_and_the_line(index: int) -> None:
    _raises(*COLLECTIVE_ERRORS[index])


def test_ppermute_takes_numpy_int_pairs() -> None:
    got = _under_vmap(lambda v: ts.ppermute(v * ts.axis_index("i").astype(v.dtype), "i", np.array([[1, 0]])))()
    np.testing.assert_array_equal(np.asarray(got), [[1.0] * 3, [0] * 3, [0] * 3, [0] * 3])


ONE = np.ones((1, 3))
# pmap maps over the default platform's devices: one more than there are is too many. On the CPU the message says
# how to get more (TENSORSTAGE_CPU_DEVICES); a GPU count is what the machine has.
_AVAILABLE = len(ts.devices(PLATFORM))
_ARE = "s are" if _AVAILABLE != 1 else " is"
_TOO_FEW = (rf"only {_AVAILABLE} CPU device{_ARE} available.*TENSORSTAGE_CPU_DEVICES={_AVAILABLE + 1}"
            if PLATFORM == "cpu" else rf"only {_AVAILABLE} {PLATFORM} device{_ARE} available")
PMAP_ERRORS: list[tuple[type[BaseException], str, Callable[[], Any]]] = [
    (TransformError, r"\[pmap\] argument v has size 0 along its mapped axis 0: pmap needs at least one device",
     lambda: ts.pmap(lambda v: v)(np.zeros((0, 3)))),
    (TransformError, r"\[pmap\] in_axes\[0\] must be an axis or a prefix .*\{'b': \*\}",
     lambda: ts.pmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": ONE})),
    (TransformError, r"\[pmap\] out_axes must be an axis or a prefix",
     lambda: ts.pmap(lambda v: v, out_axes=(0, 0))(ONE)),
    (TransformError, r"\[pmap\] out_axes 5 is out of range", lambda: ts.pmap(lambda v: v, out_axes=5)(ONE)),
    (TransformError, r"\[pmap\] in_axes -3 is out of range for argument v",
     lambda: ts.pmap(lambda v: v, in_axes=-3)(ONE)),
    (TransformError, r"\[pmap\] in_axes has 2 entries but .* 1 positional",
     lambda: ts.pmap(lambda v: v, in_axes=(0, 0))(ONE)),
    (TransformError, r"argument s is a str, not an array", lambda: ts.pmap(lambda v, s: v)(ONE, "s")),
    (TransformError, _TOO_FEW, lambda: ts.pmap(lambda v: v)(np.ones((_AVAILABLE + 1, 3)))),
    (TransformError, r"\[pmap\] .* was called while a program is being staged",
     lambda: ts.grad(ts.pmap(lambda v: tnp.sum(v)))(ONE)),
]


@pytest.mark.parametrize("index", range(len(PMAP_ERRORS)))
def test_pmap_errors_name_the_problem_and_the_line(index: int) -> None:
    _raises(*PMAP_ERRORS[index])


def test_pmap_devices_are_checked_up_front() -> None:
    _raises(ValueError, r"devices= is empty", lambda: ts.pmap(lambda v: v, devices=[]), located=False)
    _raises(ValueError, r"names a device twice", lambda: ts.pmap(lambda v: v, devices=ts.devices() * 2), located=False)
    _raises(TypeError, r"devices= must hold ts.Device objects.*'cpu'", lambda: ts.pmap(lambda v: v, devices=["cpu"]),
            located=False)
    # an empty per-device block is fine
    assert ts.pmap(lambda v: ts.psum(v, "i"), axis_name="i")(np.zeros((1, 0, 2))).shape == (1, 0, 2)


# ------------------------------------------------------------------------------- four devices, subprocess


test_on_four_cpu_devices = device_checks(cases)
