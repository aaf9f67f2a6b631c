"""Version workarounds for Numba and llvmlite, in one place.

Everything here is imported lazily by the backends: ``import absjit`` never imports
Numba.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.machinery
import importlib.util
import os
import sys

__all__ = ["numba_versions", "preload_scipy_blas", "host_cpu_name", "dispatcher_cache_counts", "num_threads",
           "pin_disk_cache", "pinned_cache", "pinned_locator", "kernel_opt_level", "numba_opt_level"]


@functools.lru_cache(maxsize=None)
def numba_versions() -> tuple:
    """``(numba version, llvmlite version, LLVM version)`` as strings."""
    preload_scipy_blas()
    import llvmlite
    import numba
    try:
        from llvmlite import binding
        llvm = ".".join(str(p) for p in binding.llvm_version_info)
    except Exception:  # noqa: BLE001 - very old/new llvmlite without the attribute
        llvm = "unknown"
    return (numba.__version__, llvmlite.__version__, llvm)


# -- LLVM optimisation level of absjit's kernels -------------------------------------
# Numba optimises at -O3 by default. absjit's kernels are loop nests with constant trip
# counts, and -O3's more aggressive unrolling multiplies their code: an RNN's two
# scan kernels took 4.4-4.8 s each in LLVM at -O3 and 1.2-1.4 s at -O2, and the
# kernels of the asv workloads ran as fast at -O2 (``scripts/compare.py``, both
# levels in one run; see the commit that set it). ``NUMBA_OPT`` set by the user
# wins.
KERNEL_OPT_LEVEL = 2


def kernel_opt_level():
    """The LLVM level absjit compiles its kernels at (part of their cache keys)."""
    if "NUMBA_OPT" in os.environ:
        from numba.core import config
        return str(config.OPT)
    return KERNEL_OPT_LEVEL


@contextlib.contextmanager
def numba_opt_level():
    """Numba compiles at :func:`kernel_opt_level` inside the block. Numba reads the
    level (``numba.core.config.OPT``) each time it builds an LLVM pass pipeline; the
    block holds Numba's compiler lock, so no other thread's compile sees it. Relies on
    ``numba.core.config.OPT`` and ``compiler_lock.global_compiler_lock`` (stable from
    Numba 0.50 to 0.68)."""
    if "NUMBA_OPT" in os.environ:
        yield
        return
    from numba.core import config
    from numba.core.compiler_lock import global_compiler_lock
    with global_compiler_lock:
        before = config.OPT
        try:
            config.OPT = type(before)(KERNEL_OPT_LEVEL)
        except Exception:  # noqa: BLE001 - a newer Numba's level type
            config.OPT = KERNEL_OPT_LEVEL
        try:
            yield
        finally:
            config.OPT = before


# -- SciPy's BLAS/LAPACK capsules --------------------------------------------------------
# When Numba's CPU target starts it checks for BLAS with ``import
# scipy.linalg.cython_blas``; the parent package runs first, and ``scipy.linalg``
# imports most of SciPy (its array-API layer even imports ``numpy.f2py``): 0.13 s of a
# 0.5 s warm start. Numba only reads the two Cython modules' function capsules, so they
# are loaded on their own, and attached to ``scipy.linalg`` if that is imported later.
_CAPSULE_MODULES = ("cython_blas", "cython_lapack")


def preload_scipy_blas() -> None:
    """Load ``scipy.linalg.cython_blas``/``cython_lapack`` without ``scipy.linalg``.

    Does nothing when ``scipy.linalg`` (or either module) is already imported, or when
    SciPy is not installed or laid out differently (Numba then imports as usual).
    """
    names = [f"scipy.linalg.{n}" for n in _CAPSULE_MODULES]
    if "scipy.linalg" in sys.modules or any(n in sys.modules for n in names):
        return
    try:
        scipy_spec = importlib.util.find_spec("scipy")  # finds; does not import
    except (ImportError, ValueError):
        return
    if scipy_spec is None or not scipy_spec.submodule_search_locations:
        return
    linalg_dir = os.path.join(list(scipy_spec.submodule_search_locations)[0], "linalg")
    specs = []
    for name in names:
        spec = importlib.machinery.PathFinder.find_spec(name, [linalg_dir])
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return
        specs.append(spec)
    loaded = []
    try:
        for spec in specs:
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            loaded.append(spec.name)
            spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001 - any failure: leave the import to Numba
        for name in loaded:
            sys.modules.pop(name, None)
        return
    sys.meta_path.insert(0, _AttachCapsules())


class _AttachCapsules:
    """A one-shot import hook: when ``scipy.linalg`` is imported, its loader also sets the
    preloaded capsule modules as its attributes (``scipy.linalg.cython_blas`` works as if
    the package had imported them itself)."""

    def find_spec(self, name, path=None, target=None):
        if name != "scipy.linalg":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if not isinstance(loader, importlib.machinery.SourceFileLoader):
            return spec

        class _ThenAttach(type(loader)):
            def exec_module(self, module):
                super().exec_module(module)
                for n in _CAPSULE_MODULES:
                    sub = sys.modules.get(f"scipy.linalg.{n}")
                    if sub is not None:
                        setattr(module, n, sub)

        spec.loader = _ThenAttach(loader.name, loader.path)
        return spec

    def invalidate_caches(self):
        pass


@functools.lru_cache(maxsize=None)
def host_cpu_name() -> str:
    """The CPU model LLVM generates code for (compiled kernels are specific to it)."""
    from llvmlite import binding
    try:
        name = binding.get_host_cpu_name()
    except Exception:  # noqa: BLE001
        name = "generic"
    try:
        features = binding.get_host_cpu_features().flatten()
    except Exception:  # noqa: BLE001 - not every platform reports features
        features = ""
    return f"{name}:{features}"


def dispatcher_cache_counts(dispatcher) -> tuple:
    """``(hits, misses)`` of Numba's on-disk cache for one dispatcher."""
    stats = getattr(dispatcher, "stats", None)
    if stats is None:
        return (0, 0)
    return (sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))


