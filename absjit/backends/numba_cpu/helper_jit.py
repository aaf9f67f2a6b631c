"""How the cpu backend's helpers (the functions generated kernels call through
:mod:`.runtime`: ``_sin_float32``, ``_exp_float64``, ``_cdiv``…) are compiled.

``numba.njit(inline="always")`` inlines a function at Numba's own IR level: every
kernel that calls it types and lowers the whole body again, once per call site (for
kernels calling sin, exp or tanh, most of their compile time). :func:`helper`
compiles a function the ordinary way instead — once per machine and argument types,
kept in absjit's disk cache (:func:`disk_cached`) — and marks the compiled LLVM
function ``alwaysinline``. A kernel that calls it links
that code, and LLVM inlines it into the calling loop before optimising, so the loop
vectoriser sees the same code as before; another call site, or another kernel, costs
a call to type, not the body.

Helpers compile with their own flags (``error_model="numpy"``, as the kernels), not
the calling kernel's: a kernel compiled with ``fastmath`` does not apply it to a
helper's arithmetic (whose range reductions and error-free sums rely on IEEE
rounding). They are compiled without a Python entry point (half the cost of compiling
a small one), so they can only be called from ``njit`` code.

The larger kernels (LAPACK, BLAS, FFT, ``top_k``) are plain ``numba.njit`` functions
under :func:`disk_cached`: 0.3-0.7 s each to compile, they were most of the compile
time of a program with a decomposition, paid again in every process.
"""
from __future__ import annotations

import logging

import numba

__all__ = ["helper", "read_only_inputs", "disk_cached"]

log = logging.getLogger("absjit")


