"""Shardings: where an array's pieces live (``jax.sharding``), minimal and honest.

absjit runs every computation on one device, so the one sharding it has is
:class:`SingleDeviceSharding`: the whole array on one device. ``Array.sharding`` returns
one. The names exist so code written for JAX that inspects or passes shardings runs;
multi-device shardings (``NamedSharding``, meshes) are not provided.

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> s = jnp.ones(3).sharding
>>> s
SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
>>> s.is_fully_replicated, s.device_set == {absjit.devices()[0]}
(True, True)
"""
from __future__ import annotations

from ._device import Device

__all__ = ["Sharding", "SingleDeviceSharding"]


class Sharding:
    """The base class of shardings: a set of devices and how an array is laid out on
    them."""

    @property
    def device_set(self) -> set:
        raise NotImplementedError

    @property
    def is_fully_replicated(self) -> bool:
        raise NotImplementedError

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def memory_kind(self):
        return None

    def shard_shape(self, global_shape) -> tuple:
        raise NotImplementedError


class SingleDeviceSharding(Sharding):
    """The whole array on one ``device`` (an :class:`absjit.Device`).

    Examples
    --------
    >>> import absjit
    >>> from absjit.sharding import SingleDeviceSharding
    >>> SingleDeviceSharding(absjit.devices()[0]).shard_shape((4, 2))
    (4, 2)
    """

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device, *, memory_kind=None):
        if not isinstance(device, Device):
            raise TypeError(f"SingleDeviceSharding: device must be a Device from "
                            f"absjit.devices(), got {device!r} of type "
                            f"{type(device).__name__}")
        if memory_kind is not None and not isinstance(memory_kind, str):
            raise TypeError(f"SingleDeviceSharding: memory_kind must be a string or None, "
                            f"got {memory_kind!r}")
        # None means the device's default memory, which JAX calls "device".
        self._device, self._memory_kind = device, memory_kind or "device"

    @property
    def device_set(self) -> set:
        return {self._device}

    @property
    def memory_kind(self):
        return self._memory_kind

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def shard_shape(self, global_shape) -> tuple:
        return tuple(global_shape)

    def with_memory_kind(self, kind: str) -> "SingleDeviceSharding":
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and \
            (self._device, self._memory_kind) == (other._device, other._memory_kind)

    def __hash__(self):
        return hash((self._device, self._memory_kind))
