"""The backend protocol, the registry and backend selection.

A backend turns a ``ClosedJaxpr`` into an :class:`Executable`. Backends import the IR
and their own lowering tables; the frontend never imports a backend module directly
(it goes through this registry).

Calling convention
------------------
``executable(*buffers) -> list of buffers``: inputs are the jaxpr's constants followed
by its arguments, as the backend's native buffers (``np.ndarray`` on the CPU); outputs
likewise. ``jit`` wraps outputs into :class:`absjit.Array` with the output avals. The
constants are passed at call time, so one compiled executable serves every closure with
the same jaxpr text.

Selection (DESIGN §7): ``jit(..., backend=...)``, then ``config.default_backend``, then
``"cpu"`` when available, else ``"interpret"``. ``"tpu"`` is routed to ``"xla"``.
"""
from __future__ import annotations

import dataclasses
import threading
import warnings

from numpy import bool_ as np_bool

__all__ = ["Backend", "Executable", "CompileOptions", "FallbackExecutable", "register_backend",
           "get_backend", "available_backends", "registered_backends", "select_backend"]


# LLVM fast-math flags that ``fastmath=True`` turns on. ``nnan`` and ``ninf`` are left
# out on purpose: with them LLVM may assume no value is NaN or infinite, which folds
# ``isnan``/``isinf`` to False and makes ``nansum`` and friends return NaN.
FASTMATH_FLAGS = ("afn", "arcp", "contract", "nsz", "reassoc")

_OPTION_TYPES = {"fastmath": "bool", "parallel": "bool or None"}


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """Options that change generated code; all of them are part of cache keys.

    Attributes
    ----------
    fastmath : bool
        Let the compiler trade exactness for speed, with these LLVM fast-math flags
        (:data:`FASTMATH_FLAGS`): ``reassoc`` (sums and products may be reassociated,
        so float reductions can differ in the last bits and compensated summation may
        lose its compensation), ``contract`` (``a * b + c`` may become one fused
        multiply-add), ``arcp`` (``x / y`` may become ``x * (1 / y)``), ``afn``
        (``exp``, ``log``, ``sin``... may use approximations) and ``nsz`` (the sign of
        a zero result may be lost). NaN and infinity keep their meaning: ``isnan``,
        ``isinf``, ``isfinite``, ``nan*`` reductions and NaN propagation stay correct
        (the ``nnan``/``ninf`` flags are never set). Backends that do not compile
        (``interpret``) ignore it.
    parallel : bool or None
        Run loops on several threads; ``None`` lets the backend decide by size.
    extra : tuple
        Backend-specific ``(name, value)`` pairs, sorted.

    Examples
    --------
    >>> CompileOptions.from_dict({"fastmath": True})
    CompileOptions(fastmath=True, parallel=None, extra=())
    """

    fastmath: bool = False
    parallel: bool | None = None  # None: the backend decides by size
    extra: tuple = ()  # backend-specific (name, value) pairs, sorted

    @classmethod
    def from_dict(cls, options: dict | None) -> "CompileOptions":
        """Options from ``jit(..., compiler_options=...)``.

        Raises ``ValueError`` for an unknown key or a value of the wrong type (a typo
        must not be ignored silently). Backend-specific keys go in ``"extra"`` as a
        dict.
        """
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"compiler_options must be a dict, got {type(options).__name__}")
        options = dict(options or {})
        accepted = ", ".join(f"{k!r} ({t})" for k, t in {**_OPTION_TYPES, "extra": "dict"}.items())
        unknown = sorted(set(options) - set(_OPTION_TYPES) - {"extra"}, key=repr)
        if unknown:
            raise ValueError(f"unknown compiler option(s) {', '.join(map(repr, unknown))}; "
                             f"accepted: {accepted}")
        fastmath = options.pop("fastmath", False)
        parallel = options.pop("parallel", None)
        extra = options.pop("extra", {})
        if not isinstance(fastmath, (bool, np_bool)):
            raise ValueError(f"compiler option 'fastmath' must be a bool, got {fastmath!r}; "
                             f"accepted: {accepted}")
        if parallel is not None and not isinstance(parallel, (bool, np_bool)):
            raise ValueError(f"compiler option 'parallel' must be a bool or None, got "
                             f"{parallel!r}; accepted: {accepted}")
        if not isinstance(extra, dict):
            raise ValueError(f"compiler option 'extra' must be a dict, got {extra!r}; "
                             f"accepted: {accepted}")
        return cls(bool(fastmath), None if parallel is None else bool(parallel),
                   tuple(sorted(extra.items(), key=lambda kv: repr(kv[0]))))

    @property
    def numba_fastmath(self):
        """The ``fastmath=`` argument for ``numba.njit``: ``False``, or a dict of the
        flags in :data:`FASTMATH_FLAGS` (a dict, not a set, so its repr is stable)."""
        return {flag: True for flag in FASTMATH_FLAGS} if self.fastmath else False


