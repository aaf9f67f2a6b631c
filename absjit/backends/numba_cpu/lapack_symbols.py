"""Binding the LAPACK/BLAS symbol names the kernels of :mod:`.lapack_kernels` call
(``absjit_sgetrf`` …) to SciPy's routines in this process.

``scipy.linalg.cython_lapack``/``cython_blas`` export the routines' addresses in
``__pyx_capi__``; :func:`ensure_symbols` registers them with LLVM under absjit's names
before any kernel calling them is compiled or loaded, so a kernel's machine code holds no
address and stays disk-cacheable. This module imports neither Numba's compiler nor SciPy
until a program uses these routines: importing absjit stays as fast as before.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

__all__ = ["ensure_symbols", "LAPACK_DTYPES", "ROUTINES"]

LAPACK_DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))

# routine -> (SciPy module, argument count); each comes as s (float32) and d (float64).
ROUTINES = {"getrf": ("cython_lapack", 6), "potrf": ("cython_lapack", 5),
            "trsm": ("cython_blas", 11), "syevd": ("cython_lapack", 11),
            "geqrf": ("cython_lapack", 8), "orgqr": ("cython_lapack", 9),
            "gesdd": ("cython_lapack", 14), "geev": ("cython_lapack", 14),
            "gees": ("cython_lapack", 15), "gehrd": ("cython_lapack", 9),
            "orghr": ("cython_lapack", 9)}

_lock = threading.Lock()
_bound = False


def _capsule_address(capsule) -> int:
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


def ensure_symbols() -> None:
    """Bind ``absjit_s<routine>`` and ``absjit_d<routine>`` for each routine of
    :data:`ROUTINES` to SciPy's routines in this process (once; the lowering rules call
    it while rendering, before a kernel is compiled or loaded)."""
    global _bound
    if _bound:
        return
    with _lock:
        if _bound:
            return
        import importlib
        from llvmlite import binding
        for name, (mod, _) in ROUTINES.items():
            capi = importlib.import_module(f"scipy.linalg.{mod}").__pyx_capi__
            for p in "sd":
                binding.add_symbol(f"absjit_{p}{name}", _capsule_address(capi[p + name]))
        _bound = True


def is_bound() -> bool:
    return _bound
