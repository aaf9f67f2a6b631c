"""LAPACK and BLAS called from compiled kernels: ``lu`` (``?getrf``), ``cholesky``
(``?potrf``) and ``triangular_solve`` (``?trsm``) for float32/float64, one call per
matrix of a stack, in a compiled loop (no object mode, so they run inside loop bodies).

The kernels call SciPy's routines by symbol name (``absjit_sgetrf`` …, Numba
``ExternalFunction``s), bound to this process's addresses by
:func:`.lapack_symbols.ensure_symbols` before a kernel using them is compiled or loaded.

Layout: LAPACK is column-major. ``trsm`` works on the C arrays as they are (a C matrix
is its transpose in Fortran order, so the side and triangle flip); ``getrf`` and
``potrf`` factor a transposed copy, which costs O(n^2) beside their O(n^3).
"""
from __future__ import annotations

import numba
import numpy as np
from numba.core import types

from .lapack_symbols import ROUTINES

__all__ = ["_lapack_lu", "_lapack_cholesky", "_blas_trsm"]

# Pointers are passed as ``arr.ctypes`` (converted to void*): that object holds a
# reference to the array for the duration of the call, so no buffer can be freed early.
_P = types.voidptr
_EXTERNAL = {}
for _name, (_mod, _nargs) in ROUTINES.items():
    for _p in "sd":
        _EXTERNAL[_p + _name] = types.ExternalFunction(f"absjit_{_p}{_name}",
                                                       types.void(*([_P] * _nargs)))
_sgetrf, _dgetrf = _EXTERNAL["sgetrf"], _EXTERNAL["dgetrf"]
_spotrf, _dpotrf = _EXTERNAL["spotrf"], _EXTERNAL["dpotrf"]
_strsm, _dtrsm = _EXTERNAL["strsm"], _EXTERNAL["dtrsm"]


@numba.njit(cache=False)
def _lapack_lu(x, lu, piv, perm):
    """LU with partial pivoting of each (m, n) matrix of ``x`` (B, m, n): ``lu`` holds L
    below the diagonal (unit diagonal implied) and U on and above it, ``piv`` the 0-based
    row swaps, ``perm`` the permutation they make. A singular matrix is factored anyway
    (zeros on U's diagonal), NaN propagates: no exception, as in JAX."""
    nb, m, n = x.shape
    k = min(m, n)
    buf = np.empty((n, m), x.dtype)  # Fortran order: buf[j, i] is element (i, j)
    ints = np.empty(4, np.int32)
    ipiv = np.empty(max(k, 1), np.int32)
    for b in range(nb):
        for i in range(m):
            for j in range(n):
                buf[j, i] = x[b, i, j]
        ints[0] = m
        ints[1] = n
        ints[2] = max(m, 1)
        if x.itemsize == 4:
            _sgetrf(ints[0:].ctypes, ints[1:].ctypes, buf.ctypes, ints[2:].ctypes,
                    ipiv.ctypes, ints[3:].ctypes)
        else:
            _dgetrf(ints[0:].ctypes, ints[1:].ctypes, buf.ctypes, ints[2:].ctypes,
                    ipiv.ctypes, ints[3:].ctypes)
        for i in range(m):
            for j in range(n):
                lu[b, i, j] = buf[j, i]
            perm[b, i] = i
        for i in range(k):
            p = ipiv[i] - 1
            piv[b, i] = p
            perm[b, i], perm[b, p] = perm[b, p], perm[b, i]


@numba.njit(cache=False)
def _lapack_cholesky(x, out):
    """Lower Cholesky factor of each (n, n) matrix of ``x`` (B, n, n), reading its lower
    triangle; zeros above the diagonal. A matrix that is not positive definite (or holds
    NaN) gives NaN in the lower triangle, as in JAX."""
    nb, n, _ = x.shape
    buf = np.empty((n, n), x.dtype)
    ints = np.empty(3, np.int32)
    uplo = np.empty(1, np.uint8)
    uplo[0] = 76  # 'L'
    for b in range(nb):
        for i in range(n):
            for j in range(i + 1):
                buf[j, i] = x[b, i, j]
        ints[0] = n
        ints[1] = max(n, 1)
        if x.itemsize == 4:
            _spotrf(uplo.ctypes, ints[0:].ctypes, buf.ctypes, ints[1:].ctypes,
                    ints[2:].ctypes)
        else:
            _dpotrf(uplo.ctypes, ints[0:].ctypes, buf.ctypes, ints[1:].ctypes,
                    ints[2:].ctypes)
        bad = ints[2] != 0
        for i in range(n):
            for j in range(n):
                if j > i:
                    out[b, i, j] = 0
                elif bad:
                    out[b, i, j] = np.nan
                else:
                    out[b, i, j] = buf[j, i]


@numba.njit(cache=False)
def _blas_trsm(a, rhs, out, left_side, lower, transpose_a, unit_diagonal):
    """Solve ``op(a) x = rhs`` (``left_side``) or ``x op(a) = rhs`` for each triangular
    (k, k) matrix of ``a`` (B, k, k) and (m, n) matrix of ``rhs``, into ``out``. A zero
    on the diagonal gives inf/NaN, not an error.

    Fortran sees each C matrix transposed: ``op(A) X = B`` is ``X^T op(A)^T = B^T``, so
    the side and the triangle flip and the transpose flag stays."""
    nb, m, n = rhs.shape
    k = a.shape[1]
    for b in range(nb):
        for i in range(m):
            for j in range(n):
                out[b, i, j] = rhs[b, i, j]
    if m == 0 or n == 0:
        return
    chars = np.empty(4, np.uint8)
    chars[0] = 82 if left_side else 76       # side: 'R' / 'L'
    chars[1] = 85 if lower else 76           # uplo: 'U' / 'L'
    chars[2] = 84 if transpose_a else 78     # transa: 'T' / 'N'
    chars[3] = 85 if unit_diagonal else 78   # diag: 'U' / 'N'
    ints = np.empty(4, np.int32)
    ints[0] = n
    ints[1] = m
    ints[2] = max(k, 1)
    ints[3] = max(n, 1)
    alpha = np.ones(1, out.dtype)
    for b in range(nb):
        ab = a[b]
        ob = out[b]
        if out.itemsize == 4:
            _strsm(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, chars[3:].ctypes,
                   ints[0:].ctypes, ints[1:].ctypes, alpha.ctypes, ab.ctypes,
                   ints[2:].ctypes, ob.ctypes, ints[3:].ctypes)
        else:
            _dtrsm(chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, chars[3:].ctypes,
                   ints[0:].ctypes, ints[1:].ctypes, alpha.ctypes, ab.ctypes,
                   ints[2:].ctypes, ob.ctypes, ints[3:].ctypes)
