"""The smaller ``lax`` conveniences, derived from existing primitives: array
creation (``full``, ``full_like``, ``empty``, ``broadcasted_iota``), shape helpers
(``broadcast_shapes``, ``broadcast_to_rank``, ``collapse``), arithmetic (``square``,
``reciprocal``, ``complex``), bit counting (``population_count``, ``clz``),
reductions and scans (``reduce_xor``, ``cumlogsumexp``), indexing (``scatter_sub``,
``scatter_apply``, ``index_take``), ``approx_max_k``/``approx_min_k`` and
``optimization_barrier``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.dims import Dim
from ..core.trace import get_aval
from ..ops import elementwise as ew, indexing, sorting, structural
from ..ops.values import asarray, asarray_weak, broadcast_to_shape
from . import _windowed as windowed

__all__ = ["full", "full_like", "empty", "broadcasted_iota", "broadcast_shapes",
           "broadcast_to_rank", "collapse", "square", "reciprocal", "complex",
           "population_count", "clz", "reduce_xor", "cumlogsumexp", "scatter_sub",
           "scatter_apply", "index_take", "approx_max_k", "approx_min_k",
           "optimization_barrier"]


def _shape(shape):
    if isinstance(shape, (int, np.integer)) or not hasattr(shape, "__iter__"):
        shape = (shape,)
    return tuple(structural.operator_index(d, "shape") for d in shape)


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value``.

    With ``dtype=None`` the result takes the dtype (and weak type) of ``fill_value``.

    Examples
    --------
    >>> from absjit import lax
    >>> lax.full((2,), 3.0)
    Array([3., 3.], dtype=float32, weak_type=True)
    """
    shape = _shape(shape)
    value = asarray(fill_value)
    if get_aval(value).ndim != 0:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{get_aval(value).shape}.")
    if dtype is not None:
        dt = dtypes.user_dtype(dtype)
        value = ew.convert_element_type(value, dt, False)
    return structural.broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``.

    The result is weakly typed only when ``x`` is and no ``dtype`` is given.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.full_like(jnp.zeros(2, jnp.int32), 7)
    Array([7, 7], dtype=int32)
    """
    aval = get_aval(asarray(x))
    dt = aval.dtype if dtype is None else dtypes.user_dtype(dtype)
    weak = dtype is None and aval.weak_type
    value = ew.convert_element_type(asarray(fill_value), dt, weak)
    return structural.broadcast_in_dim(value, aval.shape if shape is None else _shape(shape),
                                       ())


def empty(shape, dtype):
    """An array of ``shape`` and ``dtype``; its contents are zeros here (JAX leaves
    them unspecified, and on the CPU also gives zeros).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.empty((2,), jnp.float32)
    Array([0., 0.], dtype=float32)
    """
    return full(shape, 0, dtypes.user_dtype(dtype))


def broadcasted_iota(dtype, shape, dimension):
    """``0, 1, 2, ...`` along ``dimension`` of an array of ``shape``, broadcast along
    the other dimensions.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.broadcasted_iota(jnp.int32, (2, 3), 1)
    Array([[0, 1, 2],
           [0, 1, 2]], dtype=int32)
    """
    shape = _shape(shape)
    dimension = int(dimension)
    if not 0 <= dimension < len(shape):
        raise ValueError(f"broadcasted_iota dimension must be in [0, {len(shape)}), got "
                         f"{dimension}")
    line = structural.iota(dtypes.user_dtype(dtype), shape[dimension])
    return structural.broadcast_in_dim(line, shape, (dimension,))


def broadcast_shapes(*shapes):
    """The shape that ``shapes`` broadcast to, NumPy's rules (a tuple).

    Examples
    --------
    >>> from absjit import lax
    >>> lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    shapes = [_shape(s) for s in shapes]
    if not shapes:
        return ()
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    out = []
    for sizes in zip(*padded):
        non1 = {d for d in sizes if not (isinstance(d, int) and d == 1)}
        if len(non1) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes="
                             f"{[tuple(s) for s in shapes]}")
        out.append(non1.pop() if non1 else 1)
    return tuple(out)


