"""Tiers: a jitted program's first results without waiting for its compile.

On a cache miss the program is traced as always. Then, when the backend compiles (the
``cpu`` backend) and :data:`config.tiering` is on:

* if this process already holds the compiled program (the compile cache), it runs;
* otherwise a cost model from the jaxpr (:func:`estimate_interpret_seconds`,
  :func:`estimate_compile_seconds`) decides. When interpreting one call is expected to
  take less than half the compile, the call runs on **tier 0**, the NumPy interpreter
  (the ``interpret`` backend, which needs no compile), while the fused program compiles
  in the background (:mod:`absjit.backends.background`: a thread that plans the program
  and has the cpu backend's worker process compile its functions,
  :mod:`absjit.backends.numba_cpu.compile_process`); otherwise the caller compiles now,
  as with tiering off. A very long ``fori_loop`` or ``scan`` therefore compiles first;
  a training step, a sampler or a loop of a few thousand scalar steps runs at once.
  A first call expected to be short (:data:`DEFER_COMPILE_SECONDS`, no ``while_loop``)
  runs before its compile starts, without the compile thread taking its GIL.
* Calls switch to the compiled tier as soon as it is ready: the entry's executable and
  its fast runner are replaced, so a cache hit afterwards costs what it did without
  tiering. An interpreted run of a program without side effects (callbacks, prints)
  that is still inside a loop when the compile finishes stops there and runs again
  compiled, so a loop whose trip count the model could not know (a ``while_loop``)
  never runs interpreted for much longer than the compile takes.

Both tiers compute the same values within the tolerances the suite holds between the
interpreter and compiled code; random bits are identical (both run the same threefry).
A program the compiled tier cannot compile keeps running on tier 0, with one
``RuntimeWarning`` naming the reason. ``jit(f).lower(...).compile()`` always compiles
synchronously, and so does every miss with ``config.update("tiering", False)`` (or
``ABSJIT_TIERING=0``).
"""
from __future__ import annotations

import logging
import threading
import time
import warnings

import numpy as np

from ..backends import background
from ..backends.base import Executable
from ..config import config
from ..core.jaxpr import ClosedJaxpr, Jaxpr
from ..ops.call import TierSwitch, interrupt, scalar_op
from . import compile_cache

__all__ = ["TieredExecutable", "compile_for_miss", "estimate_interpret_seconds",
           "estimate_compile_seconds", "pending", "wait_all", "last_switch_time",
           "TIERED_BACKENDS"]

logger = logging.getLogger("absjit")

#: Backends whose compile is slow enough to be worth a tier 0.
TIERED_BACKENDS = frozenset({"cpu"})

# -- the cost model ----------------------------------------------------------------------
# Calibrated on a 2-core x86-64 machine (NumPy 2.4, Numba 0.68): the interpreter spends
# ~10 us of Python per equation (~2.5 us in a loop body, which runs as generated Python:
# ops.call.python_evaluator, ~0.2 us for an operation on scalars there, plus ~1 us a
# trip) and NumPy's time per element; Numba spends ~0.5 s setting itself up at the
# first compile of a process, ~0.1 s per function after that and ~50 ms per equation
# (typing, lowering, LLVM).
INTERPRET_SECONDS_PER_EQN = 10e-6
INTERPRET_SECONDS_PER_LOOP_EQN = 2.5e-6
INTERPRET_SECONDS_PER_SCALAR_OP = 0.2e-6
INTERPRET_SECONDS_PER_TRIP = 1e-6
INTERPRET_SECONDS_PER_ELEMENT = 1.5e-9
INTERPRET_SECONDS_PER_FLOP = 0.05e-9  # products run in BLAS
COMPILE_SECONDS_FIRST = 0.5
COMPILE_SECONDS_BASE = 0.1
COMPILE_SECONDS_PER_EQN = 0.05
#: Trips assumed for a ``while_loop`` (its count is only known when it runs).
WHILE_TRIPS = 100
#: Tier 0 runs when one interpreted call is expected to take at most this fraction of
#: the compile.
TIER0_FRACTION = 0.5
#: A program whose one interpreted call is expected to take less than this starts its
#: background compile when its first call returns, not before: the compile thread would
#: otherwise take the GIL from that first call (its Python steps and NumPy's), which a
#: user waits for, to gain no more than this.
DEFER_COMPILE_SECONDS = 0.1

_COSTLY = frozenset({"exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan", "pow",
                     "erf", "erfc", "lgamma", "digamma", "atan2", "logistic", "erf_inv",
                     "sort", "cumsum", "cumprod", "cummax", "cummin"})
_EFFECTS = ("callback", "print", "debug", "io_")


def _size(aval) -> int:
    shape = getattr(aval, "shape", ())
    try:
        return int(np.prod([int(d) for d in shape])) if shape else 1
    except TypeError:  # a symbolic size (ranked level): assume a large one
        return 1 << 20


