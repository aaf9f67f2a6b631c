"""Runtime configuration.

``absjit.config.update("enable_x64", True)`` flips a flag (JAX's spelling
``"jax_enable_x64"`` works too); every flag can also be set through an
``ABSJIT_<NAME>`` environment variable read at import time. Values are checked:
booleans must be ``True``/``False``, and an unknown name or a value of the wrong type
is a :class:`ConfigError` (a ``ValueError``).

Flags that change what a traced function computes (``enable_x64``) are part of
every cache key: see :func:`Config.trace_context`.
"""
from __future__ import annotations

import os
import threading

import numpy as np

__all__ = ["Config", "ConfigError", "config", "update", "read"]


class ConfigError(ValueError, AttributeError):
    """An unknown config option or a value of the wrong type. A ``ValueError``; also an
    ``AttributeError``, which is what an unknown name raised before (and in JAX)."""


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


# JAX option names whose absjit flag is not simply the name without "jax_".
_JAX_NAMES = {"jax_platform_name": "default_backend"}


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
        # ``jit`` runs functions as plain Python (``absjit.disable_jit()`` per context).
        self.disable_jit: bool = _env_bool("ABSJIT_DISABLE_JIT", False)
        self.default_backend: str | None = os.environ.get("ABSJIT_DEFAULT_BACKEND") or None
        self.recompile_warning_threshold: int = _env_int("ABSJIT_RECOMPILE_WARNING_THRESHOLD", 32)
        # "auto": tracebacks of errors raised through absjit's API leave out absjit's own
        # frames; "off": every frame is shown.
        self.traceback_filtering: str = os.environ.get("ABSJIT_TRACEBACK_FILTERING", "auto")
        # A cache miss returns its first results from the NumPy interpreter while the
        # program compiles in the background (absjit.jit.tiering); off: every miss waits
        # for its compile (bit-reproducible runs, benchmarks).
        self.tiering: bool = _env_bool("ABSJIT_TIERING", True)
        # Background compiles run in a worker process (the caller's tier-0 calls keep
        # the GIL); off: in a thread of this process.
        self.compile_process: bool = _env_bool("ABSJIT_COMPILE_PROCESS", True)
        # Tier 0 hands runs of elementwise equations to a compiled block evaluator
        # (compiled once per machine); off: tier 0 is the NumPy interpreter alone.
        self.tier0_evaluator: bool = _env_bool("ABSJIT_TIER0_EVALUATOR", True)
        self._listeners: list = []

    @property
    def _flags(self) -> tuple:
        return ("enable_x64", "explain_cache_misses", "disable_jit", "default_backend",
                "recompile_warning_threshold", "traceback_filtering", "tiering",
                "compile_process", "tier0_evaluator")

    # What each flag accepts: a description and a check. Booleans must be real
    # bools: ``update("enable_x64", "no")`` must not turn x64 on.
    _accepts = {
        "enable_x64": ("a bool", lambda v: isinstance(v, (bool, np.bool_))),
        "explain_cache_misses": ("a bool", lambda v: isinstance(v, (bool, np.bool_))),
        "disable_jit": ("a bool", lambda v: isinstance(v, (bool, np.bool_))),
        "default_backend": ("a backend name (str) or None",
                            lambda v: v is None or isinstance(v, str)),
        "recompile_warning_threshold": (
            "a non-negative int",
            lambda v: isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0),
        "traceback_filtering": ("'auto' or 'off'", lambda v: v in ("auto", "off")),
        "tiering": ("a bool", lambda v: isinstance(v, (bool, np.bool_))),
        "compile_process": ("a bool", lambda v: isinstance(v, (bool, np.bool_))),
        "tier0_evaluator": ("a bool", lambda v: isinstance(v, (bool, np.bool_))),
    }

    def _canonical_name(self, name) -> str:
        """``name`` or its JAX spelling (``"jax_enable_x64"``); ``ConfigError`` for an
        unknown name, listing the accepted ones."""
        if isinstance(name, str) and name not in self._flags:
            if name in _JAX_NAMES:
                name = _JAX_NAMES[name]
            elif name.startswith("jax_") and name[4:] in self._flags:
                name = name[4:]
        if name not in self._flags:
            raise ConfigError(
                f"Unrecognized config option: {name!r}. Known options: "
                f"{', '.join(self._flags)} (or their JAX spellings jax_<name>)")
        return name

    def config_with_absl(self) -> None:
        """Accepted for JAX compatibility: absjit reads no absl flags (a no-op)."""

    def parse_flags_with_absl(self) -> None:
        """Accepted for JAX compatibility: absjit reads no absl flags (a no-op)."""

    def update(self, name: str, value) -> None:
        """Set flag ``name`` to ``value``.

        ``name`` may use JAX's spelling (``"jax_enable_x64"``). An unknown name, or a
        value of the wrong type (booleans must be ``True``/``False``), raises
        :class:`ConfigError` (a ``ValueError``) naming what is accepted.
        """
        name = self._canonical_name(name)
        what, ok = self._accepts[name]
        if not ok(value):
            raise ConfigError(f"config option {name!r} must be {what}, got {value!r} "
                              f"of type {type(value).__name__}")
        if name == "default_backend" and value is not None:
            _check_backend(value)
        if isinstance(value, np.bool_):
            value = bool(value)
        elif isinstance(value, np.integer):
            value = int(value)
        with self._lock:
            setattr(self, name, value)
            for listener in self._listeners:
                listener(name, value)

    def read(self, name: str):
        return getattr(self, self._canonical_name(name))

    def trace_context(self) -> tuple:
        """The flag values that change what tracing produces (part of cache keys)."""
        return (self.enable_x64,)

    def on_update(self, listener) -> None:
        """Call ``listener(name, value)`` after every update (used to drop caches)."""
        self._listeners.append(listener)


#: ``check(name)`` raising :class:`ConfigError` for a default backend this machine does
#: not have: :mod:`absjit.backends.base` sets it when imported (the registry knows what
#: is available; configuration does not import it).
backend_check = None


def _check_backend(name: str) -> None:
    if backend_check is not None:
        backend_check(name)


config = Config()
update = config.update
read = config.read
