"""Dtypes with JAX's semantics.

* 64-bit types are off by default: ``canonicalize_dtype`` maps float64→float32,
  int64→int32, uint64→uint32, complex128→complex64 unless ``enable_x64`` is on.
* Python scalars are *weakly typed*: ``2.0`` takes the dtype of the array it meets.
* Mixed operations follow JAX's promotion lattice (``promote_types``), not NumPy's
  value-based rules: ``int8 + uint8 -> int16``, ``int32 + float16 -> float16``.

The lattice below is the JAX type-promotion lattice; ``i*``, ``f*``, ``c*`` are the weak
integer, float and complex kinds that Python scalars (and weak arrays) take.
"""
from __future__ import annotations

import functools
import sys
import threading
import warnings

import numpy as np

from .config import config

__all__ = [
    "is_masked_array",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "float0",
    "canonicalize_dtype", "promote_types", "result_type", "dtype_of", "is_weakly_typed",
    "short_name", "issubdtype", "default_int", "default_float", "default_complex",
    "is_python_scalar", "check_user_dtype", "user_dtype", "extended", "prng_key",
]

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

# The tangent dtype of integer and boolean values (as in JAX): a zero-size void type.
float0 = np.dtype([("float0", np.void, 0)])

_supported = frozenset({bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                        float16, float32, float64, complex64, complex128})

_x64_narrowing = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}

_SHORT = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
          uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
          float16: "f16", float32: "f32", float64: "f64",
          complex64: "c64", complex128: "c128", float0: "float0"}


# ---------------------------------------------------------------------------
# bfloat16
# ---------------------------------------------------------------------------
# bfloat16 is ml_dtypes' type, and importing ml_dtypes takes longer than the rest of
# ``import absjit`` (0.7: about a second), so it is imported the first time bfloat16 is
# needed: ``dtypes.bfloat16`` or ``absjit.numpy.bfloat16`` is read (PEP 562), the string
# "bfloat16" is resolved, or a bfloat16 dtype is met. No bfloat16 value can exist before
# ml_dtypes is imported, so while it is not in ``sys.modules`` no dtype is bfloat16 and
# ``is_bfloat16`` answers without importing it. Loading adds bfloat16 to the tables
# below (supported dtypes, short names, the promotion lattice).
_bfloat16 = None  # bfloat16's np.dtype, once loaded
_ml_dtypes = None
_ml_dtypes_missing = False
_bfloat16_lock = threading.Lock()


def _load_bfloat16():
    """bfloat16's ``np.dtype``, importing ml_dtypes on the first call (``None`` where
    ml_dtypes is not installed)."""
    global _bfloat16, _ml_dtypes, _ml_dtypes_missing, _supported, _SHORT, _EDGES, _UPPER
    if _bfloat16 is not None or _ml_dtypes_missing:
        return _bfloat16
    with _bfloat16_lock:
        if _bfloat16 is not None or _ml_dtypes_missing:
            return _bfloat16
        try:
            import ml_dtypes
        except ImportError:  # pragma: no cover - exercised only without ml_dtypes
            _ml_dtypes_missing = True
            return None
        bf16 = np.dtype(ml_dtypes.bfloat16)
        # Each table is replaced whole, never changed in place: readers on other threads
        # see the old table or the new one. Promotions cached before stay right: the
        # only edge into bfloat16 is from the weak float node, so every pair of nodes
        # below bfloat16 is below the weak float node too, which is the lesser bound.
        _supported = _supported | {bf16}
        _SHORT = {**_SHORT, bf16: "bf16"}
        _EDGES = _lattice_edges(bf16)
        _UPPER = {node: _upper_bounds(node) for node in _EDGES}
        _ml_dtypes = ml_dtypes
        globals()["bfloat16"] = bf16  # later reads of ``dtypes.bfloat16`` skip __getattr__
        _bfloat16 = bf16  # last: is_bfloat16 reads it without the lock
    return bf16


def is_bfloat16(dt) -> bool:
    """Whether the dtype ``dt`` is bfloat16. Imports ml_dtypes only when some other
    module has imported it already (only then can a bfloat16 value exist).

    Examples
    --------
    >>> import numpy as np
    >>> is_bfloat16(np.dtype(np.float16))
    False
    """
    bf16 = _bfloat16
    if bf16 is None:
        if "ml_dtypes" not in sys.modules:
            return False
        bf16 = _load_bfloat16()
        if bf16 is None:  # pragma: no cover - a module named ml_dtypes without bfloat16
            return False
    return dt == bf16


