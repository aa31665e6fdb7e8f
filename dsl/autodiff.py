"""Automatic differentiation: ``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``linearize``, jacobians, hessian.

Every transform works the same way. The function is staged to a subgraph on the arguments' types (closing over
any outer staged values), the graph -> graph transform of ``staging.transforms`` rewrites it, and the result is
inlined where the call happens. ``grad(f)`` is a ``Program``: called on concrete arrays it stages, compiles and
caches itself; called while another function is staged it inlines; ``.stage(...)`` shows the gradient graph.
Higher derivatives need nothing more, since every rule emits ordinary primitives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar, overload
from typing import Literal as Lit

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from . import pytree
from .dtypes import Complex, DType, Floating
from .program import Program
from .staging import dtypes as _dt
from .staging.builder import inline, is_staging
from .staging.errors import TransformError
from .staging.ir import Atom, Aval, literal
from .staging.primitives import structural as S
from .staging.primitives.callback import replaying
from .staging.source import user_location
from .staging.transforms.jvp import jvp_graph
from .staging.transforms.vjp import vjp_graph, vjp_inline
from .staging.zeros import MaybeZero, Zero
from .subgraph import Subgraph, as_program, function_name, param_names, stage_subgraph
from .tensor import Tensor, Traced
from .trace import WeakTraced, wrap

DT = TypeVar("DT", bound=DType)
FT = TypeVar("FT", bound=Floating)  # the differentiated output: a floating-point scalar Tensor[FT]
CT = TypeVar("CT", bound=Complex)  # holomorphic=True: complex inputs ...
CT2 = TypeVar("CT2", bound=Complex)  # ... and a complex output, of its own precision
S_ = TypeVarTuple("S_")
Ts = TypeVarTuple("Ts")  # jvp / vjp: the primals' types, whatever their number
A = TypeVar("A")
AUX = TypeVar("AUX")
P = ParamSpec("P")
Argnums = int | Sequence[int]

# ------------------------------------------------------------------------------------------------- helpers


def _argnums(argnums: Argnums, nargs: int, op: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise TransformError("argnums is empty: nothing to differentiate with respect to", op, user_location())
    out = []
    for n in nums:
        if not isinstance(n, int) or not -nargs <= n < nargs:
            raise TransformError(
                f"argnums {argnums!r} is out of range for a call with {nargs} positional arguments", op, user_location()
            )
        out.append(n % nargs)
    return tuple(out)


# The inputs a transform differentiates: floating-point or complex ("inexact"), real only (jacfwd: a complex input
# needs holomorphic=True there, as in JAX) or complex only (holomorphic=True).
Inputs = Lit["inexact", "real", "complex"]


def _check_differentiable(
    sub: Subgraph, nums: Sequence[int], op: str, inputs: Inputs = "inexact", fname: str = "the function"
) -> list[bool]:
    """Which graph inputs to differentiate: every leaf of the chosen arguments, which must be of kind ``inputs``
    (errors name the function ``fname``)."""
    wants = []
    for i, var in enumerate(sub.graph.inputs):
        arg = sub.leaf_arg[i]
        want = i < sub.num_leaf_inputs and arg in nums
        if want and not _dt.is_inexact(var.aval.dtype):
            raise TransformError(
                f"cannot differentiate with respect to {sub.leaf_names[i]}, which is {var.aval}: gradients are defined "
                "for floating-point and complex inputs only (convert it with .astype(f32), or leave it out of argnums)",
                op,
                user_location(),
            )
        if want and inputs != "inexact" and _dt.is_complex(var.aval.dtype) != (inputs == "complex"):
            raise TransformError(_input_kind_message(f"{sub.leaf_names[i]} of {fname}", var.aval, inputs), op,
                                 user_location())
        wants.append(want)
    return wants


def _input_kind_message(what: str, aval: Aval, inputs: Inputs) -> str:
    if inputs == "complex":
        return (f"with holomorphic=True the inputs differentiated must be complex, but {what} is {aval}: convert it "
                "(.astype(ts.c64)), or leave holomorphic out")
    return (f"{what} is {aval}, a complex input: for a holomorphic function pass holomorphic=True (the derivative is "
            "then f'(z)); otherwise differentiate with respect to its real and imaginary parts, or use ts.jvp")


def _check_output_kind(sub: Subgraph, k: int, holomorphic: bool, op: str, fname: str) -> None:
    """jacrev's outputs, and any holomorphic transform's, must be real, or complex with ``holomorphic``."""
    aval = sub.graph.outputs[k].aval
    if _dt.is_complex(aval.dtype) == holomorphic:  # (integer outputs without holomorphic: a zero derivative)
        return
    which = f"output {k} of {fname}" if len(sub.graph.outputs) > 1 else f"the output of {fname}"
    if holomorphic:
        message = f"with holomorphic=True the outputs must be complex, but {which} is {aval}: leave holomorphic out"
    else:
        message = (f"{which} is {aval}, a complex output: for a holomorphic function pass holomorphic=True (the "
                   "derivative is then f'(z)); otherwise differentiate tnp.real and tnp.imag of it, or use ts.vjp")
    raise TransformError(message, op, user_location())


def _check_leaves(args: Sequence[Any], nums: Sequence[int], names: Sequence[str], op: str) -> None:
    for n in nums:
        for leaf in pytree.leaves(args[n]):
            if not (isinstance(leaf, (Tensor, np.ndarray, np.generic)) or type(leaf) in (float, int, bool)):
                where = names[n] if n < len(names) else f"argument {n}"
                raise TransformError(
                    f"{where} holds a {type(leaf).__name__}, which is not a tensor: cannot differentiate with respect "
                    "to it (pass it as another argument, outside argnums)",
                    op,
                    user_location(),
                )


def _per_arg(sub: Subgraph, nums: Sequence[int], values: Sequence[Any]) -> list[Any]:
    """Rebuild each chosen argument's structure from per-leaf values (in graph input order)."""
    out = []
    it = iter(values)
    by_arg: dict[int, list[Any]] = {n: [] for n in nums}
    for i in range(sub.num_leaf_inputs):
        if sub.leaf_arg[i] in by_arg:
            by_arg[sub.leaf_arg[i]].append(next(it))
    for n in nums:
        out.append(pytree.unflatten(sub.arg_trees[n], by_arg[n]))
    return out


