"""``vmap``: map a function over an axis of its arguments by batching its staged graph.

``vmap(f)`` is a Program. Whenever it runs (called on concrete arrays, which stages and compiles it, or called
inside another staged function, which inlines it) it stages ``f`` once on per-example types, closing over any outer
staged values, and emits the batched form of that graph (``staging.transforms.batching``) in place. Nesting,
``vmap(grad(f))`` and ``grad(vmap(f))`` need nothing more: each layer only ever sees ordinary primitives.

The typed form ``vmap(f, Batch)`` names the new axis after the Dim class ``Batch``: batched values carry that
dim name, so shape errors inside say ``(Batch=128, In=784)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias, TypeVar, overload

import numpy as np
from typing_extensions import TypeVarTuple, Unpack

from . import pytree
from .batched_signature import batched_signature
from .dims import Dim
from .dtypes import DType
from .program import Program
from .staging.axes import axis_frame
from .staging.errors import TransformError
from .staging.ir import Atom, Aval, DimName, SourceLoc
from .staging.primitives import structural as S
from .staging.source import user_location
from .staging.transforms.batching import BatchDim, batch_emit, move_batch_axis
from .tensor import Tensor
from .trace import WeakTraced, to_atom, trace_flat, wrap

R = TypeVar("R")
B = TypeVar("B", bound=Dim)
D1 = TypeVar("D1", bound=DType)
D2 = TypeVar("D2", bound=DType)
D3 = TypeVar("D3", bound=DType)
DR = TypeVar("DR", bound=DType)
S1 = TypeVarTuple("S1")
S2 = TypeVarTuple("S2")
S3 = TypeVarTuple("S3")
SR = TypeVarTuple("SR")
U1 = TypeVar("U1")  # an argument vmap does not map (in_axes None): its type is unchanged
U2 = TypeVar("U2")
_0: TypeAlias = Literal[0]
AxisSpec: TypeAlias = "int | None | type[Dim]"
_DEFAULT: Any = object()


# Static types of the typed form ``vmap(f, Batch)``: for a function of one, two or three Tensor arguments that
# returns a Tensor, with the mapped arguments at axis 0 (``in_axes`` 0, or a tuple of 0 / None per argument) and
# ``out_axes=0``, the mapped parameters and the result gain the leading ``Batch`` dim:
#     Callable[[Tensor[DT, *S]], Tensor[DR, *SR]] + type[B] -> Program[[Tensor[DT, B, *S]], Tensor[DR, B, *SR]]
# (a ParamSpec cannot transform parameters, hence one overload per arity and in_axes pattern). Everything else
# (other axes, pytrees, several results, no Dim) falls through to the untyped overloads, which return
# ``Program[..., Any]``.
@overload
def vmap(
    f: Callable[[Tensor[D1, Unpack[S1]]], Tensor[DR, Unpack[SR]]], axis: type[B], /, *,
    in_axes: _0 | tuple[_0] = 0, out_axes: _0 = 0, axis_size: int | None = None,
) -> Program[[Tensor[D1, B, Unpack[S1]]], Tensor[DR, B, Unpack[SR]]]: ...
@overload
def vmap(
    f: Callable[[Tensor[D1, Unpack[S1]], Tensor[D2, Unpack[S2]]], Tensor[DR, Unpack[SR]]], axis: type[B], /, *,
    in_axes: _0 | tuple[_0, _0] = 0, out_axes: _0 = 0, axis_size: int | None = None,
) -> Program[[Tensor[D1, B, Unpack[S1]], Tensor[D2, B, Unpack[S2]]], Tensor[DR, B, Unpack[SR]]]: ...
@overload
def vmap(
    f: Callable[[U1, Tensor[D2, Unpack[S2]]], Tensor[DR, Unpack[SR]]], axis: type[B], /, *,
    in_axes: tuple[None, _0], out_axes: _0 = 0, axis_size: int | None = None,
) -> Program[[U1, Tensor[D2, B, Unpack[S2]]], Tensor[DR, B, Unpack[SR]]]: ...
@overload
def vmap(
    f: Callable[[Tensor[D1, Unpack[S1]], U2], Tensor[DR, Unpack[SR]]], axis: type[B], /, *,
    in_axes: tuple[_0, None], out_axes: _0 = 0, axis_size: int | None = None,
) -> Program[[Tensor[D1, B, Unpack[S1]], U2], Tensor[DR, B, Unpack[SR]]]: ...
@overload
def vmap(
    f: Callable[[Tensor[D1, Unpack[S1]], Tensor[D2, Unpack[S2]], Tensor[D3, Unpack[S3]]], Tensor[DR, Unpack[SR]]],
    axis: type[B], /, *, in_axes: _0 | tuple[_0, _0, _0] = 0, out_axes: _0 = 0, axis_size: int | None = None,
) -> Program[
    [Tensor[D1, B, Unpack[S1]], Tensor[D2, B, Unpack[S2]], Tensor[D3, B, Unpack[S3]]], Tensor[DR, B, Unpack[SR]]
]: ...
@overload
def vmap(
    f: Callable[[U1, Tensor[D2, Unpack[S2]], Tensor[D3, Unpack[S3]]], Tensor[DR, Unpack[SR]]], axis: type[B], /, *,
    in_axes: tuple[None, _0, _0], out_axes: _0 = 0, axis_size: int | None = None,
) -> Program[[U1, Tensor[D2, B, Unpack[S2]], Tensor[D3, B, Unpack[S3]]], Tensor[DR, B, Unpack[SR]]]: ...
@overload
def vmap(
    f: Callable[[U1, U2, Tensor[D3, Unpack[S3]]], Tensor[DR, Unpack[SR]]], axis: type[B], /, *,
    in_axes: tuple[None, None, _0], out_axes: _0 = 0, axis_size: int | None = None,
) -> Program[[U1, U2, Tensor[D3, B, Unpack[S3]]], Tensor[DR, B, Unpack[SR]]]: ...
@overload
def vmap(
    f: Callable[..., R], /, *, in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None,
    axis_name: str | type[Dim] | None = None,
) -> Program[..., Any]: ...
@overload
def vmap(
    f: Callable[..., R], axis: type[Dim], /, *, in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None,
) -> Program[..., Any]: ...
@overload
def vmap(
    f: Callable[..., R], in_axes: Any, /, out_axes: Any = 0, *, axis_size: int | None = None,
    axis_name: str | type[Dim] | None = None,
) -> Program[..., Any]: ...
def vmap(
    f: Callable[..., Any],
    axis: Any = _DEFAULT,
    /,
    out_axes: Any = 0,
    *,
    in_axes: Any = _DEFAULT,
    axis_size: int | None = None,
    axis_name: str | type[Dim] | None = None,
) -> Program[..., Any]:
    """Vectorize ``f`` over a new leading (or ``in_axes``-chosen) axis of its arguments.

    ``in_axes``: an int, None (not mapped), a Dim class (the axis of that name), or a tuple with one pytree prefix
    of such entries per positional argument; keyword arguments are mapped along axis 0. ``out_axes``: a pytree
    prefix of ints / None for the outputs. ``axis_size`` is needed only when no argument is mapped.
    ``vmap(f, Batch)`` names the mapped axis after the Dim class ``Batch`` (whose fixed size, if any, is checked).
    """
    if isinstance(axis, type) and issubclass(axis, Dim):
        if axis_name is not None:
            raise TypeError("vmap(f, Dim, ...) names the axis already; do not also pass axis_name")
        axis_name = axis
    elif axis is not _DEFAULT:
        if in_axes is not _DEFAULT:
            raise TypeError("vmap() got in_axes both positionally and as a keyword")
        in_axes = axis
    if in_axes is _DEFAULT:
        in_axes = 0
    name: DimName = axis_name.__name__ if isinstance(axis_name, type) else axis_name
    if isinstance(axis_name, type) and axis_name.size is not None:
        if axis_size is not None and axis_size != axis_name.size:
            raise TypeError(f"vmap(): axis_size={axis_size} but dim {name} has size {axis_name.size}")
        axis_size = axis_name.size
    _check_spec(in_axes, "in_axes", allow_dims=True)
    _check_spec(out_axes, "out_axes", allow_dims=False)
    if not callable(f):
        raise TypeError(f"vmap() needs a callable, got {type(f).__name__}")
    body = _Batched(f, in_axes, out_axes, axis_size, name)
    label = f"vmap({getattr(f, 'name', None) or getattr(f, '__name__', 'function')})"
    typed = batched_signature(f, in_axes, out_axes, axis_name) if isinstance(axis_name, type) else None
    if typed is None:
        return Program(body, name=label, check_annotations=False)

    # The typed form: a function carrying f's annotations with the batch dim added, so the Program binds and
    # checks dims from them (and ``stage(Batch=..., ...)`` works without examples).
    def batched(*args: Any, **kwargs: Any) -> Any:
        return body(*args, **kwargs)

    batched.__signature__, batched.__annotations__ = typed  # type: ignore[attr-defined]
    batched.__name__ = batched.__qualname__ = label
    return Program(batched, name=label)


def _check_spec(spec: Any, what: str, allow_dims: bool) -> None:
    """Reject specs that cannot be axis prefixes early, at the vmap(...) call, rather than at the first call."""
    for leaf in pytree.leaves(spec, is_leaf=lambda x: x is None):
        ok = leaf is None or (isinstance(leaf, int) and not isinstance(leaf, bool))
        ok = ok or (allow_dims and isinstance(leaf, type) and issubclass(leaf, Dim))
        if not ok:
            kinds = "ints, None or Dim classes" if allow_dims else "ints or None"
            raise TypeError(f"vmap(): {what} must be a pytree of {kinds}, got {leaf!r}")


class _Batched:
    """The staged body of ``vmap(f)``: runs only while staging (Program stages it for concrete calls)."""

    # Slots, not a __dict__: Program copies its function's __dict__ onto itself (functools.update_wrapper).
    __slots__ = ("f", "in_axes", "out_axes", "size", "name")

    def __init__(self, f: Callable[..., Any], in_axes: Any, out_axes: Any, size: int | None, name: DimName):
        self.f = f
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.size = size
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        loc = user_location()
        leaves, treedef = pytree.flatten((args, kwargs))
        where = _leaf_paths(treedef, _param_names(self.f))
        specs = _in_specs(self.in_axes, args, kwargs, loc)
        axes = [_resolve_axis(spec, leaf, path, loc) for spec, leaf, path in zip(specs, leaves, where)]
        size = _axis_size(leaves, axes, where, self.size, loc)
        name = _batch_name(leaves, axes, where, self.name, loc)

        dynamic = [_is_array(x) and not (_is_python_scalar(x) and a is None) for x, a in zip(leaves, axes)]
        # A weak scalar (a Python float passed to an enclosing program) is staged from its float64 value.
        atoms = [(x.most_precise if isinstance(x, WeakTraced) else to_atom(x)) if d else None
                 for x, d in zip(leaves, dynamic)]
        example_avals = [_unbatched(a.aval, ax) if a is not None else None for a, ax in zip(atoms, axes)]
        weak = [isinstance(x, WeakTraced) for x in leaves]
        with axis_frame(name, size, "vmap"):  # collectives may name the axis; batch_emit below walks it
            traced = trace_flat(self.f, treedef, leaves, dynamic, example_avals, weak)
            traced.pass_ranges_to([x for x, d in zip(leaves, dynamic) if d])

            in_atoms = [_named(a, ax, name) for a, ax in zip(atoms, axes) if a is not None]
            in_dims = [ax for a, ax in zip(atoms, axes) if a is not None]
            in_atoms += list(traced.closure)
            in_dims += [None] * len(traced.closure)
            outs, out_dims = batch_emit(traced.graph, in_atoms, in_dims, size, name)

        out_paths = _leaf_paths(traced.out_tree, [], root="output")
        targets = _out_targets(self.out_axes, traced.out_tree, loc)
        results = []
        for out, dim, target, path in zip(outs, out_dims, targets, out_paths):
            target = _normalize_out_axis(target, out.aval.ndim - (dim is not None), path, loc)
            if target is None and dim is not None:
                raise TransformError(
                    f"[vmap] {path} ({out.aval}) depends on the mapped arguments, but its out_axes is None", None, loc
                )
            moved = move_batch_axis(out, dim, target, size, name)
            results.append(wrap(_named(moved, target, name)))
        return pytree.unflatten(traced.out_tree, results)


# ------------------------------------------------------------------------------------------------ in_axes


def _is_python_scalar(x: object) -> bool:
    return type(x) in (int, float, bool)


def _is_array(x: object) -> bool:
    return isinstance(x, (Tensor, np.ndarray, np.generic)) or _is_python_scalar(x)


def _leaf_aval(x: Any) -> Aval:
    return x.aval if isinstance(x, Tensor) else to_atom(x).aval


def _in_specs(in_axes: Any, args: tuple[Any, ...], kwargs: dict[str, Any], loc: SourceLoc | None) -> list[Any]:
    """One axis spec per leaf of ``(args, kwargs)``; keyword arguments are always mapped along axis 0."""
    kw_specs = [0] * len(pytree.leaves(kwargs))
    if not isinstance(in_axes, (tuple, list)):
        return [in_axes] * len(pytree.leaves(args)) + kw_specs
    if len(in_axes) != len(args):
        raise TransformError(
            f"[vmap] in_axes has {len(in_axes)} entries but the function was called with {len(args)} positional "
            f"arguments{_arg_types(args)}",
            None,
            loc,
        )
    specs: list[Any] = []
    for i, (prefix, arg) in enumerate(zip(in_axes, args)):
        specs += _broadcast_prefix(prefix, arg, f"in_axes[{i}]", f"argument {i}", loc)
    return specs + kw_specs


def _arg_types(args: tuple[Any, ...]) -> str:
    """`` (f32[N=3], a tuple)``: what each positional argument is, for messages."""
    kinds = [str(_leaf_aval(a)) if _is_array(a) else f"a {type(a).__name__}" for a in args]
    return f" ({', '.join(kinds)})" if kinds else ""


def _is_spec_leaf(x: object) -> bool:
    return x is None or isinstance(x, (int, type))


def _broadcast_prefix(prefix: Any, tree: Any, spec_where: str, tree_where: str, loc: SourceLoc | None) -> list[Any]:
    """The spec of every leaf of ``tree``, where ``prefix`` matches ``tree``'s structure down to its own leaves."""
    if _is_spec_leaf(prefix):
        return [prefix] * len(pytree.leaves(tree))
    pre_children, pre_def = pytree.flatten(prefix, is_leaf=lambda x: x is not prefix)
    children, tree_def = pytree.flatten(tree, is_leaf=lambda x: x is not tree)
    if pre_def != tree_def:
        raise TransformError(
            f"[vmap] {spec_where} must be an axis or a prefix of the structure of {tree_where}: it is "
            f"{pre_def!r} but the value is {tree_def!r}",
            None,
            loc,
        )
    out: list[Any] = []
    for k, (p, c) in enumerate(zip(pre_children, children)):
        out += _broadcast_prefix(p, c, f"{spec_where}[{k}]", f"{tree_where}[{k}]", loc)
    return out


