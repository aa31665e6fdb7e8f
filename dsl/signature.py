"""Reading ``Tensor[...]`` annotations and binding their dims to sizes (by name or from example arguments)."""

from __future__ import annotations

import inspect
import operator
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, get_args, get_origin

import attrs
import numpy as np
import typing_extensions

from . import pytree
from .dims import Dim
from .dtypes import DType, from_numpy
from .staging import dtypes as _dt
from .staging.errors import DTypeError, ShapeError
from .staging.ir import Aval, SourceLoc
from .tensor import Tensor


class DimSpec(NamedTuple):
    name: str | None  # a Dim class name, or None for Literal[n] / free dims
    size: int | None  # fixed size (Dim with size=, Literal[n]) or None (bound at stage time)


class TensorSpec(NamedTuple):
    """An annotation ``Tensor[DT, *dims]``: ``dtype`` None means any dtype within ``category``."""

    dtype: np.dtype[Any] | None
    category: type[DType]
    dims: tuple[DimSpec, ...]
    variadic: bool  # the annotation had ``*S``: any number of extra leading axes

    def describe(self) -> str:
        dt = _dt.short_name(self.dtype) if self.dtype is not None else self.category.__name__
        parts = [d.name or (str(d.size) if d.size is not None else "?") for d in self.dims]
        if self.variadic:
            parts.insert(0, "...")
        return f"Tensor[{', '.join([dt, *parts])}]"


class Spec:
    """An abstract argument for staging without data: ``ts.Spec((32, 784), f32)``."""

    __slots__ = ("aval",)

    def __init__(self, shape: Sequence[int], dtype: Any, dims: Sequence[str | None] | None = None) -> None:
        from .dtypes import to_numpy

        sizes = tuple(operator.index(n) for n in shape)
        if any(n < 0 for n in sizes):
            raise ValueError(f"Spec: negative dimension in shape {sizes}")
        self.aval = Aval(sizes, to_numpy(dtype), dims)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    def __repr__(self) -> str:
        return f"Spec({self.aval})"


_UNPACKS = (typing.Unpack, typing_extensions.Unpack)


def tensor_spec(annotation: Any) -> TensorSpec | None:
    origin = get_origin(annotation)
    if not (inspect.isclass(origin) and issubclass(origin, Tensor)):
        return None
    args = get_args(annotation)
    if not args:
        return TensorSpec(None, DType, (), True)
    dtype_arg, dim_args = args[0], args[1:]
    dtype: np.dtype[Any] | None = None
    category: type[DType] = DType
    if inspect.isclass(dtype_arg) and issubclass(dtype_arg, DType):
        if hasattr(dtype_arg, "numpy"):
            dtype = dtype_arg.numpy
        category = dtype_arg
    elif isinstance(dtype_arg, typing.TypeVar) and inspect.isclass(dtype_arg.__bound__):
        category = typing.cast(type[DType], dtype_arg.__bound__)
    dims: list[DimSpec] = []
    variadic = False
    for arg in dim_args:
        if get_origin(arg) in _UNPACKS or isinstance(arg, typing.TypeVarTuple):
            variadic = True
            dims.clear()  # only the axes after ``*S`` are matched (ops match one end)
        elif inspect.isclass(arg) and issubclass(arg, Dim):
            dims.append(DimSpec(arg.__name__, arg.size))
        elif get_origin(arg) is Literal:
            dims.append(DimSpec(None, int(get_args(arg)[0])))
        else:
            dims.append(DimSpec(None, None))
    return TensorSpec(dtype, category, tuple(dims), variadic)


def annotation_tree(annotation: Any) -> Any:
    """The pytree of TensorSpecs an annotation describes (None where it says nothing we can use)."""
    spec = tensor_spec(annotation)
    if spec is not None:
        return spec
    origin = get_origin(annotation)
    if origin is tuple:
        args = get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis:
            return None
        return tuple(annotation_tree(a) for a in args)
    if inspect.isclass(annotation) and attrs.has(annotation):
        hints = typing.get_type_hints(annotation)
        return _AttrsSpec(annotation, {f.name: annotation_tree(hints.get(f.name)) for f in attrs.fields(annotation)})
    return None


class _AttrsSpec(NamedTuple):
    cls: type
    fields: dict[str, Any]


