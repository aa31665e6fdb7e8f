"""``tensorstage.scipy.spatial.transform``: JAX's ``jax.scipy.spatial.transform`` — ``Rotation`` (3-D rotations
held as unit quaternions, scalar last) and ``Slerp`` (spherical linear interpolation between key rotations).

Both are NamedTuples, so pytrees: they pass through programs, ``vmap``, ``grad`` and control flow like any tuple
of arrays. ``Rotation(quat)`` holds one rotation (``quat`` of shape ``(4,)``, ``single``) or a stack of them
(``(..., 4)``); every conversion broadcasts over the leading axes. The formulas are SciPy's and JAX's:
quaternion-based Euler angles (Bernardes & Viollet, 2022) with the third angle set to zero at gimbal lock, a
matrix converted by the largest of its diagonal and trace (Markley), series near zero angle for rotation
vectors; ``mean`` is the dominant eigenvector of ``Σ wᵢ qᵢ qᵢᵀ``. ``Slerp.init(times, rotations)`` builds an
interpolator (as JAX; SciPy's constructor is ``Slerp(times, rotations)``), called on times in
``[times[0], times[-1]]``.

Deliberate differences from JAX (towards SciPy):
- ``Rotation.identity(num)`` and ``Rotation.random(key, num)`` take ``num`` (JAX asserts it is None and does not
  implement ``random``); ``random`` normalizes standard normal quaternions, as SciPy, from a ``tensorstage.random``
  key, and both take ``dtype=``.
- ``from_quat`` and ``as_quat`` take ``scalar_first`` (SciPy's; JAX's ``from_quat`` does not).
- ``apply``'s ``inverse`` must be a Python bool (JAX also takes a traced one).
- Integer angles, vectors and matrices are converted to the default float dtype first (tensorstage never
  promotes implicitly).

Deliberate differences from SciPy (as JAX): no checks that depend on values (a non-orthogonal or left-handed
matrix is converted as it is, not orthogonalized; ``Slerp`` extrapolates outside its times and does not check that
they increase; a zero quaternion gives NaNs; no gimbal-lock warning), ``mean`` averages a 1-D stack only, and there
is no ``align_vectors``, ``reduce``, ``from_davenport``, ``approx_equal`` or ``__pow__``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from typing_extensions import Unpack

from ...dtypes import to_numpy
from ...staging import dtypes as _dt
from ...staging.source import user_location
from ...tensor import Tensor
from .. import numpy as tnp
from .. import random as _random
from ..numpy._core import as_tensor, op
from ..numpy.linalg_decompositions import eigh

__all__ = ["Rotation", "Slerp"]

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
Value = Any  # a staged tensor


def _float(x: Any) -> Value:
    """``x`` as a tensor of a float dtype (integers and Python numbers in the default float)."""
    t = as_tensor(x)
    return t if _dt.is_inexact(t.aval.dtype) else t.astype(_dt.DEFAULT_FLOAT)


def _stack(parts: Sequence[Value]) -> Value:
    return tnp.stack(list(parts), axis=-1)


def _parts(quat: Value) -> list[Value]:
    return [quat[..., i] for i in range(quat.aval.shape[-1])]


def _vector_norm(v: Value) -> Value:
    return tnp.sqrt(tnp.sum(v * v, axis=-1))


def _normalize(quat: Value) -> Value:
    return quat / _vector_norm(quat)[..., None]


def _broadcast_stacks(x: Value, x_core: int, y: Value, y_core: int) -> tuple[Value, Value]:
    """``x`` and ``y`` with their leading (stack) axes broadcast to one shape, their last ``x_core`` / ``y_core``
    axes kept: NumPy's broadcasting of a stack with one rotation or vector, made explicit (tensorstage refuses
    to both add and stretch axes implicitly)."""
    x_stack, y_stack = x.aval.shape[: x.aval.ndim - x_core], y.aval.shape[: y.aval.ndim - y_core]
    stack = np.broadcast_shapes(x_stack, y_stack)
    return (tnp.broadcast_to(x, stack + x.aval.shape[x.aval.ndim - x_core:]),
            tnp.broadcast_to(y, stack + y.aval.shape[y.aval.ndim - y_core:]))


def _compose(p: Value, q: Value) -> Value:
    """The Hamilton product ``p q`` (``q`` applied first), broadcasting."""
    p, q = _broadcast_stacks(p, 1, q, 1)
    px, py, pz, pw = _parts(p)
    qx, qy, qz, qw = _parts(q)
    return _stack([pw * qx + qw * px + (py * qz - pz * qy),
                   pw * qy + qw * py + (pz * qx - px * qz),
                   pw * qz + qw * pz + (px * qy - py * qx),
                   pw * qw - px * qx - py * qy - pz * qz])


def _check_quat(op: str, quat: Value, last: int = 4) -> None:
    if quat.aval.ndim < 1 or quat.aval.shape[-1] != last:
        raise ValueError(f"Rotation.{op}: expected an array of shape (..., {last}), got shape {quat.aval.shape}\n"
                         f"  at {user_location()}")


def _sequence(op: str, seq: str, lengths: tuple[int, ...]) -> tuple[list[int], bool]:
    """The axes (0, 1, 2) of an Euler sequence and whether it is extrinsic (lower case), checked as SciPy."""
    if not isinstance(seq, str) or len(seq) not in lengths:
        want = "3 axes" if lengths == (3,) else "a non-empty string of up to 3 characters"
        raise ValueError(f"Rotation.{op}: expected {want}, got {seq!r}\n  at {user_location()}")
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not extrinsic and re.match(r"^[XYZ]{1,3}$", seq) is None:
        raise ValueError(f"Rotation.{op}: expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], "
                         f"got {seq!r}\n  at {user_location()}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Rotation.{op}: expected consecutive axes to be different, got {seq!r}\n"
                         f"  at {user_location()}")
    return ["xyz".index(c) for c in seq.lower()], extrinsic


def _elementary(axis: int, angle: Value) -> Value:
    half = angle / 2
    zero = tnp.zeros_like(angle)
    return _stack([tnp.sin(half) if i == axis else zero for i in range(3)] + [tnp.cos(half)])


@op
def _from_euler(seq: str, angles: Any, degrees: bool) -> Value:
    axes, extrinsic = _sequence("from_euler", seq, (1, 2, 3))
    angles = tnp.atleast_1d(_float(angles))
    if angles.aval.shape[-1] != len(axes):
        raise ValueError(f"Rotation.from_euler: expected the last axis of `angles` to match the number of axes in "
                         f"{seq!r} ({len(axes)}), got shape {angles.aval.shape}\n  at {user_location()}")
    if degrees:
        angles = tnp.deg2rad(angles)
    result = _elementary(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], start=1):
        quat = _elementary(axis, angles[..., n])
        result = _compose(quat, result) if extrinsic else _compose(result, quat)
    return result


@op
def _euler_angles(quat: Value, seq: str, degrees: bool) -> Value:
    """The Euler angles of ``seq`` (SciPy's quaternion method; the third angle zero at gimbal lock)."""
    axes, extrinsic = _sequence("as_euler", seq, (3,))
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    k = 3 - i - j if symmetric else k
    sign = (i - j) * (j - k) * (k - i) // 2
    q = _parts(quat)
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * tnp.arctan2(tnp.hypot(c, d), tnp.hypot(a, b))
    half_sum, half_diff = tnp.arctan2(b, a), tnp.arctan2(d, c)
    eps = 1e-7
    case1 = tnp.abs(middle) <= eps
    regular = ~(case1 | (tnp.abs(middle - np.pi) <= eps))
    degenerate = tnp.where(case1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    first = tnp.where(regular, half_sum - half_diff, degenerate if extrinsic else tnp.zeros_like(middle))
    third = tnp.where(regular, half_sum + half_diff, tnp.zeros_like(middle) if extrinsic else degenerate)
    if not symmetric:
        third, middle = third * sign, middle - np.pi / 2
    angles = _stack([first, middle, third] if extrinsic else [third, middle, first])
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return tnp.rad2deg(angles) if degrees else angles


@op
def _from_matrix(matrix: Any) -> Value:
    """Markley's method: the quaternion from the largest of the diagonal and the trace, for accuracy."""
    matrix = _float(matrix)
    if matrix.aval.ndim < 2 or matrix.aval.shape[-2:] != (3, 3):
        raise ValueError(f"Rotation.from_matrix: expected a matrix of shape (..., 3, 3), got shape "
                         f"{matrix.aval.shape}\n  at {user_location()}")
    m = [[matrix[..., r, c] for c in range(3)] for r in range(3)]
    trace = m[0][0] + m[1][1] + m[2][2]
    choice = tnp.argmax(tnp.stack([m[0][0], m[1][1], m[2][2], trace], axis=-1), axis=-1)
    quat = _stack([m[2][1] - m[1][2], m[0][2] - m[2][0], m[1][0] - m[0][1], 1 + trace])
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts = [tnp.zeros_like(trace)] * 4
        parts[i] = 1 - trace + 2 * m[i][i]
        parts[j] = m[j][i] + m[i][j]
        parts[k] = m[k][i] + m[i][k]
        parts[3] = m[k][j] - m[j][k]
        quat = tnp.where((choice == i)[..., None], _stack(parts), quat)
    return _normalize(quat)


@op
def _as_matrix(quat: Value) -> Value:
    x, y, z, w = _parts(quat)
    rows = [[x * x - y * y - z * z + w * w, 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), -x * x + y * y - z * z + w * w, 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), -x * x - y * y + z * z + w * w]]
    return tnp.stack([_stack(row) for row in rows], axis=-2)