def __getattr__(name):
    # ``bfloat16`` is made on first use (PEP 562): reading it imports ml_dtypes. It is
    # None where ml_dtypes is not installed.
    if name == "bfloat16":
        return _load_bfloat16()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"bfloat16"})


__all__.append("bfloat16")  # public, made by __getattr__


def is_supported(dtype) -> bool:
    """Whether absjit can hold values of ``dtype`` (object/string/void dtypes: no)."""
    dt = to_numpy_dtype(dtype)
    return dt in _supported or is_bfloat16(dt)


def short_name(dtype) -> str:
    """``float32 -> 'f32'``, as jaxprs print it."""
    dt = to_numpy_dtype(dtype)
    name = _SHORT.get(dt)
    if name is None:
        return "bf16" if is_bfloat16(dt) else dt.name
    return name


def check_user_dtype(dtype, what: str = "dtype") -> np.dtype:
    """Turn a user dtype spec into a supported ``np.dtype`` or raise ``TypeError``."""
    if dtype is None:
        raise TypeError(f"{what} must not be None here")
    try:
        dt = to_numpy_dtype(dtype)
    except TypeError:
        raise TypeError(f"{what} {dtype!r} is not a valid dtype") from None
    if dt not in _supported and dt != float0 and not is_bfloat16(dt):
        raise TypeError(
            f"{what} {dt} is not supported by absjit (supported: bool, int8-64, uint8-64, "
            "float16, bfloat16, float32, float64, complex64, complex128)")
    return dt


def to_numpy_dtype(spec) -> np.dtype:
    """``np.dtype`` of a dtype spec: a dtype, a scalar type, a string, or an object
    (such as ``absjit.numpy.float32``) with a ``dtype`` attribute."""
    if isinstance(spec, np.dtype):
        return spec
    if isinstance(spec, type) and issubclass(spec, np.generic):
        return np.dtype(spec)
    inner = getattr(spec, "dtype", None)
    if isinstance(inner, np.dtype):
        return inner
    try:
        return np.dtype(spec)
    except TypeError:
        # NumPy knows the name "bfloat16" only once ml_dtypes is imported.
        if isinstance(spec, str) and spec == "bfloat16" and _load_bfloat16() is not None:
            return np.dtype(spec)
        raise


@functools.lru_cache(maxsize=None)
def _canonicalize(dt: np.dtype, x64: bool) -> np.dtype:
    if not x64:
        return _x64_narrowing.get(dt, dt)
    return dt


def canonicalize_dtype(dtype) -> np.dtype:
    """The dtype absjit stores for ``dtype`` under the current x64 setting."""
    dt = dtype if type(dtype) is np.dtype else check_user_dtype(dtype)
    if dt not in _supported and dt != float0:
        check_user_dtype(dt)
    return _canonicalize(dt, config.enable_x64)


def user_dtype(dtype, what: str = "dtype") -> np.dtype:
    """The dtype absjit stores for a dtype the user asked for explicitly (``dtype=``,
    ``astype``). With x64 off a 64-bit request is narrowed, with a warning as in JAX
    (Python shows it once per calling line)."""
    requested = check_user_dtype(dtype, what)
    dt = _canonicalize(requested, config.enable_x64)
    # ``dtype=int``/``float``/``complex`` mean "the default" of that kind: no warning.
    if dt != requested and not any(dtype is t for t in (int, float, complex)):
        warnings.warn(
            f"Explicitly requested dtype {requested} is not available, and will be "
            f"truncated to dtype {dt}. To enable more dtypes, set the enable_x64 "
            "configuration option (absjit.config.update('enable_x64', True)) or the "
            "ABSJIT_ENABLE_X64 shell environment variable.", UserWarning, stacklevel=3)
    return dt


def default_int() -> np.dtype:
    return int64 if config.enable_x64 else int32


def default_uint() -> np.dtype:
    return uint64 if config.enable_x64 else uint32


def default_float() -> np.dtype:
    return float64 if config.enable_x64 else float32


def default_complex() -> np.dtype:
    return complex128 if config.enable_x64 else complex64


_python_scalar_types = (bool, int, float, complex)


def is_python_scalar(x) -> bool:
    return type(x) in _python_scalar_types


