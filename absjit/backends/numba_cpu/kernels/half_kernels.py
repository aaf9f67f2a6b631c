"""Conversions between float32/float64 and the 16-bit float formats, for kernels that
hold float16 and bfloat16 arrays as their ``uint16`` bit patterns (:mod:`.half`).

Numba has no 16-bit float type, so a kernel loads the bits, widens them to float32,
computes in float32 and narrows the result back. Every helper here is exact where the
conversion is exact and rounds to nearest, ties to even, where it is not:

``_f16_to_f32_native`` / ``_f32_to_f16_native``
    LLVM's ``fpext half`` / ``fptrunc float to half`` on the bits: one packed
    ``vcvtph2ps``/``vcvtps2ph`` instruction per 8 or 16 elements on x86 with F16C (and
    ``fcvt`` on AArch64). Used where the target CPU has them (:data:`NATIVE_HALF`);
    elsewhere LLVM would call a runtime library function the JIT may not link.
``_f16_to_f32_soft`` / ``_f32_to_f16_soft``
    The same conversions with integer operations only: subnormals, infinities, overflow
    to ``inf`` from 65520 up and ``-0.0`` exactly as NumPy's ``astype``.
``_f64_to_f16_{native,soft}``
    float64 to float16 with one rounding, as NumPy's ``astype``: the value is first
    rounded to float32 *to odd* (inexact results get the last bit set), which float32's
    13 extra bits make free of double-rounding errors.
``_bf16_to_f32`` / ``_f32_to_bf16`` / ``_f64_to_bf16``
    bfloat16 is the top half of a float32: widening is a shift, narrowing rounds the
    low 16 bits away. float64 goes through float32 first, as ml_dtypes' ``astype`` does.
``_nextafter_f16_*`` / ``_nextafter_bf16``
    ``nextafter`` in the 16-bit format (a float32 ``nextafter`` would round back).

NaN stays NaN with its sign and the top of its payload; a signalling NaN becomes quiet
(the hardware conversion does that), which no arithmetic can tell apart.
"""
from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..helper_jit import helper

__all__ = ["NATIVE_HALF", "_f16_to_f32_native", "_f32_to_f16_native", "_f64_to_f16_native",
           "_f16_to_f32_soft", "_f32_to_f16_soft", "_f64_to_f16_soft", "_bf16_to_f32",
           "_f32_to_bf16", "_f64_to_bf16", "_nextafter_f16_native", "_nextafter_f16_soft",
           "_nextafter_bf16"]


def _native_half() -> bool:
    """Whether LLVM converts half <-> float inline for the CPU Numba compiles for."""
    from llvmlite import binding
    from numba.core import config
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return True
    if machine not in ("x86_64", "amd64"):
        return False
    features = config.CPU_FEATURES
    if features is None:
        if config.CPU_NAME not in (None, "host"):
            return False  # a named (portable) CPU: its feature set is not known here
        try:
            features = binding.get_host_cpu_features().flatten()
        except Exception:  # noqa: BLE001 - not every platform reports features
            return False
    return "+f16c" in features.split(",")


NATIVE_HALF = _native_half()

