"""``lax.reduce``, ``lax.reduce_window`` and ``lax.associative_scan``, as composites of
slices, pads, reductions and the user's binary operation.

``reduce`` traces the computation on scalars: one known monoid per operand (``add``,
``mul``, ``max``, ``min``, ``and``, ``or``) becomes the matching reduction primitive
(a non-identity initial value is combined with its result once); any other
computation is a sequential fold (``lax.scan``) from the initial values, so
non-associative ones give the left fold, as JAX does on the CPU.

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

from .. import dtypes, tree_util
from ..api_transforms import vmap
from ..core.dims import is_symbolic
from ..core.trace import Tracer, get_aval
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops.conv import padtype_to_pads, window_count
from ..ops.scan import scan
from ..ops.values import asarray, full

__all__ = ["reduce", "reduce_window", "associative_scan"]


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


def _flat_operands(name, operands, init_values, words, error, convert=None):
    """``(operand leaves, initial-value leaves, tree, common shape)`` of a reduction
    over a pytree of equally shaped arrays; ``error`` (the exception JAX raises for
    ``name``) when the two trees differ, hold no array, or the shapes differ."""
    flat, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if init_tree != tree:
        raise error(f"{name}: {words[0]} and {words[1]} must have the same structure, "
                    f"got {tree} and {init_tree}")
    if not flat:
        raise error(f"{name}: {words[0]} has no arrays")
    if convert is not None:
        flat = [convert(x) for x in flat]
    shapes = {tuple(get_aval(x).shape) for x in flat}
    if len(shapes) != 1:
        raise error(f"{name}: operands must have equal shapes, got {sorted(shapes)}")
    return flat, inits, tree, shapes.pop()


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
    flat, inits, tree, shape = _flat_operands("reduce_window", operand, init_value,
                                              ("operand", "init_value"), TypeError)
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
        return tree_util.tree_unflatten(tree, [full(out_shape, i, get_aval(x).dtype)
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


# The monoids ``reduce`` recognises: the primitive's name in a traced computation ->
# (the reduction, its identity's name for ``reduction_identity``).
_MONOIDS = {"add": (red.reduce_sum, "sum"), "mul": (red.reduce_prod, "prod"),
            "max": (red.reduce_max, "max"), "min": (red.reduce_min, "min"),
            "and": (red.reduce_and, "and"), "or": (red.reduce_or, "or")}


def _known_init(init):
    """The value of an initial value when it is known at trace time, else None."""
    if isinstance(init, Tracer):
        try:
            return np.asarray(init.aval.val) if hasattr(init.aval, "val") else None
        except Exception:  # noqa: BLE001 - an abstract value has no value
            return None
    return np.asarray(init)


def _monoid_reductions(computation, tree, avals, inits):
    """For each operand, the reduction ``computation`` is and the primitive that folds
    in a non-identity initial value (None for the identity); None when it is not one
    known monoid per operand."""
    from ..interpreters.staging import make_jaxpr
    n = len(avals)
    scalars = [np.zeros((), a.dtype) for a in avals]
    try:
        closed = make_jaxpr(lambda a, b: computation(tree_util.tree_unflatten(tree, a),
                                                     tree_util.tree_unflatten(tree, b)))(
            scalars, scalars)
    except Exception:  # noqa: BLE001 - not traceable on scalars: use the general fold
        return None
    jaxpr = closed.jaxpr
    if closed.consts or len(jaxpr.outvars) != n or len(jaxpr.eqns) != n:
        return None
    producers = {v: e for e in jaxpr.eqns for v in e.outvars}
    out = []
    for i, (v, aval, init) in enumerate(zip(jaxpr.outvars, avals, inits)):
        eqn = producers.get(v)
        if eqn is None or eqn.primitive.name not in _MONOIDS or eqn.params or \
                set(eqn.invars) != {jaxpr.invars[i], jaxpr.invars[n + i]} or \
                len(eqn.invars) != 2 or v.aval.dtype != aval.dtype:
            return None
        fn, name = _MONOIDS[eqn.primitive.name]
        if name in ("and", "or") and not (dtypes.is_integer(aval.dtype)
                                          or aval.dtype == np.bool_):
            return None
        known = _known_init(init)
        identity = red.reduction_identity(name, aval.dtype)
        is_identity = known is not None and known.shape == () and \
            np.array_equal(known.astype(aval.dtype), identity)
        out.append((fn, None if is_identity else eqn.primitive))
    return out


def reduce(operands, init_values, computation, dimensions):  # noqa: A001 - lax name
    """Reduce ``operands`` over ``dimensions`` with the binary ``computation``.

    A single ``add``/``mul``/``max``/``min``/``and``/``or`` per operand runs as the
    matching reduction (``lax.reduce_sum`` …), a non-identity initial value combined
    with its result once; anything else folds the elements in order from the initial
    value.

    Parameters
    ----------
    operands : array (or a pytree of equally shaped arrays, reduced together)
    init_values : scalar (or a matching pytree of scalars)
        The value the reduction starts from (the result where ``dimensions`` are empty).
    computation : callable
        ``computation(acc, x)`` on scalars, returning a new accumulator of the same
        structure, e.g. ``lax.add`` or ``lax.max``.
    dimensions : sequence of int
        The axes to reduce.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.reduce(jnp.arange(6.0).reshape(2, 3), 0.0, lax.add, (1,))
    Array([ 3., 12.], dtype=float32)
    """
    flat, inits, tree, shape = _flat_operands("reduce", operands, init_values,
                                              ("operands", "init_values"), ValueError,
                                              convert=asarray)
    nd = len(shape)
    try:
        dims = tuple(operator.index(d) for d in dimensions)
    except TypeError:
        raise TypeError(f"reduce: dimensions must be a sequence of integers, got "
                        f"{dimensions!r}") from None
    if any(not 0 <= d < nd for d in dims):
        raise ValueError(f"reduce: dimensions {dims} are out of bounds for operands of "
                         f"shape {shape}")
    if len(set(dims)) != len(dims):
        raise ValueError(f"reduce: dimensions {dims} has duplicates")
    if not dims:
        return tree_util.tree_unflatten(tree, flat)
    avals = [get_aval(x) for x in flat]
    for i, init in enumerate(inits):
        if np.ndim(init) != 0:
            raise ValueError(f"reduce: init_values must be scalars, got shape "
                             f"{np.shape(init)}")
    monoids = _monoid_reductions(computation, tree, avals, inits)
    if monoids is not None:
        out = []
        for (fn, combine), x, init, a in zip(monoids, flat, inits, avals):
            r = fn(x, tuple(sorted(dims)))
            if combine is not None:  # associative: init . (x1 . x2 ...) is the left fold
                init = _astype(init, a.dtype)
                r = combine.bind(st.broadcast_in_dim(init, get_aval(r).shape, ()), r)
                r = r[0] if isinstance(r, (list, tuple)) else r
            out.append(r)
        return tree_util.tree_unflatten(tree, out)
    return tree_util.tree_unflatten(tree, _fold(flat, inits, avals, tree, computation,
                                                dims, shape))


def _astype(x, dtype):
    """``x`` as a strongly typed array of ``dtype`` (``jnp.asarray(x).astype(dtype)``)."""
    x = asarray(x)
    aval = get_aval(x)
    if aval.dtype == dtype and not aval.weak_type:
        return x
    return ew.convert_element_type(x, dtype, False)


def _fold(flat, inits, avals, tree, computation, dims, shape):
    """The elements over ``dims`` (in row-major order) folded into the initial values
    one at a time with ``lax.scan``; the computation runs element-wise on the kept
    positions (through ``vmap``, as it is written for scalars)."""
    kept = tuple(d for d in range(len(shape)) if d not in dims)
    kept_shape = tuple(shape[d] for d in kept)
    n = math.prod(shape[d] for d in dims)
    m = math.prod(kept_shape)
    xs = [st.reshape(st.transpose(x, tuple(sorted(dims)) + kept), (n, m)) for x in flat]
    carry = [full((m,), init, a.dtype) for init, a in zip(inits, avals)]
    weak = [a.weak_type for a in avals]

    def step(acc, x):
        out = computation(tree_util.tree_unflatten(tree, list(acc)),
                          tree_util.tree_unflatten(tree, list(x)))
        out_flat, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise ValueError(f"reduce: computation must return the structure of the "
                             f"operands {tree}, got {out_tree}")
        return [_astype(o, a.dtype) for o, a in zip(out_flat, avals)]

    vstep = vmap(step)
    if n == 0 or m == 0:
        res = carry
    else:
        res, _ = scan(lambda acc, x: (vstep(acc, x), None), carry, xs)
    out = [st.reshape(r, kept_shape) for r in res]
    return [ew.convert_element_type(o, a.dtype, True) if w else o
            for o, a, w in zip(out, avals, weak)]


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
    flat = [asarray(x) for x in flat]
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
