"""``absjit.Array``: an immutable array on a device.

On the CPU the buffer is a read-only NumPy array (``np.asarray(a)`` is zero-copy). On a
CUDA device it is a Numba device array, held by :class:`CudaArray` (a subclass, so
``isinstance(a, Array)`` holds); on an XLA GPU/TPU device it is a ``jax.Array`` held by
:class:`DeviceArray`: ``np.asarray(a)`` copies it to the host once (the
copy is kept: the array is immutable), ``block_until_ready()`` waits for the kernels
writing it, and ``__cuda_array_interface__``/DLPack hand the device memory to CuPy or
PyTorch without a copy. Operators and array methods (``+``, ``@``, ``.sum()``,
``.at[...]``) are installed by ``absjit.numpy`` so that arrays and tracers share one
implementation; on a ``CudaArray`` outside ``jit`` they run on the host copy.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .core.avals import ShapedArray

__all__ = ["Array", "CudaArray", "DeviceArray"]


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
        from .api_utils import cpu_device
        return cpu_device()

    def devices(self) -> set:
        """The set of devices holding this array (one)."""
        return {self.device}

    @property
    def sharding(self):
        """How the array is laid out: all of it on one device
        (:class:`absjit.sharding.SingleDeviceSharding`)."""
        from .sharding import SingleDeviceSharding
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


class CudaArray(Array):
    """An :class:`Array` whose buffer is on a CUDA device (a Numba device array).

    Made by ``jit(..., backend="cuda")`` and by ``absjit.device_put(x, "cuda")``.
    Reading values on the host (``np.asarray``, ``repr``, ``float``, operators outside
    ``jit``) copies the buffer to the host once and keeps the copy. Passed to a cuda
    function it stays on the device; passed to a cpu function the host copy is used.

    Examples
    --------
    >>> import absjit, numpy as np
    >>> a = absjit.device_put(np.arange(3.0), "cuda")  # doctest: +SKIP
    >>> a.device, np.asarray(a)                          # doctest: +SKIP
    (CudaDevice(id=0), array([0., 1., 2.], dtype=float32))
    """

    __slots__ = ("_device", "_host", "_device_id")

    @classmethod
    def _new_device(cls, buf, weak_type: bool = False, aval=None, device_id: int = 0):
        """Wrap a device array absjit owns (no copy)."""
        self = object.__new__(cls)
        self._device = buf
        self._host = None
        self._weak_type = weak_type
        self._aval = aval
        self._device_id = device_id
        return self

    @property
    def _value(self) -> np.ndarray:
        host = self._host
        if host is None:
            host = self._device.copy_to_host()
            host.flags.writeable = False
            self._host = host
        return host

    @property
    def aval(self) -> ShapedArray:
        aval = self._aval
        if aval is None:
            b = self._device
            aval = self._aval = ShapedArray(tuple(b.shape), np.dtype(b.dtype),
                                            self._weak_type)
        return aval

    @property
    def shape(self) -> tuple:
        return tuple(self._device.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._device.dtype)

    @property
    def ndim(self) -> int:
        return len(self._device.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self._device.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def device(self):
        from .api_utils import cuda_devices
        return cuda_devices()[self._device_id]

    def copy(self) -> "CudaArray":
        from .backends.numba_cuda import runtime
        out = runtime.empty(self.shape, self.dtype)
        out.copy_to_device(self._device)
        return CudaArray._new_device(out, self._weak_type, self._aval, self._device_id)

    def block_until_ready(self) -> "CudaArray":
        """Return this array once the kernels writing it have finished (synchronises
        the device)."""
        from .backends.numba_cuda import runtime
        runtime.synchronize()
        return self

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __reduce__(self):
        # Pickles hold the values; they load as a CPU array.
        return (_reconstruct, (self._value, self._weak_type))

    @property
    def __cuda_array_interface__(self) -> dict:
        """The device buffer for CuPy, PyTorch and Numba, without a copy; marked
        read-only (the array is immutable)."""
        from .backends.numba_cuda import runtime
        return runtime.array_interface(self._device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export of the device buffer (through CuPy, which must be installed)."""
        from .backends.numba_cuda import runtime
        return runtime.dlpack(self, stream=stream, max_version=max_version,
                              dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return (2, self._device_id)  # kDLCUDA

    def __repr__(self):
        return Array.__repr__(self)


class DeviceArray(Array):
    """An :class:`Array` whose buffer lives on an accelerator (a ``jax.Array`` from the
    xla backend on a GPU or TPU): jitted calls take and return the device buffer
    directly, so results stay on the device between them. Anything that needs the
    values on the host (NumPy, printing, eager ops) reads ``_value``: one copy to the
    host, made on first use and kept.

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
        self = object.__new__(cls)
        self._buf, self._host, self._weak_type = buf, None, bool(weak_type)
        self._aval = aval if aval is not None else ShapedArray(buf.shape, buf.dtype,
                                                               bool(weak_type))
        return self

    @property
    def _value(self) -> np.ndarray:
        host = self._host
        if host is None:
            host = self._host = np.asarray(self._buf)
            if host.flags.writeable:
                host.flags.writeable = False
        return host

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))

    @property
    def device(self):
        device = getattr(self._buf, "device", None)
        if device is None:
            from .api_utils import cpu_device
            device = cpu_device()
        return device

    def devices(self) -> set:
        return {self.device}

    @property
    def sharding(self):
        """The device buffer's own sharding (a jax sharding under the xla backend)."""
        own = getattr(self._buf, "sharding", None)
        return own if own is not None else Array.sharding.fget(self)

    def block_until_ready(self) -> "DeviceArray":
        wait = getattr(self._buf, "block_until_ready", None)
        if wait is not None:
            wait()
        return self
