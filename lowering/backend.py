"""XLA clients and devices through jaxlib, created lazily; the CUDA PJRT plugin is loaded without jax."""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import os
from collections.abc import Mapping, Sequence
from functools import cache, partial
from typing import Any

# XLA logs two INFO lines per client; keep users' output clean unless they ask for the logs.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import numpy as np  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402

from ..staging.primitives.callback import HostCallback
from . import compile_cache

_CUDA_LIBRARIES = (
    ("nvidia/cu13/lib", ("libcudart.so.13", "libnvrtc.so.13", "libcublasLt.so.13", "libcublas.so.13",
                         "libcupti.so.13", "libcusparse.so.12", "libcusolver.so.12", "libcufft.so.12")),
    ("nvidia/nccl/lib", ("libnccl.so.2",)),
    ("nvidia/nvshmem/lib", ("libnvshmem_host.so.3",)),
    ("nvidia/cudnn/lib", ("libcudnn.so.9",)),
)


class DeviceUnavailableError(RuntimeError):
    """The requested platform has no usable device on this machine."""


@cache
def cpu_client() -> Any:
    count = int(os.environ.get("TENSORSTAGE_CPU_DEVICES", "1"))
    return xc.make_cpu_client(num_devices=count) if count > 1 else xc.make_cpu_client()


def _preload_cuda_wheels() -> None:
    import site

    for base in site.getsitepackages():
        for folder, names in _CUDA_LIBRARIES:
            for name in names:
                path = os.path.join(base, folder, name)
                if os.path.exists(path):
                    try:
                        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                    except OSError:
                        pass


@cache
def gpu_client() -> Any:
    spec = None
    for plugin in ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12"):
        try:
            spec = importlib.util.find_spec(plugin)
        except ModuleNotFoundError:
            spec = None
        if spec is not None and spec.submodule_search_locations:
            break
    if spec is None or not spec.submodule_search_locations:
        raise DeviceUnavailableError(
            "device='gpu' needs the CUDA PJRT plugin (pip install jax-cuda13-pjrt matching your jaxlib); "
            "it was not found"
        )
    library = os.path.join(list(spec.submodule_search_locations)[0], "xla_cuda_plugin.so")
    _preload_cuda_wheels()
    try:
        if not xc.pjrt_plugin_loaded("cuda"):  # jax may have loaded it in this process: a second load fails
            _register_gpu_ffi_handlers(xc.load_pjrt_plugin_dynamically("cuda", library))
        if not xc.pjrt_plugin_initialized("cuda"):
            xc.initialize_pjrt_plugin("cuda")
        return xc.make_c_api_client("cuda", xc.generate_pjrt_gpu_plugin_options())
    except Exception as exc:  # jaxlib raises its own runtime error types here
        raise DeviceUnavailableError(f"device='gpu' is unavailable: {exc}") from exc


# The CUDA plugin extension module whose FFI handlers (the GPU's host-callback handler among them) this process
# registered when it loaded the plugin; None if it did not (no such module, or jax loaded the plugin first).
_gpu_callback_handlers: list[str | None] = [None]


def _register_gpu_ffi_handlers(c_api: Any) -> None:
    """Register the CUDA plugin's FFI handlers (Python callbacks among them) with XLA:GPU, as the plugin's jax glue
    does. They live in a separate extension module (``jax_cuda13_plugin``, Python 3.12+ wheels) that does not import
    jax; without it GPU programs still compile, only host callbacks in them are refused."""
    extension = None
    for package in ("jax_cuda13_plugin", "jax_cuda12_plugin"):
        try:
            extension = importlib.import_module(f"{package}.cuda_plugin_extension")
            break
        except ImportError:
            continue
    if extension is None:
        return
    xc.register_custom_type_handler("CUDA", partial(extension.register_custom_type, c_api))
    xc.register_custom_call_handler("CUDA", partial(extension.register_custom_call_target, c_api))
    for name, type_id in extension.ffi_types().items():
        xc.register_custom_type(name, type_id, platform="CUDA")
    for name, handler in extension.ffi_handlers().items():
        xc.register_custom_call_target(name, handler, platform="CUDA", api_version=1)
    _gpu_callback_handlers[0] = extension.__name__


