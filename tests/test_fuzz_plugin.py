"""Fuzzing the mypy plugin against staging: seeded random typed calls over Dim classes and literal sizes
(broadcasting operators, matmul, reductions, reshape, squeeze, expand_dims, transposes, swapaxes, moveaxis,
literal indexing, concatenate, stack, einsum), written into ONE generated file, checked by ONE mypy run with
``tensorstage.mypy_plugin`` and then staged with concrete sizes (staging only: no compile is needed for shapes).

What must agree:
- a call the plugin accepts with a result it computed stages, to exactly that shape and those dim names
  (``Any`` dims and open ``*tuple[Any, ...]`` results say "not known statically" and are not compared);
- a call the plugin rejects with error code ``shape`` raises ``ts.ShapeError`` when staged;
- mypy never crashes and never reports an internal error.

Deliberate differences (documented rules, not NumPy's):
- dims are compared by name: ``Batch`` and ``Seq`` never broadcast or contract even when their sizes agree;
- ``(N,)`` against ``(N, 1)`` does not broadcast to ``(N, N)`` (README, "The broadcasting rule");
- a reshape only merges adjacent axes or splits one axis of named dims; it never moves data between them.
A named dim against a literal size is "unknown" to the plugin (it reports only what is certainly wrong): where the
default sizes do not stage a call the plugin accepts, some other sizes must stage it, to the revealed result. The
plugin does not solve for sizes: a reshape of named dims into literal sizes whose result it leaves open (``Any``
axes) may fail at staging for every size (e.g. ``(Seq, Model, 6) -> (24, 2, 3, 2)`` always mixes axes).
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import numpy as np
import pytest

import tensorstage as ts

from test_typing import ROOT, typing_tree

T = TypeVar("T")
SEED = 20261126
CASES_PER_FAMILY = 28

# Named dims with the sizes staging binds; Heads has a fixed size, Model = Heads * HeadDim (HeadDim is only ever a
# reshape target, sized by the remainder).
SIZES = {"Batch": 2, "Seq": 3, "Feat": 5, "Hid": 7, "Model": 8}
FIXED = {"Heads": 2, "Unit": 1}
NAMED = [*SIZES, *FIXED]
LITERALS = [1, 2, 3, 4, 6]
CANDIDATE_SIZES = [2, 1, 3, 4, 6, 8, 10, 12, 16]  # for named dims, where the default sizes do not stage

Dims = list[str]  # "Batch" or "Literal[3]"


def size_of(dim: str, sizes: dict[str, int] = SIZES) -> int:
    if dim.startswith("Literal["):
        return int(dim[8:-1])
    return {**sizes, **FIXED, "HeadDim": sizes["Model"] // FIXED["Heads"]}[dim]


def name_of(dim: str) -> str | None:
    return None if dim.startswith("Literal[") else dim


@dataclass
class Case:
    family: str
    params: list[Dims]
    expr: str
    line: int = 0
    revealed: str | None = None
    errors: list[tuple[str, str]] = field(default_factory=list)  # (code, message)


# ------------------------------------------------------------------------------------------------ generator


class Gen:
    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def pick(self, seq: Sequence[T]) -> T:
        return seq[int(self.rng.integers(0, len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def dim(self, literal_p: float = 0.25) -> str:
        if self.chance(literal_p):
            return f"Literal[{self.pick(LITERALS)}]"
        return str(self.pick(NAMED))

    def shape(self, lo: int = 0, hi: int = 4, literal_p: float = 0.25) -> Dims:
        """Distinct named dims (a repeated name would be ambiguous as an axis), literals anywhere."""
        out: Dims = []
        for _ in range(int(self.rng.integers(lo, hi + 1))):
            d = self.dim(literal_p)
            while d in out and name_of(d) is not None:
                d = self.dim(literal_p)
            out.append(d)
        return out

    def other_dim(self, d: str) -> str:
        e = self.dim()
        while e == d:
            e = self.dim()
        return e

    def axis(self, rank: int, dims: Dims, names: bool = True) -> str:
        """A valid axis (int or Dim class), or now and then an invalid one."""
        if names and dims and self.chance(0.35):
            named = [d for d in dims if name_of(d)]
            if named and not self.chance(0.1):
                return str(self.pick(named))
            return str(self.pick(NAMED))
        if self.chance(0.1):
            return str(int(self.pick([rank, -rank - 1, rank + 1])))
        return str(int(self.rng.integers(-rank, rank))) if rank else "0"


def _binary(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(0, 3)
    y = x[int(g.rng.integers(0, len(x) + 1)):] if x else []
    y = ["Literal[1]" if g.chance(0.2) else d for d in y]
    if g.chance(0.25) and y:
        i = int(g.rng.integers(0, len(y)))
        y[i] = g.other_dim(y[i])
    if g.chance(0.2):
        x = ["Literal[1]" if g.chance(0.3) else d for d in x]
    if g.chance(0.3):
        x, y = y, x
    op = str(g.pick(["+", "-", "*", "/", "<", ">=", "tnp.add", "tnp.maximum", "scalar"]))
    if op == "scalar":
        return [x], str(g.pick(["x + 1.0", "2.0 * x", "x - 1", "x > 0.5"]))
    if op.startswith("tnp."):
        return [x, y], f"{op}(x, y)"
    return [x, y], f"x {op} y"


def _matmul(g: Gen) -> tuple[list[Dims], str]:
    k = g.dim()
    batch = g.shape(0, 2)
    x = [*batch, g.dim(), k] if g.chance(0.8) else [k]
    y = [*batch[int(g.rng.integers(0, len(batch) + 1)):], k, g.dim()] if g.chance(0.8) else [k]
    if g.chance(0.25):
        y[-2 if len(y) > 1 else 0] = g.other_dim(k)
    return [x, y], str(g.pick(["x @ y", "tnp.matmul(x, y)"]))


def _reduction(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(1, 4)
    rank = len(x)
    how = str(g.pick(["one", "one", "tuple", "none"]))
    if how == "one":
        axis = g.axis(rank, x)
    elif how == "tuple":
        axis = "(" + ", ".join(g.axis(rank, x) for _ in range(int(g.rng.integers(1, 3)))) + ",)"
    else:
        axis = "None"
    keep = str(g.pick(["", ", keepdims=True", ", keepdims=False"]))
    fn = str(g.pick(["sum", "mean", "max", "min", "prod"]))
    if g.chance(0.5):
        return [x], f"x.{fn}(axis={axis}{keep})"
    return [x], f"tnp.{fn}(x, axis={axis}{keep})"


def _reshape_target(g: Gen, x: Dims) -> list[str]:
    """Keep, merge (as -1 or a literal product), split Model into Heads, HeadDim, or break the rule."""
    out: list[str] = []
    i = 0
    used_minus = False
    while i < len(x):
        d = x[i]
        r = g.rng.random()
        if r < 0.15 and i + 1 < len(x):
            merged = size_of(d) * size_of(x[i + 1])
            if not used_minus and g.chance(0.5):
                out.append("-1")
                used_minus = True
            else:
                out.append(str(merged))
            i += 2
            continue
        if d == "Model" and r < 0.5:
            out += ["Heads", "HeadDim"] if g.chance(0.8) else ["HeadDim", "Heads"]
        elif d == "Literal[6]" and r < 0.5:
            out += ["2", "3"]
        elif r < 0.25 and not used_minus:
            out.append("-1")
            used_minus = True
        else:
            out.append(name_of(d) or str(size_of(d)))
        i += 1
    if g.chance(0.2) and len(out) > 1:
        a, b = (int(v) for v in g.rng.choice(len(out), 2, replace=False))
        out[a], out[b] = out[b], out[a]
    if g.chance(0.1):
        out.append(str(g.pick(["2", "Heads", "Unit", "1"])))
    return out


def _reshape(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(1, 4, literal_p=0.3)
    if g.chance(0.4):
        x[int(g.rng.integers(0, len(x)))] = "Model"
        x = [d for j, d in enumerate(x) if d != "Model" or j == x.index("Model")]
    target = _reshape_target(g, x)
    if g.chance(0.5):
        return [x], f"x.reshape({', '.join(target)})"
    return [x], f"tnp.reshape(x, ({', '.join(target)},))"


def _squeeze(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(1, 4, literal_p=0.5)
    if g.chance(0.5):
        x[int(g.rng.integers(0, len(x)))] = str(g.pick(["Literal[1]", "Unit"]))
        x = [d for j, d in enumerate(x) if d != "Unit" or j == x.index("Unit")]
    how = int(g.rng.integers(0, 3))
    if how == 0:
        return [x], str(g.pick(["x.squeeze()", "tnp.squeeze(x)"]))
    axis = g.axis(len(x), x)
    return [x], str(g.pick([f"x.squeeze({axis})", f"tnp.squeeze(x, axis={axis})", f"tnp.squeeze(x, ({axis},))"]))


def _expand_dims(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(0, 3)
    n = int(g.rng.integers(1, 3))
    axes = [g.axis(len(x) + n, [], names=False) for _ in range(n)]
    axis = axes[0] if n == 1 else f"({', '.join(axes)})"
    return [x], f"tnp.expand_dims(x, {axis})"


def _transpose(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(1, 4)
    perm = [str(p) for p in g.rng.permutation(len(x))]
    if g.chance(0.5):
        perm = [name_of(x[int(p)]) or p for p in perm]
    if g.chance(0.2):
        perm = perm[:-1] if g.chance(0.5) else [*perm, perm[0]]
    if g.chance(0.1) and perm:
        perm[0] = str(g.pick(NAMED))
    how = int(g.rng.integers(0, 4))
    if how == 0:
        return [x], "x.transpose()"
    if how == 1:
        return [x], f"x.transpose({', '.join(perm)})"
    if how == 2:
        return [x], f"tnp.transpose(x, ({''.join(p + ', ' for p in perm)}))"
    return [x], "tnp.transpose(x)"


def _swap_move(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(1, 4)
    a, b = g.axis(len(x), x), g.axis(len(x), x)
    if g.chance(0.5):
        return [x], str(g.pick([f"x.swapaxes({a}, {b})", f"tnp.swapaxes(x, {a}, {b})"]))
    return [x], f"tnp.moveaxis(x, {a}, {b})"


def _index(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(1, 4)
    items: list[str] = []
    for _ in range(int(g.rng.integers(1, len(x) + 2))):
        items.append(str(g.pick(["0", "-1", ":", "None", "1:3", ":2", "::2", "..."])))
    if items.count("...") > 1 and g.chance(0.8):
        items = [t for j, t in enumerate(items) if t != "..." or j == items.index("...")]
    return [x], f"x[{', '.join(items)}]"


def _concatenate(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(1, 3)
    axis = int(g.rng.integers(-len(x), len(x)))
    y = list(x)
    y[axis] = str(g.pick([y[axis], f"Literal[{g.pick(LITERALS)}]"]))
    if g.chance(0.2):
        j = int(g.rng.integers(0, len(y)))
        y[j] = g.other_dim(y[j])
    if g.chance(0.1):
        y = y[1:]
    ax = str(g.pick([str(axis), name_of(x[axis]) or str(axis)])) if g.chance(0.3) else str(axis)
    return [x, y], str(g.pick([f"tnp.concatenate((x, y), axis={ax})", f"tnp.concatenate([x, y, x], {ax})"]))


def _stack(g: Gen) -> tuple[list[Dims], str]:
    x = g.shape(0, 3)
    y = list(x)
    if g.chance(0.25) and y:
        j = int(g.rng.integers(0, len(y)))
        y[j] = g.other_dim(y[j])
    axis = int(g.rng.integers(-len(x) - 1, len(x) + 1))
    if g.chance(0.1):
        axis = len(x) + 1
    return [x, y], str(g.pick([f"tnp.stack((x, y), axis={axis})", f"tnp.stack([x, y, y], {axis})"]))


def _einsum(g: Gen) -> tuple[list[Dims], str]:
    letters = "abcdef"
    x = g.shape(1, 3)
    y = g.shape(1, 3)
    # share one letter between the operands (often the same dim, sometimes a different one: an error)
    tx = letters[: len(x)]
    ty = "".join(letters[3 + j] for j in range(len(y)))
    if g.chance(0.8):
        i, j = int(g.rng.integers(0, len(x))), int(g.rng.integers(0, len(y)))
        if g.chance(0.8):
            y[j] = x[i]
        ty = ty[:j] + tx[i] + ty[j + 1:]
    present = sorted(set(tx + ty))
    out = "".join(c for c in present if g.chance(0.6))
    if g.chance(0.05):
        out += "z"
    return [x, y], f'tnp.einsum("{tx},{ty}->{out}", x, y)'


FAMILIES: dict[str, Callable[[Gen], tuple[list[Dims], str]]] = {
    "binary": _binary, "matmul": _matmul, "reduction": _reduction, "reshape": _reshape, "squeeze": _squeeze,
    "expand_dims": _expand_dims, "transpose": _transpose, "swap_move": _swap_move, "index": _index,
    "concatenate": _concatenate, "stack": _stack, "einsum": _einsum,
}

HEADER = '''"""Generated by tests/test_fuzz_plugin.py (seed {seed}); do not edit."""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import tensorstage as ts
from tensorstage import Dim, Tensor, f32
from tensorstage import numpy as tnp

if not TYPE_CHECKING:
    def reveal_type(value):  # mypy's reveal_type is a special form; at run time it passes the value through
        return value

{classes}
'''


def generate(seed: int) -> tuple[str, list[Case]]:
    g = Gen(np.random.default_rng(seed))
    classes = "\n".join(
        [*(f"class {n}(Dim): ..." for n in [*SIZES, "HeadDim"]), *(f"class {n}(Dim, size={s}): ..." for n, s in FIXED.items())]
    )
    lines = HEADER.format(seed=seed, classes=classes).splitlines()
    cases: list[Case] = []
    for family, make in FAMILIES.items():
        for _ in range(CASES_PER_FAMILY):
            params, expr = make(g)
            case = Case(family, params, expr)
            args = ", ".join(f"{v}: Tensor[f32{''.join(', ' + d for d in dims)}]" for v, dims in zip("xyz", params))
            lines += ["", "", "@ts.program", f"def case_{len(cases)}({args}) -> object:"]
            lines.append(f"    return reveal_type({expr})")
            case.line = len(lines)
            cases.append(case)
    return "\n".join(lines) + "\n", cases


# ------------------------------------------------------------------------------------------------ mypy


NOTE = re.compile(r'^(?P<path>[^:]+):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*?)(?:  \[(?P<code>[\w-]+)\])?$')


def check_with_plugin(path: Path, cases: list[Case]) -> None:
    tree = typing_tree()
    config = tree / "mypy-fuzz-plugin.ini"
    config.write_text("[mypy]\nstrict = True\npython_version = 3.11\nplugins = tensorstage.mypy_plugin\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(ROOT / ".mypy_cache"),
         "--no-pretty", "--show-error-codes", "--no-error-summary", str(path)],
        cwd=ROOT, env=dict(os.environ, MYPYPATH=str(tree)), capture_output=True, text=True, timeout=600,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1) and "INTERNAL ERROR" not in output and "Traceback" not in output, output
    by_line = {c.line: c for c in cases}
    for text in proc.stdout.splitlines():
        m = NOTE.match(text)
        if m is None or Path(m["path"]).name != path.name:
            continue
        case = by_line.get(int(m["line"]))
        assert case is not None, f"mypy reports outside the cases: {text}"
        if m["kind"] == "note" and m["message"].startswith("Revealed type is "):
            case.revealed = m["message"][len('Revealed type is "'):-1]
        elif m["kind"] == "error":
            case.errors.append((m["code"] or "misc", m["message"]))


def split_args(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [s for s in out if s]


def revealed_dims(revealed: str) -> list[str] | None:
    """``Tensor[f32, gen.Batch, Literal[1]?, Any]`` as ``["Batch", "Literal[1]", "Any"]``; None for an open rank."""
    m = re.fullmatch(r"tensorstage\.tensor\.Tensor\[(.*)\]", revealed)
    if m is None:
        return None
    out: list[str] = []
    for arg in split_args(m[1])[1:]:
        if arg.startswith(("Unpack[", "*")):
            return None
        out.append(arg.rstrip("?").rsplit(".", 1)[-1])
    return out


# ------------------------------------------------------------------------------------------------ staging


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_plugin_generated", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bindings(case: Case) -> Iterator[dict[str, int]]:
    """Sizes that make the case's named dims meet its literals: the plugin leaves a named dim against a literal
    (or a reshape of named dims to literal sizes) to staging, so a call it accepts must stage for SOME sizes."""
    named = sorted({d for dims in case.params for d in dims if d in SIZES})
    for k, sizes in enumerate(itertools.product(CANDIDATE_SIZES, repeat=len(named))):
        if k >= 800:
            return
        yield {**SIZES, **dict(zip(named, sizes))}


def stage(program: ts.Program[..., object], sizes: dict[str, int]) -> ts.Staged[..., object] | Exception:
    try:
        return program.stage(**sizes)
    except Exception as exc:  # noqa: BLE001 - an internal crash is reported as a disagreement
        return exc


def mismatch(case: Case, staged: ts.Staged[..., object], sizes: dict[str, int]) -> str | None:
    """The staged result against the revealed type: rank, each dim's name, and its size where the type says."""
    want = revealed_dims(case.revealed or "")
    if want is None:
        return None
    aval = staged.out_avals[0]
    ok = len(want) == len(aval.shape) and all(
        w == "Any" or (name_of(w) == d and (w == "HeadDim" or size_of(w, sizes) == n))  # HeadDim: the remainder
        for w, d, n in zip(want, aval.dims, aval.shape)
    )
    return None if ok else f"plugin reveals {case.revealed}; staging gives {aval}"


