"""Implicit promotion and broadcasting: what makes ``absjit.numpy`` NumPy-like on top
of the strict ``absjit.lax``."""
from __future__ import annotations


import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dims import Dim, same_shape
from ..core.shapes import broadcast_shapes as _broadcast_shapes
from ..core.trace import Tracer
from ..ops.values import _scalar_array, asarray_weak, broadcast_to_shape, reject_masked
from ..errors import IncompatibleShapesError

__all__ = ["promote_args", "promote_dtypes", "broadcast_shapes", "broadcast_to_shape",
           "asarray_weak", "promote_args_inexact", "check_arraylike", "is_arraylike",
           "reject_masked"]

_scalar_types = (bool, int, float, complex)
_arraylike_types = (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)


def is_arraylike(x) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic)) or type(x) in _scalar_types


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
