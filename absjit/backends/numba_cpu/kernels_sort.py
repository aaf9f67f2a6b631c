"""Comparisons the generated ``sort`` loops call (see :mod:`.lower_sort`): NumPy's
sort order, inlined into each kernel."""
from __future__ import annotations

import numba

__all__ = ["_sort_lt_float", "_sort_lt_complex"]


@numba.njit(inline="always", cache=False)
def _sort_lt_float(a, b):
    """``a`` before ``b``: NaN after every number; ``-0.0 == 0.0``."""
    return a < b or (b != b and a == a)


@numba.njit(inline="always", cache=False)
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
