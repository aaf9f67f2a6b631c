"""``_empty(shape, dtype)``: a new C-ordered array, allocated without Numba's ``np.empty``.

Generated kernels allocate every result and temporary through this intrinsic. Numba's
``np.empty`` is an ``@overload``: the first kernel of a process that calls it compiles the
overload's implementation (with ``np.empty``'s argument parsing and its
``_ol_array_allocate`` helper), about 50-70 ms of a fresh process's first compile of a
selu (0.19 s); Numba's lower-level ``_empty_nd_impl`` still compiles its allocator
trampoline (20-50 ms). The intrinsic emits the allocation itself — the size with
overflow checks, one NRT ``meminfo_alloc_aligned`` call, the array structure — so there
is nothing to compile first.
Semantics are ``np.empty``'s for the arguments kernels pass: a tuple of integers (or one
integer) and a NumPy scalar type (``np.float32``) or dtype; a negative size raises
``ValueError`` as NumPy does, an overflowing one ``ValueError`` ("array is too big").
"""
from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["_empty"]

try:
    from numba.core.imputils import impl_ret_new_ref
    from numba.np.arrayobj import get_itemsize, make_array, populate_array
except ImportError:  # pragma: no cover - a Numba without these internals
    populate_array = None


def _element_type(dtype):
    if isinstance(dtype, types.NumberClass):
        return dtype.instance_type
    if isinstance(dtype, types.DType):
        return dtype.dtype
    return None


def _allocate(context, builder, arrtype, dims):
    """A new C-ordered ``arrtype`` of sizes ``dims`` (LLVM ``intp`` values, each at
    least 0): NumPy's overflow check, then NRT's aligned allocation."""
    ary = make_array(arrtype)(context, builder)
    itemsize = context.get_constant(types.intp, get_itemsize(context, arrtype))
    length = context.get_constant(types.intp, 1)
    overflow = cgutils.false_bit
    for d in dims:
        prod = builder.smul_with_overflow(length, d)
        length = builder.extract_value(prod, 0)
        overflow = builder.or_(overflow, builder.extract_value(prod, 1))
    strides = [itemsize]
    for d in reversed(dims[1:]):
        strides.append(builder.mul(strides[-1], d))
    strides = list(reversed(strides))[:len(dims)]
    prod = builder.smul_with_overflow(length, itemsize)
    nbytes = builder.extract_value(prod, 0)
    overflow = builder.or_(overflow, builder.extract_value(prod, 1))
    with builder.if_then(overflow, likely=False):
        context.call_conv.return_user_exc(
            builder, ValueError,
            ("array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
             "maximum possible size.",))
    align = context.get_constant(types.uint32,
                                 context.get_preferred_array_alignment(arrtype.dtype))
    meminfo = context.nrt.meminfo_alloc_aligned(builder, nbytes, align)
    data = context.nrt.meminfo_data(builder, meminfo)
    intp_t = context.get_value_type(types.intp)
    datatype = context.get_data_type(arrtype.dtype)
    populate_array(ary, data=builder.bitcast(data, datatype.as_pointer()),
                   shape=cgutils.pack_array(builder, dims, ty=intp_t),
                   strides=cgutils.pack_array(builder, strides, ty=intp_t),
                   itemsize=itemsize, meminfo=meminfo)
    return ary


if populate_array is not None:
    @intrinsic
    def _empty(typingctx, shape, dtype):
        """``np.empty(shape, dtype)`` for a tuple of integers (or one integer) and a
        scalar type or dtype."""
        if isinstance(shape, types.Integer):
            sizes = (shape,)
        elif isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer)
                                                         for t in shape):
            sizes = tuple(shape)
        else:
            return None
        elem = _element_type(dtype)
        if elem is None:
            return None
        arrty = types.Array(elem, len(sizes), "C")

        def codegen(context, builder, sig, args):
            if isinstance(sig.args[0], types.Integer):
                raw = [args[0]]
            else:
                raw = cgutils.unpack_tuple(builder, args[0], len(sizes))
            dims = [context.cast(builder, v, t, types.intp) for v, t in zip(raw, sizes)]
            zero = context.get_constant(types.intp, 0)
            for d in dims:
                with builder.if_then(builder.icmp_signed("<", d, zero), likely=False):
                    context.call_conv.return_user_exc(
                        builder, ValueError, ("negative dimensions are not allowed",))
            ary = _allocate(context, builder, arrty, dims)
            return impl_ret_new_ref(context, builder, arrty, ary._getvalue())
        return arrty(shape, dtype), codegen
else:  # pragma: no cover
    @numba.njit(inline="always")
    def _empty(shape, dtype):
        return np.empty(shape, dtype)
