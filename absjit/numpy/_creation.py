"""Array creation: ``array``, ``asarray``, ``zeros``, ``ones``, ``full``, ``arange`` …"""
from __future__ import annotations

import types

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.trace import Tracer
from ._promote import asarray_weak

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like"]


def _leaves(obj, out):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    else:
        out.append(obj)
    return out


def _reject_iterators(obj):
    if isinstance(obj, types.GeneratorType) or hasattr(obj, "__next__"):
        raise TypeError(f"jnp.array does not accept iterators or generators (got "
                        f"{type(obj).__name__}); materialise it first, e.g. list(x).")


def array(object, dtype=None, copy: bool = True, ndmin: int = 0):
    """Create an Array from an array, a scalar, or nested lists/tuples of them.

    Python scalars stay weakly typed; nested sequences containing tracers are staged as
    a stack, so ``jnp.array([x**2 for x in xs])`` works inside traced code.

    Examples
    --------
    >>> jnp.array([1, 2, 3])
    Array([1, 2, 3], dtype=int32)
    >>> jnp.array(3.0)
    Array(3., dtype=float32, weak_type=True)
    """
    _reject_iterators(object)
    want = None if dtype is None else dtypes.canonicalize_dtype(dtypes.check_user_dtype(dtype))
    if isinstance(object, (Array, Tracer)):
        out = object if want is None else asarray_weak(object, want, False)
    elif type(object) in (bool, int, float, complex):
        if want is None:
            out = asarray_weak(object, dtypes.python_scalar_dtype(object), type(object) is not bool)
        else:
            out = Array._new(np.asarray(object, dtype=want), False)
    elif isinstance(object, (np.ndarray, np.generic)):
        if not dtypes.is_supported(object.dtype):
            raise TypeError(f"jnp.array: unsupported dtype {object.dtype}")
        dt = want or dtypes.canonicalize_dtype(object.dtype)
        out = Array._new(np.array(object, dtype=dt, copy=True), False)
    elif isinstance(object, (list, tuple)):
        out = _array_from_sequence(object, want)
    elif hasattr(object, "__array__"):
        return array(np.asarray(object), dtype=dtype, copy=copy, ndmin=ndmin)
    else:
        raise TypeError(f"jnp.array: cannot convert object of type {type(object).__name__} "
                        "to an array")
    if ndmin and np.ndim(out) < ndmin:
        from ..ops.structural import reshape
        out = reshape(out, (1,) * (ndmin - np.ndim(out)) + tuple(np.shape(out)))
    return out


def _array_from_sequence(seq, want):
    leaves = _leaves(seq, [])
    for leaf in leaves:
        _reject_iterators(leaf)
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        from ._shape import stack
        if len(seq) == 0:
            raise ValueError("jnp.array of an empty sequence of tracers")
        elems = [array(e, dtype=want) for e in seq]
        dt = want or dtypes.result_type(*elems)
        return stack([asarray_weak(e, dt, False) for e in elems])
    if not leaves:
        return Array._new(np.array(seq, dtype=want or dtypes.default_float()), False)
    dt = want or dtypes.result_type(*[_as_np_leaf(x) for x in leaves])
    try:
        raw = np.array([_as_np_seq(x) for x in seq] if isinstance(seq, (list, tuple)) else seq,
                       dtype=dt)
    except ValueError as e:
        raise ValueError(f"jnp.array: sequence is ragged or malformed: {e}") from None
    return Array._new(raw, False)


def _as_np_leaf(x):
    if isinstance(x, Array):
        return x
    if isinstance(x, (np.ndarray, np.generic)) or type(x) in (bool, int, float, complex):
        return x
    raise TypeError(f"jnp.array: unsupported element of type {type(x).__name__}")


def _as_np_seq(x):
    if isinstance(x, (list, tuple)):
        return [_as_np_seq(e) for e in x]
    if isinstance(x, Array):
        return x._value
    return x


def asarray(a, dtype=None, copy=None):
    """Like :func:`array` but never copies an Array of the right dtype."""
    if isinstance(a, Array) and (dtype is None or np.dtype(dtypes.to_numpy_dtype(dtype)) == a.dtype):
        return a
    return array(a, dtype=dtype, copy=bool(copy))


def _shape_tuple(shape, name):
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__index__"):
        shape = (shape,)
    import operator
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        if any(isinstance(d, Tracer) for d in shape):
            raise
        raise TypeError(f"{name}: shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name}: negative dimensions are not allowed, got {out}")
    return out


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value``."""
    shape = _shape_tuple(shape, "full")
    if dtype is None:
        dt, weak = dtypes.result_type_and_weak(fill_value)
        weak = False
    else:
        dt, weak = dtypes.canonicalize_dtype(dtypes.check_user_dtype(dtype)), False
    if isinstance(fill_value, Tracer) or (isinstance(fill_value, Array) and np.ndim(fill_value)):
        from ._promote import broadcast_to_shape
        return broadcast_to_shape(asarray_weak(fill_value, dt, weak), shape)
    val = np.asarray(fill_value._value if isinstance(fill_value, Array) else fill_value)
    return Array._new(np.full(shape, val, dtype=dt), weak)


def zeros(shape, dtype=None):
    """An array of zeros (default dtype float32)."""
    return full(shape, 0, dtypes.default_float() if dtype is None else dtype)


def ones(shape, dtype=None):
    """An array of ones (default dtype float32)."""
    return full(shape, 1, dtypes.default_float() if dtype is None else dtype)


def empty(shape, dtype=None):
    """Same as :func:`zeros` (absjit arrays are always initialised)."""
    return zeros(shape, dtype)


def _like(name, fill):
    def fn(a, dtype=None, shape=None):
        dt = dtypes.dtype_of(a) if dtype is None else dtype
        sh = np.shape(a) if shape is None else shape
        if isinstance(a, Tracer) and shape is None:
            from ._promote import broadcast_to_shape
            val = asarray_weak(fill if fill is not None else 0, dtypes.canonicalize_dtype(
                dtypes.check_user_dtype(dt)), False)
            return broadcast_to_shape(val, tuple(sh))
        return full(sh, fill if fill is not None else 0, dt)
    fn.__name__ = name
    fn.__doc__ = f"``{name}(a)``: an array shaped like ``a``."
    return fn


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)
empty_like = _like("empty_like", 0)


def full_like(a, fill_value, dtype=None, shape=None):
    """An array shaped like ``a`` filled with ``fill_value``."""
    dt = dtypes.dtype_of(a) if dtype is None else dtype
    return full(np.shape(a) if shape is None else shape, fill_value, dt)

