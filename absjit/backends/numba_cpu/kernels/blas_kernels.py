"""Batched matrix products that BLAS writes straight into the result.

``_gemm`` calls ``absjit_xxgemm`` (:func:`.lapack_symbols.ensure_gemm`: SciPy's
``?gemm``, bound by symbol name, so a kernel holding it can be cached on disk) with
explicit leading dimensions and element offsets: one call per matrix of a batch,
reading the operands where they lie and writing the product into its slice of the
result — no temporary per matrix and no copy back (``out[q] = np.dot(a[q], b[q])``
allocated and copied each product).

Row-major ``C = op(A) @ op(B)`` is computed as column-major ``C^T = op(B)^T @ op(A)^T``:
a row-major matrix is the column-major storage of its transpose, so neither operand
nor the result is ever transposed in memory.
"""
from __future__ import annotations

import functools

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .alloc_kernels import _empty
from .lapack_symbols import ensure_gemm
from ..helper_jit import disk_cached, read_only_inputs

__all__ = ["_bgemm", "_pgemm_pool", "_pgemm_prange", "_gemm_rows", "GEMM_CALLERS"]

#: The helpers generated kernels call whose code calls ``absjit_xxgemm``: a kernel
#: naming one needs :func:`.lapack_symbols.ensure_gemm` before it is compiled or loaded.
GEMM_CALLERS = ("_bgemm", "_gemm_rows", "_pgemm_pool", "_pgemm_prange")

_KINDS = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


