"""The Array API standard's namespace-level extras: ``__array_namespace_info__``,
``from_dlpack``, and the ``device=`` checks shared by the creation functions.

Examples
--------
>>> import absjit.numpy as jnp
>>> info = jnp.__array_namespace_info__()
>>> info.default_dtypes()["indexing"]
dtype('int32')
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from .. import dtypes
from ..config import config
from ..array import Array
from ..core.trace import Tracer
from . import _creation, _ranges

__all__ = ["from_dlpack", "array", "asarray", "full", "zeros",
           "ones", "empty", "zeros_like", "ones_like", "empty_like", "full_like", "arange",
           "linspace", "eye"]

_KIND_MEMBERS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KIND_MEMBERS["integral"] = _KIND_MEMBERS["signed integer"] + _KIND_MEMBERS["unsigned integer"]
_KIND_MEMBERS["numeric"] = (_KIND_MEMBERS["integral"] + _KIND_MEMBERS["real floating"]
                            + _KIND_MEMBERS["complex floating"])


def check_device(device, name: str):
    """Validate a creation function's ``device=``: None, an :class:`absjit.Device` or a
    platform name. Returns the device to put the result on (None: the default)."""
    from ..api_utils import Device  # loads after absjit.numpy
    if device is None or isinstance(device, (Device, str)):
        return device
    from ..sharding import Sharding  # loads after absjit.numpy
    if isinstance(device, Sharding):
        return next(iter(device.device_set))
    raise TypeError(f"jnp.{name}: device must be None or a Device from absjit.devices(), "
                    f"got {device!r} of type {type(device).__name__}")


def place(out, device, name: str):
    """``out`` on ``device`` (creation functions' ``device=``)."""
    device = check_device(device, name)
    if device is None or isinstance(out, Tracer):
        return out
    from ..jit.runtime import device_put  # loads after absjit.numpy
    return device_put(out, device)


class ArrayNamespaceInfo:
    """What ``absjit.numpy`` offers, per the Array API's inspection API."""

    __module__ = "absjit.numpy"

    def capabilities(self) -> dict:
        # As jax.numpy: boolean masks need known values, so neither is offered in general.
        return {"boolean indexing": False, "data-dependent shapes": False}

    def default_device(self):
        from ..api_utils import devices  # loads after absjit.numpy
        return devices()[0]

    def devices(self) -> list:
        from ..api_utils import devices  # loads after absjit.numpy
        return list(devices())

    def default_dtypes(self, *, device=None) -> dict:
        check_device(device, "__array_namespace_info__().default_dtypes")
        return {"real floating": dtypes.default_float(),
                "complex floating": dtypes.default_complex(),
                "integral": dtypes.default_int(),
                "indexing": dtypes.default_int()}

    def dtypes(self, *, device=None, kind=None) -> dict:
        check_device(device, "__array_namespace_info__().dtypes")
        if kind is None:
            names = _KIND_MEMBERS["numeric"] + _KIND_MEMBERS["bool"]
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = ()
            for k in kinds:
                if k not in _KIND_MEMBERS:
                    raise ValueError(f"dtypes: unknown kind {k!r}; expected one of "
                                     f"{', '.join(repr(n) for n in _KIND_MEMBERS)}")
                names += tuple(n for n in _KIND_MEMBERS[k] if n not in names)
        out = {}
        for n in names:
            dt = np.dtype(n)
            if not config.enable_x64 and dt.itemsize == 8 and dt.kind in "iuf" or \
                    not config.enable_x64 and dt == np.complex128:
                continue
            out[n] = dt
        return out


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The Array API inspection namespace (devices, default dtypes, dtypes by kind).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.__array_namespace_info__().capabilities()["data-dependent shapes"]
    False
    """
    return ArrayNamespaceInfo()


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array from any object with ``__dlpack__`` (the Array API's ``from_dlpack``).

    ``copy=None`` copies only when needed, ``True`` always, ``False`` never (a
    ``BufferError`` when a copy would be needed).

    Examples
    --------
    >>> import numpy as np, absjit.numpy as jnp
    >>> jnp.from_dlpack(np.arange(3))
    Array([0, 1, 2], dtype=int32)
    """
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__, got "
                        f"{type(x).__name__}")
    check_device(device, "from_dlpack")
    if isinstance(x, Array):
        host = np.asarray(x)
    else:
        host = np.from_dlpack(x, copy=copy)
    out = _creation.asarray(np.array(host, copy=True) if copy else host)
    return place(out, device, "from_dlpack")


def accepts_device(fn):
    """``fn`` with a keyword-only ``device=None`` (the Array API's creation functions):
    the result is put on that device; a bad ``device`` is a ``TypeError``."""
    sig = inspect.signature(fn)
    if "device" in sig.parameters:
        return fn
    params = list(sig.parameters.values())
    at = next((k for k, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
    params.insert(at, inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY,
                                        default=None))

    @functools.wraps(fn)
    def wrapper(*args, device=None, **kwargs):
        if device is None:
            return fn(*args, **kwargs)
        return place(fn(*args, **kwargs), device, fn.__name__)
    wrapper.__signature__ = sig.replace(parameters=params)
    del wrapper.__wrapped__  # the signature above is the one to show
    return wrapper


# The public creation functions take ``device=`` (absjit.numpy exports these; the
# undecorated ones in ``_creation`` and ``_ranges`` serve the library itself, without the extra call).
array, asarray, full, zeros, ones, empty, zeros_like, ones_like, empty_like, full_like, \
    arange, linspace, eye = map(accepts_device, (
        _creation.array, _creation.asarray, _creation.full, _creation.zeros,
        _creation.ones, _creation.empty, _creation.zeros_like, _creation.ones_like,
        _creation.empty_like, _creation.full_like, _creation.arange, _ranges.linspace,
        _creation.eye))