_FLAGS = {"error_model": "numpy",
          # only compiled code calls a helper: no Python or C entry points to compile
          "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def helper(fn=None, **flags):
    """``numba.njit(error_model="numpy", **flags)`` for functions called from compiled
    code only (no Python entry point), their compiled functions marked for LLVM to
    inline wherever they are linked. Usable as ``@helper`` or ``@helper(**flags)``."""
    if fn is None:
        return lambda f: helper(f, **flags)
    disp = numba.njit(**{**_FLAGS, **flags})(fn)
    add_overload = disp.add_overload

    def add_marked(cres):
        _mark_alwaysinline(cres)
        add_overload(cres)

    # Numba calls ``add_overload`` with each new compile result, after finalising its
    # library and before any kernel links it (or the disk cache saves it: a helper
    # loaded from there links code that already carries the mark).
    disp.add_overload = add_marked
    return disk_cached(disp)


def _mark_alwaysinline(cres) -> None:
    """Give the compiled function the LLVM attribute ``alwaysinline`` in the module
    its callers link (``CodeLibrary._final_module``, Numba internals stable from Numba
    0.50 to 0.68). Without it the function is still correct, but LLVM keeps most
    helpers out of line, and loops calling them are not vectorised."""
    try:
        name = cres.fndesc.llvm_func_name
        library = cres.library
        # a library loaded from the disk cache links its ``_shared_module``, saved
        # with the mark
        module = library._shared_module or library._final_module
        for f in module.functions:
            if f.name == name and not f.is_declaration:
                if "alwaysinline" not in str(f.attributes):
                    f.add_function_attribute("alwaysinline")
                return
    except Exception:  # noqa: BLE001 - a newer Numba's internals
        pass
    log.debug("helper %s was not marked alwaysinline", getattr(cres.fndesc, "qualname", "?"))


def read_only_inputs(*positions):
    """Compile a dispatcher's array arguments at ``positions`` (ones it only reads) as
    read-only arrays, whatever the caller passes. A kernel's own arguments are read-only
    arrays (absjit arrays are immutable) and its temporaries are writable, so a helper
    called with either would otherwise compile once per combination (``_blas_trsm``
    three times, 0.45 s each, in one program); a writable array converts to the
    read-only type at the call (Numba's safe array conversion), so one compile serves
    every combination.

    Examples
    --------
    >>> import numba, numpy as np
    >>> total = read_only_inputs(0)(numba.njit(lambda x: x.sum()))
    >>> frozen = np.ones(3); frozen.flags.writeable = False
    >>> call = numba.njit(lambda a, b: total(a) + total(b))
    >>> float(call(np.ones(3), frozen)), len(total.signatures)
    (6.0, 1)
    """
    def wrap(disp):
        compile_exact = disp.compile

        def compile_read_only(sig):
            from numba.core import types
            args = getattr(sig, "args", sig)
            if isinstance(args, tuple):
                args = tuple(a.copy(readonly=True) if i in positions
                             and isinstance(a, types.Array) and a.mutable else a
                             for i, a in enumerate(args))
                sig = args if not hasattr(sig, "args") else sig.replace(args=args)
            return compile_exact(sig)
        disp.compile = compile_read_only
        return disp
    return wrap


def disk_cached(disp, prepare=None):
    """Keep ``disp``'s compiled versions in absjit's disk cache, as generated kernels
    are: a helper that takes a second or so to compile (the LAPACK, BLAS, FFT and sort
    kernels) then compiles once per machine and argument types, not once per process.

    Each helper and signature is one cache entry
    (``absjit_k_helper_<module>_<name>_<hash>``): its Numba files are authenticated
    before Numba reads them and signed after it writes them, like a kernel's
    (:mod:`absjit.backends.diskcache`). The entry's module file records the backend's
    version key, so a new absjit, Numba or CPU (or another optimisation level) starts
    the entry afresh; Numba's own index also checks the helper's source file and
    bytecode. Without a usable disk cache it compiles in every process, as before.
    ``prepare()``, when given, runs before an entry is read: it binds the symbols the
    helper's machine code links against (:func:`.lapack_symbols.ensure_gemm`)."""
    disp._cache = _HelperCache(disp, prepare)
    return disp


class _HelperCache:
    """What a Numba dispatcher asks of its cache (``load_overload``, ``save_overload``,
    ``flush``), answered from absjit's disk cache directory of the moment (tests and
    users may point it elsewhere while a process runs).

    Each signature is an entry of its own (``<helper>_<hash of the signature>``): Numba
    keeps a function's signatures in one index and numbers their data files, and two
    processes saving different signatures at once would both take the same number (one
    index would then name the other's code). Saves of one signature by two processes
    write equivalent files, and the MAC is rewritten until it matches them."""

    def __init__(self, disp, prepare=None):
        fn = disp.py_func
        self._disp = disp
        self._prepare = prepare
        from ..diskcache import HELPER_PREFIX
        self._base = f"{HELPER_PREFIX}{fn.__module__.rsplit('.', 1)[-1]}_{fn.__qualname__}"
        self._pinned: dict = {}  # (numba directory, entry) -> Numba's cache object

    def _cache(self, sig):
        """``(entry name, Numba's cache object for it)``, or None without a usable disk
        cache."""
        from .. import diskcache
        if not diskcache.usable():
            return None
        import hashlib
        from ..base import get_backend
        unit = f"{self._base}_{hashlib.sha256(str(sig).encode()).hexdigest()[:16]}"
        versions = get_backend("cpu").version_key()
        # (again each time: a clear() may have removed it; a new text purges old files)
        diskcache.write_module(unit, f"# absjit helper {self._base}\n# signature {sig}\n"
                               f"# {versions!r}\n")
        directory = diskcache.numba_dir()
        cache = self._pinned.get((directory, unit))
        if cache is None:
            from ...compat import pinned_cache
            cache = pinned_cache(self._disp.py_func, directory, filename_base=unit)
            self._pinned[(directory, unit)] = cache
        return unit, cache

    def load_overload(self, sig, target_context):
        from .. import diskcache
        try:
            got = self._cache(sig)
            if got is not None and self._prepare is not None:
                self._prepare()
            if got is None or not diskcache.verify_or_purge(got[0]):
                return None
            return got[1].load_overload(sig, target_context)
        except Exception:  # noqa: BLE001 - unreadable or vanished files: compile
            log.debug("helper %s: disk cache not read", self._base, exc_info=True)
            return None

    def save_overload(self, sig, cres):
        from .. import diskcache
        try:
            got = self._cache(sig)
            if got is not None:
                got[1].save_overload(sig, cres)
                diskcache.record_mac(got[0])
        except Exception:  # noqa: BLE001 - the helper runs; it is just not saved
            log.debug("helper %s: not saved to the disk cache", self._base, exc_info=True)

    @property
    def cache_path(self):  # what ``Dispatcher.stats`` reports
        from .. import diskcache
        return diskcache.numba_dir(create=False)

    def flush(self):
        self._pinned.clear()
