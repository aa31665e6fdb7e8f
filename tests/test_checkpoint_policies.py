"""ts.checkpoint's policies and ts.checkpoint_name: every policy gives the plain function's values and gradients
(against central differences and jax.checkpoint with the same policy), recomputes only what it does not save
(equations counted in the backward pass), composes with nesting, scan, vmap, jvp and hessian, and lands between
saving nothing and saving everything in memory."""

from __future__ import annotations

from collections import Counter
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.checkpoint_policies import CheckpointPolicy
from tensorstage.staging.ir import Aval
from tensorstage.staging.primitive import Primitive

cp = ts.checkpoint_policies
# JAX's policies, by name and arguments: the same policy is built from ts.checkpoint_policies and from
# jax.checkpoint_policies.
POLICIES: dict[str, tuple[str, tuple[Any, ...]]] = {
    "nothing": ("nothing_saveable", ()),
    "everything": ("everything_saveable", ()),
    "dots": ("dots_saveable", ()),
    "dots_no_batch": ("dots_with_no_batch_dims_saveable", ()),
    "only_hidden": ("save_only_these_names", ("hidden",)),
    "names_but_hidden": ("save_any_names_but_these", ("hidden",)),
    "except_scores": ("save_anything_except_these_names", ("scores",)),
}


def _policy(namespace: Any, label: str) -> Any:
    if label == "both":
        return namespace.save_from_both_policies(
            namespace.dots_with_no_batch_dims_saveable, namespace.save_only_these_names("scores")
        )
    name, args = POLICIES[label]
    found = getattr(namespace, name)
    return found(*args) if args else found


LABELS = [*POLICIES, "both"]


def _identity_tag(x: Any, name: str) -> Any:
    return x


def _layer(x: Any, w1: Any, w2: Any, xp: ModuleType = tnp, tag: Any = ts.checkpoint_name) -> Any:
    """Products with batch dims (attention-like scores) and without (projections), two of them tagged."""
    h = tag(xp.tanh(x @ w1), "hidden")
    s = tag(xp.einsum("btd,bsd->bts", x, x), "scores")
    return xp.sin(h @ w2) * (xp.tanh(s) @ x)


def _args(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return rng.standard_normal((2, 3, 4)) * 0.5, rng.standard_normal((4, 5)) * 0.5, rng.standard_normal((5, 4)) * 0.5


def _loss(f: Any) -> Any:
    return lambda x, w1, w2: tnp.sum(f(x, w1, w2) ** 2)


def test_every_policy_gives_the_plain_gradient_finite_differences_and_jax(rng: np.random.Generator) -> None:
    args = _args(rng)
    variants = [_layer, *(ts.checkpoint(_layer, policy=_policy(cp, label)) for label in LABELS)]
    # One program: the value and gradient of the plain function and of every checkpointed variant.
    run = ts.program(lambda *a: [ts.value_and_grad(_loss(f), argnums=(0, 1, 2))(*a) for f in variants])
    (value, plain), *checkpointed = run(*args)
    reference = float(np.sum(_layer(*args, xp=np, tag=_identity_tag) ** 2))
    assert float(np.asarray(value)) == pytest.approx(reference, rel=1e-13)
    for label, (v, grads) in zip(LABELS, checkpointed):
        assert float(np.asarray(v)) == pytest.approx(reference, rel=1e-13), label
        for g, want in zip(grads, plain):
            np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-12, atol=1e-13, err_msg=label)
    # The plain gradient against central differences along a random direction per argument.
    eps = 1e-6
    for k, g in enumerate(plain):
        t = rng.standard_normal(args[k].shape)
        moved = [[*args], [*args]]
        moved[0][k], moved[1][k] = args[k] + eps * t, args[k] - eps * t
        fd = (np.sum(_layer(*moved[0], xp=np, tag=_identity_tag) ** 2)
              - np.sum(_layer(*moved[1], xp=np, tag=_identity_tag) ** 2)) / (2 * eps)
        assert float(np.sum(np.asarray(g) * t)) == pytest.approx(fd, rel=1e-7, abs=1e-9)
    try:
        import jax
        import jax.numpy as jnp
        from jax.ad_checkpoint import checkpoint_name
    except ImportError:
        return
    with jax.enable_x64(True):  # a scope: jax's global setting is left to the other tests
        for label, (_, grads) in zip(LABELS, checkpointed):
            f = jax.checkpoint(lambda *a: _layer(*a, xp=jnp, tag=checkpoint_name),
                               policy=_policy(jax.checkpoint_policies, label))
            want = jax.grad(lambda *a: jnp.sum(f(*a) ** 2), argnums=(0, 1, 2))(*args)
            for g, w in zip(grads, want):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-13, err_msg=label)


SPECS = [ts.Spec((2, 3, 4), np.float64), ts.Spec((4, 5), np.float64), ts.Spec((5, 4), np.float64)]


