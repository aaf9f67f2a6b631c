"""One background thread that compiles programs out of the caller's way.

Jobs are plain callables run in submission order by one daemon thread, started at the
first submission. A backend wraps each unit of real compiler work (one Numba function)
in :func:`step`; that is what makes the thread safe to leave behind:

* **exit** — :func:`shutdown` (registered with ``atexit``) drops the queued jobs, marks
  the thread cancelled and waits for the step in flight (at most one function's
  compile); the thread's next :func:`step` raises :class:`Cancelled`, so no compiler
  (LLVM) work runs while the interpreter finalises. A script never waits for a whole
  program's compile at exit.
* **fork** — before ``os.fork`` the forking thread takes the step lock (waiting for the
  function in flight), so the child never inherits a compiler lock held by a thread it
  does not have. In the child every registered lock is replaced (:func:`at_fork_reinit`),
  and the job that was running, with those queued, is queued again; the thread starts
  again at the child's next submission or :func:`ensure_running`.

Steps taken by other threads (a synchronous compile in the caller) share the lock, so
two threads never run Numba's compiler at once through absjit (Numba serialises them
anyway).
"""
from __future__ import annotations

import atexit
import collections
import contextlib
import logging
import os
import threading

__all__ = ["submit", "step", "Cancelled", "shutdown", "pending", "wait_idle",
           "at_fork_reinit", "at_shutdown", "ensure_running", "on_background_thread",
           "cancelled"]

log = logging.getLogger("absjit.background")


class Cancelled(Exception):
    """Raised by :func:`step` in the background thread once the process is exiting."""


_STEP = threading.RLock()
_COND = threading.Condition(threading.Lock())
_JOBS: collections.deque = collections.deque()
_state = {"thread": None, "current": None, "cancelled": False, "busy": False}
_REINIT: list = []  # callbacks run in a forked child
_AT_SHUTDOWN: list = []  # callbacks run at exit, before waiting for the step in flight


_GATE = threading.Lock()  # held by a fork waiting for the step in flight
_DEPTH = threading.local()


@contextlib.contextmanager
def step():
    """One unit of compiler work (hold no other absjit lock when entering it)."""
    depth = getattr(_DEPTH, "n", 0)
    if depth == 0:
        # A fork that waits for the step in flight holds the gate: new steps queue
        # behind it, so a thread compiling one function after another cannot starve it.
        with _GATE:
            pass
    with _STEP:
        _DEPTH.n = depth + 1
        try:
            if _state["cancelled"] and threading.current_thread() is _state["thread"]:
                raise Cancelled
            yield
        finally:
            _DEPTH.n = depth


def submit(job) -> None:
    """Run ``job()`` in the background thread after the jobs already queued."""
    with _COND:
        if _state["cancelled"]:
            return
        _JOBS.append(job)
        _start_locked()
        _COND.notify()


def ensure_running() -> None:
    """Start the thread again if queued jobs have none (in a forked child)."""
    if _JOBS and _state["thread"] is None:
        with _COND:
            if _JOBS and not _state["cancelled"]:
                _start_locked()
                _COND.notify()


def _start_locked() -> None:
    t = _state["thread"]
    if t is None or not t.is_alive():
        t = threading.Thread(target=_loop, name="absjit-compile", daemon=True)
        _state["thread"] = t
        t.start()


def _loop() -> None:
    me = threading.current_thread()
    while True:
        with _COND:
            while not _JOBS and not _state["cancelled"]:
                _COND.wait()
            if _state["cancelled"] or _state["thread"] is not me:
                return
            job = _JOBS.popleft()
            _state["current"], _state["busy"] = job, True
        try:
            job()
        except Cancelled:
            return
        except Exception:  # noqa: BLE001 - a job reports its own failures
            log.debug("a background compile job raised", exc_info=True)
        finally:
            with _COND:
                _state["current"], _state["busy"] = None, False
                _COND.notify_all()


def on_background_thread() -> bool:
    """Whether the caller is the background thread (not a synchronous compile)."""
    return threading.current_thread() is _state["thread"]


def cancelled() -> bool:
    """Whether the process is exiting (queued work is dropped)."""
    return _state["cancelled"]


def pending() -> int:
    """Jobs queued or running."""
    with _COND:
        return len(_JOBS) + int(_state["busy"])


def wait_idle(timeout=None) -> bool:
    """Block until no job is queued or running; whether that happened in time."""
    ensure_running()
    with _COND:
        return _COND.wait_for(lambda: not _JOBS and not _state["busy"], timeout)


def shutdown() -> None:
    """Drop queued jobs and let the running one stop at its next step (see above)."""
    with _COND:
        _state["cancelled"] = True
        _JOBS.clear()
        _COND.notify_all()
    for callback in _AT_SHUTDOWN:  # e.g. stop a compile worker the step waits on
        try:
            callback()
        except Exception:  # noqa: BLE001 - exit goes on
            log.debug("a shutdown hook raised", exc_info=True)
    with _STEP:  # the step in flight, if any, has finished
        pass


def at_fork_reinit(callback) -> None:
    """Call ``callback()`` in a forked child, after this module's own locks are new."""
    _REINIT.append(callback)


def at_shutdown(callback) -> None:
    """Call ``callback()`` at exit, after queued jobs are dropped and before waiting for
    the step in flight."""
    _AT_SHUTDOWN.append(callback)


def _before_fork() -> None:
    _GATE.acquire()
    _STEP.acquire()


def _after_fork_parent() -> None:
    _STEP.release()
    _GATE.release()


def _after_fork_child() -> None:
    global _STEP, _COND, _GATE
    _STEP = threading.RLock()
    _GATE = threading.Lock()
    _COND = threading.Condition(threading.Lock())
    job = _state["current"]
    if job is not None:  # its thread is gone: run it again from the start
        _JOBS.appendleft(job)
    _state.update(thread=None, current=None, busy=False)
    for callback in _REINIT:
        try:
            callback()
        except Exception:  # noqa: BLE001 - a child must not die in a fork hook
            log.debug("a fork hook raised", exc_info=True)


atexit.register(shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent,
                        after_in_child=_after_fork_child)