@op
def _from_rotvec(rotvec: Any, degrees: bool) -> Value:
    rotvec = _float(rotvec)
    _check_quat("from_rotvec", rotvec, 3)
    if degrees:
        rotvec = tnp.deg2rad(rotvec)
    angle = _vector_norm(rotvec)
    angle2 = angle * angle
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    # the series where sin(θ/2)/θ loses precision; the other branch kept finite at θ = 0 for its gradient
    safe = tnp.where(angle <= 1e-3, tnp.ones_like(angle), angle)
    scale = tnp.where(angle <= 1e-3, small_scale, tnp.sin(safe / 2) / safe)
    return tnp.concatenate([scale[..., None] * rotvec, tnp.cos(angle / 2)[..., None]], axis=-1)


@op
def _as_rotvec(quat: Value, degrees: bool) -> Value:
    quat = tnp.where(quat[..., 3:] < 0, -quat, quat)  # w >= 0: an angle in [0, π]
    angle = 2 * tnp.arctan2(_vector_norm(quat[..., :3]), quat[..., 3])
    angle2 = angle * angle
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    safe = tnp.where(angle <= 1e-3, tnp.ones_like(angle), angle)
    scale = tnp.where(angle <= 1e-3, small_scale, safe / tnp.sin(safe / 2))
    if degrees:
        scale = tnp.rad2deg(scale)
    return scale[..., None] * quat[..., :3]