def _sub_jaxprs(params):
    for v in params.values():
        if isinstance(v, ClosedJaxpr):
            yield v.jaxpr
        elif isinstance(v, Jaxpr):
            yield v
        elif isinstance(v, (tuple, list)):
            for x in v:
                if isinstance(x, ClosedJaxpr):
                    yield x.jaxpr
                elif isinstance(x, Jaxpr):
                    yield x


def estimate_interpret_seconds(jaxpr: Jaxpr, per_eqn=INTERPRET_SECONDS_PER_EQN) -> float:
    """Expected seconds for the NumPy interpreter to run ``jaxpr`` once."""
    total = 0.0
    loop = INTERPRET_SECONDS_PER_LOOP_EQN
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if per_eqn == loop and scalar_op(eqn) is not None:
            total += INTERPRET_SECONDS_PER_SCALAR_OP
            continue
        total += per_eqn
        if name == "scan":
            body = estimate_interpret_seconds(eqn.params["jaxpr"].jaxpr, loop)
            total += _trips(eqn.params["length"]) * (body + INTERPRET_SECONDS_PER_TRIP)
        elif name == "while":
            body = estimate_interpret_seconds(eqn.params["cond_jaxpr"].jaxpr, loop) + \
                estimate_interpret_seconds(eqn.params["body_jaxpr"].jaxpr, loop)
            total += WHILE_TRIPS * (body + INTERPRET_SECONDS_PER_TRIP)
        elif name == "cond":
            total += max(estimate_interpret_seconds(b.jaxpr, per_eqn)
                         for b in eqn.params["branches"])
        elif name == "dot_general":
            (lc, _), _ = eqn.params["dimension_numbers"]
            k = 1
            for d in lc:
                k *= _size_of_dim(eqn.invars[0].aval, d)
            total += 2 * k * _size(eqn.outvars[0].aval) * INTERPRET_SECONDS_PER_FLOP
        else:
            subs = list(_sub_jaxprs(eqn.params))
            if subs:
                total += sum(estimate_interpret_seconds(j, per_eqn) for j in subs)
            else:
                elems = sum(_size(v.aval) for v in eqn.outvars) + \
                    sum(_size(getattr(x, "aval", None)) for x in eqn.invars)
                scale = 8 if name in _COSTLY else 1
                total += elems * INTERPRET_SECONDS_PER_ELEMENT * scale
    return total


def _trips(length) -> int:
    try:
        return int(length)
    except TypeError:  # a symbolic length (ranked level): assume a long loop
        return 1 << 20


def _size_of_dim(aval, d) -> int:
    try:
        return int(aval.shape[d])
    except (TypeError, IndexError):
        return 1 << 10


def _count_eqns(jaxpr: Jaxpr) -> int:
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for sub in _sub_jaxprs(eqn.params):
            n += _count_eqns(sub)
    return n


def estimate_compile_seconds(jaxpr: Jaxpr, first: bool = True) -> float:
    """Expected seconds for the cpu backend to compile ``jaxpr``; ``first``: nothing has
    been compiled in this process yet (Numba sets itself up)."""
    base = COMPILE_SECONDS_FIRST if first else COMPILE_SECONDS_BASE
    return base + COMPILE_SECONDS_PER_EQN * _count_eqns(jaxpr)


def _primitive_names(jaxpr: Jaxpr, out=None) -> set:
    out = set() if out is None else out
    for eqn in jaxpr.eqns:
        out.add(eqn.primitive.name)
        for sub in _sub_jaxprs(eqn.params):
            _primitive_names(sub, out)
    return out


def _has_effects(names) -> bool:
    return any(s in name for name in names for s in _EFFECTS)


# Primitives whose NumPy implementations import scipy.linalg, which the compile imports
# too (its LAPACK symbols): imported here first, in the caller's thread. Two threads
# importing SciPy's Cython modules at once can each see the other's half-initialised
# module (Python breaks the import-lock cycle that way).
_SCIPY_LINALG = ("cholesky", "lu", "triangular_solve", "qr", "eigh", "svd", "eig", "schur",
                 "tridiagonal")


def _import_what_tier0_needs(names) -> None:
    if any(n.startswith(_SCIPY_LINALG) for n in names):
        import scipy.linalg  # noqa: F401


# -- the tiered executable ---------------------------------------------------------------
_SWITCHES: list = []  # perf_counter() of each switch to a compiled tier (benchmarks)
_LIVE: set = set()  # tiered executables whose compile has not finished
_LIVE_LOCK = threading.Lock()


