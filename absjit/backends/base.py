"""The backend protocol, the registry and backend selection.

A backend turns a ``ClosedJaxpr`` into an :class:`Executable`. Backends import the IR
and their own lowering tables; the frontend never imports a backend module directly
(it goes through this registry).

Calling convention
------------------
``executable(*buffers) -> list of buffers``: inputs are the jaxpr's constants followed
by its arguments; outputs are buffers. An executable whose ``array_type`` is None takes
and returns host NumPy arrays (``jit`` converts the arguments and wraps the outputs as
:class:`absjit.Array`); one whose ``array_type`` is a :class:`absjit.array.DeviceArray`
subclass takes the call's leaves as they are (its own arrays, host values, other
libraries' arrays: it moves what it must) and returns device buffers, which ``jit``
wraps as that type, so results stay on the device. The constants are passed at call
time, so one compiled executable serves every closure with the same jaxpr text.

Devices
-------
A backend says where its arrays live: :attr:`Backend.platform` (declared with the
registration, so it is known without importing the backend), :meth:`Backend.devices`,
:meth:`Backend.put` (``device_put``) and :meth:`Backend.adopt` (another library's
array on its device, wrapped without a copy). Nothing outside ``absjit.backends``
names a device backend: adding one is a folder plus a :func:`register_backend_module`
line.

Selection and routing (docs/backends.md, "Devices and placement") is one pure function,
:func:`route_backend`, of the requested name (``jit(..., backend=...)``, then
``config.default_backend``), the backends and platforms this machine has, and what the
requested backend could not lower:

* ``"tpu"`` means ``"xla"`` (``"gpu"`` means ``"cuda"``); with nothing requested, a
  machine whose default jax platform is a TPU gets ``"xla"``, any other ``"cpu"`` when
  available, else ``"interpret"``;
* a name this machine does not have is a ``ValueError`` listing the available ones,
  except ``"xla"`` without jax: an ``ImportError`` subclass saying
  ``pip install absjit[xla]``;
* a program holding a primitive or dtype a Numba backend (``cpu``, ``cuda``) cannot lower
  even equation by equation runs on ``"xla"`` when jax is installed, else on
  ``"interpret"`` — one ``RuntimeWarning`` per primitive naming it and where it ran
  (:meth:`Backend.fallback`). float16 and bfloat16 are not among them on ``cpu``: it
  stores them as ``uint16`` and computes in float32.
"""
from __future__ import annotations

import dataclasses
import importlib
import threading
import warnings

import numpy as np
from numpy import bool_ as np_bool

from .._device import cpu_device

__all__ = ["Backend", "Executable", "CompileOptions", "FallbackExecutable", "register_backend",
           "register_backend_module", "get_backend", "available_backends", "registered_backends",
           "select_backend", "route_backend", "NUMBA_BACKENDS"]


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
    #: None: host NumPy buffers in and out. Otherwise the ``DeviceArray`` subclass its
    #: outputs are wrapped as; it then takes the call's leaves as they are.
    array_type = None

    def __call__(self, *buffers) -> list:
        raise NotImplementedError

    def as_text(self) -> str:
        """What the backend generated (kernel source, or the jaxpr it interprets)."""
        raise NotImplementedError


class FallbackExecutable(Executable):
    """Runs a program another backend could not lower, on the backend ``target``
    (``"xla"`` or ``"interpret"``)."""

    def __init__(self, inner, closed, reason, target="interpret"):
        self._inner = inner
        self._closed = closed
        self.reason = reason
        self.target = target
        self.fast_call = getattr(inner, "fast_call", None)
        self.array_type = getattr(inner, "array_type", None)

    def __call__(self, *buffers):
        return self._inner(*buffers)

    def as_text(self) -> str:
        text = self._inner.as_text() if self.target != "interpret" else str(self._closed)
        return f"# runs on the {self.target} backend: no lowering for {self.reason}\n" + text


