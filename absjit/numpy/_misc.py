"""Array-API names, index helpers and array utilities (``unravel_index``, ``block``,
``resize``, ``put``, ``packbits`` …), written with ``jnp`` and ``lax`` building blocks
(no primitives of their own)."""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..errors import ConcretizationTypeError
from ..ops import elementwise as ew
from ._creation import asarray, zeros
from ._linalg import matmul
from ._promote import asarray_weak, check_arraylike, promote_dtypes
from ._reductions import any as _any, sum as _sum
from ._shape import concatenate, expand_dims, moveaxis, ravel, reshape, swapaxes, tile
from ._ufuncs import (arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, clip,
                      conjugate, floor_divide, remainder, right_shift, where)

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_count",
           "astype", "matrix_transpose", "unstack", "matvec", "vecmat", "unravel_index",
           "ravel_multi_index", "block", "resize", "fill_diagonal", "put", "packbits",
           "unpackbits", "apply_along_axis", "apply_over_axes"]

# Array-API spellings of NumPy's inverse trigonometric functions.
acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atan2, atanh = arctan, arctan2, arctanh


def _array(name, x):
    check_arraylike(name, x)
    return asarray(x)


def _const(value, dt):
    return asarray_weak(np.array(value).astype(dt), dt, False)


# ---------------------------------------------------------------------------
# bitwise_count, astype, matrix_transpose, unstack, matvec, vecmat
# ---------------------------------------------------------------------------
_M1, _M2, _M4, _H01 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, \
    0x0101010101010101


def bitwise_count(x, /):
    """The number of 1 bits in the absolute value of each integer (``uint8``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.bitwise_count(jnp.array([0, 1, 7, 255]))
    Array([0, 1, 3, 8], dtype=uint8)
    """
    x = _array("bitwise_count", x)
    dt = np.dtype(x.dtype)
    if dt == np.bool_:
        return ew.convert_element_type(x, np.dtype(np.uint8), False)
    if not dtypes.is_integer(dt):
        raise TypeError(f"bitwise_count does not accept dtype {dt.name}; it needs an "
                        "integer or boolean array")
    if dt.kind == "i":  # NumPy counts the bits of |x| (and -min as its unsigned value)
        x = ew.abs(x)
    udt = np.dtype(f"u{dt.itemsize}")
    bits = 8 * dt.itemsize
    v = ew.convert_element_type(x, udt, False)

    def c(value):
        return _const(value & ((1 << bits) - 1), udt)

    # Parallel bit count: pairs, then nibbles, then bytes, summed by one multiply.
    v = ew.sub(v, ew.bitwise_and(ew.shift_right_logical(v, c(1)), c(_M1)))
    v = ew.add(ew.bitwise_and(v, c(_M2)),
               ew.bitwise_and(ew.shift_right_logical(v, c(2)), c(_M2)))
    v = ew.bitwise_and(ew.add(v, ew.shift_right_logical(v, c(4))), c(_M4))
    if bits > 8:
        v = ew.shift_right_logical(ew.mul(v, c(_H01)), c(bits - 8))
    return ew.convert_element_type(v, np.dtype(np.uint8), False)


def astype(x, dtype, /, *, copy=False, device=None):
    """``x`` converted to ``dtype`` (a strongly typed result).

    ``copy`` and ``device`` are accepted for the array API; arrays are immutable and
    live on the host, so neither changes the result.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.astype(jnp.array([1.5, -2.5]), jnp.int32)
    Array([ 1, -2], dtype=int32)
    """
    x = _array("astype", x)
    dt = dtypes.default_float() if dtype is None else dtypes.user_dtype(dtype)
    if np.dtype(x.dtype) == dt and not dtypes.is_weakly_typed(x):
        return x
    return ew.convert_element_type(x, dt, False)


