"""Gather and scatter: integer-array indexing as primitives.

absjit uses one simple form instead of XLA's general dimension numbers. ``k`` integer
index arrays of one common shape ``B`` address ``k`` distinct axes ``axes`` of the
operand:

* ``gather(x, indices, axes)`` has shape ``B + rest``, where ``rest`` are the sizes of
  the axes of ``x`` not in ``axes`` (in order)::

      out[b..., r...] = x[indices[0][b...] on axes[0], ..., r... on the other axes]

* ``scatter*(x, updates, indices, axes)`` takes ``updates`` of shape ``B + rest`` and
  combines ``updates[b..., r...]`` into the element of ``x`` that the same gather would
  read: ``scatter`` replaces, ``scatter-add`` adds, ``scatter-mul`` multiplies,
  ``scatter-min``/``scatter-max`` keep the smaller/larger.

This covers NumPy's advanced indexing (``absjit.numpy`` moves the axes into place with
``transpose``), ``take``, ``take_along_axis`` (iota index arrays for the other axes) and
``x.at[...]`` updates, and lowers to one loop nest over ``B + rest``.

Out-of-range indices (shared by every backend):
  * gather **clamps** each index into ``[0, size - 1]``;
  * scatter **drops** an update whose index is out of range in any indexed axis;
  * negative indices are not wrapped here: ``absjit.numpy`` normalises NumPy-style
    negative indices (``i + size`` when ``i < 0``) before binding.
With duplicate indices ``scatter`` keeps one of the updates (the NumPy interpreter keeps
the last); the other combiners are order-independent up to floating-point rounding.
Autodiff of ``scatter``, ``scatter-mul``, ``scatter-min`` and ``scatter-max`` assumes
unique indices.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.avals import ShapedArray
from ..core.fusion import IndexMap, def_fusion
from ..core.shapes import IxClamp
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..interpreters import ad, batching
from . import elementwise as ew
from . import structural as st

__all__ = ["gather_p", "gather", "scatter_p", "scatter", "scatter_add_p", "scatter_add",
           "scatter_mul_p", "scatter_mul", "scatter_min_p", "scatter_min",
           "scatter_max_p", "scatter_max", "dynamic_slice_in_dim", "dynamic_index_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim"]


def _aval(x):
    from ..core.trace import get_aval
    return get_aval(x)


def _check_indices(name, x, idx, axes):
    if not idx or len(idx) != len(axes):
        raise TypeError(f"lax.{name}: need one index array per axis in axes={axes}, got "
                        f"{len(idx)}")
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ValueError(f"lax.{name}: axis {a} is out of range for an operand of shape "
                             f"{x.shape}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"lax.{name}: axes {axes} contain duplicates")
    for i in idx:
        if not dtypes.is_integer(i.dtype):
            raise TypeError(f"lax.{name}: indices must be integer arrays, got {i.str_short()}")
        if i.shape != idx[0].shape:
            raise TypeError(f"lax.{name}: index arrays must share one shape, got "
                            f"{', '.join(str(j.shape) for j in idx)}")
    rest = tuple(s for d, s in enumerate(x.shape) if d not in axes)
    return tuple(idx[0].shape), rest


def _perm(ndim, axes):
    return list(axes) + [d for d in range(ndim) if d not in axes]


def window_coords(shape, idx, idims, size, window):
    """Index arrays of shape ``(size,) + window`` naming, for every batch element, the
    operand coordinates of its clamped window (batch coordinate first). Batching rules
    of ``dynamic_slice``/``dynamic_update_slice`` with per-example starts use them to
    become a gather/scatter."""
    out_shape = (size,) + tuple(window)
    coords = [st.iota(np.int32, out_shape, 0)]
    for k, (i, d) in enumerate(zip(idx, idims)):
        i = ew.convert_element_type(i, np.dtype(np.int32), False)
        i = batching.bdim_at_front(i, d, size) if d is not None else st.broadcast(i, (size,))
        hi = st._scalar(shape[k] - window[k], np.int32)
        i = ew.clamp(st._scalar(0, np.int32), i, hi)
        start = st.broadcast_in_dim(i, out_shape, (0,))
        coords.append(ew.add(start, st.iota(np.int32, out_shape, k + 1)))
    return coords


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------
gather_p = Primitive("gather")


def gather_index_map(out_idx, in_aval, out_aval, read, *, axes):
    """Leading output dims walk the index arrays; indices are clamped into range."""
    nb = out_aval.ndim - (in_aval.ndim - len(axes))
    bidx, rest = list(out_idx[:nb]), iter(out_idx[nb:])
    sub = []
    for d in range(in_aval.ndim):
        if d in axes:
            sub.append(IxClamp(read(axes.index(d), bidx), 0, max(in_aval.shape[d] - 1, 0)))
        else:
            sub.append(next(rest))
    return sub


def_fusion(gather_p, IndexMap(gather_index_map))


def gather(x, indices, axes):
    """``x`` read at integer ``indices`` (one array per axis in ``axes``, clamped).

    Examples
    --------
    >>> gather(jnp.arange(10) * 2, [jnp.array([1, 7])], axes=(0,))
    Array([ 2, 14], dtype=int32)
    """
    return gather_p.bind(x, *indices, axes=tuple(int(a) for a in axes))


def _gather_abstract(x, *idx, axes):
    batch, rest = _check_indices("gather", x, idx, axes)
    if any(x.shape[a] == 0 for a in axes) and int(np.prod(batch, dtype=np.int64)) > 0:
        raise IndexError(f"lax.gather: cannot index into a size-0 axis of an operand of "
                         f"shape {x.shape}")
    return [ShapedArray(batch + rest, x.dtype, x.weak_type)]


def _gather_impl(x, *idx, axes):
    xt = np.transpose(x, _perm(x.ndim, axes))
    clipped = tuple(np.clip(i, 0, max(x.shape[a] - 1, 0)) for i, a in zip(idx, axes))
    return [xt[clipped]]


def _gather_jvp(primals, tangents, *, axes):
    x, *idx = primals
    return [gather(x, idx, axes)], [gather(tangents[0], idx, axes)]


def _gather_transpose(cts, x, *idx, axes):
    # Gather clamps and scatter drops: clamp here so every read gets its cotangent.
    shape = x.aval.shape
    clamped = []
    for i, a in zip(idx, axes):
        dt = _aval(i).dtype
        clamped.append(ew.clamp(st._scalar(0, dt), i, st._scalar(max(shape[a] - 1, 0), dt)))
    zeros = ad.zeros_like_aval(x.aval)
    return [scatter_add(zeros, cts[0], clamped, axes)] + [None] * len(idx)


def _batch_size(vals, dims):
    return next(_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def _batched_indices(idx, idims, size, x_batched):
    """Index arrays with the batch axis first (unbatched ones broadcast); when the
    operand is batched too, an iota index array for its batch axis leads."""
    idx = [batching.bdim_at_front(i, d, size) for i, d in zip(idx, idims)]
    if x_batched:
        shape = _aval(idx[0]).shape
        idx = [st.iota(_aval(idx[0]).dtype, shape, 0)] + idx
    return idx


def _gather_batch(vals, dims, *, axes):
    x, *idx = vals
    xd, *idims = dims
    size = _batch_size(vals, dims)
    if all(d is None for d in idims):
        x = batching.moveaxis(x, xd, 0)
        nb = len(_aval(idx[0]).shape)
        return [gather(x, idx, tuple(a + 1 for a in axes))], [nb]
    idx = _batched_indices(idx, idims, size, xd is not None)
    if xd is None:
        return [gather(x, idx, axes)], [0]
    x = batching.moveaxis(x, xd, 0)
    return [gather(x, idx, (0,) + tuple(a + 1 for a in axes))], [0]


abstract_eval_rules[gather_p] = _gather_abstract
impl_rules[gather_p] = _gather_impl
ad.jvp_rules[gather_p] = _gather_jvp
ad.transpose_rules[gather_p] = _gather_transpose
batching.batch_rules[gather_p] = _gather_batch


# ---------------------------------------------------------------------------
# scatter family
# ---------------------------------------------------------------------------
def _scatter_abstract(name):
    def rule(x, u, *idx, axes):
        batch, rest = _check_indices(name, x, idx, axes)
        if u.dtype != x.dtype:
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            f"{x.dtype.name}, {u.dtype.name}")
        if tuple(u.shape) != batch + rest:
            raise TypeError(f"lax.{name}: updates must have shape {batch + rest} (index "
                            f"shape {batch} + operand axes {rest}), got {u.shape}")
        return [ShapedArray(x.shape, x.dtype, x.weak_type)]
    rule.__name__ = f"_{name}_abstract"
    return rule


def _scatter_impl(combine):
    def impl(x, u, *idx, axes):
        out = np.array(x, copy=True)
        view = np.transpose(out, _perm(x.ndim, axes))  # writes go through to ``out``
        bshape = idx[0].shape
        valid = np.ones(bshape, dtype=bool)
        for i, a in zip(idx, axes):
            valid &= (i >= 0) & (i < x.shape[a])
        sel = tuple(np.broadcast_to(i, bshape)[valid] for i in idx)
        vals = u[valid]
        if combine is None:
            view[sel] = vals
        else:
            combine.at(view, sel, vals)
        return [out]
    return impl


def _in_bounds(x_shape, idx, axes, u_shape):
    """Bool mask of the updates' shape: True where the update's index is in range."""
    mask = None
    for i, a in zip(idx, axes):
        dt = _aval(i).dtype
        ok = ew.bitwise_and(ew.ge(i, st._scalar(0, dt)),
                            ew.lt(i, st._scalar(x_shape[a], dt)))
        mask = ok if mask is None else ew.bitwise_and(mask, ok)
    nb = len(_aval(mask).shape)
    return st.broadcast_in_dim(mask, u_shape, tuple(range(nb)))


def _masked_gather(ct, idx, axes, u_aval):
    g = gather(ct, idx, axes)
    mask = _in_bounds(_aval(ct).shape, idx, axes, u_aval.shape)
    return ew.select_n(mask, ad.zeros_like_aval(u_aval), g)


def _scatter_linear_transpose(replace):
    def rule(cts, x, u, *idx, axes):
        ct = cts[0]
        u_aval = u.aval if ad.is_undefined_primal(u) else _aval(u)
        ct_x = None
        if ad.is_undefined_primal(x):
            ct_x = scatter(ct, ad.zeros_like_aval(u_aval), idx, axes) if replace else ct
        ct_u = _masked_gather(ct, idx, axes, u_aval) if ad.is_undefined_primal(u) else None
        return [ct_x, ct_u] + [None] * len(idx)
    return rule


def _scatter_batch(prim):
    def rule(vals, dims, *, axes):
        x, u, *idx = vals
        xd, ud, *idims = dims
        size = _batch_size(vals, dims)
        x = batching.bdim_at_front(x, xd, size)
        u = batching.bdim_at_front(u, ud, size)
        idx = _batched_indices(idx, idims, size, True)
        return [prim.bind(x, u, *idx, axes=(0,) + tuple(a + 1 for a in axes))], [0]
    return rule


def _define_scatter(name, combine):
    prim = Primitive(name)
    abstract_eval_rules[prim] = _scatter_abstract(name)
    impl_rules[prim] = _scatter_impl(combine)
    batching.batch_rules[prim] = _scatter_batch(prim)
    return prim


scatter_p = _define_scatter("scatter", None)
scatter_add_p = _define_scatter("scatter-add", np.add)
scatter_mul_p = _define_scatter("scatter-mul", np.multiply)
scatter_min_p = _define_scatter("scatter-min", np.minimum)
scatter_max_p = _define_scatter("scatter-max", np.maximum)


def scatter(x, updates, indices, axes):
    """``x`` with ``updates`` written at ``indices`` (out-of-range updates dropped).

    Examples
    --------
    >>> scatter(jnp.zeros(3), jnp.array([5.]), [jnp.array([1])], axes=(0,))
    Array([0., 5., 0.], dtype=float32)
    """
    return scatter_p.bind(x, updates, *indices, axes=tuple(int(a) for a in axes))


def scatter_add(x, updates, indices, axes):
    """``x`` with ``updates`` added at ``indices`` (duplicates accumulate)."""
    return scatter_add_p.bind(x, updates, *indices, axes=tuple(int(a) for a in axes))


def scatter_mul(x, updates, indices, axes):
    """``x`` with elements at ``indices`` multiplied by ``updates``."""
    return scatter_mul_p.bind(x, updates, *indices, axes=tuple(int(a) for a in axes))


def scatter_min(x, updates, indices, axes):
    """``x`` with elements at ``indices`` replaced by ``min(element, update)``."""
    return scatter_min_p.bind(x, updates, *indices, axes=tuple(int(a) for a in axes))


def scatter_max(x, updates, indices, axes):
    """``x`` with elements at ``indices`` replaced by ``max(element, update)``."""
    return scatter_max_p.bind(x, updates, *indices, axes=tuple(int(a) for a in axes))


def _linear_scatter_jvp(prim):
    def rule(primals, tangents, *, axes):
        x, u, *idx = primals
        return ([prim.bind(x, u, *idx, axes=axes)],
                [prim.bind(tangents[0], tangents[1], *idx, axes=axes)])
    return rule


def _scatter_mul_jvp(primals, tangents, *, axes):
    x, u, *idx = primals
    tx, tu = tangents[0], tangents[1]
    out = scatter_mul(x, u, idx, axes)
    # d(x * u) = dx * u + x * du at the updated elements (unique indices).
    t = scatter_mul(tx, u, idx, axes)
    t = ew.add(t, scatter_add(ad.zeros_like_aval(_aval(x)), ew.mul(gather(x, idx, axes), tu),
                              idx, axes))
    return [out], [t]


def _scatter_mul_transpose(cts, x, u, *idx, axes):
    # Linear in the operand only (the JVP above multiplies the operand's tangent by the
    # fixed updates): scaling elements by constants is its own transpose.
    if ad.is_undefined_primal(u):
        raise NotImplementedError("scatter-mul is not linear in its updates; "
                                  "differentiate it through its JVP rule instead")
    return [scatter_mul(cts[0], u, idx, axes), None] + [None] * len(idx)


def _scatter_extremum_jvp(prim):
    def rule(primals, tangents, *, axes):
        x, u, *idx = primals
        tx, tu = tangents[0], tangents[1]
        out = prim.bind(x, u, *idx, axes=axes)
        x_aval = _aval(x)
        # The operand's tangent flows where it kept its value; an update's tangent
        # flows where the update strictly won.
        t = ew.select_n(ew.eq(out, x), ad.zeros_like_aval(x_aval), tx)
        won = ew.bitwise_and(ew.eq(gather(out, idx, axes), u),
                             ew.ne(gather(x, idx, axes), u))
        tu = ew.select_n(won, ad.zeros_like_aval(_aval(tu)), tu)
        return [out], [ew.add(t, scatter_add(ad.zeros_like_aval(x_aval), tu, idx, axes))]
    return rule


ad.jvp_rules[scatter_p] = _linear_scatter_jvp(scatter_p)
ad.transpose_rules[scatter_p] = _scatter_linear_transpose(True)
ad.jvp_rules[scatter_add_p] = _linear_scatter_jvp(scatter_add_p)
ad.transpose_rules[scatter_add_p] = _scatter_linear_transpose(False)
ad.jvp_rules[scatter_mul_p] = _scatter_mul_jvp
ad.transpose_rules[scatter_mul_p] = _scatter_mul_transpose
ad.jvp_rules[scatter_min_p] = _scatter_extremum_jvp(scatter_min_p)
ad.jvp_rules[scatter_max_p] = _scatter_extremum_jvp(scatter_max_p)


# ---------------------------------------------------------------------------
# One-axis conveniences over dynamic_slice / dynamic_update_slice
# ---------------------------------------------------------------------------
def _starts_in_dim(x, start, axis):
    ndim = len(np.shape(x))
    axis = int(axis) % ndim if -ndim <= int(axis) < ndim else int(axis)
    if not 0 <= axis < ndim:
        raise ValueError(f"lax: axis {axis} is out of range for an operand of rank {ndim}")
    dt = _aval(start).dtype if not isinstance(start, int) else dtypes.default_int()
    return axis, [start if k == axis else st._scalar(0, dt) for k in range(ndim)]


def dynamic_slice_in_dim(x, start_index, slice_size, axis=0):
    """``lax.dynamic_slice`` along one axis (full extent elsewhere).

    Examples
    --------
    >>> dynamic_slice_in_dim(jnp.arange(6).reshape(2, 3), 1, 2, axis=1)
    Array([[1, 2],
           [4, 5]], dtype=int32)
    """
    axis, starts = _starts_in_dim(x, start_index, axis)
    sizes = list(np.shape(x))
    sizes[axis] = int(slice_size)
    return st.dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(x, index, axis=0, keepdims=True):
    """Element ``index`` (maybe traced) along ``axis``."""
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else st.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(x, update, start_index, axis):
    """``lax.dynamic_update_slice`` along one axis."""
    _, starts = _starts_in_dim(x, start_index, axis)
    return st.dynamic_update_slice(x, update, starts)


def dynamic_update_index_in_dim(x, update, index, axis):
    """Write ``update`` (without or with the size-1 ``axis``) at ``index`` along ``axis``."""
    ax, _ = _starts_in_dim(x, index, axis)
    if len(np.shape(update)) == len(np.shape(x)) - 1:
        update = st.expand_dims(update, (ax,))
    return dynamic_update_slice_in_dim(x, update, index, ax)
