"""``|x| * 2/pi`` modulo 4 for any float32 ``x``, in integer arithmetic without table
lookups (so without vector gathers, which cost as much as the rest of ``sin``).

``x = M * 2**(e - 23)`` with the 24-bit integer ``M``. The bits of ``2/pi`` at positions
``j <= e - 25`` (weight ``2**-j``) only add multiples of 4 to ``x * 2/pi``; the next 104
bits, cut into integers ``N0`` (26 bits), ``N1`` (26) and ``N2`` (52), give

    x * 2/pi = M*N0 * 2**-24 + M*N1 * 2**-50 + M*N2 * 2**-102 + (below 2**-77)  (mod 4)

whatever ``e`` is. So ``S = (M*N0 mod 2**26) * 2**26 + M*N1`` is ``x * 2/pi mod 4`` (up to
the small third term) in units of ``2**-50``, exactly, in a 64-bit integer;
``K = round(S / 2**50)`` and ``F = S - K * 2**50`` are the quadrant and the fraction.
The 104 bits are cut out of the first 256 bits of ``2/pi`` (four 64-bit constants,
with a zero word in front for ``e < 25``) by selects and variable shifts.

The closest float32 to a multiple of pi/2 leaves ``|f| ~ 2**-29.9`` quarter turns
(found by sweeping every float32), so the ``2**-77`` truncation is ``2**-47`` relative.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .trig_tables import two_over_pi_words

__all__ = ["_reduce_bits_f32"]

_WORDS = [0] + two_over_pi_words(4)  # virtual word 0 holds the zero bits j <= 0
_MAGIC = 0x4338000000000000            # bits of 1.5 * 2**52 (signed, |v| < 2**51)
_MAGIC_F = 6755399441055744.0
_MAGIC_U = 0x4330000000000000          # bits of 2**52 (unsigned, v < 2**52)
_MAGIC_UF = 4503599627370496.0


@intrinsic
def _reduce_bits_f32(typingctx, x):
    """``(q, f)`` for float32 ``x`` (normal, ``|x| >= pi/4``): ``|x| * 2/pi = 4 m + q + f``,
    ``q`` in 0..3 and ``|f| <= 1/2`` as float64. Other ``x`` give some finite pair."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        i32, i64, f64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()
        bits = builder.zext(builder.bitcast(args[0], i32), i64)
        e = builder.sub(builder.and_(builder.lshr(bits, i64(23)), i64(0xFF)), i64(127))
        e = builder.select(builder.icmp_signed("<", e, i64(-1)), i64(-1), e)
        m = builder.or_(builder.and_(bits, i64(0x7FFFFF)), i64(0x800000))
        p = builder.add(e, i64(64 - 25))          # first bit wanted, counting word 0
        wi = builder.lshr(p, i64(6))
        sh = builder.and_(p, i64(63))
        rsh = builder.sub(i64(63), sh)

        def word(offset):
            """``_WORDS[wi + offset]`` for wi in 0..2."""
            w = [i64(_WORDS[k + offset]) for k in range(3)]
            return builder.select(builder.icmp_unsigned("==", wi, i64(0)), w[0],
                                  builder.select(builder.icmp_unsigned("==", wi, i64(1)),
                                                 w[1], w[2]))

        def window(hi, lo):
            """64 bits starting ``sh`` bits into ``hi``, continued from ``lo``."""
            return builder.or_(builder.shl(hi, sh),
                               builder.lshr(builder.lshr(lo, i64(1)), rsh))

        w0, w1, w2 = word(0), word(1), word(2)
        g, g2 = window(w0, w1), window(w1, w2)
        mask26 = i64((1 << 26) - 1)
        n0 = builder.lshr(g, i64(38))
        n1 = builder.and_(builder.lshr(g, i64(12)), mask26)
        n2 = builder.or_(builder.shl(builder.and_(g, i64(0xFFF)), i64(40)),
                         builder.lshr(g2, i64(24)))
        s = builder.add(builder.shl(builder.and_(builder.mul(m, n0), mask26), i64(26)),
                        builder.mul(m, n1))
        k = builder.lshr(builder.add(s, i64(1 << 49)), i64(50))
        frac = builder.sub(s, builder.shl(k, i64(50)))   # in [-2**49, 2**49)

        def to_float(v, signed):
            """An integer ``0 <= v < 2**52`` (``signed``: ``|v| < 2**51``) as a float64:
            integer add/or, bitcast, float subtract (vectorisable where a 64-bit int to
            float conversion is not)."""
            magic = _MAGIC if signed else _MAGIC_U
            t = builder.add(v, i64(magic)) if signed else builder.or_(v, i64(magic))
            return builder.fsub(builder.bitcast(t, f64),
                                ir.Constant(f64, _MAGIC_F if signed else _MAGIC_UF))

        q = to_float(builder.and_(k, i64(3)), False)
        tail = builder.fmul(builder.fmul(to_float(m, False), to_float(n2, False)),
                            ir.Constant(f64, 2.0 ** -102))
        f = builder.fadd(builder.fmul(to_float(frac, True), ir.Constant(f64, 2.0 ** -50)),
                         tail)
        return context.make_tuple(builder, sig.return_type, [q, f])

    return types.UniTuple(types.float64, 2)(x), codegen
