"""Array editing: ``append``, ``delete``, ``insert``, ``put_along_axis``, ``place``,
``choose``, ``partition`` and friends, written with ``jnp`` building blocks (gathers,
scatters, sorts); no primitives of their own."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.avals import ConcreteArray
from ..core.trace import Tracer
from ..errors import ConcretizationTypeError
from ._creation import arange, array, asarray, ones, zeros
from ._promote import asarray_weak, check_arraylike, promote_dtypes
from ._searching import nonzero
from ._shape import (broadcast_arrays, broadcast_to, concatenate, diag, moveaxis, ravel,
                     reshape, stack, swapaxes, take, take_along_axis)
from ._sorting import argsort, sort
from ._ufuncs import clip, remainder, where

__all__ = ["append", "delete", "insert", "copy", "put_along_axis", "place", "choose",
           "rollaxis", "diagflat", "fromfunction", "trim_zeros", "sort_complex", "partition",
           "argpartition", "mask_indices"]


def _array(name, x):
    check_arraylike(name, x)
    return asarray(x)


def _axis(name, axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def _concrete_or_none(x):
    """The NumPy value of ``x`` when it is known at trace time, else None."""
    if isinstance(x, Array):
        return x._value
    if isinstance(x, Tracer):
        return x.aval.concrete_value() if isinstance(x.aval, ConcreteArray) else None
    return np.asarray(x)


def _keep_weak(out, like):
    return asarray_weak(out, out.dtype, dtypes.is_weakly_typed(like))


# ---------------------------------------------------------------------------
# append, delete, insert, copy
# ---------------------------------------------------------------------------
def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (both flattened when None).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.append(jnp.array([1, 2]), jnp.array([[3, 4]]))
    Array([1, 2, 3, 4], dtype=int32)
    """
    check_arraylike("append", arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries at ``obj`` (an index, indices, a boolean mask or a
    slice) along ``axis`` (of the flattened array when None).

    The result's size depends on ``obj``, so it must be concrete under ``jit`` — unless
    ``assume_unique_indices=True`` promises integer indices without repeats, in which
    case traced indices work (as in JAX; out-of-range indices are then an error the
    result does not report).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.delete(jnp.array([10, 20, 30, 40]), jnp.array([0, 2]))
    Array([20, 40], dtype=int32)
    """
    a = _array("delete", arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis("delete", axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, slice):
        keep = np.delete(np.arange(n), obj)
        return take(a, asarray(keep, dtypes.default_int()), axis=axis)
    check_arraylike("delete", arr, obj)
    value = _concrete_or_none(obj)
    if value is None:
        if not assume_unique_indices:
            raise ConcretizationTypeError(
                obj, "jnp.delete: the size of the result depends on the indices, so under "
                     "jit they must be concrete, or pass assume_unique_indices=True.")
        idx = ravel(obj)
        if not dtypes.is_integer(idx.dtype) or idx.dtype == np.bool_:
            raise TypeError("jnp.delete: with assume_unique_indices=True obj must be "
                            f"integer indices, got {np.dtype(idx.dtype).name}")
        k = idx.shape[0]
        idx = where(idx < 0, idx + n, idx)
        drop = zeros(n, bool).at[idx].set(True)
        keep = nonzero(~drop, size=n - k)[0]
        return take(a, keep, axis=axis)
    if value.dtype == np.bool_:
        if value.shape != (n,):
            raise ValueError(f"jnp.delete: boolean mask of shape {value.shape} does not "
                             f"match the axis of length {n}")
        keep = np.nonzero(~value)[0]
    else:
        if value.dtype.kind not in "iu":
            raise ValueError(f"jnp.delete: obj must be integer indices or a boolean mask, "
                             f"got {value.dtype}")
        if value.ndim > 1:
            raise ValueError("jnp.delete: obj must be a scalar or a 1-D array of indices")
        flat = value.ravel()
        if flat.size and (flat.min() < -n or flat.max() >= n):
            raise IndexError(f"jnp.delete: index out of bounds for axis of length {n}")
        keep = np.delete(np.arange(n), flat % n if n else flat)
    return take(a, asarray(keep, dtypes.default_int()), axis=axis)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis`` (of
    the flattened array when None).

    Indices may be traced; their number (and so the result's shape) is static. Negative
    indices count from the end; indices past either end are clipped to it. ``values``
    take ``arr``'s dtype.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.insert(jnp.array([1, 2, 3]), 1, 9)
    Array([1, 9, 2, 3], dtype=int32)
    >>> jnp.insert(jnp.array([1, 2, 3]), jnp.array([0, 3]), jnp.array([7, 8]))
    Array([7, 1, 2, 3, 8], dtype=int32)
    """
    check_arraylike("insert", arr, values)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis("insert", axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, slice):
        idx = asarray(np.arange(*obj.indices(n)), dtypes.default_int())
    else:
        check_arraylike("insert", arr, obj, values)
        idx = asarray(obj)
        if idx.ndim > 1:
            raise ValueError("jnp.insert: index array must be at most one-dimensional")
        if idx.size == 0:  # no indices: their dtype does not matter
            idx = asarray(np.zeros(idx.shape, dtypes.default_int()))
        if not dtypes.is_integer(idx.dtype) or idx.dtype == np.bool_:
            raise TypeError(f"jnp.insert: indices must be integers, got "
                            f"{np.dtype(idx.dtype).name}")
    vals = asarray_weak(asarray(values), a.dtype, False)
    # Values in ``arr``'s rank: extra leading ones (NumPy's ``ndmin``); a scalar index
    # inserts values' leading axis, an index array one entry per index.
    if vals.ndim < a.ndim:
        vals = reshape(vals, (1,) * (a.ndim - vals.ndim) + tuple(vals.shape))
    if idx.ndim == 0:
        vals = moveaxis(vals, 0, axis) if vals.ndim else vals
        k = vals.shape[axis] if vals.ndim else 1
        idx = broadcast_to(idx, (k,))
    k = idx.shape[0]
    shape = list(a.shape)
    shape[axis] = k
    vals = broadcast_to(vals, tuple(shape))
    idt = idx.dtype if np.dtype(idx.dtype).kind == "i" else dtypes.default_int()
    idx = asarray_weak(idx, idt, False)
    idx = clip(where(idx < 0, idx + n, idx), 0, n)
    # The j-th inserted value (in the order of a stable sort of the indices) lands at
    # its index plus the number of values inserted before it.
    order = argsort(idx, stable=True)
    slots = zeros(k, idt).at[order].set(take(idx, order) + arange(k, dtype=idt))
    free = ones(n + k, bool).at[slots].set(False)
    arr_slots = nonzero(free, size=n)[0]
    out_shape = list(a.shape)
    out_shape[axis] = n + k
    moved = moveaxis(zeros(tuple(out_shape), a.dtype), axis, 0)
    moved = moved.at[arr_slots].set(moveaxis(a, axis, 0)).at[slots].set(moveaxis(vals, axis, 0))
    return _keep_weak(moveaxis(moved, 0, axis), a)


def copy(a, order=None):
    """A copy of ``a`` (absjit arrays are immutable, so this is ``array(a)``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.copy(jnp.array([1.0, 2.0]))
    Array([1., 2.], dtype=float32)
    """
    check_arraylike("copy", a)
    if order not in (None, "K", "C"):
        raise NotImplementedError(f"jnp.copy: only order='K' or 'C' is supported, got "
                                  f"{order!r}")
    return array(a, copy=True)


# ---------------------------------------------------------------------------
# put_along_axis, place, choose
# ---------------------------------------------------------------------------
def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the scatter that
    ``take_along_axis`` is the gather of).

    absjit arrays are immutable: ``inplace=False`` is required. ``mode`` is passed to
    ``.at[...].set`` (out-of-range writes are dropped by default).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> x = jnp.zeros((2, 3))
    >>> jnp.put_along_axis(x, jnp.array([[2], [0]]), 5.0, axis=1, inplace=False)
    Array([[0., 0., 5.],
           [5., 0., 0.]], dtype=float32)
    """
    if inplace:
        raise ValueError("jnp.put_along_axis: absjit arrays are immutable and cannot be "
                         "modified in place; pass inplace=False to get the updated array")
    a = _array("put_along_axis", arr)
    check_arraylike("put_along_axis", indices, values)
    idx = asarray(indices)
    if not dtypes.is_integer(idx.dtype) or idx.dtype == np.bool_:
        raise TypeError(f"jnp.put_along_axis: indices must be integers, got "
                        f"{np.dtype(idx.dtype).name}")
    shape = tuple(a.shape)
    if axis is None:
        return reshape(put_along_axis(ravel(a), ravel(idx), ravel(asarray(values)), 0,
                                      inplace=False, mode=mode), shape)
    if idx.ndim != a.ndim:
        raise ValueError(f"jnp.put_along_axis: indices of shape {idx.shape} must have the "
                         f"same rank as the array of shape {shape}")
    ax = _axis("put_along_axis", axis, a.ndim)
    # The index of every written element along each axis: ``indices`` along ``ax``, the
    # position itself along the others (broadcast against ``indices``' other dims).
    ishape = tuple(d if i == ax else np.broadcast_shapes((d,), (shape[i],))[0]
                   for i, d in enumerate(idx.shape))
    idx = broadcast_to(idx, ishape)
    grids = []
    for i in range(a.ndim):
        if i == ax:
            grids.append(idx)
        else:
            r = reshape(arange(ishape[i], dtype=idx.dtype),
                        tuple(ishape[i] if j == i else 1 for j in range(a.ndim)))
            grids.append(broadcast_to(r, ishape))
    vals = broadcast_to(asarray_weak(asarray(values), a.dtype, False), ishape)
    return _keep_weak(a.at[tuple(grids)].set(vals, mode=mode), a)


def place(arr, mask, vals, *, inplace=True):
    """``arr`` with the elements where ``mask`` is True replaced, in order, by ``vals``
    (repeated cyclically).

    ``inplace=False`` is required (absjit arrays are immutable). The mask may be traced.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> x = jnp.array([1, 2, 3, 4])
    >>> jnp.place(x, x > 2, jnp.array([8, 9]), inplace=False)
    Array([1, 2, 8, 9], dtype=int32)
    """
    if inplace:
        raise ValueError("jnp.place: absjit arrays are immutable and cannot be modified in "
                         "place; pass inplace=False to get the updated array")
    a = _array("place", arr)
    m = ravel(_array("place", mask))
    v = ravel(_array("place", vals))
    size = int(np.prod(a.shape))
    if m.shape[0] != size:
        raise ValueError(f"jnp.place: mask of size {m.shape[0]} does not match the array's "
                         f"size {size}")
    if size == 0:
        return a
    if v.shape[0] == 0:
        raise ValueError("jnp.place: cannot place from empty vals")
    # The k-th True position gets ``vals[k % len(vals)]``; unused slots write to one
    # extra element past the end, cut off after.
    pos = nonzero(m, size=size, fill_value=size)[0]
    vv = take(v, remainder(arange(size), v.shape[0]))
    flat = concatenate([ravel(a), zeros((1,), a.dtype)])
    out = flat.at[pos].set(asarray_weak(vv, a.dtype, False))[:size]
    return _keep_weak(reshape(out, a.shape), a)


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` for each position ``i`` of the broadcast arrays.

    ``mode='raise'`` checks the indices, so they must be concrete (under ``jit`` use
    ``'wrap'`` or ``'clip'``, as in JAX).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.choose(jnp.array([0, 1, 0]), [jnp.array([1, 2, 3]), jnp.array([7, 8, 9])])
    Array([1, 8, 3], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("jnp.choose: the out argument is not supported "
                                  "(absjit arrays are immutable)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"jnp.choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    idx = _array("choose", a)
    if not dtypes.is_integer(idx.dtype) or idx.dtype == np.bool_:
        raise TypeError(f"jnp.choose: indices must be integers, got "
                        f"{np.dtype(idx.dtype).name}")
    if isinstance(choices, (Array, Tracer, np.ndarray)):
        choices = [choices[i] for i in range(choices.shape[0])]
    choices = list(choices)
    check_arraylike("choose", *choices)
    nc = len(choices)
    if nc == 0:
        raise ValueError("jnp.choose: choices must not be empty")
    if mode == "raise":
        value = _concrete_or_none(idx)
        if value is None:
            raise ConcretizationTypeError(
                idx, "jnp.choose with mode='raise' checks the indices, so under jit they "
                     "must be concrete; use mode='wrap' or mode='clip'.")
        if value.size and (value.min() < 0 or value.max() >= nc):
            raise ValueError("jnp.choose: invalid entry in choice array")
    elif mode == "wrap":
        idx = remainder(idx, nc)
    else:
        idx = clip(idx, 0, nc - 1)
    arrays = broadcast_arrays(idx, *promote_dtypes(*choices))
    stacked = stack(arrays[1:], axis=0)
    return take_along_axis(stacked, arrays[0][None], axis=0)[0]


# ---------------------------------------------------------------------------
# rollaxis, diagflat, fromfunction, trim_zeros, mask_indices
# ---------------------------------------------------------------------------
def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved to lie before ``start`` (prefer ``moveaxis``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.rollaxis(jnp.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    x = _array("rollaxis", a)
    n = x.ndim
    axis = _axis("rollaxis", axis, n)
    start = operator.index(start)
    if not -n <= start <= n:
        raise ValueError(f"rollaxis: start {start} must be in [-{n}, {n}]")
    start %= n + 1 if start >= 0 else n
    if axis < start:
        start -= 1
    if axis == start:
        return x
    return moveaxis(x, axis, start)


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.diagflat(jnp.array([[1, 2]]))
    Array([[1, 0],
           [0, 2]], dtype=int32)
    """
    return diag(ravel(_array("diagflat", v)), k)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` evaluated at every index of an array of ``shape``.

    As in JAX, ``function`` is mapped with ``vmap`` over each axis, so it is called with
    scalar indices (of ``dtype``) and need not broadcast (NumPy instead calls it once
    with whole index grids).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fromfunction(lambda i, j: i + j, (2, 3), dtype=int)
    Array([[0, 1, 2],
           [1, 2, 3]], dtype=int32)
    """
    from ..api_transforms import vmap  # loads after absjit.numpy
    shape = tuple(operator.index(d) for d in
                  (shape if isinstance(shape, (tuple, list)) else (shape,)))
    f = function
    for i in range(len(shape)):
        in_axes = tuple(0 if j == len(shape) - 1 - i else None for j in range(len(shape)))
        f = vmap(f, in_axes=in_axes)
    return f(*(arange(d, dtype=dtype) for d in shape), **kwargs)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``'f'`` in ``trim``) and trailing (``'b'``) zeros,
    along ``axis`` (every axis when None: a zero hyper-slab is trimmed).

    The result's shape depends on the values, so ``filt`` must be concrete.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.trim_zeros(jnp.array([0, 0, 1, 2, 0]))
    Array([1, 2], dtype=int32)
    """
    x = _array("trim_zeros", filt)
    value = _concrete_or_none(x)
    if value is None:
        raise ConcretizationTypeError(
            x, "jnp.trim_zeros: the size of the result depends on the values, so the "
               "argument must be concrete.")
    trim = trim.lower()
    if x.ndim == 0:
        raise ValueError("jnp.trim_zeros: the input must be at least 1-D")
    axes = range(x.ndim) if axis is None else \
        [_axis("trim_zeros", ax, x.ndim) for ax in np.atleast_1d(axis)]
    nz = np.argwhere(value != 0)
    index = [slice(None)] * x.ndim
    for ax in axes:
        if nz.size == 0:  # all zeros: nothing is left (NumPy's rule)
            start = stop = 0
        else:
            start = int(nz[:, ax].min()) if "f" in trim else 0
            stop = int(nz[:, ax].max()) + 1 if "b" in trim else x.shape[ax]
        index[ax] = slice(start, stop)
    return x[tuple(index)]


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (``size`` as in
    ``nonzero``, needed under ``jit`` when the mask is traced).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.mask_indices(2, jnp.triu)
    (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    n = operator.index(n)
    return nonzero(mask_func(ones((n, n), dtypes.default_int()), k), size=size)


# ---------------------------------------------------------------------------
# sort_complex, partition, argpartition
# ---------------------------------------------------------------------------
def sort_complex(a):
    """``a`` sorted along its last axis (real part, then imaginary part), as complex.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.sort_complex(jnp.array([3, 1, 2]))
    Array([1.+0.j, 2.+0.j, 3.+0.j], dtype=complex64)
    """
    s = sort(_array("sort_complex", a), axis=-1)
    dt = s.dtype
    if not dtypes.is_complex(dt):
        dt = np.result_type(np.dtype(dtypes.default_float() if not dtypes.is_inexact(dt)
                                     else dt), np.complex64)
        dt = dtypes.canonicalize_dtype(dt)
    return asarray_weak(s, dt, dtypes.is_weakly_typed(s))


def _partition_kth(name, x, kth, axis):
    if x.ndim == 0:
        raise ValueError(f"jnp.{name}: the input must be at least 1-D")
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented")
    if not isinstance(kth, (int, np.integer)):
        raise TypeError(f"jnp.{name}: kth must be a single static integer, got {kth!r}")
    ax = _axis(name, axis, x.ndim)
    n = x.shape[ax]
    kth = int(kth)
    if not -n <= kth < n:
        raise ValueError(f"jnp.{name}: kth {kth} is out of bounds for an axis of length {n}")
    return kth % n, ax


def partition(a, kth, axis=-1):
    """``a`` rearranged along ``axis`` so that its ``kth`` entry is the one a sort puts
    there, smaller ones before it and larger ones after.

    The order of the other entries follows JAX: the first ``kth + 1`` ascending, the
    rest descending.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.partition(jnp.array([5, 1, 4, 2, 3]), 1)
    Array([1, 2, 5, 4, 3], dtype=int32)
    """
    x = _array("partition", a)
    kth, ax = _partition_kth("partition", x, kth, axis)
    s = swapaxes(sort(x, axis=ax), ax, -1)
    out = concatenate([s[..., :kth + 1], s[..., kth + 1:][..., ::-1]], axis=-1)
    return swapaxes(out, ax, -1)


def argpartition(a, kth, axis=-1):
    """The indices that ``partition(a, kth, axis)`` gathers from ``a``.

    As in JAX, the first ``kth + 1`` indices order their values ascending (equal values
    by index) and the rest are in index order, so this is not the order ``partition``
    puts the values in.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.argpartition(jnp.array([5, 1, 4, 2, 3]), 1)
    Array([1, 3, 0, 2, 4], dtype=int32)
    """
    x = _array("argpartition", a)
    kth, ax = _partition_kth("argpartition", x, kth, axis)
    xs = swapaxes(x, ax, -1)
    order = argsort(xs, axis=-1, stable=True)
    rest = sort(order[..., kth + 1:], axis=-1)
    return swapaxes(concatenate([order[..., :kth + 1], rest], axis=-1), ax, -1)
