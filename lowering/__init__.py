"""Lowering: graphs to StableHLO text, XLA compilation through jaxlib, and device buffers.

Importing this package registers every lowering rule.
"""

from . import rules
from .backend import DeviceUnavailableError, client_for, compile_module
from .emit import LOWERINGS, module_text

__all__ = ["LOWERINGS", "DeviceUnavailableError", "client_for", "compile_module", "module_text", "rules"]
