"""Static shape safety: the tests/typing corpus under mypy (plain and with the plugin) and at staging time, and
``mypy --strict`` over the package and examples/.

Corpus markers (see tests/typing/README.md): ``# error: CODE`` is an error for both mypy runs (with the plugin,
of that code); ``# plugin-error: CODE`` only the plugin sees. Staging a bad file raises at its marked line.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import tensorstage as ts

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "typing"
TREE = ROOT / ".typing-tree"
FILES = sorted(CORPUS.glob("*.py"))
MARKER = re.compile(r"#\s*(error|plugin-error):\s*([\w-]+)")
ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<message>.*?)(?:  \[(?P<code>[\w-]+)\])?$")


class Mark:
    def __init__(self, line: int, plugin_only: bool, code: str) -> None:
        self.line, self.plugin_only, self.code = line, plugin_only, code


def marks(path: Path) -> list[Mark]:
    out = []
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        m = MARKER.search(text)
        if m:
            out.append(Mark(number, m.group(1) == "plugin-error", m.group(2)))
    return out


# ------------------------------------------------------------------------------------------------ running mypy


def typing_tree() -> Path:
    """mypy cannot see the editable install (an import hook), so mirror pyproject's package-dir mapping with
    symlinks: .typing-tree/tensorstage/{*.py, its subpackages (scipy, ...), staging, lowering, prelude}. Idempotent,
    safe to run concurrently."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    top = TREE / "tensorstage"
    top.mkdir(parents=True, exist_ok=True)
    wanted = {
        top / f.name: f for f in (ROOT / mapping["tensorstage"]).iterdir()
        if f.suffix in (".py", ".typed") or (f / "__init__.py").is_file()
    }
    for package, folder in mapping.items():
        if package != "tensorstage":
            wanted[TREE.joinpath(*package.split("."))] = ROOT / folder
    for link in top.iterdir():
        if link.is_symlink() and link not in wanted:
            link.unlink()
    for link, target in wanted.items():
        if not link.is_symlink():
            try:
                link.symlink_to(target)
            except FileExistsError:
                pass
    return TREE


def run_mypy(args: list[str], plugin: bool) -> list[dict[str, str]]:
    tree = typing_tree()  # creates TREE on a fresh checkout before the config file is written into it
    config = tree / ("mypy-plugin.ini" if plugin else "mypy-plain.ini")
    config.write_text(
        "[mypy]\nstrict = True\npython_version = 3.11\n" + ("plugins = tensorstage.mypy_plugin\n" if plugin else "")
    )
    env = dict(os.environ, MYPYPATH=str(tree))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(ROOT / ".mypy_cache"),
         "--no-pretty", "--show-error-codes", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    if proc.returncode not in (0, 1) or "INTERNAL ERROR" in proc.stdout + proc.stderr:
        raise AssertionError(f"mypy crashed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    errors = []
    for line in proc.stdout.splitlines():
        m = ERROR.match(line)
        if m:
            errors.append(m.groupdict())
    return errors


@cache
def corpus_errors(plugin: bool) -> dict[str, dict[int, set[str]]]:
    """Per corpus file: line -> error codes (errors inside the library's own files are not the corpus's)."""
    out: dict[str, dict[int, set[str]]] = {f.name: {} for f in FILES}
    for e in run_mypy([str(f.relative_to(ROOT)) for f in FILES], plugin):
        path = Path(e["path"])
        if path.parent.name == "typing" and path.name in out:
            out[path.name].setdefault(int(e["line"]), set()).add(e["code"] or "misc")
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_plain_mypy_reports_exactly_the_marked_lines(path: Path) -> None:
    got = corpus_errors(False)[path.name]
    expected = {m.line for m in marks(path) if not m.plugin_only}
    assert set(got) == expected, f"{path.name}: mypy errors on lines {got}, expected errors on {sorted(expected)}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_plugin_mypy_reports_exactly_the_marked_lines_with_their_codes(path: Path) -> None:
    got = corpus_errors(True)[path.name]
    expected = {m.line: m.code for m in marks(path)}
    assert set(got) == set(expected), f"{path.name}: errors on lines {got}, expected {expected}"
    for line, code in expected.items():
        assert code in got[line], f"{path.name}:{line}: expected error code {code}, got {got[line]}"


@cache
def pyright_errors() -> dict[str, set[int]]:
    """Per corpus file: lines pyright (strict) reports errors on. Skips where pyright is not installed or cannot
    start (it needs Node.js; the PyPI wrapper downloads it when missing, which fails offline)."""
    exe = Path(sys.executable).with_name("pyright")
    if not exe.exists():
        pytest.skip("pyright is not installed in this environment (pip install pyright)")
    config = typing_tree() / "pyrightconfig.json"
    config.write_text(json.dumps({
        "extraPaths": [str(TREE)], "typeCheckingMode": "strict", "pythonVersion": "3.11",
        "reportMissingTypeStubs": False,
    }))
    try:
        proc = subprocess.run(
            [str(exe), "-p", str(config), "--pythonpath", sys.executable, "--outputjson", *map(str, FILES)],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )
        report = json.loads(proc.stdout)
    except (subprocess.TimeoutExpired, json.JSONDecodeError, OSError) as exc:
        pytest.skip(f"pyright could not run here: {exc}")
    out: dict[str, set[int]] = {f.name: set() for f in FILES}
    for d in report["generalDiagnostics"]:
        name = Path(d["file"]).name
        if d["severity"] == "error" and name in out:
            out[name].add(d["range"]["start"]["line"] + 1)
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_pyright_reports_exactly_the_marked_lines(path: Path) -> None:
    """pyright has no plugins: it sees what the strict overloads say, like plain mypy."""
    expected = {m.line for m in marks(path) if not m.plugin_only}
    got = pyright_errors()[path.name]
    assert got == expected, f"{path.name}: pyright errors on lines {sorted(got)}, expected {sorted(expected)}"


def test_corpus_has_both_kinds() -> None:
    assert any(p.name.startswith("ok_") for p in FILES) and any(p.name.startswith("bad_") for p in FILES)
    for p in FILES:
        assert (len(marks(p)) == 1) == p.name.startswith("bad_"), f"{p.name}: bad files hold exactly one marked bug"


# ----------------------------------------------------------------------------------------- staging the corpus


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"typing_corpus_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def programs(module: ModuleType) -> Iterator[tuple[str, ts.Program[..., object]]]:
    for name, value in vars(module).items():
        if isinstance(value, ts.Program):
            yield name, value


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("ok_")], ids=lambda p: p.name)
def test_clean_files_stage_and_run(path: Path) -> None:
    module = load(path)
    rng = np.random.default_rng(0)
    found = list(programs(module))
    assert found, f"{path.name} defines no @ts.program"
    for _, program in found:
        staged = program.stage(**module.DIMS)
        staged.typecheck()
        args = [rng.standard_normal(a.shape).astype(a.dtype) for a in staged.in_avals]
        out = staged.compile()(*args)
        assert np.all(np.isfinite(np.asarray(out)))


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("bad_")], ids=lambda p: p.name)
def test_bad_files_fail_to_stage_at_the_marked_line(path: Path) -> None:
    module = load(path)
    (mark,) = marks(path)
    (_, program), = programs(module)
    with pytest.raises(ts.StagingError) as info:
        program.stage(**module.DIMS)
    loc = info.value.loc
    assert loc is not None, str(info.value)
    assert Path(loc.file).name == path.name and loc.line == mark.line, f"raised at {loc}: {info.value}"