class PerShapeExecutable(Executable):
    """A ``ranked`` program (symbolic sizes) on a backend that needs static shapes
    (xla, cuda): each call binds the sizes from its arguments (checking every equality
    the trace assumed, ``ValueError`` otherwise) and runs an executable compiled by
    ``backend.compile`` for those sizes, cached per shape. ``attrs`` are the backend's
    executable attributes the caller reads (``array_type``)."""

    MAX_SHAPES = 64  # compiled shapes kept (the oldest goes first)

    def __init__(self, backend, closed_jaxpr, options, **attrs):
        self._backend = backend
        self._closed = closed_jaxpr
        self._options = options
        self._by_sizes: dict = {}
        self._lock = threading.Lock()
        self.compile_seconds = 0.0
        self.__dict__.update(attrs)

    def executable_for(self, buffers) -> Executable:
        """The executable compiled for the sizes of ``buffers`` (consts, then args)."""
        from ..core.jaxpr import ClosedJaxpr
        from ..core.specialize import bind_arguments, specialize
        jaxpr = self._closed.jaxpr
        sizes = bind_arguments(jaxpr, buffers)
        key = tuple(sorted(sizes.items()))
        got = self._by_sizes.get(key)
        if got is None:
            concrete = ClosedJaxpr(specialize(jaxpr, sizes), self._closed.consts)
            got = self._backend.compile(concrete, self._options)
            with self._lock:
                if len(self._by_sizes) >= self.MAX_SHAPES:
                    self._by_sizes.pop(next(iter(self._by_sizes)))
                self._by_sizes[key] = got
                self.compile_seconds += getattr(got, "compile_seconds", 0.0)
        return got

    def __call__(self, *buffers):
        return self.executable_for(buffers)(*buffers)

    def shapes_compiled(self) -> int:
        return len(self._by_sizes)

    def as_text(self) -> str:
        header = "\n".join(f"# {line}" for line in str(self._closed.jaxpr).splitlines())
        return (f"{header}\n# {self._backend.name}: compiled per concrete shape on each "
                f"call ({len(self._by_sizes)} shapes so far)\n")


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
    #: The platform its arrays live on: ``"cpu"`` (host NumPy arrays, absjit.Array),
    #: or a device's (``"gpu"``), whose arrays are a ``DeviceArray`` subclass.
    platform = "cpu"

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
        """An executable for a program this backend cannot lower (``names``: the
        primitives and dtypes it could not). :func:`route_backend` picks where it runs:
        ``xla`` (compiled) when jax is installed, else ``interpret`` (NumPy); a program
        XLA cannot compile either runs on ``interpret``. One ``RuntimeWarning`` per
        name, once per process, says where."""
        with self._lock:
            self.stats["fallbacks"] += 1
        target = route_backend(self.name, available_backends(), (), names)
        if target == self.name:
            target = "interpret"
        inner = None
        if target != "interpret":
            from ..errors import CompilationError
            try:
                inner = get_backend(target).compile(closed_jaxpr, options)
            except CompilationError:
                target = "interpret"
        how = "compiled by XLA" if target == "xla" else "NumPy"
        self.warn_once(names, f"functions using it run on the {target} backend ({how})",
                       stacklevel + 1)
        if inner is None:
            inner = get_backend("interpret").compile(closed_jaxpr, options)
        return FallbackExecutable(inner, closed_jaxpr, ", ".join(names), target)

    def compile(self, closed_jaxpr, options: CompileOptions) -> Executable:
        raise NotImplementedError

    def interpreted(self, closed_jaxpr, options: CompileOptions, compiling=lambda: False):
        """A callable with an executable's calling convention that runs
        ``closed_jaxpr`` without compiling it (tier 0, :mod:`absjit.jit.tiering`): the
        NumPy interpreter, under whatever run-time policy this backend applies;
        ``compiling()`` says whether a background compile is using a core."""
        return get_backend("interpret").compile(closed_jaxpr, options)

    def prepare_background_compiles(self, expected_seconds: float) -> None:
        """Called before a program expected to take ``expected_seconds`` to compile is
        queued for a background compile: start whatever such compiles run on (a worker
        process), without waiting for it."""

    def unavailable_error(self) -> Exception:
        """What asking for this backend raises on a machine without it."""
        from ..errors import BackendUnavailableError
        reason = getattr(self, "unavailable_reason", lambda: None)()
        return BackendUnavailableError(
            f"backend {self.name!r} is not available on this machine; available backends: "
            f"{', '.join(available_backends())}" + (f". Reason: {reason}" if reason else ""))

    def version_key(self) -> tuple:
        """Versions of everything that changes compiled code (part of cache keys)."""
        return ()

    def environment(self) -> dict:
        """``{what: setting}`` lines for bug reports
        (:func:`absjit.print_environment_info`): the backend's runtime settings."""
        return {}

    def settings_key(self) -> tuple:
        """Settings read when a program is compiled that change its code (environment
        variables): part of the in-memory cache's key, asked at every compile."""
        return ()

    # -- buffers and devices ---------------------------------------------------------
    def to_buffer(self, value):
        """A NumPy array (a jaxpr constant) as this backend's input buffer."""
        return value

    def devices(self) -> list:
        """The :class:`absjit.Device` s its arrays live on (``absjit.devices(name)``)."""
        return [cpu_device()]

    def put(self, leaf, device=None):
        """``leaf`` (a host value, an absjit array, another library's array) as an
        array on ``device`` (one of :meth:`devices`; None: the first). Only backends
        whose arrays live off the host implement it: ``device_put`` makes host arrays
        itself."""
        raise NotImplementedError(f"backend {self.name!r} keeps its arrays on the host")

    def adopt(self, leaf):
        """``leaf`` wrapped as this backend's array without a copy when it is another
        library's array on this backend's device (a CuPy array for a GPU backend);
        None otherwise. Asked for every argument leaf of a type absjit does not know,
        of the backends registered with ``adopts=True``."""
        return None

    def __repr__(self):
        return f"<backend {self.name!r}>"


