"""Branch-free ``sin``, ``cos`` and ``tan`` for float32 and float64 that LLVM's loop
vectoriser can widen (why: :mod:`.fastmath_kernels`).

Within 2 ulp of the correctly rounded result for every finite argument, however large
(the sweeps are in ``tests/backends/numba_cpu/kernels/test_trig.py``), with NumPy's special
values: ``sin(±0) = ±0``, ``tan(±0) = ±0``, ``cos(±0) = 1``, ``±inf`` and NaN give NaN.

Method. ``|x| = (k + f) * pi/2`` with ``k`` an integer and ``|f| <= 1/2``; the quadrant
``k mod 4`` picks ``±sin`` or ``±cos`` of ``r = f * pi/2``, each a polynomial on
``|r| <= pi/4``; ``sin`` and ``tan`` are odd, so the sign of ``x`` is applied last.

* float32 is reduced and evaluated in float64 and rounded once. The reduction
  (:mod:`.trig_reduce32`) works for every exponent without a branch or a table
  lookup: ``|x| * 2/pi mod 4`` from integer products of the 24-bit significand with
  104 bits of ``2/pi`` cut out by the exponent, exact but for a term below ``2**-77``.
  Lanes below ``pi/4`` take ``r = x`` directly.
* float64 up to ``|x| < 2**20`` is reduced by Cody-Waite with ``pi/2`` in three parts
  (33 + 33 + 53 bits: ``k * p0`` and ``k * p1`` are exact for ``k < 2**20``, and an
  error-free sum keeps the rounding of ``r`` as a second word ``rlo``). Above that the
  argument's significand is split into a 27-bit and a 26-bit half and multiplied by
  seven 26-bit chunks of ``2/pi`` chosen by its exponent (four 64-bit table words);
  the products are exact, those with large weights are reduced modulo 4 exactly and
  summed exactly, the rest are accumulated by error-free sums into ``f + flo``. Both
  reductions are computed for every lane (the vectoriser turns the choice into a
  select, and the table loads into gathers), so the common path stays vectorised and
  pays for the large one: about four times the cost of Cody-Waite alone.

``sin(r) = r + r**3 * P(r**2)`` and ``cos(r) = 1 - r**2/2 + r**4 * Q(r**2)``, Taylor
polynomials long enough that their truncation error is far below half an ulp; the
float64 versions take ``r + rlo`` into account to first order, and ``cos`` keeps the
rounding error of ``1 - r**2/2``.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .fastmath_kernels import _fma
from ..helper_jit import helper
from .trig_reduce32 import _reduce_bits_f32
from .trig_tables import F64_E_MIN, F64_WORDS, pio2_parts, table_f64

__all__ = [f"_{n}_{dt}" for n in ("sin", "cos", "tan") for dt in ("float32", "float64")]

f64 = np.float64


@intrinsic
def _exponent_index(typingctx, x, emin, emax):
    """``clamp(e - emin, 0, emax - emin)`` for the unbiased binary exponent ``e`` of the
    float ``x`` (integer ops on its bits: vectorisable)."""
    if x not in (types.float32, types.float64):
        return None
    bits, mant, bias = (32, 23, 127) if x == types.float32 else (64, 52, 1023)

    def codegen(context, builder, sig, args):
        ity = ir.IntType(bits)
        b = builder.and_(builder.bitcast(args[0], ity), ity((1 << (bits - 1)) - 1))
        e = builder.sub(builder.lshr(b, ity(mant)), ity(bias))
        i64 = ir.IntType(64)
        e = builder.sext(e, i64) if bits == 32 else e
        i = builder.sub(e, args[1])
        i = builder.select(builder.icmp_signed("<", i, i64(0)), i64(0), i)
        top = builder.sub(args[2], args[1])
        return builder.select(builder.icmp_signed(">", i, top), top, i)

    return types.int64(x, types.int64, types.int64), codegen


@intrinsic
def _significand_f64(typingctx, x):
    """The 53-bit integer significand of a normal float64 (implicit bit included)."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        b = builder.and_(builder.bitcast(args[0], i64), i64((1 << 52) - 1))
        return builder.or_(b, i64(1 << 52))

    return types.int64(types.float64), codegen


@intrinsic
def _u52_to_float(typingctx, v):
    """An integer ``0 <= v < 2**52`` as a float64, exactly: ``v`` or'ed into the bits of
    ``2**52``, minus ``2**52`` (a packed 64-bit int -> float conversion needs AVX-512)."""
    if v != types.int64:
        return None

    def codegen(context, builder, sig, args):
        t = builder.or_(args[0], ir.IntType(64)(0x4330000000000000))
        return builder.fsub(builder.bitcast(t, ir.DoubleType()),
                            ir.Constant(ir.DoubleType(), 2.0 ** 52))

    return types.float64(types.int64), codegen


