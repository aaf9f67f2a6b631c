"""The persistent kernel cache: where it is, how big it is, and how to empty it.

Compiled CPU kernels are kept under ``ABSJIT_CACHE_DIR`` (default ``~/.cache/absjit``)
so that a new process loads them instead of compiling; ``ABSJIT_DISABLE_DISK_CACHE=1``
turns this off.

Examples
--------
>>> import absjit.cache
>>> sorted(absjit.cache.info())  # doctest: +SKIP
['bytes', 'compile_seconds', 'compiles', 'directory', 'disk_hits', 'enabled', ...]
"""
from __future__ import annotations

__all__ = ["clear", "info"]


def clear() -> None:
    """Delete every kernel stored on disk, and forget those loaded in this process.

    Examples
    --------
    >>> import absjit.cache
    >>> absjit.cache.clear()  # doctest: +SKIP
    """
    from .backends import diskcache
    from .backends.base import registered_backends
    diskcache.clear()
    for b in registered_backends():
        b.clear_memory()
    try:
        from .jit import compile_cache
        compile_cache.clear()
    except ImportError:  # pragma: no cover - jit not importable
        pass


def info() -> dict:
    """Where kernels are stored, how many and how many bytes, and this process's counts.

    Returns
    -------
    dict
        ``directory``, ``enabled``, ``kernels`` (generated modules on disk), ``helpers``
        (the LAPACK, FFT, sort and math functions kernels call, each an entry compiled
        once per machine), ``files``, ``bytes``,
        and the process counters ``compiles``, ``disk_hits``, ``memory_hits``,
        ``compile_seconds``, ``fallbacks``.

    Examples
    --------
    >>> import absjit.cache
    >>> absjit.cache.info()["kernels"] >= 0  # doctest: +SKIP
    True
    """
    from .backends import diskcache
    from .backends.base import get_backend
    out = diskcache.info()
    out["enabled"] = diskcache.enabled()
    out.update(get_backend("cpu").stats)
    return out
