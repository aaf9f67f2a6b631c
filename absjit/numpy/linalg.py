"""``absjit.numpy.linalg``: norms, decompositions and solvers, and the products NumPy
also exposes here.

Norms are written with ``absjit.lax`` reductions and elementwise ops (matrix
``ord=2``/``-2``/``'nuc'`` with the singular values); the decompositions and solvers
live in ``_linalg_decomp.py``.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..core.trace import get_aval
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops.linalg_spectral import svd_p
from ._creation import asarray
from ._linalg import matmul, tensordot, vecdot, outer, cross  # noqa: F401
from ._linalg import dot
from ._linalg_decomp import *  # noqa: F401,F403
from ._linalg_decomp import __all__ as _decomp_all
from ._misc import matrix_transpose as _mt
from ._promote import asarray_weak, check_arraylike
from ._reductions import any as _any
from ._shape import diagonal as _diagonal, moveaxis, trace as _trace
from ._ufuncs import isnan, where

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "tensordot", "vecdot", "outer",
           "cross"] + list(_decomp_all)


def _inexact(x):
    check_arraylike("norm", x)
    aval = get_aval(x)
    dt = aval.dtype
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    return asarray_weak(x, dt, aval.weak_type)


def _scalar(v, like):
    dt = get_aval(like).dtype
    return np.array(v, dtype=dt)


def _keep(x, axes, ndim, keepdims):
    if not keepdims:
        return x
    shape = list(get_aval(x).shape)
    for a in sorted(axes):
        shape.insert(a, 1)
    return st.reshape(x, tuple(shape))


def _axes(axis, ndim, name="norm"):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: duplicate axes {tuple(axis)}")
    return tuple(out)


def _vector_norm(x, axes, ord):
    """``ord``-norm over ``axes`` of a float/complex ``x`` (absolute values taken)."""
    if ord is None or ord == 2:
        if get_aval(x).dtype.kind == "c":
            sq = ew.add(ew.mul(ew.real(x), ew.real(x)), ew.mul(ew.imag(x), ew.imag(x)))
        else:
            sq = ew.mul(x, x)
        return ew.sqrt(red.reduce_sum(sq, axes))
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    a = ew.abs(x)
    if ord == np.inf:
        return red.reduce_max(a, axes)
    if ord == -np.inf:
        return red.reduce_min(a, axes)
    if ord == 0:
        nz = ew.ne(a, _scalar(0, a))
        return red.reduce_sum(ew.convert_element_type(nz, get_aval(a).dtype), axes)
    if ord == 1:
        return red.reduce_sum(a, axes)
    p = _scalar(float(ord), a)
    return ew.pow(red.reduce_sum(ew.pow(a, p), axes), ew.div(_scalar(1, a), p))


def _matrix_norm(x, row, col, ord):
    if ord in (None, "fro", "f"):
        return _vector_norm(x, (row, col), 2)
    a = ew.abs(x)
    if ord in (1, -1):
        sums = red.reduce_sum(a, (row,))
        c = col - (col > row)
        return (red.reduce_max if ord == 1 else red.reduce_min)(sums, (c,))
    if ord in (np.inf, -np.inf):
        sums = red.reduce_sum(a, (col,))
        r = row - (row > col)
        return (red.reduce_max if ord == np.inf else red.reduce_min)(sums, (r,))
    if ord in (2, -2, "nuc"):
        # Singular values of the matrices spanned by (row, col), the other axes kept in
        # order as batch axes.
        ndim = len(get_aval(x).shape)
        others = tuple(i for i in range(ndim) if i not in (row, col))
        s = svd_p.bind(st.transpose(x, others + (row, col)), full_matrices=False,
                       compute_uv=False)[0]
        reduce = {2: red.reduce_max, -2: red.reduce_min, "nuc": red.reduce_sum}[ord]
        return reduce(s, (len(others),))
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices")


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm (``numpy.linalg.norm``).

    Parameters
    ----------
    x : array_like
    ord : {None, int, float, inf, -inf, 'fro'}, optional
        Vector norms: None/2 (Euclidean), 1, inf, -inf, 0 (count of non-zeros), any p.
        Matrix norms (``axis`` a pair, or ``x`` 2-D with ``axis=None`` and ``ord`` given):
        'fro', 1, -1, inf, -inf, 2, -2 (largest/smallest singular value), 'nuc' (their
        sum).
    axis : None, int or pair of ints
    keepdims : bool

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.norm(jnp.array([3., 4.]))
    Array(5., dtype=float32)
    """
    x = _inexact(x)
    ndim = len(get_aval(x).shape)
    if axis is None:
        if ord is None:
            out = _vector_norm(x, tuple(range(ndim)), None)
            return _keep(out, tuple(range(ndim)), ndim, keepdims)
        if ndim == 1:
            axis = (0,)
        elif ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError(f"norm: improper number of dimensions ({ndim}) to norm with "
                             f"ord={ord!r}; pass axis")
    axes = _axes(axis, ndim)
    if len(axes) == 1:
        out = _vector_norm(x, axes, ord)
    elif len(axes) == 2:
        out = _matrix_norm(x, axes[0], axes[1], ord)
    else:
        raise ValueError(f"norm: axis must be an int or a pair, got {axis!r}")
    return _keep(out, axes, ndim, keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector norm over ``axis`` (all axes when None), as in the array API.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.vector_norm(jnp.ones((2, 2)))
    Array(2., dtype=float32)
    """
    x = _inexact(x)
    ndim = len(get_aval(x).shape)
    axes = _axes(axis, ndim)
    return _keep(_vector_norm(x, axes, ord), axes, ndim, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.matrix_norm(jnp.ones((2, 2)), ord=1)
    Array(2., dtype=float32)
    """
    x = _inexact(x)
    ndim = len(get_aval(x).shape)
    if ndim < 2:
        raise ValueError(f"matrix_norm: requires rank >= 2, got rank {ndim}")
    return _keep(_matrix_norm(x, ndim - 2, ndim - 1, ord), (ndim - 2, ndim - 1), ndim,
                 keepdims)


# ---------------------------------------------------------------------------
# cond, multi_dot, tensorinv, tensorsolve and the array-API trace/diagonal
# ---------------------------------------------------------------------------
def cond(x, p=None):
    """The condition number of the matrices in ``x`` (last two axes) in the norm ``p``.

    ``p`` of None, 2 or -2 uses the singular values; the other norms multiply
    ``norm(x, p)`` and ``norm(inv(x), p)`` (square matrices only). A singular matrix
    gives ``inf`` (unless ``x`` itself holds NaN), as in JAX.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.cond(jnp.array([[2.0, 0.0], [0.0, 0.5]]))
    Array(4., dtype=float32)
    """
    x = _inexact(x)
    shape = get_aval(x).shape
    if len(shape) < 2:
        raise ValueError(f"jnp.linalg.cond: requires rank >= 2, got shape {shape}")
    if p is None or p in (2, -2):
        s = svdvals(x)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    else:
        if shape[-1] != shape[-2]:
            raise ValueError(f"jnp.linalg.cond: norm {p!r} requires square matrices, got "
                             f"shape {shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # A singular matrix: NaN from 0/0 or from the inverse becomes infinity.
    return where(isnan(r) & ~_any(isnan(x), axis=(-2, -1)), np.inf, r)


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (the first and last may be vectors), with the
    multiplication order chosen to need the fewest operations.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.multi_dot([jnp.ones(3), jnp.ones((3, 2)), jnp.ones(2)])
    Array(6., dtype=float32)
    """
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"jnp.linalg.multi_dot: expected at least two arrays, got "
                         f"{len(arrays)}")
    check_arraylike("multi_dot", *arrays)
    arrays = [asarray(a) for a in arrays]
    if arrays[0].ndim not in (1, 2) or arrays[-1].ndim not in (1, 2) or \
            any(a.ndim != 2 for a in arrays[1:-1]):
        raise ValueError("jnp.linalg.multi_dot: the first and last arrays must be 1-D or "
                         "2-D and the others 2-D")
    first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
    mats = list(arrays)
    if first_vec:
        mats[0] = mats[0][None, :]
    if last_vec:
        mats[-1] = mats[-1][:, None]
    # The classic chain-order dynamic programme on the (static) shapes.
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    n = len(mats)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return dot(product(i, k), product(k + 1, j), precision=precision)
    out = product(0, n - 1)
    if first_vec:
        out = out[0]
    if last_vec:
        out = out[..., 0]
    return out


def tensorinv(a, ind=2):
    """The inverse of ``a`` seen as a linear map from its last axes to its first ``ind``
    axes: ``tensordot(tensorinv(a, ind), a, ind)`` is the identity.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.tensorinv(2 * jnp.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    x = _inexact(a)
    shape = tuple(get_aval(x).shape)
    ind = int(ind)
    if ind <= 0:
        raise ValueError(f"jnp.linalg.tensorinv: ind must be a positive integer, got {ind}")
    out_shape, in_shape = shape[:ind], shape[ind:]
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if rows != cols:
        raise ValueError(f"jnp.linalg.tensorinv: shape {shape} with ind={ind} is not "
                         "square")
    inv_m = inv(st.reshape(x, (rows, cols)))
    return st.reshape(inv_m, in_shape + out_shape)


def tensorsolve(a, b, axes=None):
    """The ``x`` with ``tensordot(a, x, x.ndim) == b``; ``axes`` first moves those axes
    of ``a`` to the end.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.tensorsolve(2 * jnp.eye(4).reshape(2, 2, 4), jnp.ones((2, 2)))
    Array([0.5, 0.5, 0.5, 0.5], dtype=float32)
    """
    check_arraylike("tensorsolve", a, b)
    x, y = _inexact(a), _inexact(b)
    dt = dtypes.result_type(x, y)
    x, y = asarray_weak(x, dt, False), asarray_weak(y, dt, False)
    if axes is not None:
        axes = [axes] if isinstance(axes, int) else list(axes)
        nd = len(get_aval(x).shape)
        x = moveaxis(x, axes, [nd - len(axes) + i for i in range(len(axes))])
    shape = tuple(get_aval(x).shape)
    bshape = tuple(get_aval(y).shape)
    if shape[:len(bshape)] != bshape:
        raise ValueError(f"jnp.linalg.tensorsolve: a's leading shape {shape} must match "
                         f"b's shape {bshape}")
    sol_shape = shape[len(bshape):]
    rows, cols = math.prod(bshape), math.prod(sol_shape)
    if rows != cols:
        raise ValueError(f"jnp.linalg.tensorsolve: a of shape {shape} is not square over "
                         f"b's shape {bshape}")
    sol = solve(st.reshape(x, (rows, cols)), st.reshape(y, (rows,)))
    return st.reshape(sol, sol_shape)


def trace(x, /, *, offset=0, dtype=None):
    """The sums of the diagonals of the matrices in the last two axes (array API).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.trace(jnp.ones((2, 3, 3)))
    Array([3., 3.], dtype=float32)
    """
    check_arraylike("trace", x)
    if len(get_aval(x).shape) < 2:
        raise ValueError("jnp.linalg.trace: requires rank >= 2")
    return _trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices in the last two axes (array API).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.diagonal(jnp.arange(4).reshape(2, 2))
    Array([0, 3], dtype=int32)
    """
    check_arraylike("diagonal", x)
    if len(get_aval(x).shape) < 2:
        raise ValueError("jnp.linalg.diagonal: requires rank >= 2")
    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


def matrix_transpose(x, /):
    """The matrices in the last two axes, transposed (array API).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.matrix_transpose(jnp.ones((2, 3))).shape
    (3, 2)
    """
    return _mt(x)


__all__ += ["cond", "multi_dot", "tensorinv", "tensorsolve", "trace", "diagonal",
            "matrix_transpose"]