_ZERO = f64(0.0)
_ONE = f64(1.0)
_HALF = f64(0.5)
_QUARTER = f64(0.25)
_FOUR = f64(4.0)
_INF = f64(np.inf)
_TWO_OVER_PI = f64(2 / np.pi)
_PIO4 = f64(np.pi / 4)
_P0, _P1, _P2 = (f64(v) for v in pio2_parts([33, 33, 53]))
_PIO2_HI, _PIO2_LO = (f64(v) for v in pio2_parts([53, 53]))
_T64 = table_f64()
_T64_EMAX = 1024
_CW_LIMIT = f64(2.0 ** 20)
_MASK26 = (1 << 26) - 1
(_S24, _S26, _S52, _S78, _S104, _S130, _S156) = (f64(2.0 ** -n)
                                                 for n in (24, 26, 52, 78, 104, 130, 156))

# sin(r) = r + r*z*(s1 + s2 z + …), cos(r) = 1 - z/2 + z*z*(c2 + c3 z + …), z = r*r:
# Taylor coefficients; float64 to r**17 / r**18, float32 (evaluated in float64) to
# r**9 / r**10 (truncation below 2**-28 relative on |r| <= pi/4).
(_s1, _s2, _s3, _s4, _s5, _s6, _s7, _s8) = tuple(
    f64((-1) ** n / math.factorial(2 * n + 1)) for n in range(1, 9))
(_c2, _c3, _c4, _c5, _c6, _c7, _c8, _c9) = tuple(
    f64((-1) ** n / math.factorial(2 * n)) for n in range(2, 10))


@helper
def _mod4(t):
    """``t mod 4`` in ``[0, 4)``, exact for any float64 ``t >= 0``."""
    return t - _FOUR * np.floor(t * _QUARTER)


@helper
def _two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


# -- float32 ----------------------------------------------------------------------------
# The float32 kernels stay inlined by Numba: as compiled helpers, a 1e6-element float32
# sin ran ~1.4x slower (1.75-1.90 ms against 1.26 ms, same run, interleaved medians).
@numba.njit(inline="always", cache=False, error_model="numpy")
def _reduce_f32(x):
    """``(q, r)``: ``|x| = (4 m + q) * pi/2 + r``, ``|r| <= pi/4`` (float64 ``r``)."""
    a = abs(np.float64(x))
    q, f = _reduce_bits_f32(x)
    small = a < _PIO4
    return (_ZERO if small else q), (a if small else f * _PIO2_HI)


@numba.njit(inline="always", cache=False, error_model="numpy")
def _sincos_f32(r):
    z = r * r
    s = _fma(_fma(_fma(_s4, z, _s3), z, _s2), z, _s1)
    sn = _fma(r * z, s, r)
    c = _fma(_fma(_fma(_c5, z, _c4), z, _c3), z, _c2)
    cs = _fma(z * z, c, _fma(-_HALF, z, _ONE))
    return sn, cs


@numba.njit(inline="always", cache=False, error_model="numpy")
def _sin_float32(x):
    q, r = _reduce_f32(x)
    sn, cs = _sincos_f32(r)
    y = cs if (q == 1.0 or q == 3.0) else sn
    y = -y if q >= 2.0 else y
    y = -y if x < 0 else y
    y = np.float32(y)
    return x if x == 0 else (y if abs(x) < np.float32(np.inf) else x - x)


@numba.njit(inline="always", cache=False, error_model="numpy")
def _cos_float32(x):
    q, r = _reduce_f32(x)
    sn, cs = _sincos_f32(r)
    y = sn if (q == 1.0 or q == 3.0) else cs
    y = -y if (q == 1.0 or q == 2.0) else y
    y = np.float32(y)
    return y if abs(x) < np.float32(np.inf) else x - x


@numba.njit(inline="always", cache=False, error_model="numpy")
def _tan_float32(x):
    q, r = _reduce_f32(x)
    sn, cs = _sincos_f32(r)
    y = -cs / sn if (q == 1.0 or q == 3.0) else sn / cs
    y = -y if x < 0 else y
    y = np.float32(y)
    return x if x == 0 else (y if abs(x) < np.float32(np.inf) else x - x)


