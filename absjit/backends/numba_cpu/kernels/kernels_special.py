"""Branch-free ``expm1``, ``log1p``, ``tanh``, ``sinh``, ``cosh`` and ``atan`` for float32
and float64 that LLVM's loop vectoriser can widen (the reasons, and the ``exp``/``log``
they build on, are in :mod:`.fastmath_kernels`).

Each kernel is made of multiplies, adds, divides, compares/selects, ``rint``,
``fabs``/``copysign`` and exponent bit manipulation. The float32 versions are in
:mod:`.kernels_special32` (computed in float32: widening to float64 vectorises at a
quarter of the width), except ``log1p``, which is computed in float64 and rounded once.
All are within 2 ulp of the exact result (the sweeps are in
``tests/backends/numba_cpu/kernels/test_kernels.py``) and give NumPy's special values: NaN in,
NaN out; ``±0`` keep their sign (``cosh(±0) = 1``); ``expm1(-inf) = -1``,
``log1p(-1) = -inf``, ``log1p(x < -1) = nan``, ``tanh(±inf) = ±1``, ``atan(±inf) = ±pi/2``;
overflow to ``inf`` exactly where the result exceeds the largest float; subnormal inputs
give the correctly rounded (usually the same) subnormal.

Methods
-------
``expm1``: ``x = k*ln2 + r`` as in ``exp`` for ``|x| >= 1`` (``k = 0`` below, where
``k = +-1`` would subtract nearly equal terms); ``expm1(r) = r + r*r*P(r)`` (Taylor to
``r**19``, ``|r| < 1``); then ``2**k * expm1(r) + (2**k - 1)`` while ``2**k - 1``
is exact (``-1 <= k <= 52``), else ``2**k * (expm1(r) + 1) - 1``, whose ``- 1`` is
either negligible or dominant.

``log1p``: ``u = 1 + x`` rounded, then ``log(u) + (x - (u - 1)) / u``: the second
term is the first-order correction for the rounding of ``u``.

``tanh``: an odd polynomial fitted on ``|x| < 0.55`` (mpmath's ``chebyfit``), and
``1 - 2 / (e + 1)`` with ``e = exp(2|x|)`` above (no cancellation: the result is above
1/2), the sign copied from ``x``; the rounding error of ``e + 1`` (exact as
``e - (d - 1)``) is corrected for to first order.

``sinh``/``cosh``: ``E = exp(|x|) / 2`` computed directly (the halving is folded into the
exponent, so ``E`` is finite up to the largest ``|x|`` with a finite result);
``cosh = E + 0.25 / E``; ``sinh = E - 0.25 / E`` for ``|x| >= 1`` and
``(t + t / (t + 1)) / 2`` with ``t = expm1(|x|)`` below.

``atan``: ``a = |x|``, reduced to ``a' = min(a, 1/a)`` and then around the nearest of the
centres ``c = 0`` (below ``3/16``), ``1/4, 1/2, 3/4, 1``: ``atan(a') = atan(c) + atan(t)``,
``t = (a' - c) / (1 + a' c)``, ``|t| <= 3/16``, ``atan(t)`` by its Taylor series to
``t**23``; ``atan(c)`` and ``pi/2 - atan(c)`` are tabulated as two-double sums computed
in extended precision at import.
"""
from __future__ import annotations

import math

import numpy as np

from .fastmath_kernels import (_F64_HALF, _F64_LN2_HI, _F64_LN2_LO, _F64_LOG2E,
                               _F64_ONE, _exp_float64, _fma, _log_float64, _scale_f64)
from ..helper_jit import helper

__all__ = []

f64 = np.float64
_ZERO = f64(0.0)
_TWO = f64(2.0)
_QUARTER = f64(0.25)
_INF = f64(np.inf)


def _fact(n):
    return float(math.factorial(n))


