"""The ``xla`` backend: a jaxpr re-expressed with ``jax.lax`` and compiled by ``jax.jit``.

``compile``:

1. every primitive of the jaxpr (nested jaxprs included) must have a rule in
   :data:`.rules.xla_rules`; otherwise :class:`absjit.errors.CompilationError` names them,
   before anything is traced;
2. the jaxpr is walked once under ``jax.jit`` tracing, one ``jax.lax`` rule per
   equation (control flow becomes ``lax.switch``/``while_loop``/``scan``, nested calls
   are inlined), and lowered and compiled ahead of time for one device of the platform
   jax reports (``cpu``, ``gpu``, ``tpu``);
3. 64-bit types: tracing and calls run under ``jax.enable_x64(True)`` (a context, so
   the user's own JAX configuration is never changed), and every value carries the
   dtype absjit's jaxpr gives it. A float64 value of absjit stays float64 under XLA; a
   float32 one stays float32 whatever jax's global flag says.

Buffers: on the CPU platform the executable takes NumPy arrays and returns NumPy views
of XLA's result buffers (``np.asarray`` on a CPU ``jax.Array`` is zero-copy); such a
view passed to a later call goes back as its ``jax.Array`` (:func:`xla_buffer`), so a
chain of calls copies nothing; other NumPy inputs are copied in by jax. On other
platforms (``resident``) results stay ``jax.Array``s on the device, held by
:class:`absjit.array.DeviceArray` (the executable's ``array_type``), and ``np.asarray``
copies to the host only when asked.

The compile cache (per process) keys on this backend's name and :meth:`version_key`.
On disk, JAX's own persistent compilation cache is pointed at
``<absjit cache root>/xla/jax`` when absjit's disk cache is usable (see
:func:`configure_persistent_cache`).
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from ..._version import __version__
from ..._device import Device
from ...array import Array, DeviceArray
from ...core.trace import to_numpy
from ...core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ...core.specialize import is_symbolic_jaxpr
from ...errors import CompilationError
from .. import diskcache
from ..sources import source_hash
from ..base import Backend, Executable, PerShapeExecutable

__all__ = ["XlaBackend", "XlaExecutable", "unlowerable", "configure_persistent_cache",
           "xla_buffer"]

_LOCK = threading.Lock()
# Dtypes jax narrows unless 64-bit mode is on.
_WIDE = frozenset(np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128))


def _package_hash() -> str:
    """This backend's sources (:mod:`absjit.backends.sources`)."""
    return source_hash(__package__)


def _subjaxprs(params):
    for v in params.values():
        stack = [v]
        while stack:
            x = stack.pop()
            if isinstance(x, ClosedJaxpr):
                yield x.jaxpr
            elif isinstance(x, Jaxpr):
                yield x
            elif isinstance(x, (tuple, list)):
                stack.extend(x)


def unlowerable(jaxpr, rules) -> list:
    """Names of the primitives in ``jaxpr`` (nested jaxprs included) without a rule in
    ``rules``, sorted. Iterative: no recursion per nesting level."""
    missing, stack, seen = set(), [jaxpr], set()
    while stack:
        j = stack.pop()
        if id(j) in seen:
            continue
        seen.add(id(j))
        for eqn in j.eqns:
            if eqn.primitive not in rules:
                missing.add(eqn.primitive.name)
            stack.extend(_subjaxprs(eqn.params))
    return sorted(missing)


class _RuleTable:
    """The rule of a primitive, by name, for absjit's own primitives (the effectful twin
    of ``scan``/``while``/``cond`` is another object with the same name and rules);
    primitives defined elsewhere (a test's, a user's) have none."""

    def __init__(self, by_name):
        self._by_name = by_name

    def __contains__(self, prim) -> bool:
        return prim.name in self._by_name and prim.module.startswith("absjit.")

    def __getitem__(self, prim):
        if prim not in self:
            raise KeyError(prim.name)
        return self._by_name[prim.name]


