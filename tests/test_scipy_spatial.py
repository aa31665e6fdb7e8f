"""tensorstage.scipy.spatial.transform (Rotation, Slerp) against scipy.spatial.transform in f64 on seeded random
rotations: every conversion both ways, Euler sequences extrinsic and intrinsic (Tait-Bryan and proper, radians
and degrees, gimbal lock), composition, application, inverse, mean, indexing, Slerp; as pytrees through programs,
vmap against the batched call, gradients against finite differences (and jax where installed), refusals."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SciRotation
from scipy.spatial.transform import Slerp as SciSlerp

import tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.scipy.spatial.transform import Rotation, Slerp

SEQS = ("xyz", "ZYX", "yzx", "XZY", "zxz", "YXY")  # extrinsic and intrinsic, Tait-Bryan and proper
FROM_SEQS = ("xyz", "ZYX", "zxz", "YXY")
TIMES = np.array([0.0, 1.0, 3.0, 4.5])
QUERIES = np.array([0.0, 0.3, 1.0, 2.2, 4.5])


def _conversions(cls: Any, slerp: Any, q: Any, v: Any, m: Any, rv: Any, mrp: Any, eul: Any, w: Any) -> dict[str, Any]:
    """Every conversion and operation, written once for tensorstage's classes and SciPy's."""
    r = cls.from_quat(q)
    one = cls.from_quat(q[0])
    out = {  # quaternions where their sign is SciPy's too (fewer equations to compile than matrices)
        "quat": r.as_quat(), "canonical_scalar_first": r.as_quat(canonical=True, scalar_first=True),
        "from_scalar_first": cls.from_quat(q, scalar_first=True).as_quat(),
        "matrix": r.as_matrix(), "rotvec": r.as_rotvec(), "rotvec_degrees": r.as_rotvec(degrees=True),
        "mrp": r.as_mrp(), "magnitude": r.magnitude(), "single_quat": one.as_quat(),
        "apply": r.apply(v), "apply_inverse": r.apply(v, inverse=True), "single_apply_many": one.apply(v),
        "many_apply_one": r.apply(v[0]), "inv": r.inv().as_quat(), "compose": (r * r[::-1]).as_quat(),
        "compose_single": (one * r).as_quat(), "index": r[1:3].as_quat(), "index_one": r[2].as_quat(),
        "from_matrix": cls.from_matrix(m).as_quat(), "from_rotvec": cls.from_rotvec(rv).as_quat(),
        "from_rotvec_degrees": cls.from_rotvec(rv * 40, degrees=True).as_quat(),
        "from_rotvec_tiny": cls.from_rotvec(rv * 1e-4).as_quat(), "rotvec_tiny": cls.from_rotvec(rv * 1e-4).as_rotvec(),
        "from_mrp": cls.from_mrp(mrp).as_quat(), "mean": r.mean().as_matrix(), "mean_weighted": r.mean(w).as_matrix(),
        "from_euler_1": cls.from_euler("y", eul[:, :1]).as_quat(),
        "from_euler_2": cls.from_euler("XZ", eul[:, :2], degrees=True).as_quat(),
        "from_euler_single": cls.from_euler("z", eul[0, 0]).as_quat(),
        "concatenate": cls.concatenate([one, r[1:3], r]).as_quat(),
        "slerp": slerp(TIMES, cls.from_quat(q[:4]))(QUERIES).as_quat(),
        "slerp_single": slerp(TIMES, cls.from_quat(q[:4]))(QUERIES[3]).as_quat(),
        "as_euler_degrees": r.as_euler("zxz", degrees=True),
        "from_euler_degrees": cls.from_euler("XYZ", eul * 50, degrees=True).as_quat(),
    }
    for seq in SEQS:
        out[f"as_euler_{seq}"] = r.as_euler(seq)
    for seq in FROM_SEQS:
        out[f"from_euler_{seq}"] = cls.from_euler(seq, eul).as_quat()
    return out


def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    q = rng.standard_normal((6, 4))
    m = SciRotation.from_quat(rng.standard_normal((6, 4))).as_matrix()
    return {"q": q, "v": rng.standard_normal((6, 3)), "m": m,
            "rv": rng.standard_normal((6, 3)), "mrp": 0.6 * rng.standard_normal((6, 3)),
            "eul": rng.standard_normal((6, 3)), "w": rng.uniform(0.5, 2.0, 6)}


def test_conversions_match_scipy(rng: np.random.Generator) -> None:
    x = _inputs(rng)
    got = ts.program(lambda *a: _conversions(Rotation, Slerp.init, *a))(*x.values())
    want = _conversions(SciRotation, SciSlerp, *x.values())
    for name, reference in want.items():
        result = np.asarray(got[name])
        assert result.shape == reference.shape and result.dtype == np.float64, name
        np.testing.assert_allclose(result, reference, rtol=1e-12, atol=1e-12, err_msg=name)


def test_gimbal_lock_and_single_precision() -> None:
    """At gimbal lock the third angle is zero and the first carries the rotation, as SciPy (angles compared
    modulo 2π: at ±π the wrap may land either side); float32 in, float32 out."""
    angles = np.array([[10.0, 90.0, 20.0], [10.0, -90.0, 20.0], [30.0, 0.0, 15.0], [10.0, 180.0, 20.0]])

    def locked(a: Any, a32: Any) -> Any:
        return {seq: Rotation.from_euler(seq, a[:2] if seq.lower()[0] != seq.lower()[2] else a[2:], degrees=True)
                .as_euler(seq, degrees=True) for seq in SEQS} | {"f32": Rotation.from_euler("xyz", a32).as_euler("xyz")}

    got = ts.program(locked)(angles, angles[:3, ::-1].astype(np.float32) / 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy's gimbal lock warning
        for seq in SEQS:
            rows = angles[:2] if seq.lower()[0] != seq.lower()[2] else angles[2:]
            want = SciRotation.from_euler(seq, rows, degrees=True).as_euler(seq, degrees=True)
            diff = (np.asarray(got[seq]) - want + 180) % 360 - 180
            np.testing.assert_allclose(diff, 0, atol=1e-9, err_msg=seq)
    assert got["f32"].dtype == np.float32
    np.testing.assert_allclose(got["f32"], angles[:3, ::-1] / 100, rtol=1e-5, atol=1e-6)


def test_pytrees_vmap_and_constructors(rng: np.random.Generator) -> None:
    """Rotations pass in and out of programs; vmap over single rotations equals the batched call."""
    q = rng.standard_normal((5, 4))
    v = rng.standard_normal((5, 3))

    @ts.program
    def run(r: Rotation, v: Any, key: Any) -> Any:
        def single(quat: Any, vec: Any) -> Any:
            return Rotation(quat).apply(vec) + Rotation(quat).as_euler("ZXY").sum()

        return {"rotation": r.inv(), "vmap": ts.vmap(single)(r.quat, v),
                "batched": r.apply(v) + r.as_euler("ZXY").sum(axis=-1, keepdims=True),
                "random": Rotation.random(key, 7, dtype=tnp.float64).quat, "random_one": Rotation.random(key).quat,
                "identity": Rotation.identity(3, dtype=tnp.float64).as_matrix()}

    out = run(Rotation.from_quat(q), v, ts.random.key(0))
    assert isinstance(out["rotation"], Rotation) and len(out["rotation"]) == 5
    np.testing.assert_allclose(np.asarray(out["rotation"].as_quat()), SciRotation.from_quat(q).inv().as_quat(),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(out["vmap"]), np.asarray(out["batched"]), rtol=1e-12, atol=1e-12)
    random = np.asarray(out["random"])
    assert random.shape == (7, 4) and random.dtype == np.float64 and np.asarray(out["random_one"]).shape == (4,)
    np.testing.assert_allclose(np.linalg.norm(random, axis=-1), 1, rtol=1e-12)
    assert len(np.unique(np.round(random, 6), axis=0)) == 7
    np.testing.assert_allclose(np.asarray(out["identity"]), np.broadcast_to(np.eye(3), (3, 3, 3)))
    one = Rotation.identity()
    assert one.single and one.quat.dtype == np.float32 and not Rotation.from_quat(q).single


def _composed(cls: Any, np_: Any) -> Any:
    """A scalar function of a (5, 3) array through rotation vectors, application, composition and MRPs, written
    for tensorstage and jax."""
    def loss(x: Any) -> Any:
        r = cls.from_rotvec(x)
        return np_.sum(r.apply(x) * x) + np_.sum((r * r[::-1]).as_mrp())

    return loss


def _euler(x: Any) -> Any:
    return tnp.sum(Rotation.from_quat(tnp.concatenate([x, tnp.ones_like(x[:, :1])], axis=-1)).as_euler("zyx") ** 2)


def test_gradients_match_finite_differences_and_jax(rng: np.random.Generator) -> None:
    x = rng.standard_normal((5, 3))
    t = rng.standard_normal((5, 3))
    eps = 1e-6
    losses = (_composed(Rotation, tnp), _euler)
    got = ts.program(lambda x, t: [(f(x + eps * t), f(x - eps * t), ts.grad(f)(x)) for f in losses])(x, t)
    for plus, minus, grad in got:
        assert float(np.sum(np.asarray(grad) * t)) == pytest.approx((float(plus) - float(minus)) / (2 * eps),
                                                                    rel=1e-6)
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.scipy.spatial.transform import Rotation as JaxRotation

    with jax.enable_x64(True):
        want = jax.jit(jax.grad(_composed(JaxRotation, jnp)))(x)
    np.testing.assert_allclose(np.asarray(got[0][2]), np.asarray(want), rtol=1e-10, atol=1e-12)


def test_refusals() -> None:
    q, one = ts.Spec((3, 4), np.float64), ts.Spec((4,), np.float64)
    cases: list[tuple[Any, Any, type[Exception], str]] = [
        (lambda a: Rotation.from_quat(a).as_euler("xy"), q, ValueError, "expected 3 axes"),
        (lambda a: Rotation.from_quat(a).as_euler("xYz"), q, ValueError, "['x', 'y', 'z'] or ['X', 'Y', 'Z']"),
        (lambda a: Rotation.from_quat(a).as_euler("xxz"), q, ValueError, "consecutive axes to be different"),
        (lambda a: Rotation.from_euler("xyzx", a), q, ValueError, "up to 3 characters"),
        (lambda a: Rotation.from_euler("xyz", a), q, ValueError, "match the number of axes"),
        (lambda a: Rotation.from_quat(a[:, :3]), q, ValueError, "shape (..., 4)"),
        (lambda a: Rotation.from_matrix(a), q, ValueError, "(..., 3, 3)"),
        (lambda a: Rotation.from_rotvec(a), q, ValueError, "shape (..., 3)"),
        (lambda a: Rotation.from_quat(a).apply(a), q, ValueError, "shape (..., 3)"),
        (lambda a: Rotation.from_quat(a)[0], one, TypeError, "not subscriptable"),
        (lambda a: len(Rotation.from_quat(a)), one, TypeError, "has no len()"),
        (lambda a: Rotation.from_quat(a).mean(tnp.ones(2, dtype=tnp.float64)), q, ValueError,
         "`weights` of shape (3,)"),
        (lambda a: Slerp.init(tnp.arange(3.0), Rotation.from_quat(a[:1])), q, ValueError, "at least 2 rotations"),
        (lambda a: Slerp.init(tnp.arange(2.0), Rotation.from_quat(a)), q, ValueError, "one per rotation (3)"),
        (lambda a: Slerp.init(tnp.arange(3.0), a), q, TypeError, "must be a `Rotation` instance"),
        (lambda a: Slerp.init(tnp.arange(3.0), Rotation.from_quat(a))(a), q, ValueError, "at most 1-dimensional"),
    ]
    for fn, spec, kind, text in cases:
        with pytest.raises(kind) as info:
            ts.program(fn).stage(spec)
        assert text in str(info.value) and "test_scipy_spatial.py:" in str(info.value), str(info.value)
