"""``ts.export``: a staged program as a self-contained artifact that another process can load and run without the
Python that defined it (JAX's ``jax.export``).

``exported = ts.export.export(f)(*specs)`` stages ``f`` (a function or a ``ts.program``) for array arguments or
``ts.Spec``s and keeps its StableHLO for each of ``platforms`` (default: the default device's). ``exported.call(
*args)`` runs it, eagerly or inside another program, under ``vmap`` too; ``exported.serialize()`` gives bytes that
``ts.export.deserialize`` turns back into an ``Exported`` in any process with tensorstage (no staging happens
there: the module is compiled as it is, through the on-disk executable cache like any program).

Deliberate differences from JAX:
- one module per platform (JAX lowers one module taking a platform index); ``platforms=`` names them;
- arguments are arrays or ``ts.Spec``s only (no static Python values: close over them), positional only, and
  their containers must be tuples, lists, dicts with str or int keys, or None (no custom pytree serialization);
- no symbolic shapes: an export has fixed shapes, and a batched call (``vmap``) runs it once per batch member;
- no derivative: differentiating through a call raises (JAX's ``vjp_order`` is not offered); export the
  differentiated function instead;
- programs with host callbacks (``debug.print``, ``pure_callback``) cannot be exported (their Python functions
  have no serialized form; JAX refuses them too);
- the serialized form is tensorstage's own (a header naming the format and version, then JSON); a payload of
  another format or version, or a malformed one, is a ValueError.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import pytree
from .array import Array, default_device
from .lowering import emit
from .lowering.rules.exported_call import is_module_text
from .program import Program, program
from .signature import Spec
from .staging import dtypes as _dt
from .staging.builder import is_staging
from .staging.errors import TransformError
from .staging.ir import Aval
from .staging.primitives.exported_call import ExportedModule, exported_call
from .trace import atom_of_type, wrap

__all__ = ["Exported", "SERIALIZATION_VERSION", "deserialize", "export"]

SERIALIZATION_VERSION = 1
_MAGIC = b"tensorstage.export\n"
_PLATFORMS = ("cpu", "gpu")
_DTYPES = {_dt.short_name(d): d for d in _dt.SUPPORTED}
_ARRAY_LEAVES = (Array, np.ndarray, np.generic, Spec)


class Exported:
    """An exported program: its argument and result types and structures, and its StableHLO per platform."""

    def __init__(
        self, fun_name: str, in_tree: pytree.TreeDef, in_avals: Sequence[Aval], out_tree: pytree.TreeDef,
        out_avals: Sequence[Aval], modules: dict[str, str],
    ) -> None:
        self.fun_name = fun_name
        self.in_tree = in_tree  # of the positional arguments' tuple
        self.out_tree = out_tree
        self.platforms = tuple(modules)
        self._module = ExportedModule(fun_name, in_avals, out_avals, modules)
        self._program: Program[..., Any] | None = None

    @property
    def in_avals(self) -> tuple[Spec, ...]:
        return tuple(Spec(a.shape, a.dtype, a.dims) for a in self._module.in_avals)

    @property
    def out_avals(self) -> tuple[Spec, ...]:
        return tuple(Spec(a.shape, a.dtype, a.dims) for a in self._module.out_avals)

    def mlir_module(self, platform: str | None = None) -> str:
        """The StableHLO module text for ``platform`` (default: the first exported one)."""
        name = self.platforms[0] if platform is None else platform
        found = self._module.modules.get(name)
        if found is None:
            raise ValueError(f"{self.fun_name} was exported for {', '.join(self.platforms)}, not {name!r}")
        return found

    def call(self, *args: Any) -> Any:
        """Run the exported program on ``args`` (arrays of the exported types, in the exported structure; Python
        numbers take the exported dtype): eagerly, or as one equation of the program being staged."""
        if not is_staging():
            if self._program is None:
                self._program = program(name=self.fun_name)(self.call)
            return self._program(*args)
        leaves, treedef = pytree.flatten(args)
        if treedef != self.in_tree:
            raise TypeError(
                f"{self.fun_name} was exported for arguments structured {self.in_tree}, got {treedef}"
            )
        operands = [atom_of_type(leaf, aval) for leaf, aval in zip(leaves, self._module.in_avals)]
        results = exported_call(operands, self._module)
        return pytree.unflatten(self.out_tree, [wrap(r) for r in results])

    def serialize(self) -> bytearray:
        header = {
            "version": SERIALIZATION_VERSION,
            "fun_name": self.fun_name,
            "in_tree": _tree_json(self.in_tree),
            "out_tree": _tree_json(self.out_tree),
            "in_avals": [_aval_json(a) for a in self._module.in_avals],
            "out_avals": [_aval_json(a) for a in self._module.out_avals],
            "modules": self._module.modules,
        }
        return bytearray(_MAGIC + json.dumps(header).encode())

    def __repr__(self) -> str:
        ins = ", ".join(str(a) for a in self._module.in_avals)
        outs = ", ".join(str(a) for a in self._module.out_avals)
        return f"<Exported {self.fun_name}({ins}) -> ({outs}) for {', '.join(self.platforms)}>"


def export(
    fun: Callable[..., Any] | Program[..., Any], *, platforms: Sequence[str] | None = None
) -> Callable[..., Exported]:
    """``export(f)(*args)``: ``f`` staged for ``args`` (arrays or ``ts.Spec``s, in tuples, lists, dicts or None)
    and lowered for each of ``platforms`` ('cpu', 'gpu'; default: the default device's platform)."""
    if not callable(fun):
        raise TypeError(f"export() needs a callable or a ts.program, got {type(fun).__name__}")
    chosen = _platforms(platforms)
    staged_program = fun if isinstance(fun, Program) else program(fun)

    def stage_and_lower(*args: Any) -> Exported:
        leaves, in_tree = pytree.flatten(args)
        for i, leaf in enumerate(leaves):
            if not isinstance(leaf, _ARRAY_LEAVES):
                raise TypeError(
                    f"export({staged_program.name}): argument leaf {i} is {type(leaf).__name__} {leaf!r:.40}; exported "
                    "programs take arrays or ts.Spec only (close over static values, make numbers arrays)"
                )
        _tree_json(in_tree)  # a container without a portable form fails here, before anything is staged
        staged = staged_program.stage(*args)
        _tree_json(staged.out_tree)
        modules = {}
        for platform in chosen:
            text, callbacks = emit.module_text_and_callbacks(staged.graph, staged_program.name, platform=platform)
            if callbacks:
                raise TransformError(
                    f"{staged_program.name} calls host callbacks ({', '.join(c.described() for c in callbacks)}), "
                    "whose Python functions cannot be exported", "export",
                )
            modules[platform] = text
        return Exported(staged_program.name, in_tree, staged.in_avals, staged.out_tree, staged.out_avals, modules)

    return stage_and_lower


def deserialize(blob: bytes | bytearray | memoryview) -> Exported:
    """The ``Exported`` that ``serialize()`` wrote into ``blob``."""
    data = bytes(blob)
    if not data.startswith(_MAGIC):
        raise ValueError("ts.export.deserialize: not a tensorstage export (its header is missing)")
    try:
        header = json.loads(data[len(_MAGIC):].decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"ts.export.deserialize: the payload is not valid: {exc}") from None
    if not isinstance(header, dict) or header.get("version") != SERIALIZATION_VERSION:
        version = header.get("version") if isinstance(header, dict) else None
        raise ValueError(
            f"ts.export.deserialize: serialization version {version!r}, this tensorstage reads {SERIALIZATION_VERSION}"
        )
    try:
        modules = header["modules"]
        if not (isinstance(modules, dict) and modules and all(
            p in _PLATFORMS and isinstance(t, str) and is_module_text(t) for p, t in modules.items()
        )):
            raise ValueError("its modules are not tensorstage modules for 'cpu' or 'gpu'")
        in_avals = [_aval_from_json(a) for a in header["in_avals"]]
        out_avals = [_aval_from_json(a) for a in header["out_avals"]]
        in_tree, out_tree = _tree_from_json(header["in_tree"]), _tree_from_json(header["out_tree"])
        if in_tree.num_leaves != len(in_avals) or out_tree.num_leaves != len(out_avals):
            raise ValueError("its structures and types disagree")
        return Exported(str(header["fun_name"]), in_tree, in_avals, out_tree, out_avals, dict(modules))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"ts.export.deserialize: the payload is not valid: {exc}") from None


