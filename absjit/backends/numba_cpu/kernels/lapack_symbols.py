"""Binding the LAPACK/BLAS symbol names the kernels of :mod:`.lapack_kernels` call
(``absjit_sgetrf``, ``absjit_zungqr`` …) to SciPy's routines in this process.

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

__all__ = ["ensure_symbols", "LAPACK_DTYPES", "COMPLEX_DTYPES", "ROUTINES", "symbols",
           "dtypes_of"]

LAPACK_DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
COMPLEX_DTYPES = frozenset((np.dtype(np.complex64), np.dtype(np.complex128)))

# routine -> (SciPy module, argument count, the name of its real routine, the name of
# its complex routine taking the same arguments): s (float32) and d (float64) where it
# has a real name, c (complex64) and z (complex128) where it has a complex one.
ROUTINES = {"getrf": ("cython_lapack", 6, "getrf", "getrf"),
            "potrf": ("cython_lapack", 5, "potrf", "potrf"),
            "trsm": ("cython_blas", 11, "trsm", "trsm"),
            "syevd": ("cython_lapack", 11, "syevd", None),
            "heevd": ("cython_lapack", 13, None, "heevd"),
            "geqrf": ("cython_lapack", 8, "geqrf", "geqrf"),
            "orgqr": ("cython_lapack", 9, "orgqr", "ungqr"),
            "gesdd": ("cython_lapack", 14, "gesdd", None),
            "gesdd_complex": ("cython_lapack", 15, None, "gesdd"),
            "geev": ("cython_lapack", 14, "geev", None),
            "geev_complex": ("cython_lapack", 14, None, "geev"),
            "gees": ("cython_lapack", 15, "gees", None),
            "gees_complex": ("cython_lapack", 15, None, "gees"),
            "gehrd": ("cython_lapack", 9, "gehrd", "gehrd"),
            "orghr": ("cython_lapack", 9, "orghr", "unghr")}


def symbols(name: str) -> dict:
    """``{prefix: (symbol absjit binds, SciPy's routine)}`` for routine ``name`` of
    :data:`ROUTINES`, one per element type it comes in."""
    _, _, real_name, complex_name = ROUTINES[name]
    out = {}
    for prefixes, routine in (("sd", real_name), ("cz", complex_name)):
        if routine is not None:
            out.update((p, (f"absjit_{p}{routine}", p + routine)) for p in prefixes)
    return out


def dtypes_of(*names) -> frozenset:
    """The element types every routine of ``names`` comes in."""
    out = LAPACK_DTYPES | COMPLEX_DTYPES
    for name in names:
        _, _, real_name, complex_name = ROUTINES[name]
        if real_name is None:
            out = out & COMPLEX_DTYPES
        if complex_name is None:
            out = out & LAPACK_DTYPES
    return out


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
        for name, (mod, _, _, _) in ROUTINES.items():
            capi = importlib.import_module(f"scipy.linalg.{mod}").__pyx_capi__
            for symbol, routine in symbols(name).values():
                binding.add_symbol(symbol, _capsule_address(capi[routine]))
        _bound = True


def is_bound() -> bool:
    return _bound
