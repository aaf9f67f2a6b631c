"""Array creation: ``array``, ``asarray``, ``zeros``, ``ones``, ``full``, ``arange`` …"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dim_assumptions import assume_at_least
from ..core.dims import Dim
from ..core.trace import Tracer
from ..ops import elementwise as ew
from ..ops import structural as st
from ..ops.structural import operator_index
from ..ops import values as _values
from ..ops._joining import stack_values
from ..ops.values import _shape_tuple, asarray_weak
from ._promote import broadcast_to_shape

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "eye", "identity", "meshgrid", "indices",
           "tri", "tril", "triu"]


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
    return _values.array(object, dtype=dtype, copy=copy, ndmin=ndmin)


def asarray(a, dtype=None, copy=None):
    """Like :func:`array` but never copies an Array of the right dtype."""
    return _values.asarray(a, dtype=dtype, copy=copy)


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value``."""
    return _values.full(shape, fill_value, dtype)


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
        return _values.filled_like(a, fill, dtype, shape)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}(a)``: an array shaped like ``a``."
    return fn


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)
empty_like = _like("empty_like", 0)


def full_like(a, fill_value, dtype=None, shape=None):
    """An array shaped like ``a`` filled with ``fill_value``."""
    dt = dtypes.dtype_of(a) if dtype is None else dtype
    return full(np.shape(a) if shape is None else shape, fill_value, dt)


# ---------------------------------------------------------------------------
# Ranges and grids
# ---------------------------------------------------------------------------
def _static_scalar(x, name, what):
    """A Python number from ``x``; abstract tracers raise ConcretizationTypeError."""
    if x is None or type(x) in (bool, int, float, complex):
        return x
    if isinstance(x, Tracer):
        if np.ndim(x) != 0:
            raise ValueError(f"jnp.{name}: {what} must be a scalar, got shape {x.shape}")
        return int(x) if dtypes.is_integer(x.dtype) or dtypes.is_bool(x.dtype) else float(x)
    val = np.asarray(x._value if isinstance(x, Array) else x)
    if val.ndim != 0:
        raise ValueError(f"jnp.{name}: {what} must be a scalar, got shape {val.shape}")
    if val.dtype.kind not in "biuf":
        raise TypeError(f"jnp.{name}: {what} must be a real number, got {val.dtype}")
    return val.item()


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``, like ``np.arange`` with JAX's dtypes
    (int32 for integer arguments, float32 if any is a float). ``arange(n)`` stages an
    ``iota`` when traced. Arguments must be concrete.

    Examples
    --------
    >>> jnp.arange(4)
    Array([0, 1, 2, 3], dtype=int32)
    >>> jnp.arange(0, 1, 0.25)
    Array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    """
    if any(type(v) is Dim for v in (start, stop, step)):
        return _arange_of_sizes(start, stop, step, dtype)
    args = [_static_scalar(v, "arange", w) for v, w in
            ((start, "start"), (stop, "stop"), (step, "step"))]
    start, stop, step = args
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ValueError("jnp.arange: step must not be zero")
    if dtype is None:
        kinds = [type(v) for v in (start, stop, step)]
        dt = dtypes.default_float() if float in kinds else dtypes.default_int()
    else:
        dt = dtypes.user_dtype(dtype)
    if dt.kind in "iu" and all(type(v) in (int, bool) for v in (start, stop, step)):
        n = len(range(int(start), int(stop), int(step)))
        out = st.iota(dt, (n,))
        if step != 1:
            out = ew.mul(out, Array._new(np.asarray(step, dt), False))
        if start != 0:
            out = ew.add(out, Array._new(np.asarray(start, dt), False))
        return out
    return Array._new(np.arange(start, stop, step).astype(dt), False)


def _arange_of_sizes(start, stop, step, dtype):
    """``arange`` whose start or stop is a symbolic size (ranked level): an iota of
    the symbolic length, scaled and shifted. The range is assumed not reversed
    (``stop >= start`` for a positive step), checked at entry."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    ok = all(type(v) is Dim or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))
             for v in (start, stop)) and isinstance(step, (int, np.integer)) \
        and (dtype is None or np.dtype(dtypes.to_numpy_dtype(dtype)).kind in "iuf")
    if not ok:
        raise TypeError("jnp.arange of a symbolic size takes integer start and stop, a "
                        "static integer step and an integer or float dtype; got "
                        f"start={start!r}, stop={stop!r}, step={step!r}, dtype={dtype!r}")
    step = int(step)
    if step == 0:
        raise ValueError("jnp.arange: step must not be zero")
    span = stop - start if step > 0 else start - stop
    if type(span) is Dim:
        assume_at_least(span, 0, "jnp.arange of symbolic sizes expects a non-empty range")
    n = (span + abs(step) - 1) // abs(step)
    dt = dtypes.default_int() if dtype is None else dtypes.canonicalize_dtype(dtype)
    out = st.iota(dt, (n,))
    if step != 1:
        out = ew.mul(out, Array._new(np.asarray(step, dt), False))
    if type(start) is Dim:
        out = ew.add(out, asarray_weak(start.value(), dt, False))
    elif start != 0:
        out = ew.add(out, Array._new(np.asarray(start, dt), False))
    return out


