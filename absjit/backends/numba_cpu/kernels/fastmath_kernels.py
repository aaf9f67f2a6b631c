"""Branch-free ``exp`` and ``log`` for float32 and float64 that LLVM's loop vectoriser
can widen.

PyPI's llvmlite ships without SVML, so ``np.exp`` inside a Numba loop is one scalar libm
call per element and the loop stays scalar. These versions are made of multiplies, adds,
compares/selects and integer bit manipulation only, so a fused elementwise loop that
calls them vectorises (packed ``vmulps``/``vaddps`` on AVX2).

They are accurate, not "fast-math": ``exp`` is within 1 ulp of the correctly rounded
result over the whole float range (so within 1 ulp of float64 ``np.exp`` and 2 of
NumPy's float32 SIMD ``exp``, which is itself up to 2 ulp off; the sweeps are in
``tests/backends/numba_cpu/kernels/test_math.py``), with NumPy's special values:
``exp(nan) = nan``, ``exp(+inf) = inf``, ``exp(-inf) = 0``, overflow to ``inf`` past
the largest finite result, gradual underflow to subnormals and then 0,
``exp(-0.0) = 1``.

``log`` (described above its kernel) is within 1 ulp for float64 and correctly rounded
for float32 on the sweeps; ``log(+-0) = -inf``, ``log(x < 0) = nan``,
``log(inf) = inf``; subnormal inputs are scaled by ``2**54`` first.

exp's method: ``x = k*ln2 + r`` with ``k = round(x/ln2)`` and ``|r| <= ln2/2``; ``ln2``
is split (Cody-Waite) into a high part with trailing zero bits, so ``k*ln2_hi`` and
``x - k*ln2_hi`` are exact, and a low part. ``exp(r)`` is a Taylor polynomial written as
``1 + r + r*r*q(r)`` (float32: a fitted polynomial one term shorter, in Horner form).
Polynomials and the reduction use fused multiply-adds where the CPU has them
(:func:`_fma`). ``2**k`` is applied as two factors ``2**k1`` and ``2**(k - k1)``,
``k1 = round(k/2)``, each built by shifting the biased exponent into place, so results
that overflow or fall into the subnormal range round once, in the final multiply.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from ..helper_jit import helper

__all__ = ["_exp_float32", "_exp_float64"]  # log's are added below


@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c``, fused into one instruction (one rounding) where the target has FMA
    (``llvm.fmuladd``: vectorisable; a multiply and an add elsewhere). Used for the
    kernels' polynomials and range reductions, where fusing only makes them more exact."""
    if not (a == b == c and a in (types.float32, types.float64)):
        return None

    def codegen(context, builder, sig, args):
        ty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fmuladd", [ty],
                                              ir.FunctionType(ty, [ty, ty, ty]))
        return builder.call(fn, args)

    return a(a, a, a), codegen


def _horner(z, c):
    """``c[0] z**n + c[1] z**(n-1) + ... + c[n]`` by Horner's rule with fused steps, for
    a tuple ``c`` of constants (written out term by term: a loop over the tuple would
    index it at run time, which LLVM does not always unroll, and the calling loop would
    not vectorise)."""


@overload(_horner)
def _horner_written_out(z, c):
    if not isinstance(c, types.UniTuple):
        return None
    steps = "".join(f"    p = _fma(p, z, c[{k}])\n" for k in range(1, c.count))
    scope = {"_fma": _fma}
    exec(f"def horner(z, c):\n    p = c[0]\n{steps}    return p\n", scope)  # noqa: S102
    return scope["horner"]