def _resolve_axis(spec: AxisSpec, leaf: Any, where: str, loc: SourceLoc | None) -> BatchDim:
    """The mapped axis of one argument leaf (None for unmapped), checked against its rank."""
    if spec is None:
        return None
    if not _is_array(leaf):
        raise TransformError(
            f"[vmap] {where} is a {type(leaf).__name__}, not an array, so it cannot be mapped; give it in_axes None",
            None,
            loc,
        )
    aval = _leaf_aval(leaf)
    if isinstance(spec, type):
        dim = spec.__name__
        if dim not in aval.dims:
            raise TransformError(f"[vmap] in_axes names dim {dim}, which {where} ({aval}) does not have", None, loc)
        return aval.dims.index(dim)
    if not -aval.ndim <= spec < aval.ndim:
        raise TransformError(
            f"[vmap] in_axes {spec} is out of range for {where}, which has rank {aval.ndim} ({aval})", None, loc
        )
    return spec % aval.ndim


def _axis_size(
    leaves: Sequence[Any], axes: Sequence[BatchDim], where: Sequence[str], given: int | None, loc: SourceLoc | None
) -> int:
    mapped = [(w, _leaf_aval(x), a) for x, a, w in zip(leaves, axes, where) if a is not None]
    found = {aval.shape[a] for _, aval, a in mapped}
    if given is not None:
        found.add(given)
    if len(found) > 1:
        listing = ", ".join(f"{w} ({aval}) has size {aval.shape[a]} along axis {a}" for w, aval, a in mapped)
        extra = f" and axis_size={given}" if given is not None else ""
        raise TransformError(f"[vmap] mapped axes have different sizes: {listing}{extra}", None, loc)
    if not found:
        raise TransformError(
            "[vmap] no argument is mapped (every in_axes is None), so the axis size is unknown; pass axis_size=",
            None,
            loc,
        )
    return found.pop()


