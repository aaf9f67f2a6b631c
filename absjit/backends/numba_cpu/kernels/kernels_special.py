"""Branch-free ``expm1``, ``log1p``, ``tanh``, ``sinh``, ``cosh`` and ``atan`` for float32
and float64 that LLVM's loop vectoriser can widen (the reasons, and the ``exp``/``log``
they build on, are in :mod:`.fastmath_kernels`).

Each kernel is made of multiplies, adds, divides, compares/selects, ``rint``,
``fabs``/``copysign`` and exponent bit manipulation. Each algorithm is written once
(``_expm1``, ``_tanh``, ``_exp_half``, ``_cosh``, ``_atan``) and instantiated for float32
and float64 with the constants of the width (a tuple, folded by LLVM once the helper is
inlined): float32 is computed in float32 with polynomials sized for it (widening to
float64 would vectorise at a quarter of the width with twice the polynomial, about ten
times slower), except ``log1p``, which is computed in float64 and rounded once.
All are within 2 ulp of the exact result (the sweeps are in
``tests/backends/numba_cpu/kernels/test_kernels.py``) and give NumPy's special values:
NaN in, NaN out; ``±0`` keep their sign (``cosh(±0) = 1``); ``expm1(-inf) = -1``,
``log1p(-1) = -inf``, ``log1p(x < -1) = nan``, ``tanh(±inf) = ±1``,
``atan(±inf) = ±pi/2``;
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
1/2), the sign copied from ``x``; ``|x|`` is clamped where tanh rounds to 1, so ``e`` is
``p * 2**k`` with one factor and no clamps of its own. Within 1.6 ulp (float32); the
first-order correction for the rounding of ``e + 1`` would bring that to 1.13 ulp at a
quarter more time.

``sinh``/``cosh``: ``E = exp(|x|) / 2`` computed directly (the halving is folded into the
exponent, so ``E`` is finite up to the largest ``|x|`` with a finite result);
``cosh = E + 0.25 / E``; ``sinh = E - 0.25 / E`` for ``|x| >= 1``, and below it
``(t + t / (t + 1)) / 2`` with ``t = expm1(|x|)`` (float64) or the Taylor polynomial to
``x**13`` (float32: the ``expm1`` route would cost a second exponential's worth of work).

``atan``: ``a = |x|``, reduced to ``a' = min(a, 1/a)`` and then around the nearest of the
centres ``c = 0`` (below ``3/16``), ``1/4, 1/2, 3/4, 1``: ``atan(a') = atan(c) + atan(t)``,
``t = (a' - c) / (1 + a' c)``, ``|t| <= 3/16``, ``atan(t)`` by its Taylor series to
``t**23``; ``atan(c)`` and ``pi/2 - atan(c)`` are tabulated as two-double sums computed
in extended precision at import.
"""
from __future__ import annotations

import math

import numpy as np
from numba.core import types
from numba.extending import overload

from .fastmath_kernels import (_F32_C, _F32_LN2_HI, _F32_LN2_LO, _F32_LOG2E, _F32_ONE,
                               _F64_C, _F64_HALF, _F64_LN2_HI, _F64_LN2_LO, _F64_LOG2E,
                               _F64_ONE, _exp_parts_f32, _exp_parts_f64, _fma, _horner,
                               _log_float64, _pow2_f32, _pow2_f64, _scale_f32, _scale_f64)
from ..helper_jit import helper

KERNELS = ("expm1", "log1p", "tanh", "sinh", "cosh", "atan")
__all__ = [f"_{name}_{dt}" for name in KERNELS for dt in ("float32", "float64")]

f32 = np.float32
f64 = np.float64


def _by_width(for_float32, for_float64, doc):
    """A function for compiled code that calls ``for_float32`` or ``for_float64`` by the
    type of its first argument (``doc`` says what it computes)."""
    def call(x, *rest):
        raise TypeError("only compiled code calls this")

    call.__doc__ = doc

    @overload(call)
    def by_width(x, *rest):
        impl = {types.float32: for_float32, types.float64: for_float64}.get(x)
        return None if impl is None else (lambda x, *rest: impl(x, *rest))

    return call


_scale = _by_width(_scale_f32, _scale_f64, "``p * 2**kf``, by ``p``'s type.")
_exp_parts = _by_width(_exp_parts_f32, _exp_parts_f64,
                       "``(k, p)`` with ``exp(x) = 2**k * p``, by ``x``'s type (no clamps).")
_pow2 = _by_width(_pow2_f32, _pow2_f64,
                  "``2**kf`` for an integral ``kf`` with a normal result.")


_ZERO64, _QUARTER32, _QUARTER64, _INF64 = f64(0.0), f32(0.25), f64(0.25), f64(np.inf)
# Per width: (zero, one, half, two, quarter, inf, log2e, ln2_hi, ln2_lo)
_W32 = (f32(0.0), _F32_ONE, f32(0.5), f32(2.0), _QUARTER32, f32(np.inf), _F32_LOG2E,
        _F32_LN2_HI, _F32_LN2_LO)
