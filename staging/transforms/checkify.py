"""checkify: runtime errors as values (JAX's ``jax.experimental.checkify``), a graph -> graph transform.

The walker re-emits a graph's equations in order and threads an *error state* through them: an i32 ``code`` (0
while nothing failed, else the number of the first *site* that failed) and, per site, the values its message is
formatted with (its payload). A site is one place an error can be recorded: a ``check`` equation, or an
automatic check an equation's rule adds (a NaN made from clean operands, an integer division by zero, an index
out of bounds). Sites are numbered in program order, and a site only writes the code while it is still 0, so the
first error the run meets wins. Per-primitive behaviour lives in ``RULES``; equations without a rule are copied
and, for NaN checks, their floating-point results checked as a whole.

Nested graphs are checkified into graphs that take the code first and return the code and their sites' payloads
before their results (``Checkify.graph``): cond branches return them (zeros for the sites of other branches),
scan and while loops carry them, keeping each site's payload from the step where the code was set. A while
loop's condition is evaluated once before the loop and at the end of each body step, so checks in it work too.
Primitives with nested graphs but no rule (custom_jvp/vjp calls, linear solves, ...) refuse a ``check`` inside.

The result is the code, the payloads of every site and the outputs, plus the table of ``Site``s that says what
each code means; the front end (``dsl/experimental/checkify.py``) turns them into messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import dtypes
from ..builder import bind, building, inline, located, rebind
from ..errors import TransformError
from ..ir import Atom, Aval, Equation, Graph, Literal, SourceLoc, Var, literal
from ..primitive import Primitive, nested_graphs
from ..primitives import autodiff as AD
from ..primitives import check as K
from ..primitives import complex_parts as CP
from ..primitives import control_flow as CF
from ..primitives import elementwise as E
from ..primitives import gather_scatter as G
from ..primitives import reductions as R
from ..primitives import remat as M
from ..primitives import slicing as SL
from ..primitives import structural as S
from ..primitives.subgraph_edits import split

I32 = dtypes.DEFAULT_INT
I64 = np.dtype(np.int64)
CODE_AVAL = Aval((), I32)

# The error kinds; ``errors`` of a transform is a set of them.
USER, NAN, DIV, INDEX = "user", "nan", "div", "index"


@dataclass(frozen=True)
class Site:
    """One place an error can be recorded. ``kind``: one of the kinds above; ``what``: the check's message
    format, or the primitive's name for automatic checks; ``payload``: the types of the values recorded with the
    error; ``detail``: the check's format-argument structure, or the indexed operand's shape."""

    kind: str
    what: str
    loc: SourceLoc | None
    payload: tuple[Aval, ...] = ()
    detail: Any = None


class State:
    """The error state of one walk: the current code and the payload atoms of the sites seen so far (each
    meaningful only if the code names its site). ``nans`` remembers, per atom, whether it holds a NaN."""

    __slots__ = ("code", "payloads", "nans")

    def __init__(self, code: Atom) -> None:
        self.code = code
        self.payloads: dict[int, tuple[Atom, ...]] = {}
        self.nans: dict[Atom, Atom] = {}

    def has_nan(self, x: Atom) -> Atom:
        """A bool scalar: whether ``x`` holds a NaN (computed once per atom)."""
        found = self.nans.get(x)
        if found is None:
            if isinstance(x, Literal):
                found = literal(bool(np.isnan(x.value).any()), dtypes.BOOL)
            else:
                found = _any(_ne(x, x))  # NaN is the one value unequal to itself
            self.nans[x] = found
        return found


Rule = Callable[["Checkify", State, Equation, list[Atom]], Sequence[Atom]]
RULES: dict[Primitive, Rule] = {}


class Checkify:
    """One run of the transform: the enabled error kinds and the table of sites (``sites[n - 1]`` has code n)."""

    def __init__(self, errors: frozenset[str]) -> None:
        self.errors = errors
        self.sites: list[Site] = []

    def record(self, state: State, fails: Atom, site: Site, payload: Sequence[Atom]) -> None:
        """Add ``site``: if ``fails`` (a bool scalar) and nothing failed before, the code becomes the site's."""
        self.sites.append(site)
        number = len(self.sites)
        code = state.code
        # The only literal code is the initial 0: before any site, the site's failure alone decides.
        first = fails if isinstance(code, Literal) else _and(E.eq(code, literal(0, I32)), fails)
        state.code = E.select(first, literal(number, I32), code)
        state.payloads[number] = tuple(payload)

    def emit(self, graph: Graph, args: Sequence[Atom], state: State) -> list[Atom]:
        """Emit ``graph`` applied to ``args`` with the error state threaded through; returns its outputs."""
        env: dict[Atom, Atom] = dict(zip(graph.inputs, args, strict=True))
        for eqn in graph.eqns:
            ins = [env.get(a, a) for a in eqn.inputs]
            with located(eqn.loc):
                outs = RULES.get(eqn.primitive, _default)(self, state, eqn, ins)
            env.update(zip(eqn.outputs, outs, strict=True))
        return [env.get(a, a) for a in graph.outputs]

    def graph(self, graph: Graph) -> tuple[Graph, list[int]]:
        """``graph`` checkified: ``(code, *inputs) -> (code, *payloads of its sites, *outputs)``, and the numbers
        of those sites (in order)."""
        with building() as builder:
            code = Var(CODE_AVAL)
            ins = [Var(v.aval) for v in graph.inputs]
            state = State(code)
            outs = self.emit(graph, ins, state)
            numbers = list(state.payloads)
            payloads = [a for n in numbers for a in state.payloads[n]]
        return Graph([code, *ins], builder.eqns, [state.code, *payloads, *outs]), numbers

    def payload_avals(self, numbers: Sequence[int]) -> list[Aval]:
        return [aval for n in numbers for aval in self.sites[n - 1].payload]

    def nan_check(self, state: State, eqn: Equation, ins: Sequence[Atom], outs: Sequence[Atom]) -> None:
        """Record a NaN error if a floating-point result holds a NaN and no floating-point operand does."""
        if NAN not in self.errors or not any(dtypes.is_inexact(o.aval.dtype) for o in outs):
            return
        given = [state.has_nan(a) for a in ins if dtypes.is_inexact(a.aval.dtype)]
        if any(isinstance(g, Literal) and g.value for g in given):
            return  # a constant operand holds a NaN: the results may too
        fails = _any_of([state.has_nan(o) for o in outs if dtypes.is_inexact(o.aval.dtype)])
        given = [g for g in given if not isinstance(g, Literal)]
        if given:
            fails = _and(fails, _not(_any_of(given)))
        self.record(state, fails, Site(NAN, eqn.primitive.name, eqn.loc), ())