def matrix_transpose(x, /):
    """Swap the last two axes of ``x`` (a stack of matrices).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.matrix_transpose(jnp.zeros((4, 2, 3))).shape
    (4, 3, 2)
    """
    x = _array("matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs an array of at least two dimensions, "
                         f"got ndim={x.ndim}")
    return swapaxes(x, -1, -2)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple of arrays.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unstack(jnp.arange(4).reshape(2, 2))
    (Array([0, 1], dtype=int32), Array([2, 3], dtype=int32))
    """
    x = _array("unstack", x)
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"unstack: axis {axis} is out of bounds for an array of rank "
                         f"{x.ndim}")
    x = moveaxis(x, axis, 0)
    return tuple(x[i] for i in range(x.shape[0]))


def matvec(x1, x2, /):
    """Matrix-vector products ``x1[..., i, j] x2[..., j]`` with broadcast batch axes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.matvec(jnp.ones((2, 3)), jnp.arange(3.0))
    Array([3., 3.], dtype=float32)
    """
    x1, x2 = _array("matvec", x1), _array("matvec", x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec needs a matrix and a vector, got shapes {x1.shape} and "
                         f"{x2.shape}")
    return matmul(x1, expand_dims(x2, -1))[..., 0]


def vecmat(x1, x2, /):
    """Vector-matrix products ``conj(x1[..., i]) x2[..., i, j]`` with broadcast batch
    axes (the vector is conjugated, as in the array API).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.vecmat(jnp.arange(3.0), jnp.ones((3, 2)))
    Array([3., 3.], dtype=float32)
    """
    x1, x2 = _array("vecmat", x1), _array("vecmat", x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat needs a vector and a matrix, got shapes {x1.shape} and "
                         f"{x2.shape}")
    return matmul(expand_dims(conjugate(x1), -2), x2)[..., 0, :]


# ---------------------------------------------------------------------------
# unravel_index / ravel_multi_index
# ---------------------------------------------------------------------------
def _dims(name, shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: the shape must be a sequence of integers, got "
                        f"{shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{name}: dimensions must be non-negative, got {dims}")
    return dims


def _fits(value, dt) -> bool:
    info = np.iinfo(dt)
    return info.min <= value <= info.max


def unravel_index(indices, shape):
    """Convert flat indices into a tuple of coordinate arrays for ``shape``.

    Unlike NumPy, out-of-bounds indices do not raise (values may be traced): negative
    indices count from the end and the rest are clipped into the array, as in JAX.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unravel_index(jnp.array([1, 5]), (2, 3))
    (Array([0, 1], dtype=int32), Array([1, 2], dtype=int32))
    """
    idx = _array("unravel_index", indices)
    dims = _dims("unravel_index", shape)
    dt = np.dtype(idx.dtype)
    if not dtypes.is_integer(dt) or dt == np.bool_:
        raise TypeError(f"unravel_index: indices must be integers, got {dt.name}")
    weak = dtypes.is_weakly_typed(idx)
    total = math.prod(dims)
    if not dims:
        return ()
    # Work in a type that holds the total size; the results go back to the input's.
    work = dt if _fits(total, dt) else dtypes.default_int()
    i = asarray_weak(idx, work, False)
    if total > 0:
        i = where(i < 0, i + _const(total, work), i)
        i = clip(i, _const(0, work), _const(total - 1, work))
    out = []
    for d in reversed(dims):
        dd = _const(max(d, 1), work)
        out.append(remainder(i, dd))
        i = floor_divide(i, dd)
    return tuple(asarray_weak(o, dt, weak) for o in reversed(out))


def _check_in_bounds(idx, dims):
    """``mode='raise'``: a ValueError for coordinates outside ``dims`` when their
    values are known; traced values cannot be checked."""
    for i, d in zip(idx, dims):
        bad = _any((i < 0) | (i >= d))
        try:
            flag = bool(bad)
        except ConcretizationTypeError as e:
            raise ConcretizationTypeError(
                e.tracer, "ravel_multi_index with mode='raise' needs concrete indices to "
                "check their bounds; under jit use mode='wrap' or mode='clip'.") from None
        if flag:
            raise ValueError("ravel_multi_index: invalid entry in coordinates array "
                             "(out of bounds for mode='raise')")


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices of the coordinates ``multi_index`` into an array of shape ``dims``.

    ``mode`` says what out-of-bounds coordinates do: ``'raise'`` (only for concrete
    values; traced values raise ``ConcretizationTypeError``), ``'wrap'`` or ``'clip'``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.ravel_multi_index((jnp.array([0, 1]), jnp.array([2, 1])), (2, 3))
    Array([2, 4], dtype=int32)
    """
    dims = _dims("ravel_multi_index", dims)
    if not isinstance(multi_index, (list, tuple)):
        check_arraylike("ravel_multi_index", multi_index)
        multi_index = unstack(asarray(multi_index))
    multi_index = tuple(multi_index)
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} coordinate arrays given "
                         f"for {len(dims)} dimensions")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', "
                         f"got {mode!r}")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    check_arraylike("ravel_multi_index", *multi_index)
    if not multi_index:
        raise ValueError("ravel_multi_index: needs at least one coordinate array")
    idx = promote_dtypes(*multi_index)
    dt = np.dtype(idx[0].dtype)
    if not dtypes.is_integer(dt) or dt == np.bool_:
        raise TypeError(f"ravel_multi_index: coordinates must be integers, got {dt.name}")
    idx = [asarray_weak(i, dt, False) for i in idx]
    if mode == "raise":
        _check_in_bounds(idx, dims)
    elif mode == "wrap":
        idx = [remainder(i, _const(max(d, 1), dt)) for i, d in zip(idx, dims)]
    else:
        idx = [clip(i, _const(0, dt), _const(max(d - 1, 0), dt)) for i, d in zip(idx, dims)]
    strides = np.cumprod((1,) + (dims[::-1] if order == "C" else dims)[:-1])
    if order == "C":
        strides = strides[::-1]
    out = None
    for i, s in zip(idx, strides):
        term = i * _const(int(s), dt) if s != 1 else i
        out = term if out is None else out + term
    return out if dtype is None else astype(out, dtype)