def _make_scale_bits(bits):
    """``scale(p, t, t1)``: ``p * 2**k``; ``t = k + SHIFTER + 2*bias``,
    ``t1 = k1 + SHIFTER + bias``.

    ``SHIFTER`` is ``1.5 * 2**mant``, so the low mantissa bits of ``t1`` hold ``k1`` plus
    the bias (plus ``2**(mant-1)``); shifting ``bits(t1)`` left by ``mant`` drops that
    offset and leaves the biased exponent of ``2**k1``; ``bits(t) - bits(t1)`` is
    ``k - k1 + bias``, the biased exponent of ``2**(k - k1)``. Only integer sub/shl and
    bitcasts: all have packed AVX2 forms for both widths (a float64 -> int64 conversion
    does not). The factor is applied as ``2**k1 * 2**(k - k1)`` so each half is a normal
    number and a result that overflows or falls into the subnormal range rounds once,
    in the second multiply.
    """
    fty = types.float32 if bits == 32 else types.float64
    mant = 23 if bits == 32 else 52

    @intrinsic
    def scale(typingctx, p, t, t1):
        if p != fty or t != fty or t1 != fty:
            return None

        def codegen(context, builder, sig, args):
            pv, tv, t1v = args
            ity = ir.IntType(bits)
            ti = builder.bitcast(tv, ity)
            t1i = builder.bitcast(t1v, ity)
            e1 = builder.shl(t1i, ity(mant))
            e2 = builder.shl(builder.sub(ti, t1i), ity(mant))
            fl = pv.type
            y = builder.fmul(pv, builder.bitcast(e1, fl))
            return builder.fmul(y, builder.bitcast(e2, fl))

        return fty(fty, fty, fty), codegen

    return scale


_scale_bits_f32 = _make_scale_bits(32)
_scale_bits_f64 = _make_scale_bits(64)


def _make_pow2_bits(bits):
    """``pow2(t1)``: ``2**k`` for ``t1 = k + SHIFTER + bias`` and a normal ``2**k``, by
    the first half of :func:`_make_scale_bits`'s construction (one shift and bitcasts)."""
    fty = types.float32 if bits == 32 else types.float64
    mant = 23 if bits == 32 else 52

    @intrinsic
    def pow2(typingctx, t1):
        if t1 != fty:
            return None

        def codegen(context, builder, sig, args):
            ity = ir.IntType(bits)
            e = builder.shl(builder.bitcast(args[0], ity), ity(mant))
            return builder.bitcast(e, args[0].type)

        return fty(fty), codegen

    return pow2


_pow2_bits_f32 = _make_pow2_bits(32)
_pow2_bits_f64 = _make_pow2_bits(64)

f32 = np.float32
f64 = np.float64

# float32: |k| <= 151 needs 8 bits; ln2_hi keeps 15 significant bits.
_F32_LOG2E = f32(1.4426950408889634)
_F32_LN2_HI = f32(0.693145751953125)           # 0x3f317200
_F32_LN2_LO = f32(1.4286068203094173e-06)      # ln2 - ln2_hi
_F32_SHIFTER = f32(12582912.0)                 # 1.5 * 2**23: adding it rounds to integer
_F32_SHIFT_K = f32(12582912.0 + 254.0)         # shifter + 2*bias (for t)
_F32_SHIFT_K1 = f32(12582912.0 + 127.0)        # shifter + bias (for t1)
_F32_LO = f32(-104.0)                          # exp(-104) < half the least subnormal
_F32_HI = f32(89.0)                            # exp(89) > FLT_MAX
_F32_ONE = f32(1.0)
_F32_HALF = f32(0.5)
_F32_C = tuple(f32(1.0 / c) for c in (2.0, 6.0, 24.0, 120.0, 720.0, 5040.0))
# exp(r) = 1 + r*(1 + r*(m2 + m3 r + ... + m6 r**4)) on |r| <= ln2/2: the least-squares
# fit of (expm1(r) - r) / r**2 at 2000 Chebyshev nodes (relative error 1.1e-8, a tenth
# of a float32 ulp), one term shorter than the Taylor polynomial of the same accuracy.
_F32_M = (f32(0.5), f32(0.16666576266288757), f32(0.04166646674275398),
          f32(0.008363175205886364), f32(0.0013933643931522965))

