"""A BLAS matrix product on operands addressed by offset and row stride.

``_gemm_rows`` calls ``numba_xxgemm``, the entry point Numba's own ``np.dot`` uses
(SciPy's BLAS, looked up by symbol name at run time, so a kernel holding the call can be
cached on disk), with explicit element offsets, row strides and a ``beta``: a product can
read a window of a larger array (a shifted view of a padded image) and accumulate into
its result. Row-major ``C = A @ B`` is the column-major product ``C^T = B^T @ A^T``: a
row-major matrix is the column-major storage of its transpose, so nothing is copied.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["_gemm_rows"]

_KINDS = {"float32": "s", "float64": "d"}


@intrinsic
def _gemm_rows(typingctx, m, n, k, a, oa, lda, b, ob, ldb, c, oc, ldc, beta):
    """Row-major ``C = A @ B + beta * C`` with ``A`` the ``m x k`` matrix at ``a[oa:]``
    (rows ``lda`` elements apart), ``B`` the ``k x n`` matrix at ``b[ob:]`` (rows
    ``ldb`` apart) and ``C`` the ``m x n`` matrix at ``c[oc:]`` (rows ``ldc`` apart);
    ``a``, ``b``, ``c`` are arrays of one float dtype. Returns BLAS's status (0)."""
    if not all(isinstance(x, types.Array) for x in (a, b, c)) or \
            str(c.dtype) not in _KINDS or not a.dtype == b.dtype == c.dtype:
        return None
    kind = _KINDS[str(c.dtype)]
    sig = types.int32(m, n, k, a, oa, lda, b, ob, ldb, c, oc, ldc, beta)

    def codegen(context, builder, sig, args):
        char, voidp = ir.IntType(8), ir.IntType(8).as_pointer()
        intp = context.get_value_type(types.intp)
        fnty = ir.FunctionType(ir.IntType(32), [char, char, char, intp, intp, intp,
                                                voidp, voidp, intp, voidp, intp, voidp,
                                                voidp, intp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")
        dt = sig.args[9].dtype
        one = cgutils.alloca_once_value(builder, context.get_constant(dt, 1))
        beta = cgutils.alloca_once_value(
            builder, context.cast(builder, args[12], sig.args[12], dt))

        def size(i):
            return context.cast(builder, args[i], sig.args[i], types.intp)

        def ptr(i):  # the address of element ``args[i + 1]`` of array ``args[i]``
            data = context.make_array(sig.args[i])(context, builder, args[i]).data
            return builder.bitcast(builder.gep(data, [size(i + 1)]), voidp)

        notrans = ir.Constant(char, ord("n"))
        return builder.call(fn, [ir.Constant(char, ord(kind)), notrans, notrans,
                                 size(1), size(0), size(2), builder.bitcast(one, voidp),
                                 ptr(6), size(8), ptr(3), size(5),
                                 builder.bitcast(beta, voidp), ptr(9), size(11)])
    return sig, codegen
