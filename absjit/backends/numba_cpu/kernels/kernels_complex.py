"""Complex helpers for the scalar table where Numba's own function differs from NumPy's
on infinite arguments (``sinh``/``cosh``/``tanh``/``arccosh``/``sign``), and NumPy's
lexicographic complex order for comparisons, ``max`` and ``min``."""
from __future__ import annotations

import math

import numpy as np

from ..helper_jit import helper

__all__ = ["_csinh", "_ccosh", "_ctanh", "_cacosh", "_csign", "_clt", "_cle", "_cdiv"]


@helper
def _csinh(z):
    x, y = z.real, z.imag
    if y == 0.0 and x == x:  # the real axis: sinh(x) exactly, imaginary part kept
        return complex(math.sinh(x), y)
    return np.sinh(z)


@helper
def _ccosh(z):
    x, y = z.real, z.imag
    if y == 0.0 and x == x:
        return complex(math.cosh(x), math.copysign(0.0, x) * y)
    return np.cosh(z)


@helper
def _ctanh(z):
    x, y = z.real, z.imag
    if abs(x) > 20.0 and x == x:
        # tanh(x + iy) = 1 - 2/(exp(2z) + 1): for large |x| it is sign(x) up to
        # below-rounding terms; the imaginary part keeps the sign of sin(2y).
        s = math.sin(y) * math.cos(y) if math.isfinite(y) else 0.0
        return complex(math.copysign(1.0, x), math.copysign(0.0, s))
    if y == 0.0 and x == x:
        return complex(math.tanh(x), y)
    return np.tanh(z)


@helper
def _cacosh(z):
    x, y = z.real, z.imag
    if math.isinf(x) or math.isinf(y):
        return complex(math.inf, math.atan2(y, x))
    return np.arccosh(z)


@helper
def _csign(z):
    x, y = z.real, z.imag
    a = abs(z)
    if a == 0.0:
        return complex(0.0, 0.0) * z
    if math.isinf(a):
        x = math.copysign(1.0, x) if math.isinf(x) else math.copysign(0.0, x)
        y = math.copysign(1.0, y) if math.isinf(y) else math.copysign(0.0, y)
        return complex(x, y) / math.hypot(x, y)
    return z / a


@helper
def _clt(a, b):
    """NumPy's ``a < b`` for complex: lexicographic; a NaN imaginary part makes the
    real parts' order not count."""
    ok = a.imag == a.imag and b.imag == b.imag
    return (a.real < b.real and ok) or (a.real == b.real and a.imag < b.imag)


@helper
def _cle(a, b):
    ok = a.imag == a.imag and b.imag == b.imag
    return (a.real < b.real and ok) or (a.real == b.real and a.imag <= b.imag)


@helper
def _cdiv(a, b):
    """Complex division by Smith's method, as NumPy. A zero divisor divides both parts
    by its signed real part, as XLA does (NumPy uses the absolute value; Numba raises
    ``ZeroDivisionError``)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    if abr >= abi:
        if abr == 0 and abi == 0:
            return complex(ar / br, ai / br)
        rat = bi / br
        scl = 1.0 / (br + bi * rat)
        return complex((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    if abr != abr or abi != abi:
        return complex(np.nan, np.nan)
    rat = br / bi
    scl = 1.0 / (bi + br * rat)
    return complex((ar * rat + ai) * scl, (ai * rat - ar) * scl)