# ---------------------------------------------------------------------------
# block, resize, fill_diagonal, put
# ---------------------------------------------------------------------------
def _block_depth(arrays, path=()):
    """The nesting depth of lists in ``arrays`` (all leaves must sit at one depth)."""
    if isinstance(arrays, tuple):
        raise ValueError(f"jnp.block does not accept tuples (at arrays{list(path)}); use "
                         "lists to nest blocks")
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise ValueError(f"jnp.block does not accept empty lists (at arrays{list(path)})")
    depths = {_block_depth(a, path + (i,)) for i, a in enumerate(arrays)}
    if len(depths) != 1:
        raise ValueError(f"jnp.block: mismatched list depths at arrays{list(path)}")
    return depths.pop() + 1


def block(arrays):
    """Assemble an array from nested lists of blocks (the innermost lists are joined
    along the last axis, the next along the one before, …).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.block([[jnp.ones((1, 2)), jnp.zeros((1, 1))], [jnp.full((1, 3), 2.0)]])
    Array([[1., 1., 0.],
           [2., 2., 2.]], dtype=float32)
    """
    depth = _block_depth(arrays)
    leaves = []

    def collect(a):
        if isinstance(a, list):
            for b in a:
                collect(b)
        else:
            check_arraylike("block", a)
            leaves.append(a)
    collect(arrays)
    leaves = iter(promote_dtypes(*leaves))

    def rebuild(a):
        return [rebuild(b) for b in a] if isinstance(a, list) else next(leaves)
    tree = rebuild(arrays)
    ndim = depth
    stack = [tree]
    while stack:
        a = stack.pop()
        if isinstance(a, list):
            stack.extend(a)
        else:
            ndim = max(ndim, a.ndim)

    def join(a, level):
        if not isinstance(a, list):
            return reshape(a, (1,) * (ndim - a.ndim) + tuple(a.shape))
        return concatenate([join(b, level + 1) for b in a], axis=level - depth)
    return join(tree, 0)


