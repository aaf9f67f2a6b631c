"""LAPACK and BLAS called from compiled kernels: ``lu`` (``?getrf``), ``cholesky``
(``?potrf``), ``triangular_solve`` (``?trsm``), ``eigh`` (``?syevd``), ``qr``
(``?geqrf`` + ``?orgqr``), ``svd`` (``?gesdd``), ``eig`` (``?geev``), ``schur``
(``?gees``) and ``hessenberg`` (``?gehrd`` + ``?orghr``) for float32, float64,
complex64 and complex128, one call per matrix of a stack, in a compiled loop (no object
mode, so they run inside loop bodies). Each kernel is written once: :func:`_routine`
picks the routine for the element type, and :func:`_by_kind` the real or the complex
one where their arguments differ (a complex routine's real workspace: ``?heevd``,
``?gesdd``, ``?gees``); ``eig``, whose outputs differ too, has a ``_complex`` twin.
Matrices up to :data:`SMALL_ORDER` are factored and solved by loops in the kernel
instead (:func:`_small_lu`, :func:`_small_trsm`).

The kernels call SciPy's routines by symbol name (``absjit_sgetrf`` …, Numba
``ExternalFunction``s), bound to this process's addresses by
:func:`.lapack_symbols.ensure_symbols` before a kernel using them is compiled or loaded.

Layout: LAPACK is column-major. ``trsm`` works on the C arrays as they are (a C matrix
is its transpose in Fortran order, so the side and triangle flip); ``getrf`` and
``potrf`` factor a transposed copy, which costs O(n^2) beside their O(n^3); so do the
eigen, QR and singular value routines, whose outputs are copied back transposed.

Workspace sizes come from each routine's own query (``lwork = -1``), once per call of
the kernel. A matrix holding NaN, or one the routine fails on (``info != 0``), gives NaN
outputs, as JAX does, and never an exception.
"""
from __future__ import annotations

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from ..helper_jit import disk_cached, read_only_inputs
from .lapack_symbols import ROUTINES, symbols

__all__ = ["_lapack_lu", "_lapack_cholesky", "_blas_trsm", "_lapack_eigh", "_lapack_qr",
           "_lapack_svd", "_lapack_eig", "_lapack_schur", "_complex_schur",
           "_lapack_hessenberg", "_lapack_eig_complex"]

# Pointers are passed as ``arr.ctypes`` (converted to void*): that object holds a
# reference to the array for the duration of the call, so no buffer can be freed early.
_PREFIX = {types.float32: "s", types.float64: "d", types.complex64: "c",
           types.complex128: "z"}


def _routine(name: str):
    """``_<name>(x, *pointers)`` for compiled code: LAPACK's routine ``name`` (BLAS's,
    for ``trsm``) for the element type of the array ``x`` (``?getrf``: ``sgetrf`` for
    float32 … ``zgetrf`` for complex128; ``orgqr`` is ``ungqr`` for complex types),
    called with ``pointers``. The choice is made while Numba types the call, so one
    kernel serves every element type the routine comes in."""
    nargs = ROUTINES[name][1]
    external = {p: types.ExternalFunction(symbol, types.void(*([types.voidptr] * nargs)))
                for p, (symbol, _) in symbols(name).items()}
    params = ", ".join(f"p{i}" for i in range(nargs))
    namespace = {"external": external, "_PREFIX": _PREFIX}
    exec(f"def _{name}(x, {params}):\n"  # noqa: S102 - the arity, spelled out for Numba
         f"    raise TypeError('only compiled code calls _{name}')\n"
         f"def typer(x, {params}):\n"
         f"    call = external.get(_PREFIX.get(getattr(x, 'dtype', None)))\n"
         f"    if call is None:\n"
         f"        return None\n"
         f"    def impl(x, {params}):\n"
         f"        call({params})\n"
         f"    return impl\n", namespace)
    overload(namespace[f"_{name}"])(namespace["typer"])
    return namespace[f"_{name}"]


(_getrf, _potrf, _trsm, _syevd, _heevd, _geqrf, _orgqr, _gesdd, _gesdd_complex, _geev,
 _geev_complex, _gees, _gees_complex, _gehrd, _orghr) = (
    _routine(name) for name in ("getrf", "potrf", "trsm", "syevd", "heevd", "geqrf",
                                "orgqr", "gesdd", "gesdd_complex", "geev", "geev_complex",
                                "gees", "gees_complex", "gehrd", "orghr"))


