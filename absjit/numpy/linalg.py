"""``absjit.numpy.linalg``: norms, decompositions and solvers, and the products NumPy
also exposes here.

Norms are written with ``absjit.lax`` reductions and elementwise ops (matrix
``ord=2``/``-2``/``'nuc'`` with the singular values); the decompositions and solvers
live in ``_linalg_decomp.py``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.trace import get_aval
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops.linalg_spectral import svd_p
from ._linalg import matmul, tensordot, vecdot, outer, cross  # noqa: F401
from ._linalg_decomp import *  # noqa: F401,F403
from ._linalg_decomp import __all__ as _decomp_all
from ._promote import asarray_weak, check_arraylike

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
