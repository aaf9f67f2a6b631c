"""The Threefry-2x32 cipher for generated kernels (lowering ``threefry2x32``).

One ``njit`` function compiled once per process; a kernel calls it and LLVM inlines
it into the loop, where the literal rotation amounts become packed rotates and the
loop vectorises. Numba types each kernel's call once instead of ~130 statements.
"""
from __future__ import annotations

import numba
import numpy as np

from ...ops.threefry import KEY_PARITY

__all__ = ["_threefry2x32_x0", "_threefry2x32_x1", "_threefry2x32_xor"]

_U = np.uint32


@numba.njit(inline="always", error_model="numpy")
def _mix(x0, x1, r):
    x0 = _U(x0 + x1)
    return x0, _U(_U(_U(x1 << _U(r)) | _U(x1 >> _U(32 - r))) ^ x0)


@numba.njit(inline="always", error_model="numpy")
def _inject(x0, x1, a, b, i):
    return _U(x0 + a), _U(_U(x1 + b) + _U(i))


@numba.njit(error_model="numpy")
def _threefry2x32(k0, k1, x0, x1):
    k2 = _U(_U(k0 ^ k1) ^ _U(KEY_PARITY))
    x0, x1 = _U(x0 + k0), _U(x1 + k1)
    x0, x1 = _mix(x0, x1, 13)
    x0, x1 = _mix(x0, x1, 15)
    x0, x1 = _mix(x0, x1, 26)
    x0, x1 = _mix(x0, x1, 6)
    x0, x1 = _inject(x0, x1, k1, k2, 1)
    x0, x1 = _mix(x0, x1, 17)
    x0, x1 = _mix(x0, x1, 29)
    x0, x1 = _mix(x0, x1, 16)
    x0, x1 = _mix(x0, x1, 24)
    x0, x1 = _inject(x0, x1, k2, k0, 2)
    x0, x1 = _mix(x0, x1, 13)
    x0, x1 = _mix(x0, x1, 15)
    x0, x1 = _mix(x0, x1, 26)
    x0, x1 = _mix(x0, x1, 6)
    x0, x1 = _inject(x0, x1, k0, k1, 3)
    x0, x1 = _mix(x0, x1, 17)
    x0, x1 = _mix(x0, x1, 29)
    x0, x1 = _mix(x0, x1, 16)
    x0, x1 = _mix(x0, x1, 24)
    x0, x1 = _inject(x0, x1, k1, k2, 4)
    x0, x1 = _mix(x0, x1, 13)
    x0, x1 = _mix(x0, x1, 15)
    x0, x1 = _mix(x0, x1, 26)
    x0, x1 = _mix(x0, x1, 6)
    return _inject(x0, x1, k2, k0, 5)


@numba.njit(error_model="numpy")
def _threefry2x32_x0(k0, k1, x0, x1):
    return _threefry2x32(k0, k1, x0, x1)[0]


@numba.njit(error_model="numpy")
def _threefry2x32_x1(k0, k1, x0, x1):
    return _threefry2x32(k0, k1, x0, x1)[1]


@numba.njit(error_model="numpy")
def _threefry2x32_xor(k0, k1, x0, x1):
    y0, y1 = _threefry2x32(k0, k1, x0, x1)
    return _U(y0 ^ y1)