_W64 = (_ZERO64, _F64_ONE, _F64_HALF, f64(2.0), _QUARTER64, _INF64, _F64_LOG2E,
        _F64_LN2_HI, _F64_LN2_LO)


# -- expm1 ------------------------------------------------------------------------------
# expm1(r) = r + r*r*(e0 + e1 r + ... + e_n r**n), e_j = 1/(j+2)!: n = 17 for float64,
# 9 for float32 (enough for |r| < 1). Constants: the clamps (below lo expm1 rounds to
# -1, above hi it overflows), the k up to which 2**k - 1 is exact, the polynomial
# (highest power first).
def _expm1_constants(dtype, lo, hi, k_exact, terms):
    return (dtype(lo), dtype(hi), dtype(-2.0), dtype(k_exact),
            tuple(dtype(1.0 / math.factorial(j + 2)) for j in reversed(range(terms))))


_EXPM1_32 = _expm1_constants(f32, -18.0, 89.0, 24.0, 10)
_EXPM1_64 = _expm1_constants(f64, -40.0, 710.0, 53.0, 18)


@helper
def _expm1(x, w, c):
    zero, one, _, _, _, _, log2e, ln2_hi, ln2_lo = w
    lo, hi, k_low, k_exact, poly = c
    xc = x if x > lo else lo
    xc = xc if xc < hi else hi
    # No reduction below |x| = 1 (k = 0): with k = +-1 the result would be a difference
    # of nearly equal terms there.
    kf = np.rint(xc * log2e) if abs(xc) >= one else zero
    r = _fma(kf, -ln2_lo, _fma(kf, -ln2_hi, xc))
    p = _horner(r, poly)
    em = r + (r * r) * p
    s = _scale(one, kf)                    # 2**k (used where it is exact)
    mid = s * em + (s - one)
    far = _scale(em + one, kf) - one
    y = mid if (kf > k_low and kf < k_exact) else far
    y = x if x == zero else y              # keeps the sign of zero
    return y if x == x else x


@helper
def _expm1_float32(x):
    return _expm1(x, _W32, _EXPM1_32)


@helper
def _expm1_float64(x):
    return _expm1(x, _W64, _EXPM1_64)


# -- log1p ------------------------------------------------------------------------------
@helper
def _log1p_float64(x):
    u = _F64_ONE + x
    c = (x - (u - _F64_ONE)) / u
    y = _log_float64(u) + c
    y = -_INF64 if x == -_F64_ONE else y
    y = x if (x == _ZERO64 or x == _INF64) else y
    return y if x == x else x


@helper
def _log1p_float32(x):
    return np.float32(_log1p_float64(np.float64(x)))


# -- tanh -------------------------------------------------------------------------------
# tanh(a) = a + a*z*(t0 + t1 z + ... + t_n z**n), z = a*a, for a < 0.55: mpmath's
# chebyfit of (tanh(a)/a - 1)/z on z in [0, 0.3025]; relative error below 2**-57 for
# float64 (n = 10), below 2**-27 with the coefficients rounded to float32 (n = 4, half
# the terms of the Taylor series). Constants: the split, a clamp above which tanh rounds
# to 1 (and so does the formula at the clamp), the polynomial (highest power first).
_TANH_32 = (f32(0.55), f32(9.1), tuple(f32(v) for v in (
    -0.00661022774875164, 0.021309388801455498, -0.05390942841768265, 0.13333113491535187,
    -0.3333333134651184)))
_TANH_64 = (f64(0.55), f64(20.0), tuple(f64(v) for v in (
    -2.060276537636634e-05, 8.511313685577672e-05, -0.0002346347410887237,
    0.0005889360520074057, -0.001455661830100716, 0.003592110378689024,
    -0.008863234397814355, 0.021869488493666944, -0.053968253967434016,
    0.13333333333332714, -0.3333333333333333)))


@helper
def _tanh(x, w, c):
    _, one, _, two, _, _, _, _, _ = w
    split, clamp, poly = c
    a = abs(x)
    a = clamp if a > clamp else a          # a NaN passes (the comparison is false)
    z = a * a
    small = _fma(a * z, _horner(z, poly), a)
    # exp(2a) <= exp(40): one factor 2**k, no clamps. 2 / (e + 1) is not corrected
    # for the rounding of e + 1: within 1.6 ulp without (1.13 with), a quarter faster.
    kf, p = _exp_parts(a + a)
    large = one - two / (p * _pow2(kf) + one)
    return math.copysign(small if a < split else large, x)


@helper
def _tanh_float32(x):
    return _tanh(x, _W32, _TANH_32)


@helper
def _tanh_float64(x):
    return _tanh(x, _W64, _TANH_64)


# -- cosh, sinh -------------------------------------------------------------------------
# exp(x) / 2 with the halving in the exponent: finite up to x = 89.41 (float32), 710.47
# (float64). Constants: the clamps, the polynomial of exp (:mod:`.fastmath_kernels`'s
# Taylor coefficients 1/2!, 1/3!, ..., highest power first).
_EXP_HALF_32 = (f32(-104.0), f32(90.0), tuple(reversed(_F32_C)))
_EXP_HALF_64 = (f64(-746.0), f64(711.0), tuple(reversed(_F64_C)))