class TieredExecutable(Executable):
    """Runs ``tier0`` until ``compiled`` is set by the background compile, then that.

    ``listeners`` are called (in the background thread) with the compiled executable
    once it is ready; ``jit`` uses one to take this wrapper out of its entry."""

    def __init__(self, closed_jaxpr, backend, options, name, expected_compile_seconds=0.0,
                 defer_compile=False):
        self.tier0 = backend.interpreted(closed_jaxpr, options,
                                         compiling=lambda: self.compiled is None)
        self.compiled = None
        self.error = None
        self.ready = threading.Event()
        self.compile_seconds = None
        self.listeners: list = []
        names = _primitive_names(closed_jaxpr.jaxpr)
        self.interruptible = not _has_effects(names)
        _import_what_tier0_needs(names)
        self._name = name
        self._job = (closed_jaxpr, backend, options)
        with _LIVE_LOCK:
            _LIVE.add(self)
        backend.prepare_background_compiles(expected_compile_seconds)
        self._submit_lock = threading.Lock()
        self._submitted = False
        if not defer_compile:
            self._submit()

    def _submit(self):
        with self._submit_lock:
            if self._submitted:
                return
            self._submitted = True
        background.submit(self._compile)

    def __call__(self, *buffers):
        exe = self.compiled
        if exe is not None:
            return exe(*buffers)
        background.ensure_running()  # after a fork, the child's thread starts here
        try:
            if not self.interruptible:
                return self.tier0(*buffers)
            previous = interrupt.check
            interrupt.check = self._interrupt
            try:
                return self.tier0(*buffers)
            except TierSwitch:
                return self.compiled(*buffers)
            finally:
                interrupt.check = previous
        finally:
            if not self._submitted:
                self._submit()

    def _interrupt(self):
        if self.compiled is not None:
            raise TierSwitch

    def as_text(self) -> str:
        exe = self.compiled
        if exe is not None:
            return exe.as_text()
        return getattr(self.tier0, "__wrapped__", self.tier0).as_text()

    def _compile(self):
        closed, backend, options = self._job
        t0 = time.perf_counter()
        try:
            exe = compile_cache.compile(closed, backend, options)
        except background.Cancelled:
            raise
        except Exception as err:  # noqa: BLE001 - tier 0 keeps serving
            self.error = err
            warnings.warn(f"absjit: {self._name} could not be compiled "
                          f"({type(err).__name__}: {str(err).splitlines()[0][:300]}); it "
                          "keeps running on the NumPy interpreter", RuntimeWarning)
            self._finish()
            return
        self.compile_seconds = time.perf_counter() - t0
        self.compiled = exe  # one store: callers see either tier, both correct
        _SWITCHES.append(time.perf_counter())
        if config.explain_cache_misses:
            logger.warning("%s: compiled tier ready after %.2f s; calls switch to it",
                           self._name, self.compile_seconds)
        for listener in self.listeners:
            try:
                listener(exe)
            except Exception:  # noqa: BLE001 - the wrapper keeps forwarding
                logger.debug("a tier switch listener raised", exc_info=True)
        self._finish()

    def _finish(self):
        self._job = None
        self.ready.set()
        with _LIVE_LOCK:
            _LIVE.discard(self)


def _defer_compile(jaxpr, interp_seconds) -> bool:
    """Whether the background compile waits for the first call to return: when that call
    is expected to be short (:data:`DEFER_COMPILE_SECONDS`) and has no ``while_loop``,
    whose trip count the estimate only guesses (a long one must be able to switch to
    the compiled tier while it runs)."""
    return interp_seconds < DEFER_COMPILE_SECONDS and \
        not any("while" in name for name in _primitive_names(jaxpr))


def compile_for_miss(closed_jaxpr, backend, options, name):
    """The executable a cache miss runs: compiled now, found compiled, or tiered."""
    if not config.tiering or backend.name not in TIERED_BACKENDS:
        return compile_cache.compile(closed_jaxpr, backend, options)
    exe = compile_cache.lookup(closed_jaxpr, backend, options)
    if exe is not None:
        return exe
    interp = estimate_interpret_seconds(closed_jaxpr.jaxpr)
    build = estimate_compile_seconds(closed_jaxpr.jaxpr,
                                     first=not backend.stats.get("compiles"))
    if interp > TIER0_FRACTION * build:
        if config.explain_cache_misses:
            logger.warning("%s: compiling now (one interpreted call ~%.2g s, the compile "
                           "~%.2g s)", name, interp, build)
        return compile_cache.compile(closed_jaxpr, backend, options)
    if config.explain_cache_misses:
        logger.warning("%s: tier 0 (NumPy) while it compiles in the background (one "
                       "interpreted call ~%.2g s, the compile ~%.2g s)", name, interp, build)
    return TieredExecutable(closed_jaxpr, backend, options, name, build,
                            defer_compile=_defer_compile(closed_jaxpr.jaxpr, interp))


# -- for tests and benchmarks ------------------------------------------------------------
def pending() -> int:
    """Programs still compiling in the background."""
    with _LIVE_LOCK:
        return len(_LIVE)


def wait_all(timeout=None) -> bool:
    """Block until every background compile has finished; whether they did in time."""
    return background.wait_idle(timeout)


def last_switch_time(since: float):
    """Seconds from ``since`` (a ``perf_counter()`` value) to the latest switch to a
    compiled tier, or None when there was none."""
    return (_SWITCHES[-1] - since) if _SWITCHES else None