class _Registry(dict):
    """Backends by name. A backend known only by the module that registers it (see
    :func:`register_backend_module`) is imported the first time it is looked up or the
    backends are listed, so ``import absjit`` imports no backend's code; ``name in
    _REGISTRY`` does not import it. Listing keeps the order names were first declared."""

    def __init__(self):
        super().__init__()
        self.order: list = []     # names, first declared first
        self.pending: dict = {}   # name -> module whose import registers it
        self.platform: dict = {}  # name -> declared platform (None: ask the backend)
        self.adopters: list = []  # names whose backend adopts other libraries' arrays

    def declare(self, name, module=None, platform="cpu", adopts=False):
        if name not in self.order:
            self.order.append(name)
            self.platform[name] = platform
            if adopts:
                self.adopters.append(name)
        if module is not None and not dict.__contains__(self, name):
            self.pending[name] = module

    def load(self, name):
        # The entry stays pending until the import registers the backend, so a second
        # thread asking meanwhile imports too (Python's import lock makes it wait for
        # the first) instead of finding the name missing.
        module = self.pending.get(name)
        if module is not None:
            try:
                importlib.import_module(module)
            except ImportError:  # e.g. Numba missing: the backend is not available
                if not dict.__contains__(self, name):
                    self.pending.pop(name, None)
                    if name in self.order:
                        self.order.remove(name)
            else:
                self.pending.pop(name, None)  # a module that registered nothing

    def load_all(self):
        for name in list(self.pending):
            self.load(name)

    def __getitem__(self, name):
        self.load(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self.load(name)
        return super().get(name, default)

    def __contains__(self, name):
        return super().__contains__(name) or name in self.pending

    def __iter__(self):
        self.load_all()
        return iter([n for n in self.order if dict.__contains__(self, n)])

    def __len__(self):
        self.load_all()
        return super().__len__()

    def keys(self):
        return list(self)

    def values(self):
        return [super(_Registry, self).__getitem__(n) for n in self]

    def items(self):
        return [(n, super(_Registry, self).__getitem__(n)) for n in self]


_REGISTRY = _Registry()
_ALIASES = {"tpu": "xla", "gpu": "cuda"}
# Backends that compile through Numba: what they cannot lower is routed elsewhere.
NUMBA_BACKENDS = ("cpu", "cuda")


def register_backend(backend: Backend) -> Backend:
    _REGISTRY.declare(backend.name)
    _REGISTRY.pending.pop(backend.name, None)
    dict.__setitem__(_REGISTRY, backend.name, backend)
    return backend


def register_backend_module(name: str, module: str, platform: str | None = "cpu",
                            adopts: bool = False) -> None:
    """Declare backend ``name``, registered by importing ``module`` (which calls
    :func:`register_backend`) the first time the backend is asked for.

    ``platform`` is where its arrays live (``"cpu"``: the host; None: the backend
    says, once imported); ``adopts`` says that argument leaves of unknown types are
    offered to its :meth:`Backend.adopt` (other libraries' device arrays).

    Examples
    --------
    >>> "cpu" in _REGISTRY and "cpu" in available_backends()
    True
    >>> platform_of("cpu"), platform_of("gpu")
    ('cpu', 'gpu')
    """
    _REGISTRY.declare(name, module, platform, adopts)


# The backends absjit ships, first declared first (``absjit.backends()`` lists them in
# this order); importing absjit imports none of their modules.
register_backend_module("interpret", "absjit.backends.interpret")
register_backend_module("cpu", "absjit.backends.numba_cpu")
register_backend_module("cuda", "absjit.backends.numba_cuda", platform="gpu", adopts=True)
register_backend_module("xla", "absjit.backends.xla", platform=None)


def platform_of(name: str) -> str:
    """The platform the arrays of backend ``name`` (or alias) live on: the declared
    one, else (``None`` declared) the backend's own answer."""
    name = _ALIASES.get(name, name)
    platform = _REGISTRY.platform.get(name, "cpu")
    if platform is None:
        platform = get_backend(name).platform
    return platform


# Leaf types that are never another library's device array (checked first: cheap, and
# no backend is imported for them).
_HOST_LEAVES = frozenset({np.ndarray, float, int, bool, complex})


def adopt_foreign(leaf):
    """``leaf`` as an absjit array on its device, without a copy, when it is another
    library's array on a backend's device (:meth:`Backend.adopt`); None otherwise."""
    from ..array import Array
    if type(leaf) in _HOST_LEAVES or isinstance(leaf, (Array, np.generic)):
        return None
    for name in _REGISTRY.adopters:
        backend = _REGISTRY.get(name)
        if backend is not None:
            adopted = backend.adopt(leaf)
            if adopted is not None:
                return adopted
    return None


def get_backend(name: str) -> Backend:
    name = _ALIASES.get(name, name)
    try:
        backend = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; available: "
                         f"{', '.join(available_backends())}") from None
    if not backend.is_available():
        raise backend.unavailable_error()
    return backend


