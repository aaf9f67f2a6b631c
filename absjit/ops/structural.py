"""Structural primitives: broadcasting, reshaping, transposition, slicing, padding,
concatenation, reversal and iota.

Backends turn most of these into index arithmetic or views rather than copies.

Index rules shared by every backend:
  * ``dynamic_slice`` and ``dynamic_update_slice`` take their start indices as scalar
    integer operands and *clamp* each start into ``[0, dim - size]`` so the window
    always lies inside the operand (never an error, never an out-of-bounds access).
    Negative starts are not wrapped here; ``absjit.numpy`` normalises NumPy-style
    negative indices before it binds them.
  * ``pad`` accepts negative low/high padding, which removes elements from that edge.
  * gather/scatter live in :mod:`absjit.ops.indexing`.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.avals import ShapedArray
from ..core.fusion import IndexMap, Value, def_fusion
from ..core.dim_assumptions import assume_at_least, assume_ordered
from ..core.dims import Dim, dim_max
from ..core.shapes import IxClamp, as_size, ix_add, ix_const, ix_scale, size_of
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import Tracer
from ..interpreters import ad, array_ops, batching
from ..errors import IncompatibleShapesError

__all__ = ["broadcast_in_dim_p", "broadcast_in_dim", "broadcast", "reshape_p", "reshape",
           "operator_index", "transpose_p", "transpose", "squeeze_p", "squeeze",
           "expand_dims", "slice_p", "slice", "slice_in_dim", "index_in_dim",
           "dynamic_slice_p", "dynamic_slice", "dynamic_update_slice_p",
           "dynamic_update_slice", "concatenate_p", "concatenate", "pad_p", "pad",
           "rev_p", "rev", "iota_p", "iota"]


_pyslice = builtins.slice  # this module defines lax.slice


def _aval(x):
    from ..core.trace import get_aval
    return get_aval(x)


def _zeros(aval):
    return ad.zeros_like_aval(aval)


def _check_axes(name, dims, ndim, unique=True):
    for d in dims:
        if not 0 <= d < ndim:
            raise ValueError(f"lax.{name}: dimension {d} is out of range for an operand of "
                             f"rank {ndim}")
    if unique and len(set(dims)) != len(dims):
        raise ValueError(f"lax.{name}: dimensions {tuple(dims)} contain duplicates")


# ---------------------------------------------------------------------------
# broadcast_in_dim
# ---------------------------------------------------------------------------
broadcast_in_dim_p = Primitive("broadcast_in_dim", param_order=("shape", "broadcast_dimensions"))


def broadcast_in_dim_index_map(out_idx, in_aval, out_aval, read, *, shape, broadcast_dimensions):
    return [ix_const(0) if in_aval.shape[i] == 1 and shape[d] != 1 else out_idx[d]
            for i, d in enumerate(broadcast_dimensions)]


def_fusion(broadcast_in_dim_p, IndexMap(broadcast_in_dim_index_map))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast ``x`` to ``shape``; operand dim ``i`` maps to ``broadcast_dimensions[i]``.

    Examples
    --------
    >>> broadcast_in_dim(jnp.array([1, 2]), (3, 2), (1,)).shape
    (3, 2)
    """
    return broadcast_in_dim_p.bind(x, shape=tuple(operator_index(d, "broadcast_in_dim")
                                                  for d in shape),
                                   broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions))


def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"lax.broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} "
                        f"must have one entry per operand dimension ({x.ndim})")
    if any(not 0 <= d < len(shape) for d in broadcast_dimensions) or \
            list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(f"lax.broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} "
                        f"must be strictly increasing and within the rank of {shape}")
    if any(d < 0 for d in shape):
        raise TypeError(f"lax.broadcast_in_dim: negative size in shape {shape}")
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] != 1 and x.shape[i] != shape[d]:
            raise TypeError(f"lax.broadcast_in_dim: operand of shape {x.shape} cannot be "
                            f"broadcast to {shape} (dimension {i} has size {x.shape[i]}, "
                            f"target dimension {d} has size {shape[d]})")
    return [ShapedArray(shape, x.dtype, x.weak_type)]


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return [np.broadcast_to(np.reshape(x, expanded), shape)]


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    # Sum over the new dimensions and over the ones broadcast from size 1.
    from .reductions import reduce_sum
    in_shape = x.aval.shape
    summed = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    summed += tuple(d for i, d in enumerate(broadcast_dimensions)
                    if in_shape[i] == 1 and shape[d] != 1)
    out = reduce_sum(ct, tuple(sorted(summed))) if summed else ct
    return [reshape(out, in_shape)]


