"""float32 ``expm1``, ``tanh``, ``sinh``, ``cosh`` and ``atan`` computed in float32.

The methods are :mod:`.kernels_special`'s (read its docstring), with float32 constants
and polynomials sized for float32. Widening to float64 instead would be simpler and a
little more accurate, but LLVM then vectorises the loop at a quarter of the width with
twice the polynomial, about ten times slower. These are within 2 ulp
(``tests/backends/numba_cpu/kernels/test_kernels.py``) with NumPy's special values.

``tanh`` and ``sinh`` use an odd polynomial below ``|x| = 0.55`` and ``1`` (the ``expm1``
route costs a second exponential's worth of work in float32): a fitted one for ``tanh``,
Taylor's for ``sinh``; above, ``tanh = 1 - 2 / (exp(2|x|) + 1)``.
"""
from __future__ import annotations

import math

import numpy as np

from .fastmath_kernels import (_F32_LN2_HI, _F32_LN2_LO, _F32_LOG2E, _F32_ONE, _c0, _c1,
                               _c2, _c3, _c4, _c5, _exp_float32, _fma, _scale_f32)
from ..helper_jit import helper

__all__ = ["_expm1_float32", "_tanh_float32", "_sinh_float32", "_cosh_float32",
           "_atan_float32"]

f32 = np.float32
_ZERO = f32(0.0)
_TWO = f32(2.0)
_QUARTER = f32(0.25)
_INF = f32(np.inf)

# expm1(r) = r + r*r*(e0 + ... + e9 r**9), e_j = 1/(j+2)!
(_e0, _e1, _e2, _e3, _e4, _e5, _e6, _e7, _e8, _e9) = tuple(
    f32(1.0 / math.factorial(j + 2)) for j in range(10))
_EXPM1_LO = f32(-18.0)        # expm1(-18) rounds to -1 in float32
_EXPM1_HI = f32(89.0)         # expm1(89) overflows


@helper
def _expm1_float32(x):
    xc = x if x > _EXPM1_LO else _EXPM1_LO
    xc = xc if xc < _EXPM1_HI else _EXPM1_HI
    kf = np.rint(xc * _F32_LOG2E) if abs(xc) >= _F32_ONE else _ZERO
    r = _fma(kf, -_F32_LN2_LO, _fma(kf, -_F32_LN2_HI, xc))
    p = _e9
    p = _fma(p, r, _e8)
    p = _fma(p, r, _e7)
    p = _fma(p, r, _e6)
    p = _fma(p, r, _e5)
    p = _fma(p, r, _e4)
    p = _fma(p, r, _e3)
    p = _fma(p, r, _e2)
    p = _fma(p, r, _e1)
    p = _fma(p, r, _e0)
    em = r + (r * r) * p
    s = _scale_f32(_F32_ONE, kf)
    mid = s * em + (s - _F32_ONE)
    far = _scale_f32(em + _F32_ONE, kf) - _F32_ONE
    y = mid if (kf > f32(-2.0) and kf < f32(24.0)) else far
    y = x if x == _ZERO else y
    return y if x == x else x


# tanh(a) = a + a*z*(t0 + t1 z + … + t4 z**4), z = a*a, for a < 0.55: mpmath's
# chebyfit of (tanh(a)/a - 1)/z on z in [0, 0.3025] (relative error of tanh below
# 2**-27 with the coefficients rounded to float32), half the terms of the Taylor series.
(_t0, _t1, _t2, _t3, _t4) = (f32(-0.3333333134651184), f32(0.13333113491535187),
                             f32(-0.05390942841768265), f32(0.021309388801455498),
                             f32(-0.00661022774875164))
_TANH_SPLIT = f32(0.55)
_HALF = f32(0.5)


@helper
def _tanh_float32(x):
    a = abs(x)
    z = a * a
    p = _fma(_fma(_fma(_fma(_t4, z, _t3), z, _t2), z, _t1), z, _t0)
    small = _fma(a * z, p, a)
    e = _exp_float32(a + a)
    d = e + _F32_ONE
    w = _TWO / d
    # Corrected for the rounding of d (e - (d - 1) exactly, as e >= 1), to first order;
    # w / 2 = 1 / d replaces a second division.
    w = w - w * ((e - (d - _F32_ONE)) * (w * _HALF))
    large = _F32_ONE - w
    y = small if a < _TANH_SPLIT else large
    y = _F32_ONE if a > f32(9.0) else y       # (e = inf: d - 1 would make a NaN)
    return math.copysign(y, x) if x == x else x


