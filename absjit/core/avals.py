"""Abstract values: what tracing knows about a value.

An abstract value (aval) is hashable and compares by value; it *is* the cache key of
the argument it describes. The class decides what Python may do with a tracer that
carries it (``_bool``, ``_int`` … hooks): a ``ShapedArray`` knows only dtype and shape
and refuses, a ``ConcreteArray`` also knows the value and answers.

Shapes are tuples whose entries are ints; a level may use other hashable dimension
objects (symbolic dims) as long as they support ``==``, ``hash`` and ``str``.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..errors import (ConcretizationTypeError, TracerArrayConversionError,
                      TracerBoolConversionError, TracerIntegerConversionError)
from .dim_env import DimEnv
from .dims import is_symbolic

__all__ = ["AbstractValue", "ShapedArray", "ConcreteArray", "RankedArray", "StaticArg",
           "raise_to_shaped", "shape_str"]


def shape_str(shape) -> str:
    return ",".join(str(d) for d in shape)


class AbstractValue:
    """Base class of abstract values."""

    __slots__ = ()
    level_name = "abstract"

    def str_short(self) -> str:
        raise NotImplementedError


class ShapedArray(AbstractValue):
    """Dtype, shape and weak-typedness; the value is unknown.

    Examples
    --------
    >>> ShapedArray((3,), np.float32)
    ShapedArray(float32[3])
    """

    __slots__ = ("shape", "dtype", "weak_type", "_hash")
    level_name = "shaped"

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = dtype if type(dtype) is np.dtype else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self):
        """Number of elements: an ``int``, or a symbolic size at the ``ranked`` level."""
        if not self.shape:
            return 1
        if is_symbolic(self.shape):
            return math.prod(self.shape)
        return int(np.prod(self.shape, dtype=np.int64))

    def _key(self):
        return (self.shape, self.dtype, self.weak_type)

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((type(self).__name__, self._key()))
        return h

    def update(self, shape=None, dtype=None, weak_type=None) -> "ShapedArray":
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> "ShapedArray":
        return self.update(weak_type=False) if self.weak_type else self

    def to_shaped(self) -> "ShapedArray":
        return self

    def str_short(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{shape_str(self.shape)}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"{type(self).__name__}({self.dtype.name}[{shape_str(self.shape)}]{weak})"

    # -- what Python may do with a tracer of this aval ------------------------
    def _bool(self, tracer):
        raise TracerBoolConversionError(tracer)

    def _int(self, tracer):
        raise TracerIntegerConversionError(tracer, "__int__")

    def _index(self, tracer):
        raise TracerIntegerConversionError(tracer, "__index__")

    def _float(self, tracer):
        raise ConcretizationTypeError(tracer, "The problem arose with the `float` function.")

    def _complex(self, tracer):
        raise ConcretizationTypeError(tracer, "The problem arose with the `complex` function.")

    def _array(self, tracer):
        raise TracerArrayConversionError(tracer)

    def concrete_value(self):
        """The NumPy value, or None when this level does not know it."""
        return None


class ConcreteArray(ShapedArray):
    """A ``ShapedArray`` that also knows its value: Python may branch on it.

    Examples
    --------
    >>> ConcreteArray(np.float32(3.0), weak_type=True)
    ConcreteArray(3., dtype=float32, weak_type=True)
    """

    __slots__ = ("val",)
    level_name = "concrete"

    def __init__(self, val, weak_type: bool = False, dtype=None):
        val = np.asarray(val, dtype=dtype)
        super().__init__(val.shape, val.dtype, weak_type)
        self.val = val

    def _key(self):
        return (self.shape, self.dtype, self.weak_type)

    def __eq__(self, other):
        if type(self) is not type(other) or self._key() != other._key():
            return False
        return np.array_equal(self.val, other.val, equal_nan=self.dtype.kind in "fc")

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash(("ConcreteArray", self._key(), self.val.tobytes()))
        return h

    def to_shaped(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def __repr__(self):
        body = np.array2string(self.val, separator=", ")
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ConcreteArray({body}, dtype={self.dtype.name}{weak})"

    def _bool(self, tracer):
        return bool(self.val)

    def _int(self, tracer):
        return int(self.val)

    def _index(self, tracer):
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(self.val)

    def _float(self, tracer):
        return float(self.val)

    def _complex(self, tracer):
        return complex(self.val)

    def _array(self, tracer):
        return self.val

    def concrete_value(self):
        return self.val


class _Unsized:
    """The size of a non-unit axis of a :class:`RankedArray` not yet bound to an
    argument (a cache key): prints as ``?``."""

    __slots__ = ()

    def __repr__(self):
        return "?"

    def __reduce__(self):
        return (_unsized, ())


UNSIZED = _Unsized()


def _unsized():
    return UNSIZED


class RankedArray(ShapedArray):
    """Dtype, rank, weak type and which axes have size 1; the other sizes are symbolic.

    ``RankedArray(ndim, dtype, weak_type, unit_dims)`` is the abstract value of the
    ``ranked`` level and the cache key of its arguments: arrays of one rank and dtype
    share it whatever their sizes (only the axes of size exactly 1 are part of it, so
    broadcasting is decided while tracing). Tracing gives each other axis a symbolic
    :class:`~absjit.core.dims.Dim` named after the argument and axis (``x.shape ==
    (x0, x1)``); :meth:`bind` does that.

    Examples
    --------
    >>> a = RankedArray(2, np.float32, unit_dims=(1,))
    >>> a, a.str_short()
    (RankedArray(float32[?,1]), 'f32[?,1]')
    >>> from absjit.core.dim_env import DimEnv
    >>> a.bind(DimEnv(), "x")
    RankedArray(float32[x0,1])
    """

    __slots__ = ()
    level_name = "ranked"

    def __init__(self, ndim, dtype=None, weak_type: bool = False, unit_dims=(), shape=None):
        if shape is None:
            unit = frozenset(int(d) for d in unit_dims)
            shape = tuple(1 if d in unit else UNSIZED for d in range(int(ndim)))
        super().__init__(shape, dtype, weak_type)

    @classmethod
    def from_shaped(cls, aval: ShapedArray) -> "RankedArray":
        """A bound ``RankedArray`` with ``aval``'s (symbolic) shape."""
        return cls(len(aval.shape), aval.dtype, aval.weak_type, shape=aval.shape)

    @property
    def unit_dims(self) -> tuple:
        return tuple(d for d, n in enumerate(self.shape) if type(n) is int and n == 1)

    @property
    def is_bound(self) -> bool:
        return UNSIZED not in self.shape

    def bind(self, env: DimEnv, arg_name: str) -> "RankedArray":
        """This aval with each unsized axis replaced by a fresh dim of ``env`` named
        after ``arg_name`` and the axis."""
        shape = tuple(env.atom(arg_name, d) if n is UNSIZED else n
                      for d, n in enumerate(self.shape))
        return RankedArray(len(shape), self.dtype, self.weak_type, shape=shape)

    def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
        out = ShapedArray.update(self, shape, dtype, weak_type)
        return RankedArray.from_shaped(out) if is_symbolic(out.shape) else out

    def to_shaped(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)


class StaticArg(AbstractValue):
    """The abstract value of a static argument: the Python value itself."""

    __slots__ = ("value", "_hash")
    level_name = "static"

    def __init__(self, value):
        self.value = value
        self._hash = hash((StaticArg, value))  # raises TypeError for unhashable values

    def __eq__(self, other):
        if type(other) is not StaticArg:
            return False
        if type(self.value) is not type(other.value):
            return False
        try:
            return bool(self.value == other.value)
        except Exception:  # noqa: BLE001 - a broken __eq__ means "not equal"
            return False

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"StaticArg({self.value!r})"

    def str_short(self) -> str:
        return repr(self.value)


def raise_to_shaped(aval: AbstractValue) -> AbstractValue:
    return aval.to_shaped() if isinstance(aval, ShapedArray) else aval
