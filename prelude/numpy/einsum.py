"""einsum: NumPy's subscripts (explicit ``->`` or implicit output, ``...``) on dot_general, transpose,
reduce_sum and reshape.

Operands are contracted left to right; each pairwise step sums out every letter no later operand or the output
needs. A letter names one dim everywhere: sizes must agree and so must dim names where both operands have one.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from typing_extensions import Unpack

from ...staging.ir import Atom, DimName
from ...staging.primitives import elementwise as E
from ...staging.primitives import linalg as L
from ...staging.primitives import reductions as R
from ...staging.primitives import slicing as SL
from ...staging.primitives import structural as S
from ...tensor import Tensor
from ._core import atom, op, result_dtype, shape_error, wrap

AnyTensor = Tensor[Any, Unpack[tuple[Any, ...]]]
_OP = "einsum"


def _parse(subscripts: str, operands: list[Atom]) -> tuple[list[str], str]:
    """Per-operand letter strings and the output letters, with ``...`` replaced by spare capital letters."""
    text = subscripts.replace(" ", "")
    inputs_text, arrow, output_text = text.partition("->")
    if "->" in output_text or "-" in inputs_text or ">" in inputs_text:
        raise shape_error(_OP, f"subscripts {subscripts!r} must have at most one '->'")
    inputs = inputs_text.split(",")
    if len(inputs) != len(operands):
        raise shape_error(_OP, f"subscripts {subscripts!r} name {len(inputs)} operands, got {len(operands)}")
    spare = [c for c in string.ascii_uppercase if c not in text]
    ellipsis_rank = 0
    for term, x in zip(inputs, operands):
        if "..." in term:
            ellipsis_rank = max(ellipsis_rank, x.aval.ndim - (len(term) - 3))
    fill = "".join(spare[:ellipsis_rank])
    letters: list[str] = []
    for term, x in zip(inputs, operands):
        if "..." in term:
            k = x.aval.ndim - (len(term) - 3)
            term = term.replace("...", fill[ellipsis_rank - k:] if k > 0 else "")
        if not all(c in string.ascii_letters for c in term):
            raise shape_error(_OP, f"subscripts {subscripts!r} hold a character that is not a letter or '...'")
        if len(term) != x.aval.ndim:
            raise shape_error(_OP, f"subscripts {term!r} do not fit operand {x.aval} (rank {x.aval.ndim})")
        letters.append(term)
    if arrow:
        output = output_text.replace("...", fill)
        if not all(c in string.ascii_letters for c in output) or len(set(output)) != len(output):
            raise shape_error(_OP, f"invalid output subscripts {output_text!r}")
        missing = [c for c in output if not any(c in t for t in letters)]
        if missing:
            raise shape_error(_OP, f"output letters {''.join(missing)} appear in no operand of {subscripts!r}")
    else:  # NumPy's implicit mode: letters seen once, in alphabetical order, after the broadcast dims
        counts = {c: "".join(letters).count(c) for c in "".join(letters)}
        output = fill + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in fill))
    return letters, output


def _dims(letters: list[str], operands: list[Atom]) -> dict[str, tuple[int, DimName]]:
    """Size and dim name per letter; every use must agree (size-1 broadcast dims of ``...`` excepted)."""
    seen: dict[str, tuple[int, DimName]] = {}
    for term, x in zip(letters, operands):
        for c in set(term):
            own = {n for t, n in zip(term, x.aval.shape) if t == c}
            if len(own) > 1:  # a diagonal: NumPy does not broadcast within one operand
                raise shape_error(_OP, f"letter {c!r} repeats in {term!r} with sizes {sorted(own)} in {x.aval}")
        for c, n, d in zip(term, x.aval.shape, x.aval.dims):
            if c not in seen:
                seen[c] = (n, d)
                continue
            m, e = seen[c]
            if n != m and 1 not in (n, m):
                raise shape_error(
                    _OP, f"letter {c!r} has sizes {m} and {n} in operands {', '.join(str(a.aval) for a in operands)}"
                )
            if d is not None and e is not None and d != e:
                raise shape_error(
                    _OP, f"letter {c!r} stands for dims {e} and {d} in operands "
                    f"{', '.join(str(a.aval) for a in operands)}",
                )
            seen[c] = _stretched((m, e), (n, d))
    return seen


def _stretched(a: tuple[int, DimName], b: tuple[int, DimName]) -> tuple[int, DimName]:
    """One letter's (size, name) from two uses: a size-1 axis stretches (even to 0) and takes the other's name
    (a named size-1 dim stretched to 4 is no longer that dim); equal sizes keep whichever name is given."""
    if a[0] == 1 and b[0] != 1:
        return b
    if b[0] == 1 and a[0] != 1:
        return a
    return a[0], a[1] if a[1] is not None else b[1]


def _diagonal(x: Atom, term: str) -> tuple[Atom, str]:
    """Remove repeated letters within one operand by taking their diagonal (``ii->i``)."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        a, b = term.index(c), term.index(c, term.index(c) + 1)
        n = x.aval.shape[a]
        rows = SL.iota(np.dtype(np.int32), (n, n), 0)
        cols = SL.iota(np.dtype(np.int32), (n, n), 1)
        mask = S.broadcast_in_dim(E.eq(rows, cols), x.aval.shape, (a, b), x.aval.dims)
        x = R.reduce_sum(E.select(mask, x, S.full_like(x, 0)), (b,))  # a select: inf off the diagonal is no NaN
        term = term[:b] + term[b + 1:]
    return x, term