def function_annotations(fn: Callable[..., Any]) -> tuple[list[str], dict[str, Any], Any]:
    """Parameter names, their annotation trees, and the return annotation tree."""
    try:
        signature = inspect.signature(fn)
        hints = typing.get_type_hints(fn)
    except (TypeError, ValueError, NameError):
        return [], {}, None
    names = [
        p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    trees = {name: annotation_tree(hints[name]) for name in names if name in hints}
    return names, trees, annotation_tree(hints["return"]) if "return" in hints else None


class DimBinder:
    """Binds dim names to sizes, remembering which argument bound each so conflicts can be explained."""

    def __init__(self, given: dict[str, int], loc: SourceLoc | None) -> None:
        for name, size in given.items():
            if type(size) is not int and not isinstance(size, np.integer):
                raise TypeError(
                    f"stage(): keyword arguments are dim sizes by name (stage(Batch=32)), but {name}= got "
                    f"{type(size).__name__} {size!r:.60}; pass example arguments by position (for a keyword-only "
                    "parameter, call the program: it stages on first use)"
                    + (f"\n  at {loc}" if loc is not None else "")
                )
            if size < 0:
                raise ShapeError(f"dim {name}={size!r} must be a non-negative int", "stage", loc)
        self.sizes: dict[str, int] = {name: int(size) for name, size in given.items()}
        self.origin: dict[str, str] = {name: f"stage({name}={size})" for name, size in given.items()}
        self.loc = loc

    def bind(self, name: str, size: int, where: str) -> None:
        known = self.sizes.get(name)
        if known is None:
            self.sizes[name] = size
            self.origin[name] = where
        elif known != size:
            raise ShapeError(
                f"dim {name} is bound to {known} by {self.origin[name]} and to {size} by {where}", "stage", self.loc
            )

    def aval_from_example(self, spec: TensorSpec | None, example: Aval, where: str) -> Aval:
        """Check an example against its annotation and name its axes."""
        if spec is None:
            return example.anonymous()
        if spec.dtype is not None and example.dtype != spec.dtype:
            raise DTypeError(f"{where} is {example}, but the annotation says {spec.describe()}", "stage", self.loc)
        if spec.dtype is None and not issubclass(from_numpy(example.dtype), spec.category):
            raise DTypeError(f"{where} is {example}, but the annotation says {spec.describe()}", "stage", self.loc)
        rank = len(spec.dims)
        if example.ndim < rank or (not spec.variadic and example.ndim != rank):
            raise ShapeError(
                f"{where} has rank {example.ndim} ({example}), but the annotation {spec.describe()} has rank {rank}",
                "stage",
                self.loc,
            )
        lead = example.ndim - rank
        names: list[str | None] = [None] * lead
        for axis, dim in enumerate(spec.dims):
            size = example.shape[lead + axis]
            if dim.size is not None and dim.size != size:
                label = dim.name or f"Literal[{dim.size}]"
                raise ShapeError(
                    f"{where} axis {lead + axis} has size {size}, but {label} is fixed at {dim.size}", "stage", self.loc
                )
            if dim.name is not None:
                self.bind(dim.name, size, f"{where} (axis {lead + axis})")
            names.append(dim.name)
        return Aval(example.shape, example.dtype, names)

    def aval_from_spec(self, spec: TensorSpec, where: str) -> Aval:
        if spec.dtype is None:
            raise TypeError(f"stage(): {where} is annotated {spec.describe()} without a concrete dtype; pass an example")
        if spec.variadic:
            raise TypeError(f"stage(): {where} is annotated {spec.describe()} with variadic dims; pass an example")
        shape: list[int] = []
        for dim in spec.dims:
            size = dim.size if dim.size is not None else self.sizes.get(dim.name or "")
            if size is None:
                label = dim.name or "an anonymous dim"
                raise TypeError(f"stage(): {label} of {where} has no size; pass {label}=... or example arguments")
            shape.append(size)
        return Aval(tuple(shape), spec.dtype, [d.name for d in spec.dims])


def build_from_specs(tree: Any, make_leaf: Callable[[TensorSpec, str], Any], where: str) -> Any:
    """Instantiate an annotation tree, building each Tensor leaf with ``make_leaf`` (attrs classes rebuilt)."""
    if isinstance(tree, TensorSpec):
        return make_leaf(tree, where)
    if isinstance(tree, _AttrsSpec):
        return tree.cls(**{k: build_from_specs(v, make_leaf, f"{where}.{k}") for k, v in tree.fields.items()})
    if isinstance(tree, tuple):
        return tuple(build_from_specs(v, make_leaf, f"{where}[{i}]") for i, v in enumerate(tree))
    raise TypeError(f"stage(): cannot build {where} from its annotation; pass an example argument")


def aligned_specs(tree: Any, value: Any) -> list[TensorSpec | None]:
    """One TensorSpec (or None where unannotated) per leaf of ``value``, in pytree leaf order."""
    if isinstance(tree, TensorSpec):
        return [tree] * len(pytree.leaves(value))
    if isinstance(tree, _AttrsSpec) and attrs.has(type(value)):
        out: list[TensorSpec | None] = []
        for field in attrs.fields(type(value)):
            out.extend(aligned_specs(tree.fields.get(field.name), getattr(value, field.name)))
        return out
    if isinstance(tree, tuple) and type(value) in (tuple, list) and len(tree) == len(value):
        return [s for t, v in zip(tree, value) for s in aligned_specs(t, v)]
    return [None] * len(pytree.leaves(value))
