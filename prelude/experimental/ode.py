"""``tensorstage.experimental.ode``: JAX's ``jax.experimental.ode`` — ``odeint``, adaptive Dormand–Prince
(dopri5) integration differentiated by the adjoint method.

As in JAX, the state ``y0`` may be a pytree (raveled to one vector in the promoted dtype for stepping, its leaves
restored on output); the forward solve is a ``scan`` over the output times of ``while_loop``s of steps
(``_ode_dopri``); the derivative is a ``custom_vjp`` whose backward pass integrates the augmented system
``(y, ȳ, t̄₀, ārgs)`` backwards in time between consecutive output times, itself with ``odeint`` (so it has a
derivative too: grad of grad works). Values ``func`` closes over are differentiated like ``args`` (they are passed to the rule
explicitly, as JAX's ``closure_convert`` does). Under ``vmap`` the step loops run until every member has reached
each output time, every member stepping at its own size.

Deliberate differences from JAX:
- ``func`` must return ``y0``'s structure with each leaf of its leaf's shape and dtype (checked once, when
  staging, naming ``func``); JAX promotes and reshapes silently.
- A Python ``float`` in ``args`` becomes a tensor of the state's dtype (JAX's weak typing gives the same for
  float32 and float64 states); a Python ``int`` or ``bool`` an int32 or bool tensor.
- An output time below the one before it reads NaN (JAX requires increasing times and extrapolates silently);
  concrete ``t`` is checked to be increasing before anything runs. So does a time not reached within ``mxstep``
  steps (or once the step size underflows), where JAX returns the last step's polynomial far outside its step.
- An empty state (``y0`` of size 0) returns zeros without stepping (JAX's error ratio is NaN there, and its step
  loop stops only at ``mxstep``).
- Forward mode (jvp, jacfwd, hessian) is refused, as in JAX; reverse mode nests: the rule's own ``odeint`` calls
  (the forward solve in ``fwd``, the adjoint solves in ``bwd``) are the custom_vjp function again, whose rules are
  staged only when that call is differentiated, so ``grad`` of ``grad`` (and ``jacrev`` of ``jacrev``) runs the
  adjoint of the adjoint, as JAX does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ... import pytree
from ...array import Array
from ...autodiff import vjp
from ...control_flow import scan
from ...custom_derivatives import custom_vjp
from ...program import Program
from ...signature import Spec
from ...staging import dtypes as _dt
from ...staging.builder import inline, is_staging
from ...staging.source import user_location
from ...subgraph import Subgraph, function_name, stage_subgraph
from ...tensor import Tensor
from ...trace import WeakTraced, wrap
from .. import numpy as tnp
from ..numpy._core import as_tensor, describe, dtype_error, shape_error
from ._ode_dopri import solve

__all__ = ["odeint"]

Y = TypeVar("Y")
Value = Any  # a staged tensor
_OP = "odeint"
_INT = np.dtype(np.int32)


def odeint(func: Callable[..., Y], y0: Y, t: Tensor[Any, Any], *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = math.inf, hmax: float = math.inf) -> Y:
    """The solution of ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0`` at each time of the increasing 1-D
    float ``t``: ``y0``'s structure with a leading axis of ``len(t)`` on every leaf. ``rtol`` / ``atol`` bound
    each step's local error, ``mxstep`` the steps between two output times, ``hmax`` the step size."""
    _check_settings(rtol, atol, mxstep, hmax)
    if not is_staging():  # on concrete arrays: staged, compiled and run as one program
        t = np.asarray(t) if isinstance(t, (list, tuple)) else t
        _check_increasing(t)
        program = Program(lambda y, times, *a: odeint(func, y, times, *a, rtol=rtol, atol=atol, mxstep=mxstep,
                                                      hmax=hmax), name="odeint")
        return program(y0, t, *args)  # type: ignore[no-any-return]
    times = _times(t)
    state_leaves, state_tree = pytree.flatten(y0)
    state_leaves = [_state_leaf(leaf) for leaf in state_leaves]
    dtype = _common_dtype([leaf.aval.dtype for leaf in state_leaves])
    arg_leaves, arg_tree = pytree.flatten(args)
    arg_leaves = [_arg_leaf(i, leaf, dtype) for i, leaf in enumerate(arg_leaves)]
    dynamics = _FlatDynamics(func, state_leaves, state_tree, times, arg_leaves, arg_tree, dtype)
    flat0 = _ravel(state_leaves, dtype)
    if flat0.shape[0] == 0:  # nothing to integrate (and no error ratio to step by)
        zeros = [tnp.zeros((times.shape[0], *x.shape), x.dtype) for x in state_leaves]
        return pytree.unflatten(state_tree, zeros)  # type: ignore[no-any-return]
    ys = _odeint(dynamics, rtol, atol, mxstep, hmax, flat0, times, *arg_leaves, *dynamics.consts)
    return pytree.unflatten(state_tree, dynamics.unravel_rows(ys))  # type: ignore[no-any-return]