def disagreement(case: Case, program: ts.Program[..., object]) -> str | None:
    shape_errors = [m for code, m in case.errors if code == "shape"]
    if case.errors and not shape_errors:
        return None  # the strict overloads decided (dtype or arity): not the plugin's rule
    staged = stage(program, SIZES)
    if shape_errors:
        if isinstance(staged, ts.ShapeError):
            return None
        got = staged if isinstance(staged, Exception) else staged.out_avals[0]
        return f"plugin: {shape_errors[0]}; staging: {type(got).__name__} {got}"
    if not isinstance(staged, Exception):
        return mismatch(case, staged, SIZES)  # the default sizes stage: the result must be the revealed one
    if not isinstance(staged, ts.StagingError):
        return f"staging crashed: {type(staged).__name__}: {staged}"
    first_mismatch = None
    for sizes in bindings(case):
        other = stage(program, sizes)
        if not isinstance(other, Exception):
            first_mismatch = first_mismatch or mismatch(case, other, sizes)
            if mismatch(case, other, sizes) is None:
                return None
    if first_mismatch is None and case.family == "reshape" and "Any" in (revealed_dims(case.revealed or "") or []):
        return None  # the plugin said it cannot size these axes: a reshape it cannot solve is staging's to judge
    return first_mismatch or (
        f"plugin accepts ({case.revealed}); staging: {type(staged).__name__}: {str(staged).splitlines()[0]}"
    )


def test_plugin_and_staging_agree(tmp_path: Path) -> None:
    source, cases = generate(SEED)
    path = tmp_path / "fuzz_plugin_generated.py"
    path.write_text(source)
    check_with_plugin(path, cases)
    module = load(path)
    problems = []
    for i, case in enumerate(cases):
        problem = disagreement(case, getattr(module, f"case_{i}"))
        if problem is not None:
            problems.append(f"line {case.line}: {case.expr}  with {case.params}\n    {problem}")
    assert not problems, f"{len(problems)} disagreements:\n" + "\n".join(problems)
