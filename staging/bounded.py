"""Bounded memo tables: the caches of texts, plans and shape results that staging and lowering keep across
programs. A full table starts over, so thousands of distinct programs cannot grow them without bound."""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(cache: dict[K, V], key: K, value: V, limit: int) -> V:
    """Store ``value`` under ``key`` and return it (callers look up first); a full cache is emptied first."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value