@op
def _from_mrp(mrp: Any) -> Value:
    mrp = _float(mrp)
    _check_quat("from_mrp", mrp, 3)
    squared_plus_1 = tnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return tnp.concatenate([2 * mrp, 2 - squared_plus_1], axis=-1) / squared_plus_1


@op
def _as_mrp(quat: Value) -> Value:
    sign = tnp.where(quat[..., 3:] < 0, -tnp.ones_like(quat[..., 3:]), tnp.ones_like(quat[..., 3:]))
    return sign * quat[..., :3] / (1 + sign * quat[..., 3:])


@op
def _canonical(quat: Value) -> Value:
    """``quat`` or ``-quat``: the one whose first nonzero of (w, x, y, z) is positive."""
    x, y, z, w = _parts(quat)
    neg = w < 0
    zero = w == 0
    for part in (x, y, z):
        neg = neg | (zero & (part < 0))
        zero = zero & (part == 0)
    return tnp.where(neg[..., None], -quat, quat)


@op
def _quat(quat: Any, scalar_first: bool) -> Value:
    q = _float(quat)
    _check_quat("from_quat", q)
    return _normalize(tnp.roll(q, -1, axis=-1) if scalar_first else q)


@op
def _composed(p: Value, q: Value) -> Value:
    return _normalize(_compose(p, q))