# -- bit casts -------------------------------------------------------------------------
@intrinsic
def _f32_bits(typingctx, f):
    if f != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def _bits_f32(typingctx, u):
    """The float32 with the low 32 bits of the integer ``u`` (Numba widens ``uint32``
    arithmetic to 64 bits)."""
    if not isinstance(u, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        bits = context.cast(builder, args[0], sig.args[0], types.uint32)
        return builder.bitcast(bits, ir.FloatType())
    return types.float32(u), codegen


# -- float16 through LLVM's half type ---------------------------------------------------
@intrinsic
def _f16_to_f32_native(typingctx, u):
    if u != types.uint16:
        return None

    def codegen(context, builder, sig, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
    return types.float32(types.uint16), codegen


@intrinsic
def _f32_to_f16_native(typingctx, f):
    if f != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
    return types.uint16(types.float32), codegen


# -- float16 with integer operations --------------------------------------------------
_TWO_M24 = np.float32(2.0 ** -24)  # the smallest float16 subnormal
_TWO_24 = np.float32(2.0 ** 24)


@helper
def _f16_to_f32_soft(h):
    u = np.uint32(h)
    sign = (u & np.uint32(0x8000)) << np.uint32(16)
    e = (u >> np.uint32(10)) & np.uint32(0x1F)
    m = u & np.uint32(0x3FF)
    if e == np.uint32(0):  # zero or subnormal: m * 2**-24, exact in float32
        mag = np.float32(m) * _TWO_M24
        return -mag if sign else mag
    if e == np.uint32(0x1F):
        return _bits_f32(sign | np.uint32(0x7F800000) | (m << np.uint32(13)))
    return _bits_f32(sign | ((e + np.uint32(112)) << np.uint32(23)) | (m << np.uint32(13)))


@helper
def _f32_to_f16_soft(f):
    u = _f32_bits(f)
    sign = (u >> np.uint32(16)) & np.uint32(0x8000)
    a = u & np.uint32(0x7FFFFFFF)
    if a > np.uint32(0x7F800000):  # NaN: quiet, top of the payload kept
        return np.uint16(sign | np.uint32(0x7E00) | ((a >> np.uint32(13)) & np.uint32(0x3FF)))
    if a >= np.uint32(0x477FF000):  # |f| >= 65520 (or inf) rounds to inf
        return np.uint16(sign | np.uint32(0x7C00))
    if a < np.uint32(0x38800000):  # below 2**-14: a subnormal (or zero) result
        # |f| * 2**24 is exact; rint rounds it to the subnormal's integer mantissa
        # (1024 is the bit pattern of the smallest normal, also right).
        m = np.rint(_bits_f32(a) * _TWO_24)
        return np.uint16(sign | np.uint32(m))
    # Round the 13 dropped mantissa bits to nearest even, then rebias the exponent.
    r = a + np.uint32(0xFFF) + ((a >> np.uint32(13)) & np.uint32(1))
    return np.uint16(sign | ((r - np.uint32(0x38000000)) >> np.uint32(13)))


@helper
def _f64_to_f32_odd(d):
    """``d`` rounded to float32 with round-to-odd: inexact results have the last bit
    set, so a second rounding to fewer bits is as if done once."""
    f = np.float32(d)
    if np.float64(f) != d and d == d and abs(f) != np.inf:
        u = _f32_bits(f)
        if (u & np.uint32(1)) == np.uint32(0):
            if abs(np.float64(f)) > abs(d):
                u -= np.uint32(1)
            else:
                u += np.uint32(1)
            f = _bits_f32(u)
    return f


@helper
def _f64_to_f16_native(d):
    return _f32_to_f16_native(_f64_to_f32_odd(d))


@helper
def _f64_to_f16_soft(d):
    return _f32_to_f16_soft(_f64_to_f32_odd(d))


# -- bfloat16 ----------------------------------------------------------------------------
@helper
def _bf16_to_f32(h):
    return _bits_f32(np.uint32(h) << np.uint32(16))


@helper
def _f32_to_bf16(f):
    u = _f32_bits(f)
    if f != f:  # NaN: quiet, sign kept
        return np.uint16((u >> np.uint32(16)) | np.uint32(0x40))
    return np.uint16((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))
                     >> np.uint32(16))


@helper
def _f64_to_bf16(d):
    # Through float32 rounded to odd: one correct rounding, never two (ml_dtypes before
    # 0.7 rounds twice, through float32 to nearest even).
    return _f32_to_bf16(_f64_to_f32_odd(d))


# -- nextafter in 16 bits ------------------------------------------------------------
def _make_nextafter(to_f32, to_bits):
    @helper
    def nextafter(x, y):
        # x and y are float32 values of the 16-bit format (exactly representable).
        if x != x or y != y:
            return x + y
        if x == y:
            return y
        if x == np.float32(0):
            tiny = to_f32(np.uint16(1))
            return tiny if y > x else -tiny
        u = to_bits(x)
        if (x < y) == (x > np.float32(0)):
            u = np.uint16(u + np.uint16(1))
        else:
            u = np.uint16(u - np.uint16(1))
        return to_f32(u)
    return nextafter


_nextafter_f16_native = _make_nextafter(_f16_to_f32_native, _f32_to_f16_native)
_nextafter_f16_soft = _make_nextafter(_f16_to_f32_soft, _f32_to_f16_soft)
_nextafter_bf16 = _make_nextafter(_bf16_to_f32, _f32_to_bf16)
