"""Operators and methods shared by ``Array`` and every ``Tracer``.

They are installed on both classes when ``absjit.numpy`` is imported, so traced code
and eager code run the very same functions. Most call the function of the same name in
the namespace :func:`install_all` is given (``absjit.numpy`` itself, which imports this
module), looked up per call.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.dims import Dim
from ..ops.elementwise import convert_element_type
from ..ops.shape_values import dim_value
from ..array import Array
from ..core.trace import Tracer
from . import _eager_fast
from ._array_api import check_device
from ._indexing import getitem, getitem_mode, index_update

__all__ = ["install", "install_all"]


#: The namespace the methods call into (``absjit.numpy``), set by :func:`install_all`.
_JNP = None


def _defer(name):
    """A method that calls ``absjit.numpy.<name>(self, ...)`` (resolved per call, so
    modules may define the function after this one is installed)."""
    def method(self, *args, **kwargs):
        return getattr(_JNP, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


_scalar_or_array = (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)


def _binop(fn_name, reflected=False):
    fast = not reflected and fn_name in _eager_fast.FAST_OPERATORS

    def op(self, other):
        if fast and type(other) is Array and type(self) is Array:
            out = _eager_fast.binary(_JNP, fn_name, self, other)
            if out is not None:
                return out
        if not isinstance(other, _scalar_or_array):
            if type(other) is not Dim:
                return NotImplemented
            other = dim_value(other)  # a symbolic size (ranked level) as a value
        fn = getattr(_JNP, fn_name)
        return fn(other, self) if reflected else fn(self, other)
    op.__name__ = fn_name
    return op


def _astype(self, dtype, copy=False):
    dt = dtypes.user_dtype(dtype)
    if self.dtype == dt and not self.weak_type:
        return self
    return convert_element_type(self, dt, False)


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) and \
            not hasattr(shape[0], "__index__"):
        shape = shape[0]
    return _JNP.reshape(self, shape, order)


def _ravel(self, order="C"):
    return _JNP.ravel(self, order)


def _transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _JNP.transpose(self, axes or None)


class _IndexUpdateHelper:
    """``x.at[idx]`` returns an :class:`_IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """Functional updates: ``x.at[idx].set(y)`` returns a new array."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, out_sharding=None):
        return getitem_mode(self.array, self.index, mode, fill_value)

    def _update(self, mode, values):
        return index_update(self.array, self.index, values, mode)

    def set(self, values, **kwargs):
        return self._update("set", values)

    def add(self, values, **kwargs):
        return self._update("add", values)

    def multiply(self, values, **kwargs):
        return self._update("multiply", values)

    mul = multiply

    def min(self, values, **kwargs):  # noqa: A003
        return self._update("min", values)

    def max(self, values, **kwargs):  # noqa: A003
        return self._update("max", values)


def _compress(self, condition, axis=None, *, size=None, fill_value=0, out=None):
    """``a.compress(condition)``: the method takes the condition first, unlike
    ``jnp.compress(condition, a)``."""
    return _JNP.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _getitem(self, idx):
    return getitem(self, idx)


_BINOPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift", "divmod": "divmod",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}
_METHODS = ["sum", "mean", "std", "var", "max", "min", "prod", "squeeze", "ravel", "any",
            "all", "argmax", "argmin", "cumsum", "cumprod", "clip", "round", "dot", "conj",
            "swapaxes", "take", "repeat", "sort", "argsort", "trace", "diagonal", "flatten",
            "nonzero", "ptp", "conjugate"]


_API_VERSIONS = ("2021.12", "2022.12", "2023.12")


def _array_namespace(self, /, *, api_version=None):
    """The Array API namespace of this array: :mod:`absjit.numpy`."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}; "
                         f"supported: {', '.join(_API_VERSIONS)}")
    return _JNP


def _to_device(self, device, /, *, stream=None):
    """This array on ``device`` (the Array API's ``to_device``)."""
    if stream is not None:
        raise ValueError("to_device: absjit has no streams; pass stream=None")
    if isinstance(self, Tracer):
        return self
    from ..jit.runtime import device_put  # loads after absjit.numpy
    return device_put(self, check_device(device, "to_device"))


def install(cls) -> None:
    """Give ``cls`` (Array or a Tracer class) the NumPy-style operators and methods."""
    for short, fn in _BINOPS.items():
        setattr(cls, f"__{short}__", _binop(fn))
        setattr(cls, f"__r{short}__", _binop(fn, reflected=True))
    for short, fn in _COMPARE.items():
        setattr(cls, f"__{short}__", _binop(fn))
    cls.__neg__ = _defer("negative")
    cls.__pos__ = lambda self: self
    cls.__abs__ = _defer("absolute")
    cls.__invert__ = _defer("invert")
    cls.__getitem__ = _getitem
    cls.astype = _astype
    cls.reshape = _reshape
    cls.transpose = _transpose
    cls.T = property(lambda self: _JNP.transpose(self))
    cls.mT = property(lambda self: _JNP.swapaxes(self, -1, -2))
    cls.real = property(lambda self: _JNP.real(self))
    cls.imag = property(lambda self: _JNP.imag(self))
    cls.at = property(_IndexUpdateHelper)
    cls.compress = _compress
    cls.__array_namespace__ = _array_namespace
    cls.to_device = _to_device
    for name in _METHODS:
        if name in ("flatten", "ravel"):
            setattr(cls, name, _ravel)
        else:
            setattr(cls, name, _defer(name))


def install_all(namespace) -> None:
    """Install the methods on ``Array`` and ``Tracer``, calling into ``namespace``."""
    global _JNP
    _JNP = namespace
    install(Array)
    install(Tracer)
