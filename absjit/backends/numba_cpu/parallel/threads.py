"""Threads for the cpu backend: a fork-safe threading layer, and a thread count that
yields to other work on the machine.

**Layer.** Numba's ``prange`` loops run on a threading layer chosen once per process.
GNU OpenMP (``omp``, what Numba picks on Linux when TBB is missing) is not fork-safe: a
child forked after a parallel kernel ran is killed when it runs one, and a
``multiprocessing`` fork pool hangs. absjit therefore asks for ``tbb`` (a dependency of
the package on the platforms it has wheels for), which survives ``fork`` and is safe for
concurrent callers. Without TBB it uses ``workqueue``, which is fork-safe but aborts
the process when two threads launch parallel kernels at once, so absjit's parallel
kernels then run one at a time (a lock). A layer the user chose (``NUMBA_THREADING_LAYER``
or ``numba.config.THREADING_LAYER``) is left alone.

**Thread count.** A parallel kernel that splits its work over every core while other
processes keep those cores busy waits for its slowest thread: on a busy machine it is
many times slower than running on one thread. Before a parallel kernel or a BLAS
product runs (at most every :data:`CHECK_INTERVAL` seconds), absjit measures how many
cores *other* processes used since the last check (the machine's busy time from
``/proc/stat`` less this process's CPU time; the 1-minute load average where there is no
``/proc/stat``) and uses the cores left free, at least one (:func:`choose_threads`).
Inside a Dask worker it also uses at most the worker's share of its ``nthreads`` (the
cores Dask gave it) among the tasks it runs at the moment (:func:`worker_threads`), so
N worker processes never start N all-core pools. The
same count applies to Numba's threads (per calling thread, ``numba.set_num_threads``)
and to the BLAS libraries' threads (OpenBLAS via SciPy and NumPy), and absjit never runs
a ``prange`` kernel and a multi-threaded BLAS product in the same kernel, so the two
pools never spin against each other. Parallel loops run on absjit's own pool where it
runs (:mod:`.loop_kernels`), on every available core whatever the load (its sleeping
workers are woken straight onto a core); the count above then applies only to ``prange``
loops (``ABSJIT_POOL_LOOPS=0``, or platforms without the pool). Large products run as
blocks of the result on absjit's own pool (:mod:`.pool`, :func:`.blas_kernels._pgemm_pool`), taken one at a
time, each a BLAS call with BLAS held at one thread; they use every available thread,
since a thread that another process slows down takes fewer blocks, where OpenBLAS's own
fixed split would wait for it; and since the pool's idle threads sleep rather than
spin, on a busy machine they use one more thread per core other processes take (up to
twice the cores: the scheduler shares a core between threads). ``ABSJIT_ADAPTIVE_THREADS=0`` turns the adaptation off (every kernel uses
``NUMBA_NUM_THREADS`` threads and BLAS keeps its own setting).

>>> from absjit.backends.numba_cpu.parallel import threads
>>> threads.choose_threads(available=2, others_busy=1.0)
1
"""
from __future__ import annotations

import ctypes
import logging
import math
import os
import sys
import threading
import time

__all__ = ["adaptive", "choose_threads", "pool_threads", "configure_layer", "guard", "info", "LoadMonitor",
           "CHECK_INTERVAL", "worker_threads", "tbb_library_paths"]

log = logging.getLogger("absjit.threads")

#: Seconds between two measurements of the machine's load (the window they average).
CHECK_INTERVAL = 0.1
#: Cores other processes must use (in a window) before one of ours is given up; below
#: it, the noise of an idle machine (daemons, our own Python) does not cost a thread.
SLACK = 0.3

_LAYER_LOCK = threading.Lock()
_layer = None            # the layer absjit asked for ("tbb", "workqueue") or the user's
_serialize = False       # workqueue: one parallel kernel at a time
_RUN_LOCK = threading.Lock()


def choose_threads(available: int, others_busy: float, slack: float = SLACK) -> int:
    """How many threads a parallel kernel should use.

    Parameters
    ----------
    available : int
        Threads the kernel may use at most (``NUMBA_NUM_THREADS``, the cores this
        process may run on).
    others_busy : float
        Cores that other processes kept busy recently (0.0 on an idle machine).
    slack : float
        Busy cores ignored as noise before a thread is given up.

    Returns
    -------
    int
        ``available`` less the cores others use (rounded up once past ``slack``), at
        least 1.

    Examples
    --------
    >>> choose_threads(2, 0.05), choose_threads(2, 0.7), choose_threads(8, 2.5)
    (2, 1, 5)
    """
    taken = max(0, math.ceil(others_busy - slack))
    return max(1, min(int(available), int(available) - taken))


