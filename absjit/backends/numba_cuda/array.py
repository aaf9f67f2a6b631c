"""``CudaArray``: the cuda backend's :class:`absjit.array.DeviceArray`, holding a Numba
device array."""
from __future__ import annotations

from ...array import DeviceArray
from . import runtime

__all__ = ["CudaArray"]


class CudaArray(DeviceArray):
    """An :class:`absjit.Array` whose buffer is on a CUDA device (a Numba device array).

    Made by ``jit(..., backend="cuda")`` and by ``absjit.device_put(x, "cuda")``.
    Reading values on the host (``np.asarray``, ``repr``, ``float``, operators outside
    ``jit``) copies the buffer to the host once and keeps the copy. Passed to a cuda
    function it stays on the device; passed to a cpu function the host copy is used.
    ``__cuda_array_interface__`` and DLPack hand the device memory to CuPy or PyTorch
    without a copy.

    Examples
    --------
    >>> import absjit, numpy as np
    >>> a = absjit.device_put(np.arange(3.0), "cuda")  # doctest: +SKIP
    >>> a.device, np.asarray(a)                          # doctest: +SKIP
    (CudaDevice(id=0), array([0., 1., 2.], dtype=float32))
    """

    __slots__ = ()

    def _copy_to_host(self):
        return runtime.to_host(self._buf)

    def _synchronize(self) -> None:
        runtime.synchronize()

    def _copy_buffer(self):
        out = runtime.empty(self.shape, self.dtype)
        out.copy_to_device(self._buf)
        return out

    @property
    def device(self):
        from .backend import gpu_devices
        return gpu_devices()[0]

    @property
    def __cuda_array_interface__(self) -> dict:
        """The device buffer for CuPy, PyTorch and Numba, without a copy; marked
        read-only (the array is immutable)."""
        return runtime.array_interface(self._buf)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export of the device buffer (through CuPy, which must be installed)."""
        return runtime.dlpack(self._buf, stream=stream, max_version=max_version,
                              dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return (2, self.device.id)  # kDLCUDA