def registered_backends() -> list:
    return list(_REGISTRY.values())


def available_backends() -> list:
    return [name for name, b in _REGISTRY.items() if b.is_available()]


def route_backend(requested, backends, platforms=(), unlowerable=()) -> str:
    """The backend a program runs on: a pure function of what was asked for and what
    this machine has.

    Parameters
    ----------
    requested : str or None
        ``jit(..., backend=...)``, else ``config.default_backend``; None for neither.
    backends : sequence of str
        The backends available here (``available_backends()``).
    platforms : sequence of str
        jax's platforms, the default first (``("tpu", "cpu")`` on a TPU host); empty
        when jax is not installed.
    unlowerable : iterable of str
        Primitives or dtypes the requested backend reported it cannot lower in this
        program (empty when choosing before anything is traced).

    Returns
    -------
    str
        A name in ``backends``.

    Raises
    ------
    ValueError
        ``requested`` names no backend available here (the message lists them).
    absjit.backends.xla.XLANotInstalledError
        ``"xla"``/``"tpu"`` was requested and jax is not installed (an ``ImportError``).
    RuntimeError
        ``"tpu"`` was requested and ``platforms`` has no TPU.

    Examples
    --------
    >>> route_backend(None, ["interpret", "cpu", "xla"], ["tpu", "cpu"])
    'xla'
    >>> route_backend("cpu", ["interpret", "cpu", "xla"], ["cpu"], ["sort"])
    'xla'
    >>> route_backend("cpu", ["interpret", "cpu"], [], ["debug_print in more than one loop"])
    'interpret'
    """
    backends = list(backends)
    if requested is None:
        if platforms and platforms[0] == "tpu" and "xla" in backends:
            name = "xla"
        else:
            name = next((b for b in ("cpu", "interpret") if b in backends), None)
            if name is None:
                raise RuntimeError("no backend is available")
    else:
        if not isinstance(requested, str):
            raise ValueError(f"backend must be a string such as 'cpu', got {requested!r}")
        name = _ALIASES.get(requested, requested)
        if name not in backends:
            if name == "xla":  # its extra is not installed: say which to install
                raise _REGISTRY["xla"].unavailable_error()
            spelled = requested if name == requested else f"{requested}/{name}"
            raise ValueError(f"backend {spelled!r} is not available on this machine; "
                             f"available: {', '.join(backends)}")
        if requested == "tpu" and "tpu" not in platforms:
            # As jax: asking for a TPU where there is none is an error, never a silent
            # run on the CPU (use backend="xla" for XLA on whatever jax has).
            raise RuntimeError("Unknown backend tpu: this machine has no TPU (jax's "
                               f"platforms: {', '.join(platforms) or 'none'}). Available "
                               f"backends are {', '.join(backends)}")
    if name in NUMBA_BACKENDS and tuple(unlowerable):
        return "xla" if "xla" in backends else "interpret"
    return name


