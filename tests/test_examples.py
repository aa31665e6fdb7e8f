"""The examples run end to end at small sizes (the full runs are the README's commands)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # attrs and typing resolve the module's annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_train_digits_reaches_95_percent() -> None:
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    example = _load("train_digits")
    accuracy = example.main(epochs=10, quiet=True)
    assert accuracy >= 0.95


def test_train_digits_cnn_reaches_95_percent() -> None:
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    sys.path.insert(0, str(EXAMPLES))  # the CNN example reuses train_digits' data loading
    try:
        example = _load("train_digits_cnn")
    finally:
        sys.path.remove(str(EXAMPLES))
    accuracy = example.main(epochs=5, quiet=True)
    assert accuracy >= 0.95
