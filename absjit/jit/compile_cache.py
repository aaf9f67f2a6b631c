"""The process-wide compile cache, content-addressed by the jaxpr.

Two jitted wrappers whose traces produce the same program (a lambda or ``partial``
re-created in a loop) trace again but compile once. The key is a SHA-256 over:

* the canonical jaxpr text (``str(jaxpr)``: variables renamed in order, literal values
  printed exactly — NumPy prints the shortest round-tripping digits), plus every
  literal's dtype, which the text does not show;
* the bytes of constants held inside nested jaxprs (top-level constants are call-time
  operands, so only their types matter, and those are in the text);
* the backend's name and ``version_key()``, the ``CompileOptions`` and absjit's version.

A param that the text cannot describe faithfully (a Python callable, an arbitrary
object whose ``str`` may not determine it) makes the jaxpr uncacheable: it is compiled
every time it is asked for, which is correct, merely slower.
"""
from __future__ import annotations

import enum
import hashlib
import threading

import numpy as np

from ..core.jaxpr import ClosedJaxpr, Jaxpr, Literal

__all__ = ["compile", "cache_key", "stats", "clear", "CompileStats"]

_LOCK = threading.Lock()
_CACHE: dict = {}  # key -> executable
_IN_FLIGHT: dict = {}  # key -> threading.Event
_STATS = {"compiles": 0, "hits": 0, "uncacheable": 0}

_PLAIN = (bool, int, float, complex, str, bytes, type(None), np.dtype, np.generic,
          enum.Enum, slice)


class _Uncacheable(Exception):
    pass


def _feed_param(h, value) -> None:
    """Add what the printed text does not show about ``value`` to ``h``; raise
    ``_Uncacheable`` when ``value`` is not something the text describes."""
    if isinstance(value, _PLAIN):
        if isinstance(value, np.generic):
            h.update(value.dtype.str.encode())
        return
    if isinstance(value, (tuple, list, frozenset)):
        for v in (sorted(value, key=repr) if isinstance(value, frozenset) else value):
            _feed_param(h, v)
        return
    if isinstance(value, ClosedJaxpr):
        for c in value.consts:
            if type(c) is not np.ndarray:
                c = getattr(c, "_value", c)
            if type(c) is not np.ndarray:
                raise _Uncacheable
            h.update(c.dtype.str.encode() + repr(c.shape).encode() + c.tobytes())
        _feed_jaxpr(h, value.jaxpr)
        return
    if isinstance(value, Jaxpr):
        _feed_jaxpr(h, value)
        return
    if isinstance(value, np.ndarray):
        h.update(value.dtype.str.encode() + repr(value.shape).encode() + value.tobytes())
        return
    raise _Uncacheable


def _feed_jaxpr(h, jaxpr: Jaxpr) -> None:
    for eqn in jaxpr.eqns:
        for x in eqn.invars:
            if type(x) is Literal:
                h.update(x.aval.dtype.str.encode())
        for k in sorted(eqn.params):
            _feed_param(h, eqn.params[k])
    for x in jaxpr.outvars:
        if type(x) is Literal:
            h.update(x.aval.dtype.str.encode())


def cache_key(closed_jaxpr, backend, options) -> str | None:
    """The content address of compiling ``closed_jaxpr`` with ``backend`` and
    ``options``, or None when the jaxpr cannot be cached."""
    from .. import __version__
    h = hashlib.sha256()
    h.update(str(closed_jaxpr.jaxpr).encode())
    try:
        _feed_jaxpr(h, closed_jaxpr.jaxpr)
    except _Uncacheable:
        return None
    h.update(repr((backend.name, backend.version_key(), options, __version__)).encode())
    return h.hexdigest()


def compile(closed_jaxpr, backend, options):  # noqa: A001 - the natural name
    """``backend.compile(closed_jaxpr, options)``, through the cache.

    Concurrent requests for the same key compile once; the others wait for it. A failed
    compile caches nothing.
    """
    key = cache_key(closed_jaxpr, backend, options)
    if key is None:
        with _LOCK:
            _STATS["uncacheable"] += 1
            _STATS["compiles"] += 1
        return backend.compile(closed_jaxpr, options)
    while True:
        with _LOCK:
            exe = _CACHE.get(key)
            if exe is not None:
                _STATS["hits"] += 1
                return exe
            event = _IN_FLIGHT.get(key)
            if event is None:
                event = _IN_FLIGHT[key] = threading.Event()
                break
        event.wait()  # another thread is compiling this key; then look again
    try:
        exe = backend.compile(closed_jaxpr, options)
        with _LOCK:
            _CACHE[key] = exe
            _STATS["compiles"] += 1
        return exe
    finally:
        with _LOCK:
            del _IN_FLIGHT[key]
        event.set()


class CompileStats(dict):
    """``{"compiles": n, "hits": n, "uncacheable": n, "entries": n}``."""


def stats() -> CompileStats:
    """Counters since the last :func:`clear`: backend compiles done, compile-cache hits,
    uncacheable jaxprs seen, and executables held.

    Examples
    --------
    >>> from absjit.jit import compile_cache
    >>> sorted(compile_cache.stats())
    ['compiles', 'entries', 'hits', 'uncacheable']
    """
    with _LOCK:
        out = CompileStats(_STATS)
        out["entries"] = len(_CACHE)
    return out


def clear() -> None:
    """Drop every cached executable and reset the counters."""
    with _LOCK:
        _CACHE.clear()
        for k in _STATS:
            _STATS[k] = 0
