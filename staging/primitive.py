"""A primitive is one object that carries every rule about it.

Rules (all optional at construction so families can be written top to bottom, but a registry test demands the
ones each transform needs):

- ``shape(*avals, **params) -> Aval | tuple[Aval, ...]``: abstract evaluation with checks and good messages.
- ``jvp(primals, tangents, outs, **params) -> tangent_outs``: forward-mode rule. ``tangents`` hold atoms or
  ``Zero``; ``outs`` are the already-emitted primal outputs. Returns one tangent (or Zero) per output.
- ``vjp(cts, primals, outs, wants, **params) -> input_cts``: reverse-mode rule. ``cts`` hold atoms or Zero, one
  per output; ``wants[i]`` says whether input i needs a cotangent. Returns one atom / Zero / None per input.
- ``vjp_forward(primals, active, **params) -> (outs, backward)`` (optional): reverse mode emits the primal
  outputs through this rule and later calls ``backward(cts, wants)``, so residuals are computed once (custom_vjp,
  cond, scan) instead of once for the value and again for the cotangents.
- ``batch(args, dims, **params) -> (outs, out_dims)``: vmap rule; ``dims[i]`` is the batched axis of arg i or
  None. The walker only calls it when at least one arg is batched.
- ``lower``: registered from ``tensorstage.lowering`` keyed by the primitive; staging never imports lowering.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .ir import Aval

ShapeRule = Callable[..., "Aval | tuple[Aval, ...]"]
Rule = Callable[..., Any]


class Primitive:
    __slots__ = ("name", "multiple_results", "shape", "jvp", "vjp", "vjp_forward", "batch", "differentiable")

    def __init__(self, name: str, *, multiple_results: bool = False, differentiable: bool = True) -> None:
        self.name = name
        self.multiple_results = multiple_results
        # False for primitives whose outputs are never differentiable (integer or boolean outputs only).
        self.differentiable = differentiable
        self.shape: ShapeRule | None = None
        self.jvp: Rule | None = None
        self.vjp: Rule | None = None
        self.vjp_forward: Rule | None = None
        self.batch: Rule | None = None
        if name in REGISTRY:
            raise ValueError(f"primitive {name!r} is defined twice")
        REGISTRY[name] = self

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"

    # Decorators so that a primitive's rules read as one block right after its definition.
    def def_shape(self, rule: ShapeRule) -> ShapeRule:
        self.shape = rule
        return rule

    def def_jvp(self, rule: Rule) -> Rule:
        self.jvp = rule
        return rule

    def def_vjp(self, rule: Rule) -> Rule:
        self.vjp = rule
        return rule

    def def_vjp_forward(self, rule: Rule) -> Rule:
        self.vjp_forward = rule
        return rule

    def def_batch(self, rule: Rule) -> Rule:
        self.batch = rule
        return rule


REGISTRY: Final[dict[str, Primitive]] = {}
