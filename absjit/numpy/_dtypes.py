"""Scalar types (``jnp.float32`` …) and ``jnp.ndarray``.

``jnp.float32(1)`` makes an ``Array``; ``np.dtype(jnp.float32)`` is ``float32``; the
types work wherever a dtype is accepted.
"""
from __future__ import annotations

import threading

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.trace import Tracer
from ._creation import asarray

# ``bfloat16`` is public too, but made on first use (``__getattr__`` below), so it is not
# here: ``from ._dtypes import *`` would make it.
__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64", "complex64", "complex128",
           "ndarray", "dtype", "generic", "number", "integer", "signedinteger",
           "unsignedinteger", "inexact", "floating", "complexfloating", "bool", "int_",
           "uint", "float_", "complex_", "iinfo", "finfo", "result_type", "promote_types",
           "issubdtype", "can_cast", "isdtype", "float0", "double", "single", "cdouble",
           "csingle", "character", "flexible", "object_"]


class _ScalarMeta(type):
    def __instancecheck__(cls, instance):
        dt = getattr(instance, "dtype", None)
        return dt is not None and np.dtype(dt) == cls.dtype and np.ndim(instance) == 0 \
            if not isinstance(instance, np.generic) else instance.dtype == cls.dtype

    def __repr__(cls):
        return f"<class 'absjit.numpy.{cls.__name__}'>"

    def __eq__(cls, other):
        if isinstance(other, _ScalarMeta):
            return cls.dtype == other.dtype
        # ``np.dtype(None)`` is float64 and ``np.dtype({...})`` raises ValueError: only
        # dtype-likes compare, and comparing never raises (the Array API tests compare
        # dtypes with arbitrary objects).
        if other is None or not isinstance(other, (str, type, np.dtype)) \
                and not hasattr(other, "dtype"):
            return NotImplemented
        try:
            return cls.dtype == np.dtype(other)
        except Exception:  # noqa: BLE001 - anything np.dtype rejects is simply unequal
            return False

    def __ne__(cls, other):
        eq = _ScalarMeta.__eq__(cls, other)
        return eq if eq is NotImplemented else not eq

    def __hash__(cls):
        return hash(cls.dtype)


def _scalar_type(name: str, dt: np.dtype):
    def __new__(cls, x=0):
        return asarray(x, dtype=cls.dtype)
    return _ScalarMeta(name, (), {"dtype": dt, "__new__": __new__,
                                  "__doc__": f"The {dt.name} scalar type: ``{name}(x)`` is an "
                                             "Array of that dtype."})


bool_ = _scalar_type("bool_", dtypes.bool_)
int8 = _scalar_type("int8", dtypes.int8)
int16 = _scalar_type("int16", dtypes.int16)
int32 = _scalar_type("int32", dtypes.int32)
int64 = _scalar_type("int64", dtypes.int64)
uint8 = _scalar_type("uint8", dtypes.uint8)
uint16 = _scalar_type("uint16", dtypes.uint16)
uint32 = _scalar_type("uint32", dtypes.uint32)
uint64 = _scalar_type("uint64", dtypes.uint64)
float16 = _scalar_type("float16", dtypes.float16)
float32 = _scalar_type("float32", dtypes.float32)
float64 = _scalar_type("float64", dtypes.float64)
complex64 = _scalar_type("complex64", dtypes.complex64)
complex128 = _scalar_type("complex128", dtypes.complex128)
bool = bool_  # noqa: A001 - numpy 2 name
int_ = int64 if False else int32  # the default integer without x64
uint = uint32
float_ = float64
complex_ = complex128
# NumPy's C-style names for the float and complex types.
double, single, cdouble, csingle = float64, float32, complex128, complex64
# Abstract NumPy classes for ``issubdtype`` checks (absjit has no arrays of these kinds).
character, flexible, object_ = np.character, np.flexible, np.object_
float0 = dtypes.float0

dtype = np.dtype
generic, number, integer = np.generic, np.number, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating
iinfo, finfo = dtypes.iinfo, dtypes.finfo
result_type, promote_types, issubdtype = dtypes.result_type, dtypes.promote_types, dtypes.issubdtype


def can_cast(from_, to, casting="safe") -> bool:
    """``np.can_cast`` on dtypes (values are not inspected)."""
    return np.can_cast(dtypes.to_numpy_dtype(getattr(from_, "dtype", from_)),
                       dtypes.to_numpy_dtype(to), casting)


def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of the array API's kind names
    (``"bool"``, ``"signed integer"``, ``"unsigned integer"``, ``"integral"``,
    ``"real floating"``, ``"complex floating"``, ``"numeric"``) or a tuple of these.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.isdtype(jnp.float32, "real floating"), jnp.isdtype(jnp.int32, "real floating")
    (True, False)
    >>> jnp.isdtype(jnp.uint8, ("bool", "integral"))
    True
    """
    dt = dtypes.to_numpy_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}; expected a dtype or one of "
                                 f"{', '.join(repr(n) for n in _KINDS)}")
            if dtypes.is_bfloat16(dt):
                if k in ("real floating", "numeric"):
                    return True
            elif np.isdtype(dt, k):
                return True
        elif isinstance(k, (np.dtype, type)) or hasattr(k, "dtype"):
            if dt == dtypes.to_numpy_dtype(k):
                return True
        else:
            raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple of "
                            f"these, got {k!r}")
    return False


_KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
          "complex floating", "numeric")


class _NdarrayMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, (Array, Tracer))


class ndarray(metaclass=_NdarrayMeta):
    """For ``isinstance(x, jnp.ndarray)``: true for Arrays and tracers."""


_bfloat16_lock = threading.Lock()


def __getattr__(name):
    # ``bfloat16`` is made on first use (PEP 562): its dtype comes from ml_dtypes, which
    # is imported then (see absjit.dtypes). None where ml_dtypes is not installed.
    if name == "bfloat16":
        global bfloat16
        with _bfloat16_lock:
            if "bfloat16" not in globals():
                dt = dtypes.bfloat16
                bfloat16 = _scalar_type("bfloat16", dt) if dt is not None else None
        return bfloat16
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
