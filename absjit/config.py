"""Runtime configuration.

``absjit.config.update("enable_x64", True)`` flips a flag; every flag can also be
set through an ``ABSJIT_<NAME>`` environment variable read at import time.

Flags that change what a traced function computes (``enable_x64``) are part of
every cache key: see :func:`Config.trace_context`.
"""
from __future__ import annotations

import os
import threading

__all__ = ["Config", "config", "update", "read"]


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    try:
        return int(raw) if raw is not None else default
    except ValueError:
        return default


class Config:
    """The process-wide flags.

    Examples
    --------
    >>> import absjit
    >>> absjit.config.update("enable_x64", True)
    >>> absjit.config.enable_x64
    True
    >>> absjit.config.update("enable_x64", False)
    """

    # Flags whose value changes the result of tracing; they go into cache keys.
    _trace_flags = ("enable_x64",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.enable_x64: bool = _env_bool("ABSJIT_ENABLE_X64", False)
        self.explain_cache_misses: bool = _env_bool("ABSJIT_EXPLAIN_CACHE_MISSES", False)
        self.default_backend: str | None = os.environ.get("ABSJIT_DEFAULT_BACKEND") or None
        self.recompile_warning_threshold: int = _env_int("ABSJIT_RECOMPILE_WARNING_THRESHOLD", 32)
        self._listeners: list = []

    @property
    def _flags(self) -> tuple:
        return ("enable_x64", "explain_cache_misses", "default_backend",
                "recompile_warning_threshold")

    def update(self, name: str, value) -> None:
        """Set flag ``name`` to ``value``; an unknown name is an ``AttributeError``."""
        if name not in self._flags:
            raise AttributeError(
                f"Unrecognized config option: {name!r}. Known options: {', '.join(self._flags)}")
        with self._lock:
            setattr(self, name, value)
            for listener in self._listeners:
                listener(name, value)

    def read(self, name: str):
        if name not in self._flags:
            raise AttributeError(f"Unrecognized config option: {name!r}")
        return getattr(self, name)

    def trace_context(self) -> tuple:
        """The flag values that change what tracing produces (part of cache keys)."""
        return (self.enable_x64,)

    def on_update(self, listener) -> None:
        """Call ``listener(name, value)`` after every update (used to drop caches)."""
        self._listeners.append(listener)


config = Config()
update = config.update
read = config.read
