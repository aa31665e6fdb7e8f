"""Every registered primitive carries every rule a transform needs, and a lowering."""

from __future__ import annotations

import tensorstage  # noqa: F401 - registers every primitive and lowering
from tensorstage.lowering.emit import LOWERINGS
from tensorstage.staging.primitive import REGISTRY


def test_every_primitive_has_all_rules_and_a_lowering() -> None:
    missing: dict[str, list[str]] = {}
    for name, prim in sorted(REGISTRY.items()):
        lacking = [rule for rule in ("shape", "jvp", "vjp", "batch") if getattr(prim, rule) is None]
        if prim not in LOWERINGS:
            lacking.append("lowering")
        if lacking:
            missing[name] = lacking
    assert not missing, f"primitives lacking rules: {missing}"


def test_registry_is_not_empty() -> None:
    assert {"add", "dot_general", "reduce_sum", "stop_gradient", "custom_vjp_call", "custom_jvp_call"} <= set(REGISTRY)
