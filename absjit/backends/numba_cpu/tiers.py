"""Two tiers for ``ranked`` kernels: a serial one at once, the parallel one when hot.

A ``ranked`` kernel serves every size of its rank, so its large loops are ``prange``
loops — and Numba's parallel compile (the parfor passes, a gufunc per loop) costs about
2.5x a serial compile of the same source. A size sweep would spend most of its time
there. So the cpu backend compiles a ranked single-function kernel in two tiers:

1. a **serial** variant (plain ``range`` loops, ``nogil``) compiled before the first
   call returns — every call runs it until the next tier is ready;
2. the **parallel** variant, compiled (or loaded from the disk cache) in a background
   thread once the kernel is *hot*: once calls that each ran at least
   :data:`HOT_CALL_SECONDS` have together run :data:`HOT_SECONDS` in the serial tier.
   Once it is ready every later call runs it.

A program that runs a ranked kernel a few times (a script, a sweep over sizes) never
pays for the parallel compile, nor waits for it at exit; a loop that keeps running it
on large inputs switches to the parallel tier after 50 ms of serial work plus the
background compile (about half a second on one core, which is what the parallel tier
must save before it pays: on 2 cores a 1e6-element selu saves ~0.15 ms a call).

Both variants are rendered from the same loop IR and check the same size equalities
on entry, so they compute the same results. The serial variant releases the GIL while
it runs, so calls overlap with the background compile on a second core.

A process does not fork or exit halfway through a background compile:
:func:`wait` runs before ``os.fork`` and at exit (Numba's compiler lock must not be
held by a thread that does not exist in a child).
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from time import perf_counter

__all__ = ["Tiered", "wait", "pending", "promote_all", "HOT_SECONDS", "HOT_CALL_SECONDS"]

log = logging.getLogger("absjit.tiers")

#: Serial seconds (summed over calls of at least :data:`HOT_CALL_SECONDS`) after
#: which a ranked kernel's parallel tier starts compiling.
HOT_SECONDS = 0.05
#: Calls shorter than this do not count towards :data:`HOT_SECONDS`: at that size a
#: parallel loop's start-up costs what it would save.
HOT_CALL_SECONDS = 50e-6

_PENDING: set = set()
_PENDING_LOCK = threading.Lock()
_COLD: "weakref.WeakSet[Tiered]" = weakref.WeakSet()  # not promoted yet


class Tiered:
    """A callable that runs ``serial`` until the kernel is hot, then compiles the
    parallel dispatcher with ``build()`` in a background thread and runs that once it
    is ready.

    ``build`` raising keeps the serial variant for good (logged at debug level).
    """

    __slots__ = ("current", "parallel_ready", "serial_seconds", "_build_fn", "_thread",
                 "_lock", "_warm", "__weakref__")

    def __init__(self, serial, build):
        self.current = serial
        self.parallel_ready = threading.Event()
        self.serial_seconds = 0.0
        self._build_fn = build
        self._thread = None
        self._lock = threading.Lock()
        self._warm = False  # a dispatcher's first call sets itself up: not counted
        _COLD.add(self)

    def __call__(self, *args):
        if self._thread is not None:  # promoted: the serial tier until the other is ready
            return self.current(*args)
        t0 = perf_counter()
        out = self.current(*args)
        spent = perf_counter() - t0
        if not self._warm:
            self._warm = True
        elif spent >= HOT_CALL_SECONDS:
            self.serial_seconds += spent
            if self.serial_seconds >= HOT_SECONDS:
                self.promote()
        return out

    def promote(self) -> None:
        """Start compiling the parallel tier now (once; later calls do nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            thread = threading.Thread(target=self._build, daemon=True,
                                      name="absjit-parallel-compile")
            self._thread = thread
            _COLD.discard(self)
            with _PENDING_LOCK:  # started before wait() can see it
                _PENDING.add(thread)
                thread.start()

    def _build(self):
        try:
            self.current = self._build_fn()  # one attribute store: callers see either
        except Exception:  # noqa: BLE001 - the serial tier is a correct kernel
            log.debug("the parallel variant of a ranked kernel did not compile; the "
                      "serial one keeps running", exc_info=True)
        finally:
            self._build_fn = None
            self.parallel_ready.set()
            with _PENDING_LOCK:
                _PENDING.discard(threading.current_thread())

    def wait(self, timeout=None) -> bool:
        """Promote, then block until the parallel tier is compiled (or failed); whether
        it finished."""
        self.promote()
        return self.parallel_ready.wait(timeout)


def pending() -> int:
    """How many background compiles are running."""
    with _PENDING_LOCK:
        return len(_PENDING)


def promote_all() -> None:
    """Start the parallel tier of every ranked kernel that is not hot yet (benchmarks
    use it to time the steady state)."""
    for t in list(_COLD):
        t.promote()


def wait(timeout=None) -> None:
    """Block until every background compile that has started has finished (each gets
    ``timeout``)."""
    with _PENDING_LOCK:
        threads = list(_PENDING)
    for t in threads:
        if t is not threading.current_thread():
            t.join(timeout)


atexit.register(wait)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=wait)