# sinh(a) = a + a*z*(s1 + … + s6 z**5), s_k = 1/(2k+1)!, for a < 1
(_s1, _s2, _s3, _s4, _s5, _s6) = tuple(f32(1.0 / math.factorial(2 * k + 1))
                                       for k in range(1, 7))
_EH_LO = f32(-104.0)
_EH_HI = f32(90.0)


@helper
def _exp_half_float32(x):
    """``exp(x) / 2`` with the halving in the exponent (finite up to x = 89.41)."""
    xc = x if x > _EH_LO else _EH_LO
    xc = xc if xc < _EH_HI else _EH_HI
    kf = np.rint(xc * _F32_LOG2E)
    r = _fma(kf, -_F32_LN2_LO, _fma(kf, -_F32_LN2_HI, xc))
    q = _c5
    q = _fma(q, r, _c4)
    q = _fma(q, r, _c3)
    q = _fma(q, r, _c2)
    q = _fma(q, r, _c1)
    q = _fma(q, r, _c0)
    p = _F32_ONE + (r + (r * r) * q)
    y = _scale_f32(p, kf - _F32_ONE)
    return y if x == x else x


@helper
def _sinh_float32(x):
    a = abs(x)
    z = a * a
    p = _s6
    p = _fma(p, z, _s5)
    p = _fma(p, z, _s4)
    p = _fma(p, z, _s3)
    p = _fma(p, z, _s2)
    p = _fma(p, z, _s1)
    small = a + a * (z * p)
    e = _exp_half_float32(a)
    large = e - _QUARTER / e
    y = small if a < _F32_ONE else large
    return math.copysign(y, x) if x == x else x


@helper
def _cosh_float32(x):
    e = _exp_half_float32(abs(x))
    return e + _QUARTER / e


def _two_float(v):
    hi = np.float32(v)
    return hi, np.float32(v - np.longdouble(hi))


_ld = np.longdouble
((_h0, _l0), (_h1, _l1), (_h2, _l2), (_h3, _l3), (_h4, _l4)) = [
    _two_float(np.arctan(_ld(i) / 4)) for i in range(5)]
((_g0, _m0), (_g1, _m1), (_g2, _m2), (_g3, _m3), (_g4, _m4)) = [
    _two_float(np.arctan(_ld(1)) * 2 - np.arctan(_ld(i) / 4)) for i in range(5)]
(_a0, _a1, _a2, _a3, _a4) = tuple(f32((-1.0) ** (j + 1) / (2 * j + 3)) for j in range(5))
_CUT = f32(0.1875)
_PIO2 = f32(np.pi / 2)


@helper
def _atan_float32(x):
    a = abs(x)
    big = a > _F32_ONE
    ar = _F32_ONE / a if big else a
    # Centre 0 up to 3/16, so the result is never much smaller than atan(c).
    i = np.rint(ar * f32(4.0)) if ar >= _CUT else _ZERO
    c = i * _QUARTER
    t = (ar - c) / (_F32_ONE + ar * c)
    z = t * t
    p = _a4
    p = _fma(p, z, _a3)
    p = _fma(p, z, _a2)
    p = _fma(p, z, _a1)
    p = _fma(p, z, _a0)
    at = t + t * (z * p)
    hi = _h0 if i < 0.5 else (_h1 if i < 1.5 else (_h2 if i < 2.5 else (
        _h3 if i < 3.5 else _h4)))
    lo = _l0 if i < 0.5 else (_l1 if i < 1.5 else (_l2 if i < 2.5 else (
        _l3 if i < 3.5 else _l4)))
    ghi = _g0 if i < 0.5 else (_g1 if i < 1.5 else (_g2 if i < 2.5 else (
        _g3 if i < 3.5 else _g4)))
    glo = _m0 if i < 0.5 else (_m1 if i < 1.5 else (_m2 if i < 2.5 else (
        _m3 if i < 3.5 else _m4)))
    y = ghi + (glo - at) if big else hi + (lo + at)
    y = _PIO2 if a == _INF else y
    return math.copysign(y, x) if x == x else x