# float64: |k| <= 1077 needs 11 bits; ln2_hi keeps 32 significant bits (fdlibm's split).
_F64_LOG2E = f64(1.4426950408889634)
_F64_LN2_HI = f64(6.93147180369123816490e-01)  # 0x3fe62e42fee00000
_F64_LN2_LO = f64(1.90821492927058770002e-10)  # 0x3dea39ef35793c76
_F64_SHIFTER = f64(6755399441055744.0)         # 1.5 * 2**52
_F64_SHIFT_K = f64(6755399441055744.0 + 2046.0)
_F64_SHIFT_K1 = f64(6755399441055744.0 + 1023.0)
_F64_LO = f64(-746.0)
_F64_HI = f64(710.0)
_F64_ONE = f64(1.0)
_F64_HALF = f64(0.5)
_F64_C = tuple(f64(1.0 / float(np.prod(np.arange(1, n + 1, dtype=np.float64))))
               for n in range(2, 14))

# exp's polynomials for _horner (highest power first): q of p = 1 + r*q (float32, from
# _F32_M), q of p = 1 + r + r*r*q (float64, Taylor)
_EXP32_Q = tuple(reversed(_F32_M)) + (_F32_ONE,)
_EXP64_Q = tuple(reversed(_F64_C))


@helper
def _scale_f32(p, kf):
    """``p * 2**kf`` for an integral float32 ``kf`` in ``[-151, 128]``."""
    return _scale_bits_f32(p, kf + _F32_SHIFT_K, _fma(kf, _F32_HALF, _F32_SHIFT_K1))


@helper
def _scale_f64(p, kf):
    """``p * 2**kf`` for an integral float64 ``kf`` in ``[-1077, 1024]``."""
    return _scale_bits_f64(p, kf + _F64_SHIFT_K, _fma(kf, _F64_HALF, _F64_SHIFT_K1))


@helper
def _pow2_f32(kf):
    """``2**kf`` for an integral float32 ``kf`` in ``[-126, 127]`` (one factor: where
    ``p * 2**k`` cannot overflow or turn subnormal, cheaper than :func:`_scale_f32`)."""
    return _pow2_bits_f32(kf + _F32_SHIFT_K1)


@helper
def _pow2_f64(kf):
    """``2**kf`` for an integral float64 ``kf`` in ``[-1022, 1023]``."""
    return _pow2_bits_f64(kf + _F64_SHIFT_K1)


@helper
def _exp_float32(x):
    # The clamps are written so that a nan passes through them (``lo if lo > x else x``
    # is x for nan) and then through every later step, so no final select is needed.
    # Rounding uses rint, not the add-and-subtract-a-shifter trick, so the kernel stays
    # correct (if less exact) under fastmath, whose reassociation would cancel it.
    xc = _F32_LO if _F32_LO > x else x
    xc = _F32_HI if _F32_HI < xc else xc
    kf, p = _exp_parts_f32(xc)
    return _scale_f32(p, kf)


@helper
def _exp_parts_f32(xc):
    """``(k, p)`` with ``exp(xc) = 2**k * p``: ``k = round(xc / ln2)``, ``r = xc - k ln2``
    (two-part ln2), ``p = 1 + r*(1 + r*q(r))``, ``q`` the Horner sum of ``_F32_M``
    (``p`` in ``[sqrt(2)/2, sqrt(2)]``)."""
    kf = np.rint(xc * _F32_LOG2E)  # k = round(x / ln2), integral
    r = _fma(kf, -_F32_LN2_LO, _fma(kf, -_F32_LN2_HI, xc))
    return kf, _fma(_horner(r, _EXP32_Q), r, _F32_ONE)


@helper
def _exp_parts_f64(xc):
    """``(k, p)`` with ``exp(xc) = 2**k * p``: ``k = round(xc / ln2)``, ``r = xc - k ln2``
    (two-part ln2), ``p = 1 + (r + r*r*q(r))``, ``q`` the Horner sum of ``_F64_C``."""
    kf = np.rint(xc * _F64_LOG2E)  # k = round(x / ln2), integral
    r = _fma(kf, -_F64_LN2_LO, _fma(kf, -_F64_LN2_HI, xc))
    return kf, _F64_ONE + _fma(r * r, _horner(r, _EXP64_Q), r)


@helper
def _exp_float64(x):
    xc = _F64_LO if _F64_LO > x else x  # nan passes through (see _exp_float32)
    xc = _F64_HI if _F64_HI < xc else xc
    kf, p = _exp_parts_f64(xc)
    return _scale_f64(p, kf)


