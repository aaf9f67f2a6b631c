"""FFTs compiled into kernels, for ``fft`` inside loop and branch bodies (at a program's
top level DUCC's threaded transforms run between pieces instead, see
:func:`.backend._host_fft`).

One complex transform of length ``n`` along the middle axis of an ``(outer, n, inner)``
array: an iterative radix-2 transform where ``n`` is a power of two, Bluestein's chirp-z
algorithm (three power-of-two transforms of length >= 2n - 1) otherwise. Arithmetic is
complex128 whatever the operand's width, twiddles are computed directly (not by
recurrence), so float32 results are correctly rounded to within an ulp or two of
pocketfft's and float64 ones agree to ~1e-15 relative to the largest coefficient.

Real transforms reuse it: ``RFFT`` transforms the real line as complex and keeps the
``n // 2 + 1`` non-negative frequencies; ``IRFFT`` extends the half spectrum by Hermitian
symmetry and keeps the real part (so, as in pocketfft, the imaginary parts of the zero
and Nyquist frequencies are ignored).
"""
from __future__ import annotations

import numba
import numpy as np

from ..helper_jit import disk_cached

__all__ = ["_fft_c2c_axis", "_fft_r2c_last", "_fft_c2r_last"]


@disk_cached
@numba.njit(cache=False, error_model="numpy")
def _radix2(a, inverse):
    """In-place radix-2 transform of the complex128 vector ``a`` (length a power of 2),
    unnormalised; ``inverse`` uses the positive exponent."""
    n = a.shape[0]
    j = 0
    for i in range(1, n):          # bit-reversal permutation
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            a[i], a[j] = a[j], a[i]
    sign = 1.0 if inverse else -1.0
    size = 2
    while size <= n:
        half = size >> 1
        for k in range(half):
            ang = sign * 2.0 * np.pi * k / size
            w = complex(np.cos(ang), np.sin(ang))
            for start in range(0, n, size):
                u = a[start + k]
                v = a[start + k + half] * w
                a[start + k] = u + v
                a[start + k + half] = u - v
        size <<= 1


@disk_cached
@numba.njit(cache=False, error_model="numpy")
def _transform_line(line, inverse, chirp, bfilt, work):
    """Unnormalised DFT of the complex128 vector ``line`` in place. ``chirp``, ``bfilt``
    and ``work`` are Bluestein's tables and scratch (unused when the length is a power
    of two)."""
    n = line.shape[0]
    if n & (n - 1) == 0:
        _radix2(line, inverse)
        return
    m = work.shape[0]
    for i in range(n):
        work[i] = line[i] * chirp[i]
    for i in range(n, m):
        work[i] = 0
    _radix2(work, False)
    for i in range(m):
        work[i] *= bfilt[i]
    _radix2(work, True)
    for i in range(n):
        line[i] = work[i] * chirp[i] / m


@disk_cached
@numba.njit(cache=False, error_model="numpy")
def _bluestein_tables(n, inverse):
    """``(chirp, bfilt, work)`` for length ``n``: the chirp ``exp(-+i pi k^2 / n)``, the
    transform of its conjugate padded to a power of two ``m >= 2n - 1``, and scratch."""
    m = 1
    while m < 2 * n - 1:
        m <<= 1
    if n & (n - 1) == 0:
        m = 1
    chirp = np.empty(n, np.complex128)
    bfilt = np.zeros(m, np.complex128)
    sign = 1.0 if inverse else -1.0
    for k in range(n):
        # k^2 mod 2n keeps the angle small (exact integers), so large k stay accurate.
        ang = sign * np.pi * ((k * k) % (2 * n)) / n
        chirp[k] = complex(np.cos(ang), np.sin(ang))
    if m > 1:
        bfilt[0] = np.conj(chirp[0])
        for k in range(1, n):
            bfilt[k] = np.conj(chirp[k])
            bfilt[m - k] = np.conj(chirp[k])
        _radix2(bfilt, False)
    return chirp, bfilt, np.empty(m, np.complex128)


@disk_cached
@numba.njit(cache=False, error_model="numpy")
def _fft_c2c_axis(x, out, inverse):
    """``out`` = the transform of ``x`` along the middle axis of ``(outer, n, inner)``
    complex arrays (``x`` may be ``out``); the inverse is divided by ``n``."""
    outer, n, inner = x.shape
    if n == 0:
        return
    chirp, bfilt, work = _bluestein_tables(n, inverse)
    line = np.empty(n, np.complex128)
    scale = 1.0 / n if inverse else 1.0
    for o in range(outer):
        for i in range(inner):
            for k in range(n):
                line[k] = x[o, k, i]
            _transform_line(line, inverse, chirp, bfilt, work)
            for k in range(n):
                out[o, k, i] = line[k] * scale


@disk_cached
@numba.njit(cache=False, error_model="numpy")
def _fft_r2c_last(x, out):
    """``out`` (rows, n // 2 + 1) = the non-negative frequencies of the transform of
    each real row of ``x`` (rows, n)."""
    rows, n = x.shape
    if n == 0:
        return
    chirp, bfilt, work = _bluestein_tables(n, False)
    line = np.empty(n, np.complex128)
    for r in range(rows):
        for k in range(n):
            line[k] = x[r, k]
        _transform_line(line, False, chirp, bfilt, work)
        for k in range(out.shape[1]):
            out[r, k] = line[k]


@disk_cached
@numba.njit(cache=False, error_model="numpy")
def _fft_c2r_last(x, out):
    """``out`` (rows, n) = the real inverse transform (divided by ``n``) of each row of
    ``x`` (rows, n // 2 + 1), a Hermitian spectrum's non-negative half."""
    rows, n = out.shape
    if n == 0:
        return
    chirp, bfilt, work = _bluestein_tables(n, True)
    line = np.empty(n, np.complex128)
    half = x.shape[1]
    for r in range(rows):
        for k in range(half):
            line[k] = x[r, k]
        for k in range(half, n):
            line[k] = np.conj(x[r, n - k])
        _transform_line(line, True, chirp, bfilt, work)
        for k in range(n):
            out[r, k] = line[k].real / n
