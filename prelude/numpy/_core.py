"""What every op of ``tensorstage.numpy`` shares: running eagerly on concrete arrays, turning operands into
graph atoms with weak scalar typing, and NumPy broadcasting under tensorstage's stricter policy."""

from __future__ import annotations

import functools
import inspect
import math
import operator
import sys
import typing
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeAlias, TypeVar, cast

import numpy as np

from ...array import Array, as_host_array
from ...dims import Dim
from ...program import Program
from ...staging import dtypes as _dt
from ...staging.builder import _STACK
from ...staging.errors import DTypeError, ShapeError, StagingError
from ...staging.ir import Atom, Aval, DimName, Literal, format_dims, scalar_aval
from ...staging.primitives import elementwise as E
from ...staging.primitives import structural as S
from ...staging.source import user_location
from ...tensor import Tensor, Traced
from ...trace import WeakTraced, to_atom

F = TypeVar("F", bound=Callable[..., Any])


def op(fn: F) -> F:
    """Make a staged function also work on concrete arrays: outside staging it is compiled once per
    signature (every non-array argument is static) and run."""
    eager = Program(fn, scalars_dynamic=False, check_annotations=False, name=fn.__name__)
    name = fn.__name__.lstrip("_")
    settings: list[_Settings] = []  # read from the annotations at first need

    def with_python_settings(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """NumPy scalars and concrete arrays given as settings (an axis, a stride, a rate, a shape) as the Python
        values they hold."""
        if not settings:
            settings.append(_python_value_parameters(fn))
        positions, names, flags = settings[0]
        for flag, position in flags.items():
            value = kwargs[flag] if flag in kwargs else args[position] if position < len(args) else False
            if not isinstance(value, (bool, np.bool_, int)):
                # NumPy's positional order differs for some ops (``sum(x, 0, np.float32)``: a dtype where
                # keepdims stands here): a truthy dtype or string must not silently mean True.
                hint = "; a dtype is keyword-only here (dtype=...)" if isinstance(value, (type, np.dtype)) else ""
                raise TypeError(f"{flag} must be a bool, got {value!r}{hint}")
        if any(_holds_host_value(a) for i, a in enumerate(args) if i in positions):
            args = tuple(_python_values(a) if i in positions else a for i, a in enumerate(args))
        if names and any(_holds_host_value(v) for k, v in kwargs.items() if k in names):
            kwargs = {k: _python_values(v) if k in names else v for k, v in kwargs.items()}
        return args, kwargs

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            if _STACK:  # staging
                if not kwargs:
                    for arg in args:
                        if type(arg) not in _INERT:
                            break
                    else:  # no user code can run inside: find the user's line once for all the op's equations
                        # (inlined: this runs per op staged)
                        builder = _STACK[-1]
                        if builder.loc is not None:  # a transform replaying a graph has pinned one already
                            return fn(*args)
                        builder.loc = user_location()
                        try:
                            return fn(*args)
                        finally:
                            builder.loc = None
                args, kwargs = with_python_settings(args, kwargs)
                return fn(*args, **kwargs)
            args, kwargs = with_python_settings(args, kwargs)
            return eager(*args, **kwargs)
        except StagingError as err:  # a primitive's error: say which op the user called
            raise err.within(name)
        except FloatingPointError:  # debug_nans found a bad value: it names the op and the line already
            raise
        except (TypeError, ValueError, IndexError, ArithmeticError) as exc:
            raise _named(exc, name) from exc

    return cast(F, wrapper)


class _Settings(NamedTuple):
    positions: frozenset[int]  # of the parameters annotated with Python values only
    names: frozenset[str]
    flags: dict[str, int]  # ``bool`` parameters: name -> position (a large one when keyword-only)


def _python_value_parameters(fn: Callable[..., Any]) -> _Settings:
    """Positions and names of ``fn``'s parameters annotated with Python values only (no tensor, no ``Any``): a
    stride, an axis, a rate. A NumPy scalar given there is the number it holds (eagerly it would be a staged
    array, as a NumPy scalar given as data is; staged, a strongly typed f64 in a rate's arithmetic)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return _Settings(frozenset(), frozenset(), {})
    hints = _parameter_hints(fn)
    positions, names, flags = set(), set(), {}
    for i, (pname, parameter) in enumerate(signature.parameters.items()):
        if pname in hints and _python_values_only(hints[pname]):
            names.add(pname)
            positional = parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
            if positional:
                positions.add(i)
            if hints[pname] is bool:
                flags[pname] = i if positional else sys.maxsize
    return _Settings(frozenset(positions), frozenset(names), flags)


def _parameter_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """``fn``'s annotations resolved in its module's namespace; if one does not resolve there (a name imported for
    type checking only), each of the others on its own, so that it alone loses the settings conversion."""
    try:
        return typing.get_type_hints(fn)
    except (TypeError, NameError):
        pass
    hints = {}
    namespace = getattr(fn, "__globals__", {})
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        try:
            hints.update(typing.get_type_hints(_Annotations({name: annotation}), globalns=namespace))
        except (TypeError, NameError):
            continue
    return hints


class _Annotations:
    """One annotation to resolve (``typing.get_type_hints`` takes objects holding ``__annotations__``)."""

    def __init__(self, annotations: dict[str, Any]) -> None:
        self.__annotations__ = annotations


def _python_values_only(hint: Any) -> bool:
    if hint is Any or isinstance(hint, TypeVar):
        return False
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return True
    if origin is None:
        return hint in (int, float, bool, str, type(None)) or (isinstance(hint, type) and not issubclass(hint, Tensor)
                                                                and not issubclass(hint, np.ndarray))
    return all(_python_values_only(arg) for arg in typing.get_args(hint) if arg is not Ellipsis) and not (
        isinstance(origin, type) and issubclass(origin, Tensor)
    )


def _holds_host_value(x: Any) -> bool:
    return isinstance(x, (np.generic, np.ndarray, Array)) or (
        type(x) in (tuple, list) and any(_holds_host_value(v) for v in x)
    )


def _python_values(x: Any) -> Any:
    """NumPy scalars, NumPy arrays and concrete Arrays in ``x`` (a value, or a tuple or list of them) as Python
    numbers and lists (``reshape(x, np.array([4, 3]))``, ``tri(np.array(3))``, as NumPy takes them)."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (np.ndarray, Array)):
        return x.tolist()
    if type(x) in (tuple, list):
        return type(x)(_python_values(v) for v in x)
    return x


# Argument types whose use by an op runs library code only (no user callbacks, iterators or dunder methods).
_INERT: frozenset[type] = frozenset({Traced, WeakTraced, int, float, bool})


def _named(exc: Exception, op_name: str) -> Exception:
    """A plain Python error raised under an op, as one that names the op and the user's line (NumPy's types;
    overflow and division by zero in static arguments become ValueErrors)."""
    kind = type(exc)
    if kind not in (TypeError, ValueError, IndexError):
        if not isinstance(exc, ArithmeticError):
            return exc  # a library's own exception class: leave it alone
        kind = ValueError
    text = str(exc)
    if not text.startswith(op_name):
        text = f"{op_name}: {text}"
    loc = None if "\n  at " in text else user_location()  # raised by an inner op: located already
    return kind(text if loc is None else f"{text}\n  at {loc}")


# An op's result as a staged tensor: the class itself, not a function calling it (this runs per op staged).
wrap: Callable[[Atom], Traced[Any]] = Traced


def is_weak(x: object) -> bool:
    return type(x) in (int, float, bool, complex) or isinstance(x, WeakTraced)


def shape_error(op_name: str, message: str) -> ShapeError:
    return ShapeError(message, op_name, user_location())


def dtype_error(op_name: str, message: str) -> DTypeError:
    return DTypeError(message, op_name, user_location())


def describe(x: Any) -> str:
    if isinstance(x, Tensor):
        return str(x.aval)
    if isinstance(x, (np.ndarray, np.generic)):
        return f"{_dt.short_name(np.dtype(x.dtype))}[{', '.join(map(str, np.shape(x)))}]"
    return repr(x)


def atom(x: Any, dtype: np.dtype[Any] | None = None, op_name: str | None = None) -> Atom:
    """An operand as an atom; Python scalars take ``dtype`` (weak typing)."""
    if isinstance(x, WeakTraced) and dtype is not None and x.aval.dtype != dtype:
        return x.as_dtype(dtype, op_name)
    if isinstance(x, Traced):
        return x.atom
    if type(x) in (int, float, bool, complex) and dtype is not None:
        try:
            value = np.asarray(x, dtype=dtype)
        except OverflowError:
            message = f"Python scalar {x!r} does not fit {_dt.short_name(dtype)}"
            raise DTypeError(message, None, user_location()) from None
        return Literal(value, scalar_aval(dtype))
    return to_atom(x)


def result_dtype(op_name: str, operands: Sequence[Any]) -> np.dtype[Any]:
    """The common dtype: strong operands must agree exactly; weak scalars adopt it."""
    # Fast path: staged strong operands of one dtype, and Python ints or floats only beside a float or complex dtype
    # (what the checks below accept without a message).
    common: np.dtype[Any] | None = None
    scalars = False
    for x in operands:
        kind = type(x)
        if kind is Traced:
            dtype = x.atom.aval.dtype  # not the ``aval`` property: one call less
            if common is None:
                common = dtype
            elif dtype != common:
                break
        elif kind is float or kind is int:
            scalars = True
        else:
            break
    else:
        if common is not None and (not scalars or common in _dt.INEXACT):
            return common
    strong = [x for x in operands if not is_weak(x)]
    dtypes = {_operand_dtype(x, op_name) for x in strong}
    if len(dtypes) > 1:
        raise dtype_error(
            op_name,
            f"operands {', '.join(describe(x) for x in strong)} have different dtypes; tensorstage never promotes "
            "between array dtypes: convert one with .astype(...)",
        )
    if dtypes:
        dtype = dtypes.pop()
        for x in operands:
            weak = x.aval.dtype if isinstance(x, WeakTraced) else None  # a Python scalar passed to a program
            if (type(x) is complex or weak is not None and _dt.is_complex(weak)) and not _dt.is_complex(dtype):
                dtype = _complex_with_scalar(op_name, x, dtype)
                continue
            if (type(x) is float or weak is not None and _dt.is_float(weak)) and not _dt.is_inexact(dtype):
                raise dtype_error(
                    op_name,
                    f"float scalar {_scalar_text(x)} with a {_dt.short_name(dtype)} operand: convert it with "
                    ".astype(...)",
                )
            if (type(x) is int or weak is not None and _dt.is_integer(weak)) and dtype == _dt.BOOL:
                raise dtype_error(
                    op_name,
                    f"int scalar {_scalar_text(x)} with a bool operand would become a bool: use True/False, or convert "
                    "the operand with .astype(...)",
                )
        return dtype
    weak_dtypes = [_operand_dtype(x, op_name) for x in operands]
    if any(_dt.is_complex(d) for d in weak_dtypes):
        return _dt.DEFAULT_COMPLEX
    if any(_dt.is_float(d) for d in weak_dtypes):
        return _dt.DEFAULT_FLOAT
    if any(_dt.is_integer(d) for d in weak_dtypes):
        return _dt.DEFAULT_INT
    return _dt.BOOL


def _complex_with_scalar(op_name: str, x: Any, dtype: np.dtype[Any]) -> np.dtype[Any]:
    """A Python complex beside a float array: the complex dtype of the array's width, as JAX gives it (the one
    case where a weak scalar changes the array's dtype: no float dtype holds the value)."""
    wide = _dt.complex_dtype(dtype) if _dt.is_float(dtype) else None
    if wide is None:
        raise dtype_error(
            op_name,
            f"complex scalar {_scalar_text(x)} with a {_dt.short_name(dtype)} operand: convert the operand to c64 or "
            "c128 with .astype(...)",
        )
    return wide


def _scalar_text(x: Any) -> str:
    """A weak scalar for messages: its value, or what it is when only its type is known while staging."""
    return "(a Python number passed in)" if isinstance(x, WeakTraced) else repr(x)


def _operand_dtype(x: Any, op_name: str = "operand") -> np.dtype[Any]:
    if isinstance(x, Tensor):
        return x.aval.dtype
    try:
        if isinstance(x, (np.ndarray, np.generic)):
            return _dt.canonical(x.dtype)
        dtype: np.dtype[Any] = as_host_array(x).dtype
    except (TypeError, ValueError) as exc:
        raise dtype_error(op_name, f"operand {x!r:.80} is not an array of a supported dtype ({exc})") from None
    return dtype


def broadcast_shapes(op_name: str, avals: Sequence[Aval]) -> Aval:
    """NumPy broadcasting with names, minus the silent outer product.

    Lower-rank operands may gain leading axes only if the higher-rank operand is not stretched: so
    ``(Batch, Out) + (Out,)`` is fine but ``(N,) + (N, 1)`` (which NumPy turns into ``(N, N)``) is an error.
    """
    rank = max(a.ndim for a in avals)
    shape: list[int] = []
    names: list[DimName] = []
    for axis in range(rank):
        size = 1
        name: DimName = None
        for a in avals:
            offset = axis - (rank - a.ndim)
            if offset < 0:
                continue
            n = a.shape[offset]
            if n != 1 and size != 1 and n != size:
                raise shape_error(op_name, f"shapes {_shapes(avals)} do not broadcast: axis sizes {size} and {n}")
            if n != 1:
                size = n
        for a in avals:
            offset = axis - (rank - a.ndim)
            if offset >= 0 and a.shape[offset] == size and a.dims[offset] is not None:
                d = a.dims[offset]
                if name is not None and d != name:
                    raise shape_error(
                        op_name, f"operands {_shapes(avals)} disagree on a dim: {name} vs {d} (both size {size})"
                    )
                name = d
        shape.append(size)
        names.append(name)
    out = Aval(tuple(shape), avals[0].dtype, names)
    promoted = [a for a in avals if 0 < a.ndim < rank]
    if promoted:
        for a in avals:
            if a.ndim == rank and a.shape != out.shape:
                raise shape_error(
                    op_name,
                    f"operands {_shapes(avals)} would broadcast to {_shape(out)} by adding leading axes to one operand "
                    f"while stretching size-1 axes of another (the (N,) vs (N, 1) -> (N, N) trap); "
                    "add the axis explicitly (x[:, None] or x[None, :]) to mean an outer product",
                )
    return out


def _shape(a: Aval) -> str:
    return f"({format_dims(a.shape, a.dims)})"


def _shapes(avals: Sequence[Aval]) -> str:
    return " and ".join(_shape(a) for a in avals)


def broadcast_atoms(op_name: str, atoms: Sequence[Atom]) -> list[Atom]:
    """Broadcast operands to one shape; rank-0 operands stay scalars (elementwise primitives take them)."""
    if len(atoms) == 2:  # fast path, the common case: a lower-rank operand that is a suffix of the other
        x, y = atoms
        ax, ay = x.aval, y.aval
        if ax is ay or not ax.shape or not ay.shape:
            return [x, y]
        small, big = (x, ay) if len(ax.shape) < len(ay.shape) else (y, ax)
        k = len(big.shape) - len(small.aval.shape)
        if k > 0 and small.aval.shape == big.shape[k:] and small.aval.dims == big.dims[k:]:
            dtype = small.aval.dtype
            wide = S.broadcast_to(small, big if big.dtype == dtype else big.with_dtype(dtype))
            return [wide, y] if small is x else [x, wide]
    shaped = [a.aval for a in atoms if a.aval.shape]
    if len(shaped) < 2 or (len(shaped) == 2 and shaped[0] is shaped[1]):
        return list(atoms)  # at most one shaped operand (rank-0 ones stay scalars), or one type: nothing to do
    # Fast path: every operand's shape and dim names are the trailing ones of the highest-rank operand; then
    # broadcast_shapes would find that operand's type and raise nothing.
    ref = max(shaped, key=lambda s: len(s.shape))
    rank = len(ref.shape)
    for aval in shaped:
        k = rank - len(aval.shape)
        if aval.shape != ref.shape[k:] or aval.dims != ref.dims[k:]:
            target = broadcast_shapes(op_name, shaped)
            break
    else:
        if all(len(s.shape) == rank for s in shaped):
            return list(atoms)  # nothing to broadcast
        target = ref
    out = []
    for a in atoms:
        if a.aval.ndim == 0 or a.aval.shape == target.shape:
            out.append(a)
        else:
            out.append(S.broadcast_to(a, target.with_dtype(a.aval.dtype)))
    return out


def elementwise_operands(op_name: str, *operands: Any, dtype: np.dtype[Any] | None = None) -> list[Atom]:
    common = result_dtype(op_name, operands) if dtype is None else dtype
    atoms = [atom(x, common, op_name) for x in operands]
    if common in _dt.COMPLEX and dtype is None:  # float arrays beside a Python complex: widened to complex
        atoms = [E.convert(a, common) if _dt.is_float(a.aval.dtype) else a for a in atoms]
    return broadcast_atoms(op_name, atoms)


def normalize_axes(op_name: str, axis: Any, x: Tensor[Any], *, allow_none: bool = True) -> tuple[int, ...]:
    """Axis arguments: None (all), an int, a Dim class, or a tuple of those; named axes must exist on ``x``."""
    ndim = x.aval.ndim
    if axis is None:
        if not allow_none:
            raise shape_error(op_name, "an axis is required")
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out: list[int] = []
    for item in items:
        if isinstance(item, type):
            name = item.__name__
            if name not in x.aval.dims:
                raise shape_error(op_name, f"axis {name} is not a dim of the operand {describe(x)}")
            out.append(x.aval.dims.index(name))
            continue
        if isinstance(item, Tensor):
            raise shape_error(op_name, f"axis must be static (an int or a Dim), got a tensor {describe(item)}")
        try:
            i = operator.index(item)
        except TypeError:
            raise TypeError(f"{op_name}: axis {item!r} must be an int or a Dim class") from None
        if not -ndim <= i < ndim:
            raise shape_error(op_name, f"axis {i} is out of range for {describe(x)} (rank {ndim})")
        out.append(i % ndim)
    if len(set(out)) != len(out):
        raise shape_error(op_name, f"repeated axis in {axis!r}")
    return tuple(out)


def float_operand(op_name: str, x: Any) -> Traced[Any]:
    """``x`` as a staged tensor, after checking it is floating-point (ops that never convert dtypes for the user)."""
    t = as_tensor(x)
    if not _dt.is_float(t.aval.dtype):
        if _dt.is_complex(t.aval.dtype):
            message = f"{op_name} needs a real floating-point operand, got {t.aval}; take .real, .imag or abs() of it"
        else:
            message = f"{op_name} needs a floating-point operand, got {t.aval}; convert it with .astype(f32)"
        raise dtype_error(op_name, message)
    return t


def inexact_operand(op_name: str, x: Any) -> Traced[Any]:
    """``x`` as a staged tensor, after checking it is floating-point or complex (the functions defined on both)."""
    t = as_tensor(x)
    if not _dt.is_inexact(t.aval.dtype):
        message = f"{op_name} needs a floating-point operand (or a complex one), got {t.aval}; convert it with "
        raise dtype_error(op_name, message + ".astype(f32)")
    return t


def as_tensor(x: Any) -> Traced[Any]:
    """Any tensor-like operand as a staged tensor (inside an op body)."""
    if isinstance(x, Traced):
        return x
    return wrap(atom(x))


# An alias of types, not a string: a string alias is evaluated where an annotation names it, in the op's module
# (``typing.get_type_hints``), which need not import ``Dim``; the settings conversion in ``op`` then missed shapes.
ShapeLike: TypeAlias = int | type[Dim] | Sequence[int | type[Dim]]


def parse_shape(name: str, shape: ShapeLike) -> tuple[tuple[int, ...], tuple[DimName, ...]]:
    """Sizes and dim names of a static shape: ints, or Dim classes with a fixed size (``class Hidden(Dim, size=64)``)."""
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    sizes: list[int] = []
    names: list[DimName] = []
    for item in items:
        if isinstance(item, type):
            size = getattr(item, "size", None)
            if size is None:
                raise shape_error(name, f"dim {item.__name__} has no fixed size here; pass its size as an int")
            sizes.append(int(size))
            names.append(item.__name__)
        else:
            if isinstance(item, (bool, np.bool_)):
                raise TypeError(f"{name}: shape {tuple(items)} has a bool where an int size belongs")
            n = operator.index(item)
            if n < 0:
                raise shape_error(name, f"negative dimension {n} in shape {tuple(items)}")
            sizes.append(n)
            names.append(None)
    if math.prod(n for n in sizes if n) >= 2**59:  # XLA aborts the process on extents past int64
        raise shape_error(name, f"shape {tuple(sizes)} is too big")
    return tuple(sizes), tuple(names)
