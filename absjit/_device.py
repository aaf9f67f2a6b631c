"""``absjit.Device``: a device arrays live on, and the CPU device.

A leaf module (it imports nothing of absjit), so that arrays, shardings and the
backend registry can name devices without importing ``absjit.api_utils``, where the
device queries (``absjit.devices()`` …) that ask the backends are.
"""
from __future__ import annotations

__all__ = ["Device", "cpu_device"]


class Device:
    """A device arrays live on: the CPU (platform ``"cpu"``) or a device of a backend
    that keeps its arrays off the host (a GPU: platform ``"gpu"``, listed by
    ``absjit.devices("gpu")``). ``backend`` names the backend whose arrays it holds.

    Examples
    --------
    >>> import absjit
    >>> absjit.devices()
    [CpuDevice(id=0)]
    """

    __slots__ = ("id", "platform", "process_index", "device_kind", "backend", "_label")

    def __init__(self, id: int = 0, platform: str = "cpu", device_kind=None,  # noqa: A002
                 backend: str = "cpu", label: str | None = None):
        self.id, self.platform, self.process_index = id, platform, 0
        self.device_kind = device_kind or platform
        self.backend = backend
        self._label = label or platform.capitalize()

    def __repr__(self):
        return f"{self._label}Device(id={self.id})"

    def __eq__(self, other):
        return type(other) is Device and (self.id, self.platform) == (other.id, other.platform)

    def __hash__(self):
        return hash((self.id, self.platform))


_CPU = Device(0, "cpu")


def cpu_device() -> Device:
    """The CPU device."""
    return _CPU
