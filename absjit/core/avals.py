"""Abstract values: what tracing knows about a value.

An abstract value (aval) is hashable and compares by value; it *is* the cache key of
the argument it describes. The class decides what Python may do with a tracer that
carries it (``_bool``, ``_int`` … hooks): a ``ShapedArray`` knows only dtype and shape
and refuses, a ``ConcreteArray`` also knows the value and answers.

Shapes are tuples whose entries are ints; a level may use other hashable dimension
objects (symbolic dims) as long as they support ``==``, ``hash`` and ``str``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import (ConcretizationTypeError, TracerArrayConversionError,
                      TracerBoolConversionError, TracerIntegerConversionError)

__all__ = ["AbstractValue", "ShapedArray", "ConcreteArray", "StaticArg",
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
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

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
