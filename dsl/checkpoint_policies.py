"""Checkpoint policies, under JAX's names: which values ``ts.checkpoint(f, policy=...)`` saves for the backward
pass instead of recomputing them.

A policy is called as ``policy(primitive, *avals, **params) -> bool`` for every equation of the checkpointed
function (``CheckpointPolicy``): the equation's primitive (compare ``primitive.name``: ``"dot_general"``,
``"conv_general_dilated"``, ``"checkpoint_name"``, ... as printed graphs show them), its operands' abstract
values (``.shape``, ``.dtype``, ``.dims``) and its params (a ``checkpoint_name`` equation has ``name``; a
``dot_general`` has ``contracting`` and ``batch``). ``True`` saves the equation's outputs.

Deliberate differences from JAX:

- The offload policies (``offload_dot_with_no_batch_dims``, ``save_and_offload_only_these_names``) are absent:
  they move residuals to host memory, which programs compiled here cannot address; accepting them as plain
  "save" would silently keep on the device what the caller meant to move off it.
- ``save_anything_except_these_names(*names)`` is JAX's: every equation is saveable but the ``checkpoint_name``
  tags given, and since the tagged value's own producer is saveable, the value stays saved (JAX's current
  version returns ``True`` for everything, the same residuals). To recompute a value, use a policy that refuses
  its producer (``save_only_these_names`` for the others).
- A policy's verdict must be a ``bool`` (a ``TypeError`` names the policy and the primitive otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .staging.ir import Aval
from .staging.primitive import Primitive
from .staging.primitives.convolution import conv_general_dilated_p
from .staging.primitives.linalg import dot_general_p
from .staging.primitives.remat import CheckpointPolicy, checkpoint_name_p

__all__ = [
    "CheckpointPolicy", "checkpoint_dots", "checkpoint_dots_with_no_batch_dims", "dots_saveable",
    "dots_with_no_batch_dims_saveable", "everything_saveable", "nothing_saveable", "save_any_names_but_these",
    "save_anything_except_these_names", "save_from_both_policies", "save_only_these_names",
]


@dataclass(frozen=True, repr=False)
class _Always:
    verdict: bool
    label: str

    def __call__(self, prim: Primitive, /, *avals: Aval, **params: Any) -> bool:
        return self.verdict

    def __repr__(self) -> str:
        return self.label


everything_saveable: CheckpointPolicy = _Always(True, "everything_saveable")
"""Save every value: the gradient costs what it costs without ``ts.checkpoint``."""
nothing_saveable: CheckpointPolicy = _Always(False, "nothing_saveable")
"""Save nothing but the inputs (``ts.checkpoint``'s default)."""


@dataclass(frozen=True, repr=False)
class _Dots:
    without_batch_dims: bool

    def __call__(self, prim: Primitive, /, *avals: Aval, **params: Any) -> bool:
        if prim is dot_general_p:
            return not self.without_batch_dims or params["batch"] == ((), ())
        return prim is conv_general_dilated_p and not self.without_batch_dims

    def __repr__(self) -> str:
        return "dots_with_no_batch_dims_saveable" if self.without_batch_dims else "dots_saveable"


dots_saveable: CheckpointPolicy = _Dots(False)
"""Save the results of matrix products (``dot_general``) and convolutions; recompute the rest from them."""
checkpoint_dots = dots_saveable
dots_with_no_batch_dims_saveable: CheckpointPolicy = _Dots(True)
"""Save the results of matrix products without batch dimensions (a transformer's projections, not its
attention scores)."""
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


@dataclass(frozen=True, repr=False)
class _Names:
    """A ``checkpoint_name`` tag is saved when it is among ``names`` exactly when ``listed`` is True; every other
    equation gets ``others``."""

    names: frozenset[str]
    listed: bool
    others: bool
    label: str

    def __call__(self, prim: Primitive, /, *avals: Aval, **params: Any) -> bool:
        if prim is checkpoint_name_p:
            return (params["name"] in self.names) == self.listed
        return self.others

    def __repr__(self) -> str:
        return f"{self.label}({', '.join(map(repr, sorted(self.names)))})"


def _names(label: str, names: tuple[str, ...], listed: bool, others: bool) -> CheckpointPolicy:
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{label}: names are strings (as given to ts.checkpoint_name), got {name!r}")
    return _Names(frozenset(names), listed, others, label)


def save_only_these_names(*names: str) -> CheckpointPolicy:
    """Save the values tagged with one of ``names`` by ``ts.checkpoint_name``, and nothing else."""
    return _names("save_only_these_names", names, listed=True, others=False)


def save_any_names_but_these(*names: str) -> CheckpointPolicy:
    """Save the values tagged by ``ts.checkpoint_name`` with any name but ``names``, and nothing untagged."""
    return _names("save_any_names_but_these", names, listed=False, others=False)


def save_anything_except_these_names(*names: str) -> CheckpointPolicy:
    """Every equation is saveable but the ``checkpoint_name`` tags ``names`` (JAX's policy; see the module notes:
    the tagged values' producers are saveable too)."""
    return _names("save_anything_except_these_names", names, listed=False, others=True)


@dataclass(frozen=True, repr=False)
class _Either:
    first: CheckpointPolicy
    second: CheckpointPolicy

    def __call__(self, prim: Primitive, /, *avals: Aval, **params: Any) -> bool:
        verdicts = (self.first(prim, *avals, **params), self.second(prim, *avals, **params))
        for policy, verdict in zip((self.first, self.second), verdicts):
            if not isinstance(verdict, bool):
                raise TypeError(
                    f"{self!r}: {policy!r} returned {verdict!r} for {prim.name}; policies return a bool"
                )
        return verdicts[0] or verdicts[1]

    def __repr__(self) -> str:
        return f"save_from_both_policies({self.first!r}, {self.second!r})"


def save_from_both_policies(policy_1: CheckpointPolicy, policy_2: CheckpointPolicy) -> CheckpointPolicy:
    """Save what either policy saves."""
    for policy in (policy_1, policy_2):
        if not callable(policy):
            raise TypeError(f"save_from_both_policies: a policy is a callable, got {policy!r}")
    return _Either(policy_1, policy_2)


_OFFLOAD = {"offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"}

if not TYPE_CHECKING:  # for mypy the names stay absent, as they are

    def __getattr__(name: str) -> Any:
        if name in _OFFLOAD:
            raise AttributeError(
                f"checkpoint_policies.{name} is not available: host offload of residuals is not supported by "
                "tensorstage's programs; use the policy without offload (dots_with_no_batch_dims_saveable, "
                "save_only_these_names), which saves on the device"
            )
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