# -- float64 ----------------------------------------------------------------------------
@helper
def _reduce_large_f64(a):
    """``(k, f, flo)``: ``a * 2/pi = 4 m + k + f + flo``, ``|f| <= 1/2`` (``a >= 2**20``)."""
    i = _exponent_index(a, F64_E_MIN, _T64_EMAX) * F64_WORDS
    m = _significand_f64(a)
    # a's 27-bit and 26-bit halves and the 26-bit chunks of 2/pi, each scaled so that
    # the products are those of trig_tables' comment (independent of the exponent).
    ah = _u52_to_float(m >> 26) * _FOUR
    al = _u52_to_float(m & _MASK26) * _S24
    w0, w1, w2, w3 = _T64[i], _T64[i + 1], _T64[i + 2], _T64[i + 3]
    c0 = _u52_to_float(w0 >> 26)
    c1 = _u52_to_float(w0 & _MASK26) * _S26
    c2 = _u52_to_float(w1 >> 26) * _S52
    c3 = _u52_to_float(w1 & _MASK26) * _S78
    c4 = _u52_to_float(w2 >> 26) * _S104
    c5 = _u52_to_float(w2 & _MASK26) * _S130
    c6 = _u52_to_float(w3 >> 26) * _S156
    # Products on the grid of 2**-24 (below 2**29) and of 2**-50 (below 2**3): their
    # sums, each taken modulo 4 first, are exact.
    g0 = _mod4(_mod4(al * c0) + _mod4(ah * c1))
    g1 = _mod4(al * c1 + _mod4(ah * c2))
    s = g0 + g1
    k = np.rint(s)
    f = s - k
    # The rest (below 2**-21) by error-free sums; the products are exact.
    f, e1 = _two_sum(f, al * c2)
    f, e2 = _two_sum(f, ah * c3)
    f, e3 = _two_sum(f, al * c3)
    f, e4 = _two_sum(f, ah * c4)
    flo = ((e1 + e2) + (e3 + e4)) + ((al * c4 + ah * c5) + (al * c5 + ah * c6))
    return k, f, flo


@helper
def _reduce_f64(x):
    """``(q, r, rlo)``: ``|x| = (4 m + q) * pi/2 + r + rlo``, ``|r| <~ pi/4``."""
    a = abs(x)
    # Cody-Waite: k*_P0 and k*_P1 are exact, and so is a - k*_P0 (k < 2**20).
    k = np.rint(a * _TWO_OVER_PI)
    r1 = a - k * _P0
    r, e = _two_sum(r1, -(k * _P1))
    rlo = e - k * _P2
    # Large arguments: f + flo in units of pi/2, times pi/2 as a two-word product.
    kl, f, flo = _reduce_large_f64(a)
    ph = f * _PIO2_HI
    pl = _fma(f, _PIO2_HI, -ph) + (f * _PIO2_LO + flo * _PIO2_HI)
    big = a >= _CW_LIMIT
    k = kl if big else k
    r = ph if big else r
    rlo = pl if big else rlo
    r, rlo = _two_sum(r, rlo)
    return k - _FOUR * np.floor(k * _QUARTER), r, rlo


@helper
def _sincos_f64(r, rlo):
    """``(sh, sl, ch, cl)``: ``sin(r + rlo) ~ sh + sl`` and ``cos(r + rlo) ~ ch + cl``
    (``sh``, ``ch`` the rounded values; the low words serve ``tan``)."""
    z = r * r
    s = _fma(_fma(_fma(_fma(_fma(_fma(_fma(_s8, z, _s7), z, _s6), z, _s5), z, _s4), z, _s3),
                  z, _s2), z, _s1)
    st = _fma(r * z, s, rlo) - (_HALF * z) * rlo
    sh = r + st
    sl = (r - sh) + st                                  # |r| > |st|
    c = _fma(_fma(_fma(_fma(_fma(_fma(_fma(_c9, z, _c8), z, _c7), z, _c6), z, _c5), z, _c4),
                  z, _c3), z, _c2)
    hz = _HALF * z
    w = _ONE - hz
    ct = ((_ONE - w) - hz) + _fma(z * z, c, -(r * rlo))
    ch = w + ct
    cl = (w - ch) + ct                                  # |w| > |ct|
    return sh, sl, ch, cl


@helper
def _sin_float64(x):
    q, r, rlo = _reduce_f64(x)
    sn, _, cs, _ = _sincos_f64(r, rlo)
    y = cs if (q == 1.0 or q == 3.0) else sn
    y = -y if q >= 2.0 else y
    y = -y if x < 0 else y
    return x if x == 0 else (y if abs(x) < _INF else x - x)


@helper
def _cos_float64(x):
    q, r, rlo = _reduce_f64(x)
    sn, _, cs, _ = _sincos_f64(r, rlo)
    y = sn if (q == 1.0 or q == 3.0) else cs
    y = -y if (q == 1.0 or q == 2.0) else y
    return y if abs(x) < _INF else x - x


@helper
def _tan_float64(x):
    q, r, rlo = _reduce_f64(x)
    sh, sl, ch, cl = _sincos_f64(r, rlo)
    odd = q == 1.0 or q == 3.0                          # tan = -cos/sin there
    nh = ch if odd else sh
    nl = cl if odd else sl
    dh = sh if odd else ch
    dl = sl if odd else cl
    y = nh / dh
    y = y + ((_fma(-y, dh, nh) + nl) - y * dl) / dh      # the quotient of the two words
    y = -y if odd != (x < 0) else y
    return x if x == 0 else (y if abs(x) < _INF else x - x)