def _sum_out(x: Atom, term: str, keep: set[str]) -> tuple[Atom, str]:
    axes = [k for k, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return R.reduce_sum(x, axes), "".join(c for c in term if c in keep)


def _broadcast_letters(x: Atom, term: str, sizes: dict[str, tuple[int, DimName]]) -> Atom:
    """Stretch size-1 axes that meet a larger size for the same letter (``...`` broadcasting)."""
    target = tuple(sizes[c][0] for c in term)
    if target == x.aval.shape:
        return x
    names = tuple(sizes[c][1] for c in term)
    return S.broadcast_in_dim(x, target, tuple(range(len(term))), names)


def _contract(lhs: Atom, lt: str, rhs: Atom, rt: str, needed: set[str]) -> tuple[Atom, str]:
    shared = [c for c in lt if c in rt]
    batch = [c for c in shared if c in needed]
    contract = [c for c in shared if c not in needed]
    out = L.dot_general(
        lhs, rhs,
        (tuple(lt.index(c) for c in contract), tuple(rt.index(c) for c in contract)),
        (tuple(lt.index(c) for c in batch), tuple(rt.index(c) for c in batch)),
    )
    free_l = [c for c in lt if c not in shared]
    free_r = [c for c in rt if c not in shared]
    return out, "".join(batch + free_l + free_r)


def einsum(subscripts: Any, *operands: Any, optimize: Any = None) -> AnyTensor:
    """NumPy's einsum: ``einsum("ij,jk->ik", a, b)`` or the sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.
    ``optimize`` is accepted and ignored: operands are contracted left to right and XLA schedules the rest."""
    if not isinstance(subscripts, str):
        return _einsum(*_from_sublists((subscripts, *operands)))
    return _einsum(subscripts, *operands)


def _from_sublists(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The subscripts string of NumPy's sublist form: ints (< 52) name letters, ``...`` is Ellipsis."""
    def term(sub: Any) -> str:
        if not isinstance(sub, (tuple, list)):
            raise shape_error(_OP, f"sublist {sub!r} must be a list of ints (or Ellipsis)")
        return "".join("..." if i is Ellipsis else string.ascii_letters[_letter(i)] for i in sub)

    output = "->" + term(args[-1]) if len(args) % 2 else ""
    pairs = args[: len(args) - len(args) % 2]
    return (",".join(term(t) for t in pairs[1::2]) + output, *pairs[0::2])


def _letter(i: Any) -> int:
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < 52:
        raise shape_error(_OP, f"sublist entries must be ints in [0, 52), got {i!r}")
    return int(i)


@op
def _einsum(subscripts: str, *operands: AnyTensor) -> AnyTensor:
    if not operands:
        raise shape_error(_OP, "needs at least one operand")
    dtype = result_dtype(_OP, operands)
    atoms = [atom(x, dtype) for x in operands]
    letters, output = _parse(subscripts, atoms)
    sizes = _dims(letters, atoms)
    terms = []
    for k, (x, term) in enumerate(zip(atoms, letters)):
        x, term = _diagonal(_broadcast_letters(x, term, sizes), term)
        later = set(output).union(*letters[k + 1:]).union(*letters[:k])
        x, term = _sum_out(x, term, later)
        terms.append((x, term))
    acc, acc_term = terms[0]
    for k in range(1, len(terms)):
        x, term = terms[k]
        needed = set(output).union(*(t for _, t in terms[k + 1:]))
        acc, acc_term = _contract(acc, acc_term, x, term, needed)
        acc, acc_term = _sum_out(acc, acc_term, needed)
    acc, acc_term = _sum_out(acc, acc_term, set(output))
    result = S.transpose(acc, [acc_term.index(c) for c in output])
    names = tuple(sizes[c][1] for c in output)
    return wrap(result if result.aval.dims == names else S.reshape(result, result.aval.shape, names))