def _check_settings(rtol: float, atol: float, mxstep: float, hmax: float) -> None:
    for name, value in (("rtol", rtol), ("atol", atol), ("mxstep", mxstep), ("hmax", hmax)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"odeint: {name} must be a non-negative Python number, got {value!r}\n"
                             f"  at {user_location()}")


def _check_increasing(t: Any) -> None:
    """Concrete times must increase (staged ones that do not read NaN)."""
    if isinstance(t, (np.ndarray, Array)):
        host = np.asarray(t)
        if host.ndim == 1 and np.issubdtype(host.dtype, np.floating) and np.any(np.diff(host) < 0):
            raise ValueError(f"odeint: t must be increasing, got {host!r}\n  at {user_location()}")


def _times(t: Any) -> Value:
    times = as_tensor(t)
    if times.aval.ndim != 1 or times.aval.shape[0] == 0:
        raise shape_error(_OP, f"t must be a non-empty 1-D array of times, got {describe(times)}")
    if not _dt.is_float(times.aval.dtype):
        raise dtype_error(_OP, f"t must be an array of floats, got {describe(times)}")
    return times


def _state_leaf(leaf: Any) -> Value:
    x = as_tensor(leaf)
    if not _dt.is_inexact(x.aval.dtype):
        raise dtype_error(_OP, f"y0's leaves must be float or complex tensors, got {describe(x)}")
    return x


def _arg_leaf(index: int, leaf: Any, dtype: np.dtype[Any]) -> Value:
    """An ``args`` leaf as a tensor; a Python float takes the state's (real) dtype, as weak typing would give it,
    and a Python int int32 (also when passed to an enclosing program, where they are weakly typed scalars)."""
    real = _dt.real_dtype(dtype)
    if isinstance(leaf, WeakTraced):
        source = leaf.most_precise.aval.dtype
        return leaf if source == np.bool_ else wrap(leaf.as_dtype(real if _dt.is_float(source) else _INT, _OP))
    if isinstance(leaf, bool):
        return tnp.asarray(leaf)
    if isinstance(leaf, (int, float)):
        return tnp.asarray(leaf, dtype=real if isinstance(leaf, float) else _INT)
    if not isinstance(leaf, (Tensor, np.ndarray, np.generic, Array)):
        raise TypeError(f"odeint: the contents of *args must be arrays or scalars, but leaf {index} is "
                        f"{type(leaf).__name__} {leaf!r}\n  at {user_location()}")
    return as_tensor(leaf)


def _common_dtype(dtypes: Sequence[np.dtype[Any]]) -> np.dtype[Any]:
    if not dtypes:
        return np.dtype(np.float32)
    return np.dtype(tnp.result_type(*dtypes))


def _ravel(leaves: Sequence[Value], dtype: np.dtype[Any]) -> Value:
    """The leaves as one 1-D vector of ``dtype``."""
    return tnp.concatenate([tnp.reshape(x, (-1,)).astype(dtype) for x in leaves] or [tnp.zeros((0,), dtype)])


class _FlatDynamics:
    """``func`` on the flat state: ``self(y, t, *arg_leaves, *consts) -> dy/dt`` (1-D). ``func`` is staged once,
    checked against ``y0``, and its graph inlined on each call, the values it closes over (``consts``) passed as
    explicit arguments so that the derivative rule can differentiate them."""

    def __init__(self, func: Callable[..., Any], state: Sequence[Value], state_tree: pytree.TreeDef, times: Value,
                 arg_leaves: Sequence[Value], arg_tree: pytree.TreeDef, dtype: np.dtype[Any]) -> None:
        self.name = function_name(func)
        self.avals = [x.aval for x in state]
        self.state_tree = state_tree
        self.dtype = dtype
        spec = [Spec(a.shape, a.dtype, a.dims) for a in self.avals]
        t_spec = Spec((), times.aval.dtype)
        arg_specs = [Spec(x.aval.shape, x.aval.dtype, x.aval.dims) for x in arg_leaves]

        def call(y: Sequence[Any], t: Any, leaves: Sequence[Any]) -> Any:
            return func(pytree.unflatten(state_tree, y), t, *pytree.unflatten(arg_tree, leaves))

        self.sub: Subgraph = stage_subgraph(call, [spec, t_spec, arg_specs], {}, precise_floats=True)
        self._check_output()
        self.consts = [wrap(a) for a in self.sub.atoms[self.sub.num_leaf_inputs:]]

    def _check_output(self) -> None:
        out_avals = self.sub.graph.out_avals
        same = self.sub.out_tree == self.state_tree and all(
            g.shape == w.shape and g.dtype == w.dtype for g, w in zip(out_avals, self.avals))
        if not same:
            got = ", ".join(map(str, out_avals)) if self.sub.out_tree.kind == "leaf" else (
                f"{self.sub.out_tree!r} of {', '.join(map(str, out_avals))}")
            want = ", ".join(map(str, self.avals))
            raise shape_error(_OP, f"func ({self.name}) must return values shaped like y0 ({want}; structure "
                                   f"{self.state_tree!r}), got {got}")

    def unravel(self, flat: Value) -> list[Value]:
        """The state leaves from the flat vector."""
        return [x[0] for x in self.unravel_rows(flat[None])]

    def unravel_rows(self, rows: Value) -> list[Value]:
        """The state leaves, each with the leading axis of ``rows`` (``(T, n)``)."""
        out, start = [], 0
        for aval in self.avals:
            size = math.prod(aval.shape)
            piece = rows[:, start:start + size]
            if _dt.is_complex(piece.dtype) and not _dt.is_complex(aval.dtype):  # a real leaf of a complex state
                piece = tnp.real(piece)
            piece = piece.astype(aval.dtype)
            out.append(tnp.reshape(piece, (rows.shape[0], *aval.shape)))
            start += size
        return out

    def __call__(self, y: Value, t: Value, *leaves_and_consts: Value) -> Value:
        atoms = [x.atom for x in (*self.unravel(y), as_tensor(t), *map(as_tensor, leaves_and_consts))]
        outs = inline(self.sub.graph, atoms)
        return _ravel([wrap(a) for a in outs], self.dtype)