@intrinsic
def _gemm(typingctx, ta, tb, m, n, k, a, oa, lda, b, ob, ldb, c, oc, ldc, beta):
    """Column-major ``c[oc:]`` (``m x n``, leading dimension ``ldc``) = ``op(a[oa:]) @
    op(b[ob:]) + beta * c[oc:]``, ``op`` transposing where ``ta``/``tb`` is true;
    returns BLAS's status (0)."""
    if not all(isinstance(x, types.Array) for x in (a, b, c)) or \
            str(c.dtype) not in _KINDS or not a.dtype == b.dtype == c.dtype:
        return None
    kind = _KINDS[str(c.dtype)]
    sig = types.int32(ta, tb, m, n, k, a, oa, lda, b, ob, ldb, c, oc, ldc, beta)

    def codegen(context, builder, sig, args):
        ensure_gemm()  # the symbol exists before this code is linked
        char, voidp = ir.IntType(8), ir.IntType(8).as_pointer()
        intp = context.get_value_type(types.intp)
        fnty = ir.FunctionType(ir.IntType(32), [char, char, char, intp, intp, intp,
                                                voidp, voidp, intp, voidp, intp, voidp,
                                                voidp, intp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "absjit_xxgemm")
        dt = sig.args[11].dtype
        one = cgutils.alloca_once_value(builder, context.get_constant(dt, 1))
        beta_ = cgutils.alloca_once_value(
            builder, context.cast(builder, args[14], sig.args[14], dt))

        def size(i):
            return context.cast(builder, args[i], sig.args[i], types.intp)

        def ptr(i):  # the address of element ``args[i + 1]`` of array ``args[i]``
            data = context.make_array(sig.args[i])(context, builder, args[i]).data
            return builder.bitcast(builder.gep(data, [size(i + 1)]), voidp)

        def flag(i):
            v = context.cast(builder, args[i], sig.args[i], types.boolean)
            return builder.select(v, ir.Constant(char, ord("t")), ir.Constant(char, ord("n")))

        return builder.call(fn, [ir.Constant(char, ord(kind)), flag(0), flag(1), size(2),
                                 size(3), size(4), builder.bitcast(one, voidp), ptr(5),
                                 size(7), ptr(8), size(10), builder.bitcast(beta_, voidp),
                                 ptr(11), size(13)])
    return sig, codegen


@disk_cached
@numba.njit(error_model="numpy")
def _no_product(out, k):
    """Whether ``out`` needs no BLAS call: it is empty, or ``k == 0`` (BLAS refuses a
    zero leading dimension; the empty sum, 0, is written here)."""
    if out.size == 0:
        return True
    if k == 0:
        flat = out.reshape(-1)
        for i in range(flat.size):
            flat[i] = 0
        return True
    return False


@read_only_inputs(0, 1)
@functools.partial(disk_cached, prepare=ensure_gemm)
@numba.njit(error_model="numpy")
def _bgemm(a, b, out, ta, tb):
    """``out[q] = op(a[q]) @ op(b[q])`` for every ``q``: ``a`` is C-contiguous
    ``(B, M, K)``, or ``(B, K, M)`` read transposed when ``ta``; ``b`` is ``(B, K, N)``,
    or ``(B, N, K)`` when ``tb``; ``out`` is C-contiguous ``(B, M, N)``."""
    nb, m, n = out.shape
    k = a.shape[1] if ta else a.shape[2]
    if _no_product(out, k):
        return out
    lda = m if ta else k
    ldb = k if tb else n
    for q in range(nb):
        _gemm(tb, ta, n, m, k, b, q * (k * n), ldb, a, q * (m * k), lda,
              out, q * (m * n), n, 0.0)
    return out


@read_only_inputs(0)
@disk_cached
@numba.njit(error_model="numpy")
def _blocked(a, out, ta, nblk):
    """``(nb, m, n, k, lda, width, blocks)`` of a blocked product into ``out``: its
    sizes, ``a``'s leading dimension, result columns per block (rounded up to whole
    vector registers where possible) and the blocks per matrix that makes."""
    nb, m, n = out.shape
    k = a.shape[1] if ta else a.shape[2]
    lda = m if ta else k
    # (conditionals rather than min/max: their overloads would compile first)
    width = -(-n // (nblk if nblk > 1 else 1))
    width = -(-width // 16) * 16
    return nb, m, n, k, lda, width, -(-n // width)


@read_only_inputs(0, 1)
@numba.njit(parallel=True, error_model="numpy")
def _pgemm_prange(a, b, out, ta, tb, nblk):
    """:func:`_pgemm_pool` where the native pool is not available: the blocks run in
    Numba's threads. The caller (:func:`.threads.guard`) sets Numba's chunk size to 1,
    so tasks are taken one at a time. (Setting the chunk size here would make the
    kernel uncacheable: Numba reaches its threading library through a pointer known
    only at run time.)"""
    nb, m, n, k, lda, width, nblk = _blocked(a, out, ta, nblk)
    if _no_product(out, k):
        return out
    ldb = k if tb else n
    for t in numba.prange(nb * nblk):
        q = t // nblk
        j0 = (t - q * nblk) * width
        nj = min(width, n - j0)
        _gemm(tb, ta, nj, m, k, b, q * (k * n) + (j0 * k if tb else j0), ldb,
              a, q * (m * k), lda, out, q * (m * n) + j0, n, 0.0)
    return out


@intrinsic
def _blas_kind(typingctx, arr):
    """The BLAS kind letter of ``arr``'s dtype (``ord('s')`` for float32, ...)."""
    if not isinstance(arr, types.Array) or str(arr.dtype) not in _KINDS:
        return None
    code = ord(_KINDS[str(arr.dtype)])

    def codegen(context, builder, sig, args):
        return context.get_constant(types.int64, code)
    return types.int64(arr), codegen


@intrinsic
def _pool_gemm(typingctx, table, ntasks, keep1, keep2):
    """Run the products described by the rows of ``table`` (``int64[:, 14]``, see
    :mod:`.pool`) on the native pool; ``keep1``/``keep2`` (the scalars ``alpha`` and
    ``beta`` the rows point at) stay alive until it returns."""
    if not isinstance(table, types.Array):
        return None
    sig = types.void(table, ntasks, keep1, keep2)

    def codegen(context, builder, sig, args):
        ensure_gemm()  # what the pool's blocks call
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(ir.VoidType(), [i64.as_pointer(), i64, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "absjit_pool_gemm")
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        n = context.cast(builder, args[1], sig.args[1], types.int64)
        builder.call(fn, [builder.bitcast(data, i64.as_pointer()), n,
                          ir.Constant(i64, 0)])  # 0: the pool's thread count
        return context.get_dummy_value()
    return sig, codegen


@read_only_inputs(0, 1)
@numba.njit(error_model="numpy")
def _pgemm_pool(a, b, out, ta, tb, nblk):
    """:func:`_bgemm` split into ``nb * nblk`` tasks — each matrix of the batch, cut
    into ``nblk`` blocks of result columns — each one single-threaded BLAS call, taken
    one at a time by the threads of the native pool (:mod:`.pool`), so a thread that
    another process slows down takes fewer tasks instead of holding back a fixed share.
    One row of BLAS arguments per task, then one call that runs them all. The caller
    (:func:`.threads.guard`) keeps BLAS itself at one thread."""
    nb, m, n, k, lda, width, nblk = _blocked(a, out, ta, nblk)
    if _no_product(out, k):
        return out
    ldb = k if tb else n
    ntasks = nb * nblk
    # _empty, not np.ones/np.zeros/np.empty: their overloads cost a process's first
    # blocked product ~0.3 s of compiling
    one = _empty((1,), out.dtype)
    zero = _empty((1,), out.dtype)
    one[0] = 1
    zero[0] = 0
    size = out.itemsize
    pa, pb, pc = a.ctypes.data, b.ctypes.data, out.ctypes.data
    p_one, p_zero = one.ctypes.data, zero.ctypes.data
    kind = _blas_kind(out)
    table = _empty((ntasks, 14), np.int64)
    for t in range(ntasks):
        q = t // nblk
        j0 = (t - q * nblk) * width
        # column-major C^T = op(B)^T @ op(A)^T, as _gemm(tb, ta, nj, m, k, b, ...)
        table[t, 0] = kind
        table[t, 1] = 116 if tb else 110  # 't' / 'n'
        table[t, 2] = 116 if ta else 110
        table[t, 3] = width if width < n - j0 else n - j0
        table[t, 4] = m
        table[t, 5] = k
        table[t, 6] = p_one
        table[t, 7] = pb + (q * (k * n) + (j0 * k if tb else j0)) * size
        table[t, 8] = ldb
        table[t, 9] = pa + q * (m * k) * size
        table[t, 10] = lda
        table[t, 11] = p_zero
        table[t, 12] = pc + (q * (m * n) + j0) * size
        table[t, 13] = n
    _pool_gemm(table, ntasks, one, zero)
    return out


@read_only_inputs(3, 6)
@functools.partial(disk_cached, prepare=ensure_gemm)
@numba.njit(error_model="numpy")
def _gemm_rows(m, n, k, a, oa, lda, b, ob, ldb, c, oc, ldc, beta):
    """Row-major ``C = A @ B + beta * C``: ``A`` the ``m x k`` matrix at ``a[oa:]`` (rows
    ``lda`` elements apart), ``B`` the ``k x n`` matrix at ``b[ob:]`` (rows ``ldb``
    apart, e.g. a shifted window of a padded image), ``C`` the ``m x n`` matrix at
    ``c[oc:]`` (rows ``ldc`` apart); the convolution lowering accumulates one product
    per kernel offset with it."""
    return _gemm(False, False, n, m, k, b, ob, ldb, a, oa, lda, c, oc, ldc, beta)


def xxgemm_function():
    """``absjit_xxgemm`` (SciPy's BLAS) as a ctypes function: ``(kind, transa, transb, m,
    n, k, alpha*, a*, lda, b*, ldb, beta*, c*, ldc) -> int``."""
    import ctypes
    sz, vp, ch = ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_char
    return ctypes.CFUNCTYPE(ctypes.c_int, ch, ch, ch, sz, sz, sz, vp, vp, sz, vp, sz,
                            vp, vp, sz)(ensure_gemm())
