"""``ts.print_environment_info()`` (``jax.print_environment_info``): the versions, devices and settings to
include in a question or a bug report.

Deliberate difference from JAX: it lists tensorstage's environment variables (``TENSORSTAGE_*``) with JAX's
``JAX_*`` and ``XLA_*`` ones, and the device line names the default platform's devices.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

import jaxlib.version
import numpy as np

from .transfers import default_backend, device_count, local_device_count

__all__ = ["print_environment_info"]


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or, with ``return_string=True``, return) the tensorstage, jaxlib, NumPy and Python versions, the
    devices, the platform, the relevant environment variables and ``nvidia-smi``'s report where there is one."""
    from . import __version__  # the package's, read at call time (this module is imported while it loads)

    backend = default_backend()
    python_version = sys.version.replace("\n", " ")
    lines = [
        f"tensorstage: {__version__}",
        f"jaxlib:      {jaxlib.version.__version__}",
        f"numpy:       {np.__version__}",
        f"python:      {python_version}",
        f"device info: {backend}-{device_count()}, {local_device_count()} local devices",
        "process_count: 1",
        f"platform: {platform.uname()}",
    ]
    lines += [f"{key}={value}" for key, value in os.environ.items()
              if key.startswith(("TENSORSTAGE_", "JAX_", "XLA_"))]
    info = "\n".join(lines)
    smi = _nvidia_smi()
    if smi:
        info += "\n\n$ nvidia-smi\n" + smi
    if return_string:
        return info
    print(info)
    return None


def _nvidia_smi() -> str | None:
    """``nvidia-smi``'s report, or None where it is absent or fails (as JAX's ``try_nvidia_smi``)."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        return subprocess.check_output(["nvidia-smi"], timeout=10).decode()
    except (OSError, subprocess.SubprocessError):
        return None