class Executable:
    """A compiled jaxpr. Subclasses implement ``__call__`` and ``as_text``.

    ``fast_call``, when not None, is what ``jit``'s cache-hit path calls instead of
    ``__call__``: the same calling convention (flat buffers in, a sequence of buffers
    out) without a Python-level wrapper, e.g. the raw Numba dispatcher. It may raise
    ``TypeError`` for inputs it does not take directly (a strided view); ``jit`` then
    calls ``__call__``, which must normalise them.
    """

    fast_call = None

    def __call__(self, *buffers) -> list:
        raise NotImplementedError

    def as_text(self) -> str:
        """What the backend generated (kernel source, or the jaxpr it interprets)."""
        raise NotImplementedError


class FallbackExecutable(Executable):
    """Runs a program another backend could not lower, on the ``interpret`` backend."""

    def __init__(self, inner, closed, reason):
        self._inner = inner
        self._closed = closed
        self.reason = reason

    def __call__(self, *buffers):
        return self._inner(*buffers)

    def as_text(self) -> str:
        return f"# runs on the interpret backend: no lowering for {self.reason}\n" + \
            str(self._closed)


class Backend:
    """Base class of backends.

    Attributes
    ----------
    name : str
        Registry name (``"interpret"``, ``"cpu"``, ``"cuda"``, ``"xla"``).
    platforms : tuple of str
        Platforms it serves (``("cpu",)``).
    """

    name = "backend"
    platforms: tuple = ()

    def __init__(self):
        # Counters for absjit.cache.info() and the benchmarks' track_ functions.
        self.stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0,
                      "compile_seconds": 0.0, "fallbacks": 0}
        self._warned: set = set()
        self._lock = threading.RLock()

    def is_available(self) -> bool:
        return True

    def clear_memory(self) -> None:
        """Forget compiled code held in this process (the disk cache is separate)."""

    # -- fallback policy ---------------------------------------------------------------
    def warn_once(self, names, consequence, stacklevel=3) -> None:
        """One ``RuntimeWarning`` per name in this process: ``no lowering for NAME``."""
        with self._lock:
            new = [n for n in names if n not in self._warned]
            self._warned.update(new)
        for n in new:
            warnings.warn(f"absjit {self.name} backend: no lowering for {n}; {consequence}",
                          RuntimeWarning, stacklevel=stacklevel)

    def fallback(self, closed_jaxpr, options, names, stacklevel=4) -> "Executable":
        """An executable for a program this backend cannot lower: the ``interpret``
        backend runs it, with one ``RuntimeWarning`` per primitive (or dtype) named in
        ``names``, once per process."""
        with self._lock:
            self.stats["fallbacks"] += 1
        self.warn_once(names, "functions using it run on the interpret backend (NumPy)",
                       stacklevel + 1)
        inner = get_backend("interpret").compile(closed_jaxpr, options)
        return FallbackExecutable(inner, closed_jaxpr, ", ".join(names))

    def compile(self, closed_jaxpr, options: CompileOptions) -> Executable:
        raise NotImplementedError

    def version_key(self) -> tuple:
        """Versions of everything that changes compiled code (part of cache keys)."""
        return ()

    # -- buffer transfer hooks -------------------------------------------------------
    def to_buffer(self, value):
        """A NumPy array (or Array's NumPy value) as this backend's input buffer."""
        return value

    def to_host(self, buffer):
        """A NumPy array for an output buffer."""
        return buffer

    def __repr__(self):
        return f"<backend {self.name!r}>"


_REGISTRY: dict = {}
_ALIASES = {"tpu": "xla", "gpu": "cuda"}


def register_backend(backend: Backend) -> Backend:
    _REGISTRY[backend.name] = backend
    return backend


def get_backend(name: str) -> Backend:
    name = _ALIASES.get(name, name)
    try:
        backend = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; available: "
                         f"{', '.join(available_backends())}") from None
    if not backend.is_available():
        from ..errors import BackendUnavailableError
        reason = getattr(backend, "unavailable_reason", lambda: None)()
        raise BackendUnavailableError(
            f"backend {name!r} is not available on this machine; available backends: "
            f"{', '.join(available_backends())}" + (f". Reason: {reason}" if reason else ""))
    return backend


def registered_backends() -> list:
    return list(_REGISTRY.values())


def available_backends() -> list:
    return [name for name, b in _REGISTRY.items() if b.is_available()]


def select_backend(requested: str | None = None) -> Backend:
    from ..config import config
    if requested is not None:
        return get_backend(requested)
    if config.default_backend:
        return get_backend(config.default_backend)
    for name in ("cpu", "interpret"):
        b = _REGISTRY.get(name)
        if b is not None and b.is_available():
            return b
    raise RuntimeError("no backend is available")