@op
def _inv(quat: Value) -> Value:
    return quat * tnp.asarray([-1, -1, -1, 1], dtype=quat.aval.dtype)


@op
def _magnitude(quat: Value) -> Value:
    return 2 * tnp.arctan2(_vector_norm(quat[..., :3]), tnp.abs(quat[..., 3]))


@op
def _apply(quat: Value, vectors: Any, inverse: bool) -> Value:
    v = _float(vectors)
    _check_quat("apply", v, 3)
    matrix, v = _broadcast_stacks(_as_matrix(quat), 2, v, 1)
    if inverse:
        matrix = tnp.swapaxes(matrix, -1, -2)
    return tnp.sum(matrix * v[..., None, :], axis=-1)  # exact products: no matmul precision setting applies


@op
def _mean(quat: Value, weights: Any) -> Value:
    """The dominant eigenvector of ``Σ wᵢ qᵢ qᵢᵀ``."""
    n = quat.aval.shape[0]
    w = tnp.asarray(weights, dtype=quat.aval.dtype)
    if w.aval.shape != (n,):
        raise ValueError(f"Rotation.mean: expected `weights` of shape ({n},), one per rotation, got shape "
                         f"{w.aval.shape}\n  at {user_location()}")
    k = tnp.sum(w[:, None, None] * quat[:, :, None] * quat[:, None, :], axis=0)
    return eigh(k)[1][:, -1]


@op
def _slerp_init(times: Any, quat: Value) -> tuple[Value, Value, Value, Value]:
    t = tnp.asarray(times, dtype=quat.aval.dtype)
    if t.aval.ndim != 1 or t.aval.shape[0] != quat.aval.shape[0]:
        raise ValueError(f"Slerp: expected 1-D times, one per rotation ({quat.aval.shape[0]}), got shape "
                         f"{t.aval.shape}\n  at {user_location()}")
    start, end = quat[:-1], quat[1:]
    return t, tnp.diff(t), Rotation(start), _as_rotvec(_normalize(_compose(_inv(start), end)), False)


@op
def _slerp(slerp: Slerp, times: Any) -> Value:
    t = tnp.asarray(times, dtype=slerp.times.aval.dtype)
    if t.aval.ndim > 1:
        raise ValueError(f"Slerp: `times` must be at most 1-dimensional, got shape {t.aval.shape}\n"
                         f"  at {user_location()}")
    ind = tnp.maximum(tnp.searchsorted(slerp.times, t) - 1, 0)
    alpha = (t - slerp.times[ind]) / slerp.timedelta[ind]
    step = _from_rotvec(slerp.rotvecs[ind] * alpha[..., None], False)
    return _normalize(_compose(slerp.rotations.quat[ind], step))