def _batch_name(
    leaves: Sequence[Any], axes: Sequence[BatchDim], where: Sequence[str], given: DimName, loc: SourceLoc | None
) -> DimName:
    """The dim name of the mapped axis: the one vmap was given, or the one the mapped arguments agree on."""
    named = [(w, _leaf_aval(x).dims[a]) for x, a, w in zip(leaves, axes, where) if a is not None]
    named = [(w, n) for w, n in named if n is not None]
    for w, n in named:
        expected = given if given is not None else named[0][1]
        if n != expected:
            source = f"vmap's axis is {given}" if given is not None else f"{named[0][0]} maps dim {named[0][1]}"
            raise TransformError(f"[vmap] {w} maps dim {n} but {source}", None, loc)
    return given if given is not None else (named[0][1] if named else None)


def _unbatched(aval: Aval, axis: BatchDim) -> Aval:
    if axis is None:
        return aval
    keep = [a for a in range(aval.ndim) if a != axis]
    return Aval(tuple(aval.shape[a] for a in keep), aval.dtype, tuple(aval.dims[a] for a in keep))


def _named(x: Atom, axis: BatchDim, name: DimName) -> Atom:
    """Give the batch axis its dim name (a same-shape reshape, which XLA drops) so types inside say ``Batch=n``."""
    if axis is None or name is None or x.aval.dims[axis] == name:
        return x
    dims = list(x.aval.dims)
    dims[axis] = name
    return S.reshape(x, x.aval.shape, dims)


