"""Constants of the ``sin``/``cos``/``tan`` kernels (:mod:`.kernels_trig`), derived at
import from ``2/pi`` and ``pi/2`` computed in exact integer arithmetic.

The argument reduction for large arguments needs the bits of ``2/pi`` far beyond a
float64: a float64 ``x`` near ``2**1023`` times ``2/pi`` modulo 4 depends on the bits of
``2/pi`` around position 1023 and the ~170 after it. The float64 table holds, for every
binary exponent ``e`` of the argument, the few chunks of ``2/pi`` that matter for it
(the earlier bits only add multiples of 4 to ``x * 2/pi``; later ones are below the
precision needed), each chunk short enough that its product with one half of the
argument is exact in float64. float32 needs only the first 256 bits
(:mod:`.trig_reduce32`).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["TWO_OVER_PI_BITS", "two_over_pi_bits", "two_over_pi_words", "pio2_parts",
           "table_f64", "F64_E_MIN", "F64_CHUNKS", "F64_WORDS"]

_PREC = 1400  # bits of 2/pi kept: enough for float64's largest exponent plus ~180


def _atan_inv(n: int, bits: int) -> int:
    """``atan(1/n) * 2**bits`` (truncated) by its Taylor series in integers."""
    total, term, k, n2 = 0, (1 << bits) // n, 0, n * n
    while term:
        total += term // (2 * k + 1) if k % 2 == 0 else -(term // (2 * k + 1))
        term //= n2
        k += 1
    return total


def _pi_fixed(bits: int) -> int:
    """``floor(pi * 2**bits)`` within a few units (Machin's formula, 64 guard bits)."""
    g = bits + 64
    return (16 * _atan_inv(5, g) - 4 * _atan_inv(239, g)) >> 64


_PI = _pi_fixed(_PREC + 8)                     # pi * 2**(_PREC + 8)
# 2/pi * 2**_PREC = 2**(2*_PREC + 9) / (pi * 2**(_PREC + 8)); the error of the last
# few bits is far below what any chunk uses.
TWO_OVER_PI_BITS = (1 << (2 * _PREC + 9)) // _PI


def two_over_pi_bits(lo: int, hi: int) -> int:
    """The bits of ``2/pi`` with weights ``2**-j`` for ``lo < j <= hi`` as an integer (the
    bit of weight ``2**-hi`` is its lowest). Bit positions below 1 (``j <= 0``) are zero."""
    lo, hi = max(lo, 0), max(hi, 0)
    if hi <= lo:
        return 0
    return (TWO_OVER_PI_BITS >> (_PREC - hi)) & ((1 << (hi - lo)) - 1)


def pio2_parts(widths) -> list:
    """``pi/2`` split into floats ``p0 + p1 + …`` of ``widths`` significant bits each."""
    pio2 = _PI  # pi/2 * 2**(_PREC + 9)
    scale = _PREC + 9
    parts, rest = [], pio2
    for w in widths:
        top = rest.bit_length()
        v = rest >> (top - w) << (top - w)       # the leading ``w`` bits
        parts.append(math.ldexp(v >> (top - w), top - w - scale))
        rest -= v
    return parts


def two_over_pi_words(n: int) -> list:
    """The first ``64 * n`` bits of ``2/pi`` (weights ``2**-1`` on) as ``n`` 64-bit words."""
    top = TWO_OVER_PI_BITS >> (_PREC - 64 * n)
    return [(top >> (64 * (n - 1 - i))) & ((1 << 64) - 1) for i in range(n)]


# float64 arguments of exponent e >= F64_E_MIN: a = M * 2**(e - 52), M = Mh * 2**26 + Ml
# (Mh 27 bits, Ml 26). Chunk i holds the 26 bits of 2/pi at
# e - 54 + 26 i < j <= e - 54 + 26 (i + 1) as an integer N_i; then
#   (Mh * 2**(e-26)) * chunk_i = Mh * N_i * 2**(2 - 26 i)
#   (Ml * 2**(e-52)) * chunk_i = Ml * N_i * 2**(-24 - 26 i)
# whatever e is: exact float64 products of (4 Mh) or (Ml * 2**-24) with N_i * 2**(-26 i).
F64_E_MIN = 20
F64_CHUNKS = 7
F64_WORDS = 4                           # two 26-bit chunks per 64-bit word


def table_f64() -> np.ndarray:
    """``(e - F64_E_MIN) * F64_WORDS + w`` -> ``N_{2w} * 2**26 + N_{2w+1}`` (``N_7 = 0``)
    for exponent ``e`` (up to 1024, the exponent of inf and NaN, whose row is unused)."""
    rows = []
    for e in range(F64_E_MIN, 1025):
        lo = e - 54
        n = [two_over_pi_bits(lo + 26 * i, lo + 26 * (i + 1))
             for i in range(F64_CHUNKS)] + [0]
        rows.append([(n[2 * w] << 26) | n[2 * w + 1] for w in range(F64_WORDS)])
    return np.array(rows, np.int64).ravel()