def broadcast_to_rank(x, rank):
    """``x`` with leading size-1 dimensions added up to ``rank`` (unchanged if its rank
    is already at least ``rank``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.broadcast_to_rank(jnp.ones(3), 2).shape
    (1, 3)
    """
    x = asarray(x)
    nd = get_aval(x).ndim
    rank = int(rank)
    if nd >= rank:
        return x
    return structural.broadcast_in_dim(x, (1,) * (rank - nd) + tuple(get_aval(x).shape),
                                       tuple(range(rank - nd, rank)))


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with dimensions ``start_dimension:stop_dimension`` merged into one.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.collapse(jnp.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    operand = asarray(operand)
    shape = tuple(get_aval(operand).shape)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        hi = lo
    size = 1
    for d in shape[lo:hi]:
        size = size * d
    return structural.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def square(x):
    """``x * x``, elementwise.

    Examples
    --------
    >>> from absjit import lax
    >>> lax.square(3.0)
    Array(9., dtype=float32, weak_type=True)
    """
    return ew.integer_pow(asarray(x), 2)


def reciprocal(x):
    """``1 / x``, elementwise.

    Examples
    --------
    >>> from absjit import lax
    >>> lax.reciprocal(4.0)
    Array(0.25, dtype=float32, weak_type=True)
    """
    return ew.integer_pow(asarray(x), -1)


def complex(x, y):  # noqa: A001 - lax name
    """The complex number ``x + 1j * y`` from two real arrays of one float dtype.

    Built as ``x + y * 1j`` (there is no complex-building primitive), so an infinite
    ``y`` gives a NaN real part where JAX gives ``x``.

    Examples
    --------
    >>> from absjit import lax
    >>> lax.complex(1.0, 2.0)
    Array(1.+2.j, dtype=complex64, weak_type=True)
    """
    x, y = asarray(x), asarray(y)
    ax, ay = get_aval(x), get_aval(y)
    if ax.dtype != ay.dtype:
        raise TypeError(f"lax.complex requires arguments to have the same dtypes, got "
                        f"{ax.dtype.name}, {ay.dtype.name}.")
    if ax.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"lax.complex does not accept dtype {ax.dtype.name}. Accepted "
                        "dtypes are subtypes of floating (float32, float64).")
    shape = broadcast_shapes(ax.shape, ay.shape)
    x = broadcast_to_shape(x, shape)
    y = broadcast_to_shape(y, shape)
    cdt = np.dtype(np.complex64 if ax.dtype == np.float32 else np.complex128)
    weak = ax.weak_type and ay.weak_type
    cx = ew.convert_element_type(x, cdt, weak)
    cy = ew.convert_element_type(y, cdt, weak)
    return ew.add(cx, ew.mul(cy, ew._const(1j, cy)))


def _int_input(name, x):
    x = asarray(x)
    dt = get_aval(x).dtype
    if not dtypes.is_integer(dt):
        raise TypeError(f"lax.{name} does not accept dtype {dt.name}. Accepted dtypes are "
                        "subtypes of integer.")
    return x, dt


def _uconst(value, udt):
    return ew._const(value & ((1 << (8 * udt.itemsize)) - 1), np.zeros((), udt))


def _popcount_unsigned(v, udt):
    bits = 8 * udt.itemsize

    def c(value):
        return _uconst(value, udt)
    # Parallel bit count: pairs, then nibbles, then bytes, summed by one multiply.
    v = ew.sub(v, ew.bitwise_and(ew.shift_right_logical(v, c(1)), c(0x5555555555555555)))
    v = ew.add(ew.bitwise_and(v, c(0x3333333333333333)),
               ew.bitwise_and(ew.shift_right_logical(v, c(2)), c(0x3333333333333333)))
    v = ew.bitwise_and(ew.add(v, ew.shift_right_logical(v, c(4))), c(0x0F0F0F0F0F0F0F0F))
    if bits > 8:
        v = ew.shift_right_logical(ew.mul(v, c(0x0101010101010101)), c(bits - 8))
    return v


def population_count(x):
    """The number of set bits of each integer (its two's-complement pattern for signed
    types), in ``x``'s dtype.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.population_count(jnp.array([0, 7, -1], jnp.int32))
    Array([ 0,  3, 32], dtype=int32)
    """
    x, dt = _int_input("population_count", x)
    udt = np.dtype(f"u{dt.itemsize}")
    v = ew.convert_element_type(x, udt, False)
    return ew.convert_element_type(_popcount_unsigned(v, udt), dt, get_aval(x).weak_type)


