"""Python, NumPy and absjit values as absjit arrays, without implicit promotion:
``jnp.array``'s conversion (nested sequences, NumPy arrays, scalars) and
:func:`asarray_weak` (a value as a given dtype and weak type), for the layers that sit
below ``absjit.numpy`` (``ops``, ``lax``, the transformations) and for ``numpy`` itself.
"""
from __future__ import annotations

import math
import operator
import types

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dims import Dim, is_dim, same_shape, unify_sizes
from ..core.trace import EVAL_MAIN, Tracer, current_dynamic
from . import elementwise as ew
from . import structural as st
from ._joining import stack_values
from .structural import reshape

__all__ = ["array", "asarray", "asarray_weak", "reject_masked", "scalar_array",
           "broadcast_to_shape", "full", "full_like", "filled_like"]

_scalar_types = (bool, int, float, complex)


def reject_masked(name: str, x) -> None:
    """``ValueError`` for a NumPy masked array: converting it would silently drop its
    mask (JAX raises the same error)."""
    if dtypes.is_masked_array(x):
        raise ValueError(f"{name}: NumPy masked arrays are not supported as inputs (their "
                         "mask would be ignored); use arr.filled(value) or "
                         "arr.compressed() to turn it into a plain array first.")


_SCALAR_CACHE: dict = {}


def scalar_array(x, dtype, weak: bool):
    """0-d Arrays for Python scalars, memoised (they are immutable). ``0.0`` and
    ``-0.0`` are equal and hash alike, so a float's key carries its sign too."""
    t = type(x)
    if t is float:
        key = (t, x, dtype, weak, math.copysign(1.0, x))
    elif t is complex:
        key = (t, x, dtype, weak, math.copysign(1.0, x.real), math.copysign(1.0, x.imag))
    else:
        key = (t, x, dtype, weak)
    try:
        return _SCALAR_CACHE[key]
    except (KeyError, TypeError):
        pass
    try:
        val = np.asarray(x, dtype=dtype)
    except OverflowError:
        # A negative Python int meeting an unsigned array wraps, as in JAX (-1 -> 255).
        bits = np.dtype(dtype).itemsize * 8
        if type(x) is not int or not -(1 << bits) < x < (1 << bits):
            raise OverflowError(f"Python int {x} is out of range for {np.dtype(dtype).name}") \
                from None
        val = np.asarray(x & ((1 << bits) - 1), dtype=np.uint64).astype(dtype)
    arr = Array._new(val, weak)
    if len(_SCALAR_CACHE) < 4096 and x == x:  # NaN never hits; do not store it
        _SCALAR_CACHE[key] = arr
    return arr


def asarray_weak(x, dtype, weak: bool):
    """``x`` as an absjit value of ``dtype`` (a cast only when needed)."""
    t = type(x)
    if t in _scalar_types:
        return scalar_array(x, dtype, weak)
    if isinstance(x, Tracer):
        if x.aval.dtype == dtype and x.aval.weak_type == weak:
            return x
        return ew.convert_element_type(x, dtype, weak)
    if isinstance(x, Array):
        if x._value.dtype == dtype and x._weak_type == weak:
            return x
        return ew.convert_element_type(x, dtype, weak)
    if isinstance(x, (np.ndarray, np.generic)):
        reject_masked("absjit", x)
        if not dtypes.is_supported(x.dtype):
            raise TypeError(f"absjit does not support arrays of dtype {x.dtype}")
        return Array._new(np.array(x, dtype=dtype), weak)
    raise TypeError(f"expected an array or scalar, got {type(x).__name__}")


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
    """``jnp.array``: an Array from an array, a scalar, or nested lists/tuples of them
    (Python scalars stay weakly typed; the tracers of a nested sequence are stacked)."""
    _reject_iterators(object)
    reject_masked("jnp.array", object)
    want = None if dtype is None else dtypes.user_dtype(dtype)
    if isinstance(object, (Array, Tracer)):
        out = object if want is None else asarray_weak(object, want, False)
    elif type(object) is Dim:  # a size of the ranked level, used as a number
        out = object.value()  # a weak int scalar, as a Python int gives
        out = out if want is None else asarray_weak(out, want, False)
    elif type(object) in (bool, int, float, complex):
        if want is None:
            out = asarray_weak(object, dtypes.python_scalar_dtype(object), type(object) is not bool)
        else:
            out = Array._new(_cast(np.asarray(object), want), False)
    elif isinstance(object, (np.ndarray, np.generic)):
        if not dtypes.is_supported(object.dtype):
            raise TypeError(f"jnp.array: unsupported dtype {object.dtype}")
        dt = want or dtypes.canonicalize_dtype(object.dtype)
        out = Array._new(_cast(object, dt), False)
    elif isinstance(object, (list, tuple)):
        out = _array_from_sequence(object, want)
    elif hasattr(object, "__array__"):
        return array(np.asarray(object), dtype=dtype, copy=copy, ndmin=ndmin)
    elif object is None:
        raise ValueError("None is not a valid value for jnp.array")  # JAX's type and words
    else:
        raise TypeError(f"jnp.array: cannot convert object of type {type(object).__name__} "
                        "to an array")
    if ndmin and np.ndim(out) < ndmin:
        out = reshape(out, (1,) * (ndmin - np.ndim(out)) + tuple(np.shape(out)))
    return out


