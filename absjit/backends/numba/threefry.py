"""The Threefry-2x32 cipher (lowering ``threefry2x32``) as plain Python functions, for
each Numba target to compile its own way: :func:`compiled` rebinds the functions'
calls to each other to the compiled versions. The cpu backend compiles them once per
machine as helpers its kernels inline
(:mod:`absjit.backends.numba_cpu.kernels.threefry_kernels`); the cuda backend as device
functions.

A loop over the five groups of four rounds keeps :func:`_threefry2x32` small for Numba
to type (inlining 20 round helpers at Numba's level costs seconds); LLVM unrolls it,
so the rotation amounts are constants again in the machine code.
"""
from __future__ import annotations

import types

import numpy as np

from ...ops.threefry import KEY_PARITY

__all__ = ["_threefry2x32_x0", "_threefry2x32_x1", "_threefry2x32_xor", "compiled"]

_U = np.uint32


def _rotl(x, r):
    return _U(_U(x << _U(r)) | _U(x >> _U(32 - r)))


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


def _threefry2x32_x0(k0, k1, x0, x1):
    return _threefry2x32(k0, k1, x0, x1)[0]


def _threefry2x32_x1(k0, k1, x0, x1):
    return _threefry2x32(k0, k1, x0, x1)[1]


def _threefry2x32_xor(k0, k1, x0, x1):
    y0, y1 = _threefry2x32(k0, k1, x0, x1)
    return _U(y0 ^ y1)


_ENTRY_POINTS = ("_threefry2x32_x0", "_threefry2x32_x1", "_threefry2x32_xor")


def compiled(compile_function) -> dict:
    """``{name: compile_function(f)}`` for the entry points and the functions they
    call, each calling the others' compiled versions (``compile_function`` is, e.g.,
    ``numba.njit``; the identity gives the plain Python functions)."""
    scope = dict(globals())
    out = {}
    for name in ("_rotl", "_threefry2x32") + _ENTRY_POINTS:
        fn = globals()[name]
        out[name] = scope[name] = compile_function(
            types.FunctionType(fn.__code__, scope, name))
    return out
