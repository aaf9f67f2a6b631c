"""Comparisons the generated ``sort`` loops call (see :mod:`.lower_sort`): NumPy's
sort order, inlined into each kernel by LLVM (:mod:`.helper_jit`); and the per-row
selection ``top_k`` calls."""

from __future__ import annotations

import numba
import numpy as np

from ..helper_jit import disk_cached, helper, read_only_inputs

__all__ = ["_sort_lt_float", "_sort_lt_complex", "_top_k_rows"]


@helper
def _sort_lt_float(a, b):
    """``a`` before ``b``: NaN after every number; ``-0.0 == 0.0``."""
    return a < b or (b != b and a == a)


@helper
def _sort_lt_complex(a, b):
    """NumPy's complex order: by real part, then imaginary part; an element with a NaN
    part sorts after every element without one."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    if ar < br:
        return ai == ai or bi != bi
    if ar > br:
        return bi != bi and ai == ai
    if ar == br or (ar != ar and br != br):
        return ai < bi or (bi != bi and ai == ai)
    return br != br


@disk_cached
@numba.njit(cache=False)
def _top_k_sift(hk, hi, size, pos):
    """Restore the heap below ``pos``: every parent ranks at or below its children
    (the root is the lowest-ranked entry kept). An entry ranks lower for a smaller
    key, or an equal key at a larger index."""
    while True:
        c = 2 * pos + 1
        if c >= size:
            return
        if c + 1 < size and (hk[c + 1] < hk[c] or (hk[c + 1] == hk[c] and hi[c + 1] > hi[c])):
            c += 1
        if hk[pos] < hk[c] or (hk[pos] == hk[c] and hi[pos] > hi[c]):
            return
        hk[pos], hk[c] = hk[c], hk[pos]
        hi[pos], hi[c] = hi[c], hi[pos]
        pos = c


@read_only_inputs(0, 1)
@disk_cached
@numba.njit(cache=False)
def _top_k_rows(x, keys, flip, neg_mask, vals, idx):
    """``top_k`` of every row of the 2-D ``x`` into ``vals``/``idx`` (rows × k).

    ``keys`` holds the rows' order as integers: ``x`` itself for integers, its bits
    for floats. A key ``b`` (read as int64) ranks as ``b ^ flip``, and a negative one
    of those as ``b ^ flip ^ neg_mask``: ``neg_mask`` turns float bits into IEEE total
    order (0 for integers), ``flip`` (the sign bit, for uint64 only) turns unsigned
    order into signed. A heap of the ``k`` best entries seen so
    far is kept per row: an entry joins only if it beats the lowest-ranked one, so a
    row costs one comparison per element plus O(log k) per entry that joins, not a
    sort. Entries are scanned by increasing index, so an equal key never displaces
    one already kept (ties keep the lower index, as JAX does)."""
    rows, n = keys.shape
    k = idx.shape[1]
    if k == 0:
        return
    hk = np.empty(k, np.int64)
    hi = np.empty(k, np.int64)
    for r in range(rows):
        for j in range(k):
            b = np.int64(keys[r, j]) ^ flip
            hk[j] = b ^ neg_mask if b < 0 else b
            hi[j] = j
        for j in range(k // 2 - 1, -1, -1):
            _top_k_sift(hk, hi, k, j)
        low = hk[0]
        for j in range(k, n):
            b = np.int64(keys[r, j]) ^ flip
            if b < 0:
                b ^= neg_mask
            if b > low:
                hk[0] = b
                hi[0] = j
                _top_k_sift(hk, hi, k, np.int64(0))
                low = hk[0]
        # Heap sort: the lowest-ranked entry goes last, and so on, leaving the best first.
        for size in range(k - 1, 0, -1):
            hk[0], hk[size] = hk[size], hk[0]
            hi[0], hi[size] = hi[size], hi[0]
            _top_k_sift(hk, hi, size, np.int64(0))
        for j in range(k):
            idx[r, j] = hi[j]
            vals[r, j] = x[r, hi[j]]