def _forward(func: _FlatDynamics, rtol: float, atol: float, mxstep: float, hmax: float, y0: Value, times: Value,
             *args: Value) -> Value:
    return solve(lambda y, t: func(y, t, *args), y0, times, rtol, atol, mxstep, hmax)


_odeint = custom_vjp(_forward, nondiff_argnums=(0, 1, 2, 3, 4))
_odeint.name = "odeint"  # as messages name it


def _odeint_fwd(func: _FlatDynamics, rtol: float, atol: float, mxstep: float, hmax: float, y0: Value, times: Value,
                *args: Value) -> tuple[Value, tuple[Value, Value, tuple[Value, ...]]]:
    # The function itself, as JAX's fwd calls it: a call in its own rules, it keeps its rule for grad of grad.
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, times, *args)
    return ys, (ys, times, args)


def _odeint_bwd(func: _FlatDynamics, rtol: float, atol: float, mxstep: float, hmax: float,
                residuals: tuple[Value, Value, tuple[Value, ...]], g: Value) -> tuple[Any, ...]:
    """The adjoint method: between consecutive output times, integrate ``(y, ȳ, t̄₀, ārgs)`` backwards (in
    negated time), adding each output's cotangent to ``ȳ`` and its time's effect to ``t̄``."""
    ys, times, args = residuals
    varying = [_dt.is_inexact(a.dtype) for a in args]  # int and bool arguments have no cotangent

    def aug_dynamics(aug: tuple[Value, Value, Value, list[Value]], minus_t: Value, *fixed: Value) -> Any:
        y, y_bar = aug[0], aug[1]

        def dynamics(y_: Value, t_: Value, *inexact: Value) -> Value:
            it = iter(inexact)
            return func(y_, t_, *(next(it) if v else a for a, v in zip(fixed, varying)))

        y_dot, pullback = vjp(dynamics, y, -minus_t, *(a for a, v in zip(fixed, varying) if v))
        y_cot, t_cot, *arg_cots = pullback(y_bar)
        return -y_dot, y_cot, t_cot, list(arg_cots)

    def step_back(carry: tuple[Value, Value, list[Value]], i: Value) -> tuple[Any, Value]:
        y_bar, t0_bar, args_bar = carry
        t_bar = tnp.real(tnp.dot(func(ys[i], times[i], *args), g[i])).astype(times.dtype)
        span = tnp.stack([-times[i], -times[i - 1]])
        _, y_bar, t0_bar, args_bar = odeint(aug_dynamics, (ys[i], y_bar, t0_bar - t_bar, args_bar), span, *args,
                                            rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        return (y_bar[1] + g[i - 1], t0_bar[1], [a[1] for a in args_bar]), t_bar

    init = (g[-1], tnp.zeros((), times.dtype), [tnp.zeros_like(a) for a, v in zip(args, varying) if v])
    steps = tnp.arange(times.shape[0] - 1, 0, -1, dtype=np.int32)
    (y_bar, t0_bar, args_bar), rev_ts_bar = scan(step_back, init, steps)
    ts_bar = tnp.concatenate([t0_bar[None], rev_ts_bar[::-1]])
    bars = iter(args_bar)
    arg_cts = [next(bars) if v else tnp.zeros_like(a) for a, v in zip(args, varying)]
    return (y_bar, ts_bar, *arg_cts)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