def num_threads() -> int:
    """Threads ``prange`` loops use (``NUMBA_NUM_THREADS`` is honoured by Numba)."""
    import numba
    return int(numba.config.NUMBA_NUM_THREADS)


def pinned_locator(caching, directory: str):
    """A Numba cache-locator class (from ``caching``: Numba's or numba-cuda's module of
    the same shape) that always answers ``directory``."""
    class _Pinned(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno

        def get_cache_path(self):
            return directory

        @classmethod
        def from_function(cls, py_func, py_file):
            self = cls(py_func, py_file)
            self.ensure_cache_path()
            return self

    return _Pinned


def pin_disk_cache(dispatcher, directory: str) -> None:
    """Make ``dispatcher`` keep its Numba cache files in ``directory`` only
    (:func:`pinned_cache`)."""
    dispatcher._cache = pinned_cache(dispatcher.py_func, directory)


def pinned_cache(py_func, directory: str, filename_base: str | None = None):
    """Numba's disk cache for ``py_func``, its files in ``directory`` only.

    Numba picks a cache directory with a list of locators (next to the source, then
    ``~/.cache/numba``…); absjit authenticates its cache entries itself, so Numba must
    never read or write anywhere else. Relies on ``numba.core.caching`` internals
    (``FunctionCache``, ``CompileResultCacheImpl._locator_classes``, stable from Numba
    0.50 to 0.68). ``filename_base`` names its files (``<base>.nbi``, ``<base>.<n>.nbc``).
    """
    from numba.core import caching

    _Pinned = pinned_locator(caching, directory)
    base = filename_base

    class _Impl(caching.CompileResultCacheImpl):
        _locator_classes = [_Pinned]

        if base is not None:  # the files' names, instead of module.qualname
            @property
            def filename_base(self):
                return base

    class _Cache(caching.FunctionCache):
        _impl_class = _Impl

        def load_overload(self, sig, target_context):
            # Numba refreshes the target context first, which imports and installs
            # every lowering registry (0.2 s in a new process). Running a cached
            # result needs only the codegen (made with the context) and the memory
            # runtime, which the refresh would also have started.
            from numba.core.runtime import rtsys
            rtsys.initialize(target_context)
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)

    return _Cache(py_func)


def save_rebuilt(dispatcher, sig, cres, payload) -> None:
    """Save a compile result rebuilt from ``payload`` (what ``CompileResult._reduce()``
    returned where it was compiled) into ``dispatcher``'s disk cache, as Numba saves one
    it compiled; a rebuilt library cannot serialise itself again, so the payload is
    written as it came. Relies on ``numba.core.caching.Cache`` internals (``_impl``,
    ``_index_key``, ``_cache_file``; stable from Numba 0.50 to 0.68)."""
    cache = dispatcher._cache
    if not cache._impl.check_cachable(cres):
        return
    cache._impl.locator.ensure_cache_path()
    cache._cache_file.save(cache._index_key(sig, cres.codegen), payload)
