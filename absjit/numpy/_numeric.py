"""Differences, gradients and integrals, covariance, polynomials and ``nan_to_num``,
written with ``jnp``."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ._creation import asarray, ones, zeros_like
from ._linalg import matmul, outer
from ._promote import asarray_weak, check_arraylike, promote_dtypes
from ._reductions import cumprod, sum as _sum
from ._shape import broadcast_to, concatenate, diagonal, flip, moveaxis
from ._ufuncs import clip, imag, isnan, isneginf, isposinf, real, sqrt, where

__all__ = ["diff", "ediff1d", "cov", "corrcoef", "polyval", "nan_to_num", "trapezoid",
           "gradient", "vander", "polyfit"]


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
    d = diagonal(c)
    std = sqrt(d.real if dtypes.is_complex(d.dtype) else d)
    c = c / std[:, None] / std[None, :]
    if dtypes.is_complex(c.dtype):
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
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return (re + 1j * im).astype(x.dtype)
    info = dtypes.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), asarray(nan, x.dtype), x)
    out = where(isposinf(out), asarray(posinf, x.dtype), out)
    return where(isneginf(out), asarray(neginf, x.dtype), out)


# ---------------------------------------------------------------------------
# trapezoid, gradient
# ---------------------------------------------------------------------------
def _inexact(*args):
    """The arguments cast to their promoted dtype, made inexact (shapes untouched)."""
    out = promote_dtypes(*args)
    if not dtypes.is_inexact(out[0].dtype):
        weak = all(dtypes.is_weakly_typed(a) for a in out)
        out = [asarray_weak(a, dtypes.default_float(), weak) for a in out]
    return out


def _axis(name, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integrate ``y`` along ``axis`` with the trapezoidal rule, at sample points ``x``
    (or spacing ``dx``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.trapezoid(jnp.array([1.0, 2.0, 3.0]), dx=0.5)
    Array(2., dtype=float32)
    """
    check_arraylike("trapezoid", y)
    if x is None:
        check_arraylike("trapezoid", dx)
        y, d = _inexact(y, dx)
    else:
        check_arraylike("trapezoid", x)
        y, x = _inexact(y, x)
    if y.ndim == 0:
        raise ValueError("trapezoid: y must have at least one dimension")
    axis = _axis("trapezoid", axis, y.ndim)
    y = moveaxis(y, axis, -1)
    if x is not None:
        if x.ndim == 1:
            d = diff(x)
        else:
            d = moveaxis(diff(x, axis=axis), axis, -1)
    mid = y[..., 1:] + y[..., :-1]
    if np.ndim(d) == 0:
        return d * _sum(mid, axis=-1) * 0.5
    return _sum(d * mid, axis=-1) * 0.5


def _spacing(h, n, dt):
    """Check one spacing argument of :func:`gradient`: a scalar or ``n`` coordinates."""
    check_arraylike("gradient", h)
    h = asarray_weak(h, dt, dtypes.is_weakly_typed(h)) if not isinstance(h, (int, float)) \
        else h
    if np.ndim(h) == 0:
        return h, False
    if np.ndim(h) != 1 or np.shape(h)[0] != n:
        raise ValueError(f"gradient: a spacing array must be 1-D with the axis's length "
                         f"{n}, got shape {np.shape(h)}")
    return h, True