class Rotation(NamedTuple):
    """Rotations in 3 dimensions, as ``scipy.spatial.transform.Rotation`` (``jax.scipy.spatial.transform``): build
    with the ``from_*`` class methods, convert with the ``as_*`` methods, compose with ``*`` (``(p * q)`` applies
    ``q`` first), index a stack with ``[]``."""

    quat: AnyTensor

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """The rotations of a sequence of ``Rotation`` stacks (single ones count as stacks of one), in order."""
        quats = [tnp.atleast_2d(r.quat) for r in rotations]
        return cls(tnp.concatenate(quats, axis=0))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes of ``seq`` ('xyz': extrinsic, 'XYZ': intrinsic; 1 to 3 axes), the last
        axis of ``angles`` holding one angle per axis."""
        return cls(_from_euler(seq, angles, degrees))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """From rotation matrices, shape ``(..., 3, 3)``."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """From Modified Rodrigues Parameters, shape ``(..., 3)``."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Any, *, scalar_first: bool = False) -> Rotation:
        """From quaternions ``(x, y, z, w)`` (``(w, x, y, z)`` with ``scalar_first``), normalized."""
        return cls(_quat(quat, scalar_first))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """From rotation vectors (axis times angle), shape ``(..., 3)``."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation (``num`` of them, stacked, where ``num`` is given)."""
        quat = tnp.asarray([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(quat if num is None else tnp.tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None, dtype: Any = float) -> Rotation:
        """Uniformly distributed rotations (normalized standard normal quaternions), from a random key."""
        shape = (4,) if num is None else (num, 4)
        return cls(_normalize(_random.normal(random_key, shape, dtype=to_numpy(dtype))))

    def __getitem__(self, indexer: Any) -> Rotation:  # type: ignore[override]
        """The rotation(s) at ``indexer`` of a stack."""
        if self.single:
            raise TypeError(f"Single rotation is not subscriptable.\n  at {user_location()}")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """The number of rotations in a stack."""
        if self.single:
            raise TypeError(f"Single rotation has no len().\n  at {user_location()}")
        return tnp.shape(self.quat)[0]

    def __mul__(self, other: Rotation) -> Rotation:  # type: ignore[override]
        """``self`` composed with ``other`` (``other`` applied first), broadcasting."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation(_composed(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> AnyTensor:
        """The rotated vectors (shape ``(..., 3)``, broadcasting with the stack); the inverse rotation with
        ``inverse``."""
        return _apply(self.quat, vectors, inverse)  # type: ignore[no-any-return]

    def as_euler(self, seq: str, degrees: bool = False) -> AnyTensor:
        """The Euler angles about the 3 axes of ``seq`` ('xyz' extrinsic, 'XYZ' intrinsic), shape ``(..., 3)``, in
        ``[-π, π)``."""
        return _euler_angles(self.quat, seq, degrees)  # type: ignore[no-any-return]

    def as_matrix(self) -> AnyTensor:
        """The rotation matrices, shape ``(..., 3, 3)``."""
        return _as_matrix(self.quat)  # type: ignore[no-any-return]

    def as_mrp(self) -> AnyTensor:
        """The Modified Rodrigues Parameters (norm at most 1), shape ``(..., 3)``."""
        return _as_mrp(self.quat)  # type: ignore[no-any-return]

    def as_rotvec(self, degrees: bool = False) -> AnyTensor:
        """The rotation vectors (angle in ``[0, π]`` times the unit axis), shape ``(..., 3)``."""
        return _as_rotvec(self.quat, degrees)  # type: ignore[no-any-return]

    def as_quat(self, canonical: bool = False, *, scalar_first: bool = False) -> AnyTensor:
        """The unit quaternions ``(x, y, z, w)`` (``w ≥ 0`` with ``canonical``; ``(w, x, y, z)`` with
        ``scalar_first``)."""
        quat = _canonical(self.quat) if canonical else self.quat
        return tnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(_inv(self.quat))

    def magnitude(self) -> AnyTensor:
        """The rotation angle(s), in ``[0, π]``."""
        return _magnitude(self.quat)  # type: ignore[no-any-return]

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation of a 1-D stack: the quaternion maximizing ``Σ wᵢ (q · qᵢ)²``."""
        len(self)  # a single rotation has no mean: the TypeError SciPy and JAX raise
        return Rotation(_mean(self.quat, tnp.ones(len(self), dtype=self.quat.dtype) if weights is None else weights))

    @property
    def single(self) -> bool:
        """Whether this is one rotation (not a stack)."""
        return tnp.ndim(self.quat) == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations, as ``scipy.spatial.transform.Slerp``
    (``jax.scipy.spatial.transform.Slerp``): ``Slerp.init(times, rotations)``, then call it on times."""

    times: AnyTensor
    timedelta: AnyTensor
    rotations: Rotation
    rotvecs: AnyTensor

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator through ``rotations`` (a stack of at least 2) at increasing ``times`` (1-D, one each)."""
        if not isinstance(rotations, Rotation):
            raise TypeError(f"Slerp: `rotations` must be a `Rotation` instance, got {type(rotations).__name__}\n"
                            f"  at {user_location()}")
        if rotations.single or len(rotations) == 1:
            raise ValueError(f"Slerp: `rotations` must be a sequence of at least 2 rotations.\n  at {user_location()}")
        return cls(*_slerp_init(times, rotations.quat))

    def __call__(self, times: Any) -> Rotation:
        """The interpolated rotation(s) at ``times`` (a scalar gives a single rotation)."""
        return Rotation(_slerp(self, times))
