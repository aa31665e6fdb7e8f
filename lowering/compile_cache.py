"""A persistent on-disk cache of compiled XLA executables: a new process deserializes instead of compiling.

An entry is keyed by a SHA-256 over everything the executable depends on: the StableHLO module text (which
spells the whole signature), the devices (platform, kind, ids: an executable keeps its compile-time device
assignment), the serialized compile options, XLA_FLAGS, the jaxlib version and the platform version.

Trust. Deserializing an executable may run arbitrary code, so the cache only loads bytes it wrote itself:
every entry carries an HMAC-SHA256 of its key and payload made with a per-user secret that lives in the cache
folder (created 0600 by this user; a secret another user owns or can read disables the cache). Entries that are
truncated, corrupted, renamed to another key, or written by anyone without the secret fail the check and are
ignored (and recompiled over). Writes go to a temporary file that is renamed into place, so concurrent
processes never see half an entry. The folder is bounded (oldest entries by last use go first).

Opt out with ``TENSORSTAGE_COMPILE_CACHE=0`` or ``compile_cache.disable()``. ``TENSORSTAGE_CACHE_DIR`` moves
it (default ``$XDG_CACHE_HOME/tensorstage/xla`` or ``~/.cache/tensorstage/xla``); ``TENSORSTAGE_CACHE_MAX_BYTES``
bounds it (default 512 MiB).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jaxlib
from jaxlib import xla_client as xc

_FORMAT = b"TSXLA\x00\x01\x00"  # magic + format version: a new format never reads old entries
_SECRET_NAME = "hmac-secret"
_SUFFIX = ".xla"
_DEFAULT_MAX_BYTES = 512 * 2**20
_RESCAN_EVERY = 64
_KEPT_MISSES = 100


@dataclass
class CacheStats:
    """What the cache did in this process; ``misses`` says why recent lookups did not load an entry."""

    hits: int = 0
    writes: int = 0
    evictions: int = 0
    misses: list[str] = field(default_factory=list)  # the latest _KEPT_MISSES reasons

    def miss(self, reason: str) -> None:
        self.misses.append(reason)
        if len(self.misses) > _KEPT_MISSES:
            del self.misses[:-_KEPT_MISSES]


class DiskCache:
    """One cache folder. Every method swallows I/O problems: a broken cache only costs a recompile."""

    def __init__(self, directory: str, max_bytes: int = _DEFAULT_MAX_BYTES) -> None:
        self.directory = os.path.abspath(directory)
        self.max_bytes = max_bytes
        self.stats = CacheStats()
        self._secret: bytes | None = None
        # Folder size as last scanned plus what this process wrote since: a scan per store would cost
        # milliseconds once thousands of small programs are cached. Rescanned when over the bound, or every
        # _RESCAN_EVERY stores (other processes write here too).
        self._estimated_bytes: int | None = None
        self._stores_since_scan = 0

    # ------------------------------------------------------------------------------------------ keys
    @staticmethod
    def key(module_text: str, devices: Sequence[Any], options: Any) -> str:
        digest = hashlib.sha256(_FORMAT)
        client = devices[0].client
        parts = [
            str(getattr(jaxlib, "__version__", "")),
            str(getattr(xc, "_version", "")),
            client.platform,
            client.platform_version,
            os.environ.get("XLA_FLAGS", ""),
            ";".join(f"{d.platform}:{d.device_kind}:{d.id}" for d in devices),
        ]
        for part in parts:
            digest.update(part.encode() + b"\x00")
        digest.update(options.SerializeAsString() + b"\x00")
        digest.update(module_text.encode())
        return digest.hexdigest()

    # --------------------------------------------------------------------------------------- secret
    def _load_secret(self) -> bytes | None:
        if self._secret is None:
            self._secret = self._read_or_create_secret()
        return self._secret or None

    def _read_or_create_secret(self) -> bytes:
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        path = os.path.join(self.directory, _SECRET_NAME)
        if not os.path.exists(path):
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".secret-")  # mkstemp creates it 0600
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(secrets.token_bytes(32))
                os.link(tmp, path)  # atomic: fails if another process created the secret first
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())  # the file we read, not whatever the name points to later
            if info.st_uid != os.getuid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
                self.stats.miss(f"cache disabled: {path} is not a private file of this user")
                return b""
            secret = f.read()
        return secret if len(secret) == 32 else b""

    def _mac(self, secret: bytes, key: str, payload: bytes) -> bytes:
        return hmac.new(secret, _FORMAT + key.encode() + payload, hashlib.sha256).digest()

    # ----------------------------------------------------------------------------------- load/store
    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key + _SUFFIX)

    def load(self, key: str, devices: Sequence[Any], options: Any) -> Any | None:
        try:
            secret = self._load_secret()
            if secret is None:
                self.stats.miss(f"{key[:12]}: cache disabled (no usable secret)")
                return None
            path = self._path(key)
            try:
                with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as f:
                    info = os.fstat(f.fileno())
                    if info.st_uid != os.getuid() or info.st_size > self.max_bytes or not stat.S_ISREG(info.st_mode):
                        self.stats.miss(f"{key[:12]}: entry rejected (foreign owner or oversized)")
                        return None
                    blob = f.read()
            except FileNotFoundError:
                self.stats.miss(f"{key[:12]}: not cached")
                return None
            body = len(_FORMAT) + 32
            header, mac, payload = blob[: len(_FORMAT)], blob[len(_FORMAT) : body], blob[body:]
            if header != _FORMAT or not hmac.compare_digest(mac, self._mac(secret, key, payload)):
                self.stats.miss(f"{key[:12]}: entry rejected (failed its integrity check)")
                return None
            client = devices[0].client
            executable = client.deserialize_executable(payload, xc.DeviceList(tuple(devices)), options)
            os.utime(path)  # last use, for eviction
        except (OSError, RuntimeError) as exc:
            self.stats.miss(f"{key[:12]}: cache unusable ({exc})")
            return None
        self.stats.hits += 1
        return executable

    def store(self, key: str, executable: Any) -> None:
        try:
            secret = self._load_secret()
            if secret is None:
                return
            payload = executable.serialize()
            blob = _FORMAT + self._mac(secret, key, payload) + payload
            if len(blob) > self.max_bytes:
                return
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".entry-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(blob)
                os.replace(tmp, self._path(key))
            except BaseException:
                os.unlink(tmp)
                raise
            self.stats.writes += 1
            self._account(len(blob))
        except (OSError, RuntimeError):
            pass  # a full or read-only disk must not break compilation

    def _account(self, written: int) -> None:
        self._stores_since_scan += 1
        if self._estimated_bytes is not None:
            self._estimated_bytes += written
        if (
            self._estimated_bytes is None
            or self._estimated_bytes > self.max_bytes
            or self._stores_since_scan >= _RESCAN_EVERY
        ):
            self._evict()

    def _evict(self) -> None:
        self._stores_since_scan = 0
        entries = []
        total = 0
        with os.scandir(self.directory) as it:
            for entry in it:
                if entry.name.endswith(_SUFFIX) and entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    entries.append((info.st_mtime, info.st_size, entry.path))
                    total += info.st_size
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size
            self.stats.evictions += 1
        self._estimated_bytes = total

    def clear(self) -> None:
        with os.scandir(self.directory) as it:
            for entry in it:
                if entry.name.endswith(_SUFFIX):
                    os.unlink(entry.path)


# -------------------------------------------------------------------------------------- the process cache

_UNSET: Any = object()
_active: Any = _UNSET  # DiskCache | None once configured


def default_directory() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tensorstage", "xla")


def active() -> DiskCache | None:
    """The cache this process uses (configured from the environment on first use), or None when disabled."""
    global _active
    if _active is _UNSET:
        if os.environ.get("TENSORSTAGE_COMPILE_CACHE", "1").lower() in ("0", "false", "no", "off"):
            _active = None
        else:
            directory = os.environ.get("TENSORSTAGE_CACHE_DIR") or default_directory()
            max_bytes = int(os.environ.get("TENSORSTAGE_CACHE_MAX_BYTES", str(_DEFAULT_MAX_BYTES)))
            _active = DiskCache(directory, max_bytes)
    return _active  # type: ignore[no-any-return]


def enable(directory: str | None = None, max_bytes: int = _DEFAULT_MAX_BYTES) -> DiskCache:
    """Use a cache folder from now on (default: the environment's or the per-user default)."""
    global _active
    _active = DiskCache(directory or os.environ.get("TENSORSTAGE_CACHE_DIR") or default_directory(), max_bytes)
    return _active  # type: ignore[no-any-return]


def disable() -> None:
    """Compile everything from scratch in this process and write nothing to disk."""
    global _active
    _active = None


def compile_cached(
    module_text: str, devices: Sequence[Any], options: Any, compile: Callable[[], Any]
) -> tuple[Any, bool]:
    """``(executable, loaded_from_disk)``: the cached executable for this module, or ``compile()``'s, stored."""
    cache = active()
    if cache is None:
        return compile(), False
    key = cache.key(module_text, devices, options)
    executable = cache.load(key, devices, options)
    if executable is not None:
        return executable, True
    executable = compile()
    cache.store(key, executable)
    return executable, False
