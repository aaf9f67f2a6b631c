"""Matrix helpers written with lax primitives, shared by the decomposition rules
(``linalg_decomp``, ``linalg_spectral``) and the public linear-algebra modules.

Every helper works on the last two axes and treats the leading axes as a batch; all of
them are compositions of existing primitives, so they differentiate, batch and compile
like any other lax code.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.trace import get_aval
from . import elementwise as ew
from . import reductions as red
from . import structural as st
from .linalg import dot_general

__all__ = ["shape_of", "dtype_of", "check_matrix_dtype", "const", "full", "mT", "H",
           "matmul", "tri_mask", "tril", "triu", "eye", "diagonal", "diag_embed",
           "real_dtype", "is_complex", "rank_error", "out_aval"]

_LINALG_DTYPES = ("float32", "float64", "complex64", "complex128")


def shape_of(x) -> tuple:
    return tuple(get_aval(x).shape)


def dtype_of(x) -> np.dtype:
    return get_aval(x).dtype


def is_complex(x_or_dtype) -> bool:
    dt = x_or_dtype if isinstance(x_or_dtype, np.dtype) else dtype_of(x_or_dtype)
    return dt.kind == "c"


def real_dtype(dt) -> np.dtype:
    dt = np.dtype(dt)
    return np.dtype(np.float32) if dt == np.complex64 else \
        np.dtype(np.float64) if dt == np.complex128 else dt


def check_matrix_dtype(name: str, aval) -> None:
    """LAPACK computes in float32/float64/complex64/complex128 only."""
    if aval.dtype.name not in _LINALG_DTYPES:
        raise TypeError(f"lax.linalg.{name} requires a float32, float64, complex64 or "
                        f"complex128 operand, got {aval.dtype.name}")


def rank_error(name: str, shape) -> ValueError:
    return ValueError(f"Argument to {name} must have shape [..., n, n], got {tuple(shape)}.")


def const(value, dtype):
    """A rank-0 constant of ``dtype`` (not weak: it joins strict lax expressions)."""
    return np.array(value, dtype=dtype)


def full(value, shape, dtype):
    return st.broadcast_in_dim(const(value, dtype), tuple(shape), ())


def mT(x):
    """Swap the last two axes."""
    nd = len(shape_of(x))
    perm = tuple(range(nd - 2)) + (nd - 1, nd - 2)
    return st.transpose(x, perm)


def H(x):
    """Conjugate transpose of the last two axes (a transpose for real ``x``)."""
    t = mT(x)
    return ew.conj(t) if is_complex(t) else t


def matmul(a, b):
    """``a @ b`` for operands of equal rank >= 2 and equal batch shapes."""
    nd = len(shape_of(a))
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def tri_mask(shape, k: int = 0, lower: bool = True):
    """Bool mask of ``shape`` (..., m, n): ``col <= row + k`` (lower) or
    ``col >= row + k`` (upper)."""
    nd = len(shape)
    row = st.iota(np.int32, shape, nd - 2)
    col = st.iota(np.int32, shape, nd - 1)
    if k:
        row = ew.add(row, full(k, shape, np.int32))
    return ew.ge(row, col) if lower else ew.le(row, col)


def _masked(x, mask):
    shape = shape_of(x)
    return ew.select(mask, x, full(0, shape, dtype_of(x)))


def tril(x, k: int = 0):
    return _masked(x, tri_mask(shape_of(x), k, True))


def triu(x, k: int = 0):
    return _masked(x, tri_mask(shape_of(x), k, False))


def eye(shape, dtype):
    """Identity matrices of ``shape`` (..., m, n) (ones where row == col)."""
    nd = len(shape)
    on = ew.eq(st.iota(np.int32, shape, nd - 2), st.iota(np.int32, shape, nd - 1))
    return ew.convert_element_type(on, np.dtype(dtype))


def diagonal(x):
    """The main diagonal of (..., m, n) matrices: shape (..., min(m, n))."""
    shape = shape_of(x)
    m, n = shape[-2:]
    k = min(m, n)
    if m != n:
        x = st.slice(x, (0,) * len(shape), shape[:-2] + (k, k))
        shape = shape[:-2] + (k, k)
    nd = len(shape)
    on = ew.eq(st.iota(np.int32, shape, nd - 2), st.iota(np.int32, shape, nd - 1))
    return red.reduce_sum(ew.select(on, x, full(0, shape, dtype_of(x))), (nd - 1,))


def diag_embed(d):
    """(..., n) -> (..., n, n) matrices with ``d`` on the diagonal."""
    shape = shape_of(d)
    n = shape[-1]
    out_shape = shape + (n,)
    nd = len(out_shape)
    b = st.broadcast_in_dim(d, out_shape, tuple(range(nd - 2)) + (nd - 1,))
    on = ew.eq(st.iota(np.int32, out_shape, nd - 2), st.iota(np.int32, out_shape, nd - 1))
    return ew.select(on, b, full(0, out_shape, dtype_of(d)))


def out_aval(shape, dtype) -> ShapedArray:
    return ShapedArray(tuple(shape), np.dtype(dtype), False)