# expm1(r) = r + r*r*(e0 + e1 r + ... + e17 r**17), e_j = 1/(j+2)!; enough for |r| < 1
(_e0, _e1, _e2, _e3, _e4, _e5, _e6, _e7, _e8, _e9, _e10, _e11, _e12, _e13, _e14, _e15, _e16,
 _e17) = tuple(f64(1.0 / _fact(j + 2)) for j in range(18))
_EXPM1_LO = f64(-40.0)        # expm1(-40) rounds to -1
_EXPM1_HI = f64(710.0)        # expm1(710) overflows


@helper
def _expm1_float64(x):
    xc = x if x > _EXPM1_LO else _EXPM1_LO
    xc = xc if xc < _EXPM1_HI else _EXPM1_HI
    # No reduction below |x| = 1 (k = 0): with k = +-1 the result would be a difference
    # of nearly equal terms there.
    kf = np.rint(xc * _F64_LOG2E) if abs(xc) >= _F64_ONE else _ZERO
    r = _fma(kf, -_F64_LN2_LO, _fma(kf, -_F64_LN2_HI, xc))
    p = _e17
    p = _fma(p, r, _e16)
    p = _fma(p, r, _e15)
    p = _fma(p, r, _e14)
    p = _fma(p, r, _e13)
    p = _fma(p, r, _e12)
    p = _fma(p, r, _e11)
    p = _fma(p, r, _e10)
    p = _fma(p, r, _e9)
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
    s = _scale_f64(_F64_ONE, kf)                    # 2**k (used where it is exact)
    mid = s * em + (s - _F64_ONE)
    far = _scale_f64(em + _F64_ONE, kf) - _F64_ONE
    y = mid if (kf > f64(-2.0) and kf < f64(53.0)) else far
    y = x if x == _ZERO else y                         # keeps the sign of zero
    return y if x == x else x


@helper
def _log1p_float64(x):
    u = _F64_ONE + x
    c = (x - (u - _F64_ONE)) / u
    y = _log_float64(u) + c
    y = -_INF if x == -_F64_ONE else y
    y = x if (x == _ZERO or x == _INF) else y
    return y if x == x else x


@helper
def _log1p_float32(x):
    return np.float32(_log1p_float64(np.float64(x)))


# tanh(a) = a + a*z*(t0 + t1 z + … + t10 z**10), z = a*a, for a < 0.55: mpmath's
# chebyfit of (tanh(a)/a - 1)/z on z in [0, 0.3025] (relative error below 2**-57).
(_t0, _t1, _t2, _t3, _t4, _t5, _t6, _t7, _t8, _t9, _t10) = tuple(f64(v) for v in (
    -0.3333333333333333, 0.13333333333332714, -0.053968253967434016, 0.021869488493666944,
    -0.008863234397814355, 0.003592110378689024, -0.001455661830100716,
    0.0005889360520074057, -0.0002346347410887237, 8.511313685577672e-05,
    -2.060276537636634e-05))
_TANH_SPLIT = f64(0.55)


@helper
def _tanh_float64(x):
    a = abs(x)
    z = a * a
    p = _fma(_t10, z, _t9)
    p = _fma(p, z, _t8)
    p = _fma(p, z, _t7)
    p = _fma(p, z, _t6)
    p = _fma(p, z, _t5)
    p = _fma(p, z, _t4)
    p = _fma(p, z, _t3)
    p = _fma(p, z, _t2)
    p = _fma(p, z, _t1)
    p = _fma(p, z, _t0)
    small = _fma(a * z, p, a)
    e = _exp_float64(a + a)
    d = e + _F64_ONE
    w = _TWO / d
    # Corrected for the rounding of d (e - (d - 1) exactly, as e >= 1), to first order;
    # w / 2 = 1 / d replaces a second division.
    w = w - w * ((e - (d - _F64_ONE)) * (w * _F64_HALF))
    large = _F64_ONE - w
    y = small if a < _TANH_SPLIT else large
    y = _F64_ONE if a > f64(20.0) else y               # (e = inf: d - 1 would make a NaN)
    return math.copysign(y, x) if x == x else x