# ----------------------------------------------------------------------------------------------- out_axes


def _out_targets(out_axes: Any, out_tree: pytree.TreeDef, loc: SourceLoc | None) -> list[Any]:
    if _is_spec_leaf(out_axes):
        return [out_axes] * out_tree.num_leaves
    skeleton = pytree.unflatten(out_tree, [object() for _ in range(out_tree.num_leaves)])
    return _broadcast_prefix(out_axes, skeleton, "out_axes", "the result", loc)


def _normalize_out_axis(target: Any, example_rank: int, where: str, loc: SourceLoc | None) -> BatchDim:
    if target is None:
        return None
    rank = example_rank + 1
    if not -rank <= target < rank:
        raise TransformError(
            f"[vmap] out_axes {target} is out of range for {where}, which has rank {rank} once batched", None, loc
        )
    return int(target) % rank


# ------------------------------------------------------------------------------------------------- naming


def _param_names(f: Callable[..., Any]) -> list[str]:
    fn = f.fn if isinstance(f, Program) else f
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _leaf_paths(treedef: pytree.TreeDef, names: Sequence[str], root: str = "") -> list[str]:
    """Readable names of the leaves: ``argument x``, ``argument params['w']``, ``output[1]``."""
    if root:
        return pytree.leaf_paths(treedef, root)
    args_def, kwargs_def = treedef.children
    out: list[str] = []
    for i, child in enumerate(args_def.children):
        out += pytree.leaf_paths(child, f"argument {names[i] if i < len(names) else f'#{i}'}")
    for key, child in zip(kwargs_def.aux, kwargs_def.children):  # type: ignore[call-overload]
        out += pytree.leaf_paths(child, f"argument {key}")
    return out


__all__ = ["vmap"]