def eye(N, M=None, k=0, dtype=None):
    """A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere.

    Examples
    --------
    >>> jnp.eye(2)
    Array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    n = operator_index(N, "eye")
    m = n if M is None else operator_index(M, "eye")
    k = operator_index(k, "eye")
    if n < 0 or m < 0:
        raise ValueError(f"jnp.eye: negative dimensions are not allowed, got ({n}, {m})")
    dt = dtypes.default_float() if dtype is None else \
        dtypes.user_dtype(dtype)
    idt = dtypes.default_int()
    row, col = st.iota(idt, (n, m), 0), st.iota(idt, (n, m), 1)
    if k:
        row = ew.add(row, Array._new(np.asarray(k, idt), False))
    return ew.convert_element_type(ew.eq(row, col), dt, False)


def identity(n, dtype=None):
    """The ``n x n`` identity matrix."""
    return eye(n, dtype=dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors (``indexing`` ``"xy"`` or ``"ij"``).

    Examples
    --------
    >>> xs, ys = jnp.meshgrid(jnp.arange(3), jnp.arange(2))
    >>> xs.shape
    (2, 3)
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"jnp.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrs = [asarray(x) for x in xi]
    for a in arrs:
        if np.ndim(a) != 1:
            raise ValueError(f"jnp.meshgrid: arguments must be 1-D, got shape {np.shape(a)}")
    shape = [a.shape[0] for a in arrs]
    if indexing == "xy" and len(arrs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrs):
        pos = i
        if indexing == "xy" and len(arrs) > 1 and i < 2:
            pos = 1 - i
        if sparse:
            s = [1] * len(arrs)
            s[pos] = a.shape[0]
            out.append(st.reshape(a, s))
        else:
            out.append(st.broadcast_in_dim(a, tuple(shape), (pos,)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    """A grid of indices: ``out[k][i0, i1, …] == ik``."""
    dims = _shape_tuple(dimensions, "indices")
    dt = dtypes.default_int() if dtype is None else \
        dtypes.user_dtype(dtype)
    if sparse:
        return tuple(st.reshape(st.iota(dt, (d,)), [d if j == i else 1 for j in range(len(dims))])
                     for i, d in enumerate(dims))
    if not dims:
        return Array._new(np.zeros((0,), dt), False)
    return stack_values([st.iota(dt, dims, i) for i in range(len(dims))], 0)


# ---------------------------------------------------------------------------
# Triangles
# ---------------------------------------------------------------------------
def tri(N, M=None, k=0, dtype=None):
    """A ``N x M`` array with ones at and below the ``k``-th diagonal.

    Examples
    --------
    >>> jnp.tri(2, dtype=int)
    Array([[1, 0],
           [1, 1]], dtype=int32)
    """
    N = st.operator_index(N, "tri")
    M = N if M is None else st.operator_index(M, "tri")
    k = st.operator_index(k, "tri")
    dt = dtypes.default_float() if dtype is None else \
        dtypes.user_dtype(dtype)
    return ew.convert_element_type(_tri_mask(N, M, k), dt, False)


def _tri_mask(n, m, k):
    idt = dtypes.default_int()
    row, col = st.iota(idt, (n, m), 0), st.iota(idt, (n, m), 1)
    return ew.ge(ew.add(row, Array._new(np.asarray(k, idt), False)), col)


def _triangle(name, m, k, lower):
    a = asarray(m)
    shp = tuple(a.shape)
    if len(shp) < 2:
        raise ValueError(f"jnp.{name}: input must be at least 2-D, got shape {shp}")
    k = st.operator_index(k, name)
    mask = _tri_mask(shp[-2], shp[-1], k if lower else k - 1)
    mask = st.broadcast_in_dim(mask, shp, (len(shp) - 2, len(shp) - 1))
    zero = broadcast_to_shape(Array._new(np.zeros((), a.dtype), a.weak_type), shp)
    return ew.select_n(mask, zero, a) if lower else ew.select_n(mask, a, zero)


def tril(m, k=0):
    """``m`` with elements above the ``k``-th diagonal zeroed."""
    return _triangle("tril", m, k, True)


def triu(m, k=0):
    """``m`` with elements below the ``k``-th diagonal zeroed."""
    return _triangle("triu", m, k, False)