class _Lowering:
    """Walks jaxprs under ``jax.jit`` tracing. One per compile."""

    def __init__(self, rules, platform):
        self.rules = rules
        self.platform = platform

    def run(self, jaxpr, consts, args):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))

        def read(x):
            return x.val if type(x) is Literal else env[x]
        for eqn in jaxpr.eqns:
            ctx = _EqnContext(self, [v.aval for v in eqn.outvars],
                              [x.aval for x in eqn.invars])
            outs = self.rules[eqn.primitive](ctx, *[read(x) for x in eqn.invars],
                                             **eqn.params)
            for v, out in zip(eqn.outvars, outs):
                env[v] = out
        return [read(x) for x in jaxpr.outvars]


class _EqnContext:
    """What a rule may ask about its equation: ``out_avals``, ``in_avals``,
    ``platform``; ``as_function(closed_jaxpr)`` lowers a nested jaxpr by the same rules;
    ``cast(value, aval)`` gives a value its aval's dtype."""

    __slots__ = ("lowering", "out_avals", "in_avals")

    def __init__(self, lowering, out_avals, in_avals):
        self.lowering, self.out_avals, self.in_avals = lowering, out_avals, in_avals

    @property
    def platform(self) -> str:
        return self.lowering.platform

    def as_function(self, closed):
        if isinstance(closed, Jaxpr):
            closed = ClosedJaxpr(closed, [])
        jaxpr, consts = closed.jaxpr, [np.asarray(getattr(c, "_value", c))
                                       for c in closed.consts]

        def fn(*args):
            return self.lowering.run(jaxpr, consts, args)
        return fn

    @staticmethod
    def cast(value, aval):
        from jax import lax
        dt = np.dtype(aval.dtype)
        if np.dtype(value.dtype) != dt:
            return lax.convert_element_type(value, dt)
        if not hasattr(value, "aval") and not isinstance(value, np.ndarray):
            return np.asarray(value, dt)
        return value


def resident_buffer(x, dtype):
    """An argument of a resident executable as jax takes it: an absjit DeviceArray's
    ``jax.Array``, a ``jax.Array`` (a constant put on the device) as it is, anything
    else as a host array of ``dtype`` (jax copies it in)."""
    if isinstance(x, DeviceArray):
        b = x._buf
        return b if b.dtype == dtype else b.astype(dtype)
    if type(x) is Array:
        v = x._value
        return v if v.dtype == dtype else v.astype(dtype)
    if hasattr(x, "block_until_ready") and hasattr(x, "sharding"):  # a jax.Array
        return x
    return np.asarray(to_numpy(x), dtype=dtype)


def xla_buffer(b):
    """The ``jax.Array`` behind ``b`` when ``b`` is the whole NumPy view of one (a
    result of an earlier XLA call on the CPU): passed back as it is, so chained calls
    copy nothing. Any other array is returned unchanged (jax copies it in: XLA wants
    64-byte aligned buffers, and DLPack as jax reads it cannot export read-only
    arrays).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.ones(3)
    >>> xla_buffer(x) is x
    True
    """
    m = getattr(b, "base", None)
    if type(m) is memoryview:
        a = m.obj
        if type(a).__name__ == "ArrayImpl" and a.shape == b.shape and a.dtype == b.dtype:
            return a
    return b


