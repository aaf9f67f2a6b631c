"""The parts of the block evaluator (:mod:`.block_vm`) its generated source imports:
an address as a pointer, and the strided loads and stores of a block."""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload

from ..helper_jit import helper

__all__ = ["_address", "_gather", "_scatter"]


@intrinsic
def _address(typingctx, addr):
    """The buffer at address ``addr`` (an integer) as a ``void*`` for ``numba.carray``."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], ir.IntType(8).as_pointer())
    return types.voidptr(addr), codegen

@intrinsic
def _copy_same(typingctx, dst, i, src, j, n):
    """``dst[i:i + n] = src[j:j + n]`` for arrays of one dtype, as one ``memcpy`` (a
    row of a few dozen elements copies ~4x faster than by a vectorised loop, whose
    scalar remainder is most of a short row)."""
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)
            and dst.dtype == src.dtype):
        return None

    def codegen(context, builder, sig, args):
        d, di, s, si, count = args

        def at(i, array, index):  # the address of element ``index`` of argument ``i``
            data = context.make_array(sig.args[i])(context, builder, array).data
            return cgutils.gep(builder, data, index)
        dptr, sptr = at(0, d, di), at(2, s, si)
        size = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
        cgutils.raw_memcpy(builder, dptr, sptr, count, size)
        return context.get_dummy_value()
    return types.none(dst, types.intp, src, types.intp, types.intp), codegen


def _move(dst, i, src, j, n):
    """``dst[i:i + n] = src[j:j + n]``, converting to ``dst``'s dtype (a boolean is
    ``x != 0``)."""


@overload(_move)
def _move_impl(dst, i, src, j, n):
    if dst.dtype == src.dtype:
        return lambda dst, i, src, j, n: _copy_same(dst, i, src, j, n)
    if dst.dtype == types.boolean:
        def to_bool(dst, i, src, j, n):
            dv, sv = dst[i:i + n], src[j:j + n]
            for q in range(n):
                dv[q] = sv[q] != 0
        return to_bool

    def convert(dst, i, src, j, n):
        dv, sv = dst[i:i + n], src[j:j + n]
        for q in range(n):
            dv[q] = sv[q]
    return convert


@helper
def _index(pos, s1, s2, s3):
    """The index ``(i0, i1, i2, i3)`` of element ``pos`` of a row-major shape."""
    i3 = pos % s3
    q = pos // s3
    i2 = q % s2
    q = q // s2
    return q // s1, q % s1, i2, i3


@helper
def _next_row(i0, i1, i2, s1, s2):
    """The first index of the next row (by carrying, without a division)."""
    i2 += 1
    if i2 == s2:
        i2 = 0
        i1 += 1
        if i1 == s1:
            i1 = 0
            i0 += 1
    return i0, i1, i2


@helper
def _gather(r, src, off, t0, t1, t2, t3, s1, s2, s3, start, n):
    end = start + n
    pos = start
    k = 0
    i0, i1, i2, i3 = _index(start, s1, s2, s3)
    while pos < end:
        base = off + i0 * t0 + i1 * t1 + i2 * t2
        m = min(s3 - i3, end - pos)
        rv = r[k:k + m]
        if t3 == 0:
            v = src[base]
            for j in range(m):
                rv[j] = v
        elif t3 == 1:
            _move(r, k, src, base + i3, m)
        else:
            b = base + i3 * t3
            sa = src[b:b + (m - 1) * t3 + 1:t3]
            for j in range(m):
                rv[j] = sa[j]
        k += m
        pos += m
        i3 = 0
        i0, i1, i2 = _next_row(i0, i1, i2, s1, s2)


@helper
def _scatter(r, dst, off, t0, t1, t2, t3, s1, s2, s3, start, n, as_bool):
    end = start + n
    pos = start
    k = 0
    i0, i1, i2, i3 = _index(start, s1, s2, s3)
    while pos < end:
        base = off + i0 * t0 + i1 * t1 + i2 * t2 + i3 * t3
        m = min(s3 - i3, end - pos)
        if t3 == 1:
            _move(dst, base, r, k, m)
        else:
            rv = r[k:k + m]
            da = dst[base:base + (m - 1) * t3 + 1:t3]
            for j in range(m):
                da[j] = (rv[j] != 0) if as_bool else rv[j]
        k += m
        pos += m
        i3 = 0
        i0, i1, i2 = _next_row(i0, i1, i2, s1, s2)