def _select_args(values: list[Any], argnums: Argnums) -> Any:
    return values[0] if isinstance(argnums, int) else tuple(values)


# --------------------------------------------------------------------------------------------- grad family


def _check_scalar_output(sub: Subgraph, has_aux: bool, op: str, holomorphic: bool, fname: str) -> None:
    """The differentiated value (the first output) must be one floating-point scalar (complex with
    ``holomorphic``)."""
    tree = sub.out_tree
    if has_aux:
        if tree.kind != "tuple" or len(tree.children) != 2:
            raise TransformError(
                f"with has_aux=True the function must return a pair (value, aux), got structure {tree!r}", op,
                user_location(),
            )
        tree = tree.children[0]
    if tree.kind != "leaf":
        raise TransformError(
            f"the function must return a scalar to take its gradient, got a structure {tree!r}", op, user_location()
        )
    aval = sub.graph.outputs[0].aval
    if aval.ndim != 0:
        raise TransformError(
            f"the function must return a scalar to take its gradient, got {aval} of shape ({_dims(aval)}); "
            "reduce it (e.g. .sum()) or use jacrev/vjp for non-scalar outputs",
            op,
            user_location(),
        )
    if holomorphic:
        if not _dt.is_complex(aval.dtype):
            raise TransformError(f"with holomorphic=True {fname} must return a complex scalar, got {aval}: leave "
                                 "holomorphic out to take the gradient of a real-valued function", op, user_location())
    elif not _dt.is_float(aval.dtype):
        hint = "" if not _dt.is_complex(aval.dtype) else (
            ": for a holomorphic function pass holomorphic=True (the gradient is then f'(z)); otherwise take the "
            "gradient of a real function of it (tnp.real, tnp.abs), or use ts.vjp"
        )
        raise TransformError(
            f"{fname} must return a floating-point scalar to take its gradient, got {aval}{hint}", op, user_location()
        )


