"""The ``cpu`` backend: jaxprs compiled to fused loops by Numba.

See :mod:`.codegen` for how a jaxpr becomes source, :mod:`.diskcache` for the persistent
cache, and the ``lower_*`` modules for the per-primitive rules. Importing this package
does not import Numba; the first compile does.
"""
from __future__ import annotations

from ..base import register_backend
from .backend import NumbaCPUBackend, NumbaExecutable, stats  # noqa: F401

BACKEND = register_backend(NumbaCPUBackend())

__all__ = ["NumbaCPUBackend", "NumbaExecutable", "BACKEND", "stats"]
