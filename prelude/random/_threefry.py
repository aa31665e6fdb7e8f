"""Threefry-2x32 (20 rounds), the counter-based block cipher behind every random function.

It maps a 64-bit key and a 64-bit counter, each as two u32 words, to two u32 words of pseudo-random bits.
Being a pure function of (key, counter), the same key always gives the same bits, in or out of a program and
on every run. Built from u32 add/xor/shift primitives only; the rotation schedule and key-schedule parity
constant are Threefry's published ones (Salmon et al., SC'11), so outputs match the Random123 known answers.
"""

from __future__ import annotations

import numpy as np

from ...staging.builder import bind
from ...staging.ir import Atom, literal
from ...staging.primitives import elementwise as E

U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # makes the third key-schedule word differ from any xor of the two key words


def _u32(value: int) -> Atom:
    return literal(value, U32)


def _rotate_left(x: Atom, bits: int) -> Atom:
    left = bind(E.shift_left_p, x, _u32(bits))
    right = bind(E.shift_right_logical_p, x, _u32(32 - bits))
    return bind(E.or_p, left, right)  # type: ignore[no-any-return]


def threefry2x32(k0: Atom, k1: Atom, x0: Atom, x1: Atom) -> tuple[Atom, Atom]:
    """Encrypt counters ``(x0, x1)`` (u32, one shape) under key ``(k0, k1)`` (u32 scalars or that shape)."""
    schedule = (k0, k1, bind(E.xor_p, bind(E.xor_p, k0, k1), _u32(_PARITY)))
    x0, x1 = E.add(x0, schedule[0]), E.add(x1, schedule[1])
    for group in range(5):
        for bits in _ROTATIONS[group % 2]:
            x0 = E.add(x0, x1)
            x1 = bind(E.xor_p, x0, _rotate_left(x1, bits))
        # Inject the key every four rounds, with the group number so no two injections are alike.
        x0 = E.add(x0, schedule[(group + 1) % 3])
        x1 = E.add(E.add(x1, schedule[(group + 2) % 3]), _u32(group + 1))
    return x0, x1