def pool_threads(available: int, others_busy: float, slack: float = SLACK) -> int:
    """How many threads a blocked product may use on the native pool (:mod:`.pool`),
    whose idle threads sleep: every available one, plus one per core other processes
    keep busy (the scheduler shares a busy core between threads, so a process with
    more threads gets more of it, and tasks taken one at a time keep a thread that
    waits for a core from holding the rest back), at most twice ``available``.

    Examples
    --------
    >>> pool_threads(2, 0.1), pool_threads(2, 1.0), pool_threads(2, 2.0), pool_threads(2, 7)
    (2, 3, 4, 4)
    """
    taken = max(0, math.ceil(others_busy - slack))
    return max(1, min(2 * int(available), int(available) + taken))


def worker_threads(nthreads: int, executing: int) -> int:
    """Threads one kernel may use in a Dask worker that has ``nthreads`` threads (the
    cores Dask gave it) while it runs ``executing`` tasks: an equal share, at least 1.

    Examples
    --------
    >>> worker_threads(1, 1), worker_threads(4, 1), worker_threads(4, 3)
    (1, 4, 1)
    """
    return max(1, int(nthreads) // max(1, int(executing)))


def _dask_worker_cap():
    """:func:`worker_threads` for the Dask worker running this code, or None outside
    one (Dask is never imported here: only a process that has it loaded can be one)."""
    if "distributed" not in sys.modules:
        return None
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        return None
    state = getattr(worker, "state", worker)
    nthreads = getattr(state, "nthreads", None) or getattr(worker, "nthreads", None)
    if not nthreads:
        return None
    return worker_threads(nthreads, getattr(state, "executing_count", 1))


def _proc_stat_busy():
    """Seconds of CPU time the whole machine has spent busy since boot, or None."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != b"cpu":
        return None
    vals = [int(v) for v in fields[1:]]
    # user nice system idle iowait irq softirq steal (guest is counted in user)
    busy = sum(vals[:8]) - vals[3] - (vals[4] if len(vals) > 4 else 0)
    return busy / _CLK_TCK


try:
    _CLK_TCK = os.sysconf("SC_CLK_TCK")
except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
    _CLK_TCK = 100


class LoadMonitor:
    """Measures how many cores other processes keep busy, from the change in the
    machine's busy time less this process's own CPU time over a window.

    ``read`` and ``clock`` are injectable for tests: ``read()`` returns
    ``(machine busy seconds or None, this process's CPU seconds)``.
    """

    def __init__(self, read=None, clock=time.monotonic, interval=CHECK_INTERVAL):
        self._read = read or (lambda: (_proc_stat_busy(), time.process_time()))
        self._clock = clock
        self.interval = interval
        self._last = None  # (wall, machine busy, own cpu)
        self.others_busy = 0.0

    def sample(self) -> float:
        """Update and return ``others_busy`` (cores used by other processes)."""
        now = self._clock()
        busy, own = self._read()
        if busy is None:  # no /proc/stat: the load average, less our own thread
            try:
                self.others_busy = max(0.0, os.getloadavg()[0] - 1.0)
            except (OSError, AttributeError):
                self.others_busy = 0.0
            return self.others_busy
        last, self._last = self._last, (now, busy, own)
        if last is not None and now > last[0]:
            self.others_busy = max(0.0, ((busy - last[1]) - (own - last[2]))
                                   / (now - last[0]))
        return self.others_busy

    def due(self) -> bool:
        return self._last is None or self._clock() - self._last[0] >= self.interval


def _enabled() -> bool:
    return os.environ.get("ABSJIT_ADAPTIVE_THREADS", "1").strip().lower() not in (
        "0", "false", "no", "off")


def adaptive() -> bool:
    """Whether absjit sets thread counts (``ABSJIT_ADAPTIVE_THREADS`` is not ``0``);
    without it products are not run as blocks, so BLAS keeps the user's setting."""
    return _enabled()


def configure_layer() -> str:
    """Ask Numba for a fork-safe threading layer before its first parallel kernel:
    ``tbb`` when it loads, else ``workqueue`` (parallel kernels then run one at a time).
    A layer the user set is kept. Returns the layer asked for."""
    global _layer, _serialize
    if _layer is not None:
        return _layer
    with _LAYER_LOCK:
        if _layer is not None:
            return _layer
        import numba
        from numba.np.ufunc import parallel as npp
        chosen = str(numba.config.THREADING_LAYER)
        if not getattr(npp, "_is_initialized", False):
            _preload_tbb()  # from a venv's lib/, whatever layer was asked for
        if getattr(npp, "_is_initialized", False):
            chosen = numba.threading_layer()  # already running: nothing to choose
        elif chosen == "default" and not os.environ.get("NUMBA_THREADING_LAYER"):
            chosen = "tbb" if _tbb_loads() else "workqueue"
            numba.config.THREADING_LAYER = chosen
        _serialize = chosen == "workqueue"
        _layer = chosen
        log.debug("absjit: Numba threading layer %s", chosen)
        return chosen


#: The TBB runtime Numba's ``tbbpool`` extension links against, by platform.
_TBB_NAMES = {"linux": "libtbb.so.12", "darwin": "libtbb.12.dylib", "win32": "tbb12.dll"}


def tbb_library_paths() -> list:
    """Where the ``tbb`` wheel put its runtime library, most specific first: the files
    its distribution lists, then ``lib/`` under this environment's prefix and the base
    interpreter's. In a virtual environment the wheel puts the library in the
    environment's ``lib/`` (``Library/bin`` on Windows), which the dynamic loader does
    not search, so Numba cannot find TBB by name there.

    Examples
    --------
    >>> all(p.endswith(("libtbb.so.12", "libtbb.12.dylib", "tbb12.dll"))
    ...     for p in tbb_library_paths())
    True
    """
    name = _TBB_NAMES.get(sys.platform)
    if name is None:
        return []
    found = []
    try:
        from importlib import metadata
        dist = metadata.distribution("tbb")
        for f in dist.files or ():
            if os.path.basename(str(f)) == name:
                found.append(os.path.normpath(str(dist.locate_file(f))))
    except Exception:  # noqa: BLE001 - no tbb distribution, or unreadable metadata
        pass
    for prefix in (sys.prefix, sys.base_prefix):
        for sub in ("lib", os.path.join("Library", "bin")):
            found.append(os.path.join(prefix, sub, name))
    seen = set()
    return [p for p in found if os.path.isfile(p) and not (p in seen or seen.add(p))]


def _preload_tbb() -> bool:
    """Load TBB's runtime by absolute path (globally), so that Numba's ``tbbpool``,
    which names it only by its soname, finds it already loaded. Returns whether a
    library was loaded; a TBB the loader finds by name is left to Numba."""
    name = _TBB_NAMES.get(sys.platform)
    if name is None:
        return False
    try:
        ctypes.CDLL(name)
        return False  # on the loader's path: nothing to do
    except OSError:
        pass
    for path in tbb_library_paths():
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            log.debug("absjit: loaded TBB from %s", path)
            return True
        except OSError:
            continue
    return False


def _tbb_loads() -> bool:
    try:
        from numba.np.ufunc import parallel as npp
        npp._check_tbb_version_compatible()
        from numba.np.ufunc import tbbpool  # noqa: F401
        return True
    except Exception:  # noqa: BLE001 - any import problem means no TBB
        return False


# -- the BLAS libraries' thread counts ---------------------------------------------------
# threadpoolctl finds the BLAS libraries loaded in this process (OpenBLAS, MKL, BLIS; on
# Linux, macOS and Windows) and sets their thread counts. Its controllers are made once
# per process (a search of the loaded libraries): never per call.
_BLAS_SETTERS = None


def blas_controllers() -> list:
    """threadpoolctl's controllers of the BLAS libraries loaded in this process (NumPy's
    and SciPy's are separate libraries); ``[]`` where threadpoolctl cannot run."""
    try:
        from threadpoolctl import ThreadpoolController
        return [lib for lib in ThreadpoolController().lib_controllers
                if lib.user_api == "blas"]
    except Exception:  # noqa: BLE001 - no control over BLAS threads, nothing worse
        return []


def _blas_libraries():
    """``[(set_num_threads, initial thread count)]`` for each BLAS loaded in this
    process."""
    return [(lib.set_num_threads, int(lib.num_threads)) for lib in blas_controllers()]


def _set_blas_threads(n):
    global _BLAS_SETTERS
    if _BLAS_SETTERS is None:
        import scipy.linalg.cython_blas  # noqa: F401 - loads the BLAS Numba's np.dot calls
        _BLAS_SETTERS = _blas_libraries()
    for setter, initial in _BLAS_SETTERS:
        setter(max(1, min(n, initial)))


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


#: Threads tier 0 may use now (the last count :func:`tier0_guard` chose): its block
#: evaluator (:mod:`.block_plan`) splits large loops between them.
TIER0 = {"threads": 1}


def tier0_guard(executable, compiling):
    """``executable`` (the NumPy interpreter, whose products run in NumPy's BLAS) with
    BLAS at the policy's thread count, one fewer while ``compiling()`` (a background
    compile takes a core): OpenBLAS spinning on a core another thread needs makes a
    product ten times slower. Reads the load without importing Numba or SciPy, so the
    first call on tier 0 does not wait for them."""
    if not _enabled():
        return executable
    state = {"n": None, "setters": None}
    cores = _cores()
    monitor = _POLICY.monitor

    def call(*buffers):
        if state["n"] is None or monitor.due():
            busy = monitor.sample() if monitor.due() else monitor.others_busy
            state["n"] = max(1, choose_threads(cores, busy) - (1 if compiling() else 0))
            TIER0["threads"] = state["n"]
            if state["setters"] is None:
                state["setters"] = _blas_libraries()  # NumPy's, loaded already
        n = state["n"]
        lowered = [(setter, initial) for setter, initial in state["setters"]
                   if n < initial]
        for setter, _ in lowered:
            setter(n)
        try:
            return executable(*buffers)
        finally:
            # The caller's own NumPy keeps its BLAS threads between calls (and after
            # the switch to the compiled tier, whose kernels set theirs).
            for setter, initial in lowered:
                setter(initial)
            if lowered:
                _POLICY.blas_threads = None
    call.__wrapped__ = executable
    return call


# -- the policy, applied before a parallel or BLAS kernel runs ---------------------------
class _Policy:
    def __init__(self):
        self.monitor = LoadMonitor()
        self.lock = threading.Lock()
        self.threads = None        # the count chosen at the last check
        self.blas_threads = None   # the count applied to BLAS
        self.local = threading.local()
        self.pid = os.getpid()
        self.worker_cap = None     # the Dask worker's share at the last check
        self.loops_checked = None  # when the pool loops' thread count was last set

    def _available(self):
        import numba
        available = max(1, min(int(numba.config.NUMBA_NUM_THREADS), _cores()))
        cap = _dask_worker_cap()
        self.worker_cap = cap
        return available if cap is None else min(available, cap)

    def current(self) -> int:
        if self.pid != os.getpid():  # a forked child starts measuring afresh
            self.__init__()
        if self.threads is None or self.monitor.due():
            with self.lock:
                if self.threads is None or self.monitor.due():
                    self.threads = choose_threads(self._available(),
                                                  self.monitor.sample())
        return self.threads

    def before_parallel(self):
        n = self.current()
        if getattr(self.local, "n", None) != n:
            import numba
            numba.set_num_threads(n)  # per calling thread in Numba
            self.local.n = n

    def before_blas(self):
        n = self.current()
        if self.blas_threads != n:
            _set_blas_threads(n)
            self.blas_threads = n

    def before_blas_blocks(self, parallel=True):
        """Before a kernel whose products run as blocks, each a single-threaded BLAS
        call taken one at a time (so a thread that another process slows down takes
        fewer of them instead of holding the product back), with BLAS at one thread.

        The blocks run on the native pool (:mod:`.pool`), whose idle threads sleep:
        every available thread, and on a machine other processes keep busy one more
        per core they take, up to twice as many (the scheduler shares a core between
        threads, not processes, and a thread waiting for a core no longer holds the
        others back). Where there is no pool, and for ``prange`` loops whose bodies
        call BLAS, Numba's threads run them, every available one (chunk size 1 set by
        :func:`guard`)."""
        if self.pid != os.getpid():
            self.__init__()
        n = self._available()
        from . import pool
        if pool.available():
            self.current()  # the load, measured at most every CHECK_INTERVAL
            pool.set_threads(pool_threads(n, self.monitor.others_busy))
            pool.set_keep_off(self.monitor.others_busy > SLACK)
        if parallel and getattr(self.local, "n", None) != n:
            import numba
            numba.set_num_threads(n)
            self.local.n = n
        if self.blas_threads != 1:
            _set_blas_threads(1)
            self.blas_threads = 1


    def before_pool_loops(self):
        """Before a kernel whose parallel loops run on the native pool: every available
        thread (re-read at most every :data:`CHECK_INTERVAL` seconds), whatever the
        load. The pool's idle threads sleep, and a woken one is put on a core at once,
        even one another process keeps busy; one thread per core was as fast with 1 or
        2 busy processes as on an idle machine (selu on 1e6 float32, 2 cores), while
        more threads than cores were 2x slower under load."""
        if self.pid != os.getpid():
            self.__init__()
        now = time.monotonic()
        if self.loops_checked is None or now - self.loops_checked > CHECK_INTERVAL:
            from . import pool
            if _enabled():
                n = self._available()
                self.current()  # the load, measured at most every CHECK_INTERVAL
                pool.set_keep_off(self.monitor.others_busy > SLACK)
            else:  # the user's thread count, as prange loops would use; never pinned
                import numba
                n = int(numba.config.NUMBA_NUM_THREADS)
                pool.set_keep_off(False)
            pool.set_loop_threads(n)
            self.loops_checked = now


_POLICY = _Policy()


def guard(dispatcher, parallel: bool, blas: bool, blas_blocks: bool = False,
          pool_loops: bool = False):
    """Wrap a compiled kernel so the thread policy runs before each call; the kernel
    itself when it neither runs ``prange`` loops nor calls BLAS (no overhead).
    ``blas_blocks``: the kernel runs products as blocks, each a single-threaded BLAS
    call, on the native pool (:func:`.blas_kernels._pgemm_pool`) or in Numba's threads
    (:func:`.blas_kernels._pgemm_prange`, and ``prange`` loops calling BLAS).
    ``pool_loops``: the kernel runs parallel loops on the native pool
    (:mod:`.loop_kernels`), on every available thread (:meth:`_Policy.before_pool_loops`).
    """
    if pool_loops:
        inner = guard(dispatcher, parallel, blas, blas_blocks)
        policy = _POLICY

        def call(*args):
            policy.before_pool_loops()
            return inner(*args)
        call.__wrapped__ = dispatcher
        return call
    if blas_blocks:
        return _guard_blocks(dispatcher, parallel)
    if not (parallel or blas) or not _enabled():
        if parallel and _serialize:
            def locked(*args):
                with _RUN_LOCK:
                    return dispatcher(*args)
            return locked
        return dispatcher
    policy = _POLICY
    if parallel:
        if _serialize:
            def call(*args):
                policy.before_parallel()
                with _RUN_LOCK:
                    return dispatcher(*args)
        else:
            def call(*args):
                policy.before_parallel()
                return dispatcher(*args)
    else:
        def call(*args):
            policy.before_blas()
            return dispatcher(*args)
    call.__wrapped__ = dispatcher
    return call


def _guard_blocks(dispatcher, parallel):
    import numba

    from . import pool
    policy = _POLICY

    from . import block_blas

    if not parallel and pool.ensure():  # blocks on the native pool only
        def call(*args):
            policy.before_blas_blocks(parallel=False)
            block_blas.ensure_chosen(pool.set_gemm64)  # once: which BLAS runs the blocks
            return dispatcher(*args)
        call.__wrapped__ = dispatcher
        return call

    def call(*args):
        policy.before_blas_blocks()
        if pool.built():
            block_blas.ensure_chosen(pool.set_gemm64)
        old = numba.set_parallel_chunksize(1)  # blocks taken one at a time
        try:
            if _serialize:
                with _RUN_LOCK:
                    return dispatcher(*args)
            return dispatcher(*args)
        finally:
            numba.set_parallel_chunksize(old)
    call.__wrapped__ = dispatcher
    return call


def info() -> dict:
    """The threading set-up: layer, adaptive or not, cores other processes use, the
    thread count chosen at the last check, and the products' pool (:mod:`.pool`:
    whether it runs here, the threads its products may use now, and which BLAS runs
    their blocks, :mod:`.block_blas`)."""
    import numba

    from . import block_blas, pool
    available = _POLICY._available()
    return {"layer_requested": _layer, "layer": (numba.threading_layer()
                                                 if _layer is not None and _is_running()
                                                 else None),
            "adaptive": _enabled(), "others_busy": round(_POLICY.monitor.others_busy, 2),
            "threads": _POLICY.threads, "blas_threads": _POLICY.blas_threads,
            "worker_threads": _POLICY.worker_cap,
            "max_threads": available,
            "pool": {"available": pool.available(), "built": pool.built(),
                     "threads": pool.threads(), "loop_threads": pool.loop_threads(),
                     "keep_off_caller": pool.keep_off(),
                     "block_blas": block_blas.choice()}}


def _is_running() -> bool:
    from numba.np.ufunc import parallel as npp
    return bool(getattr(npp, "_is_initialized", False))