_PLATFORMS = None


def default_platforms() -> tuple:
    """jax's platforms, the default first, or ``()`` without jax. jax is imported only
    where a TPU may be present (libtpu installed, or ``JAX_PLATFORMS`` naming tpu): on
    any other machine the answer cannot change routing, so it is ``("cpu",)``."""
    global _PLATFORMS
    if _PLATFORMS is None:
        import importlib.util
        import os
        xla = _REGISTRY.get("xla")
        if xla is None or not xla.is_available():
            _PLATFORMS = ()
        elif importlib.util.find_spec("libtpu") is not None or \
                "tpu" in os.environ.get("JAX_PLATFORMS", "").lower():
            import jax
            default = jax.default_backend()
            _PLATFORMS = (default,) + (("cpu",) if default != "cpu" else ())
        else:
            _PLATFORMS = ("cpu",)
    return _PLATFORMS


def _check_default_backend(name: str) -> None:
    """``ConfigError`` for a ``default_backend`` this machine does not have."""
    from ..config import ConfigError
    available = available_backends()
    if available and _ALIASES.get(name, name) not in available:
        backend = _REGISTRY.get(_ALIASES.get(name, name))
        reason = getattr(backend, "unavailable_reason", lambda: None)()
        raise ConfigError(f"config option 'default_backend': backend {name!r} is not "
                          f"available on this machine; available backends: "
                          f"{', '.join(available)} (see absjit.backends())"
                          + (f". Reason: {reason}" if reason else ""))


def _install_config_check() -> None:
    # the module (``absjit.config`` the attribute is the settings object)
    importlib.import_module("absjit.config").backend_check = _check_default_backend


def select_backend(requested: str | None = None) -> Backend:
    """The backend for ``jit(..., backend=requested)`` (see :func:`route_backend`)."""
    from ..config import config
    if requested is None:
        requested = config.default_backend or None
    backends = available_backends()
    platforms = default_platforms() if requested is None or (
        requested == "tpu" and "xla" in backends) else ()
    name = route_backend(requested, backends, platforms)
    return get_backend(name)


_install_config_check()
