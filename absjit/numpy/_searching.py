"""Where things are and how many: ``nonzero``, ``where`` (whose one-argument form is
``nonzero``), ``argwhere``, ``flatnonzero``, ``isin``, ``select``, ``piecewise``,
``bincount``, ``histogram`` (also 2-D and N-D) and ``interp``.

Functions whose result size depends on values (``nonzero`` and friends, ``bincount``)
take ``size=``/``length=`` so they trace at a fixed shape under ``jit``; without it
they need a concrete value, as boolean masks do.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.avals import ConcreteArray
from ..core.dim_assumptions import assume_at_least
from ..core.dims import is_dim, unify_shapes
from ..core.trace import Tracer
from ..errors import ConcretizationTypeError
from . import _ufuncs as uf
from ._creation import arange, asarray, full, zeros
from ._indexing import size_value
from ._promote import check_arraylike, promote_dtypes
from ._ranges import linspace
from ._reductions import any as _any, cumsum, max as _max, min as _min, sum as _sum
from ._shape import concatenate, stack
from ._sorting import argsort, searchsorted
from ._ufuncs import abs as _abs, clip, logical_or, maximum, remainder

__all__ = ["nonzero", "where", "argwhere", "flatnonzero", "isin", "select", "piecewise",
           "bincount", "histogram", "histogram_bin_edges", "histogram2d", "histogramdd",
           "interp"]


def _concrete(x, fn, what):
    """The NumPy value of ``x``, or ``ConcretizationTypeError`` naming the fix."""
    if isinstance(x, Array):
        return x._value
    if isinstance(x, Tracer):
        if isinstance(x.aval, ConcreteArray):
            return x.aval.concrete_value()
        raise ConcretizationTypeError(
            x, f"The size of the result of {fn} depends on the values of its argument, "
               f"so under jit it needs {what}=... (a static upper bound).")
    return np.asarray(x)


def _fill_per_dim(fill_value, ndim):
    if fill_value is None:
        return [0] * ndim
    if np.ndim(fill_value) == 0:
        return [fill_value] * ndim
    fill = list(fill_value)
    if len(fill) != ndim:
        raise ValueError(f"fill_value must be a scalar or a tuple of length {ndim}, got "
                         f"{fill_value!r}")
    return fill


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one int32 array per dimension.

    Parameters
    ----------
    a : array_like
    size : int, optional
        The result length: the first ``size`` indices, padded with ``fill_value``
        (default 0). Required under ``jit``.
    fill_value : scalar or tuple of scalars (one per dimension), optional

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.nonzero(jnp.array([0, 3, 0, 5]))
    (Array([1, 3], dtype=int32),)
    >>> jnp.nonzero(jnp.array([0, 3, 0, 5]), size=3, fill_value=-1)
    (Array([ 1,  3, -1], dtype=int32),)
    """
    check_arraylike("nonzero", a)
    x = asarray(a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    int_t = dtypes.default_int()
    if size is None:
        val = _concrete(x, "nonzero", "size")
        return tuple(Array._new(i.astype(int_t), False) for i in np.nonzero(val))
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"nonzero: size must be non-negative, got {size}")
    fills = _fill_per_dim(fill_value, x.ndim)
    mask = (x != 0).ravel()
    n = mask.shape[0]
    # The k-th non-zero element has k non-zeros up to and including it: scatter each
    # flat position to its rank (ranks past ``size``, and zeros, are dropped).
    rank = cumsum(mask, dtype=int_t) - 1
    slot = where(mask & (rank < size), rank, size)
    order = zeros(size, int_t).at[slot].set(arange(n, dtype=int_t))
    if is_dim(n):  # ranked: possibly empty at run time
        count = mask.sum(dtype=int_t)
    else:
        count = rank[-1] + 1 if n else asarray(0, int_t)
    valid = arange(size, dtype=int_t) < count
    out = []
    stride = 1  # of each axis in the flat index, from the last axis back
    for dim in range(x.ndim - 1, -1, -1):
        extent = x.shape[dim]
        if is_dim(extent) or is_dim(stride):  # sizes known at run time (ranked)
            # (an empty axis leaves no valid entry: its remainder is never used)
            idx = (order // asarray(stride, int_t)) % asarray(extent, int_t)
        else:
            idx = (order // int(stride)) % max(int(extent), 1)
        out.append(where(valid, idx, asarray(fills[dim]).astype(int_t)))
        stride = stride * extent
    out.reverse()
    return tuple(out)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``x`` where ``condition`` else ``y``, broadcasting all three.

    The one-argument form is ``nonzero(condition, size=size, fill_value=fill_value)``:
    its shape depends on the values, so under ``jit`` it needs ``size``.

    Examples
    --------
    >>> jnp.where(jnp.array([True, False]), 1., 0)  # doctest: +SKIP
    Array([1., 0.], dtype=float32, weak_type=True)
    >>> jnp.where(jnp.array([0, 3, 5]), size=3, fill_value=-1)  # doctest: +SKIP
    (Array([ 1,  2, -1], dtype=int32),)
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y must be given")
    if size is not None or fill_value is not None:
        raise ValueError("where: size and fill_value only apply to the one-argument form")
    return uf.where(condition, x, y)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements of ``ravel(a)``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.flatnonzero(jnp.array([[0, 1], [2, 0]]))
    Array([1, 2], dtype=int32)
    """
    check_arraylike("flatnonzero", a)
    return nonzero(asarray(a).ravel(), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one row per element (``(N, a.ndim)``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.argwhere(jnp.array([[0, 1], [2, 0]]))
    Array([[0, 1],
           [1, 0]], dtype=int32)
    """
    check_arraylike("argwhere", a)
    x = asarray(a)
    if x.ndim == 0:
        n = size if size is not None else int(bool(_concrete(x != 0, "argwhere", "size")))
        return zeros((n, 0), dtypes.default_int())
    return stack(nonzero(x, size=size, fill_value=fill_value), axis=-1)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element of ``element`` is in ``test_elements`` (boolean, the shape
    of ``element``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.isin(jnp.array([1, 2, 3]), jnp.array([3, 1]))
    Array([ True, False,  True], dtype=bool)
    """
    check_arraylike("isin", element, test_elements)
    e, t = promote_dtypes(element, test_elements)
    found = _any(e[..., None] == t.ravel(), axis=-1)
    return ~found if invert else found


def select(condlist, choicelist, default=0):
    """The element of the first true condition's choice, else ``default``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> x = jnp.arange(5)
    >>> jnp.select([x < 2, x > 3], [x, x * 10], default=-1)
    Array([ 0,  1, -1, -1, 40], dtype=int32)
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist and choicelist must have the same length, got "
                         f"{len(condlist)} and {len(choicelist)}")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [asarray(c) for c in condlist]
    for c in conds:
        if not dtypes.is_bool(c.dtype):
            raise TypeError(f"select: condlist entries must be boolean, got {c.dtype}")
    choices = promote_dtypes(*choicelist, default)
    out = choices[-1]
    for c, ch in zip(reversed(conds), reversed(choices[:-1])):
        out = where(c, ch, out)
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i](x)`` where ``condlist[i]`` holds (a constant may replace a
    function); with one extra function, it applies where no condition holds.

    Every function is evaluated on the whole of ``x``; later conditions win ties, as
    in NumPy. The result has ``x``'s dtype.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> x = jnp.array([-2.0, 0.5, 3.0])
    >>> jnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])
    Array([2.  , 0.25, 9.  ], dtype=float32)
    """
    check_arraylike("piecewise", x)
    x = asarray(x)
    if isinstance(condlist, (list, tuple)):
        conds = [asarray(c) for c in condlist]
    else:  # one array: a single condition of x's rank, or a stack of them
        c = asarray(condlist)
        conds = [c] if c.ndim == x.ndim else [c[i] for i in range(c.shape[0])]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"piecewise: with {n} condition(s) funclist must have {n} or "
                         f"{n + 1} entries, got {len(funclist)}")

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return asarray(v).astype(x.dtype)
    out = zeros(x.shape, x.dtype)
    if len(funclist) == n + 1:
        none = asarray(False)
        for c in conds:
            none = logical_or(none, c)
        out = where(none, out, value(funclist[-1]))
    for c, f in zip(conds, funclist[:n]):
        out = where(c, value(f), out)
    return out


def bincount(x, weights=None, minlength=0, *, length=None):
    """Count (or sum ``weights`` of) each non-negative integer value.

    Parameters
    ----------
    x : array_like of int, 1-D
    weights : array_like, optional
    minlength : int
    length : int, optional
        The result length (values at or past it are dropped); required under ``jit``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.bincount(jnp.array([0, 1, 1, 3]))
    Array([1, 2, 0, 1], dtype=int32)
    """
    check_arraylike("bincount", x)
    x = asarray(x)
    if not dtypes.is_integer(x.dtype):
        raise TypeError(f"bincount: x must be integer, got {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"bincount only accepts 1-D inputs, got shape {x.shape}")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("minlength must be non-negative")
    if length is None:
        val = _concrete(x, "bincount", "length")
        if val.size and val.min() < 0:
            raise ValueError("bincount: x must be non-negative")
        length = max(minlength, int(val.max()) + 1 if val.size else 0)
    else:
        length = operator.index(length)
    if weights is None:
        w = asarray(1, dtypes.default_int())
        out_dtype = dtypes.default_int()
    else:
        check_arraylike("bincount", weights)
        w = asarray(weights)
        if not unify_shapes(w.shape, x.shape, "jnp.bincount"):
            raise ValueError(f"bincount: weights shape {w.shape} must equal x's {x.shape}")
        out_dtype = w.dtype
    # as in JAX: negative values count in bin 0, values past the length are dropped
    return zeros(length, out_dtype).at[maximum(x, 0)].add(w)


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges ``histogram`` uses.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.histogram_bin_edges(jnp.array([0.0, 1.0]), bins=2)
    Array([0. , 0.5, 1. ], dtype=float32)
    """
    check_arraylike("histogram_bin_edges", a)
    a = asarray(a).ravel()
    dt = a.dtype if dtypes.is_inexact(a.dtype) else dtypes.default_float()
    if np.ndim(bins) == 1:
        return asarray(bins).astype(dt)
    bins = operator.index(bins)
    if bins < 1:
        raise ValueError(f"histogram: bins must be positive, got {bins}")
    if range is None:
        lo, hi = _min(a).astype(dt), _max(a).astype(dt)
    else:
        lo, hi = (asarray(v, dt) for v in range)
    # an empty range widens to [lo - 0.5, hi + 0.5], as in NumPy
    same = lo == hi
    lo, hi = where(same, lo - 0.5, lo), where(same, hi + 0.5, hi)
    return linspace(lo, hi, bins + 1, dtype=dt)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts of ``a`` in ``bins`` (the last bin includes its right edge), and the
    edges.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> counts, edges = jnp.histogram(jnp.array([0.0, 0.2, 0.9, 1.0]), bins=2)
    >>> counts
    Array([2., 2.], dtype=float32)
    """
    check_arraylike("histogram", a)
    edges = histogram_bin_edges(a, bins, range)
    x = asarray(a).ravel()
    nb = edges.shape[0]
    w = asarray(1.0, edges.dtype) if weights is None else asarray(weights).ravel()
    idx = searchsorted(edges, x, side="right")
    idx = where(x == edges[-1], nb - 1, idx)
    counts = zeros(nb + 1, w.dtype if weights is not None else edges.dtype).at[idx].add(w)
    counts = counts[1:-1]
    if density:
        widths = edges[1:] - edges[:-1]
        counts = counts / widths / _sum(counts)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts of the ``(N, D)`` points of ``sample`` in a D-dimensional grid of bins,
    and the edges along each dimension (each as ``histogram_bin_edges`` makes them; the
    last bin of each dimension includes its right edge). Without weights the counts are
    integers, as in JAX.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> pts = jnp.array([[0.0, 0.0], [0.1, 0.9], [1.0, 1.0]])
    >>> counts, edges = jnp.histogramdd(pts, bins=2)
    >>> counts
    Array([[1, 1],
           [0, 1]], dtype=int32)
    """
    check_arraylike("histogramdd", sample)
    pts = asarray(sample)
    if pts.ndim == 1:
        pts = pts[:, None]
    if pts.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got shape {pts.shape}")
    d = pts.shape[1]
    if is_dim(d):
        raise NotImplementedError("histogramdd: the number of dimensions must be known")
    per_dim_bins = isinstance(bins, (list, tuple)) or np.ndim(bins) == 2
    if per_dim_bins and len(bins) != d:
        raise ValueError(f"histogramdd: bins must have one entry per dimension ({d}), got "
                         f"{len(bins)}")
    if range is not None and len(range) != d:
        raise ValueError(f"histogramdd: range must have one entry per dimension ({d}), "
                         f"got {len(range)}")
    edges, flat, shape = [], None, []
    for k in builtins.range(d):
        x = pts[:, k]
        e = histogram_bin_edges(x, bins[k] if per_dim_bins else bins,
                                None if range is None else range[k])
        nb = e.shape[0]
        # 0: left of the first edge, nb: right of the last one (both dropped below)
        idx = where(x == e[-1], nb - 1, searchsorted(e, x, side="right"))
        flat = idx if flat is None else flat * (nb + 1) + idx
        edges.append(e)
        shape.append(nb + 1)
    if weights is None:   # integer counts, as JAX gives (histogram's are floats)
        dt = dtypes.default_int()
        w = asarray(1, dt)
    else:
        check_arraylike("histogramdd", weights)
        w = asarray(weights)
        dt = w.dtype
    size = int(np.prod(shape))
    counts = zeros(size, dt).at[flat].add(w).reshape(shape)
    counts = counts[tuple(slice(1, n - 1) for n in shape)]
    if density:
        volume = asarray(1.0, counts.dtype)
        for k, e in enumerate(edges):
            width = e[1:] - e[:-1]
            volume = volume * width.reshape([-1 if j == k else 1 for j in builtins.range(d)])
        counts = counts / volume / _sum(counts)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts of the points ``(x[i], y[i])`` in a 2-D grid of bins, and the x and y
    edges (``bins``: a number or edges for both, or one per axis).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> counts, xe, ye = jnp.histogram2d(jnp.array([0.0, 1.0]), jnp.array([0.0, 1.0]),
    ...                                  bins=2)
    >>> counts
    Array([[1, 0],
           [0, 1]], dtype=int32)
    """
    check_arraylike("histogram2d", x, y)
    xa, ya = promote_dtypes(x, y)
    if np.ndim(bins) == 1 and len(bins) != 2:
        bins = [bins, bins]   # one array of edges for both axes
    counts, (xe, ye) = histogramdd(stack([xa, ya], axis=1), bins, range, weights, density)
    return counts, xe, ye


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x`` (``xp``
    increasing), as ``numpy.interp``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.interp(jnp.array([0.5, 1.5, 3.0]), jnp.array([0.0, 1.0, 2.0]),
    ...            jnp.array([0.0, 10.0, 20.0]))
    Array([ 5., 15., 20.], dtype=float32)
    """
    check_arraylike("interp", x, xp, fp)
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape or xp.shape[0] == 0:
        raise ValueError("interp: xp and fp must be one-dimensional arrays of equal, "
                         f"non-zero length; got shapes {xp.shape} and {fp.shape}")
    dt = dtypes.default_float()
    x, xp = promote_dtypes(x.astype(dt) if not dtypes.is_inexact(x.dtype) else x,
                           xp.astype(dt) if not dtypes.is_inexact(xp.dtype) else xp)
    if not dtypes.is_inexact(fp.dtype):
        fp = fp.astype(dt)
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("interp: left and right have no effect with a period")
        period = asarray(period, x.dtype)
        period = _abs(period)
        x = remainder(x, period)
        xp = remainder(xp, period)
        order = argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    if is_dim(n):  # never 1 (unit sizes are static): at least 2 points, checked at entry
        assume_at_least(n, 2, "jnp.interp needs at least one point in xp")
        i = clip(searchsorted(xp, x, side="right"), 1, size_value(n - 1, dtypes.default_int()))
    else:
        i = clip(searchsorted(xp, x, side="right"), 1, max(n - 1, 1))
    if n == 1:
        out = full(x.shape, fp[0], fp.dtype)
    else:
        dx = xp[i] - xp[i - 1]
        delta = x - xp[i - 1]
        safe = where(dx == 0, 1, dx)
        frac = (delta / safe).astype(fp.dtype)
        out = where(dx == 0, fp[i], fp[i - 1] + frac * (fp[i] - fp[i - 1]))
    if period is None:
        out = where(x < xp[0], fp[0] if left is None else asarray(left, fp.dtype), out)
        out = where(x > xp[-1], fp[-1] if right is None else asarray(right, fp.dtype), out)
    return out