def _cast(x, dt):
    """A NumPy copy of ``x`` as ``dt``; float -> integer by absjit's rule (truncate,
    saturate, NaN -> 0), not by NumPy's ``astype``, whose out-of-range results differ
    between versions."""
    x = np.asarray(x)
    if np.dtype(dt).kind in "iu" and x.dtype.kind in "fc":
        return ew.float_to_int(x, dt)
    if x.dtype == np.float64 and dtypes.is_bfloat16(np.dtype(dt)):
        return ew.float64_to_bfloat16(x)
    return np.array(x, dtype=dt, copy=True)


def _array_from_sequence(seq, want):
    leaves = _leaves(seq, [])
    for leaf in leaves:
        _reject_iterators(leaf)
    if any(isinstance(leaf, (Tracer, Dim)) for leaf in leaves):
        if len(seq) == 0:
            raise ValueError("jnp.array of an empty sequence of tracers")
        elems = [array(e, dtype=want) for e in seq]
        dt = want or dtypes.result_type(*elems)
        return stack_values([asarray_weak(e, dt, False) for e in elems], 0)
    if not leaves:
        return Array._new(np.array(seq, dtype=want or dtypes.default_float()), False)
    dt = want or dtypes.result_type(*[_as_np_leaf(x) for x in leaves])
    try:
        nested = [_as_np_seq(x) for x in seq] if isinstance(seq, (list, tuple)) else seq
        if np.dtype(dt).kind in "iu" and any(isinstance(x, float) or getattr(
                x, "dtype", np.dtype(int)).kind in "fc" for x in leaves):
            raw = _cast(np.array(nested), dt)  # floats to an integer dtype: our rule
        else:
            raw = np.array(nested, dtype=dt)
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
    """``jnp.asarray``: like :func:`array` but never copies an Array of the right
    dtype."""
    if isinstance(a, Array) and (dtype is None or np.dtype(dtypes.to_numpy_dtype(dtype)) == a.dtype):
        return a
    return array(a, dtype=dtype, copy=bool(copy))




def broadcast_to_shape(x, shape):
    """Broadcast ``x`` (NumPy rules) to ``shape`` with one ``broadcast_in_dim``.

    At the ranked level the target says what a symbolic size of ``x`` is (every one is
    non-unit): ``(x0,)`` goes to ``(5,)`` only if ``x0`` is 5, to ``(y0,)`` only if
    ``x0 == y0``, assumptions the compiled program checks at entry
    (:func:`absjit.core.dims.unify_sizes`)."""
    xs = np.shape(x)
    shape = tuple(shape)
    if same_shape(xs, shape):
        return x
    nlead = len(shape) - len(xs)
    if nlead < 0:
        raise ValueError(f"cannot broadcast shape {xs} to {shape}")
    for i, d in enumerate(xs):
        t = shape[nlead + i]
        if type(d) is int and d == 1:  # (a symbolic size is never 1)
            continue
        if is_dim(d) or is_dim(t):
            ok = unify_sizes(d, t, f"broadcasting shape {tuple(xs)} to {shape}")
        else:
            ok = d == t
        if not ok:
            raise ValueError(f"cannot broadcast shape {tuple(xs)} to {shape}")
    return st.broadcast_in_dim(x, shape, tuple(range(nlead, len(shape))))


def _shape_tuple(shape, name):
    if isinstance(shape, (int, np.integer)) or hasattr(shape, "__index__"):
        shape = (shape,)
    try:
        out = tuple(d if type(d) is Dim else operator.index(d) for d in shape)
    except TypeError:
        if any(isinstance(d, Tracer) for d in shape):
            raise
        raise TypeError(f"{name}: shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name}: negative dimensions are not allowed, got {out}")
    return out


def full(shape, fill_value, dtype=None):
    """``jnp.full``: an array of ``shape`` filled with ``fill_value``."""
    shape = _shape_tuple(shape, "full")
    if dtype is None:
        dt, weak = dtypes.result_type_and_weak(fill_value)
        weak = False
    else:
        dt, weak = dtypes.user_dtype(dtype), False
    if isinstance(fill_value, Tracer) or (isinstance(fill_value, Array) and np.ndim(fill_value)):
        return broadcast_to_shape(asarray_weak(fill_value, dt, weak), shape)
    val = np.asarray(fill_value._value if isinstance(fill_value, Array) else fill_value)
    if shape and not _eager():
        # Inside a trace: stage a broadcast of the scalar instead of a big constant.
        return broadcast_to_shape(Array._new(np.asarray(val, dtype=dt), weak), shape)
    return Array._new(np.full(shape, val, dtype=dt), weak)


def _eager() -> bool:
    return current_dynamic() is EVAL_MAIN


def filled_like(a, fill, dtype=None, shape=None):
    """``jnp.zeros_like(a)`` and ``jnp.ones_like(a)``: an array shaped like ``a`` (of
    its dtype unless given) filled with ``fill``."""
    dt = dtypes.dtype_of(a) if dtype is None else dtype
    sh = np.shape(a) if shape is None else shape
    if isinstance(a, Tracer) and shape is None:
        val = asarray_weak(fill, dtypes.user_dtype(dt), False)
        return broadcast_to_shape(val, tuple(sh))
    return full(sh, fill, dt)


def full_like(a, fill_value, dtype=None, shape=None):
    """``jnp.full_like``: an array shaped like ``a`` filled with ``fill_value``."""
    dt = dtypes.dtype_of(a) if dtype is None else dtype
    return full(np.shape(a) if shape is None else shape, fill_value, dt)


_scalar_array = scalar_array
