"""pmap training-loop shape: ``x = step(x)`` on 4 CPU devices with a 4 x 1M f32 state (16 MB).

Compares, per step:
- tensorstage now: the result stays on the devices (one array split over them) and goes back in as it is;
- tensorstage with a forced host round trip (the old behaviour: gather the result to the host, put it on the
  default device, then slice it onto the 4 devices again on the next call);
- jax.pmap on the same workload (when jax is installed; it gets 4 host devices through XLA_FLAGS);
- NumPy doing the same update on the host.

Not part of run.py. Usage: ``python benchmarks/pmap_loop.py``.
"""

from __future__ import annotations

import os

N_DEVICES = 4
os.environ["TENSORSTAGE_CPU_DEVICES"] = str(N_DEVICES)
_flag = f"--xla_force_host_platform_device_count={N_DEVICES}"
if _flag not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _flag).strip()

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from _common import interleaved, try_jax  # noqa: E402

import tensorstage as ts  # noqa: E402

PER_DEVICE = 1_000_000
STEPS = 20


def update(x: Any) -> Any:
    return x * np.float32(0.999) + np.float32(0.001)


def main() -> None:
    start = np.random.default_rng(0).standard_normal((N_DEVICES, PER_DEVICE)).astype(np.float32)
    step = ts.pmap(update)
    fns: dict[str, Callable[[], None]] = {}

    state = {"x": step(start)}

    def now() -> None:
        state["x"] = step(state["x"])  # pmap waits for the collective-safe launch itself

    def host_round_trip() -> None:
        # the old path: result gathered to the host and put on the default device; next call re-slices it
        state["x"] = step(ts.device_put(np.asarray(state["x"])))

    fns["tensorstage (stays on devices)"] = now
    fns["tensorstage (host round trip)"] = host_round_trip

    host = {"x": start.copy()}

    def numpy_step() -> None:
        host["x"] = update(host["x"])

    fns["numpy (host)"] = numpy_step

    jax = try_jax()
    if jax is not None and len(jax.devices("cpu")) >= N_DEVICES:
        jstep = jax.pmap(update, devices=jax.devices("cpu")[:N_DEVICES])
        jstate = {"x": jstep(start)}

        def jax_step() -> None:
            jstate["x"] = jstep(jstate["x"]).block_until_ready()

        fns["jax.pmap"] = jax_step
        np.testing.assert_allclose(np.asarray(jstep(start)), np.asarray(step(start)), rtol=1e-6)
    elif jax is not None:
        print(f"(jax sees {len(jax.devices('cpu'))} CPU devices; set XLA_FLAGS={_flag} before importing it)")

    results = interleaved(fns, STEPS, rounds=7)
    print(f"pmap loop: {N_DEVICES} CPU devices x {PER_DEVICE:,} f32, x = step(x), best of 7 interleaved rounds "
          f"x {STEPS} steps")
    for name, seconds in results.items():
        print(f"  {name:34s} {seconds * 1e3:8.3f} ms/step")
    now_s = results["tensorstage (stays on devices)"]
    print(f"  host round trip / stays on devices: {results['tensorstage (host round trip)'] / now_s:6.2f}x")
    print(f"  stays on devices / numpy:           {now_s / results['numpy (host)']:6.2f}x")
    if "jax.pmap" in results:
        print(f"  stays on devices / jax.pmap:        {now_s / results['jax.pmap']:6.2f}x")


if __name__ == "__main__":
    main()
