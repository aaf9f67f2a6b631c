"""Moving values to a device and waiting for them."""
from __future__ import annotations

from .. import dtypes, tree_util
from ..array import Array, DeviceArray
from ..backends.base import adopt_foreign, get_backend, platform_of
from ..core.trace import Tracer, to_numpy

__all__ = ["block_until_ready", "device_put"]


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
    device. A leaf already on that device is returned as is; another library's array
    on that device (CuPy, PyTorch: anything with ``__cuda_array_interface__`` for a
    GPU) is wrapped without a copy; a device array put on the CPU is copied to the host.

    Examples
    --------
    >>> import absjit, numpy as np
    >>> absjit.device_put(np.arange(3))
    Array([0, 1, 2], dtype=int32)
    >>> absjit.device_put(1.0, "cpu")
    Array(1., dtype=float32, weak_type=True)
    """
    backend, target = _target(device)

    def put(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        if backend is not None:
            return backend.put(leaf, target)
        if type(leaf) is Array:
            return leaf
        adopted = adopt_foreign(leaf)
        leaf = leaf if adopted is None else adopted
        if isinstance(leaf, DeviceArray):  # copied to the host
            return Array._new(leaf._value.copy(), leaf.weak_type)
        value = to_numpy(leaf)
        if value is leaf or value.base is not None or not value.flags.owndata:
            value = value.copy()
        return Array._new(value, dtypes.is_weakly_typed(leaf))
    return tree_util.tree_map(put, x)


def _target(device):
    """``(backend, device)`` for a ``device_put`` target whose arrays live off the
    host, ``(None, None)`` for the host; ``ValueError`` for a target absjit does not
    know. Asking for a device backend this machine lacks raises its error (naming
    what to install)."""
    from ..api_utils import Device, _default_backend_name
    from ..backends.base import _ALIASES, _REGISTRY
    from ..sharding import Sharding
    if isinstance(device, Sharding):
        device = next(iter(device.device_set))
    if device is None:
        name = _default_backend_name()
    elif isinstance(device, Device):
        if device.platform == "cpu":
            return None, None
        return get_backend(device.backend), device
    elif isinstance(device, str) and (device == "cpu" or
                                      _ALIASES.get(device, device) in _REGISTRY):
        name = device
    else:
        raise ValueError(f"device_put: unsupported device {device!r}; use an absjit.Device "
                         "(absjit.devices()), 'cpu' or 'gpu'/'cuda'")
    if name == "cpu" or platform_of(name) == "cpu":
        return None, None
    return get_backend(name), None
