"""The Threefry-2x32 cipher for generated kernels (lowering ``threefry2x32``).

One ``njit`` function compiled once per machine (kept in the disk cache,
:func:`.helper_jit.disk_cached`); a kernel calls it and LLVM inlines it into the loop,
where the literal rotation amounts become packed rotates and the loop vectorises.
Numba types each kernel's call once instead of ~130 statements.
"""
from __future__ import annotations

import numba
import numpy as np

from ...ops.threefry import KEY_PARITY
from .helper_jit import disk_cached

__all__ = ["_threefry2x32_x0", "_threefry2x32_x1", "_threefry2x32_xor"]

_U = np.uint32


@disk_cached
@numba.njit(error_model="numpy")
def _rotl(x, r):
    return _U(_U(x << _U(r)) | _U(x >> _U(32 - r)))


# A loop over the five groups of four rounds keeps the function small for Numba to
# type (inlining 20 round helpers at Numba's level costs seconds); LLVM unrolls it,
# so the rotation amounts are constants again in the machine code.
@disk_cached
@numba.njit(error_model="numpy")
def _threefry2x32(k0, k1, x0, x1):
    k2 = _U(_U(k0 ^ k1) ^ _U(KEY_PARITY))
    x0, x1 = _U(x0 + k0), _U(x1 + k1)
    for i in range(5):
        if i % 2 == 0:
            a, b, c, d = 13, 15, 26, 6
        else:
            a, b, c, d = 17, 29, 16, 24
        x0 = _U(x0 + x1)
        x1 = _U(_rotl(x1, a) ^ x0)
        x0 = _U(x0 + x1)
        x1 = _U(_rotl(x1, b) ^ x0)
        x0 = _U(x0 + x1)
        x1 = _U(_rotl(x1, c) ^ x0)
        x0 = _U(x0 + x1)
        x1 = _U(_rotl(x1, d) ^ x0)
        j = i % 3  # key schedule: (k1, k2), (k2, k0), (k0, k1), ...
        ka = k1 if j == 0 else (k2 if j == 1 else k0)
        kb = k2 if j == 0 else (k0 if j == 1 else k1)
        x0 = _U(x0 + ka)
        x1 = _U(_U(x1 + kb) + _U(i + 1))
    return x0, x1


@disk_cached
@numba.njit(error_model="numpy")
def _threefry2x32_x0(k0, k1, x0, x1):
    return _threefry2x32(k0, k1, x0, x1)[0]


@disk_cached
@numba.njit(error_model="numpy")
def _threefry2x32_x1(k0, k1, x0, x1):
    return _threefry2x32(k0, k1, x0, x1)[1]


@disk_cached
@numba.njit(error_model="numpy")
def _threefry2x32_xor(k0, k1, x0, x1):
    y0, y1 = _threefry2x32(k0, k1, x0, x1)
    return _U(y0 ^ y1)
