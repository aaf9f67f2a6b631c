"""The ``cpu`` backend: one Numba-compiled function per jaxpr.

``compile`` generates source (:mod:`.codegen`), then finds the compiled kernel in this
order: the process-wide table keyed by the module hash (equal source => one compile,
whatever closure or lambda produced it), Numba's on-disk cache (:mod:`.diskcache`), and
finally a fresh Numba compile. A jaxpr with a primitive or dtype this backend does not
lower runs on the ``interpret`` backend, with one warning per primitive.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import threading
import time
import types
import warnings

import numpy as np

from ... import __version__
from ...errors import CompilationError
from ..base import Backend, Executable, get_backend
from . import diskcache

__all__ = ["NumbaCPUBackend", "NumbaExecutable", "stats"]

_HEADER = "import math\nimport numpy as np\nfrom numba import prange\n" \
          "from absjit.backends.numba_cpu.runtime import *  # noqa: F401,F403\n\n"

_lock = threading.RLock()
_kernels: dict = {}  # module hash -> (dispatcher, source)
_warned: set = set()
# Counters for absjit.cache.info() and the benchmarks' track_ functions.
stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0, "compile_seconds": 0.0,
         "fallbacks": 0}


def _package_hash() -> str:
    """Hash of this backend's own source: a change to a lowering invalidates kernels."""
    global _PKG_HASH
    if _PKG_HASH is None:
        here = os.path.dirname(__file__)
        h = hashlib.sha256()
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                with open(os.path.join(here, name), "rb") as f:
                    h.update(name.encode() + f.read())
        _PKG_HASH = h.hexdigest()[:16]
    return _PKG_HASH


_PKG_HASH = None


class NumbaExecutable(Executable):
    """A compiled kernel: called with NumPy buffers (consts, then args)."""

    def __init__(self, dispatcher, source, in_avals, module_name, compile_seconds):
        self._fn = dispatcher
        # The jit runner calls this first: the bare Numba dispatcher (a tuple back; a
        # TypeError for a buffer it was not compiled for, and then ``__call__`` retries).
        self.fast_call = dispatcher
        self.source = source
        self.module_name = module_name
        self.compile_seconds = compile_seconds
        self._dtypes = [np.dtype(a.dtype) for a in in_avals]

    def __call__(self, *buffers):
        try:
            return list(self._fn(*buffers))
        except TypeError:
            # Not C-contiguous, a scalar, or another array type: normalise and retry.
            if len(buffers) != len(self._dtypes):
                raise
            fixed = [np.asarray(b, dtype=dt, order="C")
                     for b, dt in zip(buffers, self._dtypes)]
            return list(self._fn(*fixed))

    def as_text(self) -> str:
        return self.source


class _FallbackExecutable(Executable):
    """Runs a jaxpr this backend cannot lower with the NumPy impl rules."""

    def __init__(self, inner, closed, reason):
        self._inner = inner
        self._closed = closed
        self.reason = reason

    def __call__(self, *buffers):
        return self._inner(*buffers)

    def as_text(self) -> str:
        return f"# runs on the interpret backend: no cpu lowering for {self.reason}\n" + \
            str(self._closed)


def _interpret(closed, options):
    try:
        return get_backend("interpret").compile(closed, options)
    except (ValueError, RuntimeError):
        from ...ops.call import eval_jaxpr_numpy

        class _Eval(Executable):
            def __call__(self, *buffers):
                n = len(closed.jaxpr.constvars)
                return list(eval_jaxpr_numpy(closed.jaxpr, buffers[:n], *buffers[n:]))

            def as_text(self):
                return str(closed)
        return _Eval()


def _numba_type(aval):
    from numba import types as nt
    from numba.np.numpy_support import from_dtype
    return nt.Array(from_dtype(np.dtype(aval.dtype)), len(aval.shape), "C", readonly=True)


def _failing_primitive(message: str, line_ops) -> tuple:
    """(primitive name, line number) for the first generated line Numba complains of."""
    for m in re.finditer(r"line (\d+)", message):
        n = int(m.group(1))
        if 0 < n <= len(line_ops) and line_ops[n - 1]:
            return line_ops[n - 1], n
    return None, None


