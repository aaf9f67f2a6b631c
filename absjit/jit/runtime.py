"""Moving values to a device and waiting for them (CPU only for now)."""
from __future__ import annotations

from .. import dtypes, tree_util
from ..array import Array
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
    """Every leaf of ``x`` as an :class:`absjit.Array` (on the CPU).

    Examples
    --------
    >>> import absjit, numpy as np
    >>> absjit.device_put(np.arange(3))
    Array([0, 1, 2], dtype=int32)
    >>> absjit.device_put(1.0)
    Array(1., dtype=float32, weak_type=True)
    """
    platform = device if isinstance(device, str) else getattr(device, "platform", "cpu")
    if device is not None and not str(platform).startswith("cpu"):
        raise ValueError(f"device_put: unsupported device {device!r}; only 'cpu' exists")

    def put(leaf):
        if type(leaf) is Array or isinstance(leaf, Tracer):
            return leaf
        value = to_numpy(leaf)
        if value is leaf or value.base is not None or not value.flags.owndata:
            value = value.copy()
        return Array._new(value, dtypes.is_weakly_typed(leaf))
    return tree_util.tree_map(put, x)