def clz(x):
    """The number of leading zero bits of each integer, in ``x``'s dtype.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.clz(jnp.array([0, 1, 255, -1], jnp.int32))
    Array([32, 31, 24,  0], dtype=int32)
    """
    x, dt = _int_input("clz", x)
    udt = np.dtype(f"u{dt.itemsize}")
    bits = 8 * dt.itemsize
    v = ew.convert_element_type(x, udt, False)
    shift = 1
    while shift < bits:   # smear the highest set bit into every lower bit
        v = ew.bitwise_or(v, ew.shift_right_logical(v, _uconst(shift, udt)))
        shift *= 2
    ones = _popcount_unsigned(v, udt)
    out = ew.sub(_uconst(bits, udt), ones)
    return ew.convert_element_type(out, dt, get_aval(x).weak_type)


def reduce_xor(operand, axes):
    """The bitwise exclusive or of ``operand`` over ``axes`` (parity for booleans).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.reduce_xor(jnp.array([1, 2, 7], jnp.int32), (0,))
    Array(4, dtype=int32)
    """
    operand = asarray(operand)
    dt = get_aval(operand).dtype
    if not (dtypes.is_integer(dt) or dtypes.is_bool(dt)):
        raise TypeError(f"reduce_xor does not accept dtype {dt.name}. Accepted dtypes are "
                        "subtypes of integer or bool.")
    axes = tuple(int(a) for a in axes)
    zero = np.zeros((), dt)
    return windowed.reduce(operand, zero, ew.bitwise_xor, axes)


def cumlogsumexp(operand, axis=0, reverse=False):
    """The running ``log(sum(exp(operand)))`` along ``axis`` (from the end when
    ``reverse``), each step a stable ``logaddexp``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.cumlogsumexp(jnp.zeros(3))
    Array([0.       , 0.6931472, 1.0986123], dtype=float32)
    """
    operand = asarray(operand)
    dt = get_aval(operand).dtype
    if not dtypes.is_float(dt):
        raise TypeError(f"cumlogsumexp does not accept dtype {dt.name}. Accepted dtypes "
                        "are subtypes of floating.")
    nd = get_aval(operand).ndim
    axis = int(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"axis {axis} is out of bounds for array of rank {nd}")
    return windowed.associative_scan(_logaddexp, operand, reverse=bool(reverse),
                                     axis=axis % nd)


def _logaddexp(a, b):
    """``log(exp(a) + exp(b))`` without overflow, for operands of one float dtype and
    shape (``jnp.logaddexp``'s formula)."""
    with np.errstate(all="ignore"):
        big = ew.max(a, b)
        delta = ew.sub(a, b)
        # NaN for NaN inputs and for two infinities of one sign, whose sum a + b is
        return ew.select(ew.ne(delta, delta), ew.add(a, b),
                         ew.add(big, ew.log1p(ew.exp(ew.neg(ew.abs(delta))))))


def scatter_sub(x, updates, indices, axes):
    """``x`` with ``updates`` subtracted at ``indices`` (duplicates accumulate); the
    same index convention as ``lax.scatter_add`` here.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.scatter_sub(jnp.zeros(3), jnp.array([1., 2.]), [jnp.array([0, 0])], (0,))
    Array([-3.,  0.,  0.], dtype=float32)
    """
    return indexing.scatter_add(x, ew.neg(asarray(updates)), indices, axes)


def scatter_apply(x, indices, func, axes):
    """``x`` with ``func`` applied to the elements at ``indices`` (the index convention
    of ``lax.scatter`` here). ``func`` is applied once per selected element, also
    when an index repeats (JAX applies it once per repetition).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.scatter_apply(jnp.ones(3), [jnp.array([2])], jnp.negative, (0,))
    Array([ 1.,  1., -1.], dtype=float32)
    """
    x = asarray(x)
    selected = indexing.gather(x, indices, axes)
    return indexing.scatter(x, func(selected), indices, axes)