def _dims(aval: Aval) -> str:
    from .staging.ir import format_dims

    return format_dims(aval.shape, aval.dims)


def _value_and_grad_staged(
    fun: Callable[..., Any], argnums: Argnums, has_aux: bool, holomorphic: bool, op: str, args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, Any]:
    names = param_names(fun)
    nums = _argnums(argnums, len(args), op)
    _check_leaves(args, nums, names, op)
    sub = stage_subgraph(fun, args, kwargs, nums, names)
    fname = function_name(fun)
    _check_scalar_output(sub, has_aux, op, holomorphic, fname)
    wants = _check_differentiable(sub, nums, op, "complex" if holomorphic else "inexact", fname)
    # A cotangent of 1 pulls back ``1 * f'(z)`` through a holomorphic f: its complex derivative.
    one = literal(1, sub.graph.outputs[0].aval.dtype)
    cts: list[MaybeZero] = [one]
    cts.extend(Zero(a.aval) for a in sub.graph.outputs[1:])  # aux outputs get no cotangent
    outs, in_cts = vjp_inline(sub.graph, sub.atoms, cts, wants, consume=True)  # ``sub`` is this call's alone
    value = sub.outputs(outs)
    grads = _per_arg(sub, nums, [wrap(a) for a in in_cts])
    return value, _select_args(grads, argnums)