def _gradient_along(f, axis, h):
    """Second-order central differences inside, first-order ones at the two ends."""
    n = f.shape[axis]
    g = moveaxis(f, axis, -1)
    h, coords = _spacing(h, n, f.dtype)
    if coords:
        hs = diff(h)
        hl, hr = hs[:-1], hs[1:]
        inner = (-hr / (hl * (hl + hr)) * g[..., :-2] + (hr - hl) / (hl * hr) * g[..., 1:-1]
                 + hl / (hr * (hl + hr)) * g[..., 2:])
        first = (g[..., 1:2] - g[..., :1]) / hs[0]
        last = (g[..., -1:] - g[..., -2:-1]) / hs[-1]
    else:
        inner = (g[..., 2:] - g[..., :-2]) / (2 * h) if not isinstance(h, (int, float)) \
            else (g[..., 2:] - g[..., :-2]) * (0.5 / h)
        first = (g[..., 1:2] - g[..., :1]) / h
        last = (g[..., -1:] - g[..., -2:-1]) / h
    out = concatenate([first, inner, last], axis=-1)
    return moveaxis(out.astype(f.dtype), -1, axis)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of the sampled function ``f``: central differences inside, one-sided
    at the ends, for each axis (a list; one array when there is one axis).

    ``varargs`` gives the spacing: nothing (1), one value for every axis, or one per
    axis, each a scalar step or the sample coordinates along that axis. Only first-order
    edges are computed (``edge_order`` must be None, as in JAX).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.gradient(jnp.array([1.0, 4.0, 9.0, 16.0]))
    Array([3., 4., 6., 7.], dtype=float32)
    """
    if edge_order is not None:
        raise NotImplementedError("gradient: edge_order is not supported (the edges are "
                                  "first-order differences)")
    check_arraylike("gradient", f)
    f = _inexact(f)[0]
    if axis is None:
        axes = tuple(range(f.ndim))
    elif isinstance(axis, (list, tuple)):
        axes = tuple(_axis("gradient", a, f.ndim) for a in axis)
    else:
        axes = (_axis("gradient", axis, f.ndim),)
    if not varargs:
        spacings = (1.0,) * len(axes)
    elif len(varargs) == 1:
        spacings = varargs * len(axes)
    elif len(varargs) == len(axes):
        spacings = varargs
    else:
        raise TypeError(f"gradient: {len(varargs)} spacing arguments for {len(axes)} axes")
    for a in axes:
        if f.shape[a] < 2:
            raise ValueError(f"gradient: axis {a} has {f.shape[a]} element(s); at least 2 "
                             "are needed to estimate a gradient")
    out = [_gradient_along(f, a, h) for a, h in zip(axes, spacings)]
    return out[0] if len(out) == 1 else out


# ---------------------------------------------------------------------------
# vander, polyfit
# ---------------------------------------------------------------------------
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of ``x``: columns are powers of ``x`` (decreasing unless
    ``increasing``), built by running products so integer powers are exact.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.vander(jnp.array([1, 2, 3]), 3)
    Array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]], dtype=int32)
    """
    check_arraylike("vander", x)
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be one-dimensional, got shape {x.shape}")
    if x.dtype == np.bool_:
        raise TypeError("vander: boolean x is not supported; cast it to a number first")
    n = x.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError(f"vander: N must be non-negative, got {n}")
    first = ones((x.shape[0], min(n, 1)), x.dtype)
    if dtypes.is_weakly_typed(x):
        first = asarray_weak(first, x.dtype, True)
    cols = concatenate([first, broadcast_to(x[:, None], (x.shape[0], max(n - 1, 0)))], axis=1)
    out = cumprod(cols, axis=1) if n > 1 else cols
    return out if increasing else flip(out, axis=1)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares fit of a polynomial of degree ``deg`` to the points ``(x, y)``;
    the coefficients come highest power first (one column per column of a 2-D ``y``).

    ``full=True`` also returns the residuals, rank, singular values and ``rcond``;
    ``cov=True`` (or ``'unscaled'``) the covariance of the coefficients. ``deg`` must be
    a Python int (it sets the shape of the result).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> x = jnp.array([0.0, 1.0, 2.0, 3.0])
    >>> jnp.polyfit(x, 2 * x + 1, 1).round(4)
    Array([2., 1.], dtype=float32)
    """
    # imported on first use (start-up time): _linalg_decomp loads with jnp.linalg
    from ._linalg_decomp import inv, lstsq
    check_arraylike("polyfit", x, y)
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError(f"polyfit: deg must be non-negative, got {deg}")
    x, y = _inexact(x, y)
    if x.ndim != 1:
        raise TypeError(f"polyfit: x must be a 1-D vector, got shape {x.shape}")
    if y.ndim not in (1, 2):
        raise TypeError(f"polyfit: y must be 1-D or 2-D, got shape {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise TypeError(f"polyfit: x and y must have the same length, got {x.shape[0]} and "
                        f"{y.shape[0]}")
    order = deg + 1
    m = x.shape[0]
    if rcond is None:
        rcond = m * float(dtypes.finfo(x.dtype).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        check_arraylike("polyfit", w)
        w = _inexact(w, x)[0]
        if w.ndim != 1 or w.shape[0] != m:
            raise TypeError(f"polyfit: w must be 1-D with the length of x, got shape "
                            f"{w.shape}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    # Scale the columns to unit norm: the Vandermonde matrix is badly conditioned.
    scale = sqrt(_sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, asarray(rcond)
    if cov:
        vbase = inv(lhs.T @ lhs) / outer(scale, scale)
        if cov == "unscaled":
            fac = 1
        else:
            if m <= order:
                raise ValueError("polyfit: the fit needs more points than coefficients to "
                                 "scale the covariance")
            fac = resids / (m - order)
        if y.ndim == 1:
            return c, vbase * fac
        return c, vbase[:, :, None] * fac
    return c
