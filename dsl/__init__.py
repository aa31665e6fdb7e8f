"""tensorstage: typed staged tensors, shape-checked before anything runs, compiled with XLA through jaxlib.

    import tensorstage as ts
    from tensorstage import Tensor, Dim, f32
    from tensorstage import numpy as tnp
"""

from . import lowering as _lowering  # registers every lowering rule
from . import staging as _staging  # registers every primitive
from .array import Array, Device, asarray, default_device, device_put, devices
from .dims import Dim
from .lowering.backend import DeviceUnavailableError
from .dtypes import DType, Bool, Complex, Floating, Inexact, Integer, Number, Signed, Unsigned, bf16, bool_
from .dtypes import c64, c128, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64
from .program import Program, program
from .staged import Compiled, Staged
from .pytree import register_pytree_node, tree_map
from .signature import Spec
from .staging.errors import ConcretizationError, DTypeError, ShapeError, StagingError, TransformError
from .tensor import Tensor
from .batching import vmap
from .autodiff import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from .custom_derivatives import custom_jvp, custom_vjp, stop_gradient
from .callbacks import effects_barrier, io_callback, pure_callback
from .debug_values import config, debug_infs, debug_nans
from .eval_shape import eval_shape
from .introspection import clear_caches, make_jaxpr
from .linear_transpose import linear_transpose
from .transfers import block_until_ready, default_backend, device_count, device_get, local_device_count, local_devices
from .transfers import copy_to_host_async
from .contexts import default_matmul_precision, disable_jit
from .named_scopes import named_call, named_scope
from .transfer_guards import (
    transfer_guard, transfer_guard_device_to_device, transfer_guard_device_to_host, transfer_guard_host_to_device,
)
from .custom_gradient import custom_gradient
from .closure_convert import closure_convert
from .processes import host_count, host_id, host_ids, process_count, process_index, process_indices
from .environment import print_environment_info
from .live_arrays import live_arrays
from .checkpoint import checkpoint, checkpoint_name
from . import ad_checkpoint, checkpoint_policies
from .control_flow import cond, fori_loop, scan, switch, while_loop
from .collectives import all_gather, all_to_all, axis_index, pmax, pmean, pmin, ppermute, psum, psum_scatter
from .spmd import pmap
from . import sharding
from .shard_map import shard_map
from .sharding import P, make_mesh
from .sharding import NamedSharding, Shard
from .named_sharding import make_array_from_callback, make_array_from_single_device_arrays
from . import numpy
from . import debug, lax, nn, optim, random, scipy, tree, tree_util
from . import experimental, image
from . import custom_batching, export, profiler
from . import tensor as _tensor

# Tensor's operators forward to the op library, which is defined in terms of Tensor.
_tensor._tnp = numpy  # type: ignore[attr-defined]  # a private name, bound once here
del _lowering, _staging, _tensor

__version__ = "0.1.0"

__all__ = [
    "Array", "Bool", "Compiled", "ConcretizationError", "DType", "DTypeError", "Device", "DeviceUnavailableError",
    "Complex", "Dim", "Floating",
    "Inexact", "Integer", "Number", "Program", "ShapeError", "Signed", "Spec", "Staged", "StagingError", "Tensor",
    "TransformError", "Unsigned", "asarray", "bf16", "bool_", "c64", "c128", "default_device", "device_put",
    "devices", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "numpy", "program", "register_pytree_node", "tree_map",
    "u8", "u16", "u32", "u64",
    "vmap", "lax", "nn", "optim", "random", "scipy", "tree", "tree_util", "experimental", "image", "export", "profiler",
    "custom_batching",
    "checkpoint", "custom_jvp", "custom_vjp", "grad", "hessian", "jacfwd", "jacrev", "jvp", "linearize",
    "ad_checkpoint", "checkpoint_name", "checkpoint_policies",
    "stop_gradient", "value_and_grad", "vjp",
    "cond", "fori_loop", "scan", "switch", "while_loop",
    "all_gather", "all_to_all", "axis_index", "pmap", "pmax", "pmean", "pmin", "ppermute", "psum", "psum_scatter",
    "P", "make_mesh", "shard_map", "sharding",
    "NamedSharding", "Shard", "make_array_from_callback", "make_array_from_single_device_arrays",
    "config", "debug", "debug_infs", "debug_nans", "effects_barrier", "io_callback", "pure_callback",
    "block_until_ready", "default_backend", "device_count", "device_get", "eval_shape", "jacobian",
    "linear_transpose", "local_device_count", "local_devices", "remat",
    "ShapeDtypeStruct", "clear_caches", "jit", "make_jaxpr",
    "closure_convert", "copy_to_host_async", "custom_gradient", "default_matmul_precision", "disable_jit",
    "host_count", "host_id",
    "host_ids", "live_arrays", "named_call", "named_scope", "print_environment_info", "process_count",
    "process_index", "process_indices", "transfer_guard", "transfer_guard_device_to_device",
    "transfer_guard_device_to_host", "transfer_guard_host_to_device",
]

jacobian = jacrev  # JAX's names
remat = checkpoint
jit = program
ShapeDtypeStruct = Spec