@helper
def _exp_half(x, w, c):
    _, one, _, _, _, _, log2e, ln2_hi, ln2_lo = w
    lo, hi, poly = c
    xc = x if x > lo else lo
    xc = xc if xc < hi else hi
    kf = np.rint(xc * log2e)
    r = _fma(kf, -ln2_lo, _fma(kf, -ln2_hi, xc))
    q = _horner(r, poly)
    p = one + (r + (r * r) * q)
    y = _scale(p, kf - one)
    return y if x == x else x


@helper
def _cosh_float32(x):
    e = _exp_half(abs(x), _W32, _EXP_HALF_32)
    return e + _QUARTER32 / e


@helper
def _cosh_float64(x):
    e = _exp_half(abs(x), _W64, _EXP_HALF_64)
    return e + _QUARTER64 / e


# sinh(a) = a + a*z*(s1 + ... + s6 z**5), s_k = 1/(2k+1)!, for float32 a < 1
_SINH_32 = tuple(f32(1.0 / math.factorial(2 * k + 1)) for k in reversed(range(1, 7)))


@helper
def _sinh_float32(x):
    a = abs(x)
    z = a * a
    p = _horner(z, _SINH_32)
    small = a + a * (z * p)
    e = _exp_half(a, _W32, _EXP_HALF_32)
    large = e - _QUARTER32 / e
    y = small if a < _F32_ONE else large
    return math.copysign(y, x) if x == x else x


@helper
def _sinh_float64(x):
    a = abs(x)
    t = _expm1_float64(a)
    d = t + _F64_ONE
    q = t / d
    q = q - q * ((t - (d - _F64_ONE)) / d)   # corrected for the rounding of d
    small = _F64_HALF * (t + q)
    e = _exp_half(a, _W64, _EXP_HALF_64)
    large = e - _QUARTER64 / e
    z = small if a < _F64_ONE else large
    return math.copysign(z, x) if x == x else x


# -- atan -------------------------------------------------------------------------------
def _two_parts(v, dtype):
    """``(hi, lo)`` of ``dtype`` with ``hi + lo`` equal to the long double ``v``."""
    hi = dtype(v)
    return hi, dtype(v - np.longdouble(hi))


def _atan_constants(dtype, terms):
    """The centres' ``atan(c)`` and ``pi/2 - atan(c)`` as (hi, lo) parts, then the Taylor
    polynomial of ``(atan(t) - t) / t**3`` in ``z = t*t``, highest power first
    (``a_j = (-1)**(j+1) / (2j + 3)``), ``3/16`` and ``pi/2``."""
    ld = np.longdouble
    near = [_two_parts(np.arctan(ld(i) / 4), dtype) for i in range(5)]
    far = [_two_parts(np.arctan(ld(1)) * 2 - np.arctan(ld(i) / 4), dtype) for i in range(5)]
    poly = tuple(dtype((-1.0) ** (j + 1) / (2 * j + 3)) for j in reversed(range(terms)))
    return (tuple(h for h, _ in near), tuple(lo for _, lo in near),
            tuple(h for h, _ in far), tuple(lo for _, lo in far), poly,
            dtype(0.1875), dtype(np.pi / 2), dtype(4.0))


_ATAN_32 = _atan_constants(f32, 5)
_ATAN_64 = _atan_constants(f64, 11)


@helper
def _pick(i, t):
    """``t[round(i)]`` of a 5-tuple, ``i`` an integral float in ``[0, 4]`` (selects)."""
    return t[0] if i < 0.5 else (t[1] if i < 1.5 else (t[2] if i < 2.5 else (
        t[3] if i < 3.5 else t[4])))


@helper
def _atan(x, w, c):
    zero, one, _, _, quarter, inf, _, _, _ = w
    near_hi, near_lo, far_hi, far_lo, poly, cut, pio2, four = c
    a = abs(x)
    big = a > one
    ar = one / a if big else a
    # Centre 0 up to 3/16, so the result is never much smaller than atan(c).
    i = np.rint(ar * four) if ar >= cut else zero
    centre = i * quarter
    t = (ar - centre) / (one + ar * centre)
    z = t * t
    p = _horner(z, poly)
    at = t + t * (z * p)
    # atan(c) (or pi/2 - atan(c) for a > 1) as hi + lo, picked by the centre index.
    hi, lo = _pick(i, near_hi), _pick(i, near_lo)
    ghi, glo = _pick(i, far_hi), _pick(i, far_lo)
    y = ghi + (glo - at) if big else hi + (lo + at)
    y = pio2 if a == inf else y
    return math.copysign(y, x) if x == x else x


@helper
def _atan_float32(x):
    return _atan(x, _W32, _ATAN_32)


@helper
def _atan_float64(x):
    return _atan(x, _W64, _ATAN_64)