def gpu_host_callbacks_unavailable() -> str | None:
    """Why GPU programs cannot call back into Python here, or None when they can."""
    gpu_client()
    if _gpu_callback_handlers[0] is not None:
        return None
    if xc.pjrt_plugin_loaded("cuda") and "CUDA" in getattr(xc, "_custom_callback_handler", {}):
        return None  # another loader of the plugin (jax) registered the handlers
    return (
        "host callbacks in GPU programs need jaxlib's CUDA callback handlers, from the jax-cuda13-plugin package "
        "(jax_cuda13_plugin.cuda_plugin_extension, Python 3.12+), which is not importable here"
    )


def client_for(platform: str) -> Any:
    if platform == "cpu":
        return cpu_client()
    if platform in ("gpu", "cuda"):
        return gpu_client()
    raise ValueError(f"unknown device platform {platform!r}; use 'cpu' or 'gpu'")


CompilerOptions = Mapping[str, str | bool | int | float]


def compile_options(overrides: CompilerOptions | None = None) -> Any:
    """XLA ``CompileOptions`` with debug-option overrides, named as in ``XLA_FLAGS`` without the dashes (they are
    part of the executable cache's key). Names and values XLA refuses raise a ValueError at compile time."""
    options = xc.CompileOptions()
    if overrides:
        for name, value in overrides.items():
            if not isinstance(name, str) or not isinstance(value, (str, bool, int, float)):
                raise TypeError(
                    f"compiler_options: expected option names (str) mapped to str, bool, int or float values, got "
                    f"{name!r}: {value!r}"
                )
        options.env_option_overrides = sorted(overrides.items())
    return options


def compile_module(
    text: str, devices: Sequence[Any], options: Any | None = None, host_callbacks: Sequence[Any] = ()
) -> Any:
    """Compile StableHLO text for ``devices``, through the persistent executable cache when it is enabled."""
    executable, _ = compile_module_cached(text, devices, options, host_callbacks)
    return executable


def compile_module_cached(
    text: str, devices: Sequence[Any], options: Any | None = None, host_callbacks: Sequence[Any] = ()
) -> tuple[Any, bool]:
    """``(executable, loaded_from_disk)``. ``host_callbacks``: the Python functions the module's callback ops
    call, by index (``emit.module_text_and_callbacks``); such a module never goes through the disk cache, whose
    bytes could not hold them."""
    device_list = xc.DeviceList(tuple(devices))
    opts = options if options is not None else xc.CompileOptions()
    if len(devices) == 1 and opts.num_replicas == 1 and opts.num_partitions == 1:
        # Without an assignment XLA runs replica 0 on the client's first device, whatever device_list says.
        opts.device_assignment = xc.DeviceAssignment.create(np.asarray([[devices[0].id]], dtype=np.int32))
    client = devices[0].client

    def compile() -> Any:
        try:
            if host_callbacks:  # only jaxlib's parsed-module overload takes callbacks
                return client.compile_and_load(_parsed(text), device_list, opts, host_callbacks=list(host_callbacks))
            return client.compile_and_load(text, device_list, opts)
        except RuntimeError as exc:  # XLA's own error type; an option it refuses is the caller's mistake
            message = str(exc)
            if "No such compile option" in message or "While setting option" in message:
                raise ValueError(f"compiler_options: {message.partition(': ')[2] or message}") from None
            raise

    if host_callbacks:
        if client.platform != "cpu" and (reason := gpu_host_callbacks_unavailable()) is not None:
            raise NotImplementedError(f"{_callback_names(host_callbacks)}: {reason}")
        return compile(), False
    return compile_cache.compile_cached(text, devices, opts, compile)


def _callback_names(host_callbacks: Sequence[Any]) -> str:
    return ", ".join(callback.described() if isinstance(callback, HostCallback) else repr(callback)
                     for callback in host_callbacks)


@cache
def _mlir_context() -> Any:
    """An MLIR context with StableHLO and the builtin dialects, for the modules that must be parsed here."""
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import stablehlo

    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    return context


def _parsed(text: str) -> Any:
    from jaxlib.mlir import ir

    with _mlir_context():
        return ir.Module.parse(text)