def _by_kind(real, complex_, params, real_only=(), complex_only=()):
    """``call(x, *params)`` for compiled code: the routine ``real`` for a real ``x``
    (without the ``complex_only`` parameters), ``complex_`` for a complex one (without
    the ``real_only`` ones), so one kernel serves both though their arguments differ
    (a complex routine's real workspace, a real one's split eigenvalues)."""
    names = params.split()
    every = ", ".join(names)
    real_args = ", ".join(n for n in names if n not in complex_only)
    complex_args = ", ".join(n for n in names if n not in real_only)
    namespace = {"real": real, "complex_": complex_, "types": types}
    exec(f"def call(x, {every}):\n"  # noqa: S102 - the arity, spelled out for Numba
         f"    raise TypeError('only compiled code calls this')\n"
         f"def typer(x, {every}):\n"
         f"    if isinstance(getattr(x, 'dtype', None), types.Complex):\n"
         f"        def impl(x, {every}):\n"
         f"            complex_(x, {complex_args})\n"
         f"    else:\n"
         f"        def impl(x, {every}):\n"
         f"            real(x, {real_args})\n"
         f"    return impl\n", namespace)
    overload(namespace["call"])(namespace["typer"])
    return namespace["call"]


_evd = _by_kind(_syevd, _heevd, "jobz uplo n a lda w work lwork rwork lrwork iwork liwork "
                "info", complex_only=("rwork", "lrwork"))
_svd_dd = _by_kind(_gesdd, _gesdd_complex, "jobz m n a lda s u ldu vt ldvt work lwork "
                   "rwork iwork info", complex_only=("rwork",))
_schur = _by_kind(_gees, _gees_complex, "jobvs sort select n a lda sdim wr wi w vs ldvs "
                  "work lwork rwork bwork info", real_only=("wr", "wi"),
                  complex_only=("w", "rwork"))


def _is_complex(x):
    """Whether the array ``x`` holds complex numbers (a constant in compiled code)."""
    return np.iscomplexobj(x)


def _is_complex_typer(x):
    answer = isinstance(x.dtype, types.Complex)
    return lambda x: answer


overload(_is_complex)(_is_complex_typer)


#: Matrices up to this order are factored and solved by loops compiled into the kernel
#: (:func:`_small_lu`, :func:`_small_trsm`): a LAPACK call's fixed costs (workspace,
#: the column-major copies) outweigh an 8x8 factorization (Newton steps in a loop).
SMALL_ORDER = 16


@disk_cached
@numba.njit(cache=False)
def _pivot_size(v):
    """|re| + |im|, the size LAPACK's ``i?amax`` compares pivots by (|v| for reals)."""
    return abs(v.real) + abs(v.imag)


@disk_cached
@numba.njit(cache=False, error_model="numpy")
def _small_lu(a, lu, piv, perm):
    """LAPACK's unblocked ``?getf2`` on one (m, n) matrix ``a``, into ``lu``: the first
    row of largest pivot size (or the first NaN, as SciPy's OpenBLAS picks it) becomes
    each pivot; a zero pivot leaves its column unscaled (the factorization goes on, as
    LAPACK's does)."""
    m, n = a.shape
    for i in range(m):
        perm[i] = i
        for j in range(n):
            lu[i, j] = a[i, j]
    for j in range(min(m, n)):
        p = j
        best = _pivot_size(lu[j, j])
        for r in range(j + 1, m):
            size = _pivot_size(lu[r, j])
            if size > best or (size != size and best == best):  # NaN wins, as in getrf
                best = size
                p = r
        piv[j] = p
        if p != j:
            for c in range(n):
                lu[j, c], lu[p, c] = lu[p, c], lu[j, c]
            perm[j], perm[p] = perm[p], perm[j]
        d = lu[j, j]
        if d != 0:
            for r in range(j + 1, m):
                lu[r, j] /= d
        for r in range(j + 1, m):
            f = lu[r, j]
            for c in range(j + 1, n):
                lu[r, c] -= f * lu[j, c]


