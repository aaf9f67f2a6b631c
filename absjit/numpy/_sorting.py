"""``absjit.numpy`` sorting and order statistics, and 1-D convolution.

sort argsort lexsort searchsorted median quantile percentile nanmedian nanquantile
nanpercentile convolve correlate: all written with ``lax.sort``,
``conv_general_dilated`` and a few structural/reduction ops (``unique`` and the set
operations live in ``_setops``).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.dim_assumptions import assume_at_least
from ..core.dims import is_dim, same_shape, unify_shapes
from ..core.shapes import size_of
from ..core.trace import get_aval
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops.conv import conv_general_dilated
from ..ops.indexing import gather
from ..ops.sorting import sort_p
from ._indexing import size_value
from ._promote import asarray_weak, check_arraylike, promote_dtypes

__all__ = ["sort", "argsort", "lexsort", "searchsorted", "median", "quantile",
           "percentile", "nanmedian", "nanquantile", "nanpercentile", "convolve",
           "correlate"]


def _asarray(name, x):
    check_arraylike(name, x)
    aval = get_aval(x)
    return asarray_weak(x, aval.dtype, aval.weak_type)


def _shape(x):
    return tuple(get_aval(x).shape)


def _axis(name, axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _ravel(x):
    s = _shape(x)
    n = size_of(s)
    return x if same_shape(s, (n,)) else st.reshape(x, (n,))


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy of ``a`` along ``axis`` (flattened when ``axis`` is None); NaNs last
    (first when ``descending``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.sort(jnp.array([3, 1, 2]))
    Array([1, 2, 3], dtype=int32)
    """
    if order is not None:
        raise TypeError("sort: the 'order' argument (structured arrays) is not supported")
    a = _asarray("sort", a)
    if axis is None:
        a, axis = _ravel(a), 0
    if not _shape(a):
        return a
    axis = _axis("sort", axis, len(_shape(a)))
    out = sort_p.bind(a, dimension=axis, is_stable=bool(stable), num_keys=1)[0]
    return st.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Indices (int32) that sort ``a`` along ``axis``; ties keep their order.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.argsort(jnp.array([3., 1., 2.]))
    Array([1, 2, 0], dtype=int32)
    """
    if order is not None:
        raise TypeError("argsort: the 'order' argument (structured arrays) is not supported")
    a = _asarray("argsort", a)
    if axis is None:
        a, axis = _ravel(a), 0
    if not _shape(a):
        return asarray_weak(0, np.dtype(np.int32), False)
    shape = _shape(a)
    axis = _axis("argsort", axis, len(shape))
    iota = st.iota(np.int32, shape, axis)
    if not descending:
        return sort_p.bind(a, iota, dimension=axis, is_stable=bool(stable), num_keys=1)[1]
    # Descending with ties in ascending index order: sort the reversed array (ties then
    # come out in descending original index), reverse, and map indices back.
    idx = sort_p.bind(st.rev(a, (axis,)), iota, dimension=axis, is_stable=True,
                      num_keys=1)[1]
    n = size_value(shape[axis] - 1, np.int32)
    return ew.sub(st.broadcast_in_dim(n, shape, ()), st.rev(idx, (axis,)))


def lexsort(keys, axis=-1):
    """Indices that sort by several keys, the **last** key primary (NumPy's ``lexsort``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.lexsort((jnp.array([1, 0, 2]), jnp.array([0, 1, 0])))
    Array([0, 2, 1], dtype=int32)
    """
    keys = [_asarray("lexsort", k) for k in keys]
    if not keys:
        raise TypeError("lexsort: need at least one key")
    shape = _shape(keys[0])
    if not all(unify_shapes(_shape(k), shape, "jnp.lexsort") for k in keys):
        raise ValueError("lexsort: all keys need the same shape, got "
                         f"{', '.join(str(_shape(k)) for k in keys)}")
    if not shape:
        raise ValueError("lexsort: keys must be at least 1-D")
    axis = _axis("lexsort", axis, len(shape))
    iota = st.iota(np.int32, shape, axis)
    return sort_p.bind(*reversed(keys), iota, dimension=axis, is_stable=True,
                       num_keys=len(keys))[-1]


def searchsorted(a, v, side="left", sorter=None, *, method=None):
    """Insertion indices of ``v`` into the sorted 1-D ``a`` (int32).

    ``side='left'`` gives the first suitable index, ``'right'`` the last. Computed by
    comparing every ``v`` with every ``a`` (O(len(a) * v.size)).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.searchsorted(jnp.array([1, 2, 3]), jnp.array([2, 5]))
    Array([1, 3], dtype=int32)
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    check_arraylike("searchsorted", a, v)
    a, v = promote_dtypes(a, v)
    if len(_shape(a)) != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {_shape(a)}")
    if sorter is not None:
        sorter = _asarray("searchsorted", sorter)
        if not dtypes.is_integer(get_aval(sorter).dtype) or _shape(sorter) != _shape(a):
            raise TypeError("searchsorted: sorter must be an integer array shaped like a, "
                            f"got {get_aval(sorter).dtype.name}{list(_shape(sorter))}")
        a = gather(a, [sorter], (0,))
    n = _shape(a)[0]
    vs = _shape(v)
    full = vs + (n,)
    vb = st.broadcast_in_dim(v, full, tuple(range(len(vs))))
    ab = st.broadcast_in_dim(a, full, (len(vs),))
    if side == "left":
        hit = ew.lt(ab, vb)
    else:
        hit = ew.le(ab, vb)
    if dtypes.is_inexact(get_aval(a).dtype):
        # NaN sorts last (NumPy's and JAX's order): every non-NaN element is below a
        # NaN query, and every element, NaN included, is at or below it.
        v_nan = ew.ne(vb, vb)
        below = v_nan if side == "right" else ew.bitwise_and(v_nan, ew.eq(ab, ab))
        hit = ew.bitwise_or(hit, below)
    return red.reduce_sum(ew.convert_element_type(hit, np.int32), (len(vs),))


# ---------------------------------------------------------------------------
# Order statistics
# ---------------------------------------------------------------------------
_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _to_last(a, axis, name):
    """Move ``axis`` (None, int or tuple) to the end as one flattened axis; returns the
    array and the reduced axes (for keepdims)."""
    shape = _shape(a)
    nd = len(shape)
    if axis is None:
        return _ravel(a), tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(_axis(name, ax, nd) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axis!r}")
    keep = [i for i in range(nd) if i not in axes]
    perm = keep + list(axes)
    if perm != list(range(nd)):
        a = st.transpose(a, tuple(perm))
    n = size_of([shape[i] for i in axes])
    return st.reshape(a, tuple(shape[i] for i in keep) + (n,)), axes


def _take_last(s, idx):
    """``s[..., idx]`` for int32 ``idx`` of shape ``s.shape[:-1] + (nq,)``: one gather
    with iota indices for the leading axes."""
    shape = _shape(idx)
    lead = [st.iota(np.int32, shape, d) for d in range(len(shape) - 1)]
    return gather(s, lead + [idx], tuple(range(len(shape))))


def _quantile(name, a, q, axis, method, keepdims, ignore_nan):
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    check_arraylike(name, a, q)
    a = _asarray(name, a)
    dt = get_aval(a).dtype
    if dt.kind == "c":
        raise TypeError(f"{name}: complex inputs are not supported")
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    a = asarray_weak(a, dt, False)
    q = asarray_weak(q, dt, False)
    q_shape = _shape(q)
    nd = len(_shape(a))
    s, axes = _to_last(a, axis, name)
    s = sort_p.bind(s, dimension=len(_shape(s)) - 1, is_stable=True, num_keys=1)[0]
    lead, n = _shape(s)[:-1], _shape(s)[-1]
    nq = int(np.prod(q_shape, dtype=np.int64))
    qf = st.reshape(q, (nq,)) if q_shape != (nq,) else q
    qb = st.broadcast_in_dim(qf, lead + (nq,), (len(lead),))
    nan_mask = ew.ne(s, s)
    if ignore_nan:
        count = red.reduce_sum(ew.convert_element_type(ew.bitwise_not(nan_mask), dt),
                               (len(lead),))
        count = st.broadcast_in_dim(count, lead + (nq,), tuple(range(len(lead))))
    else:
        count = st.broadcast_in_dim(size_value(n, dt), lead + (nq,), ())
    one = np.array(1, dt)
    last = ew.max(ew.sub(count, st.broadcast_in_dim(one, lead + (nq,), ())),
                  st.broadcast_in_dim(np.array(0, dt), lead + (nq,), ()))
    pos = ew.mul(qb, last)
    lo_f = ew.clamp(np.array(0, dt), ew.floor(pos), last)
    hi_f = ew.clamp(np.array(0, dt), ew.ceil(pos), last)
    if is_dim(n):  # ranked: checked when the compiled program is entered
        assume_at_least(n, 1, f"{name} of an empty axis")
    if not is_dim(n) and n == 0:
        nan = st.broadcast_in_dim(np.array(np.nan, dt), lead + (nq,), ())
        out = nan
    else:
        if method == "nearest":
            # Round half to even, as NumPy does.
            lo_f = hi_f = ew.clamp(np.array(0, dt), ew.round(pos, ew.ROUND_TO_NEAREST_EVEN), last)
        lo = _take_last(s, ew.convert_element_type(lo_f, np.int32))
        hi = _take_last(s, ew.convert_element_type(hi_f, np.int32))
        if method in ("lower", "nearest"):
            out = lo
        elif method == "higher":
            out = hi
        elif method == "midpoint":
            out = ew.mul(ew.add(lo, hi), st.broadcast_in_dim(np.array(0.5, dt), _shape(lo), ()))
        else:
            frac = ew.sub(pos, lo_f)
            out = ew.add(lo, ew.mul(ew.sub(hi, lo), frac))
            # lo == hi (q at a sample, or inf endpoints): no interpolation, no inf - inf.
            out = ew.select(ew.eq(lo_f, hi_f), lo, out)
        if ignore_nan:
            empty = ew.eq(count, st.broadcast_in_dim(np.array(0, dt), _shape(count), ()))
            out = ew.select(empty, st.broadcast_in_dim(np.array(np.nan, dt), _shape(out), ()),
                            out)
        else:
            any_nan = red.reduce_or(nan_mask, (len(lead),))
            any_nan = st.broadcast_in_dim(any_nan, lead + (nq,), tuple(range(len(lead))))
            out = ew.select(any_nan, st.broadcast_in_dim(np.array(np.nan, dt), _shape(out), ()),
                            out)
    # Result layout: q's axes first, then the kept axes (NumPy's convention).
    if keepdims:
        kept_shape = tuple(1 if i in axes else _shape(a)[i] for i in range(nd))
    else:
        kept_shape = lead
    out = st.transpose(out, (len(lead),) + tuple(range(len(lead)))) if lead else out
    return st.reshape(out, q_shape + kept_shape)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, interpolation=None):
    """``q``-th quantiles (``q`` in [0, 1]) of ``a`` along ``axis``; NaN if any input
    along the axis is NaN. ``method``: linear, lower, higher, nearest, midpoint.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.quantile(jnp.array([1., 2., 3., 4.]), 0.5)
    Array(2.5, dtype=float32)
    """
    _no_out("quantile", out)
    return _quantile("quantile", a, q, axis, interpolation or method, keepdims, False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, interpolation=None):
    """Like :func:`quantile` with ``q`` in percent.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.percentile(jnp.array([1., 2., 3., 4.]), 50)
    Array(2.5, dtype=float32)
    """
    _no_out("percentile", out)
    return _quantile("percentile", a, _percent(q), axis, interpolation or method,
                     keepdims, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, interpolation=None):
    """:func:`quantile` ignoring NaNs (NaN where a slice is all NaN)."""
    _no_out("nanquantile", out)
    return _quantile("nanquantile", a, q, axis, interpolation or method, keepdims, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, interpolation=None):
    """:func:`percentile` ignoring NaNs."""
    _no_out("nanpercentile", out)
    return _quantile("nanpercentile", a, _percent(q), axis, interpolation or method,
                     keepdims, True)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median along ``axis`` (the 0.5 quantile, linear interpolation).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.median(jnp.array([3, 1, 2, 10]))
    Array(2.5, dtype=float32)
    """
    _no_out("median", out)
    return _quantile("median", a, 0.5, axis, "linear", keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median ignoring NaNs."""
    _no_out("nanmedian", out)
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, True)


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"{name}: the 'out' argument is not supported (arrays "
                                  "are immutable)")