# ---------------------------------------------------------------------------------------
# log
#
# ``x = 2**k * m`` with ``m`` in ``[sqrt(2)/2, sqrt(2))``, taken from the bits: adding
# ``bits(1.0) - bits(sqrt(2)/2)`` carries into the exponent field exactly when the
# mantissa is at least sqrt(2)'s, so ``k`` is the (carried) exponent and the mantissa
# bits plus ``bits(sqrt(2)/2)`` are ``m``. With ``f = m - 1`` (exact) and
# ``s = f / (2 + f)``, ``log(1 + f) = 2*atanh(s) = f - f*f/2 + s*(f*f/2 + R)`` where
# ``R = sum 2 s**(2n) / (2n + 1)``; that form keeps the large terms exact.
# float32 computes in float64 and rounds once (same kernel, converted).
# ---------------------------------------------------------------------------------------
_LOG_OFF = 0x3FE6A09E667F3BCD          # bits(sqrt(2) / 2)
_LOG_ADD = 0x3FF0000000000000 - _LOG_OFF
_MANT_MASK = (1 << 52) - 1
_SHIFTER_BITS = 0x4338000000000000     # bits(1.5 * 2**52)


@intrinsic
def _log_mant_f64(typingctx, x):
    """``m`` of ``x = 2**k * m``, ``m`` in ``[sqrt(2)/2, sqrt(2))`` (x positive, normal)."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        t = builder.add(builder.bitcast(args[0], i64), i64(_LOG_ADD))
        mbits = builder.add(builder.and_(t, i64(_MANT_MASK)), i64(_LOG_OFF))
        return builder.bitcast(mbits, ir.DoubleType())

    return types.float64(types.float64), codegen


@intrinsic
def _log_exp_f64(typingctx, x):
    """``k + 1023 + 1.5 * 2**52`` (a float) for the ``k`` that goes with ``_log_mant_f64``.

    The integer exponent is added to the bits of ``1.5 * 2**52``; subtracting that
    constant (and the bias) in float arithmetic gives ``k`` without an int -> float
    conversion, which has no packed AVX2 form for 64-bit integers.
    """
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        t = builder.add(builder.bitcast(args[0], i64), i64(_LOG_ADD))
        e = builder.lshr(t, i64(52))
        return builder.bitcast(builder.add(e, i64(_SHIFTER_BITS)), ir.DoubleType())

    return types.float64(types.float64), codegen


_LOG_K0 = f64(6755399441055744.0 + 1023.0)     # 1.5 * 2**52 + bias
_TWO54 = f64(2.0 ** 54)
_TINY64 = f64(np.finfo(np.float64).tiny)
_INF64 = f64(np.inf)
_NAN64 = f64(np.nan)
_ZERO64 = f64(0.0)
_TWO64 = f64(2.0)
_F64_HALF_ = f64(0.5)
# R / z: 2 / (2n + 1) for n = 11 ... 1 (highest power first)
_LOG_R = tuple(f64(2.0 / (2 * n + 1)) for n in reversed(range(1, 12)))


@helper
def _log_float64(x):
    sub = x < _TINY64  # subnormal (or zero, negative: replaced below)
    xs = x * _TWO54 if sub else x
    m = _log_mant_f64(xs)
    kf = (_log_exp_f64(xs) - _LOG_K0) - (_F64_SUB if sub else _ZERO64)  # both exact
    f = m - _F64_ONE
    s = f / (_TWO64 + f)
    z = s * s
    r = _horner(z, _LOG_R) * z
    hfsq = _F64_HALF_ * f * f
    y = kf * _F64_LN2_HI + (f - (hfsq - (s * (hfsq + r) + kf * _F64_LN2_LO)))
    y = -_INF64 if x == _ZERO64 else y
    y = _NAN64 if x < _ZERO64 else y
    return y if x < _INF64 else x


_F64_SUB = f64(54.0)


@helper
def _log_float32(x):
    return np.float32(_log_float64(np.float64(x)))


__all__ += ["_log_float32", "_log_float64"]
