"""Running ``_first_result.py`` in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def first_result(impl: str, workload: str, **env: str) -> dict[str, Any]:
    """``impl`` is tensorstage, jax, or ``phases`` (tensorstage, timed phase by phase)."""
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **env}
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "_first_result.py"), impl, workload],
        env=environment, capture_output=True, text=True,
    )
    if done.returncode != 0:  # say why: capture_output would hide the child's traceback
        sys.stderr.write(done.stderr[-4000:])
        raise RuntimeError(f"_first_result.py {impl} {workload} failed with exit status {done.returncode}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