def python_scalar_dtype(x) -> np.dtype:
    t = type(x)
    if t is bool:
        return bool_
    if t is int:
        return default_int()
    if t is float:
        return default_float()
    if t is complex:
        return default_complex()
    raise TypeError(f"not a Python scalar: {x!r}")


def is_weakly_typed(x) -> bool:
    """Python ints, floats and complexes are weak; arrays carry their own flag."""
    t = type(x)
    if t is int or t is float or t is complex:
        return True
    return bool(getattr(x, "weak_type", False))


def dtype_of(x) -> np.dtype:
    """The canonical dtype ``x`` has as an absjit value."""
    if is_python_scalar(x):
        return python_scalar_dtype(x)
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.result_type(x)
    return canonicalize_dtype(dt)


# ---------------------------------------------------------------------------
# The promotion lattice
# ---------------------------------------------------------------------------
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_WEAK_NODES = (_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX)


def _lattice_edges(bf16=None) -> dict:
    """The lattice's edges, with bfloat16's when its dtype ``bf16`` is given."""
    edges = {
        bool_: [_WEAK_INT],
        _WEAK_INT: [uint8, int8],
        uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64],
        uint64: [_WEAK_FLOAT],
        int8: [int16], int16: [int32], int32: [int64], int64: [_WEAK_FLOAT],
        _WEAK_FLOAT: [float16, _WEAK_COMPLEX],
        float16: [float32], float32: [float64, complex64], float64: [complex128],
        _WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
    }
    if bf16 is not None:
        edges[_WEAK_FLOAT].insert(0, bf16)
        edges[bf16] = [float32]
    return edges


_EDGES = _lattice_edges()


