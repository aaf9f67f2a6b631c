"""The ``cpu`` backend: the compiler's loop IR rendered for Numba.

:mod:`.render` writes Python source from the IR (the renderer and scalar spellings
shared with the cuda backend are in :mod:`absjit.backends.numba`; whole-array rules in
:mod:`.lowering`, helpers the kernels call in :mod:`.runtime` and :mod:`.kernels`);
:mod:`.backend` compiles it in content-addressed pieces (threads in :mod:`.parallel`,
tier 0's evaluator in :mod:`.evaluator`). Importing this package does not import Numba;
the first compile does.
"""
from __future__ import annotations

from ..base import register_backend
from .backend import NumbaCPUBackend, NumbaExecutable  # noqa: F401

BACKEND = register_backend(NumbaCPUBackend())
stats = BACKEND.stats  # compile counters (absjit.cache.info() reports them)

__all__ = ["NumbaCPUBackend", "NumbaExecutable", "BACKEND", "stats"]
