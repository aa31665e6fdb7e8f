"""Window padding as JAX computes it: ``"VALID"`` none; ``"SAME"`` enough that ``ceil(size / stride)`` windows
fit, the odd element at the high end (``"SAME_LOWER"``: at the low end). Shared by convolutions and
``reduce_window``; sizes are those of the (dilated) input and window."""

from __future__ import annotations

from collections.abc import Sequence

from ..numpy._core import shape_error

__all__ = ["padtype_to_pads"]


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int], window_strides: Sequence[int],
                    padding: str) -> list[tuple[int, int]]:
    """``(low, high)`` per axis for the padding type ``padding`` (JAX's ``lax.padtype_to_pads``)."""
    mode = padding.upper()
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"padding must be 'SAME', 'SAME_LOWER' or 'VALID', got {padding!r}")
    pads = []
    for size, span, stride in zip(in_shape, window_shape, window_strides):
        total = max((-(-size // stride) - 1) * stride + span - size, 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if mode == "SAME_LOWER" else (small, large))
    return pads


def window_pads(op_name: str, padding: str | Sequence[tuple[int, int]], in_shape: Sequence[int],
                window_shape: Sequence[int], window_strides: Sequence[int]) -> list[tuple[int, int]]:
    """``padding`` (a padding type, or explicit ``(low, high)`` pairs, one per axis) as pairs."""
    if isinstance(padding, str):
        try:
            return padtype_to_pads(in_shape, window_shape, window_strides, padding)
        except ValueError as exc:
            raise shape_error(op_name, f"lax.{op_name}: {exc}, or (low, high) pairs") from None
    pairs = [(int(lo), int(hi)) for lo, hi in padding]
    if len(pairs) != len(in_shape):
        raise shape_error(op_name, f"lax.{op_name} needs one (low, high) pair per spatial axis, got {padding!r}")
    return pairs
