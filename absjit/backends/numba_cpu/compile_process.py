"""Numba compiles in a separate process, so tier 0 keeps the caller's interpreter.

Numba's compiler is Python: a compile in a background thread holds the GIL for most of
its run, and every tier-0 call the user makes meanwhile waits for it. With
``config.compile_process`` on (``ABSJIT_COMPILE_PROCESS``), the background thread hands
each generated function to a worker process (:mod:`.compile_worker`, one per process,
started at the first tiered miss expected to compile for several seconds) and waits on
a pipe, without the GIL, while the
worker compiles. The worker answers with what Numba's own disk cache stores for a
function (``CompileResult._reduce()``: its object code, environment and signature),
which the caller links in about a millisecond; the disk cache, when on, then saves it
exactly as after a compile here.

A function the worker cannot send back (object-mode blocks, dynamic globals: Numba
cannot cache those either), a worker that exits or fails to start, and a forked child
all fall back to compiling in the calling thread; a worker that died is not restarted.
Synchronous compiles (tiering off, ``lower().compile()``) never use the worker.
"""
from __future__ import annotations

import logging
import os
import pickle
import struct
import subprocess
import sys
import threading

from .. import background

__all__ = ["enabled", "running", "start", "compile_remote", "WORKER_MIN_SECONDS",
           "Unavailable", "NumbaRefused", "read_message", "write_message"]

log = logging.getLogger("absjit.compile_process")

_HEAD = struct.Struct("<Q")


class Unavailable(Exception):
    """This function is compiled in the calling thread instead (the reason is the
    message)."""


class NumbaRefused(Exception):
    """Numba could not compile the source (the message is Numba's)."""


def write_message(stream, obj) -> None:
    _write_bytes(stream, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _write_bytes(stream, data: bytes) -> None:
    stream.write(_HEAD.pack(len(data)) + data)
    stream.flush()


def read_message(stream):
    head = _read_exactly(stream, _HEAD.size)
    return pickle.loads(_read_exactly(stream, _HEAD.unpack(head)[0]))


def _read_exactly(stream, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the compile worker closed its pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


_state = {"proc": None, "dead": None, "pid": os.getpid()}
_LOCK = threading.Lock()


def enabled() -> bool:
    from ...config import config
    return bool(config.compile_process) and _state["dead"] is None


#: Programs expected to compile for at least this long start the worker (measured on
#: 2 cores: the worker's start delays the compiled tier by ~0.5 s; for a 4 s compile
#: that is more than tier 0 gains from keeping the GIL, for 7-14 s compiles tier 0
#: calls ran 1.6-3.3x faster than beside a compiling thread).
WORKER_MIN_SECONDS = 5.0


def running() -> bool:
    """Whether the worker has been started in this process and is usable."""
    if not enabled() or _state["pid"] != os.getpid():
        return False
    proc = _state["proc"]
    return proc is not None and proc.poll() is None


def start() -> None:
    """Start the worker now (it imports Numba while the caller plans)."""
    with _LOCK:
        _start_locked()


def _start_locked():
    if _state["pid"] != os.getpid():  # a forked child: the parent's worker is not ours
        _state.update(proc=None, pid=os.getpid())
    proc = _state["proc"]
    if proc is not None and proc.poll() is None:
        return proc
    if proc is not None:
        _state["dead"] = f"the compile worker exited with status {proc.returncode}"
        raise Unavailable(_state["dead"])
    if _state["dead"] is not None:
        raise Unavailable(_state["dead"])
    exe = sys.executable or ""
    if not os.path.basename(exe).lower().startswith(("python", "pypy")):
        # embedded interpreters (a server binary, a frozen app) cannot run ``-m``
        _state["dead"] = f"{exe!r} does not look like a Python interpreter"
        raise Unavailable(_state["dead"])
    env = dict(os.environ, ABSJIT_TIERING="0", ABSJIT_COMPILE_PROCESS="0")
    # The worker imports this very absjit, however this process found it.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    try:
        proc = subprocess.Popen(
            [exe, "-m", "absjit.backends.numba_cpu.compile_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, close_fds=True)
    except OSError as e:
        _state["dead"] = f"the compile worker could not start ({e})"
        raise Unavailable(_state["dead"]) from None
    _state["proc"] = proc
    return proc


def compile_remote(spec: dict):
    """The pickled payload of ``CompileResult._rebuild`` for one function (see
    :mod:`.compile_worker` for ``spec``); raises :class:`Unavailable` when the caller
    must compile it itself, or :class:`NumbaRefused` when Numba refused the source."""
    try:
        data = pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001 - e.g. a type Numba cannot pickle
        raise Unavailable(f"its description does not pickle ({type(e).__name__})") from None
    with _LOCK:
        proc = _start_locked()
        try:
            _write_bytes(proc.stdin, data)
            kind, *rest = read_message(proc.stdout)  # waits without the GIL
        except (OSError, EOFError, pickle.UnpicklingError) as e:
            _state["dead"] = f"the compile worker stopped ({type(e).__name__}: {e})"
            log.debug("%s; compiling in this process from now on", _state["dead"])
            _kill(proc)
            raise Unavailable(_state["dead"]) from None
    if kind == "ok":
        return rest[0]
    if kind == "numba-error":
        raise NumbaRefused(rest[0])
    raise Unavailable(rest[0])


def _kill(proc) -> None:
    try:
        proc.kill()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):  # pragma: no cover - already gone
        pass
    for stream in (proc.stdin, proc.stdout):
        try:
            stream.close()
        except OSError:  # a broken pipe while flushing
            pass


def _after_fork_in_child() -> None:
    global _LOCK
    _LOCK = threading.Lock()
    _state.update(proc=None, pid=os.getpid())


def _kill_at_exit() -> None:
    proc = _state["proc"]
    if proc is not None and _state["pid"] == os.getpid():
        _state["dead"] = "the process is exiting"
        _kill(proc)


background.at_shutdown(_kill_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