class NumbaCPUBackend(Backend):
    """Compiles a jaxpr to one ``numba.njit`` function (fused loops, BLAS dots)."""

    name = "cpu"
    platforms = ("cpu",)

    def is_available(self) -> bool:
        return importlib.util.find_spec("numba") is not None

    def version_key(self) -> tuple:
        from ...compat import host_cpu_name, numba_versions
        return ("absjit", __version__, "numba_cpu", _package_hash()) + numba_versions() + \
            (host_cpu_name(),)

    def compile(self, closed_jaxpr, options) -> Executable:
        from .codegen import Unsupported, generate
        try:
            source, parallel, line_prims = generate(closed_jaxpr, options)
        except Unsupported as e:
            with _lock:
                stats["fallbacks"] += 1
                new = [n for n in e.names if n not in _warned]
                _warned.update(new)
            for n in new:
                warnings.warn(f"absjit cpu backend: no lowering for {n}; functions using it "
                              "run on the interpret backend (NumPy)", RuntimeWarning,
                              stacklevel=3)
            return _FallbackExecutable(_interpret(closed_jaxpr, options), closed_jaxpr,
                                       ", ".join(e.names))
        return self._build(source, parallel, line_prims, closed_jaxpr, options)

    def _build(self, source, parallel, line_prims, closed, options):
        flags = {"parallel": bool(parallel), "fastmath": bool(options.fastmath),
                 "error_model": "numpy", "boundscheck": False}
        in_avals = [v.aval for v in closed.jaxpr.constvars + closed.jaxpr.invars]
        sig_text = repr([(a.shape, np.dtype(a.dtype).str) for a in in_avals])
        key_text = "\n".join([repr(self.version_key()), repr(sorted(flags.items())),
                              sig_text, source])
        digest = hashlib.sha256(key_text.encode()).hexdigest()[:32]
        module_name = f"absjit_k_{digest}"
        text = f"# absjit kernel {digest}\n# flags: {sorted(flags.items())}\n" + _HEADER + source
        with _lock:
            hit = _kernels.get(digest)
            if hit is not None:
                stats["memory_hits"] += 1
                return NumbaExecutable(hit, source, in_avals, module_name, 0.0)
            t0 = time.perf_counter()
            dispatcher, loaded = self._load(module_name, text, flags, in_avals, source,
                                            line_prims)
            seconds = time.perf_counter() - t0
            if loaded:
                stats["disk_hits"] += 1
            else:
                stats["compiles"] += 1
                stats["compile_seconds"] += seconds
            _kernels[digest] = dispatcher
        return NumbaExecutable(dispatcher, source, in_avals, module_name, seconds)

    def _load(self, module_name, text, flags, in_avals, source, line_prims):
        import numba

        from ...compat import dispatcher_cache_counts
        sig = tuple(_numba_type(a) for a in in_avals)
        use_disk = diskcache.enabled()
        path = f"<absjit kernel {module_name}>"
        if use_disk:
            try:
                path = diskcache.write_module(module_name, text)
                diskcache.verify_or_purge(module_name)
            except OSError:
                use_disk = False  # an unwritable cache directory is not an error
        module = types.ModuleType(module_name)
        module.__file__ = path
        # Object-mode blocks (debug_print) find their globals through sys.modules.
        sys.modules.setdefault(module_name, module)
        code = compile(text, path, "exec")
        exec(code, module.__dict__)  # noqa: S102 - our own generated source
        fn = module.__dict__["kernel"]
        line_ops = [None] * text[:len(text) - len(source)].count("\n") + list(line_prims)
        for attempt in (0, 1):
            try:
                disp = numba.njit(sig, cache=use_disk, **flags)(fn)
                break
            except numba.core.errors.NumbaError as e:
                if use_disk:
                    diskcache.purge(module_name)
                prim, line = _failing_primitive(str(e), line_ops)
                where = f"primitive `{prim}` at " if prim else ""
                raise CompilationError(
                    f"Numba could not compile the kernel ({where}{path}, line {line}):\n"
                    f"{str(e).strip()[:2000]}\n--- generated source ---\n{source}") from None
            except Exception:  # noqa: BLE001 - unreadable cache files: drop and rebuild
                if not use_disk or attempt:
                    raise
                diskcache.purge(module_name, keep_module=True)
        hits, _ = dispatcher_cache_counts(disp) if use_disk else (0, 0)
        if use_disk:
            if hits:
                sys.modules.setdefault(module_name, module)
            else:
                diskcache.record_checksum(module_name)
        disp.disable_compile()
        return disp, bool(hits)