def _backward(f: Any) -> Counter[str]:
    """The primitives of the gradient graph after the barrier: the recomputation and the backward sweep."""
    graph = ts.grad(_loss(f), argnums=(0, 1, 2)).stage(*SPECS).graph
    names = [e.primitive.name for e in graph.eqns]
    return Counter(names[names.index("optimization_barrier") + 1 :])


# Per policy: the forward products recomputed in the backward pass (of 4: x @ w1 and h @ w2 without batch dims,
# the scores and tanh(s) @ x with), and the tanh recomputed (of 2).
RECOMPUTED = {
    "nothing": (4, 2), "everything": (0, 0), "dots": (0, 2), "dots_no_batch": (2, 2),
    "only_hidden": (3, 1),  # the tagged tanh and its product are the residual; tanh's VJP reads it
    "names_but_hidden": (3, 2), "except_scores": (0, 0), "both": (1, 2),
}


def test_saved_values_are_not_recomputed() -> None:
    vjp_products = 8  # each product's two cotangent products, which every variant computes
    for label in LABELS:
        counts = _backward(ts.checkpoint(_layer, policy=_policy(cp, label)))
        assert (counts["dot_general"] - vjp_products, counts["tanh"]) == RECOMPUTED[label], (label, counts)
    # Saving everything leaves no forward work at all: no sin (cos is sin's VJP), no tag.
    everything = _backward(ts.checkpoint(_layer, policy=cp.everything_saveable))
    assert everything["sin"] == everything["checkpoint_name"] == 0 and everything["cos"] == 1
    assert sum(everything.values()) < sum(_backward(ts.checkpoint(_layer, policy=cp.dots_saveable)).values())
    # A policy as a plain typed function: save what tanh computes.
    def tanh_saveable(prim: Primitive, /, *avals: Aval, **params: Any) -> bool:
        return prim.name == "tanh" and all(a.dtype == np.float64 for a in avals)

    typed: CheckpointPolicy = tanh_saveable
    counts = _backward(ts.checkpoint(_layer, policy=typed))
    assert counts["tanh"] == 0 and counts["dot_general"] - vjp_products == 2  # h @ w2 and tanh(s) @ x


def test_transforms_compose_with_every_policy(rng: np.random.Generator) -> None:
    x, w1, w2 = _args(rng)

    def transforms(ck: Any) -> Any:
        f = ck(_layer)

        def nested(a: Any, b: Any, c: Any) -> Any:
            return tnp.sum(ck(lambda a, b, c: _layer(f(a, b, c), b, c))(a, b, c) ** 2)

        def scanned(a: Any, b: Any, c: Any) -> Any:  # the checkpoint around the scan body
            y, _ = ts.scan(lambda carry, w: (f(carry, w, c), None), a, tnp.stack([b, b * 0.5]))
            return tnp.sum(y)

        per_example = ts.vmap(ts.grad(lambda a, b: tnp.sum(f(a[None], b, w2) ** 2), argnums=1), in_axes=(0, None))
        return [
            *ts.grad(nested, argnums=(0, 1, 2))(x, w1, w2),
            *ts.grad(scanned, argnums=(0, 1, 2))(x, w1, w2),
            per_example(x, w1),
            ts.jvp(lambda a, b: f(a, b, w2), (x, w1), (x, w1))[1],
            ts.hessian(lambda b: tnp.sum(f(x, b, w2) ** 2))(w1),
        ]

    checkpoints = [lambda g, p=_policy(cp, label): ts.checkpoint(g, policy=p) for label in LABELS]
    plain, *others = ts.program(lambda: [transforms(ck) for ck in [lambda g: g, *checkpoints]])()
    for label, results in zip(LABELS, others):
        for got, want in zip(results, plain):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12, err_msg=label)


def test_scan_over_layers_with_dots_saveable_stores_between_nothing_and_everything() -> None:
    depth, batch, width = 8, 256, 512

    def block(x: Any, w: Any) -> Any:
        h = x @ w[0]
        return tnp.tanh(tnp.sin(h) * h) @ w[1]

    def temporaries(policy: CheckpointPolicy) -> int:
        def loss(x: Any, ws: Any) -> Any:
            y, _ = ts.scan(lambda c, w: (ts.checkpoint(block, policy=policy)(c, w), None), x, ws)
            return tnp.sum(y)

        specs = (ts.Spec((batch, width), np.float32), ts.Spec((depth, 2, width, width), np.float32))
        staged = ts.grad(loss, argnums=(0, 1)).stage(*specs)
        return int(staged.compile().memory_analysis().temp_size_in_bytes)

    policies = (cp.nothing_saveable, cp.dots_saveable, cp.everything_saveable)
    nothing, dots, everything = (temporaries(p) for p in policies)
    # Per layer (0.5 MiB per value): nothing keeps the input; dots also both products; everything, every value.
    print(f"temp MiB: nothing {nothing / 2**20}, dots {dots / 2**20}, everything {everything / 2**20}")
    assert nothing < dots < everything, (nothing, dots, everything)
    # At least one saved product per layer but the last, whose backward step comes first: jaxlib 0.11.2's buffer
    # assignment holds that one no longer than the unpolicied run does (0.10.2 keeps all eight).
    assert dots - nothing >= (depth - 1) * batch * width * 4


