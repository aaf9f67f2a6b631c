"""Shape manipulation: ``reshape``, ``transpose``, ``concatenate``, ``stack``, ``split``,
``flip``, ``roll``, ``tile``, ``repeat``, ``take``, ``diagonal`` … written with
``absjit.lax`` structural primitives (no primitives of their own)."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dim_assumptions import assume_at_least
from ..core.dims import dim_min, is_dim, same_shape, unify_sizes
from ..core.shapes import broadcast_shapes as _broadcast_shapes, size_of
from ..core.trace import Tracer
from ..ops import elementwise as ew
from ..ops import indexing as gi
from ..ops import structural as st
from ..ops._util import canonical_axes
from ..errors import ConcretizationTypeError, IncompatibleShapesError
from ._promote import asarray_weak, broadcast_to_shape, check_arraylike, promote_dtypes
from ._creation import array, asarray, full, zeros
from ._indexing import default_fill_value, size_value
from ..ops._joining import concatenate_values, stack_values
from ._reductions import cumsum, sum as _sum

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "swapaxes", "moveaxis",
           "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
           "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack",
           "split", "array_split", "hsplit", "vsplit", "dsplit", "flip", "fliplr", "flipud",
           "roll", "rot90", "tile", "repeat", "take", "take_along_axis", "diag", "diagonal",
           "trace", "atleast_1d", "atleast_2d", "atleast_3d", "ndim",
           "shape", "size"]


def _arr(x, name):
    """``x`` as an absjit value (Array or tracer) with its dtype kept."""
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, (list, tuple)):
        return array(x)
    check_arraylike(name, x)
    return asarray(x)


def _axis(name, axis, ndim):
    return canonical_axes(name, operator.index(axis), ndim)[0]


def _shape_of(x):
    return tuple(np.shape(x))


# ---------------------------------------------------------------------------
# reshape and axes
# ---------------------------------------------------------------------------
def reshape(a, shape=None, order="C", *, newshape=None, copy=None, out_sharding=None):
    """Gives ``a`` a new shape with the same number of elements; one entry may be -1.

    ``order='F'`` reads and writes the elements in column-major order. ``copy`` (the
    Array API's) is accepted and changes nothing: arrays are immutable, so a reshaped
    array never shares writes with its input.

    Examples
    --------
    >>> jnp.reshape(jnp.arange(6), (2, -1)).shape
    (2, 3)
    """
    shape = newshape if shape is None else shape
    if copy not in (None, True, False):
        raise ValueError(f"jnp.reshape: copy must be None, True or False, got {copy!r}")
    if out_sharding is not None:
        raise NotImplementedError("jnp.reshape: out_sharding is not supported by absjit")
    a = _arr(a, "reshape")
    if order != "C":
        _check_order("reshape", order)
        # Column-major: reverse the axes, reshape row-major to the reversed shape, and
        # reverse the axes of the result.
        if isinstance(shape, (tuple, list)):
            rshape = tuple(shape)[::-1]
        else:
            rshape = shape
        return transpose(reshape(transpose(a), rshape))
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__index__") and \
            not isinstance(shape, (tuple, list)) and np.ndim(shape) == 0:
        shape = (shape,)
    dims = [st.operator_index(d, "reshape") for d in shape]
    size = size_of(_shape_of(a))
    if dims.count(-1) > 1:
        raise ValueError(f"jnp.reshape: can only specify one unknown dimension, got {tuple(dims)}")
    if any(d < -1 for d in dims):
        raise ValueError(f"jnp.reshape: invalid shape {tuple(dims)}")
    if -1 in dims:
        known = size_of([d for d in dims if d != -1])
        if (type(known) is int and known == 0) or size % known:
            raise ValueError(f"cannot reshape array of shape {_shape_of(a)} (size {size}) "
                             f"into shape {tuple(dims)}")
        dims[dims.index(-1)] = size // known
    new_size = size_of(dims)
    if is_dim(new_size) or is_dim(size):
        # Equal, unified, or undecidable (``x.reshape(4 * x.shape[0])`` holds only if
        # x1 is 4): InconclusiveDimensionError from unify_sizes; else provably unequal.
        if not same_shape((new_size,), (size,)) and not unify_sizes(
                new_size, size, f"reshape of {_shape_of(a)} to {tuple(dims)}"):
            raise ValueError(f"cannot reshape array of shape {_shape_of(a)} (size {size}) "
                             f"into shape {tuple(dims)}")
    elif new_size != size:
        raise IncompatibleShapesError(
            f"cannot reshape array of shape {_shape_of(a)} (size {size}) into shape "
            f"{tuple(dims)}")
    if same_shape(tuple(dims), _shape_of(a)):
        return a
    return st.reshape(a, dims)


def _check_order(name, order):
    if order == "A" or (order == "K" and name == "ravel"):
        raise NotImplementedError(f"jnp.{name}: order={order!r} is not supported; use "
                                  "'C' or 'F'")
    if order != "F":
        raise ValueError(f"jnp.{name}: order must be 'C' or 'F', got {order!r}")


def ravel(a, order="C"):
    """The elements of ``a`` as a 1-D array (row-major, or column-major for
    ``order='F'``).

    Examples
    --------
    >>> jnp.ravel(jnp.arange(4).reshape(2, 2), order="F")
    Array([0, 2, 1, 3], dtype=int32)
    """
    if order not in ("C", "F"):
        _check_order("ravel", order)
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    """Permute the axes of ``a`` (reverse them when ``axes`` is None).

    Examples
    --------
    >>> jnp.transpose(jnp.zeros((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    a = _arr(a, "transpose")
    nd = len(_shape_of(a))
    if axes is None:
        perm = tuple(range(nd))[::-1]
    else:
        if len(axes) != nd:
            raise ValueError(f"jnp.transpose: axes {tuple(axes)} don't match an array of "
                             f"rank {nd}")
        perm = canonical_axes("transpose", tuple(axes), nd)
    if perm == tuple(range(nd)):
        return a
    return st.transpose(a, perm)


def permute_dims(a, axes):
    """Array-API name of :func:`transpose`."""
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    """``a`` with ``axis1`` and ``axis2`` interchanged."""
    a = _arr(a, "swapaxes")
    nd = len(_shape_of(a))
    i, j = _axis("swapaxes", axis1, nd), _axis("swapaxes", axis2, nd)
    perm = list(range(nd))
    perm[i], perm[j] = j, i
    return transpose(a, perm)


def moveaxis(a, source, destination):
    """Move axes ``source`` to positions ``destination`` (others keep their order)."""
    a = _arr(a, "moveaxis")
    nd = len(_shape_of(a))
    src = canonical_axes("moveaxis", source, nd)
    dst = canonical_axes("moveaxis", destination, nd)
    if len(src) != len(dst):
        raise ValueError("jnp.moveaxis: source and destination must have the same number "
                         "of elements")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(a, perm)


def expand_dims(a, axis):
    """Insert size-1 axes at the positions ``axis`` of the result."""
    a = _arr(a, "expand_dims")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    nd = len(_shape_of(a)) + len(axes)
    return st.expand_dims(a, canonical_axes("expand_dims", axes, nd))


def squeeze(a, axis=None):
    """Remove size-1 axes (all of them, or those in ``axis``, which must have size 1)."""
    a = _arr(a, "squeeze")
    shp = _shape_of(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(shp) if d == 1)
    else:
        axes = canonical_axes("squeeze", axis, len(shp))
        for ax in axes:
            if shp[ax] != 1:
                raise ValueError(f"jnp.squeeze: cannot select an axis to squeeze out which "
                                 f"has size not equal to one (axis {ax} of shape {shp})")
    return st.squeeze(a, axes) if axes else a


def broadcast_shapes(*shapes):
    """The NumPy broadcast of ``shapes``; ``ValueError`` when they do not broadcast."""
    try:
        return _broadcast_shapes(*[tuple(s) if not isinstance(s, int) else (s,)
                                   for s in shapes])
    except ValueError:
        raise ValueError("jnp.broadcast_shapes: incompatible shapes for broadcasting: "
                         f"{', '.join(str(tuple(np.atleast_1d(s))) for s in shapes)}") from None


def broadcast_to(array, shape):
    """``array`` broadcast (NumPy rules) to ``shape``.

    Examples
    --------
    >>> jnp.broadcast_to(jnp.array([1, 2]), (2, 2))
    Array([[1, 2],
           [1, 2]], dtype=int32)
    """
    a = _arr(array, "broadcast_to")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    shape = tuple(st.operator_index(d, "broadcast_to") for d in shape)
    try:
        return broadcast_to_shape(a, shape)
    except ValueError:
        raise ValueError(f"jnp.broadcast_to: cannot broadcast an array of shape "
                         f"{_shape_of(a)} to shape {shape}") from None


def broadcast_arrays(*args):
    """Broadcast every argument to their common shape."""
    arrs = [_arr(a, "broadcast_arrays") for a in args]
    target = broadcast_shapes(*[_shape_of(a) for a in arrs])
    return [broadcast_to_shape(a, target) for a in arrs]


# ---------------------------------------------------------------------------
# joining and splitting
# ---------------------------------------------------------------------------
def _promoted(arrays, name):
    if isinstance(arrays, (Array, Tracer, np.ndarray)):
        arrays = [arrays[i] for i in range(len(arrays))]
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"jnp.{name}: need at least one array")
    return promote_dtypes(*[_arr(a, name) for a in arrays])


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (``axis=None`` flattens first).

    Examples
    --------
    >>> jnp.concatenate([jnp.zeros(2), jnp.ones(1)])
    Array([0., 0., 1.], dtype=float32)
    """
    arrs = _promoted(arrays, "concatenate")
    if axis is None:
        arrs = [ravel(a) for a in arrs]
        axis = 0
    out = concatenate_values(arrs, axis)
    if dtype is not None:
        out = asarray_weak(out, dtypes.user_dtype(dtype), False)
    return out


concat = concatenate


def stack(arrays, axis=0, dtype=None):
    """Join same-shaped arrays along a new axis.

    Examples
    --------
    >>> jnp.stack([jnp.zeros(2), jnp.ones(2)]).shape
    (2, 2)
    """
    out = stack_values(_promoted(arrays, "stack"), axis)
    if dtype is not None:
        out = asarray_weak(out, dtypes.user_dtype(dtype), False)
    return out


def hstack(tup, dtype=None):
    """Stack along the second axis (the first for 1-D arrays)."""
    arrs = [atleast_1d(a) for a in _promoted(tup, "hstack")]
    return concatenate(arrs, 0 if len(_shape_of(arrs[0])) == 1 else 1, dtype)


def vstack(tup, dtype=None):
    """Stack along the first axis after making arrays at least 2-D."""
    return concatenate([atleast_2d(a) for a in _promoted(tup, "vstack")], 0, dtype)


def dstack(tup, dtype=None):
    """Stack along the third axis after making arrays at least 3-D."""
    return concatenate([atleast_3d(a) for a in _promoted(tup, "dstack")], 2, dtype)


def column_stack(tup):
    """Stack 1-D arrays as columns (2-D arrays are joined as they are)."""
    arrs = [a if len(_shape_of(a)) >= 2 else reshape(a, (-1, 1))
            for a in _promoted(tup, "column_stack")]
    return concatenate(arrs, 1)


def _split(name, ary, indices_or_sections, axis, even):
    a = _arr(ary, name)
    shp = _shape_of(a)
    ax = _axis(name, axis, len(shp))
    n = shp[ax]
    if isinstance(indices_or_sections, (int, np.integer)) or \
            (hasattr(indices_or_sections, "__index__") and np.ndim(indices_or_sections) == 0):
        sections = st.operator_index(indices_or_sections, name)
        if sections <= 0:
            raise ValueError(f"jnp.{name}: number of sections must be larger than 0")
        if even and n % sections:
            raise ValueError(f"jnp.{name}: array split does not result in an equal division "
                             f"({n} elements into {sections} sections)")
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
        bounds = list(np.cumsum([0] + sizes))
    else:
        idx = [st.operator_index(i, name) for i in np.asarray(indices_or_sections).ravel()] \
            if not isinstance(indices_or_sections, (list, tuple)) else \
            [st.operator_index(i, name) for i in indices_or_sections]
        bounds = [0] + [min(max(i + n if i < 0 else i, 0), n) for i in idx] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        hi = max(hi, lo)
        out.append(st.slice_in_dim(a, int(lo), int(hi), 1, ax))
    return out


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections, or at the given indices, along ``axis``.

    Examples
    --------
    >>> [p.tolist() for p in jnp.split(jnp.arange(6), 3)]
    [[0, 1], [2, 3], [4, 5]]
    """
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """Like :func:`split`, but sections may differ in size by one."""
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-D arrays)."""
    return split(ary, indices_or_sections, 0 if np.ndim(ary) == 1 else 1)


def vsplit(ary, indices_or_sections):
    """Split along the first axis (arrays of rank >= 2)."""
    if np.ndim(ary) < 2:
        raise ValueError("jnp.vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along the third axis (arrays of rank >= 3)."""
    if np.ndim(ary) < 3:
        raise ValueError("jnp.dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


# ---------------------------------------------------------------------------
# reordering
# ---------------------------------------------------------------------------
def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    a = _arr(m, "flip")
    axes = canonical_axes("flip", axis, len(_shape_of(a)))
    return st.rev(a, axes) if axes else a


def fliplr(m):
    """Reverse the second axis."""
    if np.ndim(m) < 2:
        raise ValueError("jnp.fliplr: input must be at least 2-D")
    return flip(m, 1)


def flipud(m):
    """Reverse the first axis."""
    if np.ndim(m) < 1:
        raise ValueError("jnp.flipud: input must be at least 1-D")
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Roll elements along ``axis`` by ``shift`` (static or traced); elements that fall
    off one end come back at the other.

    Examples
    --------
    >>> jnp.roll(jnp.arange(5), 2)
    Array([3, 4, 0, 1, 2], dtype=int32)
    """
    a = _arr(a, "roll")
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _shape_of(a))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    shifts = (shift,) if np.ndim(shift) == 0 else tuple(shift) if not isinstance(
        shift, (Array, Tracer)) else [shift[i] for i in range(len(shift))]
    shifts, axes = list(shifts), list(axes)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("jnp.roll: shift and axis must have the same length")
    nd = len(_shape_of(a))
    for s, ax in zip(shifts, axes):
        a = _roll1(a, s, _axis("roll", ax, nd))
    return a


def _roll1(a, shift, ax):
    n = _shape_of(a)[ax]
    if n == 0:
        return a
    if isinstance(shift, Tracer):
        # A traced shift: read a window of the array concatenated with itself.
        dt = shift.dtype
        start = ew.rem(ew.sub(Array._new(np.asarray(n, dt), False),
                              ew.rem(shift, Array._new(np.asarray(n, dt), False))),
                       Array._new(np.asarray(n, dt), False))
        start = ew.rem(ew.add(start, Array._new(np.asarray(n, dt), False)),
                       Array._new(np.asarray(n, dt), False))
        doubled = st.concatenate([a, a], ax)
        shp = _shape_of(a)
        zero = Array._new(np.asarray(0, dt), False)
        starts = [start if i == ax else zero for i in range(len(shp))]
        return st.dynamic_slice(doubled, starts, shp)
    s = st.operator_index(shift, "roll") % n
    if s == 0:
        return a
    return st.concatenate([st.slice_in_dim(a, n - s, n, 1, ax),
                           st.slice_in_dim(a, 0, n - s, 1, ax)], ax)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
    a = _arr(m, "rot90")
    nd = len(_shape_of(a))
    ax0, ax1 = canonical_axes("rot90", tuple(axes), nd)
    if len(axes) != 2 or ax0 == ax1:
        raise ValueError("jnp.rot90: axes must be two different axes")
    k = st.operator_index(k, "rot90") % 4
    if k == 0:
        return a
    if k == 2:
        return flip(a, (ax0, ax1))
    perm = list(range(nd))
    perm[ax0], perm[ax1] = ax1, ax0
    if k == 1:
        return transpose(flip(a, ax1), perm)
    return flip(transpose(a, perm), ax1)


def tile(A, reps):
    """Repeat the whole array ``reps`` times along each axis.

    Examples
    --------
    >>> jnp.tile(jnp.array([1, 2]), 2)
    Array([1, 2, 1, 2], dtype=int32)
    """
    a = _arr(A, "tile")
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    reps = tuple(st.operator_index(r, "tile") for r in reps)
    shp = _shape_of(a)
    nd = max(len(shp), len(reps))
    shp = (1,) * (nd - len(shp)) + shp
    reps = (1,) * (nd - len(reps)) + reps
    if any(r < 0 for r in reps):
        raise ValueError(f"jnp.tile: negative repetitions {reps}")
    a = reshape(a, shp)
    # Broadcast each axis against a new leading "repeat" axis, then merge the two.
    big = []
    dims = []
    for i, (r, d) in enumerate(zip(reps, shp)):
        big += [r, d]
        dims.append(2 * i + 1)
    out = st.broadcast_in_dim(a, big, tuple(dims))
    return reshape(out, tuple(r * d for r, d in zip(reps, shp)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element ``repeats`` times (an int, or one count per element).

    Per-element counts must be concrete unless ``total_repeat_length`` gives the
    result's length (then extra elements are dropped or the last repeated).

    Examples
    --------
    >>> jnp.repeat(jnp.array([1, 2]), 2)
    Array([1, 1, 2, 2], dtype=int32)
    >>> jnp.repeat(jnp.array([1, 2]), jnp.array([1, 3]))
    Array([1, 2, 2, 2], dtype=int32)
    """
    a = _arr(a, "repeat")
    if axis is None:
        a = ravel(a)
        axis = 0
    shp = _shape_of(a)
    ax = _axis("repeat", axis, len(shp))
    n = shp[ax]
    if np.ndim(repeats) == 0 and not isinstance(repeats, Tracer):
        r = st.operator_index(repeats, "repeat")
        if r < 0:
            raise ValueError(f"jnp.repeat: negative repeats {r}")
        if total_repeat_length is not None and total_repeat_length != r * n:
            repeats = np.full(n, r)
        else:
            expanded = st.broadcast_in_dim(a, shp[:ax + 1] + (r,) + shp[ax + 1:],
                                           tuple(range(ax + 1)) +
                                           tuple(range(ax + 2, len(shp) + 1)))
            return reshape(expanded, shp[:ax] + (n * r,) + shp[ax + 1:])
    if isinstance(repeats, Tracer) and np.ndim(repeats) == 0:
        repeats = broadcast_to(repeats, (n,))
    known = repeats if not isinstance(repeats, (Array, Tracer)) else (
        repeats._value if isinstance(repeats, Array) else repeats.aval.concrete_value())
    if known is not None:
        reps = np.asarray(known)
        if is_dim(n) and reps.ndim == 1 and unify_sizes(reps.shape[0], n, "jnp.repeat"):
            n = reps.shape[0]  # ranked: one repeat per element fixes the axis's size
        # A scalar, or one entry (NumPy and the Array API), stands for every element.
        reps = np.broadcast_to(reps, (n,)) if reps.ndim == 0 or reps.shape == (1,) else reps
        if reps.shape != (n,):
            raise ValueError(f"jnp.repeat: repeats of shape {reps.shape} must be a scalar or "
                             f"have one entry per element along axis {ax} ({n})")
        if (reps < 0).any():
            raise ValueError("jnp.repeat: negative repeats")
        src = np.repeat(np.arange(n), reps)
        if total_repeat_length is not None:
            length = int(total_repeat_length)
            src = src[:length] if len(src) >= length else np.concatenate(
                [src, np.full(length - len(src), src[-1] if len(src) else 0)])
        idx = Array._new(src.astype(dtypes.default_int()), False)
        return take(a, idx, axis=ax, mode="clip")
    if total_repeat_length is None:
        raise ConcretizationTypeError(
            repeats, "jnp.repeat with non-scalar repeats needs their values to know the "
                     "result's length; pass total_repeat_length=... or make repeats static.")
    return _repeat_traced(a, repeats, ax, int(total_repeat_length))


def _repeat_traced(a, repeats, ax, length):
    """Source index of output ``j``: how many cumulative counts are ``<= j``."""
    n = _shape_of(a)[ax]
    ends = cumsum(asarray_weak(repeats, dtypes.default_int(), False))
    pos = st.iota(dtypes.default_int(), (length,))
    cmp = ew.le(st.broadcast_in_dim(ends, (length, n), (1,)),
                st.broadcast_in_dim(pos, (length, n), (0,)))
    src = _sum(cmp, axis=1)
    src = ew.min(asarray_weak(src, dtypes.default_int(), False),
                 Array._new(np.asarray(max(n - 1, 0), dtypes.default_int()), False))
    return take(a, src, axis=ax, mode="clip")


# ---------------------------------------------------------------------------
# take, take_along_axis
# ---------------------------------------------------------------------------
_fill_value = default_fill_value


def _index_array(indices, name):
    if isinstance(indices, (Array, Tracer)):
        idx = indices
    else:
        raw = np.asarray(indices)
        if raw.size == 0 and raw.dtype.kind == "f":
            raw = raw.astype(np.intp)
        idx = Array._new(np.asarray(raw, dtypes.canonicalize_dtype(raw.dtype)), False) \
            if raw.dtype != object else None
    if idx is None or not dtypes.is_integer(idx.dtype):
        raise TypeError(f"jnp.{name}: indices must be integers, got "
                        f"{getattr(idx, 'dtype', type(indices).__name__)}")
    return idx


def _gather_mode(a, idx_arrays, axes, mode, fill_value, name):
    """Gather with NumPy-style negative indices and JAX's ``mode`` for the rest."""
    shp = _shape_of(a)
    if mode is None:
        mode = "fill"
    if mode not in ("fill", "clip", "wrap", "promise_in_bounds"):
        raise ValueError(f"jnp.{name}: invalid mode {mode!r}; expected 'fill', 'clip' or "
                         "'wrap'")
    fixed, valid = [], None
    for i, ax in zip(idx_arrays, axes):
        n = shp[ax]
        dt = i.dtype
        nn = size_value(n, dt)
        if mode == "wrap":
            i = ew.rem(ew.add(ew.rem(i, nn), nn), nn) if n else i
        elif np.dtype(dt).kind != "u":
            i = ew.select_n(ew.lt(i, Array._new(np.asarray(0, dt), False)), i, ew.add(i, nn))
        if mode == "fill":
            ok = ew.bitwise_and(ew.ge(i, Array._new(np.asarray(0, dt), False)), ew.lt(i, nn))
            valid = ok if valid is None else ew.bitwise_and(valid, ok)
        fixed.append(i)
    if any(shp[ax] == 0 for ax in axes) and int(np.prod(_shape_of(fixed[0]))) > 0:
        if mode != "fill":
            raise IndexError(f"jnp.{name}: cannot take non-empty indices from an empty axis")
        out_shape = _shape_of(fixed[0]) + tuple(d for k, d in enumerate(shp) if k not in axes)
        fv = _fill_value(a.dtype) if fill_value is None else fill_value
        return full(out_shape, fv, a.dtype)
    out = gi.gather(a, fixed, axes)
    if mode == "fill":
        fv = _fill_value(a.dtype) if fill_value is None else fill_value
        fv = asarray_weak(np.asarray(fv).astype(a.dtype).item() if not isinstance(
            fv, (Array, Tracer)) else fv, a.dtype, a.weak_type)
        oshape = _shape_of(out)
        mask = st.broadcast_in_dim(valid, oshape, tuple(range(len(_shape_of(valid)))))
        out = ew.select_n(mask, broadcast_to_shape(fv, oshape), out)
    return out


def take(a, indices, axis=None, mode=None, fill_value=None, *, unique_indices=False,
         indices_are_sorted=False):
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened ``a`` when None).

    ``mode`` handles out-of-range indices as in JAX: ``"fill"`` (the default) returns
    ``fill_value`` (NaN for floats, the minimum for signed integers), ``"clip"`` clamps,
    ``"wrap"`` wraps around. Negative indices count from the end.

    Examples
    --------
    >>> jnp.take(jnp.array([10, 20, 30]), jnp.array([2, -1, 0]))
    Array([30, 30, 10], dtype=int32)
    """
    a = _arr(a, "take")
    idx = _index_array(indices, "take")
    if axis is None:
        a = ravel(a)
        axis = 0
    shp = _shape_of(a)
    ax = _axis("take", axis, len(shp))
    out = _gather_mode(a, [idx], (ax,), mode, fill_value, "take")
    nb = len(_shape_of(idx))
    if ax == 0 or nb == 0:
        return out
    # gather puts the index dims first; NumPy puts them where ``axis`` was.
    rest = list(range(nb, nb + len(shp) - 1))
    return st.transpose(out, tuple(rest[:ax] + list(range(nb)) + rest[ax:]))


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """``arr`` read along ``axis`` at ``indices`` of the same rank (other axes broadcast).

    Examples
    --------
    >>> x = jnp.array([[10, 30, 20]])
    >>> jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)
    Array([[10, 20, 30]], dtype=int32)
    """
    a = _arr(arr, "take_along_axis")
    idx = _index_array(indices, "take_along_axis")
    if axis is None:
        a, axis = ravel(a), 0
        idx = ravel(idx)
    shp, ishp = _shape_of(a), _shape_of(idx)
    if len(shp) != len(ishp):
        raise ValueError(f"jnp.take_along_axis: indices of shape {ishp} must have the same "
                         f"rank as the array of shape {shp}")
    ax = _axis("take_along_axis", axis, len(shp))
    try:
        bshape = list(_broadcast_shapes(tuple(d for i, d in enumerate(shp) if i != ax),
                                        tuple(d for i, d in enumerate(ishp) if i != ax)))
    except ValueError:
        raise ValueError(f"jnp.take_along_axis: array of shape {shp} and indices of shape "
                         f"{ishp} do not broadcast outside axis {ax}") from None
    out_shape = tuple(bshape[:ax] + [ishp[ax]] + bshape[ax:])
    target = tuple(bshape[:ax] + [shp[ax]] + bshape[ax:])
    a = broadcast_to_shape(a, target)
    idx = broadcast_to_shape(idx, out_shape)
    dt = idx.dtype
    arrays = [idx if i == ax else st.iota(dt, out_shape, i) for i in range(len(shp))]
    # Only the ``axis`` index can be out of range: give the others their mode too.
    return _gather_mode(a, arrays, tuple(range(len(shp))), mode, fill_value,
                        "take_along_axis")


# ---------------------------------------------------------------------------
# diagonals (tri, tril and triu live with the creation functions)
# ---------------------------------------------------------------------------
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the ``(axis1, axis2)`` planes, as the last axis.

    Examples
    --------
    >>> jnp.diagonal(jnp.arange(9).reshape(3, 3), 1)
    Array([1, 5], dtype=int32)
    """
    a = _arr(a, "diagonal")
    shp = _shape_of(a)
    if len(shp) < 2:
        raise ValueError("jnp.diagonal requires an array of at least two dimensions")
    ax1, ax2 = _axis("diagonal", axis1, len(shp)), _axis("diagonal", axis2, len(shp))
    if ax1 == ax2:
        raise ValueError("jnp.diagonal: axis1 and axis2 cannot be the same")
    offset = st.operator_index(offset, "diagonal")
    n1, n2 = shp[ax1], shp[ax2]
    lo, hi = n1 + builtins.min(offset, 0), n2 - builtins.max(offset, 0)
    length = dim_min(lo, hi) if is_dim(lo) or is_dim(hi) else builtins.min(lo, hi)
    dt = dtypes.default_int()
    if is_dim(length):
        # ranked: the diagonal of a square (or offset-trimmed) plane, gathered at iota
        # indices; ``length >= 0`` is assumed, checked at entry
        assume_at_least(length, 0, "jnp.diagonal: the offset lies within the plane")
        idx = st.iota(dt, (length,))
        rows, cols = idx, idx
        if offset < 0:
            rows = ew.add(idx, asarray_weak(-offset, dt, False))
        elif offset > 0:
            cols = ew.add(idx, asarray_weak(offset, dt, False))
    else:
        length = builtins.max(0, length)
        if length == 0:
            rest = tuple(d for i, d in enumerate(shp) if i not in (ax1, ax2))
            return zeros(rest + (0,), a.dtype)
        rows = Array._new((np.arange(length) - builtins.min(offset, 0)).astype(dt), False)
        cols = Array._new((np.arange(length) + builtins.max(offset, 0)).astype(dt), False)
    out = gi.gather(a, [rows, cols], (ax1, ax2))
    return moveaxis(out, 0, -1)


def diag(v, k=0):
    """The ``k``-th diagonal of a 2-D array, or a 2-D array with 1-D ``v`` on it."""
    v = _arr(v, "diag")
    k = st.operator_index(k, "diag")
    shp = _shape_of(v)
    if len(shp) == 2:
        return diagonal(v, k)
    if len(shp) != 1:
        raise ValueError(f"jnp.diag: input must be 1-D or 2-D, got shape {shp}")
    n = shp[0] + abs(k)
    dt = dtypes.default_int()
    row, col = st.iota(dt, (n, n), 0), st.iota(dt, (n, n), 1)
    mask = ew.eq(ew.add(row, Array._new(np.asarray(k, dt), False)), col)
    padded = st.pad(v, Array._new(np.zeros((), v.dtype), False), ((0, abs(k), 0),))
    vals = st.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    zero = broadcast_to_shape(Array._new(np.zeros((), v.dtype), v.weak_type), (n, n))
    return ew.select_n(mask, zero, vals)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along the ``offset`` diagonal of the ``(axis1, axis2)`` planes."""
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# ---------------------------------------------------------------------------
# rank helpers
# ---------------------------------------------------------------------------
def _atleast(n, arys):
    out = []
    for a in arys:
        a = _arr(a, f"atleast_{n}d")
        shp = _shape_of(a)
        if len(shp) < n:
            if n == 3 and len(shp) == 1:
                shp = (1,) + shp + (1,)
            elif n == 3 and len(shp) == 2:
                shp = shp + (1,)
            else:
                shp = (1,) * (n - len(shp)) + shp
            a = st.reshape(a, shp)
        out.append(a)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each input as an array of rank >= 1."""
    return _atleast(1, arys)


def atleast_2d(*arys):
    """Each input as an array of rank >= 2 (new axes in front)."""
    return _atleast(2, arys)


def atleast_3d(*arys):
    """Each input as an array of rank >= 3 (``(N,)`` becomes ``(1, N, 1)``)."""
    return _atleast(3, arys)


def ndim(a):
    """Number of dimensions of ``a``."""
    return len(np.shape(a))


def shape(a):
    """Shape of ``a`` as a tuple."""
    return tuple(np.shape(a))


def size(a, axis=None):
    """Number of elements of ``a`` (along ``axis`` when given)."""
    shp = np.shape(a)
    if axis is None:
        return size_of(shp)  # (symbolic at the ranked level, like ``x.size``)
    return shp[_axis("size", axis, len(shp))]