def index_take(src, idxs, axes):
    """Entries of ``src`` at ``idxs``, one index array per axis in ``axes`` (a list, or
    an array of shape ``(len(axes), n)``): ``src[idxs[0][i], idxs[1][i], ...]`` along
    ``axes``, the other dimensions kept after the leading ``n``. Indices are taken
    modulo the axis size, as JAX does.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> src = jnp.arange(6).reshape(2, 3)
    >>> lax.index_take(src, [jnp.array([1, 0]), jnp.array([2, -1])], (0, 1))
    Array([5, 2], dtype=int32)
    """
    src = asarray(src)
    idxs = [asarray(i) for i in idxs]
    axes = tuple(int(a) for a in axes)
    shape = tuple(get_aval(src).shape)
    nd = len(shape)
    if len(idxs) != len(axes):
        raise TypeError(f"index_take needs one index array per axis: {len(axes)} axes, "
                        f"{len(idxs)} index arrays")
    for i in idxs:
        if not dtypes.is_integer(get_aval(i).dtype):
            raise TypeError(f"index_take indices must be integers, got "
                            f"{get_aval(i).dtype.name}")
    rest = [d for d in range(nd) if d not in axes]
    moved = structural.transpose(src, axes + tuple(rest))
    return moved[tuple(_wrap(i, shape[a]) for i, a in zip(idxs, axes))]


def _wrap(i, n):
    """The integer array ``i`` modulo the size ``n`` (``jnp.remainder(i, n)``: the
    result has the sign of ``n``; 0 where ``n`` is 0)."""
    aval = get_aval(i)
    n = asarray_weak(n.value() if type(n) is Dim else n, aval.dtype, aval.weak_type)
    zero = ew._const(0, i)
    r = ew.rem(i, n)
    if aval.dtype.kind != "u":
        fix = ew.bitwise_and(ew.ne(r, zero), ew.ne(ew.lt(r, zero), ew.lt(n, zero)))
        r = ew.select(fix, ew.add(r, n), r)
    return ew.select(ew.eq(n, zero), zero, r)


def _moveaxis(x, source, destination):
    """``x`` with its axis ``source`` moved to ``destination`` (both non-negative)."""
    perm = [d for d in range(get_aval(x).ndim) if d != source]
    perm.insert(destination, source)
    return structural.transpose(x, perm)


def _approx_k(name, operand, k, reduction_dimension, largest):
    operand = asarray(operand)
    nd = get_aval(operand).ndim
    dim = int(reduction_dimension)
    if not -nd <= dim < nd:
        raise ValueError(f"{name}: reduction_dimension {dim} is out of bounds for an "
                         f"operand of rank {nd}")
    dim %= nd
    x = _moveaxis(operand, dim, nd - 1)
    if not largest:
        x = ew.bitwise_not(x) if get_aval(x).dtype.kind in "biu" else ew.neg(x)
    vals, idx = sorting.top_k(x, k)
    if not largest:
        vals = ew.bitwise_not(vals) if get_aval(vals).dtype.kind in "biu" else ew.neg(vals)
    return _moveaxis(vals, nd - 1, dim), _moveaxis(idx, nd - 1, dim)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` largest values along ``reduction_dimension`` and their indices.

    The result is exact (recall 1, as JAX's CPU path); ``recall_target``,
    ``reduction_input_size_override`` and ``aggregate_to_topk`` are accepted and change
    nothing.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.approx_max_k(jnp.array([1., 5., 3.]), 2)[0]
    Array([5., 3.], dtype=float32)
    """
    return _approx_k("approx_max_k", operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` smallest values along ``reduction_dimension`` (ascending) and their
    indices; exact, like ``approx_max_k``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.approx_min_k(jnp.array([4, 1, 3]), 2)[1]
    Array([1, 2], dtype=int32)
    """
    return _approx_k("approx_min_k", operand, k, reduction_dimension, False)


def optimization_barrier(operand, /):
    """``operand`` (any pytree) unchanged.

    JAX uses it to stop XLA moving computations across the barrier; absjit's
    compilers do not reorder across it either way, so it is the identity here.

    Examples
    --------
    >>> from absjit import lax
    >>> lax.optimization_barrier((1.0, 2.0))
    (1.0, 2.0)
    """
    return operand