@read_only_inputs(0)
@disk_cached
@numba.njit(cache=False)
def _lapack_lu(x, lu, piv, perm):
    """LU with partial pivoting of each (m, n) matrix of ``x`` (B, m, n): ``lu`` holds L
    below the diagonal (unit diagonal implied) and U on and above it, ``piv`` the 0-based
    row swaps, ``perm`` the permutation they make. A singular matrix is factored anyway
    (zeros on U's diagonal), NaN propagates: no exception, as in JAX. Matrices up to
    :data:`SMALL_ORDER` are factored by :func:`_small_lu`, others by ``?getrf``."""
    nb, m, n = x.shape
    k = min(m, n)
    if m <= SMALL_ORDER and n <= SMALL_ORDER:
        for b in range(nb):
            _small_lu(x[b], lu[b], piv[b], perm[b])
        return
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
        _getrf(x, ints[0:].ctypes, ints[1:].ctypes, buf.ctypes, ints[2:].ctypes,
               ipiv.ctypes, ints[3:].ctypes)
        for i in range(m):
            for j in range(n):
                lu[b, i, j] = buf[j, i]
            perm[b, i] = i
        for i in range(k):
            p = ipiv[i] - 1
            piv[b, i] = p
            perm[b, i], perm[b, p] = perm[b, p], perm[b, i]