def resize(a, new_shape):
    """An array of ``new_shape`` filled with the elements of ``a`` repeated in order.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.resize(jnp.arange(3), (2, 4))
    Array([[0, 1, 2, 0],
           [1, 2, 0, 1]], dtype=int32)
    """
    a = _array("resize", a)
    shape = _dims("resize", new_shape)
    flat = ravel(a)
    size, n = math.prod(shape), flat.shape[0]
    if n == 0:
        return zeros(shape, a.dtype) if not dtypes.is_weakly_typed(a) else \
            asarray_weak(zeros(shape, a.dtype), a.dtype, True)
    if size != n:
        flat = tile(flat, -(-size // n))[:size]
    return reshape(flat, shape)


def _cyclic(values, n):
    """The first ``n`` elements of ``values`` repeated cyclically (NumPy's ``flat``
    assignment)."""
    m = values.shape[0]
    return values if m == n else tile(values, -(-n // m))[:n]


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` with its main diagonal set to ``val`` (repeated cyclically).

    absjit arrays are immutable, so ``inplace=False`` is required: the updated array is
    returned. ``wrap=True`` restarts the diagonal below tall matrices, as in NumPy.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fill_diagonal(jnp.zeros((2, 2)), 5.0, inplace=False)
    Array([[5., 0.],
           [0., 5.]], dtype=float32)
    """
    if inplace:
        raise NotImplementedError("fill_diagonal: absjit arrays are immutable; pass "
                                  "inplace=False to get the updated array back")
    a = _array("fill_diagonal", a)
    shape = tuple(a.shape)
    if len(shape) < 2:
        raise ValueError(f"fill_diagonal: the array must be at least 2-d, got shape {shape}")
    if len(shape) == 2:
        step = shape[1] + 1
        end = shape[0] * shape[1] if wrap else min(shape[0], shape[1]) * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError(f"fill_diagonal: all dimensions of the array must be equal, "
                             f"got shape {shape}")
        step = 1 + int(np.sum(np.cumprod(shape[:-1])))
        end = math.prod(shape)
    positions = np.arange(0, end, step)
    val = ravel(_array("fill_diagonal", val))
    if positions.size == 0 or val.shape[0] == 0:
        return a
    vals = astype(_cyclic(val, positions.size), a.dtype)
    out = ravel(a).at[positions].set(vals)
    return asarray_weak(reshape(out, shape), a.dtype, dtypes.is_weakly_typed(a))


def put(a, ind, v, mode=None, *, inplace=True):
    """``a`` with the elements at flat indices ``ind`` replaced by ``v`` (repeated
    cyclically).

    ``mode`` handles out-of-bounds indices: ``None`` drops them (negative ones count from
    the end), ``'clip'`` clips them, ``'wrap'`` wraps them. ``inplace=False`` is required.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.put(jnp.zeros(4), jnp.array([1, 3]), jnp.array([7.0, 8.0]), inplace=False)
    Array([0., 7., 0., 8.], dtype=float32)
    """
    if inplace:
        raise ValueError("put: absjit arrays are immutable and cannot be modified in place; "
                         "pass inplace=False to get the updated array back")
    if mode == "raise":
        raise NotImplementedError("put: mode='raise' is not supported (indices may be "
                                  "traced); use mode='clip' or mode='wrap'")
    if mode not in (None, "clip", "wrap"):
        raise ValueError(f"put: mode must be None, 'clip' or 'wrap', got {mode!r}")
    a = _array("put", a)
    ind = ravel(_array("put", ind))
    v = ravel(_array("put", v))
    if not dtypes.is_integer(ind.dtype) or ind.dtype == np.bool_:
        raise TypeError(f"put: indices must be integers, got {np.dtype(ind.dtype).name}")
    size, n = math.prod(a.shape), ind.shape[0]
    if n == 0 or v.shape[0] == 0 or size == 0:
        return a
    vals = astype(_cyclic(v, n), a.dtype)
    idt = ind.dtype if _fits(size, ind.dtype) else dtypes.default_int()
    ind = asarray_weak(ind, idt, False)
    if mode == "clip":
        ind = clip(ind, _const(0, idt), _const(size - 1, idt))
    elif mode == "wrap":
        ind = remainder(ind, _const(size, idt))
    else:
        # Out-of-bounds writes go to one extra slot past the end, sliced off after.
        ind = where(ind < 0, ind + _const(size, idt), ind)
        ind = where((ind < 0) | (ind >= size), _const(size, idt), ind)
        flat = concatenate([ravel(a), zeros((1,), a.dtype)])
        out = flat.at[ind].set(vals)[:size]
        return asarray_weak(reshape(out, a.shape), a.dtype, dtypes.is_weakly_typed(a))
    out = ravel(a).at[ind].set(vals)
    return asarray_weak(reshape(out, a.shape), a.dtype, dtypes.is_weakly_typed(a))


# ---------------------------------------------------------------------------
# packbits / unpackbits
# ---------------------------------------------------------------------------
def _bit_axis(name, a, axis, bitorder):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        return ravel(a), 0
    axis = operator.index(axis)
    if not -a.ndim <= axis < max(a.ndim, 1) or a.ndim == 0:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank "
                         f"{a.ndim}")
    return a, axis % a.ndim


def _weights(bitorder):
    w = 1 << np.arange(8)
    return (w if bitorder == "little" else w[::-1]).astype(np.uint8)


def packbits(a, axis=None, bitorder="big"):
    """Pack the truth values of ``a`` into the bits of ``uint8`` bytes, 8 per byte along
    ``axis`` (the flattened array when None), zero-padded at the end.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.packbits(jnp.array([1, 0, 1, 1]))
    Array([176], dtype=uint8)
    """
    a = _array("packbits", a)
    if not (dtypes.is_integer(a.dtype) or a.dtype == np.bool_):
        raise TypeError(f"packbits needs an integer or boolean array, got "
                        f"{np.dtype(a.dtype).name}")
    a, axis = _bit_axis("packbits", a, axis, bitorder)
    u8 = np.dtype(np.uint8)
    bits = ew.convert_element_type(a != 0, u8, False)
    bits = moveaxis(bits, axis, -1)
    n = bits.shape[-1]
    pad = -n % 8
    if pad:
        bits = concatenate([bits, zeros(bits.shape[:-1] + (pad,), u8)], axis=-1)
    groups = reshape(bits, bits.shape[:-1] + ((n + pad) // 8, 8))
    packed = _sum(groups * asarray_weak(_weights(bitorder), u8, False), axis=-1, dtype=u8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Unpack the bits of a ``uint8`` array into 0/1 ``uint8`` values along ``axis``
    (the flattened array when None); ``count`` keeps that many bits (negative: drops
    that many from the end; beyond the length: zero-padded).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unpackbits(jnp.array([6], jnp.uint8))
    Array([0, 0, 0, 0, 0, 1, 1, 0], dtype=uint8)
    """
    a = _array("unpackbits", a)
    u8 = np.dtype(np.uint8)
    if np.dtype(a.dtype) != u8:
        raise TypeError(f"unpackbits needs a uint8 array, got {np.dtype(a.dtype).name}")
    a, axis = _bit_axis("unpackbits", a, axis, bitorder)
    a = moveaxis(a, axis, -1)
    shifts = asarray_weak(np.log2(_weights(bitorder)).astype(np.uint8), u8, False)
    bits = right_shift(expand_dims(a, -1), shifts) & _const(1, u8)
    n = 8 * a.shape[-1]
    bits = reshape(bits, a.shape[:-1] + (n,))
    if count is not None:
        count = operator.index(count)
        keep = count if count >= 0 else max(n + count, 0)
        if keep <= n:
            bits = bits[..., :keep]
        else:
            bits = concatenate([bits, zeros(bits.shape[:-1] + (keep - n,), u8)], axis=-1)
    return moveaxis(bits, -1, axis)


# ---------------------------------------------------------------------------
# apply_along_axis / apply_over_axes
# ---------------------------------------------------------------------------
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """Apply ``func1d`` to every 1-D slice of ``arr`` along ``axis`` (vectorised with
    :func:`absjit.vmap`); the dimensions ``func1d`` returns replace ``axis``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.apply_along_axis(jnp.sum, 1, jnp.arange(6).reshape(2, 3))
    Array([ 3, 12], dtype=int32)
    """
    from ..api_transforms import vmap  # loads after absjit.numpy
    arr = _array("apply_along_axis", arr)
    nd = arr.ndim
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"apply_along_axis: axis {axis} is out of bounds for an array of "
                         f"rank {nd}")
    axis %= nd

    def f(x):
        return func1d(x, *args, **kwargs)
    for _ in range(nd - 1 - axis):  # trailing axes end up after func1d's output
        f = vmap(f, in_axes=-1, out_axes=-1)
    for _ in range(axis):  # leading axes stay in front
        f = vmap(f, in_axes=0, out_axes=0)
    return f(arr)


def apply_over_axes(func, a, axes):
    """Apply ``func(a, axis)`` for each axis in turn, keeping the rank: a result one
    dimension short gets ``axis`` back as a size-1 dimension.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.apply_over_axes(jnp.sum, jnp.ones((2, 3, 4)), [0, 2])
    Array([[[8.],
            [8.],
            [8.]]], dtype=float32)
    """
    a = _array("apply_over_axes", a)
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    for ax in axes:
        ax = operator.index(ax)
        ax = ax + a.ndim if ax < 0 else ax
        b = func(a, ax)
        if np.ndim(b) == a.ndim - 1:
            b = expand_dims(b, ax)
        elif np.ndim(b) != a.ndim:
            raise ValueError("apply_over_axes: func must return an array of the same rank "
                             "as its input or one less")
        a = b
    return a
