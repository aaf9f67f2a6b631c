"""The process-wide compile cache, content-addressed by the jaxpr.

Two jitted wrappers whose traces produce the same program (a lambda or ``partial``
re-created in a loop) trace again but compile once. The key is a SHA-256 over:

* the jaxpr's canonical text (:func:`canonical_text`: what ``str(jaxpr)`` shows —
  variables renamed in binding order, literal values printed exactly — plus what it
  does not: every literal's dtype, and the bytes of constants held inside nested
  jaxprs; top-level constants are call-time operands, so only their types matter);
* the backend's name, ``version_key()`` and ``settings_key()``, the ``CompileOptions``
  and absjit's version.

A param that the text cannot describe faithfully (a Python callable, an arbitrary
object whose ``str`` may not determine it) makes the jaxpr uncacheable: it is compiled
every time it is asked for, which is correct, merely slower.
"""
from __future__ import annotations

import enum
import hashlib
import threading

import numpy as np

from .._version import __version__
from ..core.jaxpr import ClosedJaxpr, Jaxpr, Literal

__all__ = ["compile", "lookup", "cache_key", "canonical_text", "stats", "clear", "CompileStats"]

_LOCK = threading.Lock()
_CACHE: dict = {}  # key -> executable
_IN_FLIGHT: dict = {}  # key -> threading.Event
_STATS = {"compiles": 0, "hits": 0, "uncacheable": 0}

_PLAIN = (bool, int, float, complex, str, bytes, type(None), np.dtype, np.generic,
          enum.Enum, slice)


class _Uncacheable(Exception):
    pass


class _Canon:
    """Writes a jaxpr as canonical text: variables numbered in binding order, every
    binder with its type, literals with value and dtype, params with their ``repr`` —
    faster than the pretty printer (no layout) and more exact (literal dtypes)."""

    def __init__(self):
        self.parts: list = []
        self.names: dict = {}

    def bind(self, v) -> str:
        n = self.names[v] = len(self.names)
        return f"v{n}:{v.aval.str_short()}"

    def atom(self, x) -> str:
        if type(x) is Literal:
            return f"{x.val.item()!r}:{x.aval.dtype.str}"
        return f"v{self.names[x]}"

    def jaxpr(self, jaxpr: Jaxpr) -> None:
        w = self.parts.append
        w("{" + " ".join(self.bind(v) for v in jaxpr.constvars) + ";"
          + " ".join(self.bind(v) for v in jaxpr.invars) + ".")
        for eqn in jaxpr.eqns:
            w(eqn.primitive.name)
            if eqn.params:
                w("[")
                for k in sorted(eqn.params):
                    w(k + "=")
                    self.param(eqn.params[k])
                w("]")
            w(" ".join(self.atom(x) for x in eqn.invars) + "->"
              + " ".join(self.bind(v) for v in eqn.outvars) + ";")
        w("(" + " ".join(self.atom(x) for x in jaxpr.outvars) + ")}")

    def param(self, value) -> None:
        w = self.parts.append
        if isinstance(value, _PLAIN):
            w(repr(value))
        elif isinstance(value, (tuple, list)):
            w("(")
            for v in value:
                self.param(v)
                w(",")
            w(")")
        elif isinstance(value, frozenset):
            self.param(sorted(value, key=repr))
        elif isinstance(value, ClosedJaxpr):
            for c in value.consts:
                c = getattr(c, "_value", c)
                if type(c) is not np.ndarray:
                    raise _Uncacheable
                w(f"const:{c.dtype.str}{c.shape}:{c.tobytes().hex()}")
            self.jaxpr(value.jaxpr)
        elif isinstance(value, Jaxpr):
            self.jaxpr(value)
        elif isinstance(value, np.ndarray):
            w(f"array:{value.dtype.str}{value.shape}:{value.tobytes().hex()}")
        elif isinstance(value, type) and issubclass(value, np.generic):
            w(np.dtype(value).str)
        else:
            raise _Uncacheable  # a callable or an object the text cannot pin down


def canonical_text(jaxpr: Jaxpr) -> str | None:
    """The text the compile cache hashes, or None when ``jaxpr`` is uncacheable."""
    canon = _Canon()
    try:
        canon.jaxpr(jaxpr)
    except _Uncacheable:
        return None
    return "".join(canon.parts)


def cache_key(closed_jaxpr, backend, options) -> str | None:
    """The content address of compiling ``closed_jaxpr`` with ``backend`` and
    ``options``, or None when the jaxpr cannot be cached."""
    text = canonical_text(closed_jaxpr.jaxpr)
    if text is None:
        return None
    h = hashlib.sha256(text.encode())
    h.update(repr((backend.name, _version_key(backend), backend.settings_key(), options,
                   __version__)).encode())
    return h.hexdigest()


_VERSION_KEYS: dict = {}


def _version_key(backend) -> tuple:
    """``backend.version_key()``, asked once per backend object: the versions of the
    libraries a backend compiles with do not change within a process."""
    key = _VERSION_KEYS.get(id(backend))
    if key is None or key[0] is not backend:
        key = _VERSION_KEYS[id(backend)] = (backend, backend.version_key())
    return key[1]


def lookup(closed_jaxpr, backend, options):
    """The executable already compiled for this program, or None (no compile, no
    wait). With nothing compiled yet it returns at once, without building the key
    (which asks the backend for its versions: for Numba, its import)."""
    if not _CACHE:
        return None
    key = cache_key(closed_jaxpr, backend, options)
    return None if key is None else _CACHE.get(key)


def _after_fork_in_child() -> None:
    """A lock or an in-flight compile of a thread the child does not have: new lock, and
    whoever waits for such a compile looks again (and compiles it)."""
    global _LOCK
    _LOCK = threading.Lock()
    for event in _IN_FLIGHT.values():
        event.set()
    _IN_FLIGHT.clear()


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
            _IN_FLIGHT.pop(key, None)
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
