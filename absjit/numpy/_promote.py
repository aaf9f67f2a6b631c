"""Implicit promotion and broadcasting: what makes ``absjit.numpy`` NumPy-like on top
of the strict ``absjit.lax``."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dims import Dim, is_dim, same_shape, unify_sizes
from ..core.shapes import broadcast_shapes as _broadcast_shapes
from ..core.trace import Tracer
from ..ops import elementwise as ew
from ..ops import structural as st
from ..errors import IncompatibleShapesError

__all__ = ["promote_args", "promote_dtypes", "broadcast_shapes", "broadcast_to_shape",
           "asarray_weak", "promote_args_inexact", "check_arraylike", "is_arraylike",
           "reject_masked"]

_scalar_types = (bool, int, float, complex)
_arraylike_types = (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)


def is_arraylike(x) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic)) or type(x) in _scalar_types


def reject_masked(name: str, x) -> None:
    """``ValueError`` for a NumPy masked array: converting it would silently drop its
    mask (JAX raises the same error)."""
    if dtypes.is_masked_array(x):
        raise ValueError(f"{name}: NumPy masked arrays are not supported as inputs (their "
                         "mask would be ignored); use arr.filled(value) or "
                         "arr.compressed() to turn it into a plain array first.")


def check_arraylike(name: str, *args) -> None:
    for i, a in enumerate(args):
        reject_masked(name, a)
        if not is_arraylike(a):
            if isinstance(a, (list, tuple)):
                raise TypeError(f"{name} requires ndarray or scalar arguments, got "
                                f"{type(a).__name__} at position {i}; wrap it with "
                                "jnp.array(...) first.")
            raise TypeError(f"{name} requires ndarray or scalar arguments, got "
                            f"{type(a).__name__} at position {i}.")


_SCALAR_CACHE: dict = {}


def _scalar_array(x, dtype, weak: bool):
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
        return _scalar_array(x, dtype, weak)
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


def _sizes_as_arrays(args):
    """Symbolic sizes of the ranked level among ``args`` as the numbers they are
    (``jnp.sqrt(x.shape[-1])``): weakly typed int scalars (:meth:`Dim.value`)."""
    return [a.value() if type(a) is Dim else a for a in args] \
        if any(type(a) is Dim for a in args) else args


def promote_dtypes(*args):
    """Cast every argument to the JAX-promoted common dtype (shapes untouched)."""
    dt, weak = dtypes.result_type_and_weak(*args)
    return [asarray_weak(a, dt, weak) for a in args]


def broadcast_shapes(name: str, *shapes) -> tuple:
    try:
        return _broadcast_shapes(*shapes)
    except ValueError:
        # JAX's wording (programs print it), without the operation's name.
        raise IncompatibleShapesError(
            "Incompatible shapes for broadcasting: shapes=["
            + ", ".join(str(tuple(s)) for s in shapes) + "]") from None


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


def _shape_of(x):
    t = type(x)
    if t is float or t is int or t is bool or t is complex:
        return ()
    return x.shape


def promote_args(name: str, *args):
    """Promote dtypes, then broadcast non-scalar operands to a common shape.

    Rank-0 operands stay rank 0: lax elementwise ops broadcast them for free.
    """
    first = args[0]
    if type(first) is Array:
        # Fast path: Arrays of one dtype, weak flag and shape need nothing.
        dt, weak, shape = first._value.dtype, first._weak_type, first._value.shape
        for a in args:
            if type(a) is not Array or a._value.dtype != dt or a._weak_type != weak \
                    or a._value.shape != shape:
                break
        else:
            return args
    for a in args:
        if not isinstance(a, _arraylike_types):
            args = _sizes_as_arrays(args)  # a symbolic size is a number
            check_arraylike(name, *args)
            break
    dt, weak = dtypes.result_type_and_weak(*args)
    out = []
    shapes = []
    for a in args:
        t = type(a)
        if t is float or t is int or t is complex:
            out.append(_scalar_array(a, dt, weak))
            shapes.append(())
        else:
            out.append(asarray_weak(a, dt, weak))
            shapes.append(_shape_of(a))
    nonscalar = [s for s in shapes if s != ()]
    if len(nonscalar) > 1 and not all(same_shape(s, nonscalar[0]) for s in nonscalar[1:]):
        target = broadcast_shapes(name, *nonscalar)
        out = [a if sh == () else broadcast_to_shape(a, target) for a, sh in zip(out, shapes)]
    return out


def promote_args_inexact(name: str, *args):
    """Like :func:`promote_args`, then integers and bools become the default float."""
    first = args[0]
    if type(first) is Array and len(args) == 1 and first._value.dtype.kind in "fc":
        return args  # fast path: one inexact Array needs nothing
    if not all(isinstance(a, _arraylike_types) for a in args):
        args = _sizes_as_arrays(args)  # a symbolic size is a number
        check_arraylike(name, *args)
    dt, weak = dtypes.result_type_and_weak(*args)
    if not dtypes.is_inexact(dt):
        # Convert each operand straight to the float type: a negative Python int meeting
        # an unsigned array must stay negative (-1 -> -1.0, not 255.0), as in JAX.
        fdt = dtypes.default_float()
        args = [_scalar_array(a, fdt, weak) if type(a) in _scalar_types
                else asarray_weak(a, fdt, weak) for a in args]
    args = promote_args(name, *args)
    dt = args[0].dtype if hasattr(args[0], "dtype") else np.result_type(args[0])
    if not dtypes.is_inexact(dt):
        weak = all(dtypes.is_weakly_typed(a) for a in args)
        args = [asarray_weak(a, dtypes.default_float(), weak) for a in args]
    return args
