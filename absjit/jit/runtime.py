"""Moving values to a device and waiting for them."""
from __future__ import annotations

from .. import dtypes, tree_util
from ..array import Array, CudaArray
from ..core.trace import Tracer, to_numpy

__all__ = ["block_until_ready", "device_put", "foreign_cuda_array"]


def foreign_cuda_array(x):
    """``x`` wrapped (without a copy) as an absjit array on the GPU when it is a CUDA
    array of another library (anything with ``__cuda_array_interface__``: CuPy,
    PyTorch, Numba; or a device array of Numba's simulator); None otherwise."""
    from ..backends.numba_cuda import runtime
    if isinstance(x, Tracer) or not runtime.is_device_array(x):
        return None
    return device_put(x, "gpu")


def block_until_ready(tree):
    """Wait until every array in ``tree`` is computed; returns ``tree``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.block_until_ready({"a": jnp.ones(2)})
    {'a': Array([1., 1.], dtype=float32)}
    """
    for leaf in tree_util.tree_leaves(tree):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None and not isinstance(leaf, Tracer):
            wait()
    return tree


def device_put(x, device=None):
    """Every leaf of ``x`` as an :class:`absjit.Array` on ``device``.

    ``device`` is a :class:`absjit.Device` (from ``absjit.devices()``), a platform or
    backend name (``"cpu"``, ``"gpu"``, ``"cuda"``), or None for the default backend's
    device. A leaf already on that device is returned as is; a CUDA array of another
    library (CuPy, PyTorch: anything with ``__cuda_array_interface__``) put on the GPU
    is wrapped without a copy; a GPU array put on the CPU is copied to the host.

    Examples
    --------
    >>> import absjit, numpy as np
    >>> absjit.device_put(np.arange(3))
    Array([0, 1, 2], dtype=int32)
    >>> absjit.device_put(1.0, "cpu")
    Array(1., dtype=float32, weak_type=True)
    """
    platform = _platform(device)
    if platform == "gpu":
        from ..api_utils import cuda_devices
        cuda_devices()  # RuntimeError naming what to install when there is no GPU
        from ..backends.numba_cuda import runtime

    def put(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        if platform == "gpu":
            if isinstance(leaf, CudaArray):
                return leaf
            if runtime.is_device_array(leaf) and not isinstance(leaf, Array):
                return runtime.put(leaf)
            value = to_numpy(leaf)
            return runtime.put(value, dtypes.is_weakly_typed(leaf))
        if type(leaf) is Array:
            return leaf
        if isinstance(leaf, CudaArray):
            return Array._new(leaf._value.copy(), leaf.weak_type)
        foreign = foreign_cuda_array(leaf)
        if foreign is not None:  # another library's CUDA array, copied to the host
            return Array._new(foreign._value.copy(), False)
        value = to_numpy(leaf)
        if value is leaf or value.base is not None or not value.flags.owndata:
            value = value.copy()
        return Array._new(value, dtypes.is_weakly_typed(leaf))
    return tree_util.tree_map(put, x)


def _platform(device) -> str:
    """``"cpu"`` or ``"gpu"`` for a ``device_put`` target; ``ValueError`` otherwise."""
    from ..api_utils import Device, _platform_of, default_backend
    from ..sharding import Sharding
    if device is None:
        return default_backend()
    if isinstance(device, Sharding):
        device = next(iter(device.device_set))
    if isinstance(device, Device):
        return device.platform
    if isinstance(device, str):
        from ..backends.base import _ALIASES, _REGISTRY
        if device in ("cpu", "gpu") or _ALIASES.get(device, device) in _REGISTRY:
            return _platform_of(device) if device != "gpu" else "gpu"
    raise ValueError(f"device_put: unsupported device {device!r}; use an absjit.Device "
                     "(absjit.devices()), 'cpu' or 'gpu'/'cuda'")
