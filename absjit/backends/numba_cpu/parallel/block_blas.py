"""Which BLAS library computes the blocks of a product on the pool
(:func:`.blas_kernels._pgemm_pool`).

Two OpenBLAS builds are usually loaded: SciPy's, which absjit's kernels call
(``absjit_xxgemm``, :func:`.lapack_symbols.ensure_gemm`; Numba's ``np.dot`` too), and
NumPy's own, which its wheels bundle with 64-bit
integers (``scipy_sgemm_64_``...). They are different releases and their kernels differ:
on the 2-core AMD EPYC development machine NumPy's (OpenBLAS 0.3.31) ran a single-threaded
float32 block whose first operand is not transposed (``x @ y``: the first BLAS operand is
``y``) 7-10% faster than SciPy's (0.3.30); float64 blocks timed the same.

Which one wins depends on the machine, and for a transposed first operand it changed
from one process to the next here (NumPy's 0.92x SciPy's time in one, 1.08-1.16x in
others). So every block goes through SciPy's unless asked otherwise:
``ABSJIT_BLOCK_BLAS=auto`` times, once per process before its first blocked product,
one block of each kind and layout through both libraries on the calling thread (BLAS
at one thread, as blocks run; 10-15 ms in all) and routes each (kind, layout) to the
faster one (:func:`choose`; if the measurement fails, SciPy's); ``numpy`` sends every
kind and layout NumPy's library has to it; ``scipy`` (the default) always uses SciPy's,
through Numba. Complex blocks are not timed and stay with SciPy's unless ``numpy`` is
asked for. Where NumPy's BLAS is not an OpenBLAS with 64-bit integer symbols (a NumPy
built against MKL, say), every block goes through SciPy's.
"""
from __future__ import annotations

import ctypes
import os
import threading
import time

import numpy as np

__all__ = ["choose", "ensure_chosen", "choice", "numpy_gemms", "ENV"]

ENV = "ABSJIT_BLOCK_BLAS"
#: What runs the blocks unless ``ABSJIT_BLOCK_BLAS`` says otherwise: SciPy's BLAS.
DEFAULT = "scipy"
_KINDS = "sdcz"
_DTYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
_SYMBOLS = ("scipy_{}gemm_64_", "{}gemm_64_")
# One timed block: the first operand M x K, the second K x N (column-major), as a
# pool task of 256 result columns, 128 rows and 256 terms; the best of ROUNDS each.
_M, _N, _K = 256, 128, 256
ROUNDS = 5
# NumPy's library takes a slot only when it is at least this much faster.
MARGIN = 0.98

_lock = threading.Lock()
_choice = None  # {"s n": "numpy" | "scipy", ...} once chosen


def _after_fork_in_child():
    global _lock
    _lock = threading.Lock()  # a fork inside choose() must not leave it held


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def numpy_gemms() -> dict:
    """``{kind: address}`` of the ILP64 Fortran ``?gemm_`` of the OpenBLAS that NumPy
    loaded (from its own package directory), or ``{}``."""
    from .threads import blas_controllers
    root = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    mine = os.path.join(root, "numpy")  # numpy/ and its wheel's numpy.libs/
    for path in sorted(lib.filepath for lib in blas_controllers()
                       if lib.filepath.startswith(mine)):
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0))
        except OSError:
            continue
        for pattern in _SYMBOLS:
            found = {k: getattr(lib, pattern.format(k), None) for k in _KINDS}
            if all(f is not None for f in found.values()):
                return {k: ctypes.cast(f, ctypes.c_void_p).value for k, f in found.items()}
    return {}