class XlaExecutable(Executable):
    """A jaxpr compiled by XLA: called with buffers (consts, then args); returns NumPy
    arrays on the CPU platform, ``jax.Array``s on the device otherwise."""

    def __init__(self, compiled, jaxpr_text, x64, resident, platform, compile_seconds,
                 in_dtypes=()):
        self._compiled = compiled
        self._text = jaxpr_text
        self._x64 = x64
        self.resident = resident
        self.platform = platform
        self.compile_seconds = compile_seconds
        self._in_dtypes = tuple(in_dtypes)
        # Resident results are absjit DeviceArrays holding the jax.Arrays; calls then
        # take the jitted call's leaves as they are (resident_buffer).
        self.array_type = DeviceArray if resident else None

    def __call__(self, *buffers):
        if self.resident:
            buffers = [resident_buffer(b, dt) for b, dt in zip(buffers, self._in_dtypes)]
        else:
            buffers = [xla_buffer(b) for b in buffers]
        if self._x64:
            import jax
            with jax.enable_x64(True):
                outs = self._compiled(*buffers)
        else:
            outs = self._compiled(*buffers)
        if self.resident:
            return list(outs)
        return [np.asarray(o) for o in outs]

    def as_text(self) -> str:
        header = "\n".join(f"# {line}" for line in self._text.splitlines())
        return f"{header}\n# XLA executable for platform {self.platform!r}\n" + \
            self._compiled.as_text()


def configure_persistent_cache() -> str | None:
    """Point JAX's persistent compilation cache at ``<absjit cache root>/xla/jax``.

    Done once per process, on the first compile, and only when absjit's disk cache is
    enabled and its directories pass the trust checks of
    :func:`absjit.backends.diskcache.usable` (private, owned by the user), and the user
    has not configured JAX's cache directory already. JAX writes only programs whose
    compile took at least ``jax_persistent_cache_min_compile_time_secs`` (1 s by
    default), so small kernels cost no disk traffic. JAX's entries are serialized XLA
    executables that absjit does not authenticate with its HMAC: they are trusted
    because the directory is. Returns the directory, or None when not configured.
    """
    global _PERSISTENT
    with _LOCK:
        if _PERSISTENT is not False:
            return _PERSISTENT
        _PERSISTENT = None
        import jax
        if jax.config.jax_compilation_cache_dir or not diskcache.usable("xla"):
            return None
        path = os.path.join(diskcache.kernel_dir("xla"), "jax")
        if diskcache._private_dir(path) is not None:  # noqa: SLF001 - the shared check
            return None
        jax.config.update("jax_compilation_cache_dir", path)
        _PERSISTENT = path
        return path


_PERSISTENT = False