@read_only_inputs(0)
@disk_cached
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
        _potrf(x, uplo.ctypes, ints[0:].ctypes, buf.ctypes, ints[1:].ctypes,
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


@read_only_inputs(0, 1)
@disk_cached
@numba.njit(cache=False)
def _blas_trsm(a, rhs, out, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """Solve ``op(a) x = rhs`` (``left_side``) or ``x op(a) = rhs`` for each triangular
    (k, k) matrix of ``a`` (B, k, k) and (m, n) matrix of ``rhs``, into ``out``; ``op``
    transposes with ``transpose_a``, and conjugates too with ``conjugate_a`` (complex
    types only, and only with the transpose). A zero on the diagonal gives inf/NaN, not
    an error.

    Fortran sees each C matrix transposed: ``op(A) X = B`` is ``X^T op(A)^T = B^T``, so
    the side and the triangle flip and the transpose flag stays. Triangles up to
    :data:`SMALL_ORDER` with a few right-hand sides are solved by :func:`_small_trsm`
    instead."""
    nb, m, n = rhs.shape
    k = a.shape[1]
    for b in range(nb):
        for i in range(m):
            for j in range(n):
                out[b, i, j] = rhs[b, i, j]
    if m == 0 or n == 0:
        return
    if k <= SMALL_ORDER and m * n <= 4 * SMALL_ORDER * SMALL_ORDER:  # few right sides
        for b in range(nb):
            _small_trsm(a[b], out[b], left_side, lower, transpose_a, conjugate_a,
                        unit_diagonal)
        return
    chars = np.empty(4, np.uint8)
    chars[0] = 82 if left_side else 76       # side: 'R' / 'L'
    chars[1] = 85 if lower else 76           # uplo: 'U' / 'L'
    chars[2] = (67 if conjugate_a else 84) if transpose_a else 78  # transa: 'C'/'T'/'N'
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
        _trsm(out, chars[0:].ctypes, chars[1:].ctypes, chars[2:].ctypes, chars[3:].ctypes,
              ints[0:].ctypes, ints[1:].ctypes, alpha.ctypes, ab.ctypes, ints[2:].ctypes,
              ob.ctypes, ints[3:].ctypes)


@disk_cached
@numba.njit(cache=False, error_model="numpy")  # a zero on the diagonal gives inf/NaN
def _small_trsm(a, out, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """:func:`_blas_trsm` on one triangle ``a`` (k, k), in place on ``out`` (m, n), by
    substitution. Every case is one of solving ``S y = c`` for vectors ``y``: the
    columns of ``out`` with ``S = op(a)`` (left side), or its rows with ``S = op(a)^T``
    (right side); ``S[i, j]`` is ``a[j, i]`` when exactly one of the two transposes."""
    m, n = out.shape
    flip = transpose_a != (not left_side)
    s_lower = lower != flip
    size = m if left_side else n
    for v in range(n if left_side else m):
        for step in range(size):
            i = step if s_lower else size - 1 - step
            acc = out[i, v] if left_side else out[v, i]
            lo, hi = (0, i) if s_lower else (i + 1, size)
            for j in range(lo, hi):
                sij = a[j, i] if flip else a[i, j]
                if conjugate_a:
                    sij = np.conj(sij)
                acc -= sij * (out[j, v] if left_side else out[v, j])
            if not unit_diagonal:
                d = a[i, i]
                if d == 0:  # inf/NaN as ?trsm gives (Numba's complex division raises)
                    acc = acc * (1.0 / d.real)
                else:
                    acc /= np.conj(d) if conjugate_a else d
            if left_side:
                out[i, v] = acc
            else:
                out[v, i] = acc


@disk_cached
@numba.njit(cache=False)
def _fortran_copy(src, buf):
    """``buf[j, i] = src[i, j]``: the C matrix ``src`` laid out column-major in ``buf``.
    Returns whether it holds a NaN."""
    m, n = src.shape
    bad = False
    for i in range(m):
        for j in range(n):
            v = src[i, j]
            bad |= v != v
            buf[j, i] = v
    return bad


@read_only_inputs(0)
@disk_cached
@numba.njit(cache=False)
def _lapack_eigh(x, v, w, lower):
    """Eigenvectors (columns of ``v``) and ascending real eigenvalues ``w`` of each
    symmetric or Hermitian (n, n) matrix of ``x`` (B, n, n), reading its lower
    (``lower``) or upper triangle (``?syevd``, ``?heevd``)."""
    nb, n, _ = x.shape
    complex_ = _is_complex(x)
    buf = np.empty((n, n), x.dtype)
    chars = np.empty(2, np.uint8)
    chars[0] = 86                     # jobz 'V'
    chars[1] = 76 if lower else 85    # uplo: 'L' / 'U' (buf holds the matrix itself)
    ints = np.empty(6, np.int32)      # n, lda, lwork, lrwork, liwork, info
    ints[0] = n
    ints[1] = max(n, 1)
    wb = np.empty(n, w.dtype)
    query = np.empty(1, x.dtype)
    rquery = np.ones(1, w.dtype)      # (a real routine leaves it)
    iquery = np.empty(1, np.int32)
    ints[2] = -1
    ints[3] = -1
    ints[4] = -1
    _evd(x, chars[0:].ctypes, chars[1:].ctypes, ints[0:].ctypes, buf.ctypes,
         ints[1:].ctypes, wb.ctypes, query.ctypes, ints[2:].ctypes, rquery.ctypes,
         ints[3:].ctypes, iquery.ctypes, ints[4:].ctypes, ints[5:].ctypes)
    lwork = max(int(query[0].real), 2 * n + n * n if complex_ else 1 + 6 * n + 2 * n * n, 1)
    lrwork = max(int(rquery[0]), 1 + 5 * n + 2 * n * n) if complex_ else 1
    liwork = max(int(iquery[0]), 3 + 5 * n)
    work = np.empty(lwork, x.dtype)
    rwork = np.empty(lrwork, w.dtype)
    iwork = np.empty(liwork, np.int32)
    for b in range(nb):
        bad = False
        for i in range(n):
            for j in range(n):
                e = x[b, i, j]
                if (j <= i) == lower or i == j:
                    bad |= e != e
                buf[j, i] = e
        ints[2] = lwork
        ints[3] = lrwork
        ints[4] = liwork
        ints[5] = 0
        if not bad:
            _evd(x, chars[0:].ctypes, chars[1:].ctypes, ints[0:].ctypes, buf.ctypes,
                 ints[1:].ctypes, wb.ctypes, work.ctypes, ints[2:].ctypes, rwork.ctypes,
                 ints[3:].ctypes, iwork.ctypes, ints[4:].ctypes, ints[5:].ctypes)
        failed = bad or ints[5] != 0
        for i in range(n):
            w[b, i] = np.nan if failed else wb[i]
            for j in range(n):
                v[b, i, j] = np.nan if failed else buf[j, i]


@read_only_inputs(0)
@disk_cached
@numba.njit(cache=False)
def _lapack_qr(x, q, r):
    """``x = q r`` for each (m, n) matrix of ``x`` (B, m, n): ``q`` (B, m, kq) with
    orthonormal columns, ``r`` (B, kq, n) upper triangular; ``kq`` is ``m`` (full) or
    ``min(m, n)``."""
    nb, m, n = x.shape
    kq = q.shape[2]
    k = min(m, n)
    cols = max(n, kq)
    buf = np.empty((cols, m), x.dtype)   # column-major m x cols
    tau = np.empty(max(k, 1), x.dtype)
    ints = np.empty(6, np.int32)         # m, n, lda, lwork, info, kq
    ints[0] = m
    ints[1] = n
    ints[2] = max(m, 1)
    ints[5] = kq
    kk = np.empty(1, np.int32)
    kk[0] = k
    query = np.empty(2, x.dtype)
    ints[3] = -1
    _geqrf(x, ints[0:].ctypes, ints[1:].ctypes, buf.ctypes, ints[2:].ctypes, tau.ctypes,
           query[0:].ctypes, ints[3:].ctypes, ints[4:].ctypes)
    _orgqr(x, ints[0:].ctypes, ints[5:].ctypes, kk.ctypes, buf.ctypes, ints[2:].ctypes,
           tau.ctypes, query[1:].ctypes, ints[3:].ctypes, ints[4:].ctypes)
    lwork = max(int(query[0].real), int(query[1].real), max(n, kq, 1))
    work = np.empty(lwork, x.dtype)
    for b in range(nb):
        bad = _fortran_copy(x[b], buf)
        ints[3] = lwork
        ints[4] = 0
        if not bad:
            _geqrf(x, ints[0:].ctypes, ints[1:].ctypes, buf.ctypes, ints[2:].ctypes,
                   tau.ctypes, work.ctypes, ints[3:].ctypes, ints[4:].ctypes)
        for i in range(kq):
            for j in range(n):
                r[b, i, j] = np.nan if bad else (buf[j, i] if j >= i and i < k else 0)
        if not bad:
            _orgqr(x, ints[0:].ctypes, ints[5:].ctypes, kk.ctypes, buf.ctypes,
                   ints[2:].ctypes, tau.ctypes, work.ctypes, ints[3:].ctypes,
                   ints[4:].ctypes)
        for i in range(m):
            for j in range(kq):
                q[b, i, j] = np.nan if bad else buf[j, i]


@read_only_inputs(0)
@disk_cached
@numba.njit(cache=False)
def _lapack_svd(x, s, u, vt, compute_uv):
    """Real singular values ``s`` (B, k) in descending order of each (m, n) matrix of
    ``x`` (B, m, n) and, with ``compute_uv``, ``u`` (B, m, mu) and ``vt`` (B, nv, n)
    (``x = u s vt``); ``mu, nv`` are ``m, n`` (full) or ``k, k`` (``?gesdd``, with a
    real workspace for complex matrices)."""
    nb, m, n = x.shape
    k = min(m, n)
    mu = u.shape[2]
    nv = vt.shape[1]
    buf = np.empty((n, m), x.dtype)
    ub = np.empty((max(mu, 1), m), x.dtype)     # column-major m x mu
    vb = np.empty((n, max(nv, 1)), x.dtype)     # column-major nv x n
    sb = np.empty(max(k, 1), s.dtype)
    chars = np.empty(1, np.uint8)
    chars[0] = 78 if not compute_uv else (65 if mu == m and nv == n and m != n else 83)
    if compute_uv and m == n:
        chars[0] = 83                           # 'S' and 'A' agree on square matrices
    ints = np.empty(7, np.int32)                # m, n, lda, ldu, ldvt, lwork, info
    ints[0] = m
    ints[1] = n
    ints[2] = max(m, 1)
    ints[3] = max(m, 1)
    ints[4] = max(nv, 1)
    iwork = np.empty(8 * max(k, 1), np.int32)
    lrwork = max(k * max(5 * k + 7, 2 * max(m, n) + 2 * k + 1), 7 * k, 1) \
        if _is_complex(x) else 1
    rwork = np.empty(lrwork, s.dtype)
    query = np.empty(1, x.dtype)
    ints[5] = -1
    _svd_dd(x, chars.ctypes, ints[0:].ctypes, ints[1:].ctypes, buf.ctypes, ints[2:].ctypes,
            sb.ctypes, ub.ctypes, ints[3:].ctypes, vb.ctypes, ints[4:].ctypes,
            query.ctypes, ints[5:].ctypes, rwork.ctypes, iwork.ctypes, ints[6:].ctypes)
    lwork = max(int(query[0].real), 1)
    work = np.empty(lwork, x.dtype)
    for b in range(nb):
        bad = _fortran_copy(x[b], buf)
        ints[5] = lwork
        ints[6] = 0
        if not bad:
            _svd_dd(x, chars.ctypes, ints[0:].ctypes, ints[1:].ctypes, buf.ctypes,
                    ints[2:].ctypes, sb.ctypes, ub.ctypes, ints[3:].ctypes, vb.ctypes,
                    ints[4:].ctypes, work.ctypes, ints[5:].ctypes, rwork.ctypes,
                    iwork.ctypes, ints[6:].ctypes)
        failed = bad or ints[6] != 0
        for i in range(k):
            s[b, i] = np.nan if failed else sb[i]
        if compute_uv:
            for i in range(m):
                for j in range(mu):
                    u[b, i, j] = np.nan if failed else ub[j, i]
            for i in range(nv):
                for j in range(n):
                    vt[b, i, j] = np.nan if failed else vb[j, i]


@read_only_inputs(0)
@disk_cached
@numba.njit(cache=False)
def _lapack_eig(x, w, v, compute_v):
    """Eigenvalues ``w`` (B, n, complex) and, with ``compute_v``, right eigenvectors
    ``v`` (B, n, n, complex, unit-norm columns) of each real (n, n) matrix of ``x``, in
    LAPACK's order, as ``numpy.linalg.eig`` gives them: a complex pair's vectors are
    ``vr[:, j] +- i vr[:, j + 1]``."""
    nb, n, _ = x.shape
    buf = np.empty((n, n), x.dtype)
    vr = np.empty((n, n), x.dtype)           # column-major: vr[j, i] is VR(i, j)
    vl = np.empty(1, x.dtype)
    wr = np.empty(n, x.dtype)
    wi = np.empty(n, x.dtype)
    chars = np.empty(2, np.uint8)
    chars[0] = 78                            # jobvl 'N'
    chars[1] = 86 if compute_v else 78       # jobvr 'V' / 'N'
    ints = np.empty(6, np.int32)             # n, lda, ldvl, ldvr, lwork, info
    ints[0] = n
    ints[1] = max(n, 1)
    ints[2] = 1
    ints[3] = max(n, 1)
    query = np.empty(1, x.dtype)
    ints[4] = -1
    _geev(x, chars[0:].ctypes, chars[1:].ctypes, ints[0:].ctypes, buf.ctypes,
          ints[1:].ctypes, wr.ctypes, wi.ctypes, vl.ctypes, ints[2:].ctypes, vr.ctypes,
          ints[3:].ctypes, query.ctypes, ints[4:].ctypes, ints[5:].ctypes)
    lwork = max(int(query[0].real), 4 * n if compute_v else 3 * n, 1)
    work = np.empty(lwork, x.dtype)
    for b in range(nb):
        bad = _fortran_copy(x[b], buf)
        ints[4] = lwork
        ints[5] = 0
        if not bad:
            _geev(x, chars[0:].ctypes, chars[1:].ctypes, ints[0:].ctypes, buf.ctypes,
                  ints[1:].ctypes, wr.ctypes, wi.ctypes, vl.ctypes, ints[2:].ctypes,
                  vr.ctypes, ints[3:].ctypes, work.ctypes, ints[4:].ctypes, ints[5:].ctypes)
        failed = bad or ints[5] != 0
        for j in range(n):
            w[b, j] = complex(np.nan, np.nan) if failed else complex(wr[j], wi[j])
        if compute_v:
            j = 0
            while j < n:
                pair = not failed and wi[j] != 0 and j + 1 < n
                for i in range(n):
                    if failed:
                        v[b, i, j] = complex(np.nan, np.nan)
                    elif pair:
                        v[b, i, j] = complex(vr[j, i], vr[j + 1, i])
                        v[b, i, j + 1] = complex(vr[j, i], -vr[j + 1, i])
                    else:
                        v[b, i, j] = complex(vr[j, i], 0.0)
                j += 2 if pair else 1


@read_only_inputs(0)
@disk_cached
@numba.njit(cache=False)
def _lapack_schur(x, t, z):
    """The Schur form ``x = z t z^H`` of each (n, n) matrix of ``x`` (B, n, n), unsorted,
    as ``scipy.linalg.schur`` gives it (``?gees``): for a real matrix the real form, ``t``
    upper quasi-triangular (a 2x2 block on the diagonal for each complex pair, in
    LAPACK's standard form) and ``z`` orthogonal; for a complex one ``t`` triangular and
    ``z`` unitary."""
    nb, n, _ = x.shape
    buf = np.empty((n, n), x.dtype)
    vs = np.empty((n, n), x.dtype)           # column-major: vs[j, i] is VS(i, j)
    query = np.empty(1, x.dtype)
    wr = np.empty(n, query.real.dtype)       # a real routine's eigenvalues
    wi = np.empty(n, query.real.dtype)
    w = np.empty(n, x.dtype)                 # a complex routine's, and its workspace
    rwork = np.empty(max(n, 1) if _is_complex(x) else 1, query.real.dtype)
    bwork = np.empty(max(n, 1), np.int32)    # not referenced without sorting
    chars = np.empty(2, np.uint8)
    chars[0] = 86                            # jobvs 'V'
    chars[1] = 78                            # sort 'N' (select is not referenced)
    ints = np.empty(5, np.int32)             # n, lda (= ldvs), sdim, lwork, info
    ints[0] = n
    ints[1] = max(n, 1)
    ints[3] = -1
    _schur(x, chars[0:].ctypes, chars[1:].ctypes, bwork.ctypes, ints[0:].ctypes,
           buf.ctypes, ints[1:].ctypes, ints[2:].ctypes, wr.ctypes, wi.ctypes, w.ctypes,
           vs.ctypes, ints[1:].ctypes, query.ctypes, ints[3:].ctypes, rwork.ctypes,
           bwork.ctypes, ints[4:].ctypes)
    lwork = max(int(query[0].real), 3 * n, 1)
    work = np.empty(lwork, x.dtype)
    for b in range(nb):
        bad = _fortran_copy(x[b], buf)
        ints[3] = lwork
        ints[4] = 0
        if not bad:
            _schur(x, chars[0:].ctypes, chars[1:].ctypes, bwork.ctypes, ints[0:].ctypes,
                   buf.ctypes, ints[1:].ctypes, ints[2:].ctypes, wr.ctypes, wi.ctypes,
                   w.ctypes, vs.ctypes, ints[1:].ctypes, work.ctypes, ints[3:].ctypes,
                   rwork.ctypes, bwork.ctypes, ints[4:].ctypes)
        failed = bad or ints[4] != 0
        for i in range(n):
            for j in range(n):
                t[b, i, j] = np.nan if failed else buf[j, i]
                z[b, i, j] = np.nan if failed else vs[j, i]


@disk_cached
@numba.njit(cache=False)
def _complex_schur(t, z, tc, zc):
    """The complex Schur form ``(tc, zc)`` (triangular ``tc``, unitary ``zc``) made
    from each real one ``(t, z)`` of the stacks (B, n, n), as ``scipy.linalg.rsf2csf``
    makes it: each 2x2 diagonal block is split by a complex Givens rotation built from
    its eigenvalue with the positive imaginary part, so a real eigenvalue keeps an
    exactly zero imaginary part. A real form holding NaN (one that failed) gives NaN
    throughout."""
    nb, n, _ = t.shape
    eps = 2.220446049250313e-16  # float64's, whatever the precision (as SciPy)
    for b in range(nb):
        T = tc[b]
        Z = zc[b]
        failed = False
        for i in range(n):
            for j in range(n):
                T[i, j] = t[b, i, j]
                Z[i, j] = z[b, i, j]
                failed |= T[i, j] != T[i, j]
        if failed:  # the real form failed (NaN input): NaN throughout, as the real one
            T[:, :] = complex(np.nan, 0.0)
            Z[:, :] = complex(np.nan, 0.0)
            continue
        for m in range(n - 1, 0, -1):
            if abs(T[m, m - 1]) > eps * (abs(T[m - 1, m - 1]) + abs(T[m, m])):
                half_trace = 0.5 * (T[m - 1, m - 1] + T[m, m])
                root = np.sqrt((0.5 * (T[m - 1, m - 1] - T[m, m])) ** 2
                               + T[m - 1, m] * T[m, m - 1])
                lam = half_trace + root
                if (half_trace - root).imag > lam.imag:
                    lam = half_trace - root
                mu = lam - T[m, m]
                r = np.sqrt(abs(mu) ** 2 + abs(T[m, m - 1]) ** 2)
                c = mu / r
                s = T[m, m - 1] / r
                cc = np.conj(c)
                sc = np.conj(s)
                for j in range(m - 1, n):      # rows m-1, m:  G @ T
                    x1 = T[m - 1, j]
                    x2 = T[m, j]
                    T[m - 1, j] = cc * x1 + s * x2
                    T[m, j] = c * x2 - s * x1
                for i in range(m + 1):         # columns m-1, m:  T @ G^H
                    y1 = T[i, m - 1]
                    y2 = T[i, m]
                    T[i, m - 1] = c * y1 + sc * y2
                    T[i, m] = cc * y2 - sc * y1
                for i in range(n):             # Z @ G^H
                    y1 = Z[i, m - 1]
                    y2 = Z[i, m]
                    Z[i, m - 1] = c * y1 + sc * y2
                    Z[i, m] = cc * y2 - sc * y1
            T[m, m - 1] = 0


@read_only_inputs(0)
@disk_cached
@numba.njit(cache=False)
def _lapack_hessenberg(x, h, q):
    """``x = q h q^H`` for each (n, n) matrix of ``x`` (B, n, n): ``h`` zero below the
    first subdiagonal, ``q`` orthogonal (unitary), as ``scipy.linalg.hessenberg`` gives
    them (without balancing; a matrix of order 2 or less is its own form, ``q = I``)."""
    nb, n, _ = x.shape
    if n <= 2:
        for b in range(nb):
            for i in range(n):
                for j in range(n):
                    h[b, i, j] = x[b, i, j]
                    q[b, i, j] = 1 if i == j else 0
        return
    buf = np.empty((n, n), x.dtype)          # column-major
    tau = np.empty(n - 1, x.dtype)
    ints = np.empty(6, np.int32)             # n, ilo, ihi, lda, lwork, info
    ints[0] = n
    ints[1] = 1
    ints[2] = n
    ints[3] = n
    query = np.empty(2, x.dtype)
    ints[4] = -1
    _gehrd(x, ints[0:].ctypes, ints[1:].ctypes, ints[2:].ctypes, buf.ctypes,
           ints[3:].ctypes, tau.ctypes, query[0:].ctypes, ints[4:].ctypes, ints[5:].ctypes)
    _orghr(x, ints[0:].ctypes, ints[1:].ctypes, ints[2:].ctypes, buf.ctypes,
           ints[3:].ctypes, tau.ctypes, query[1:].ctypes, ints[4:].ctypes, ints[5:].ctypes)
    lwork = max(int(query[0].real), int(query[1].real), n)
    work = np.empty(lwork, x.dtype)
    for b in range(nb):
        bad = _fortran_copy(x[b], buf)
        ints[4] = lwork
        ints[5] = 0
        if not bad:
            _gehrd(x, ints[0:].ctypes, ints[1:].ctypes, ints[2:].ctypes, buf.ctypes,
                   ints[3:].ctypes, tau.ctypes, work.ctypes, ints[4:].ctypes,
                   ints[5:].ctypes)
        for i in range(n):
            for j in range(n):
                h[b, i, j] = np.nan if bad else (buf[j, i] if i <= j + 1 else 0)
        if not bad:
            _orghr(x, ints[0:].ctypes, ints[1:].ctypes, ints[2:].ctypes, buf.ctypes,
                   ints[3:].ctypes, tau.ctypes, work.ctypes, ints[4:].ctypes,
                   ints[5:].ctypes)
        for i in range(n):
            for j in range(n):
                q[b, i, j] = np.nan if bad else buf[j, i]


# -- eig of complex matrices: its eigenvalues and vectors come whole, not in pairs -----
@read_only_inputs(0)
@disk_cached
@numba.njit(cache=False)
def _lapack_eig_complex(x, w, v, compute_v):
    """:func:`_lapack_eig` for complex matrices (``?geev``): eigenvalues ``w`` and, with
    ``compute_v``, unit-norm right eigenvectors ``v``, in LAPACK's order."""
    nb, n, _ = x.shape
    buf = np.empty((n, n), x.dtype)
    vr = np.empty((n, n), x.dtype)           # column-major: vr[j, i] is VR(i, j)
    vl = np.empty(1, x.dtype)
    wb = np.empty(n, x.dtype)
    rwork = np.empty(max(2 * n, 1), vl.real.dtype)
    chars = np.empty(2, np.uint8)
    chars[0] = 78                            # jobvl 'N'
    chars[1] = 86 if compute_v else 78       # jobvr 'V' / 'N'
    ints = np.empty(6, np.int32)             # n, lda, ldvl, ldvr, lwork, info
    ints[0] = n
    ints[1] = max(n, 1)
    ints[2] = 1
    ints[3] = max(n, 1)
    query = np.empty(1, x.dtype)
    ints[4] = -1
    _geev_complex(x, chars[0:].ctypes, chars[1:].ctypes, ints[0:].ctypes, buf.ctypes,
                  ints[1:].ctypes, wb.ctypes, vl.ctypes, ints[2:].ctypes, vr.ctypes,
                  ints[3:].ctypes, query.ctypes, ints[4:].ctypes, rwork.ctypes,
                  ints[5:].ctypes)
    lwork = max(int(query[0].real), 2 * n, 1)
    work = np.empty(lwork, x.dtype)
    for b in range(nb):
        bad = _fortran_copy(x[b], buf)
        ints[4] = lwork
        ints[5] = 0
        if not bad:
            _geev_complex(x, chars[0:].ctypes, chars[1:].ctypes, ints[0:].ctypes,
                          buf.ctypes, ints[1:].ctypes, wb.ctypes, vl.ctypes,
                          ints[2:].ctypes, vr.ctypes, ints[3:].ctypes, work.ctypes,
                          ints[4:].ctypes, rwork.ctypes, ints[5:].ctypes)
        failed = bad or ints[5] != 0
        for j in range(n):
            w[b, j] = complex(np.nan, np.nan) if failed else wb[j]
            if compute_v:
                for i in range(n):
                    v[b, i, j] = complex(np.nan, np.nan) if failed else vr[j, i]