def checkify_emit(
    graph: Graph, args: Sequence[Atom], errors: frozenset[str]
) -> tuple[Atom, list[Atom], list[Atom], tuple[Site, ...]]:
    """Emit ``graph`` on ``args`` checking ``errors`` into the active builder. Returns the error code, the
    payloads of every site (in site order), the outputs, and the site table."""
    run = Checkify(errors)
    state = State(literal(0, I32))
    outs = run.emit(graph, args, state)
    payloads = [a for n in range(1, len(run.sites) + 1) for a in state.payloads[n]]
    return state.code, payloads, outs, tuple(run.sites)


# ------------------------------------------------------------------------------------------------ small helpers


def _ne(x: Atom, y: Atom) -> Atom:
    return bind(E.ne_p, x, y)  # type: ignore[no-any-return]


def _not(x: Atom) -> Atom:
    return bind(E.not_p, x)  # type: ignore[no-any-return]


def _and(x: Atom, y: Atom) -> Atom:
    return bind(E.and_p, x, y)  # type: ignore[no-any-return]


def _any(x: Atom) -> Atom:
    """Whether any element of bool ``x`` holds (False for an empty array)."""
    return R.reduce_max(x, tuple(range(x.aval.ndim))) if x.aval.ndim else x


def _all(x: Atom) -> Atom:
    return R.reduce_min(x, tuple(range(x.aval.ndim))) if x.aval.ndim else x


def _any_of(flags: Sequence[Atom]) -> Atom:
    out = flags[0]
    for f in flags[1:]:
        out = bind(E.or_p, out, f)
    return out


def _outputs(eqn: Equation, out: Any) -> list[Atom]:
    return list(out) if eqn.primitive.multiple_results else [out]


def _copy(eqn: Equation, ins: Sequence[Atom]) -> list[Atom]:
    return _outputs(eqn, rebind(eqn, ins))


