"""Indexing (``x[idx]``) and functional index updates (``x.at[idx].set(y)``).

NumPy's rules, staged as ``lax`` primitives so they work on Arrays and tracers alike:

* basic indexing — ints, slices (any step), ``None``, ``Ellipsis`` — becomes ``rev``,
  ``slice``, ``squeeze`` and ``reshape``; a *traced* integer scalar becomes a
  ``dynamic_slice`` (so ``x[i]`` works under ``jit``);
* advanced indexing — integer arrays and lists, and boolean masks whose value is known
  — becomes one ``gather``. The broadcast index dimensions go where NumPy puts them:
  in place of the indexed axes when those are adjacent, first otherwise;
* ``x.at[idx].<op>(y)`` becomes ``dynamic_update_slice`` (ints and unit-step slices)
  or a scatter.

Out-of-range behaviour follows JAX: negative indices (static or traced) count from the
end; indices that are still out of range, Python ints included, are clamped when reading
and dropped when updating (see :mod:`absjit.ops.indexing`); only an index into an axis
of size 0 raises ``IndexError``.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.avals import ConcreteArray
from ..core.dim_assumptions import assume_at_least, slice_indices
from ..core.dims import Dim
from ..core.shapes import broadcast_shapes
from ..core.trace import Tracer
from ..errors import NonConcreteBooleanIndexError
from ..ops import elementwise as ew
from ..ops import indexing as gi
from ..ops import structural as st
from ..ops.shape_values import dim_value
from ._creation import array, asarray
from ._promote import asarray_weak, broadcast_to_shape, check_arraylike

__all__ = ["getitem", "getitem_mode", "index_update"]

_UPDATE_MODES = {"set": gi.scatter_p, "add": gi.scatter_add_p, "multiply": gi.scatter_mul_p,
                 "min": gi.scatter_min_p, "max": gi.scatter_max_p}


def _bad_index(obj) -> IndexError:
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None "
                      "(`numpy.newaxis`) and integer or boolean arrays are valid indices; "
                      f"got {obj!r} of type {type(obj).__name__}")


def _known_value(a):
    """The NumPy value of an index array, or None when it is abstract."""
    if isinstance(a, Array):
        return a._value
    if isinstance(a, Tracer):
        return a.aval.concrete_value() if isinstance(a.aval, ConcreteArray) else None
    return np.asarray(a)


# ---------------------------------------------------------------------------
# Parsing an index into per-axis items
# ---------------------------------------------------------------------------
# Items: ("none",) | ("slice", start, step, n) | ("int", i) | ("dyn", tracer)
#        | ("adv", index array) | ("empty",) (a False scalar mask) | ("gap",) (an empty
#        ellipsis: no axis, but it separates advanced indices)
def _parse(shape, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    raw = []
    for obj in idx:
        if obj is None or obj is Ellipsis or isinstance(obj, slice):
            raw.append(obj)
        elif type(obj) is bool or isinstance(obj, np.bool_):
            raw.append(("bool", bool(obj)))
        elif type(obj) is int or type(obj) is Dim:  # Dim: a size-derived index (ranked)
            raw.append(obj)
        elif isinstance(obj, (float, complex, np.floating, np.complexfloating, str, bytes)):
            raise _bad_index(obj)
        else:
            raw.append(_as_index_array(obj))
    if sum(o is Ellipsis for o in raw) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_ndim_consumed(o) for o in raw)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {consumed} were indexed")
    items, axis = [], 0
    for o in raw:
        if o is Ellipsis:
            if len(shape) == consumed:
                # An empty ellipsis still separates advanced indices (NumPy's rule).
                items.append(("gap",))
            for _ in range(len(shape) - consumed):
                items.append(("slice", 0, 1, shape[axis]))
                axis += 1
        elif o is None:
            items.append(("none",))
        elif isinstance(o, tuple) and o[0] == "bool":
            # A scalar boolean adds an axis of length 1 (True) or 0 (False).
            items.append(("none",) if o[1] else ("empty",))
        elif isinstance(o, slice):
            start, stop, step = (_slice_part(p) for p in (o.start, o.stop, o.step))
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if type(shape[axis]) is Dim:  # a symbolic size (ranked level)
                start, stop, step, count = slice_indices(start, stop, step, shape[axis])
                items.append(("slice", start, step, count))
                axis += 1
                continue
            start, stop, step = slice(*(operator.index(p) if p is not None else None
                                        for p in (start, stop, step))).indices(shape[axis])
            items.append(("slice", start, step, len(range(start, stop, step))))
            axis += 1
        elif type(o) is Dim:  # computed from sizes (``x[x.shape[0] - 1]``): in range
            why = f"index {o} of axis {axis} needs it"
            assume_at_least(o, 0, why)
            assume_at_least(shape[axis] - o, 1, why)
            items.append(("int", o))
            axis += 1
        elif isinstance(o, int) and type(shape[axis]) is Dim:
            # A symbolic size (ranked level): the index is assumed in range.
            assume_at_least(shape[axis], o + 1 if o >= 0 else -o,
                            f"index {o} of axis {axis} needs it")
            items.append(("int", o if o >= 0 else shape[axis] + o))
            axis += 1
        elif isinstance(o, int):
            n = shape[axis]
            if n == 0:
                raise IndexError(f"index {o} is out of bounds for axis {axis} with size 0")
            if -n <= o < n:
                items.append(("int", o % n))
            else:
                # As JAX (0.5 and later): read clamped, update dropped, like an index
                # of array type.
                items.append(("dyn", _scalar(o, dtypes.default_int() if
                                             -2 ** 31 <= o < 2 ** 31 else np.int64)))
            axis += 1
        elif dtypes.is_bool(o.dtype):
            mask = _known_value(o)
            if mask is None:
                raise NonConcreteBooleanIndexError(o)
            if tuple(mask.shape) != tuple(shape[axis:axis + mask.ndim]):
                raise IndexError(f"boolean index of shape {mask.shape} does not match the "
                                 f"indexed dimensions {tuple(shape[axis:axis + mask.ndim])}")
            if mask.ndim == 0:
                items.append(("none",) if mask else ("empty",))
                continue
            for nz in np.nonzero(mask):
                items.append(("adv", Array._new(nz.astype(dtypes.default_int()), False)))
                axis += 1
        elif o.ndim == 0:
            # As in JAX, only Python ints are bounds-checked; integer scalars of array
            # type (NumPy, absjit or traced) clamp when read and drop when updated.
            if shape[axis] == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            items.append(("dyn", o))
            axis += 1
        else:
            items.append(("adv", o))
            axis += 1
    for n in shape[axis:]:
        items.append(("slice", 0, 1, n))
    return items


def _ndim_consumed(o):
    if o is None or o is Ellipsis or (isinstance(o, tuple) and o[0] == "bool"):
        return 0
    if isinstance(o, (slice, int, Dim)):
        return 1
    return o.ndim if dtypes.is_bool(o.dtype) else 1


def _slice_part(p):
    if p is None:
        return None
    if type(p) is Dim:
        return p  # a bound computed from sizes (ranked level): see slice_indices
    try:
        return operator.index(p)
    except TypeError:
        if isinstance(p, Tracer):
            raise  # ConcretizationTypeError from the tracer's __index__
        raise IndexError(f"slice indices must be integers or None, got {p!r}") from None


def _as_index_array(obj):
    if isinstance(obj, (Array, Tracer)):
        arr = obj
    elif isinstance(obj, (list, tuple, np.ndarray, np.generic)):
        if isinstance(obj, (list, tuple)) and any(isinstance(e, Tracer) for e in _flat(obj)):
            arr = array(obj)
        else:
            np_val = np.asarray(obj)
            if np_val.size == 0 and np_val.dtype.kind == "f":
                np_val = np_val.astype(np.intp)  # ``x[[]]`` is an empty integer index
            if np_val.dtype == object:
                raise _bad_index(obj)
            arr = Array._new(np.asarray(np_val, dtypes.canonicalize_dtype(np_val.dtype)),
                             False)
    else:
        raise _bad_index(obj)
    if not (dtypes.is_integer(arr.dtype) or dtypes.is_bool(arr.dtype)):
        raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                         f"got {np.dtype(arr.dtype).name}")
    return arr


def _flat(seq):
    for e in seq:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


# ---------------------------------------------------------------------------
# Helpers on index values
# ---------------------------------------------------------------------------
def _scalar(v, dtype):
    return Array._new(np.asarray(v, dtype=dtype), False)


def _normalize(i, n):
    """NumPy-style negative indices count from the end (``i + n`` when ``i < 0``)."""
    val = _known_value(i) if isinstance(i, Array) else None
    if val is not None:
        return Array._new(np.where(val < 0, val + n, val).astype(val.dtype), False)
    dt = i.dtype
    if dtypes.is_bool(dt) or np.dtype(dt).kind == "u":
        return i
    return ew.select_n(ew.lt(i, _scalar(0, dt)), i, ew.add(i, size_value(n, dt)))


def size_value(n, dt):
    """Size ``n`` as a scalar array of dtype ``dt``; a symbolic size (ranked level) is
    staged as a ``dim_value`` equation."""
    if type(n) is Dim:
        return ew.convert_element_type(dim_value(n), dt)
    return _scalar(n, dt)


def _broadcast_index_arrays(arrays):
    try:
        shape = broadcast_shapes(*[tuple(a.shape) for a in arrays])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {', '.join(str(np.shape(a)) for a in arrays)}") from None
    dt = dtypes.default_int()
    if any(np.dtype(a.dtype).itemsize > np.dtype(dt).itemsize for a in arrays):
        dt = np.dtype(np.int64)
    out = []
    for a in arrays:
        if a.dtype != dt:
            a = ew.convert_element_type(a, dt, False)
        out.append(broadcast_to_shape(a, shape))
    return out, tuple(shape)


def _layout(items):
    """Where the advanced-index dimensions go: ``True`` when the advanced items are
    adjacent (they replace them in place), ``False`` when they go first."""
    pos = [k for k, it in enumerate(items) if it[0] in ("adv", "int", "dyn")]
    return pos == list(range(pos[0], pos[-1] + 1)) if pos else True


# ---------------------------------------------------------------------------
# getitem
# ---------------------------------------------------------------------------
def getitem(x, idx):
    """``x[idx]`` with NumPy's indexing rules (see the module docstring).

    Examples
    --------
    >>> x = jnp.arange(12).reshape(3, 4)
    >>> x[1:, ::-2]
    Array([[ 7,  5],
           [11,  9]], dtype=int32)
    >>> x[jnp.array([0, 2]), 1]
    Array([1, 9], dtype=int32)
    """
    if type(x) is Array and _is_basic(idx):
        # NumPy's basic indexing is exactly the semantics of the staged path (but for
        # out-of-range ints, which clamp there).
        try:
            return Array._new(np.asarray(x._value[idx]), x._weak_type)
        except IndexError:
            pass
    if not isinstance(x, (Array, Tracer)):
        x = asarray(x)
    shape = tuple(x.shape)
    items = _parse(shape, idx)
    advanced = any(it[0] == "adv" for it in items)
    if advanced:  # scalar ints join the advanced indices (NumPy's rule)
        items = [("adv", _scalar(it[1], dtypes.default_int())) if it[0] == "int" else
                 ("adv", it[1]) if it[0] == "dyn" else it for it in items]
    return _getitem_items(x, shape, items)


_GATHER_MODES = ("clip", "fill", "drop", "promise_in_bounds")


def default_fill_value(dt):
    """What an out-of-range read gives under ``mode="fill"``: NaN for inexact dtypes,
    the largest unsigned, the smallest signed integer, ``True`` for bool (as JAX)."""
    dt = np.dtype(dt)
    if dt.kind in "fc" or dtypes.is_bfloat16(dt):
        return np.nan
    if dt.kind == "b":
        return True
    if dt.kind == "u":
        return np.iinfo(dt).max
    return np.iinfo(dt).min


def getitem_mode(x, idx, mode=None, fill_value=None):
    """``x.at[idx].get(mode=..., fill_value=...)``.

    ``mode`` is JAX's gather mode: ``None``, ``"clip"`` and ``"promise_in_bounds"``
    read clamped indices (as ``x[idx]``); ``"fill"`` (alias ``"drop"``) gives
    ``fill_value`` wherever an integer index is out of range after negative indices are
    counted from the end, static or traced alike.

    Examples
    --------
    >>> jnp.arange(3.).at[5].get(mode="fill", fill_value=-1.)
    Array(-1., dtype=float32)
    """
    if mode is not None and (not isinstance(mode, str) or mode not in _GATHER_MODES):
        raise ValueError(f"Unknown gather mode {mode!r}; expected one of "
                         f"{', '.join(repr(m) for m in _GATHER_MODES)}")
    if not isinstance(x, (Array, Tracer)):
        x = asarray(x)
    # Static ints become 0-d index arrays so an out-of-range one clamps or fills instead
    # of raising (NumPy gives the same result layout for a 0-d array as for an int).
    parts = idx if isinstance(idx, tuple) else (idx,)
    parts = tuple(_scalar(o, dtypes.default_int()) if type(o) is int or
                  isinstance(o, np.integer) else o for o in parts)
    if mode not in ("fill", "drop"):
        return getitem(x, parts)
    shape = tuple(x.shape)
    items = _parse(shape, parts)
    if any(it[0] == "adv" for it in items):
        items = [("adv", it[1]) if it[0] == "dyn" else it for it in items]
    fv = default_fill_value(x.dtype) if fill_value is None else fill_value
    # Pad each integer-indexed axis with one fill element and send every out-of-range
    # index there: the ordinary (clamping) read then returns the fill value.
    padded, out_items, axis = x, [], 0
    for it in items:
        if it[0] in ("none", "empty", "gap"):
            out_items.append(it)
            continue
        if it[0] in ("dyn", "adv"):
            i, n = it[1], shape[axis]
            dt = i.dtype
            nn = size_value(n, dt)
            ok = ew.lt(i, nn)
            if np.dtype(dt).kind != "u":
                ok = ew.bitwise_and(ok, ew.ge(i, ew.neg(nn)))
            i = ew.select_n(ok, _broadcast_like(nn, i), _normalize(i, n))
            out_items.append((it[0], i))
            cfg = [(0, 0, 0)] * len(shape)
            cfg[axis] = (0, 1, 0)
            fill = asarray_weak(fv if isinstance(fv, (Array, Tracer)) else
                                np.asarray(fv).astype(x.dtype).item(), x.dtype, False)
            padded = st.pad(padded, fill, cfg)
        else:
            out_items.append(it)
        axis += 1
    return _getitem_items(padded, tuple(padded.shape), out_items)


def _broadcast_like(s, i):
    return broadcast_to_shape(s, tuple(i.shape))


def _is_basic(idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    for o in idx:
        if o is None or o is Ellipsis:
            continue
        if isinstance(o, slice):
            if not all(p is None or type(p) is int for p in (o.start, o.stop, o.step)):
                return False
        elif type(o) is not int:
            return False
    return True


def _getitem_items(x, shape, items):
    # 1. Reversals, one static slice, one dynamic slice, then squeeze scalar axes.
    axis_items = [it for it in items if it[0] not in ("none", "empty", "gap")]
    revs, starts, limits, strides = [], [], [], []
    dyn_starts, squeeze_axes = [], []
    for ax, it in enumerate(axis_items):
        n = shape[ax]
        start, limit, stride = 0, n, 1
        if it[0] == "slice":
            _, first, step, count = it
            if step < 0:
                revs.append(ax)
                first, step = n - 1 - first, -step
            start, stride = first, step
            limit = first + (count - 1) * step + 1 \
                if not (type(count) is int and count == 0) else first
            if type(limit) is Dim:  # a strided slice of a symbolic size ends in range
                assume_at_least(n - limit, 0, "a strided slice ends within the array")
        elif it[0] == "int":
            start, limit = it[1], it[1] + 1
            squeeze_axes.append(ax)
        elif it[0] == "dyn":
            squeeze_axes.append(ax)
        starts.append(start)
        limits.append(limit)
        strides.append(stride)
        dyn_starts.append(it[1] if it[0] == "dyn" else None)  # lax wraps negatives
    out = x
    if revs:
        out = st.rev(out, tuple(revs))
    if starts != [0] * len(shape) or limits != list(shape) or strides != [1] * len(shape):
        out = st.slice(out, starts, limits, strides if any(s != 1 for s in strides) else None)
    if any(d is not None for d in dyn_starts):
        cur = tuple(out.shape)
        dts = [d.dtype for d in dyn_starts if d is not None]
        ds = [d if d is not None else _scalar(0, dts[0]) for d in dyn_starts]
        sizes = [1 if d is not None else s for d, s in zip(dyn_starts, cur)]
        out = st.dynamic_slice(out, ds, sizes)
    if squeeze_axes:
        out = st.squeeze(out, tuple(squeeze_axes))
    # 2. Advanced indices: one gather over the remaining axes.
    remaining = [it for it in axis_items if it[0] not in ("int", "dyn")]
    adv_pos = [k for k, it in enumerate(remaining) if it[0] == "adv"]
    bshape = ()
    if adv_pos:
        cur = tuple(out.shape)
        arrays = [_normalize(remaining[k][1], cur[k]) for k in adv_pos]
        arrays, bshape = _broadcast_index_arrays(arrays)
        out = gi.gather(out, arrays, tuple(adv_pos))
        if _layout(items) and adv_pos[0] != 0:
            nb, first = len(bshape), adv_pos[0]
            rest = list(range(nb, nb + len(remaining) - len(adv_pos)))
            perm = rest[:first] + list(range(nb)) + rest[first:]
            out = st.transpose(out, tuple(perm))
    # 3. New axes (None, and the length-0 axis of a False scalar mask).
    if any(it[0] in ("none", "empty") for it in items):
        out = st.reshape(out, _final_shape(items, tuple(out.shape), len(bshape)))
        if any(it[0] == "empty" for it in items):
            out = _empty_axes(out, items, len(bshape))
    return out


def _final_shape(items, cur, nb):
    """The result shape once ``None`` axes are inserted into ``cur``."""
    layout_inplace = _layout(items)
    dims = list(cur)
    out, k = [], 0
    if not layout_inplace and nb:
        out += dims[:nb]
        k = nb
    placed_b = not nb or not layout_inplace
    for it in items:
        kind = it[0]
        if kind in ("none", "empty"):
            out.append(1)
        elif kind == "slice":
            out.append(dims[k])
            k += 1
        elif kind == "adv" and not placed_b:
            out += dims[k:k + nb]
            k += nb
            placed_b = True
    return tuple(out)


def _empty_axes(out, items, nb):
    """Turn the length-1 axes of ``False`` scalar masks into length-0 axes."""
    shape = list(out.shape)
    pos = _new_axis_positions(items, nb)
    lo = [0] * len(shape)
    hi = list(shape)
    for p, kind in pos:
        if kind == "empty":
            hi[p] = 0
    return st.slice(out, lo, hi)


def _new_axis_positions(items, nb):
    layout_inplace = _layout(items)
    p = 0 if layout_inplace else nb
    placed_b = not nb or not layout_inplace
    res = []
    for it in items:
        if it[0] in ("none", "empty"):
            res.append((p, it[0]))
            p += 1
        elif it[0] == "slice":
            p += 1
        elif it[0] == "adv" and not placed_b:
            p += nb
            placed_b = True
    return res


# ---------------------------------------------------------------------------
# index_update: x.at[idx].set / add / multiply / min / max
# ---------------------------------------------------------------------------
def index_update(x, idx, values, mode):
    """``x`` with ``x[idx]`` combined with ``values`` by ``mode`` (a new array).

    ``mode`` is ``"set"``, ``"add"``, ``"multiply"``, ``"min"`` or ``"max"``; ``values``
    are broadcast to the shape of ``x[idx]`` and cast to ``x``'s dtype. Out-of-range
    array indices are dropped.

    Examples
    --------
    >>> jnp.zeros(4).at[jnp.array([0, 0, 3])].add(1.0)
    Array([2., 0., 0., 1.], dtype=float32)
    """
    if mode not in _UPDATE_MODES:
        raise ValueError(f"unknown index update mode {mode!r}; expected one of "
                         f"{', '.join(_UPDATE_MODES)}")
    if not isinstance(x, (Array, Tracer)):
        x = asarray(x)
    if isinstance(values, (list, tuple)):
        values = asarray(values)
    check_arraylike(f"x.at[...].{mode}", values)
    shape = tuple(x.shape)
    items = _parse(shape, idx)
    tshape = _indexed_shape(shape, items)
    vals = asarray_weak(values, x.dtype, x.weak_type)
    try:
        vals = broadcast_to_shape(vals, tshape)
    except ValueError:
        raise ValueError(f"x.at[...].{mode}: values of shape {np.shape(values)} cannot be "
                         f"broadcast to the indexed shape {tshape}") from None
    if any(type(d) is int and d == 0 for d in tshape):
        return x
    # A window of symbolic size (ranked) is read back only by a scatter.
    if all(it[0] in ("int", "none", "gap") or (it[0] == "slice" and it[2] == 1)
           for it in items) and (mode == "set" or not any(type(d) is Dim for d in tshape)):
        return _update_window(x, shape, items, vals, mode)
    return _update_scatter(x, shape, items, vals, mode)


def _indexed_shape(shape, items):
    """The shape of ``x[idx]`` from its parsed items, without staging anything."""
    adv_shapes = [np.shape(it[1]) for it in items if it[0] == "adv"]
    if not adv_shapes:
        return tuple(it[3] if it[0] == "slice" else 1 if it[0] == "none" else 0
                     for it in items if it[0] in ("slice", "none", "empty"))
    items = [("adv", ()) if it[0] in ("int", "dyn") else it for it in items]
    bshape = tuple(broadcast_shapes(*adv_shapes))
    cur = [n for n in bshape] if not _layout(items) else []
    out, placed = [], False
    for it in items:
        if it[0] == "slice":
            out.append(it[3])
        elif it[0] in ("none", "empty"):
            out.append(1 if it[0] == "none" else 0)
        elif it[0] == "adv" and _layout(items) and not placed:
            out += list(bshape)
            placed = True
    return tuple(cur + out)


def _combine(old, new, mode):
    if mode == "set":
        return new
    if dtypes.is_bool(old.dtype):
        fn = {"add": ew.bitwise_or, "multiply": ew.bitwise_and, "min": ew.bitwise_and,
              "max": ew.bitwise_or}[mode]
    else:
        fn = {"add": ew.add, "multiply": ew.mul, "min": ew.min, "max": ew.max}[mode]
    return fn(old, new)


def _update_window(x, shape, items, vals, mode):
    """Static basic indices with unit steps: a window at constant start indices."""
    axis_items = [it for it in items if it[0] not in ("none", "gap")]
    starts, sizes = [], []
    for ax, it in enumerate(axis_items):
        if it[0] == "slice":
            starts.append(it[1])
            sizes.append(it[3])
        elif it[0] == "int":
            starts.append(it[1])
            sizes.append(1)
    dt = dtypes.default_int()
    starts = [_scalar(s, dt) for s in starts]
    window = st.reshape(vals, sizes)
    if mode != "set":
        window = _combine(st.dynamic_slice(x, starts, sizes), window, mode)
    return st.dynamic_update_slice(x, window, starts)


def _fill(scalar, shape):
    return scalar if shape == () else st.broadcast_in_dim(scalar, shape, ())


def _update_scatter(x, shape, items, vals, mode):
    """General updates: explicit coordinates along every axis of ``x``, shaped like
    ``x[idx]`` without its new axes, then one scatter."""
    advanced = any(it[0] == "adv" for it in items)
    if advanced:
        items = [("adv", _scalar(it[1], dtypes.default_int())) if it[0] == "int" else
                 ("adv", it[1]) if it[0] == "dyn" else it for it in items]
    axis_items = [it for it in items if it[0] not in ("none", "empty", "gap")]
    adv = [(ax, it) for ax, it in enumerate(axis_items) if it[0] == "adv"]
    bshape, arrays = (), []
    if adv:
        arrays, bshape = _broadcast_index_arrays([_normalize(it[1], shape[ax])
                                                  for ax, it in adv])
    nb = len(bshape)
    # Result dims (no new axes): slices in order, with the advanced block in place or
    # first, as in getitem.
    inplace = _layout(items)
    order = []  # entries: ("s", axis) or ("b",)
    if adv and not inplace:
        order.append(("b",))
    for ax, it in enumerate(axis_items):
        if it[0] == "slice":
            order.append(("s", ax))
        elif it[0] == "adv" and inplace and ("b",) not in order:
            order.append(("b",))
    rshape, bpos, spos = [], 0, {}
    for o in order:
        if o[0] == "b":
            bpos = len(rshape)
            rshape += list(bshape)
        else:
            spos[o[1]] = len(rshape)
            rshape.append(axis_items[o[1]][3])
    rshape = tuple(rshape)
    prim = _UPDATE_MODES[mode]
    if dtypes.is_bool(x.dtype) and mode in ("min", "max"):
        prim = {"min": gi.scatter_mul_p, "max": gi.scatter_add_p}[mode]
    if adv and order[0] == ("b",) and all(
            it[0] == "adv" or (it[0] == "slice" and it[1] == 0 and it[2] == 1
                               and it[3] == shape[ax]) for ax, it in enumerate(axis_items)):
        # Index arrays on some axes, whole slices on the others, laid out as
        # (index shape) + (the other axes in order): the scatter's own form, so the
        # other axes need no coordinate arrays (``x.at[rows].add(v)`` on a matrix
        # reads one index per row of ``v``, not one per element).
        if tuple(vals.shape) != rshape:
            vals = st.reshape(vals, rshape)
        return prim.bind(x, vals, *arrays, axes=tuple(ax for ax, _ in adv))
    idt = arrays[0].dtype if arrays else dtypes.default_int()
    coords = []
    k = 0
    for ax, it in enumerate(axis_items):
        if it[0] == "slice":
            _, first, step, count = it
            ramp = ew.add(st.iota(idt, (count,)) if step == 1 else
                          ew.mul(st.iota(idt, (count,)), _scalar(step, idt)),
                          _scalar(first, idt)) if first else (
                st.iota(idt, (count,)) if step == 1 else
                ew.mul(st.iota(idt, (count,)), _scalar(step, idt)))
            coords.append(st.broadcast_in_dim(ramp, rshape, (spos[ax],)))
        elif it[0] == "adv":
            coords.append(st.broadcast_in_dim(arrays[k], rshape,
                                              tuple(range(bpos, bpos + nb))))
            k += 1
        elif it[0] == "int":
            coords.append(_fill(_scalar(it[1], idt), rshape))
        else:  # a traced scalar
            i = _normalize(it[1], shape[ax])
            if i.dtype != idt:
                i = ew.convert_element_type(i, idt, False)
            coords.append(_fill(i, rshape))
    if tuple(vals.shape) != rshape:
        vals = st.reshape(vals, rshape)
    if not coords:  # a 0-d x: x.at[()].set(v)
        return _combine(x, vals, mode)
    return prim.bind(x, vals, *coords, axes=tuple(range(len(shape))))
