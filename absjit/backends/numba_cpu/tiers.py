"""Two tiers for ``ranked`` kernels: a serial one at once, the parallel one behind it.

A ``ranked`` kernel serves every size of its rank, so its large loops are ``prange``
loops — and Numba's parallel compile (the parfor passes, a gufunc per loop) costs about
2.5x a serial compile of the same source. A size sweep would spend most of its time
there. So the cpu backend compiles a ranked single-function kernel twice, in two tiers:

1. a **serial** variant (plain ``range`` loops, ``nogil``) compiled before the first
   call returns — every call runs it until the next tier is ready;
2. the **parallel** variant, compiled (or loaded from the disk cache) in a background
   thread; once it is ready every later call runs it.

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

__all__ = ["Tiered", "wait", "pending"]

log = logging.getLogger("absjit.tiers")

_PENDING: set = set()
_PENDING_LOCK = threading.Lock()


class Tiered:
    """A callable that runs ``serial`` until ``build()`` (run in a background thread)
    returns the parallel dispatcher, and that dispatcher afterwards.

    ``build`` raising keeps the serial variant for good (logged at debug level).
    """

    __slots__ = ("current", "parallel_ready", "_thread", "__weakref__")

    def __init__(self, serial, build):
        self.current = serial
        self.parallel_ready = threading.Event()
        self._thread = threading.Thread(target=self._build, args=(build,), daemon=True,
                                        name="absjit-parallel-compile")
        with _PENDING_LOCK:
            _PENDING.add(self._thread)
        self._thread.start()

    def _build(self, build):
        try:
            self.current = build()  # one attribute store: callers see either variant
        except Exception:  # noqa: BLE001 - the serial tier is a correct kernel
            log.debug("the parallel variant of a ranked kernel did not compile; the "
                      "serial one keeps running", exc_info=True)
        finally:
            self.parallel_ready.set()
            with _PENDING_LOCK:
                _PENDING.discard(threading.current_thread())

    def __call__(self, *args):
        return self.current(*args)

    def wait(self, timeout=None) -> bool:
        """Block until the parallel tier is compiled (or failed); whether it finished."""
        return self.parallel_ready.wait(timeout)


def pending() -> int:
    """How many background compiles are running."""
    with _PENDING_LOCK:
        return len(_PENDING)


def wait(timeout=None) -> None:
    """Block until every background compile has finished (each gets ``timeout``)."""
    with _PENDING_LOCK:
        threads = list(_PENDING)
    for t in threads:
        if t is not threading.current_thread():
            t.join(timeout)


atexit.register(wait)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=wait)