def _nested_check(eqn: Equation) -> Equation | None:
    """A check equation in ``eqn``'s nested graphs (at any depth), if there is one."""
    for graph in nested_graphs(eqn.primitive, eqn.params):
        for inner in graph.eqns:
            found = inner if inner.primitive is K.check_p else _nested_check(inner)
            if found is not None:
                return found
    return None


def _keep_first(code_in: Atom, code_out: Atom, new: Sequence[Atom], old: Sequence[Atom]) -> list[Atom]:
    """Payloads after a loop step: the step's own where the step set the code, the carried ones otherwise."""
    changed = _ne(code_out, code_in)
    return [E.select(_spread(changed, n.aval), n, o) for n, o in zip(new, old)]


def _spread(flag: Atom, aval: Aval) -> Atom:
    return flag if not aval.ndim else S.broadcast_in_dim(flag, aval.shape, (), aval.dims)


def _take_state(state: State, numbers: Sequence[int], run: Checkify, values: Sequence[Atom]) -> int:
    """Set the state from a nested result ``(code, *payloads, ...)``; returns how many values that took."""
    state.code = values[0]
    at = 1
    for n in numbers:
        count = len(run.sites[n - 1].payload)
        state.payloads[n] = tuple(values[at : at + count])
        at += count
    return at


def _padded(graph: Graph, own: Sequence[int], every: Sequence[int], run: Checkify) -> Graph:
    """A checkified branch returning the payloads of ``every`` site (zeros for those not its ``own``)."""
    if list(own) == list(every):
        return graph
    with building() as builder:
        ins = [Var(v.aval) for v in graph.inputs]
        code, *rest = inline(graph, ins)
        mine: dict[int, list[Atom]] = {}
        at = 0
        for n in own:
            count = len(run.sites[n - 1].payload)
            mine[n] = list(rest[at : at + count])
            at += count
        payloads = [a for n in every for a in mine.get(n) or [S.zeros(v) for v in run.sites[n - 1].payload]]
    return Graph(ins, builder.eqns, [code, *payloads, *rest[at:]])


# ------------------------------------------------------------------------------------------------------- rules