# Static types (mypy and pyright): the function must return a floating-point scalar ``Tensor[FT]`` (a vector-valued
# function matches no overload: an error at the grad(...) call), and the gradient has the type of the argument it
# is taken for: ``Tensor[DT, *S]`` keeps dtype and dims, a pytree argument (a dict, an attrs class) its own type.
# Several argnums give a tuple of gradients, typed Any. With ``holomorphic=True`` the function maps complex
# arguments (``Tensor[CT, *S]``) to a complex scalar (``Tensor[CT2]``) instead.
@overload
def value_and_grad(
    fun: Callable[Concatenate[Tensor[DT, Unpack[S_]], P], Tensor[FT]], argnums: Lit[0] = 0, has_aux: Lit[False] = False,
    holomorphic: Lit[False] = False,
) -> Callable[Concatenate[Tensor[DT, Unpack[S_]], P], tuple[Tensor[FT], Tensor[DT, Unpack[S_]]]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[A, P], Tensor[FT]], argnums: Lit[0] = 0, has_aux: Lit[False] = False,
    holomorphic: Lit[False] = False,
) -> Callable[Concatenate[A, P], tuple[Tensor[FT], A]]: ...
@overload
def value_and_grad(
    fun: Callable[P, Tensor[FT]], argnums: Argnums = 0, has_aux: Lit[False] = False, holomorphic: Lit[False] = False
) -> Callable[P, tuple[Tensor[FT], Any]]: ...
@overload
def value_and_grad(
    fun: Callable[P, tuple[Tensor[FT], AUX]], argnums: Argnums = 0, *, has_aux: Lit[True],
    holomorphic: Lit[False] = False,
) -> Callable[P, tuple[tuple[Tensor[FT], AUX], Any]]: ...
@overload
def value_and_grad(
    fun: Callable[P, tuple[Tensor[FT], AUX]], argnums: Argnums, has_aux: Lit[True], holomorphic: Lit[False] = False
) -> Callable[P, tuple[tuple[Tensor[FT], AUX], Any]]: ...
@overload
def value_and_grad(
    fun: Callable[Concatenate[Tensor[CT, Unpack[S_]], P], Tensor[CT2]], argnums: Lit[0] = 0,
    has_aux: Lit[False] = False, *, holomorphic: Lit[True],
) -> Callable[Concatenate[Tensor[CT, Unpack[S_]], P], tuple[Tensor[CT2], Tensor[CT, Unpack[S_]]]]: ...
@overload
def value_and_grad(
    fun: Callable[P, Tensor[CT2] | tuple[Tensor[CT2], Any]], argnums: Argnums = 0, has_aux: bool = False, *,
    holomorphic: Lit[True],
) -> Callable[..., Any]: ...
@overload
def value_and_grad(
    fun: Callable[P, Tensor[FT] | tuple[Tensor[FT], Any]], argnums: Argnums = 0, has_aux: bool = False,
    holomorphic: Lit[False] = False,
) -> Callable[..., Any]: ...
def value_and_grad(
    fun: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """``f`` -> a function returning ``(f(x), grad)`` (``((f(x), aux), grad)`` with ``has_aux``); ``holomorphic``
    as in ``grad``."""

    def body(*args: Any, **kwargs: Any) -> Any:
        return _value_and_grad_staged(fun, argnums, has_aux, holomorphic, "value_and_grad", args, kwargs)

    return as_program(body, fun, f"value_and_grad_{function_name(fun)}")


@overload
def grad(
    fun: Callable[Concatenate[Tensor[DT, Unpack[S_]], P], Tensor[FT]], argnums: Lit[0] = 0, has_aux: Lit[False] = False,
    holomorphic: Lit[False] = False,
) -> Callable[Concatenate[Tensor[DT, Unpack[S_]], P], Tensor[DT, Unpack[S_]]]: ...
@overload
def grad(
    fun: Callable[Concatenate[A, P], Tensor[FT]], argnums: Lit[0] = 0, has_aux: Lit[False] = False,
    holomorphic: Lit[False] = False,
) -> Callable[Concatenate[A, P], A]: ...
@overload
def grad(
    fun: Callable[P, Tensor[FT]], argnums: Argnums = 0, has_aux: Lit[False] = False, holomorphic: Lit[False] = False
) -> Callable[P, Any]: ...
@overload
def grad(
    fun: Callable[P, tuple[Tensor[FT], AUX]], argnums: Argnums = 0, *, has_aux: Lit[True],
    holomorphic: Lit[False] = False,
) -> Callable[P, tuple[Any, AUX]]: ...
@overload
def grad(
    fun: Callable[P, tuple[Tensor[FT], AUX]], argnums: Argnums, has_aux: Lit[True], holomorphic: Lit[False] = False
) -> Callable[P, tuple[Any, AUX]]: ...
@overload
def grad(
    fun: Callable[Concatenate[Tensor[CT, Unpack[S_]], P], Tensor[CT2]], argnums: Lit[0] = 0,
    has_aux: Lit[False] = False, *, holomorphic: Lit[True],
) -> Callable[Concatenate[Tensor[CT, Unpack[S_]], P], Tensor[CT, Unpack[S_]]]: ...
@overload
def grad(
    fun: Callable[P, Tensor[CT2] | tuple[Tensor[CT2], Any]], argnums: Argnums = 0, has_aux: bool = False, *,
    holomorphic: Lit[True],
) -> Callable[..., Any]: ...
@overload
def grad(
    fun: Callable[P, Tensor[FT] | tuple[Tensor[FT], Any]], argnums: Argnums = 0, has_aux: bool = False,
    holomorphic: Lit[False] = False,
) -> Callable[..., Any]: ...
def grad(
    fun: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    Gradients come back in the structure (and with the types, dim names included) of the arguments; with
    ``has_aux`` the function returns ``(value, aux)`` and the gradient function returns ``(grad, aux)``. The
    gradient of a real function of a complex ``z`` is the conjugate of ``df/dx + i df/dy``, as in JAX. With
    ``holomorphic=True`` the function maps complex inputs to a complex scalar and the result is its complex
    derivative ``f'(z)`` (meaningful where ``f`` is holomorphic; nothing checks that it is).
    """

    def body(*args: Any, **kwargs: Any) -> Any:
        value, grads = _value_and_grad_staged(fun, argnums, has_aux, holomorphic, "grad", args, kwargs)
        return (grads, value[1]) if has_aux else grads

    return as_program(body, fun, f"grad_{function_name(fun)}")


# ------------------------------------------------------------------------------------------ jvp / vjp


def _run(name: str, body: Callable[..., Any], *args: Any) -> Any:
    """Run a staged ``body`` now: inline while staging, else as a one-off Program.

    The Program is not kept: a function may read globals that change between calls, and a kept Program would
    reuse what it staged the first time. Store ``grad(f)`` (or stage a whole step with ``@ts.program``) to
    compile once.
    """
    if is_staging():
        return body(*args)
    return Program(body, name=name, check_annotations=False)(*args)


def _tangent_atoms(primals: Sequence[Any], tangents: Sequence[Any], sub: Subgraph, op: str, what: str) -> list[Atom]:
    p_tree = pytree.structure(tuple(primals))
    t_leaves, t_tree = pytree.flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TransformError(f"{what} have structure {t_tree!r}, the primals {p_tree!r}", op, user_location())
    atoms = []
    for i, leaf in enumerate(t_leaves):
        expected = sub.graph.inputs[i].aval
        atom = _as_atom(leaf, expected.dtype)
        if not atom.aval.same_layout(expected):
            raise TransformError(
                f"{what[:-1]} for {sub.leaf_names[i]} is {atom.aval}, but the primal is {expected}", op, user_location()
            )
        atoms.append(S.reshape(atom, expected.shape, expected.dims) if atom.aval != expected else atom)
    return atoms


def _as_atom(x: Any, dtype: np.dtype[Any]) -> Atom:
    """A tangent or cotangent operand; Python scalars (weakly typed) take the primal's dtype."""
    if isinstance(x, WeakTraced) and x.aval.dtype != dtype:
        return x.as_dtype(dtype)
    if isinstance(x, Traced):
        return x.atom
    if type(x) in (float, int, bool):
        return literal(x, dtype)
    from .trace import to_atom

    return to_atom(x)


def _jvp_staged(
    fun: Callable[..., Any], primals: tuple[Any, ...], tangents: tuple[Any, ...], op: str = "jvp"
) -> tuple[Any, Any]:
    nums = tuple(range(len(primals)))
    names = param_names(fun)
    _check_leaves(primals, nums, names, op)
    sub = stage_subgraph(fun, primals, {}, nums, names)
    wants = [i < sub.num_leaf_inputs for i in range(len(sub.graph.inputs))]
    for i, want in enumerate(wants):
        if want and not _dt.is_inexact(sub.graph.inputs[i].aval.dtype):
            wants[i] = False  # integer inputs carry no tangent; their tangents are ignored
    t_atoms = _tangent_atoms(primals, tangents, sub, op, "tangents")
    graph, _ = jvp_graph(sub.graph, wants)
    results = inline(graph, [*sub.atoms, *(t for t, w in zip(t_atoms, wants) if w)])
    n_out = len(sub.graph.outputs)
    return sub.outputs(results[:n_out]), sub.outputs(results[n_out:])


# jvp / vjp: tangents must have the primals' types (checked per argument, any number of them); vjp's pullback
# takes a cotangent of the output's type and gives one of each primal's type. Lists of primals are not typed.
@overload
def jvp(fun: Callable[[Unpack[Ts]], A], primals: tuple[Unpack[Ts]], tangents: tuple[Unpack[Ts]]) -> tuple[A, A]: ...
@overload
def jvp(fun: Callable[..., A], primals: list[Any], tangents: Sequence[Any]) -> tuple[A, A]: ...
def jvp(fun: Callable[..., A], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[A, A]:
    """Forward mode: ``(fun(*primals), d fun(primals) . tangents)``, tangents in the structure of the primals."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TransformError("jvp(f, primals, tangents) takes tuples of primals and tangents", "jvp", user_location())
    return _run("jvp", lambda p, t: _jvp_staged(fun, tuple(p), tuple(t)), tuple(primals), tuple(tangents))  # type: ignore[no-any-return]


def linearize(fun: Callable[..., A], *primals: Any) -> tuple[A, Callable[..., A]]:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``."""
    out = _call(fun, primals)

    def f_jvp(*tangents: Any) -> A:
        staged = lambda p, t: _jvp_staged(fun, tuple(p), tuple(t), "linearize")  # noqa: E731
        with replaying():  # ``fun``'s effects ran with ``out``
            return _run("linearize", staged, tuple(primals), tuple(tangents))[1]  # type: ignore[no-any-return]

    return out, f_jvp


def _call(fun: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return _run(function_name(fun), lambda a: fun(*a), args)


def _vjp_staged(fun: Callable[..., Any], primals: tuple[Any, ...], cts: Any) -> tuple[Any, ...]:
    op = "vjp"
    nums = tuple(range(len(primals)))
    names = param_names(fun)
    _check_leaves(primals, nums, names, op)
    sub = stage_subgraph(fun, primals, {}, nums, names)
    wants = [i < sub.num_leaf_inputs and _dt.is_inexact(v.aval.dtype) for i, v in enumerate(sub.graph.inputs)]
    ct_leaves, ct_tree = pytree.flatten(cts)
    if ct_tree != sub.out_tree:
        raise TransformError(
            f"the cotangent has structure {ct_tree!r}, but the function's output has {sub.out_tree!r}", op,
            user_location(),
        )
    ct_atoms = []
    for leaf, out in zip(ct_leaves, sub.graph.outputs):
        atom = _as_atom(leaf, out.aval.dtype)
        if not atom.aval.same_layout(out.aval):
            raise TransformError(f"the cotangent {atom.aval} does not match the output {out.aval}", op, user_location())
        ct_atoms.append(atom)
    graph = vjp_graph(sub.graph, wants)
    results = inline(graph, [*sub.atoms, *ct_atoms])
    n_out = len(sub.graph.outputs)
    it = iter(results[n_out:])
    per_leaf: list[Any] = []
    for i in range(sub.num_leaf_inputs):
        var = sub.graph.inputs[i]
        per_leaf.append(wrap(next(it)) if wants[i] else wrap(S.zeros(var.aval)))
    return tuple(_per_arg(sub, nums, per_leaf))


def vjp(fun: Callable[[Unpack[Ts]], A], *primals: Unpack[Ts]) -> tuple[A, Callable[[A], tuple[Unpack[Ts]]]]:
    """``(fun(*primals), vjp_fn)`` where ``vjp_fn(ct)`` returns one cotangent per primal, in its structure."""
    out = _call(fun, primals)

    def vjp_fn(ct: A) -> tuple[Unpack[Ts]]:
        with replaying():  # ``fun``'s effects ran with ``out``
            return _run("vjp", lambda p, c: _vjp_staged(fun, tuple(p), c), primals, ct)  # type: ignore[no-any-return]

    return out, vjp_fn


# ------------------------------------------------------------------------------------------------ jacobians


def _basis(aval: Aval) -> Atom:
    """The standard basis of ``aval``'s space, stacked on a leading axis: shape ``(size, *aval.shape)``.

    Built from iotas on the device rather than as a constant, which would embed size² values in the program.
    """
    from .staging.primitives import elementwise as E
    from .staging.primitives.slicing import iota

    n = aval.size
    index = np.dtype(np.int32)
    eye = E.convert(E.eq(iota(index, (n, n), 0), iota(index, (n, n), 1)), aval.dtype)
    return S.reshape(eye, (n, *aval.shape), (None, *aval.dims))


def _to_jacobian(rows: Atom, out: Aval, inp: Aval, rows_lead_out: bool) -> Atom:
    """Reshape vmapped JVPs (``(in.size, *out)``) or VJPs (``(out.size, *in)``) to ``(*out, *in)``."""
    if rows_lead_out:  # VJP rows: (out.size, *in) is already (*out, *in) in row-major order
        flat = rows
    else:  # JVP columns: (in.size, *out) -> (*out, in.size)
        flat = S.moveaxis(rows, 0, rows.aval.ndim - 1)
    return S.reshape(flat, (*out.shape, *inp.shape), (*out.dims, *inp.dims))


def _jacobian(
    fun: Callable[..., Any], argnums: Argnums, forward: bool, op: str, holomorphic: bool
) -> Program[..., Any]:
    """As JAX: forward mode takes real inputs and reverse mode gives real outputs' rows, unless ``holomorphic``
    (complex inputs and outputs, and the Jacobian of complex derivatives); one real column or row of a complex map
    alone would be half its derivative."""
    from .batching import vmap

    def body(*args: Any, **kwargs: Any) -> Any:
        names = param_names(fun)
        nums = _argnums(argnums, len(args), op)
        _check_leaves(args, nums, names, op)
        sub = stage_subgraph(fun, args, kwargs, nums, names)
        fname = function_name(fun)
        kind: Inputs = "complex" if holomorphic else "real" if forward else "inexact"
        wants = _check_differentiable(sub, nums, op, kind, fname)
        if holomorphic or not forward:
            for k in range(len(sub.graph.outputs)):
                _check_output_kind(sub, k, holomorphic, op, fname)
        inputs = [i for i, w in enumerate(wants) if w]
        outs = list(sub.graph.outputs)
        # blocks[k][j]: d output k / d input j
        blocks: list[list[Atom]] = [[] for _ in outs]
        if forward:
            for j in inputs:
                only_j = [i == j for i in range(len(wants))]
                tangent_graph, _ = jvp_graph(sub.graph, only_j)

                def push(t: Any, g: Any = tangent_graph) -> Any:
                    res = inline(g, [*sub.atoms, t.atom])
                    return tuple(wrap(a) for a in res[len(outs):])

                cols = vmap(push)(wrap(_basis(sub.graph.inputs[j].aval)))
                for k, col in enumerate(cols):
                    blocks[k].append(_to_jacobian(col.atom, outs[k].aval, sub.graph.inputs[j].aval, False))
        else:
            for k, out in enumerate(outs):
                only_k = [m == k for m in range(len(outs))]
                ct_graph = vjp_graph(sub.graph, wants, only_k)

                def pull(c: Any, g: Any = ct_graph) -> Any:
                    res = inline(g, [*sub.atoms, c.atom])
                    return tuple(wrap(a) for a in res[len(outs):])

                rows = vmap(pull)(wrap(_basis(out.aval)))
                for j, row in zip(inputs, rows):
                    blocks[k].append(_to_jacobian(row.atom, out.aval, sub.graph.inputs[j].aval, True))
        per_out = [_select_args(_per_arg(sub, nums, [wrap(b) for b in blocks[k]]), argnums) for k in range(len(outs))]
        return pytree.unflatten(sub.out_tree, per_out)

    return as_program(body, fun, f"{op}_{function_name(fun)}")


def jacfwd(fun: Callable[..., Any], argnums: Argnums = 0, holomorphic: bool = False) -> Program[..., Any]:
    """The Jacobian by forward mode (one JVP per input element, vectorized with vmap): shape ``(*out, *in)``.

    Inputs must be real; ``holomorphic=True`` takes complex inputs and outputs and gives the complex derivatives.
    """
    return _jacobian(fun, argnums, True, "jacfwd", holomorphic)


def jacrev(fun: Callable[..., Any], argnums: Argnums = 0, holomorphic: bool = False) -> Program[..., Any]:
    """The Jacobian by reverse mode (one VJP per output element, vectorized with vmap): shape ``(*out, *in)``.

    Outputs must be real; ``holomorphic=True`` takes complex inputs and outputs and gives the complex derivatives.
    """
    return _jacobian(fun, argnums, False, "jacrev", holomorphic)


def hessian(fun: Callable[..., Any], argnums: Argnums = 0, holomorphic: bool = False) -> Program[..., Any]:
    """The Hessian of a scalar function: ``jacfwd(jacrev(fun))``, whose errors name ``hessian``."""
    return _jacobian(_jacobian(fun, argnums, False, "hessian", holomorphic), argnums, True, "hessian", holomorphic)
