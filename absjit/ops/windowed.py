"""``lax.reduce_window`` and ``lax.associative_scan``, as composites of slices, pads and
the user's binary operation.

``reduce_window`` pads the operand with the initial value, then folds the
``prod(window_dimensions)`` strided slices that make up the windows with the
computation: a 3x3 pooling is nine slices and eight element-wise ops, which the
compiler fuses into one loop nest. JVP, transpose and batching come from the pieces.
``associative_scan`` is the recursive odd/even scan of Blelloch (1990), as in JAX:
``O(log n)`` levels of element-wise combines.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import tree_util
from ..core.dims import is_symbolic
from ..core.trace import get_aval
from . import elementwise as ew
from . import structural as st
from .conv import padtype_to_pads, window_count

__all__ = ["reduce_window", "associative_scan"]


def _ints(name, value, ndim, default):
    if value is None:
        return (default,) * ndim
    try:
        out = tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"reduce_window: {name} must be a sequence of integers, got "
                        f"{value!r}") from None
    if len(out) != ndim:
        raise TypeError(f"reduce_window: {name} {out} must have one entry per dimension "
                        f"of the operand (rank {ndim})")
    if any(v < 1 for v in out):
        raise ValueError(f"reduce_window: {name} must be positive, got {out}")
    return out


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None):
    """Reduce each window of ``operand`` with the binary ``computation``.

    Parameters
    ----------
    operand : array (or a pytree of arrays, reduced together)
    init_value : scalar (or a matching pytree of scalars)
        The computation's identity; padded positions hold it.
    computation : callable
        ``computation(x, y)`` on arrays, e.g. ``lax.add``, ``lax.max``, ``lax.min``.
    window_dimensions, window_strides : sequence of int
        One per dimension of ``operand``.
    padding : 'SAME', 'VALID' or a sequence of ``(low, high)`` pairs
    base_dilation, window_dilation : sequence of int, optional

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> x = jnp.arange(6.0).reshape(2, 3)
    >>> lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 1), "VALID")
    Array([[1., 2.],
           [4., 5.]], dtype=float32)
    """
    flat, tree = tree_util.tree_flatten(operand)
    inits, init_tree = tree_util.tree_flatten(init_value)
    if init_tree != tree:
        raise TypeError("reduce_window: operand and init_value must have the same structure, "
                        f"got {tree} and {init_tree}")
    if not flat:
        raise TypeError("reduce_window: operand has no arrays")
    shapes = {tuple(get_aval(x).shape) for x in flat}
    if len(shapes) != 1:
        raise TypeError(f"reduce_window: operands must have equal shapes, got {sorted(shapes)}")
    shape = shapes.pop()
    nd = len(shape)
    dims = _ints("window_dimensions", window_dimensions, nd, 1)
    strides = _ints("window_strides", window_strides, nd, 1)
    base = _ints("base_dilation", base_dilation, nd, 1)
    wdil = _ints("window_dilation", window_dilation, nd, 1)
    dilated_shape = tuple(0 if d == 0 else (d - 1) * b + 1 for d, b in zip(shape, base))
    eff_window = tuple((w - 1) * wd + 1 for w, wd in zip(dims, wdil))
    if isinstance(padding, str):
        pads = padtype_to_pads(dilated_shape, eff_window, strides, padding)
    else:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        if len(pads) != nd:
            raise TypeError(f"reduce_window: padding {padding} must have one (low, high) "
                            f"pair per dimension of the operand (rank {nd})")
    padded_shape = tuple(d + lo + hi for d, (lo, hi) in zip(dilated_shape, pads))
    out_shape = tuple(window_count(p, w, s)
                      for p, w, s in zip(padded_shape, eff_window, strides))
    # no window fits: an empty result of the init value
    if not is_symbolic(out_shape) and math.prod(out_shape) == 0:
        from .. import numpy as jnp
        return tree_util.tree_unflatten(tree, [jnp.full(out_shape, i, get_aval(x).dtype)
                                               for x, i in zip(flat, inits)])
    config = tuple((lo, hi, b - 1) for (lo, hi), b in zip(pads, base))
    xs = []
    for x, init in zip(flat, inits):
        init = ew.convert_element_type(init, get_aval(x).dtype) \
            if get_aval(init).dtype != get_aval(x).dtype else init
        xs.append(st.pad(x, init, config) if any(c != (0, 0, 0) for c in config) else x)
    acc = None
    for offset in np.ndindex(*dims):
        starts = tuple(o * wd for o, wd in zip(offset, wdil))
        limits = tuple(s0 + (n - 1) * s + 1 if n > 0 else s0
                       for s0, n, s in zip(starts, out_shape, strides))
        pieces = [st.slice(x, starts, limits, strides) for x in xs]
        if acc is None:
            acc = pieces
            continue
        res = computation(tree_util.tree_unflatten(tree, acc),
                          tree_util.tree_unflatten(tree, pieces))
        acc = tree_util.tree_leaves(res)
    return tree_util.tree_unflatten(tree, acc)


def _interleave(a, b, axis):
    """``a[0], b[0], a[1], b[1], ...`` along ``axis`` (``a`` as long as ``b`` or one more)."""
    na, nb = get_aval(a).shape[axis], get_aval(b).shape[axis]
    nd = len(get_aval(a).shape)
    zero_a = ew.convert_element_type(np.zeros((), get_aval(a).dtype), get_aval(a).dtype)
    cfg_a = [(0, 0, 0)] * nd
    cfg_b = [(0, 0, 0)] * nd
    cfg_a[axis] = (0, 1 if na == nb else 0, 1)
    cfg_b[axis] = (1, 0 if na == nb else 1, 1)
    pa = st.pad(a, zero_a, tuple(cfg_a))
    pb = st.pad(b, zero_a, tuple(cfg_b))
    n = na + nb
    even = st.broadcast_in_dim(
        ew.eq(ew.rem(st.iota(np.int32, n), np.int32(2)), np.int32(0)),
        tuple(get_aval(pa).shape), (axis,))
    return ew.select(even, pa, pb)


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """Inclusive scan of ``elems`` along ``axis`` with the associative ``fn``.

    ``fn(a, b)`` combines two pytrees shaped like ``elems`` (sliced along ``axis``)
    element-wise. The work is ``O(n)`` combines in ``O(log n)`` levels.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.associative_scan(jnp.add, jnp.arange(5))
    Array([ 0,  1,  3,  6, 10], dtype=int32)
    """
    flat, tree = tree_util.tree_flatten(elems)
    if not flat:
        raise ValueError("associative_scan: elems has no arrays")
    from .. import numpy as jnp
    flat = [jnp.asarray(x) for x in flat]
    nd = len(get_aval(flat[0]).shape)
    if not -nd <= axis < max(nd, 1) or nd == 0:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for arrays of "
                         f"rank {nd}")
    axis %= nd
    n = get_aval(flat[0]).shape[axis]
    if any(get_aval(x).shape[axis] != n for x in flat):
        raise ValueError("associative_scan: all arrays must have the same size along axis "
                         f"{axis}, got {[tuple(get_aval(x).shape) for x in flat]}")
    if reverse:
        flat = [st.rev(x, (axis,)) for x in flat]

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        out_flat, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure of elems "
                            f"{tree}, got {out_tree}")
        return out_flat

    def sl(x, start, stop, stride=1):
        size = get_aval(x).shape[axis]
        stop = size if stop is None else (stop if stop >= 0 else size + stop)
        return st.slice_in_dim(x, start, max(start, stop), stride, axis)

    def scan(xs):
        size = get_aval(xs[0]).shape[axis]
        if size < 2:
            return xs
        reduced = combine([sl(x, 0, -1, 2) for x in xs], [sl(x, 1, None, 2) for x in xs])
        odd = scan(reduced)
        if size % 2 == 0:
            even = combine([sl(o, 0, -1) for o in odd], [sl(x, 2, None, 2) for x in xs])
        else:
            even = combine(odd, [sl(x, 2, None, 2) for x in xs])
        even = [st.concatenate([sl(x, 0, 1), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(flat)
    if reverse:
        out = [st.rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)