def _default(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    """Any equation: copied; with nested graphs (no rule of their own), refused if they hold a check."""
    inner = _nested_check(eqn)
    if inner is not None:
        raise TransformError(
            f"a check inside {eqn.primitive.name} (staged at {eqn.loc}) is not supported: move it out of the "
            f"function that {eqn.primitive.name} wraps", "checkify", inner.loc,
        )
    outs = _copy(eqn, ins)
    run.nan_check(state, eqn, ins, outs)
    return outs


def _plain(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    """Equations that only move or pick values: a NaN in their results was in their operands."""
    return _copy(eqn, ins)


def _check(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    if USER in run.errors:
        pred, *fmt_args = ins
        site = Site(USER, eqn.params["message"], eqn.loc, tuple(a.aval for a in fmt_args), eqn.params["tree"])
        run.record(state, _not(_all(pred)), site, fmt_args)
    return []


def _division(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    outs = _copy(eqn, ins)
    divisor = ins[1]
    if DIV in run.errors and dtypes.is_integer(divisor.aval.dtype):
        zero = E.eq(divisor, literal(0, divisor.aval.dtype))
        run.record(state, _any(zero), Site(DIV, eqn.primitive.name, eqn.loc), ())
    run.nan_check(state, eqn, ins, outs)
    return outs


def _index_check(run: Checkify, state: State, eqn: Equation, shape: tuple[int, ...], starts: Atom,
                 axes: Sequence[int], window: Sequence[int], scatter: bool = False) -> None:
    """Record an out-of-bounds error if a start in ``starts`` (an (N, K) integer matrix: N index vectors into
    ``axes``) puts its window of ``window`` (per operand axis) outside an operand of ``shape``: XLA would clamp
    it (reads) or drop the update (scatters). The payload is the first such start and its axis. A ``scatter``
    start at the largest value of its dtype is dropped on purpose: ``scatter_last_wins`` moves the updates that
    lose to a later one there."""
    count, k = starts.aval.shape
    if INDEX not in run.errors or count * k == 0:
        return
    dtype = starts.aval.dtype
    top = literal(np.array([shape[a] - window[a] for a in axes], dtype), dtype)
    bounds = S.broadcast_in_dim(top, (count, k), (1,))
    ok = _and(bind(E.ge_p, starts, S.full_like(starts, 0)), bind(E.le_p, starts, bounds))
    if scatter:
        ok = bind(E.or_p, ok, E.eq(starts, S.full_like(starts, int(np.iinfo(dtype).max))))
    flat_ok = S.reshape(ok, (count * k,))
    position = E.select(flat_ok, S.full_like(Aval((count * k,), I32), count * k), SL.iota(I32, (count * k,)))
    first = R.reduce_min(position, (0,))
    value = S.reshape(SL.dynamic_slice(S.reshape(starts, (count * k,)), [first], [1]), ())
    axis_table = literal(np.array(list(axes), np.int32), I32)
    axis = S.reshape(SL.dynamic_slice(axis_table, [E.rem(first, literal(k, I32))], [1]), ())
    site = Site(INDEX, eqn.primitive.name, eqn.loc, (Aval((), I64), CODE_AVAL), shape)
    run.record(state, _not(_all(flat_ok)), site, (E.convert(value, I64), axis))


def _index_matrix(indices: Atom, index_vector_dim: int) -> Atom:
    """Gather/scatter indices as an (N, K) matrix of index vectors."""
    aval = indices.aval
    if index_vector_dim == aval.ndim:
        return S.reshape(indices, (aval.size, 1))
    order = [a for a in range(aval.ndim) if a != index_vector_dim] + [index_vector_dim]
    k = aval.shape[index_vector_dim]
    return S.reshape(S.transpose(indices, order), (aval.size // k if k else 0, k))


def _starts_matrix(starts: Sequence[Atom]) -> Atom:
    return SL.concatenate([S.reshape(s, (1, 1)) for s in starts], 1)


def _gather(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    operand, indices = ins
    dn: G.GatherDims = eqn.params["dimension_numbers"]
    _index_check(run, state, eqn, operand.aval.shape, _index_matrix(indices, dn.index_vector_dim), dn.start_index_map,
                 eqn.params["slice_sizes"])
    return _copy(eqn, ins)


def _scatter(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    operand, indices, updates = ins
    dn: G.ScatterDims = eqn.params["dimension_numbers"]
    dropped = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
    sizes = iter(updates.aval.shape[u] for u in dn.update_window_dims)
    window = [1 if a in dropped else next(sizes) for a in range(operand.aval.ndim)]
    _index_check(run, state, eqn, operand.aval.shape, _index_matrix(indices, dn.index_vector_dim),
                 dn.scatter_dims_to_operand_dims, window, scatter=True)
    outs = _copy(eqn, ins)
    run.nan_check(state, eqn, ins, outs)  # scatter-add of inf and -inf
    return outs


def _dynamic_slice(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    x, *starts = ins
    if starts:
        _index_check(run, state, eqn, x.aval.shape, _starts_matrix(starts), range(x.aval.ndim),
                     eqn.params["slice_sizes"])
    return _copy(eqn, ins)


def _dynamic_update_slice(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    x, update, *starts = ins
    if starts:
        _index_check(run, state, eqn, x.aval.shape, _starts_matrix(starts), range(x.aval.ndim), update.aval.shape)
    return _copy(eqn, ins)


def _cond(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    index, *operands = ins
    checked = [run.graph(b) for b in eqn.params["branches"]]
    every = [n for _, numbers in checked for n in numbers]
    if not every:
        return _copy(eqn, ins)
    branches = tuple(_padded(g, numbers, every, run) for g, numbers in checked)
    outs = bind(CF.cond_p, index, state.code, *operands, **dict(eqn.params, branches=branches))
    return list(outs[_take_state(state, every, run, outs):])


def _scan(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    params = eqn.params
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    body, numbers = run.graph(params["body"])
    if not numbers:
        return _copy(eqn, ins)
    consts, carry, xs = split(ins, num_consts, num_carry)
    avals = run.payload_avals(numbers)
    with building() as builder:
        code, *step_in = [Var(v.aval) for v in body.inputs]  # xs as one step sees them
        c_in, k_in, x_in = split(step_in, num_consts, num_carry)
        saved = [Var(a) for a in avals]
        new_code, *rest = inline(body, [code, *step_in])
        kept = _keep_first(code, new_code, rest[: len(avals)], saved)
        new_body = Graph([*c_in, code, *saved, *k_in, *x_in], builder.eqns, [new_code, *kept, *rest[len(avals):]])
    zeros = [S.zeros(a) for a in avals]
    outs = bind(CF.scan_p, *consts, state.code, *zeros, *carry, *xs,
                   **dict(params, body=new_body, num_carry=num_carry + 1 + len(avals)))
    return list(outs[_take_state(state, numbers, run, outs):])


def _while(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
    """The loop carries (code, condition payloads, body payloads, the condition's value, carry): the condition
    is tested once before the loop and again at the end of every step, both checked."""
    params = eqn.params
    cond_consts, body_consts, carry = split(ins, params["cond_nconsts"], params["body_nconsts"])
    cond, cond_sites = run.graph(params["cond_graph"])
    body, body_sites = run.graph(params["body_graph"])
    if not cond_sites and not body_sites:
        return _copy(eqn, ins)
    cond_avals, body_avals = run.payload_avals(cond_sites), run.payload_avals(body_sites)
    first = inline(cond, [state.code, *cond_consts, *carry])
    with building() as builder:  # the condition: the value the state carries
        state_in = [Var(CODE_AVAL), *(Var(a) for a in [*cond_avals, *body_avals]), Var(Aval((), dtypes.BOOL))]
        carry_in = [Var(a.aval) for a in carry]
        new_cond = Graph([*state_in, *carry_in], builder.eqns, [state_in[-1]])
    with building() as builder:
        cc_in, bc_in = [Var(a.aval) for a in cond_consts], [Var(a.aval) for a in body_consts]
        code, *saved = state_in[:-1]
        k_in = [Var(a.aval) for a in carry]
        saved_cond, saved_body = saved[: len(cond_avals)], saved[len(cond_avals):]
        body_code, *rest = inline(body, [code, *bc_in, *k_in])
        body_kept = _keep_first(code, body_code, rest[: len(body_avals)], saved_body)
        new_carry = rest[len(body_avals):]
        cond_code, *tested = inline(cond, [body_code, *cc_in, *new_carry])
        cond_kept = _keep_first(body_code, cond_code, tested[: len(cond_avals)], saved_cond)
        step_state = [code, *saved, state_in[-1]]
        new_body = Graph([*cc_in, *bc_in, *step_state, *k_in], builder.eqns,
                         [cond_code, *cond_kept, *body_kept, tested[-1], *new_carry])
    zeros = [S.zeros(a) for a in body_avals]
    outs = bind(CF.while_p, *cond_consts, *body_consts, *first[:-1], *zeros, first[-1], *carry,
                   cond_graph=new_cond, body_graph=new_body, cond_nconsts=0,
                   body_nconsts=len(cond_consts) + len(body_consts))
    _take_state(state, [*cond_sites, *body_sites], run, outs)
    return list(outs[-len(carry):]) if carry else []


def _call(param: str) -> Rule:
    """The rule of a primitive that calls its graph ``param`` on its operands, for its results."""

    def rule(run: Checkify, state: State, eqn: Equation, ins: list[Atom]) -> list[Atom]:
        fun, numbers = run.graph(eqn.params[param])
        if not numbers:
            return _copy(eqn, ins)
        outs = bind(eqn.primitive, state.code, *ins, **dict(eqn.params, **{param: fun}))
        return list(outs[_take_state(state, numbers, run, outs):])

    return rule


RULES[K.check_p] = _check
RULES[E.div_p] = RULES[E.rem_p] = _division
RULES[G.gather_p] = _gather
RULES[G.scatter_p] = _scatter
RULES[SL.dynamic_slice_p] = _dynamic_slice
RULES[SL.dynamic_update_slice_p] = _dynamic_update_slice
RULES[CF.cond_p] = _cond
RULES[CF.scan_p] = _scan
RULES[CF.while_p] = _while
RULES[M.checkpoint_call_p] = _call("fun")
for _prim in (
    S.broadcast_in_dim_p, S.reshape_p, S.transpose_p, SL.slice_p, SL.rev_p, SL.concatenate_p, SL.pad_p, SL.iota_p,
    E.select_p, E.clamp_p, E.convert_p, R.reduce_max_p, R.reduce_min_p, AD.stop_gradient_p, M.optimization_barrier_p,
    M.checkpoint_name_p, CP.real_p, CP.imag_p, CP.conj_p, CP.complex_p,
):
    RULES[_prim] = _plain