# exp(x) / 2 with the halving in the exponent: finite up to x = 710.47.
from .fastmath_kernels import _exp_parts_f64  # noqa: E402

_EH_LO = f64(-746.0)
_EH_HI = f64(711.0)


@helper
def _exp_half_float64(x):
    xc = x if x > _EH_LO else _EH_LO
    xc = xc if xc < _EH_HI else _EH_HI
    kf, r, q = _exp_parts_f64(xc)
    p = _F64_ONE + (r + (r * r) * q)
    y = _scale_f64(p, kf - _F64_ONE)
    return y if x == x else x


@helper
def _cosh_float64(x):
    e = _exp_half_float64(abs(x))
    return e + _QUARTER / e


@helper
def _sinh_float64(x):
    a = abs(x)
    t = _expm1_float64(a)
    d = t + _F64_ONE
    q = t / d
    q = q - q * ((t - (d - _F64_ONE)) / d)   # corrected for the rounding of d
    small = _F64_HALF * (t + q)
    e = _exp_half_float64(a)
    large = e - _QUARTER / e
    z = small if a < _F64_ONE else large
    return math.copysign(z, x) if x == x else x


def _two_double(v):
    """``(hi, lo)`` float64s with ``hi + lo`` equal to the long double ``v``."""
    hi = np.float64(v)
    return hi, np.float64(v - np.longdouble(hi))


_ld = np.longdouble
_ATAN_C = [_two_double(np.arctan(_ld(i) / 4)) for i in range(5)]
_ATAN_CC = [_two_double(np.arctan(_ld(1)) * 2 - np.arctan(_ld(i) / 4)) for i in range(5)]
((_h0, _l0), (_h1, _l1), (_h2, _l2), (_h3, _l3), (_h4, _l4)) = _ATAN_C
((_g0, _m0), (_g1, _m1), (_g2, _m2), (_g3, _m3), (_g4, _m4)) = _ATAN_CC
# atan(t) = t + t*z*(a0 + a1 z + ... + a10 z**10), z = t*t, a_j = (-1)**(j+1) / (2j + 3)
(_a0, _a1, _a2, _a3, _a4, _a5, _a6, _a7, _a8, _a9, _a10) = tuple(
    f64((-1.0) ** (j + 1) / (2 * j + 3)) for j in range(11))
_CUT = f64(0.1875)
_PIO2 = f64(np.pi / 2)


@helper
def _atan_float64(x):
    a = abs(x)
    big = a > _F64_ONE
    ar = _F64_ONE / a if big else a
    # Centre 0 up to 3/16, so the result is never much smaller than atan(c).
    i = np.rint(ar * f64(4.0)) if ar >= _CUT else _ZERO
    c = i * _QUARTER
    t = (ar - c) / (_F64_ONE + ar * c)
    z = t * t
    p = _a10
    p = _fma(p, z, _a9)
    p = _fma(p, z, _a8)
    p = _fma(p, z, _a7)
    p = _fma(p, z, _a6)
    p = _fma(p, z, _a5)
    p = _fma(p, z, _a4)
    p = _fma(p, z, _a3)
    p = _fma(p, z, _a2)
    p = _fma(p, z, _a1)
    p = _fma(p, z, _a0)
    at = t + t * (z * p)
    # atan(c) (or pi/2 - atan(c) for a > 1) as hi + lo, picked by the centre index.
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


# float32 versions computed in float32 (log1p's, like log's, goes through float64).
from .kernels_special32 import (_atan_float32, _cosh_float32, _expm1_float32,  # noqa: E402
                                _sinh_float32, _tanh_float32)

KERNELS = ("expm1", "log1p", "tanh", "sinh", "cosh", "atan")
__all__ += [f"_{name}_{dt}" for name in KERNELS for dt in ("float32", "float64")]