def _upper_bounds(node) -> frozenset:
    seen, todo = {node}, [node]
    while todo:
        for nxt in _EDGES[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


_UPPER = {node: _upper_bounds(node) for node in _EDGES}


def _upper(node) -> frozenset:
    """The nodes at or above ``node`` (a dtype met before bfloat16 was loaded loads it)."""
    up = _UPPER.get(node)
    if up is None and is_bfloat16(node):
        up = _UPPER.get(node)
    if up is None:
        raise TypeError(f"{node} has no place in the promotion lattice")
    return up


@functools.lru_cache(maxsize=None)
def _least_upper_bound(a, b):
    common = _upper(a) & _upper(b)
    # The least element of ``common`` is the one every other element is above.
    for cand in common:
        if all(other in _UPPER[cand] for other in common):
            return cand
    raise TypeError(f"no promotion between {a} and {b}")  # pragma: no cover


def _kind_node(dt: np.dtype, weak: bool):
    if not weak:
        return dt
    if dt == bool_:
        return bool_
    if dt.kind in "iu":
        return _WEAK_INT
    if dt.kind == "f" or is_bfloat16(dt):
        return _WEAK_FLOAT
    if dt.kind == "c":
        return _WEAK_COMPLEX
    return dt


def _node_dtype(node) -> np.dtype:
    if node == _WEAK_INT:
        return default_int()
    if node == _WEAK_FLOAT:
        return default_float()
    if node == _WEAK_COMPLEX:
        return default_complex()
    return node


def promote_types(a, b) -> np.dtype:
    """JAX's ``promote_types``: the least upper bound of two (strong) dtypes."""
    a, b = check_user_dtype(a), check_user_dtype(b)
    return canonicalize_dtype(_node_dtype(_least_upper_bound(a, b)))


@functools.lru_cache(maxsize=4096)
def _result_type_cached(key: tuple, x64: bool) -> tuple:
    pairs = []
    for k in key:
        if isinstance(k, type):  # a Python scalar type
            dt = {bool: bool_, int: int64, float: float64, complex: complex128}[k]
            pairs.append((_canonicalize(dt, x64), k is not bool))
        else:
            pairs.append(k)
    node = None
    for dt, weak in pairs:
        n = _kind_node(dt, weak)
        node = n if node is None else _least_upper_bound(node, n)
    weak = node in _WEAK_NODES
    dt = _node_dtype(node)
    if not weak and all(w for _, w in pairs):
        # All inputs weak but the bound is strong (e.g. weak float16 arrays): keep weak.
        weak = True
    return _canonicalize(dt, x64), weak


def result_type_and_weak(*args) -> tuple:
    """``(dtype, weak_type)`` of combining ``args`` (arrays, tracers, scalars, dtypes)."""
    key = []
    for x in args:
        t = type(x)
        if t is float or t is int or t is complex or t is bool:
            key.append(t)  # resolved under the x64 flag inside the cached function
            continue
        aval = getattr(x, "aval", None)
        if aval is not None and hasattr(aval, "weak_type"):
            key.append((aval.dtype, aval.weak_type))
        elif isinstance(x, (np.dtype, str)) or isinstance(x, type):
            key.append((canonicalize_dtype(to_numpy_dtype(x)), False))
        else:
            key.append((dtype_of(x), is_weakly_typed(x)))
    if not key:
        raise ValueError("at least one array or dtype is required")
    return _result_type_cached(tuple(key), config.enable_x64)


def result_type(*args) -> np.dtype:
    """``jnp.result_type``: the dtype of combining ``args`` under JAX promotion."""
    return result_type_and_weak(*args)[0]


class extended:  # noqa: N801 - JAX's name
    """The scalar type above dtypes that are not NumPy's (``prng_key``), as in JAX:
    ``issubdtype(key.dtype, extended)`` is True for a typed PRNG key."""


class prng_key(extended):  # noqa: N801 - JAX's name
    """The scalar type of typed PRNG keys (``absjit.random.key``): test a key array
    with ``absjit.numpy.issubdtype(k.dtype, absjit.dtypes.prng_key)``."""


class ExtendedDType:
    """Base of dtype objects that are not NumPy dtypes (a key dtype such as
    ``key<fry>``); ``type`` is the scalar type ``issubdtype`` tests against."""
    type: type = extended
    name: str = "extended"


def _is_extended_type(b) -> bool:
    return isinstance(b, type) and issubclass(b, extended)


def issubdtype(a, b) -> bool:
    """``np.issubdtype`` that also knows bfloat16 is a floating type and the extended
    dtypes (``issubdtype(key.dtype, prng_key)``)."""
    if isinstance(a, ExtendedDType) or isinstance(b, ExtendedDType):
        if isinstance(b, ExtendedDType):
            return a == b
        return _is_extended_type(b) and issubclass(a.type, b) if isinstance(
            a, ExtendedDType) else False
    if _is_extended_type(b):
        return False
    a_dt = to_numpy_dtype(a)
    if is_bfloat16(a_dt):
        if isinstance(b, type) and issubclass(b, np.generic) and b in (
                np.floating, np.inexact, np.number, np.generic):
            return True
        return is_bfloat16(to_numpy_dtype(b)) if not (isinstance(b, type) and b.__module__ == "numpy") else False
    if isinstance(b, type) and issubclass(b, np.generic):
        return np.issubdtype(a_dt, b)
    return np.issubdtype(a_dt, to_numpy_dtype(b))


def is_float(dt) -> bool:
    dt = to_numpy_dtype(dt)
    return dt.kind == "f" or is_bfloat16(dt)


def is_complex(dt) -> bool:
    return np.dtype(dt).kind == "c"


def is_inexact(dt) -> bool:
    return is_float(dt) or is_complex(dt)


def is_integer(dt) -> bool:
    return np.dtype(dt).kind in "iu"


def is_bool(dt) -> bool:
    return np.dtype(dt) == bool_


def finfo(dt):
    """Machine limits of a floating dtype, as ``np.finfo`` (``bfloat16`` included).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> float(jnp.finfo(jnp.float32).eps)
    1.1920928955078125e-07
    """
    dt = to_numpy_dtype(dt)
    if is_bfloat16(dt):
        return _ml_dtypes.finfo(dt)
    return np.finfo(dt)


def iinfo(dt):
    """Machine limits of an integer dtype, as ``np.iinfo``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> int(jnp.iinfo(jnp.int8).max)
    127
    """
    return np.iinfo(to_numpy_dtype(dt))


def is_masked_array(x) -> bool:
    """Whether ``x`` is a NumPy masked array. NumPy imports ``numpy.ma`` lazily, and no
    masked array exists before it is imported, so this never imports it (6 ms). Another
    thread (a background compile) may be importing it right now: a module still without
    ``MaskedArray`` has made no masked array yet either."""
    cls = getattr(sys.modules.get("numpy.ma"), "MaskedArray", None)
    return cls is not None and isinstance(x, cls)
