"""The annotations of ``vmap(f, Batch)``: ``f``'s Tensor annotations with the ``Batch`` dim inserted at each mapped
axis, so the batched Program binds and checks dims like any typed program (``stage(Batch=128, In=784)``)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, get_args, get_origin

from .dims import Dim
from .program import Program
from .signature import tensor_spec

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def batched_signature(
    f: Callable[..., Any], in_axes: Any, out_axes: Any, dim: type[Dim]
) -> tuple[inspect.Signature, dict[str, Any]] | None:
    """The signature and annotations of the batched function, or None when ``f`` has none we can rewrite."""
    fn = f.fn if isinstance(f, Program) else f
    try:
        signature = inspect.signature(fn)
        hints = typing.get_type_hints(fn)
    except (TypeError, ValueError, NameError):
        return None
    params = list(signature.parameters.values())
    positional = [p for p in params if p.kind in _POSITIONAL]
    per_arg = isinstance(in_axes, (tuple, list))
    if per_arg and len(in_axes) != len(positional):
        return None  # the call will report the mismatch with a proper message
    annotations: dict[str, Any] = {}
    for p in params:
        if p.kind in _POSITIONAL:
            axis = in_axes[positional.index(p)] if per_arg else in_axes
        else:
            axis = 0  # keyword arguments are mapped along axis 0
        hint = _with_dim(hints.get(p.name), axis, dim)
        if hint is not None:
            annotations[p.name] = hint
    returned = _with_dim(hints.get("return"), out_axes, dim)
    if returned is not None:
        annotations["return"] = returned
    empty = inspect.Parameter.empty
    new_params = [p.replace(annotation=annotations.get(p.name, empty)) for p in params]
    return signature.replace(parameters=new_params, return_annotation=annotations.get("return", empty)), annotations


def _with_dim(hint: Any, axis: Any, dim: type[Dim]) -> Any:
    """``Tensor[DT, *dims]`` with ``dim`` inserted at ``axis``. None where that cannot be written (no hint, a
    pytree, an annotation with ``*S``, an axis out of range): such values are simply not checked by annotation."""
    if hint is None or axis is None:
        return hint
    spec = tensor_spec(hint)
    if spec is None or spec.variadic:
        return None
    if isinstance(axis, type):
        return hint if spec.dims and any(d.name == axis.__name__ for d in spec.dims) else None
    dtype, *dims = get_args(hint)
    rank = len(dims) + 1
    if not isinstance(axis, int) or not -rank <= axis < rank:
        return None
    dims.insert(axis % rank, dim)
    return get_origin(hint)[(dtype, *dims)]
