"""Version workarounds for Numba and llvmlite, in one place.

Everything here is imported lazily by the backends: ``import absjit`` never imports
Numba.
"""
from __future__ import annotations

import functools

__all__ = ["numba_versions", "host_cpu_name", "dispatcher_cache_counts", "num_threads",
           "pin_disk_cache"]


@functools.lru_cache(maxsize=None)
def numba_versions() -> tuple:
    """``(numba version, llvmlite version, LLVM version)`` as strings."""
    import llvmlite
    import numba
    try:
        from llvmlite import binding
        llvm = ".".join(str(p) for p in binding.llvm_version_info)
    except Exception:  # noqa: BLE001 - very old/new llvmlite without the attribute
        llvm = "unknown"
    return (numba.__version__, llvmlite.__version__, llvm)


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


def pin_disk_cache(dispatcher, directory: str) -> None:
    """Make ``dispatcher`` keep its Numba cache files in ``directory`` only.

    Numba picks a cache directory with a list of locators (next to the source, then
    ``~/.cache/numba``…); absjit authenticates its cache entries itself, so Numba must
    never read or write anywhere else. Relies on ``numba.core.caching`` internals
    (``FunctionCache``, ``CompileResultCacheImpl._locator_classes``, stable from Numba
    0.50 to 0.68).
    """
    from numba.core import caching

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

    class _Impl(caching.CompileResultCacheImpl):
        _locator_classes = [_Pinned]

    class _Cache(caching.FunctionCache):
        _impl_class = _Impl

    dispatcher._cache = _Cache(dispatcher.py_func)