def test_checkpoint_name_is_the_identity_under_every_transform(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 4))
    tree = {"a": np.float32(2.0), "b": [x, 3]}
    out = ts.checkpoint_name(tree, "t")  # outside programs: the values themselves
    assert out["b"][0] is x and out["b"][1] == 3 and out["a"] == tree["a"]
    assert ts.ad_checkpoint.checkpoint_name is ts.checkpoint_name

    def f(v: Any) -> Any:
        tagged = ts.checkpoint_name({"v": v, "k": 3}, "v")
        return tnp.sum(tnp.sin(tagged["v"]) * tagged["k"])

    staged = ts.program(lambda v: (f(v), ts.grad(f)(v), ts.vmap(ts.grad(f))(v), ts.jvp(f, (v,), (v,))[1])).stage(x)
    assert "checkpoint_name[name='v']" in str(staged)
    assert "checkpoint_name" not in staged.stablehlo()  # no op: the tag is for policies only
    value, grad, per_row, tangent = staged.compile()(x)
    np.testing.assert_allclose(np.asarray(value), 3 * np.sum(np.sin(x)), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(grad), 3 * np.cos(x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(per_row), 3 * np.cos(x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(tangent), 3 * np.sum(np.cos(x) * x), rtol=1e-13)
    # The tag survives vmap (batched values keep their name, for a policy applied after it).
    batched = ts.vmap(lambda v: ts.checkpoint_name(v * 2, "row")).stage(ts.Spec((3, 4), np.float64))
    assert "checkpoint_name[name='row']" in str(batched)


def test_policy_names_and_reprs() -> None:
    assert cp.checkpoint_dots is cp.dots_saveable
    assert cp.checkpoint_dots_with_no_batch_dims is cp.dots_with_no_batch_dims_saveable
    assert ts.remat is ts.checkpoint is ts.ad_checkpoint.checkpoint is ts.ad_checkpoint.remat
    assert ts.ad_checkpoint.checkpoint_policies is cp
    assert repr(cp.save_only_these_names("b", "a")) == "save_only_these_names('a', 'b')"
    staged = ts.value_and_grad(lambda x: tnp.sum(ts.checkpoint(tnp.sin, policy=cp.dots_saveable)(x))).stage(SPECS[1])
    assert "policy=dots_saveable" in str(staged)
    assert "optimization_barrier" in staged.stablehlo("gpu")  # lowers the same for GPUs (no compile here)


# Offload policies move residuals to host memory, which tensorstage's compiled programs cannot address; taking
# them as plain saving would keep on the device what the caller meant to move off it.
ABSENT = {"offload_dot_with_no_batch_dims": "host offload", "save_and_offload_only_these_names": "host offload"}


def test_bad_policies_and_names_raise_clear_errors() -> None:
    for name, reason in ABSENT.items():
        with pytest.raises(AttributeError, match=reason):
            getattr(cp, name)
    with pytest.raises(TypeError, match="policy must be a callable"):
        ts.checkpoint(tnp.sin, policy="dots_saveable")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="names are strings"):
        cp.save_only_these_names(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a policy is a callable"):
        cp.save_from_both_policies(cp.dots_saveable, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="the name must be a string"):
        ts.program(lambda v: ts.checkpoint_name(v, 3))(np.ones(2))  # type: ignore[arg-type]
    offload_like: Any = lambda prim, *avals, **params: "offload"  # noqa: E731 - a JAX offload verdict
    with pytest.raises(TypeError, match=r"returned 'offload' for sin .*test_checkpoint_policies.py"):
        ts.grad(lambda v: tnp.sum(ts.checkpoint(tnp.sin, policy=offload_like)(v)))(np.ones(2))
    both = cp.save_from_both_policies(cp.dots_saveable, offload_like)
    with pytest.raises(TypeError, match=r"save_from_both_policies\(dots_saveable, .*returned 'offload' for sin"):
        ts.grad(lambda v: tnp.sum(ts.checkpoint(tnp.sin, policy=both)(v)))(np.ones(2))
    with pytest.raises(ValueError, match="static_argnums"):
        ts.checkpoint(lambda a, b: a, static_argnums=2)


def test_static_argnums(rng: np.random.Generator) -> None:
    x = rng.standard_normal(4)

    def power(v: Any, n: int, table: np.ndarray, xp: ModuleType = tnp) -> Any:
        for _ in range(n):  # a Python loop: ``n`` must be a Python int while staging
            v = xp.sin(v) * table[: v.shape[0]]
        return xp.sum(v)

    table = rng.standard_normal(6)  # static: a NumPy array sliced by Python ints
    f = ts.checkpoint(power, static_argnums=(1, -2), policy=cp.dots_saveable)
    g = ts.grad(lambda v: f(v, 2, table))(x)
    fd = np.array([(power(x + 1e-6 * e, 2, table, np) - power(x - 1e-6 * e, 2, table, np)) / 2e-6 for e in np.eye(4)])
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-7, atol=1e-9)
