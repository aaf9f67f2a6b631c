"""``absjit.numpy`` set operations and other functions whose result size depends on the
values: ``unique`` (and the Array-API ``unique_*``), ``setdiff1d``, ``intersect1d``,
``union1d``, ``setxor1d``, ``extract``, ``compress`` and ``digitize``.

Without ``size=`` they follow NumPy and need concrete values (eager, or the
``concrete`` level). With ``size=`` (as in JAX) the result has a fixed length and they
trace at any level: everything is derived from one stable sort with the positions as
payload, a running count that numbers the kept elements, and a scatter that writes each
kept element to its slot (slots at or past ``size`` are dropped).
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dims import is_dim
from ..core.trace import get_aval
from ..ops import elementwise as ew
from ..ops import structural as st
from ..ops.indexing import scatter, scatter_add
from ..ops.sorting import sort_p
from ._creation import arange, asarray, full, zeros
from ._indexing import size_value
from ._promote import asarray_weak, check_arraylike, promote_dtypes
from ._reductions import any as _any, cumsum, sum as _sum
from ._searching import _concrete, isin, nonzero
from ._shape import concatenate, ravel, reshape, take
from ._sorting import _axis, searchsorted
from ._ufuncs import isnan, where

__all__ = ["unique", "unique_values", "unique_counts", "unique_inverse", "unique_all",
           "setdiff1d", "intersect1d", "union1d", "setxor1d", "extract", "compress",
           "digitize"]


# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------
def _size(name, size):
    """``size`` as a non-negative int (a traced size raises the trace's error)."""
    try:
        size = operator.index(size)
    except TypeError as e:
        if type(e) is not TypeError:
            raise  # a ConcretizationTypeError: the trace explains it
        raise TypeError(f"{name}: size must be an integer, got {size!r}") from None
    if size < 0:
        raise ValueError(f"{name}: size must be non-negative, got {size}")
    return size


def _fill(name, fill_value, dt):
    """A user ``fill_value`` as a scalar of the result dtype."""
    check_arraylike(name, fill_value)
    fill = asarray_weak(fill_value, dt, False)
    if get_aval(fill).shape != ():
        raise ValueError(f"{name}: fill_value must be a scalar, got shape "
                         f"{tuple(get_aval(fill).shape)}")
    return fill


def _flat(name, x):
    check_arraylike(name, x)
    aval = get_aval(x)
    return ravel(asarray_weak(x, aval.dtype, False))


def _sort_with_positions(flat):
    """``flat`` sorted (stable, NaNs last) and each sorted element's original position."""
    n = get_aval(flat).shape[0]
    iota = st.iota(dtypes.default_int(), (n,), 0)
    s, perm = sort_p.bind(flat, iota, dimension=0, is_stable=True, num_keys=1)
    return s, perm


def _run_starts(s, equal_nan):
    """True where a sorted element differs from its predecessor (the first of each run
    of equal values); with ``equal_nan`` NaNs make one run, else each NaN its own."""
    n = get_aval(s).shape[0]
    if not is_dim(n) and n == 0:
        return zeros(0, bool)
    cur, prev = st.slice(s, (1,), (n,)), st.slice(s, (0,), (n - 1,))
    same = ew.eq(cur, prev)
    if equal_nan and dtypes.is_inexact(get_aval(s).dtype):
        same = ew.bitwise_or(same, ew.bitwise_and(ew.ne(cur, cur), ew.ne(prev, prev)))
    one = st.broadcast_in_dim(np.array(True), (1,), ())
    return st.concatenate([one, ew.bitwise_not(same)], 0)


def _rank(mask):
    """How many ``mask`` entries come before each one (its slot if it is kept)."""
    return cumsum(mask, dtype=dtypes.default_int()) - 1


def _compact(values, mask, size, base=None):
    """The ``values`` where ``mask`` holds, in order, written into the first slots of a
    length-``size`` array (``base``, zeros by default); the rest of ``base`` is kept."""
    rank = _rank(mask)
    slot = where(mask, rank, size)   # dropped by the scatter
    if base is None:
        base = zeros(size, get_aval(values).dtype)
    return scatter(base, values, [slot], (0,))


def _pad(out, count, fill):
    """``out`` with the slots at or past ``count`` replaced by ``fill``."""
    size = get_aval(out).shape[0]
    return where(arange(size, dtype=dtypes.default_int()) < count, out, fill)


def _first_or_zero(out):
    """``out[0]``, or 0 when ``out`` is empty (the default padding of several results)."""
    if get_aval(out).shape[0] == 0:
        return zeros((), get_aval(out).dtype)
    return out[0]


# ---------------------------------------------------------------------------
# unique
# ---------------------------------------------------------------------------
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
    """Sorted unique values of ``ar`` (flattened unless ``axis`` is given), optionally
    with the index of each one's first occurrence, the inverse (``ar`` rebuilt as
    ``values[inverse]``) and the counts.

    Parameters
    ----------
    ar : array_like
    return_index, return_inverse, return_counts : bool
    axis : int, optional
        Unique sub-arrays along ``axis`` (only without ``size``).
    equal_nan : bool
        Whether all NaNs count as one value (True) or each NaN as its own.
    size : int, optional
        The number of values returned: the first ``size`` unique values, padded with
        ``fill_value``. Needed under ``jit`` (without it ``ar`` must be concrete).
    fill_value : scalar, optional
        Padding of the values (default: the smallest value). The padded indices repeat
        the first index and the padded counts are 0, as in JAX.
    sorted : bool
        Accepted for JAX compatibility; the values are always sorted.

    Returns
    -------
    The values, then the requested extra arrays (``default_int`` dtype) in the order
    index, inverse, counts. The inverse has ``ar``'s shape when ``axis`` is None
    (NumPy 2 and the installed JAX agree on that).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unique(jnp.array([3, 1, 3, 2]))
    Array([1, 2, 3], dtype=int32)
    >>> jnp.unique(jnp.array([3, 1, 3]), size=3, fill_value=0)
    Array([1, 3, 0], dtype=int32)
    >>> jnp.unique(jnp.array([3, 1, 3]), return_counts=True, size=3)
    (Array([1, 3, 1], dtype=int32), Array([1, 2, 0], dtype=int32))
    """
    check_arraylike("unique", ar)
    if size is None:
        return _unique_concrete(ar, return_index, return_inverse, return_counts, axis,
                                equal_nan)
    size = _size("unique", size)
    if axis is not None:
        raise NotImplementedError("unique: axis= together with size= is not supported; "
                                  "use axis= on a concrete array (no size=), or flatten")
    out = _unique_sized(ar, size, fill_value, equal_nan)
    extra = [out[1]] * return_index + [out[2]] * return_inverse + [out[3]] * return_counts
    return tuple([out[0]] + extra) if extra else out[0]


def _unique_concrete(ar, return_index, return_inverse, return_counts, axis, equal_nan):
    x = asarray(ar)
    value = _concrete(x, "unique", "size")
    res = np.unique(value, return_index=return_index, return_inverse=return_inverse,
                    return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    int_t = dtypes.default_int()
    if not isinstance(res, tuple):
        return Array._new(np.asarray(res, x.dtype), False)
    return tuple([Array._new(np.asarray(res[0], x.dtype), False)]
                 + [Array._new(np.asarray(r, int_t), False) for r in res[1:]])


def _unique_sized(ar, size, fill_value, equal_nan):
    """(values, index, inverse, counts) with ``size`` slots; unused results are dead
    code that tracing drops."""
    flat = _flat("unique", ar)
    shape = tuple(get_aval(asarray(ar)).shape)
    dt = get_aval(flat).dtype
    int_t = dtypes.default_int()
    n = get_aval(flat).shape[0]
    if not is_dim(n) and n == 0:
        if fill_value is None and size:
            raise ValueError("unique: an empty array needs an explicit fill_value with "
                             "size=")
        values = full(size, 0 if fill_value is None else _fill("unique", fill_value, dt), dt)
        return values, zeros(size, int_t), zeros(shape, int_t), zeros(size, int_t)
    s, perm = _sort_with_positions(flat)
    first = _run_starts(s, equal_nan)
    group = _rank(first)                 # the unique value each sorted element belongs to
    count = _sum(first, dtype=int_t)
    values = _compact(s, first, size)
    fill = _first_or_zero(values) if fill_value is None else _fill("unique", fill_value, dt)
    values = _pad(values, count, fill)
    index = _compact(perm, first, size)  # stable sort: a run starts at its first occurrence
    index = _pad(index, count, _first_or_zero(index))
    inverse = reshape(scatter(zeros(n, int_t), group, [perm], (0,)), shape)
    counts = scatter_add(zeros(size, int_t), full(n, 1, int_t), [group], (0,))
    return values, index, inverse, counts


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result."""
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result."""
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result."""
    values: Array
    inverse_indices: Array


def _unique_api(name, x, size, fill_value, index, inverse, counts):
    """The Array-API variants: NaNs are all distinct (``equal_nan=False``)."""
    check_arraylike(name, x)
    return unique(x, return_index=index, return_inverse=inverse, return_counts=counts,
                  equal_nan=False, size=size, fill_value=fill_value)


def unique_values(x, /, *, size=None, fill_value=None):
    """Sorted unique values of ``x`` (flattened; each NaN counts as its own value).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unique_values(jnp.array([2, 1, 2]))
    Array([1, 2], dtype=int32)
    """
    return _unique_api("unique_values", x, size, fill_value, False, False, False)


def unique_counts(x, /, *, size=None, fill_value=None):
    """Unique values and how often each occurs, as ``(values, counts)``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unique_counts(jnp.array([2, 1, 2])).counts
    Array([1, 2], dtype=int32)
    """
    return UniqueCountsResult(*_unique_api("unique_counts", x, size, fill_value,
                                           False, False, True))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """Unique values and ``inverse_indices`` (``x``'s shape) with
    ``values[inverse_indices] == x``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unique_inverse(jnp.array([2, 1, 2])).inverse_indices
    Array([1, 0, 1], dtype=int32)
    """
    return UniqueInverseResult(*_unique_api("unique_inverse", x, size, fill_value,
                                            False, True, False))


def unique_all(x, /, *, size=None, fill_value=None):
    """Unique values with first-occurrence ``indices``, ``inverse_indices`` and
    ``counts``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unique_all(jnp.array([2, 1, 2])).indices
    Array([1, 0], dtype=int32)
    """
    return UniqueAllResult(*_unique_api("unique_all", x, size, fill_value,
                                        True, True, True))


# ---------------------------------------------------------------------------
# Set operations on 1-D arrays
# ---------------------------------------------------------------------------
def _two(name, ar1, ar2):
    check_arraylike(name, ar1, ar2)
    a, b = promote_dtypes(ar1, ar2)
    return ravel(a), ravel(b)


def _concrete_result(name, arrays, fn):
    """``fn`` on the NumPy values of ``arrays`` (concrete only), back as Arrays."""
    values = [_concrete(x, name, "size") for x in arrays]
    res = fn(*values)
    dt = get_aval(arrays[0]).dtype
    if not isinstance(res, tuple):
        return Array._new(np.asarray(res, dt), False)
    int_t = dtypes.default_int()
    return tuple([Array._new(np.asarray(res[0], dt), False)]
                 + [Array._new(np.asarray(r, int_t), False) for r in res[1:]])


def _sorted_unique_mask(x):
    """``x`` sorted, its original positions, and True at the first of each run of
    equal values (NaNs make one run, as ``unique`` does by default)."""
    s, perm = _sort_with_positions(x)
    return s, perm, _run_starts(s, True)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ``ar1`` that are not in ``ar2``.

    With ``assume_unique`` the elements of ``ar1`` not in ``ar2`` are returned in
    ``ar1``'s order, without removing repeats (as NumPy does). With ``size`` the
    result is padded with ``fill_value`` (default 0, JAX's padding).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.setdiff1d(jnp.array([5, 1, 3, 1]), jnp.array([3, 4]))
    Array([1, 5], dtype=int32)
    >>> jnp.setdiff1d(jnp.array([5, 1, 3, 1]), jnp.array([3, 4]), size=3, fill_value=-1)
    Array([ 1,  5, -1], dtype=int32)
    """
    a, b = _two("setdiff1d", ar1, ar2)
    dt = get_aval(asarray(ar1)).dtype   # the values come from ar1: its dtype, as in JAX
    if size is None:
        out = _concrete_result("setdiff1d", [a, b],
                               lambda x, y: np.setdiff1d(x, y, assume_unique))
        return out.astype(dt)
    size = _size("setdiff1d", size)
    fill = zeros((), dt) if fill_value is None else _fill("setdiff1d", fill_value, dt)
    if assume_unique:
        keep = ew.bitwise_not(isin(a, b))
        values = a
    else:
        values, _, first = _sorted_unique_mask(a)
        keep = ew.bitwise_and(first, ew.bitwise_not(isin(values, b)))
    out = _compact(values, keep, size).astype(dt)
    return _pad(out, _sum(keep, dtype=dtypes.default_int()), fill)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values in either array (``unique`` of both, concatenated).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.union1d(jnp.array([3, 1]), jnp.array([2, 3]))
    Array([1, 2, 3], dtype=int32)
    """
    a, b = _two("union1d", ar1, ar2)
    if size is None:
        return _concrete_result("union1d", [a, b], np.union1d)
    return unique(concatenate([a, b]), size=_size("union1d", size), fill_value=fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values in exactly one of the arrays.

    ``assume_unique`` promises that each array has no repeats; the result is the same
    either way for such inputs. With ``size`` the result is padded with ``fill_value``
    (default: the smallest value of the result, 0 when it is empty).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.setxor1d(jnp.array([1, 2, 3]), jnp.array([2, 3, 4]))
    Array([1, 4], dtype=int32)
    """
    a, b = _two("setxor1d", ar1, ar2)
    if size is None:
        return _concrete_result("setxor1d", [a, b],
                                lambda x, y: np.setxor1d(x, y, assume_unique))
    size = _size("setxor1d", size)
    dt = get_aval(a).dtype
    # Each array's unique values that the other lacks (NaN is never "in" an array, so
    # each array's NaN is kept, as NumPy does), merged by one sort carrying the mask.
    sa, _, fa = _sorted_unique_mask(a)
    sb, _, fb = _sorted_unique_mask(b)
    keep_a = ew.bitwise_and(fa, ew.bitwise_not(isin(sa, b)))
    keep_b = ew.bitwise_and(fb, ew.bitwise_not(isin(sb, a)))
    both = concatenate([sa, sb])
    keep = concatenate([keep_a, keep_b])
    both, keep = sort_p.bind(both, keep, dimension=0, is_stable=True, num_keys=1)
    count = _sum(keep, dtype=dtypes.default_int())
    out = _compact(both, keep, size)
    if fill_value is None:
        # JAX's default: the smallest value of the result, i.e. NaN if it holds one.
        fill = _first_or_zero(out)
        if dtypes.is_inexact(dt):
            has_nan = _any(ew.bitwise_and(keep, isnan(both)))
            fill = where(has_nan, asarray(np.nan, dt), fill)
    else:
        fill = _fill("setxor1d", fill_value, dt)
    return _pad(out, count, fill)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values in both arrays; with ``return_indices`` also the index
    of each value's first occurrence in the (flattened) ``ar1`` and ``ar2``.

    ``assume_unique`` promises that each array has no repeats; the result is the same
    either way for such inputs. With ``size`` the values are padded with ``fill_value``
    (default: the smallest common value, 0 when there is none) and the indices with
    each array's length (an out-of-range index), as in JAX.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.intersect1d(jnp.array([5, 1, 3]), jnp.array([3, 5, 7]))
    Array([3, 5], dtype=int32)
    >>> jnp.intersect1d(jnp.array([5, 1, 3]), jnp.array([3, 5, 7]), return_indices=True,
    ...                 size=3, fill_value=0)
    (Array([3, 5, 0], dtype=int32), Array([2, 0, 3], dtype=int32), Array([0, 1, 3], dtype=int32))
    """
    a, b = _two("intersect1d", ar1, ar2)
    if size is None:
        return _concrete_result(
            "intersect1d", [a, b],
            lambda x, y: np.intersect1d(x, y, assume_unique, return_indices))
    size = _size("intersect1d", size)
    dt = get_aval(a).dtype
    int_t = dtypes.default_int()
    sa, pa, fa = _sorted_unique_mask(a)
    keep = ew.bitwise_and(fa, isin(sa, b))
    count = _sum(keep, dtype=int_t)
    out = _compact(sa, keep, size)
    fill = _first_or_zero(out) if fill_value is None else _fill("intersect1d", fill_value, dt)
    values = _pad(out, count, fill)
    if not return_indices:
        return values
    na, nb = get_aval(a).shape[0], get_aval(b).shape[0]
    ia = _pad(_compact(pa, keep, size), count, _length(na))
    # Where each common value first occurs in b: its leftmost slot in sorted b.
    sb, pb = _sort_with_positions(b)
    if not is_dim(nb) and nb == 0:
        ib = full(size, 0, int_t)
    else:
        ib = take(pb, searchsorted(sb, out), mode="clip")
    ib = _pad(ib, count, _length(nb))
    return values, ia, ib


def _length(n):
    return size_value(n, dtypes.default_int())


# ---------------------------------------------------------------------------
# extract / compress
# ---------------------------------------------------------------------------
def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (the flattened ``a`` when None) where
    ``condition`` is non-zero; a shorter ``condition`` counts as False past its end.

    With ``size`` the result has ``size`` slices along the axis, padded with
    ``fill_value``; a ``condition`` longer than the axis is then cut to its length.
    Without it ``condition`` must be concrete and may be longer than the axis only
    where it is False (NumPy's rule).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.compress(jnp.array([True, False, True]), jnp.array([10, 20, 30]))
    Array([10, 30], dtype=int32)
    >>> jnp.compress(jnp.array([1, 0, 1]), jnp.array([10, 20, 30]), size=3, fill_value=-1)
    Array([10, 30, -1], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("compress: the 'out' argument is not supported (arrays "
                                  "are immutable)")
    check_arraylike("compress", condition, a)
    cond = asarray(condition)
    x = asarray(a)
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be 1-D, got shape {cond.shape}")
    if axis is None:
        x, axis = ravel(x), 0
    axis = _axis("compress", axis, x.ndim)
    n, m = x.shape[axis], cond.shape[0]
    if size is None:
        mask = _concrete(cond, "compress", "size") != 0
        if not is_dim(n) and np.any(mask[n:]):
            raise ValueError(f"compress: condition has True entries past the end of axis "
                             f"{axis} (length {n})")
        return take(x, np.flatnonzero(mask).astype(dtypes.default_int()), axis=axis)
    size = _size("compress", size)
    if is_dim(n) or is_dim(m):
        raise NotImplementedError("compress: with size=, the condition's and the axis' "
                                  "lengths must be known (not the ranked level)")
    if m > n:
        cond = cond[:n]
    elif m < n:
        cond = concatenate([cond != 0, zeros(n - m, bool)])
    idx = nonzero(cond, size=size, fill_value=n)[0]
    fill = _fill("compress", fill_value, x.dtype)
    return take(x, idx, axis=axis, mode="fill", fill_value=fill)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of ``ravel(arr)`` where ``ravel(condition)`` is non-zero
    (``compress`` on both flattened).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> x = jnp.arange(6).reshape(2, 3)
    >>> jnp.extract(x % 2 == 0, x)
    Array([0, 2, 4], dtype=int32)
    """
    check_arraylike("extract", condition, arr)
    return compress(ravel(asarray(condition)), ravel(asarray(arr)), size=size,
                    fill_value=fill_value)


# ---------------------------------------------------------------------------
# digitize
# ---------------------------------------------------------------------------
def digitize(x, bins, right=False, *, method=None):
    """The bin of each element of ``x``: ``i`` with ``bins[i-1] <= x < bins[i]`` for
    increasing ``bins`` (``bins[i-1] < x <= bins[i]`` with ``right``), mirrored for
    decreasing ``bins`` (decided by ``bins[-1] >= bins[0]``, so it works on traced
    bins).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.digitize(jnp.array([0.5, 1.0, 2.5]), jnp.array([0.0, 1.0, 2.0]))
    Array([1, 2, 3], dtype=int32)
    """
    check_arraylike("digitize", x, bins)
    right = bool(right)
    xv, bv = asarray(x), asarray(bins)
    if bv.ndim != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {bv.shape}")
    int_t = dtypes.default_int()
    nb = bv.shape[0]
    if not is_dim(nb) and nb == 0:
        return zeros(xv.shape, int_t)
    side = "left" if right else "right"
    up = searchsorted(bv, xv, side=side, method=method).astype(int_t)
    down = _length(nb) - searchsorted(bv[::-1], xv, side=side, method=method).astype(int_t)
    return where(bv[-1] >= bv[0], up, down)