def _percent(q):
    if isinstance(q, (int, float)):
        return q / 100
    q = _asarray("percentile", q)
    dt = get_aval(q).dtype
    if not dtypes.is_inexact(dt):
        q = asarray_weak(q, dtypes.default_float(), get_aval(q).weak_type)
    return ew.div(q, np.array(100, get_aval(q).dtype))


# ---------------------------------------------------------------------------
# convolve / correlate
# ---------------------------------------------------------------------------
def _correlate_1d(name, a, v, mode, flip, precision, preferred_element_type):
    check_arraylike(name, a, v)
    a, v = promote_dtypes(a, v)
    dt = get_aval(a).dtype
    if not dtypes.is_inexact(dt):
        weak = get_aval(a).weak_type
        a = asarray_weak(a, dtypes.default_float(), weak)
        v = asarray_weak(v, dtypes.default_float(), weak)
        dt = dtypes.default_float()
    if len(_shape(a)) != 1 or len(_shape(v)) != 1:
        raise ValueError(f"{name}: only 1-D inputs are supported, got shapes {_shape(a)} "
                         f"and {_shape(v)}")
    n, m = _shape(a)[0], _shape(v)[0]
    if n == 0 or m == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {_shape(a)} and "
                         f"{_shape(v)}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    swapped = m > n
    if swapped:
        a, v, n, m = v, a, m, n
    if flip:
        v = st.rev(v, (0,))
    elif dt.kind == "c":
        v = ew.conj(v)
    if mode == "valid":
        pad = (0, 0)
    elif mode == "full":
        pad = (m - 1, m - 1)
    else:
        pad = (m // 2, m - 1 - m // 2)
    out = conv_general_dilated(st.reshape(a, (1, 1, n)), st.reshape(v, (1, 1, m)), (1,),
                               [pad], precision=precision,
                               preferred_element_type=preferred_element_type)
    out = st.reshape(out, (_shape(out)[-1],))
    if swapped and not flip:
        # correlate(a, v) = conj(rev(correlate(v, a))) and v was conjugated above.
        out = st.rev(out, (0,))
        if dt.kind == "c":
            out = ew.conj(out)
    return out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete 1-D convolution (NumPy's ``convolve``): ``'full'``, ``'same'`` or
    ``'valid'``, computed by ``lax.conv_general_dilated`` with the kernel flipped.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.convolve(jnp.array([1, 2, 1]), jnp.ones(10))
    Array([1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.], dtype=float32)
    """
    return _correlate_1d("convolve", a, v, mode, True, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D sequences (NumPy's ``correlate``; ``v`` is
    conjugated when complex).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.correlate(jnp.array([1., 2., 3.]), jnp.array([0., 1.]))
    Array([2., 3.], dtype=float32)
    """
    return _correlate_1d("correlate", a, v, mode, False, precision, preferred_element_type)