class XlaBackend(Backend):
    """Compiles a jaxpr with XLA through ``jax.jit`` (``absjit[xla]``).

    Attributes
    ----------
    platform : str
        The platform compiled for: jax's default (``"cpu"``, ``"gpu"``, ``"tpu"``).
    resident : bool
        Whether results stay on the device as ``jax.Array`` (every platform but cpu).
    """

    name = "xla"
    platforms = ("cpu", "gpu", "tpu")

    def __init__(self, platform=None, resident=None):
        super().__init__()
        self._platform = platform
        self._resident = resident
        self._rules = None
        self._devices = None

    def is_available(self) -> bool:
        from . import jax_installed
        return jax_installed()

    def unavailable_error(self) -> Exception:
        from . import XLANotInstalledError
        return XLANotInstalledError()

    # -- jax, loaded on first use ----------------------------------------------------
    def _load(self):
        from . import XLANotInstalledError, jax_installed
        if not jax_installed():
            raise XLANotInstalledError()
        if self._rules is None:
            with self._lock:
                if self._rules is None:
                    from . import rules_arrays  # noqa: F401 - registers its rules
                    from .rules import xla_rules
                    self._rules = _RuleTable(xla_rules)
        import jax
        return jax

    @property
    def platform(self) -> str:
        if self._platform is None:
            jax = self._load()
            self._platform = jax.default_backend()
        return self._platform

    @property
    def resident(self) -> bool:
        return self.platform != "cpu" if self._resident is None else self._resident

    def device(self):
        jax = self._load()
        return jax.devices(self.platform)[0]

    def version_key(self) -> tuple:
        jax = self._load()
        import jaxlib
        return ("absjit", __version__, "xla", _package_hash(), jax.__version__,
                jaxlib.__version__, self.platform)

    # -- compile ---------------------------------------------------------------------
    def compile(self, closed_jaxpr, options) -> Executable:
        if is_symbolic_jaxpr(closed_jaxpr.jaxpr):
            # ranked: XLA needs static shapes, so compile once per concrete shape
            self._load()
            missing = unlowerable(closed_jaxpr.jaxpr, self._rules)
            if missing:
                raise CompilationError(f"the xla backend has no rule for "
                                       f"{', '.join(missing)}")
            return PerShapeExecutable(self, closed_jaxpr, options,
                                      array_type=DeviceArray if self.resident else None,
                                      platform=self.platform)
        jax = self._load()
        missing = unlowerable(closed_jaxpr.jaxpr, self._rules)
        if missing:
            from .rules import NOT_LOWERED
            why = "; ".join(f"{n}: {NOT_LOWERED[n]}" for n in missing if n in NOT_LOWERED)
            raise CompilationError(f"the xla backend has no rule for {', '.join(missing)}"
                                   + (f" ({why})" if why else ""))
        configure_persistent_cache()
        jaxpr = closed_jaxpr.jaxpr
        in_avals = [v.aval for v in jaxpr.constvars + jaxpr.invars]
        n_consts = len(jaxpr.constvars)
        lowering = _Lowering(self._rules, self.platform)

        def program(*args):
            return lowering.run(jaxpr, args[:n_consts], args[n_consts:])
        sharding = jax.sharding.SingleDeviceSharding(self.device())
        specs = [jax.ShapeDtypeStruct(tuple(a.shape), np.dtype(a.dtype), sharding=sharding)
                 for a in in_avals]
        t0 = time.perf_counter()
        try:
            with jax.enable_x64(True):
                compiled = jax.jit(program).lower(*specs).compile()
        except CompilationError:
            raise
        except Exception as e:  # noqa: BLE001 - name what failed, keep the cause
            raise CompilationError(f"XLA could not compile the program for platform "
                                   f"{self.platform!r}: {type(e).__name__}: {e}") from e
        seconds = time.perf_counter() - t0
        with self._lock:
            self.stats["compiles"] += 1
            self.stats["compile_seconds"] += seconds
        # Calls need the x64 context only when an argument is 64-bit: otherwise jax's
        # argument check passes either way, and the context costs ~1 us a call.
        x64 = any(np.dtype(a.dtype) in _WIDE for a in in_avals)
        return XlaExecutable(compiled, str(jaxpr), x64, self.resident, self.platform,
                             seconds, [np.dtype(a.dtype) for a in in_avals])

    # -- buffers ---------------------------------------------------------------------
    def to_buffer(self, value):
        """Constants go to the device once (they are passed on every call)."""
        if not self.resident:
            return value
        jax = self._load()
        with jax.enable_x64(True):
            return jax.device_put(value, self.device())

    def devices(self) -> list:
        """jax's devices of :attr:`platform` where results stay there (``resident``),
        else the CPU (results are host arrays)."""
        if not self.resident:
            return Backend.devices(self)
        if self._devices is None:
            jax = self._load()
            self._devices = [Device(i, self.platform, d.device_kind, backend=self.name)
                             for i, d in enumerate(jax.devices(self.platform))]
        return list(self._devices)

    def put(self, leaf, device=None):
        if isinstance(leaf, DeviceArray) and (device is None or leaf.device == device):
            return leaf
        jax = self._load()
        target = jax.devices(self.platform)[0 if device is None else device.id]
        weak = getattr(leaf, "weak_type", None)
        if weak is None:
            from ...dtypes import is_weakly_typed
            weak = is_weakly_typed(leaf)
        value = leaf._buf if isinstance(leaf, DeviceArray) else to_numpy(leaf)
        with jax.enable_x64(True):
            return DeviceArray._wrap(jax.device_put(value, target), bool(weak))