def _timers(gemms):
    """``{(library, kind, transposed): () -> seconds}``: one block through each."""
    from ..kernels.blas_kernels import xxgemm_function
    xxgemm = xxgemm_function()
    vp = ctypes.c_void_p
    i64 = ctypes.POINTER(ctypes.c_int64)
    out = {}
    rng = np.random.default_rng(0)
    for kind in "sd":
        dt = _DTYPES[kind]
        fortran = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, i64, i64, i64,
                                   vp, vp, i64, vp, i64, vp, vp, i64)(gemms[kind])
        one, zero = np.ones(1, dt), np.zeros(1, dt)
        b = rng.standard_normal(_K * _N).astype(dt)
        c = np.empty(_M * _N, dt)
        for trans in (False, True):
            a = rng.standard_normal(_M * _K).astype(dt)
            t = b"t" if trans else b"n"
            lda = _K if trans else _M
            ints = [ctypes.c_int64(v) for v in (_M, _N, _K, lda, _K, _M)]
            refs = [ctypes.byref(v) for v in ints]

            def scipy(code=kind.encode(), t=t, lda=lda, a=a, b=b, c=c, one=one, zero=zero):
                s = time.perf_counter()
                xxgemm(code, t, b"n", _M, _N, _K, one.ctypes.data, a.ctypes.data,
                       lda, b.ctypes.data, _K, zero.ctypes.data, c.ctypes.data, _M)
                return time.perf_counter() - s

            def numpy(fortran=fortran, t=t, refs=refs, ints=ints, a=a, b=b, c=c, one=one,
                      zero=zero):
                m, n, k, lda_, ldb, ldc = refs
                s = time.perf_counter()
                fortran(t, b"n", m, n, k, one.ctypes.data, a.ctypes.data, lda_,
                        b.ctypes.data, ldb, zero.ctypes.data, c.ctypes.data, ldc)
                return time.perf_counter() - s
            out["scipy", kind, trans] = scipy
            out["numpy", kind, trans] = numpy
    return out


def _measure(gemms) -> dict:
    """``{(kind, transposed): "numpy" | "scipy"}`` for float32 and float64 blocks."""
    timers = _timers(gemms)
    best = {key: float("inf") for key in timers}
    for key, fn in timers.items():
        fn()  # first calls: buffers, pages
    for _ in range(ROUNDS):
        for key, fn in timers.items():
            best[key] = min(best[key], fn())
    return {(kind, trans): "numpy" if best["numpy", kind, trans]
            < MARGIN * best["scipy", kind, trans] else "scipy"
            for kind in "sd" for trans in (False, True)}


def choose(set_slot) -> dict:
    """Decide once per process (again after :func:`reset`) and route each (kind,
    layout) with ``set_slot(slot, address)`` (:func:`.pool.set_gemm64`; address 0:
    SciPy's). Called from the thread about to run a blocked product, BLAS at one
    thread. Returns :func:`choice`."""
    global _choice
    with _lock:
        if _choice is not None:
            return dict(_choice)
        mode = os.environ.get(ENV, DEFAULT).strip().lower() or DEFAULT
        if mode not in ("auto", "scipy", "numpy"):
            raise ValueError(f"{ENV}={mode!r}: expected 'auto', 'scipy' or 'numpy'")
        try:
            gemms = numpy_gemms() if mode != "scipy" else {}
        except Exception:  # noqa: BLE001 - SciPy's BLAS for every block
            gemms = {}
        routes = {(k, t): "scipy" for k in _KINDS for t in (False, True)}
        if gemms:
            if mode == "numpy":
                routes = {key: "numpy" for key in routes}
            else:
                try:
                    routes.update(_measure(gemms))
                except Exception:  # noqa: BLE001 - SciPy's BLAS, as without NumPy's
                    pass
        for (kind, trans), lib in routes.items():
            set_slot(2 * _KINDS.index(kind) + int(trans), gemms[kind] if lib == "numpy" else 0)
        _choice = {f"{k} {'t' if t else 'n'}": lib for (k, t), lib in routes.items()}
        return dict(_choice)


def ensure_chosen(set_slot) -> None:
    """:func:`choose`, unless this process has chosen already (a check without the
    lock: it runs before every call of a kernel with blocked products)."""
    if _choice is None:
        choose(set_slot)


def choice():
    """``{"s n": library, ...}``: which library runs blocks of each kind (``s d c
    z``) whose first operand is (``t``) or is not (``n``) transposed; None before the
    first blocked product."""
    return None if _choice is None else dict(_choice)


def reset():
    """Forget the choice (the next blocked product chooses again)."""
    global _choice
    with _lock:
        _choice = None