# --------------------------------------------------------------------------------------- the package itself


def _report(errors: list[dict[str, str]]) -> str:
    by_file: dict[str, list[str]] = {}
    for e in errors:
        by_file.setdefault(e["path"], []).append(f"  {e['line']}: {e['message']}  [{e['code']}]")
    return f"{len(errors)} mypy --strict errors:\n" + "\n".join(
        f"{path}\n" + "\n".join(lines) for path, lines in sorted(by_file.items())
    )


@pytest.mark.mypy_strict
def test_mypy_strict_on_the_package() -> None:
    """Fails with the full error list (grouped by file) so the report says exactly what is left."""
    errors = run_mypy(["-p", "tensorstage"], plugin=True)
    assert not errors, _report(errors)


@pytest.mark.mypy_strict
def test_mypy_strict_on_examples() -> None:
    examples = sorted((ROOT / "examples").glob("**/*.py"))
    if not examples:
        pytest.skip("examples/ holds no Python files yet")
    errors = [e for e in run_mypy([str(p.relative_to(ROOT)) for p in examples], plugin=True) if "examples" in e["path"]]
    assert not errors, _report(errors)


# ------------------------------------------------------------------------------------- the reshape rule at staging


class Batch(ts.Dim): ...
class Seq(ts.Dim): ...
class Model(ts.Dim): ...
class Heads(ts.Dim, size=2): ...
class HeadDim(ts.Dim): ...


def _stage_reshape(shape: tuple[object, ...], sizes: dict[str, int]) -> ts.Staged[..., object]:
    @ts.program
    def f(x: ts.Tensor[ts.f32, Batch, Seq, Model]) -> object:
        return x.reshape(*shape)

    return f.stage(**sizes)


def test_reshape_splits_and_merges_adjacent_axes_and_carries_names() -> None:
    staged = _stage_reshape((Batch, Seq, Heads, HeadDim), dict(Batch=2, Seq=3, Model=8))
    assert staged.out_avals[0].dims == ("Batch", "Seq", "Heads", "HeadDim")
    assert staged.out_avals[0].shape == (2, 3, 2, 4)
    merged = _stage_reshape((2, 24), dict(Batch=2, Seq=3, Model=8))
    assert merged.out_avals[0].dims == ("Batch", None)


@pytest.mark.parametrize(
    "shape, sizes, words",
    [
        ((Batch, Heads, Seq, HeadDim), dict(Batch=2, Seq=3, Model=8), "mixes axes Seq, Model"),
        ((2, 2, 3, 4), dict(Batch=2, Seq=3, Model=8), "mixes axes Seq, Model"),
        ((Batch, Model, Seq), dict(Batch=2, Seq=4, Model=4), "names result axis 1 Model"),  # sizes coincide
        ((Batch, 5, -1), dict(Batch=2, Seq=3, Model=8), "cannot reshape"),
    ],
)
def test_reshape_that_would_move_data_between_axes_is_an_error(
    shape: tuple[object, ...], sizes: dict[str, int], words: str
) -> None:
    with pytest.raises(ts.ShapeError, match=words) as info:
        _stage_reshape(shape, sizes)
    assert info.value.loc is not None and Path(info.value.loc.file).name == "test_typing.py"


def test_reshape_of_anonymous_axes_keeps_numpy_semantics() -> None:
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    np.testing.assert_array_equal(np.asarray(ts.numpy.reshape(x, (4, 6))), x.reshape(4, 6))
