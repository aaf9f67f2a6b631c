"""The ``cuda`` backend (alias ``gpu``): the compiler's loop IR as Numba CUDA kernels.

:mod:`.kernels` renders loop nests, reductions, copies and the tiled product as
``numba.cuda.jit`` kernels (scalar spellings: :mod:`.device_rules`), :mod:`.array_ops`
the whole-array primitives; :mod:`.backend` writes the host driver that launches them;
:mod:`.runtime` holds device detection, allocation and transfers. Importing this package imports neither Numba nor
``numba.cuda``; checking availability or compiling does.

Without a GPU the backend runs under Numba's CUDA simulator when
``NUMBA_ENABLE_CUDASIM=1`` is set before ``numba.cuda`` is imported.
"""
from __future__ import annotations

from ..base import register_backend
from .backend import CudaBackend, CudaExecutable  # noqa: F401
from .runtime import CudaOutOfMemoryError  # noqa: F401

BACKEND = register_backend(CudaBackend())
stats = BACKEND.stats

__all__ = ["CudaBackend", "CudaExecutable", "CudaOutOfMemoryError", "BACKEND", "stats"]
