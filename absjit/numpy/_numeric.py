"""Differences, covariance, polynomials and ``nan_to_num``, written with ``jnp``."""
from __future__ import annotations

import operator

from .. import dtypes
from ._creation import asarray
from ._promote import check_arraylike, promote_dtypes

__all__ = ["diff", "ediff1d", "cov", "corrcoef", "polyval", "nan_to_num"]


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.diff(jnp.array([1, 4, 9, 16]))
    Array([3, 5, 7], dtype=int32)
    """
    check_arraylike("diff", a)
    x = asarray(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional; got 0d")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"diff: axis {axis} is out of bounds for an array of rank {x.ndim}")
    axis %= x.ndim
    from ._shape import broadcast_to, concatenate
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        e = asarray(extra)
        if e.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            e = broadcast_to(e, tuple(shape))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        seq = [p for p in (parts[0], x, parts[1]) if p is not None]
        x = concatenate(promote_dtypes(*seq), axis=axis)
    if n == 0:
        return x
    lo = [slice(None)] * x.ndim
    hi = [slice(None)] * x.ndim
    lo[axis], hi[axis] = slice(None, -1), slice(1, None)
    bool_x = dtypes.is_bool(x.dtype)
    for _ in range(n):
        x = (x[tuple(hi)] != x[tuple(lo)]) if bool_x else x[tuple(hi)] - x[tuple(lo)]
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of ``ravel(ary)``, with optional values
    before and after.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.ediff1d(jnp.array([1, 2, 4]), to_begin=-9)
    Array([-9,  1,  2], dtype=int32)
    """
    check_arraylike("ediff1d", ary)
    x = asarray(ary).ravel()
    out = x[1:] - x[:-1]
    from ._shape import concatenate
    pieces = []
    if to_begin is not None:
        pieces.append(asarray(to_begin).ravel().astype(out.dtype))
    pieces.append(out)
    if to_end is not None:
        pieces.append(asarray(to_end).ravel().astype(out.dtype))
    return concatenate(pieces) if len(pieces) > 1 else out


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables in ``m`` (rows, or columns with
    ``rowvar=False``), with NumPy's weighting.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.cov(jnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    Array([[ 1., -1.],
           [-1.,  1.]], dtype=float32)
    """
    check_arraylike("cov", m)
    from ._reductions import sum as _sum
    from ._shape import concatenate
    from ._ufuncs import where
    x = asarray(m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    dt = x.dtype if dtypes.is_inexact(x.dtype) else dtypes.default_float()
    x = x.astype(dt)
    x = x.reshape(1, -1) if x.ndim < 2 else x
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        check_arraylike("cov", y)
        yy = asarray(y)
        if yy.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        yy = yy.reshape(1, -1) if yy.ndim < 2 else yy
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x, yy = promote_dtypes(x, yy)
        x = concatenate([x, yy], axis=0)
        dt = x.dtype
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        f = asarray(fweights)
        if f.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if f.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        w = f.astype(dt)
    if aweights is not None:
        aw = asarray(aweights)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != x.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aw = aw.astype(dt)
        w = aw if w is None else w * aw
    if w is None:
        avg = x.mean(axis=1)
        w_sum = asarray(x.shape[1], dt)
        fact = w_sum - ddof
    else:
        w_sum = _sum(w)
        avg = _sum(x * w, axis=1) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * _sum(w * aw) / w_sum
    fact = where(fact <= 0, 0.0, fact).astype(dt)
    xc = x - avg[:, None]
    xw = xc if w is None else xc * w
    from ._linalg import matmul
    c = matmul(xw, xc.T.conj()) / fact
    return c.squeeze() if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients (``cov`` normalised by the standard
    deviations, clipped to ``[-1, 1]``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.corrcoef(jnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    Array([[ 1., -1.],
           [-1.,  1.]], dtype=float32)
    """
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    from ._shape import diagonal
    from ._ufuncs import clip, sqrt
    d = diagonal(c)
    std = sqrt(d.real if dtypes.is_complex(d.dtype) else d)
    c = c / std[:, None] / std[None, :]
    if dtypes.is_complex(c.dtype):
        from ._ufuncs import real, imag
        return clip(real(c), -1, 1) + 1j * clip(imag(c), -1, 1)
    return clip(c, -1, 1)


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients ``p`` (highest power first) at ``x`` (Horner's
    scheme).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.polyval(jnp.array([1, 0, -1]), jnp.array([2, 3]))
    Array([3, 8], dtype=int32)
    """
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(p, x)
    if p.ndim != 1:
        raise ValueError(f"polyval: p must be one-dimensional, got shape {p.shape}")
    from ._creation import zeros_like
    y = zeros_like(x)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf``
    (default: the largest finite values of the dtype).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf, -1.0]))
    Array([ 0.0000000e+00,  3.4028235e+38, -1.0000000e+00], dtype=float32)
    """
    check_arraylike("nan_to_num", x)
    x = asarray(x)
    if not dtypes.is_inexact(x.dtype):
        return x
    if dtypes.is_complex(x.dtype):
        from ._ufuncs import real, imag
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return (re + 1j * im).astype(x.dtype)
    from ._ufuncs import isnan, isposinf, isneginf, where
    info = dtypes.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), asarray(nan, x.dtype), x)
    out = where(isposinf(out), asarray(posinf, x.dtype), out)
    return where(isneginf(out), asarray(neginf, x.dtype), out)