def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    size = _aval(x).shape[0]
    return [broadcast_in_dim(x, (size,) + tuple(shape),
                             (0,) + tuple(b + 1 for b in broadcast_dimensions))], [0]


abstract_eval_rules[broadcast_in_dim_p] = _broadcast_in_dim_abstract
impl_rules[broadcast_in_dim_p] = _broadcast_in_dim_impl
ad.deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
batching.batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch


def broadcast(x, sizes):
    """Prepend dimensions of ``sizes`` to ``x`` (``lax.broadcast``)."""
    shape = tuple(sizes) + tuple(np.shape(x))
    nlead = len(sizes)
    return broadcast_in_dim(x, shape, tuple(range(nlead, len(shape))))


# ---------------------------------------------------------------------------
# reshape
# ---------------------------------------------------------------------------
reshape_p = Primitive("reshape", param_order=("new_sizes", "dimensions"))


def reshape_index_map(out_idx, in_aval, out_aval, read, *, new_sizes, dimensions):
    """Only reshapes that add or drop size-1 dimensions are index arithmetic."""
    if dimensions is not None:
        return None
    in_big = [d for d, n in enumerate(in_aval.shape) if n != 1]
    out_big = [d for d, n in enumerate(out_aval.shape) if n != 1]
    if [in_aval.shape[d] for d in in_big] != [out_aval.shape[d] for d in out_big]:
        return None
    idx = [ix_const(0)] * in_aval.ndim
    for di, do in zip(in_big, out_big):
        idx[di] = out_idx[do]
    return idx


def_fusion(reshape_p, IndexMap(reshape_index_map))


def reshape(x, new_sizes, dimensions=None):
    """Reshape ``x`` (row-major); ``dimensions`` optionally transposes first.

    Examples
    --------
    >>> reshape(jnp.arange(6), (2, 3)).shape
    (2, 3)
    """
    new_sizes = tuple(operator_index(d, "reshape") for d in new_sizes)
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"lax.reshape: sizes must be non-negative, got {new_sizes}")
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    return reshape_p.bind(x, new_sizes=new_sizes, dimensions=dims)


def _reshape_abstract(x, *, new_sizes, dimensions):
    size = size_of(new_sizes)
    if size != x.size:
        raise IncompatibleShapesError(
            f"lax.reshape: cannot reshape array of shape {x.shape} (size {x.size}) into "
            f"shape {tuple(new_sizes)} (size {size})")
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(f"lax.reshape: dimensions {dimensions} is not a permutation of the "
                        f"operand's {x.ndim} axes")
    return [ShapedArray(new_sizes, x.dtype, x.weak_type)]


def _reshape_impl(x, *, new_sizes, dimensions):
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return [np.reshape(x, new_sizes)]


def _reshape_transpose(ct, x, *, new_sizes, dimensions):
    if dimensions is None:
        return [reshape(ct, x.aval.shape)]
    inv = tuple(np.argsort(dimensions))
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    return [transpose(reshape(ct, permuted), inv)]


def _reshape_batch(vals, dims, *, new_sizes, dimensions):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    if dimensions is not None:
        x = transpose(x, (0,) + tuple(p + 1 for p in dimensions))
    return [reshape(x, (_aval(x).shape[0],) + tuple(new_sizes))], [0]


abstract_eval_rules[reshape_p] = _reshape_abstract
impl_rules[reshape_p] = _reshape_impl
ad.deflinear(reshape_p, _reshape_transpose)
batching.batch_rules[reshape_p] = _reshape_batch


def operator_index(d, where: str):
    """``operator.index(d)``, with a ConcretizationTypeError for abstract tracers; a
    symbolic size (``ranked`` level) passes through."""
    if type(d) is Dim:
        return d
    try:
        return operator.index(d)
    except TypeError:
        if hasattr(d, "aval"):
            raise
        raise TypeError(f"{where}: expected an integer, got {d!r} of type "
                        f"{type(d).__name__}") from None


# ---------------------------------------------------------------------------
# transpose
# ---------------------------------------------------------------------------
transpose_p = Primitive("transpose")


def transpose_index_map(out_idx, in_aval, out_aval, read, *, permutation):
    idx = [None] * len(permutation)
    for j, p in enumerate(permutation):
        idx[p] = out_idx[j]
    return idx


def_fusion(transpose_p, IndexMap(transpose_index_map))


