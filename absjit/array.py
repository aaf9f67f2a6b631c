"""``absjit.Array``: an immutable array on a device.

On the CPU the buffer is a read-only NumPy array (``np.asarray(a)`` is zero-copy). On
another device it is that device's buffer, held by a :class:`DeviceArray` (a subclass,
so ``isinstance(a, Array)`` holds; each device backend supplies its own subclass):
``np.asarray(a)`` copies it to the host once (the copy is kept: the array is
immutable), ``block_until_ready()`` waits for the kernels writing it, and a backend's
subclass may hand the device memory to other libraries without a copy. Operators and
array methods (``+``, ``@``, ``.sum()``, ``.at[...]``) are installed by
``absjit.numpy`` so that arrays and tracers share one implementation; on a device
array outside ``jit`` they run on the host copy.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from ._device import cpu_device
from .core.avals import ShapedArray
from .core.trace import register_array_type
from .sharding import SingleDeviceSharding

__all__ = ["Array", "DeviceArray"]


class Array:
    """An immutable n-dimensional array.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.array([1., 2.])
    Array([1., 2.], dtype=float32)
    >>> x = jnp.arange(3)
    >>> x.at[0].set(10)
    Array([10,  1,  2], dtype=int32)
    """

    __slots__ = ("_value", "_weak_type", "_aval", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, dtype=None, weak_type: bool = False):
        if isinstance(value, Array):
            value = value._value
        dt = dtypes.canonicalize_dtype(dtype if dtype is not None else np.result_type(value))
        arr = np.array(value, dtype=dt, copy=True)
        arr.flags.writeable = False
        self._value = arr
        self._weak_type = bool(weak_type)
        self._aval = None

    @classmethod
    def _new(cls, value: np.ndarray, weak_type: bool = False, aval=None) -> "Array":
        """Wrap a NumPy array absjit owns (no copy, no checks); ``aval`` if known."""
        self = object.__new__(cls)
        if value.flags.writeable:
            value.flags.writeable = False
        self._value = value
        self._weak_type = weak_type
        self._aval = aval
        return self

    # -- metadata ----------------------------------------------------------------
    @property
    def aval(self) -> ShapedArray:
        aval = self._aval
        if aval is None:
            v = self._value
            aval = self._aval = ShapedArray(v.shape, v.dtype, self._weak_type)
        return aval

    @property
    def shape(self) -> tuple:
        return self._value.shape

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def size(self) -> int:
        return self._value.size

    @property
    def nbytes(self) -> int:
        return self._value.nbytes

    @property
    def itemsize(self) -> int:
        return self._value.itemsize

    @property
    def weak_type(self) -> bool:
        return self._weak_type

    @property
    def device(self):
        """The :class:`absjit.Device` holding this array."""
        return cpu_device()

    def devices(self) -> set:
        """The set of devices holding this array (one)."""
        return {self.device}

    @property
    def sharding(self):
        """How the array is laid out: all of it on one device
        (:class:`absjit.sharding.SingleDeviceSharding`)."""
        return SingleDeviceSharding(self.device)

    # -- conversion --------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self._value, dtype=dtype, copy=True)
        if dtype is None or np.dtype(dtype) == self._value.dtype:
            return self._value
        return self._value.astype(dtype)

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(self._value)

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def to_numpy(self) -> np.ndarray:
        return self._value

    def copy(self) -> "Array":
        return Array._new(self._value.copy(), self._weak_type)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def block_until_ready(self) -> "Array":
        """Return this array once the computation producing it has finished."""
        return self

    def is_fully_replicated(self) -> bool:  # for code written against jax.Array
        return True

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._value.shape[0]))

    def __hash__(self):
        raise TypeError("unhashable type: 'Array'")

    def __setitem__(self, idx, value):
        raise TypeError(
            "'Array' object does not support item assignment. absjit arrays are "
            "immutable; instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` "
            "or another .at[] method.")

    def __reduce__(self):
        return (_reconstruct, (self._value, self._weak_type))

    # -- DLPack --------------------------------------------------------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # DLPack >= 1.0 can mark a tensor read-only, so the buffer is shared (zero-copy).
        # Older consumers cannot be told, so they get a private copy: sharing would let
        # them write into an immutable array.
        if (max_version is not None and tuple(max_version) >= (1, 0)) and not copy:
            return self._value.__dlpack__(stream=stream, max_version=max_version,
                                          dl_device=dl_device, copy=copy)
        kwargs = {"stream": stream}
        if max_version is not None:
            kwargs["max_version"] = max_version
        return np.array(self._value, copy=True).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._value.__dlpack_device__()

    # -- printing ----------------------------------------------------------------
    def __repr__(self):
        prefix = "Array("
        v = self._value
        extra = f"dtype={v.dtype.name}" + (", weak_type=True" if self._weak_type else "")
        if v.size == 0 and v.shape != (0,):
            body = f"[], shape={v.shape}"
        else:
            body = np.array2string(v, prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=80)
        last_line = body.rsplit("\n", 1)[-1]
        sep = " " if len(last_line) + len(extra) + len(prefix) + 3 <= 80 else \
            "\n" + " " * len(prefix)
        return f"{prefix}{body},{sep}{extra})"

    def __str__(self):
        return str(self._value)

    def __format__(self, spec):
        if self._value.ndim == 0:
            return format(self._value[()], spec)
        return format(str(self), spec)


def _reconstruct(value, weak_type):
    return Array._new(np.array(value), weak_type)


register_array_type(Array)  # eager results are Arrays (core.trace.eval_primitive)


class DeviceArray(Array):
    """An :class:`Array` whose buffer lives on a device a backend owns.

    Each device backend supplies its subclass (the cuda backend's ``CudaArray`` holds a
    Numba device array; the xla backend on a GPU or TPU uses this class for
    ``jax.Array``s). Jitted calls of that backend take and return the buffer as it is
    (an executable whose ``array_type`` is the class), so results stay on the device
    between calls. Anything that needs the values on the host (NumPy, printing, eager
    ops) reads ``_value``: one copy to the host, made on first use and kept (the array
    is immutable).

    A subclass overrides the hooks its buffer needs: :meth:`_copy_to_host`,
    :attr:`device`, :meth:`_synchronize` and :meth:`_copy_buffer`. The defaults serve
    any buffer with ``shape`` and ``dtype`` that ``np.asarray`` reads (and, where it
    has them, ``device``, ``sharding`` and ``block_until_ready``).

    Examples
    --------
    >>> import numpy as np
    >>> a = DeviceArray._wrap(np.arange(3.0), False)  # any buffer with shape and dtype
    >>> a.shape, np.asarray(a).sum()
    ((3,), np.float64(3.0))
    """

    __slots__ = ("_buf", "_host")

    @classmethod
    def _wrap(cls, buf, weak_type=False, aval=None) -> "DeviceArray":
        """Wrap a device buffer absjit owns (no copy, no checks); ``aval`` if known."""
        self = object.__new__(cls)
        self._buf, self._host, self._weak_type = buf, None, bool(weak_type)
        self._aval = aval if aval is not None else ShapedArray(
            tuple(buf.shape), np.dtype(buf.dtype), bool(weak_type))
        return self

    # -- the hooks a backend's subclass overrides ------------------------------------
    def _copy_to_host(self) -> np.ndarray:
        return np.asarray(self._buf)

    def _synchronize(self) -> None:
        wait = getattr(self._buf, "block_until_ready", None)
        if wait is not None:
            wait()

    def _copy_buffer(self):
        return self._buf.copy()

    @property
    def device(self):
        device = getattr(self._buf, "device", None)
        if device is None:
            device = cpu_device()
        return device

    # -- what every device array derives from them ------------------------------------
    @property
    def _value(self) -> np.ndarray:
        host = self._host
        if host is None:
            host = self._copy_to_host()
            if host.flags.writeable:
                host.flags.writeable = False
            self._host = host
        return host

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))

    @property
    def size(self) -> int:
        return int(np.prod(self._aval.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def devices(self) -> set:
        return {self.device}

    @property
    def sharding(self):
        """The device buffer's own sharding where it has one (a jax sharding under the
        xla backend), else all of it on :attr:`device`."""
        own = getattr(self._buf, "sharding", None)
        return own if own is not None else Array.sharding.fget(self)

    def copy(self) -> "DeviceArray":
        return type(self)._wrap(self._copy_buffer(), self._weak_type, self._aval)

    def block_until_ready(self) -> "DeviceArray":
        """Return this array once the kernels writing it have finished."""
        self._synchronize()
        return self

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __reduce__(self):
        # Pickles hold the values; they load as a CPU array.
        return (_reconstruct, (self._value, self._weak_type))
