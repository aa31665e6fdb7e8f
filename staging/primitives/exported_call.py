"""``exported_call``: a call of an exported program (``ts.export``) from its StableHLO, inside another program.

The callee is opaque: its graph is gone, only its module text per platform remains (``ExportedModule``). So it
has no derivative (both derivative rules raise when one would flow through it, as JAX's do for a function
exported without ``vjp_order``), and a batched call runs the callee once per batch member (a ``scan`` over the
members; JAX refuses a batched call unless the function was exported with a symbolic batch dimension).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..builder import bind, building
from ..errors import ShapeError, TransformError
from ..ir import Atom, Aval, Var, format_dims
from ..primitive import Primitive
from ..zeros import def_no_derivative
from ..dtypes import short_name
from .subgraph_edits import batch_size_and_name


class ExportedModule:
    """An exported program's types and its StableHLO module text per platform. Compared by identity: one
    object per ``Exported`` (its modules are never read for equality)."""

    __slots__ = ("fun_name", "in_avals", "out_avals", "modules")

    def __init__(
        self, fun_name: str, in_avals: Sequence[Aval], out_avals: Sequence[Aval], modules: Mapping[str, str]
    ) -> None:
        self.fun_name = fun_name
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self.modules = dict(modules)

    def __repr__(self) -> str:
        return f"<exported {self.fun_name} for {', '.join(self.modules)}>"


exported_call_p = Primitive("exported_call", multiple_results=True)


def _typed(aval: Aval) -> str:
    return f"{short_name(aval.dtype)}[{format_dims(aval.shape, aval.dims)}]"


@exported_call_p.def_shape
def _exported_call_shape(*args: Aval, exported: ExportedModule) -> tuple[Aval, ...]:
    """The arguments must have the exported types (shape and dtype; dim names are not part of the artifact's
    contract, so a caller's names need not match the exporter's)."""
    expected = exported.in_avals
    if len(args) != len(expected):
        raise ShapeError(
            f"{exported.fun_name} was exported for {len(expected)} arrays, got {len(args)}", "exported_call"
        )
    for i, (got, want) in enumerate(zip(args, expected)):
        if not got.same_layout(want):
            raise ShapeError(
                f"argument {i} of {exported.fun_name} must be {_typed(want)} (the exported type), got {_typed(got)}",
                "exported_call",
            )
    return exported.out_avals


def _no_derivative(exported: ExportedModule) -> TransformError:
    return TransformError(
        f"{exported.fun_name} is an exported program, which carries no derivative: differentiate the function "
        "before exporting it (export ts.grad(f) or ts.vjp of it), or ts.stop_gradient its arguments",
        "exported_call",
    )


def_no_derivative(exported_call_p, lambda params: _no_derivative(params["exported"]))


@exported_call_p.def_batch
def _exported_call_batch(
    args: Sequence[Atom], dims: Sequence[int | None], *, exported: ExportedModule
) -> tuple[list[Atom], list[int | None]]:
    """One call per batch member: a scan whose body calls the callee on the member's slices (unbatched
    arguments are the scan's constants), stacking each result along axis 0."""
    from .control_flow import scan, unstacked

    size, _ = batch_size_and_name(args, dims)
    consts = [a for a, d in zip(args, dims) if d is None]
    xs = [a for a, d in zip(args, dims) if d is not None]
    xs_axes = [d for d in dims if d is not None]
    # The body's operands in the call's order: constants as they are, batched arguments one member's slice.
    operands = [Var(a.aval if d is None else unstacked(a.aval, d)) for a, d in zip(args, dims)]
    with building() as builder:
        results = bind(exported_call_p, *operands, exported=exported)
    const_vars = [v for v, d in zip(operands, dims) if d is None]
    member_vars = [v for v, d in zip(operands, dims) if d is not None]
    body = builder.graph([*const_vars, *member_vars], list(results))
    outs = scan(consts, [], xs, body, size, False, xs_axes=xs_axes)
    return list(outs), [0] * len(outs)


def exported_call(args: Sequence[Atom], exported: ExportedModule) -> list[Atom]:
    return list(bind(exported_call_p, *args, exported=exported))
