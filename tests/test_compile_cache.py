"""The persistent executable cache: hits across processes, and it never loads bytes it did not write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from jaxlib import xla_client as xc

import tensorstage as ts
from tensorstage.lowering import backend, compile_cache

_SCRIPT = """
import json, numpy as np, tensorstage as ts
from tensorstage import numpy as tnp
from tensorstage.lowering import compile_cache

def body(x):
    for _ in range(20):
        x = tnp.tanh(x) * 1.5
    return x

exe = ts.program(body).stage(np.ones(16, np.float32)).compile()
out = np.asarray(exe(np.linspace(-1, 1, 16, dtype=np.float32)))
cache = compile_cache.active()
print(json.dumps({"from_disk": exe.from_disk_cache, "out": out.tolist(),
                  "hits": cache.stats.hits if cache else None, "writes": cache.stats.writes if cache else None,
                  "misses": cache.stats.misses if cache else None}))
"""


def _run(directory: Path, **env: str) -> dict[str, Any]:
    environment = {**os.environ, "TENSORSTAGE_CACHE_DIR": str(directory), "TF_CPP_MIN_LOG_LEVEL": "2", **env}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=environment, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.xla"))


def test_a_second_process_loads_the_executable(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert first["from_disk"] is False and first["writes"] == 1
    assert len(_entries(tmp_path)) == 1
    second = _run(tmp_path)
    assert second["from_disk"] is True and second["hits"] == 1 and second["writes"] == 0
    assert second["out"] == first["out"]


def test_corrupted_and_foreign_entries_are_ignored(tmp_path: Path) -> None:
    reference = _run(tmp_path)["out"]
    (entry,) = _entries(tmp_path)
    blob = bytearray(entry.read_bytes())
    blob[-100] ^= 0xFF  # one flipped bit in the payload
    entry.write_bytes(bytes(blob))
    run = _run(tmp_path)
    assert run["from_disk"] is False and run["out"] == reference
    assert any("integrity" in m for m in run["misses"])
    assert _run(tmp_path)["from_disk"] is True  # the recompiled entry replaced the bad one

    # bytes written by someone without this user's secret: a well-formed entry signed with another key
    other = compile_cache.DiskCache(str(tmp_path / "other"))
    exe = ts.program(lambda x: x * 2.0).stage(np.ones(16, np.float32)).compile()
    other.store(entry.name[: -len(".xla")], exe.executable)
    (forged,) = _entries(tmp_path / "other")
    entry.write_bytes(forged.read_bytes())
    run = _run(tmp_path)
    assert run["from_disk"] is False and run["out"] == reference

    entry.write_bytes(b"garbage")
    run = _run(tmp_path)
    assert run["from_disk"] is False and run["out"] == reference


def test_a_secret_others_can_read_disables_loading(tmp_path: Path) -> None:
    _run(tmp_path)
    os.chmod(tmp_path / "hmac-secret", 0o644)
    run = _run(tmp_path)
    assert run["from_disk"] is False and any("not a private file" in m for m in run["misses"])


def test_opting_out_writes_nothing(tmp_path: Path) -> None:
    run = _run(tmp_path, TENSORSTAGE_COMPILE_CACHE="0")
    assert run["from_disk"] is False and run["hits"] is None
    assert _entries(tmp_path) == []


@pytest.fixture
def private_cache(tmp_path: Path) -> Iterator[compile_cache.DiskCache]:
    saved = compile_cache._active
    try:
        yield compile_cache.enable(str(tmp_path))
    finally:
        compile_cache._active = saved


def _module(n: int) -> str:
    x = ts.Spec((n,), ts.f32)
    return ts.program(lambda v: v * 2.0 + 1.0).stage(x).stablehlo()


def test_in_process_hit_and_key_ingredients(private_cache: compile_cache.DiskCache) -> None:
    device = ts.default_device().xla
    text = _module(8)
    _, from_disk = backend.compile_module_cached(text, [device])
    assert from_disk is False
    exe, from_disk = backend.compile_module_cached(text, [device])
    assert from_disk is True and private_cache.stats.hits == 1
    from tensorstage.lowering.runtime import device_put, result_handler

    out = exe.execute_sharded([device_put(np.arange(8, dtype=np.float32), device)])
    (buf,) = out.consume_with_handlers([result_handler((8,), np.dtype(np.float32), device)])
    assert np.asarray(buf).tolist() == [float(2 * i + 1) for i in range(8)]

    options = xc.CompileOptions()
    options.num_replicas = 1
    base = compile_cache.DiskCache.key(text, [device], xc.CompileOptions())
    assert compile_cache.DiskCache.key(_module(9), [device], xc.CompileOptions()) != base
    debug = xc.CompileOptions()
    debug.executable_build_options.debug_options.xla_backend_optimization_level = 0
    assert compile_cache.DiskCache.key(text, [device], debug) != base


def test_the_folder_stays_within_its_bound(private_cache: compile_cache.DiskCache, tmp_path: Path) -> None:
    device = ts.default_device().xla
    backend.compile_module_cached(_module(3), [device])
    one_entry = _entries(tmp_path)[0].stat().st_size
    private_cache.max_bytes = int(one_entry * 2.5)
    for n in range(4, 9):
        backend.compile_module_cached(_module(n), [device])
    sizes = [p.stat().st_size for p in _entries(tmp_path)]
    assert sum(sizes) <= private_cache.max_bytes and private_cache.stats.evictions >= 3


def test_compiler_options_reach_xla_and_key_the_cache(private_cache: compile_cache.DiskCache, rng: Any) -> None:
    x = rng.standard_normal((16, 16)).astype(np.float32)
    ynn_off = {"xla_cpu_experimental_ynn_fusion_type": ""}  # an XLA:CPU option: on the CPU whatever the default
    def gram(a: Any) -> Any:
        return a @ a.T

    f = ts.program(gram, compiler_options=ynn_off, device="cpu")
    np.testing.assert_allclose(np.asarray(f(x)), x.astype(np.float64) @ x.T, rtol=1e-5, atol=1e-5)
    staged = ts.program(gram).stage(x)
    assert staged.compile("cpu").from_disk_cache is False  # the same module without the options: its own entry
    assert staged.compile("cpu", compiler_options=ynn_off).from_disk_cache is True  # the program's entry
    assert backend.compile_options(ynn_off).SerializeAsString() != xc.CompileOptions().SerializeAsString()
    with pytest.raises(ValueError, match="No such compile option: 'xla_no_such_option'"):
        staged.compile("cpu", compiler_options={"xla_no_such_option": True})
    with pytest.raises(ValueError, match="xla_cpu_enable_fast_math"):
        staged.compile("cpu", compiler_options={"xla_cpu_enable_fast_math": 1.5})
    with pytest.raises(TypeError, match="compiler_options"):
        staged.compile("cpu", compiler_options={"xla_cpu_enable_fast_math": None})  # type: ignore[dict-item]