def _platforms(platforms: Sequence[str] | None) -> tuple[str, ...]:
    if platforms is None:
        return (default_device().platform,)
    if isinstance(platforms, str) or not platforms:
        raise TypeError(f"export(): platforms must be a non-empty sequence of names such as ('cpu', 'gpu'), got "
                        f"{platforms!r}")
    for p in platforms:
        if p not in _PLATFORMS:
            raise ValueError(f"export(): unknown platform {p!r}; tensorstage compiles for {', '.join(_PLATFORMS)}")
    return tuple(dict.fromkeys(platforms))


def _aval_json(aval: Aval) -> list[Any]:
    return [list(aval.shape), _dt.short_name(aval.dtype), list(aval.dims)]


def _aval_from_json(item: Any) -> Aval:
    shape, dtype, dims = item
    if not (isinstance(shape, list) and all(type(n) is int and n >= 0 for n in shape)):
        raise ValueError(f"bad shape {shape!r}")
    if dtype not in _DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}")
    if not (isinstance(dims, list) and len(dims) == len(shape) and all(d is None or isinstance(d, str) for d in dims)):
        raise ValueError(f"bad dim names {dims!r}")
    return Aval(tuple(shape), _DTYPES[dtype], dims)


def _tree_json(tree: pytree.TreeDef) -> Any:
    """A structure of tuples, lists, dicts (str or int keys) and None as JSON; any other container raises."""
    if tree.kind in ("leaf", "none"):
        return tree.kind
    children = [_tree_json(c) for c in tree.children]
    if tree.kind in ("tuple", "list"):
        return {tree.kind: children}
    if tree.kind == "dict":
        keys = pytree.dict_keys(tree)
        if all(type(k) in (str, int) for k in keys):
            return {"dict": [[k, c] for k, c in zip(keys, children)]}
    raise TypeError(
        f"export: the structure {tree} has a {tree.kind} container, which has no portable form (use tuples, lists, "
        "dicts with str or int keys, and None)"
    )


def _tree_from_json(item: Any) -> pytree.TreeDef:
    if item == "leaf":
        return pytree.LEAF
    if item == "none":
        return pytree.NONE
    if isinstance(item, dict) and len(item) == 1:
        ((kind, children),) = item.items()
        if kind in ("tuple", "list") and isinstance(children, list):
            return pytree.TreeDef(kind, None, tuple(_tree_from_json(c) for c in children))
        if kind == "dict" and isinstance(children, list):
            keys = tuple(k for k, _ in children)
            if all(type(k) in (str, int) for k in keys):
                return pytree.TreeDef("dict", keys, tuple(_tree_from_json(c) for _, c in children))
    raise ValueError(f"bad structure {item!r:.80}")