def transpose(x, permutation):
    """Permute the axes of ``x``: output axis ``i`` is input axis ``permutation[i]``.

    Examples
    --------
    >>> transpose(jnp.zeros((2, 3)), (1, 0)).shape
    (3, 2)
    """
    return transpose_p.bind(x, permutation=tuple(int(p) for p in permutation))


# Autodiff broadcasts zero tangents, batching moves and broadcasts batch axes with them.
array_ops.register(broadcast_in_dim=broadcast_in_dim, transpose=transpose)


def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(f"lax.transpose: permutation {permutation} is not a permutation of "
                         f"the axes of an operand of shape {x.shape}")
    return [ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)]


def _transpose_transpose(ct, x, *, permutation):
    return [transpose(ct, tuple(int(i) for i in np.argsort(permutation)))]


def _transpose_batch(vals, dims, *, permutation):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    return [transpose(x, (0,) + tuple(p + 1 for p in permutation))], [0]


abstract_eval_rules[transpose_p] = _transpose_abstract
impl_rules[transpose_p] = lambda x, *, permutation: [np.transpose(x, permutation)]
ad.deflinear(transpose_p, _transpose_transpose)
batching.batch_rules[transpose_p] = _transpose_batch


# ---------------------------------------------------------------------------
# squeeze / expand_dims
# ---------------------------------------------------------------------------
squeeze_p = Primitive("squeeze")


def squeeze_index_map(out_idx, in_aval, out_aval, read, *, dimensions):
    it = iter(out_idx)
    return [ix_const(0) if d in dimensions else next(it) for d in range(in_aval.ndim)]


def_fusion(squeeze_p, IndexMap(squeeze_index_map))


def squeeze(x, dimensions):
    """Remove the size-1 axes ``dimensions`` of ``x`` (negative axes allowed)."""
    ndim = len(np.shape(x))
    dims = tuple(sorted(int(d) % ndim if -ndim <= int(d) < ndim else int(d) for d in dimensions))
    return squeeze_p.bind(x, dimensions=dims)


def _squeeze_abstract(x, *, dimensions):
    _check_axes("squeeze", dimensions, x.ndim)
    for d in dimensions:
        if x.shape[d] != 1:
            raise ValueError(f"lax.squeeze: cannot squeeze dimension {d} of an operand of "
                             f"shape {x.shape}: its size is {x.shape[d]}, not 1")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return [ShapedArray(shape, x.dtype, x.weak_type)]


