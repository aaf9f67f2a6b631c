"""Binding the LAPACK/BLAS symbol names the kernels of :mod:`.lapack_kernels` and
:mod:`.blas_kernels` call (``absjit_sgetrf``, ``absjit_zungqr``, ``absjit_xxgemm`` …) to
SciPy's routines in this process.

``scipy.linalg.cython_lapack``/``cython_blas`` export the routines' addresses in
``__pyx_capi__``; :func:`ensure_symbols` registers them with LLVM under absjit's names
before any kernel calling them is compiled or loaded, so a kernel's machine code holds no
address and stays disk-cacheable. Products call ``absjit_xxgemm`` (:func:`ensure_gemm`),
a small function compiled here that takes the element kind as its first argument and
calls SciPy's ``?gemm`` (the pool's blocks call it by address). This module imports
neither Numba's compiler nor SciPy until a program uses these routines: importing absjit
stays as fast as before.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

__all__ = ["ensure_symbols", "ensure_gemm", "gemm_address", "LAPACK_DTYPES",
           "COMPLEX_DTYPES", "ROUTINES", "symbols", "dtypes_of"]

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
            "orghr": ("cython_lapack", 9, "orghr", "unghr"),
            "gemm": ("cython_blas", 13, "gemm", "gemm")}


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
_xxgemm = None  # absjit_xxgemm's address, once built
_engine = None  # the llvmlite engine holding its code (kept alive)


def _capsule_address(capsule) -> int:
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


def _bind(names) -> None:
    import importlib
    from llvmlite import binding
    for name in names:
        capi = importlib.import_module(f"scipy.linalg.{ROUTINES[name][0]}").__pyx_capi__
        for symbol, routine in symbols(name).values():
            binding.add_symbol(symbol, _capsule_address(capi[routine]))


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
        _bind(ROUTINES)
        _bound = True


# ``int absjit_xxgemm(kind, transa, transb, m, n, k, alpha*, a*, lda, b*, ldb, beta*, c*,
# ldc)``: column-major C = alpha op(A) op(B) + beta C through SciPy's ``?gemm`` (BLAS's
# Fortran convention: every argument by reference, sizes as 32-bit integers); ``kind``
# is b"s", b"d", b"c" or b"z"; returns 0, or -1 for another kind.
_XXGEMM_HEAD = """
define i32 @absjit_xxgemm(i8 %kind, i8 %ta, i8 %tb, i64 %m, i64 %n, i64 %k, i8* %alpha,
                          i8* %a, i64 %lda, i8* %b, i64 %ldb, i8* %beta, i8* %c,
                          i64 %ldc) {
entry:
  %pta = alloca i8
  %ptb = alloca i8
  store i8 %ta, i8* %pta
  store i8 %tb, i8* %ptb
"""
_XXGEMM_CALL = """kind_{kind}:
  call void @absjit_{kind}gemm(i8* %pta, i8* %ptb, i32* %pm, i32* %pn, i32* %pk, i8* %alpha,
                              i8* %a, i32* %plda, i8* %b, i32* %pldb, i8* %beta, i8* %c,
                              i32* %pldc)
  ret i32 0
"""
_XXGEMM_DECLARE = ("declare void @absjit_{kind}gemm(i8*, i8*, i32*, i32*, i32*, i8*, i8*, "
                   "i32*, i8*, i32*, i8*, i8*, i32*)\n")


def _xxgemm_ir() -> str:
    kinds = "sdcz"
    lines = [_XXGEMM_HEAD]
    for size in ("m", "n", "k", "lda", "ldb", "ldc"):
        lines.append(f"  %p{size} = alloca i32\n  %t{size} = trunc i64 %{size} to i32\n"
                     f"  store i32 %t{size}, i32* %p{size}\n")
    cases = " ".join(f"i8 {ord(k)}, label %kind_{k}" for k in kinds)
    lines.append(f"  switch i8 %kind, label %other [ {cases} ]\n")
    lines += [_XXGEMM_CALL.format(kind=k) for k in kinds]
    lines.append("other:\n  ret i32 -1\n}\n")
    lines += [_XXGEMM_DECLARE.format(kind=k) for k in kinds]
    return "".join(lines)


def ensure_gemm() -> int:
    """Bind SciPy's ``?gemm`` and build ``absjit_xxgemm`` (once per process, before a
    kernel calling it is compiled or loaded); returns its address."""
    global _xxgemm, _engine
    if _xxgemm is not None:
        return _xxgemm
    with _lock:
        if _xxgemm is None:
            from llvmlite import binding
            _bind(["gemm"])
            binding.initialize_native_target()
            binding.initialize_native_asmprinter()
            module = binding.parse_assembly(_xxgemm_ir())
            module.verify()
            machine = binding.Target.from_default_triple().create_target_machine(opt=2)
            engine = binding.create_mcjit_compiler(module, machine)
            engine.finalize_object()
            address = engine.get_function_address("absjit_xxgemm")
            binding.add_symbol("absjit_xxgemm", address)
            _engine = engine
            _xxgemm = address
            from ..parallel import pool
            pool.set_xxgemm(address)  # the pool's product blocks call it (once built)
    return _xxgemm


def gemm_address():
    """``absjit_xxgemm``'s address if :func:`ensure_gemm` built it, else None."""
    return _xxgemm


def is_bound() -> bool:
    return _bound