def _squeeze_batch(vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    return [squeeze(x, tuple(a + 1 for a in dimensions))], [0]


abstract_eval_rules[squeeze_p] = _squeeze_abstract
impl_rules[squeeze_p] = lambda x, *, dimensions: [np.squeeze(x, dimensions)]
ad.deflinear(squeeze_p, lambda ct, x, **_: [reshape(ct, x.aval.shape)])
batching.batch_rules[squeeze_p] = _squeeze_batch


def expand_dims(x, dimensions):
    """Insert size-1 axes at ``dimensions`` (positions in the result), as a reshape.

    Examples
    --------
    >>> expand_dims(jnp.zeros((2, 3)), (0, 2)).shape
    (1, 2, 1, 3)
    """
    shape = list(np.shape(x))
    ndim_out = len(shape) + len(dimensions)
    dims = []
    for d in dimensions:
        d = int(d)
        if not -ndim_out <= d < ndim_out:
            raise ValueError(f"lax.expand_dims: dimension {d} is out of range for a result "
                             f"of rank {ndim_out}")
        dims.append(d % ndim_out)
    if len(set(dims)) != len(dims):
        raise ValueError(f"lax.expand_dims: repeated dimension in {tuple(dimensions)}")
    for d in sorted(dims):
        shape.insert(d, 1)
    return reshape(x, shape)


# ---------------------------------------------------------------------------
# slice
# ---------------------------------------------------------------------------
slice_p = Primitive("slice", param_order=("start_indices", "limit_indices", "strides"))


def slice_index_map(out_idx, in_aval, out_aval, read, *, start_indices, limit_indices,
                    strides):
    strides = strides or (1,) * in_aval.ndim
    return [ix_add(ix_scale(i, s), lo) for i, lo, s in zip(out_idx, start_indices, strides)]


def_fusion(slice_p, IndexMap(slice_index_map))


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 - lax.slice
    """Static slice ``x[start:limit:stride]`` per axis (positive strides, no wrapping).

    Examples
    --------
    >>> slice(jnp.arange(10), (2,), (8,), (3,))
    Array([2, 5], dtype=int32)
    """
    return slice_p.bind(x, start_indices=tuple(as_size(i) for i in start_indices),
                        limit_indices=tuple(as_size(i) for i in limit_indices),
                        strides=None if strides is None else tuple(int(s) for s in strides))


def _slice_out_shape(x, start_indices, limit_indices, strides):
    n = x.ndim
    strides = strides or (1,) * n
    if not len(start_indices) == len(limit_indices) == len(strides) == n:
        raise TypeError(f"lax.slice: start_indices {start_indices}, limit_indices "
                        f"{limit_indices} and strides {strides} must each have one entry per "
                        f"dimension of the operand of shape {x.shape}")
    out = []
    for d, (lo, hi, st) in enumerate(zip(start_indices, limit_indices, strides)):
        if st < 1 or not assume_ordered((0, lo, hi, x.shape[d]),
                                        f"lax.slice {lo}:{hi} of dimension {d} needs it"):
            raise IncompatibleShapesError(
                f"lax.slice: invalid slice {lo}:{hi}:{st} of dimension {d} (size "
                f"{x.shape[d]}) of an operand of shape {x.shape}; need 0 <= start <= limit "
                "<= size and stride >= 1")
        out.append(-(-(hi - lo) // st))
    return tuple(out)


def _slice_abstract(x, *, start_indices, limit_indices, strides):
    return [ShapedArray(_slice_out_shape(x, start_indices, limit_indices, strides),
                        x.dtype, x.weak_type)]


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    idx = tuple(_pyslice(lo, hi, st) for lo, hi, st in zip(start_indices, limit_indices, strides))
    return [x[idx]]


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    strides = strides or (1,) * len(shape)
    out_shape = _aval(ct).shape
    if any(s == 0 for s in out_shape):
        return [_zeros(x.aval)]
    config = []
    for lo, st, n, dim in zip(start_indices, strides, out_shape, shape):
        last = lo + (n - 1) * st
        config.append((lo, dim - last - 1, st - 1))
    zero = _scalar(0, x.aval.dtype)
    return [pad(ct, zero, tuple(config))]


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    size = _aval(x).shape[0]
    return [slice(x, (0,) + tuple(start_indices), (size,) + tuple(limit_indices),
                  None if strides is None else (1,) + tuple(strides))], [0]


abstract_eval_rules[slice_p] = _slice_abstract
impl_rules[slice_p] = _slice_impl
ad.deflinear(slice_p, _slice_transpose)
batching.batch_rules[slice_p] = _slice_batch


def _from_end(i, n):
    """A static index counted from the end when negative, as JAX's ``*_in_dim`` do."""
    return i + n if type(i) is not Dim and i < 0 else i


def slice_in_dim(x, start, limit, stride=1, axis=0):
    """``lax.slice`` along one axis; a ``None`` start or limit is the axis's end, a
    negative one counts from the end (as in JAX)."""
    shape = np.shape(x)
    axis = operator.index(axis) % max(len(shape), 1)
    n = shape[axis]
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis] = _from_end(0 if start is None else start, n)
    limits[axis] = _from_end(n if limit is None else limit, n)
    strides[axis] = stride
    return slice(x, starts, limits, strides)


def index_in_dim(x, index, axis=0, keepdims=True):
    """Element ``index`` (static; negative counts from the end) along ``axis``, keeping
    the axis unless told not to."""
    axis = operator.index(axis) % max(np.ndim(x), 1)
    index = _from_end(index, np.shape(x)[axis])
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _scalar(v, dtype):
    if type(v) is Dim:  # a symbolic size: its value, staged (dim_value)
        from . import elementwise as ew
        return ew.convert_element_type(v, dtype)
    return Array._new(np.asarray(v, dtype=dtype), False)


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice
# ---------------------------------------------------------------------------
dynamic_slice_p = Primitive("dynamic_slice")


def dynamic_slice_index_map(out_idx, in_aval, out_aval, read, *, slice_sizes):
    """Each start is clamped so the whole slice lies inside the operand."""
    return [ix_add(IxClamp(read(k, ()), 0, n - size), i)
            for k, (i, n, size) in enumerate(zip(out_idx, in_aval.shape, slice_sizes))]


def_fusion(dynamic_slice_p, IndexMap(dynamic_slice_index_map))


def dynamic_slice(x, start_indices, slice_sizes):
    """Slice of ``slice_sizes`` at traced ``start_indices``. Negative starts count from
    the end (as in JAX's ``lax.dynamic_slice``); then each start is clamped so the
    window fits.

    Examples
    --------
    >>> dynamic_slice(jnp.arange(5), (4,), (2,))  # start clamped to 3
    Array([3, 4], dtype=int32)
    >>> dynamic_slice(jnp.arange(5), (-2,), (2,))
    Array([3, 4], dtype=int32)
    """
    starts = _wrap_negative(start_indices, np.shape(x))
    return _dynamic_slice(x, starts, slice_sizes)


def _dynamic_slice(x, starts, slice_sizes):
    return dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(as_size(s) for s in slice_sizes))


def _wrap_negative(starts, shape):
    """``i + size`` for negative starts; static ints are fixed in Python."""
    from . import elementwise as ew
    if len(starts) != len(shape):
        raise TypeError(f"lax.dynamic_slice: got {len(starts)} start indices for an operand "
                        f"of shape {tuple(shape)}; need one per dimension")
    out = []
    for i, n in zip(starts, shape):
        if type(i) is int:
            out.append(i + n if i < 0 else i)
            continue
        dt = _aval(i).dtype
        if not isinstance(i, Tracer) and dtypes.is_integer(dt):  # a known value
            v = np.asarray(getattr(i, "_value", i))
            out.append(_scalar(v + n if v.ndim == 0 and v < 0 else v, dt))
            continue
        if not dtypes.is_integer(dt) or dt.kind == "u":
            out.append(i)  # unsigned: never negative; non-integers fail the type check
            continue
        out.append(ew.select_n(ew.lt(i, _scalar(0, dt)), i, ew.add(i, _scalar(n, dt))))
    return out


def _check_start_indices(name, x, idx):
    if len(idx) != x.ndim:
        raise TypeError(f"lax.{name}: got {len(idx)} start indices for an operand of rank "
                        f"{x.ndim} (shape {x.shape}); need one per dimension")
    for i in idx:
        if i.shape != () or not dtypes.is_integer(i.dtype):
            raise TypeError(f"lax.{name}: start indices must be integer scalars, got "
                            f"{i.str_short()}")


def _dynamic_slice_abstract(x, *idx, slice_sizes):
    _check_start_indices("dynamic_slice", x, idx)
    if len(slice_sizes) != x.ndim or not all(
            assume_ordered((0, s, d), "lax.dynamic_slice needs the window to fit")
            for s, d in zip(slice_sizes, x.shape)):
        raise TypeError(f"lax.dynamic_slice: slice_sizes {slice_sizes} must have one entry "
                        f"per dimension and fit inside the operand of shape {x.shape}")
    return [ShapedArray(slice_sizes, x.dtype, x.weak_type)]


def _clamped_starts(shape, idx, sizes):
    return [int(np.clip(int(i), 0, d - s)) for i, d, s in zip(idx, shape, sizes)]


def _dynamic_slice_impl(x, *idx, slice_sizes):
    starts = _clamped_starts(x.shape, idx, slice_sizes)
    return [x[tuple(_pyslice(s, s + n) for s, n in zip(starts, slice_sizes))]]


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *idx = primals
    return ([_dynamic_slice(x, idx, slice_sizes)],
            [_dynamic_slice(tangents[0], idx, slice_sizes)])


def _dynamic_slice_transpose(cts, x, *idx, slice_sizes):
    ct = cts[0]
    zeros = _zeros(x.aval)
    return [_dynamic_update_slice(zeros, ct, idx)] + [None] * len(idx)


def _dynamic_slice_batch(vals, dims, *, slice_sizes):
    x, *idx = vals
    xd, *idims = dims
    size = next(_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    if all(d is None for d in idims):
        x = batching.moveaxis(x, xd, 0)
        zero = _scalar(0, _aval(idx[0]).dtype if idx else np.int32)
        return [_dynamic_slice(x, [zero] + list(idx), (size,) + tuple(slice_sizes))], [0]
    # Per-example starts: a gather over explicit (clamped) window coordinates.
    x = batching.bdim_at_front(x, xd, size)
    from .indexing import gather, window_coords
    coords = window_coords(_aval(x).shape[1:], idx, idims, size, slice_sizes)
    return [gather(x, coords, axes=tuple(range(len(coords))))], [0]


abstract_eval_rules[dynamic_slice_p] = _dynamic_slice_abstract
impl_rules[dynamic_slice_p] = _dynamic_slice_impl
ad.jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
ad.transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose
batching.batch_rules[dynamic_slice_p] = _dynamic_slice_batch

dynamic_update_slice_p = Primitive("dynamic_update_slice")


def dynamic_update_slice(x, update, start_indices):
    """``x`` with ``update`` written at traced ``start_indices`` (negative starts count
    from the end, then each is clamped so the update fits).

    Examples
    --------
    >>> dynamic_update_slice(jnp.zeros(4), jnp.ones(2), (1,))
    Array([0., 1., 1., 0.], dtype=float32)
    """
    return _dynamic_update_slice(x, update, _wrap_negative(start_indices, np.shape(x)))


def _dynamic_update_slice(x, update, starts):
    return dynamic_update_slice_p.bind(x, update, *starts)


def _dynamic_update_slice_abstract(x, update, *idx):
    _check_start_indices("dynamic_update_slice", x, idx)
    if update.ndim != x.ndim or not all(
            assume_ordered((u, d), "lax.dynamic_update_slice needs the update to fit")
            for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"lax.dynamic_update_slice: update of shape {update.shape} does not "
                        f"fit inside the operand of shape {x.shape}")
    if update.dtype != x.dtype:
        raise TypeError("lax.dynamic_update_slice requires arguments to have the same "
                        f"dtypes, got {x.dtype.name}, {update.dtype.name}")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def _dynamic_update_slice_impl(x, update, *idx):
    starts = _clamped_starts(x.shape, idx, update.shape)
    out = np.array(x, copy=True)
    out[tuple(_pyslice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return [out]


def _dynamic_update_slice_jvp(primals, tangents, **_):
    x, u, *idx = primals
    return ([_dynamic_update_slice(x, u, idx)],
            [_dynamic_update_slice(tangents[0], tangents[1], idx)])


def _dynamic_update_slice_transpose(cts, x, u, *idx):
    ct = cts[0]
    u_aval = u.aval if ad.is_undefined_primal(u) else _aval(u)
    ct_x = _dynamic_update_slice(ct, _zeros(u_aval), idx) if ad.is_undefined_primal(x) \
        else None
    ct_u = _dynamic_slice(ct, idx, u_aval.shape) if ad.is_undefined_primal(u) else None
    return [ct_x, ct_u] + [None] * len(idx)


def _dynamic_update_slice_batch(vals, dims, **_):
    from .indexing import scatter, window_coords
    x, u, *idx = vals
    xd, ud, *idims = dims
    size = next(_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    x = batching.bdim_at_front(x, xd, size)
    u = batching.bdim_at_front(u, ud, size)
    if all(d is None for d in idims):
        zero = _scalar(0, _aval(idx[0]).dtype if idx else np.int32)
        return [_dynamic_update_slice(x, u, [zero] + list(idx))], [0]
    coords = window_coords(_aval(x).shape[1:], idx, idims, size, _aval(u).shape[1:])
    return [scatter(x, u, coords, axes=tuple(range(len(coords))))], [0]


abstract_eval_rules[dynamic_update_slice_p] = _dynamic_update_slice_abstract
impl_rules[dynamic_update_slice_p] = _dynamic_update_slice_impl
ad.jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.transpose_rules[dynamic_update_slice_p] = _dynamic_update_slice_transpose
batching.batch_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch


# ---------------------------------------------------------------------------
# concatenate
# ---------------------------------------------------------------------------
concatenate_p = Primitive("concatenate")


def concatenate(operands, dimension):
    """Join ``operands`` (same dtype, equal shapes but for ``dimension``) along it.

    Examples
    --------
    >>> concatenate([jnp.zeros(2), jnp.ones(1)], 0)
    Array([0., 0., 1.], dtype=float32)
    """
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _concatenate_abstract(*xs, dimension):
    if not xs:
        raise ValueError("lax.concatenate: need at least one operand")
    x0 = xs[0]
    if not 0 <= dimension < max(x0.ndim, 1) or x0.ndim == 0:
        raise ValueError(f"lax.concatenate: dimension {dimension} is out of range for "
                         f"operands of rank {x0.ndim}")
    for x in xs[1:]:
        if x.dtype != x0.dtype:
            raise TypeError("lax.concatenate requires arguments to have the same dtypes, got "
                            f"{', '.join(a.dtype.name for a in xs)}")
        if x.ndim != x0.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape))
                                    if i != dimension):
            raise TypeError("lax.concatenate: operand shapes must match except along "
                            f"dimension {dimension}, got "
                            f"{', '.join(str(a.shape) for a in xs)}")
    shape = list(x0.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return [ShapedArray(shape, x0.dtype, all(x.weak_type for x in xs))]


def _concatenate_jvp(primals, tangents, *, dimension):
    return [concatenate(primals, dimension)], [concatenate(tangents, dimension)]


def _concatenate_transpose(cts, *xs, dimension):
    ct = cts[0]
    out = []
    start = 0
    for x in xs:
        aval = x.aval if ad.is_undefined_primal(x) else _aval(x)
        n = aval.shape[dimension]
        out.append(slice_in_dim(ct, start, start + n, 1, dimension)
                   if ad.is_undefined_primal(x) else None)
        start += n
    return out


def _concatenate_batch(vals, dims, *, dimension):
    size = next(_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    xs = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    return [concatenate(xs, dimension + 1)], [0]


abstract_eval_rules[concatenate_p] = _concatenate_abstract
impl_rules[concatenate_p] = lambda *xs, dimension: [np.concatenate(xs, axis=dimension)]
ad.jvp_rules[concatenate_p] = _concatenate_jvp
ad.transpose_rules[concatenate_p] = _concatenate_transpose
batching.batch_rules[concatenate_p] = _concatenate_batch


# ---------------------------------------------------------------------------
# pad
# ---------------------------------------------------------------------------
pad_p = Primitive("pad")


def pad(x, padding_value, padding_config):
    """Pad ``x`` with the scalar ``padding_value``; ``padding_config`` has one
    ``(low, high, interior)`` per axis. Negative low/high remove elements.

    Examples
    --------
    >>> pad(jnp.array([1, 2]), 0, ((1, 0, 1),))
    Array([0, 1, 0, 2], dtype=int32)
    """
    config = tuple((as_size(lo), as_size(hi), int(it)) for lo, hi, it in padding_config)
    return pad_p.bind(x, padding_value, padding_config=config)


def _pad_abstract(x, v, *, padding_config):
    if v.shape != ():
        raise TypeError(f"lax.pad: padding_value must be a scalar, got shape {v.shape}")
    if v.dtype != x.dtype:
        raise TypeError("lax.pad requires arguments to have the same dtypes, got "
                        f"{x.dtype.name}, {v.dtype.name}")
    if len(padding_config) != x.ndim:
        raise TypeError(f"lax.pad: padding_config {padding_config} must have one "
                        f"(low, high, interior) per dimension of the operand of shape {x.shape}")
    shape = []
    for d, (lo, hi, it) in zip(x.shape, padding_config):
        if it < 0:
            raise ValueError(f"lax.pad: interior padding must be >= 0, got {padding_config}")
        if it:
            n = lo + hi + d + dim_max(d - 1, 0) * it
        else:
            n = lo + hi + d
        if type(n) is Dim:  # ranked: checked at entry
            assume_at_least(n, 0, "lax.pad: the padding removes at most the whole axis")
        elif n < 0:
            raise ValueError(f"lax.pad: padding_config {padding_config} gives a negative "
                             f"size for an operand of shape {x.shape}")
        shape.append(n)
    return [ShapedArray(shape, x.dtype, x.weak_type)]


def _pad_impl(x, v, *, padding_config):
    # Interior and non-negative edge padding first, then crop negative edges.
    big = []
    for d, (lo, hi, it) in zip(x.shape, padding_config):
        big.append(max(lo, 0) + max(hi, 0) + d + max(d - 1, 0) * it)
    out = np.full(big, v, dtype=x.dtype)
    idx = tuple(_pyslice(max(lo, 0), max(lo, 0) + (d - 1) * (it + 1) + 1 if d else max(lo, 0),
                         it + 1)
                for d, (lo, hi, it) in zip(x.shape, padding_config))
    out[idx] = x
    crop = tuple(_pyslice(-min(lo, 0), n + min(hi, 0))
                 for n, (lo, hi, it) in zip(big, padding_config))
    return [out[crop]]


def _pad_jvp(primals, tangents, *, padding_config):
    return ([pad(primals[0], primals[1], padding_config)],
            [pad(tangents[0], tangents[1], padding_config)])


def _pad_transpose(cts, x, v, *, padding_config):
    from .reductions import reduce_sum
    from . import elementwise as ew
    ct = cts[0]
    x_aval = x.aval if ad.is_undefined_primal(x) else _aval(x)
    zero = _scalar(0, x_aval.dtype)
    unpadded = pad(ct, zero, tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    ct_x = slice(unpadded, (0,) * x_aval.ndim, _aval(unpadded).shape,
                 tuple(it + 1 for _, _, it in padding_config))
    ct_v = None
    if ad.is_undefined_primal(v):
        axes = tuple(range(x_aval.ndim))
        total = reduce_sum(ct, axes) if axes else ct
        inner = reduce_sum(ct_x, axes) if axes else ct_x
        ct_v = ew.sub(total, inner)
    return [ct_x if ad.is_undefined_primal(x) else None, ct_v]


def _pad_batch(vals, dims, *, padding_config):
    (x, v), (xd, vd) = vals, dims
    size = next(_aval(a).shape[d] for a, d in zip(vals, dims) if d is not None)
    x = batching.bdim_at_front(x, xd, size)
    config = ((0, 0, 0),) + tuple(padding_config)
    if vd is None:
        return [pad(x, v, config)], [0]
    # A per-example padding value: pad with zeros, then select the padded positions.
    from . import elementwise as ew
    dt = _aval(x).dtype
    out = pad(x, _scalar(0, dt), config)
    ones = broadcast_in_dim(_scalar(True, np.bool_), _aval(x).shape, ())
    mask = pad(ones, _scalar(False, np.bool_), config)
    shape = _aval(out).shape
    vb = broadcast_in_dim(batching.moveaxis(v, vd, 0), shape, (0,))
    return [ew.select_n(mask, vb, out)], [0]


abstract_eval_rules[pad_p] = _pad_abstract
impl_rules[pad_p] = _pad_impl
ad.jvp_rules[pad_p] = _pad_jvp
ad.transpose_rules[pad_p] = _pad_transpose
batching.batch_rules[pad_p] = _pad_batch


# ---------------------------------------------------------------------------
# rev
# ---------------------------------------------------------------------------
rev_p = Primitive("rev")


def rev_index_map(out_idx, in_aval, out_aval, read, *, dimensions):
    return [ix_add(ix_scale(i, -1), in_aval.shape[d] - 1) if d in dimensions else i
            for d, i in enumerate(out_idx)]


def_fusion(rev_p, IndexMap(rev_index_map))


def rev(x, dimensions):
    """Reverse ``x`` along ``dimensions``.

    Examples
    --------
    >>> rev(jnp.arange(3), (0,))
    Array([2, 1, 0], dtype=int32)
    """
    return rev_p.bind(x, dimensions=tuple(int(d) for d in dimensions))


def _rev_abstract(x, *, dimensions):
    _check_axes("rev", dimensions, x.ndim)
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def _rev_batch(vals, dims, *, dimensions):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    return [rev(x, tuple(a + 1 for a in dimensions))], [0]


abstract_eval_rules[rev_p] = _rev_abstract
impl_rules[rev_p] = lambda x, *, dimensions: [np.flip(x, dimensions) if dimensions else x]
ad.deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])
batching.batch_rules[rev_p] = _rev_batch


# ---------------------------------------------------------------------------
# iota
# ---------------------------------------------------------------------------
iota_p = Primitive("iota", param_order=("dtype", "shape", "dimension"))


def iota_value(out_idx, out_aval, *, dtype, shape, dimension):
    return out_idx[dimension]


def_fusion(iota_p, Value(iota_value))


def iota(dtype, shape, dimension=0):
    """Counting numbers ``0, 1, …`` along ``dimension`` of an array of ``shape``.

    Examples
    --------
    >>> iota(np.int32, (3,))
    Array([0, 1, 2], dtype=int32)
    """
    if isinstance(shape, (int, np.integer, Dim)):
        shape = (shape,)
    dt = dtypes.user_dtype(dtype)
    return iota_p.bind(dtype=dt, shape=tuple(operator_index(s, "iota") for s in shape),
                       dimension=int(dimension))


def _iota_abstract(*, dtype, shape, dimension):
    if not 0 <= dimension < len(shape):
        raise ValueError(f"lax.iota: dimension {dimension} is out of range for shape {shape}")
    if any(s < 0 for s in shape):
        raise ValueError(f"lax.iota: negative size in shape {shape}")
    if dtypes.is_bool(dtype):
        raise TypeError("lax.iota does not accept dtype bool")
    return [ShapedArray(shape, dtype, False)]


def _iota_impl(*, dtype, shape, dimension):
    ramp = np.arange(shape[dimension], dtype=dtype)
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return [np.array(np.broadcast_to(ramp.reshape(view), shape))]


abstract_eval_rules[iota_p] = _iota_abstract
impl_rules[iota_p] = _iota_impl
