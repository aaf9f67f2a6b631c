"""The cpu backend's threads: a fork-safe layer and a thread count that yields to other
processes (``absjit/backends/numba_cpu/parallel/threads.py``)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu.parallel import threads

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


@pytest.mark.parametrize("available, others, want", [
    (2, 0.0, 2), (2, 0.25, 2), (2, 0.4, 1), (2, 0.7, 1), (2, 1.0, 1), (2, 3.5, 1),
    (8, 0.0, 8), (8, 1.0, 7), (8, 2.29, 6), (8, 2.5, 5), (8, 20.0, 1), (1, 0.0, 1),
])
def test_choose_threads(available, others, want):
    assert threads.choose_threads(available, others) == want


class FakeMachine:
    """``/proc/stat`` and our process's CPU time, advanced by hand."""

    def __init__(self):
        self.now, self.busy, self.own = 0.0, 0.0, 0.0

    def read(self):
        return self.busy, self.own

    def clock(self):
        return self.now

    def run(self, seconds, others, ours):
        self.now += seconds
        self.busy += seconds * (others + ours)
        self.own += seconds * ours


def test_load_monitor_counts_only_other_processes():
    m = FakeMachine()
    mon = threads.LoadMonitor(read=m.read, clock=m.clock, interval=0.1)
    assert mon.due()
    assert mon.sample() == 0.0  # the first sample only starts a window
    m.run(0.05, others=1.0, ours=2.0)
    assert not mon.due()  # not yet a whole window
    m.run(0.05, others=1.0, ours=2.0)
    assert mon.due()
    assert mon.sample() == pytest.approx(1.0)  # our own two busy threads do not count
    m.run(0.5, others=0.0, ours=2.0)
    assert mon.sample() == pytest.approx(0.0)
    m.run(0.2, others=2.0, ours=0.0)
    assert mon.sample() == pytest.approx(2.0)


def test_load_monitor_without_proc_stat_uses_the_load_average(monkeypatch):
    monkeypatch.setattr(os, "getloadavg", lambda: (3.5, 1.0, 1.0))
    mon = threads.LoadMonitor(read=lambda: (None, 0.0))
    assert mon.sample() == pytest.approx(2.5)


def test_guard_leaves_serial_kernels_alone():
    def kernel(x):
        return x
    assert threads.guard(kernel, parallel=False, blas=False) is kernel
    assert threads.guard(kernel, parallel=True, blas=False).__wrapped__ is kernel


@pytest.fixture
def busy_machine(monkeypatch):
    """The policy sees other processes using ``m.others`` cores."""
    m = FakeMachine()
    m.others = 5.0
    mon = threads.LoadMonitor(read=m.read, clock=m.clock, interval=0.1)
    mon.sample()  # the first window starts here

    def sample(orig=mon.sample):
        m.run(1.0, others=m.others, ours=0.0)
        return orig()
    monkeypatch.setattr(mon, "sample", sample)
    monkeypatch.setattr(threads._POLICY, "monitor", mon)
    monkeypatch.setattr(mon, "due", lambda: True)
    monkeypatch.setattr(threads._POLICY, "threads", None)
    yield m
    # restore every thread count the policy may have changed
    import numba
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    threads._POLICY.local.n = None
    threads._set_blas_threads(10**6)
    threads._POLICY.blas_threads = None


def test_parallel_kernel_yields_to_busy_cores(busy_machine, monkeypatch):
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one core: nothing to give up")
    monkeypatch.setenv("ABSJIT_POOL_LOOPS", "0")  # prange loops on Numba's threads
    f = absjit.jit(lambda x: jnp.sin(x) * 2, compiler_options={"parallel": True})
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * 2, rtol=1e-6)
    assert "prange(" in f.lower(x).compile().as_text()
    assert numba.get_num_threads() == 1
    assert threads.info()["threads"] == 1
    busy_machine.others = 0.0  # the machine became idle: every thread again
    f(x)
    assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS


def test_pool_loops_keep_every_thread_on_busy_cores(busy_machine):
    # The pool's sleeping workers are put on a core when woken, busy or not: one per
    # core ran selu as fast with 1 or 2 busy processes as on an idle machine.
    from absjit.backends.numba_cpu.parallel import pool
    if not pool.ensure():
        pytest.skip("no native pool on this platform")
    f = absjit.jit(lambda x: jnp.cos(x) * 2, compiler_options={"parallel": True})
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    threads._POLICY.loops_checked = None
    np.testing.assert_allclose(np.asarray(f(x)), np.cos(x) * 2, rtol=1e-6)
    assert "_pool_for(" in f.lower(x).compile().as_text()
    assert pool.loop_threads() == threads.info()["max_threads"]


def test_blas_product_yields_to_busy_cores(busy_machine):
    f = absjit.jit(lambda a, b: jnp.maximum(a @ b, 0))
    a = np.ones((8, 8), np.float32)
    np.testing.assert_allclose(np.asarray(f(a, a)), np.maximum(a @ a, 0))
    assert threads.info()["blas_threads"] == 1
    libs = threads._BLAS_SETTERS
    assert libs, "no OpenBLAS found in this process"


def test_im2col_convolution_yields_to_busy_cores(busy_machine):
    """A convolution lowered to im2col + BLAS calls BLAS inside its kernel: the policy
    runs before it as before a dot (an unguarded 2-thread product on a busy core was
    measured 18x slower)."""
    from absjit import lax
    from absjit.backends.numba_cpu.lowering import lower_conv
    x = np.ones((2, 8, 16, 16), np.float32)
    w = np.ones((8, 8, 3, 3), np.float32)
    assert 2 * 8 * 16 * 16 * 8 * 9 >= lower_conv.BLAS_MIN_MACS  # the im2col path
    f = absjit.jit(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME"))
    threads._POLICY.blas_threads = None
    out = np.asarray(f(x, w))
    assert "_gemm_rows(" in f.lower(x, w).compile().as_text()
    assert out[0, 0, 5, 5] == 72.0 and out[0, 0, 0, 0] == 32.0
    assert threads.info()["blas_threads"] == 1


def _run_script(code, timeout=240, env=None, extra=""):
    """Run ``code`` (then ``extra``) in a fresh interpreter; a hang is a failure, not a
    stuck suite."""
    full_env = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    code = textwrap.dedent(code) + textwrap.dedent(extra)
    try:
        out = subprocess.run([sys.executable, "-c", code], env=full_env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung (killed after {timeout} s): {e.stdout} {e.stderr}")
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


_FORK_SCRIPT = """
    import multiprocessing as mp, os, numpy as np, absjit, absjit.numpy as jnp
    from absjit.backends.numba_cpu.parallel import threads
    f = absjit.jit(lambda x: jnp.exp(x) + 1, compiler_options={"parallel": True})
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    want = np.exp(x) + 1
    assert np.allclose(np.asarray(f(x)), want)
    assert "_pool_for(" in f.lower(x).compile().as_text()  # on absjit's pool
    # and a prange loop on Numba's threads
    os.environ["ABSJIT_POOL_LOOPS"] = "0"
    g = absjit.jit(lambda x: jnp.sum(jnp.exp(x), axis=1), compiler_options={"parallel": True})
    x2 = x.reshape(100, 10)
    assert np.allclose(np.asarray(g(x2)), np.exp(x2).sum(1))
    assert "prange(" in g.lower(x2).compile().as_text()
    del os.environ["ABSJIT_POOL_LOOPS"]
    print("layer", threads.info()["layer"])
    pid = os.fork()
    if pid == 0:  # the child runs the parallel kernels the parent already ran
        ok = np.allclose(np.asarray(f(x)), want) and \
            np.allclose(np.asarray(g(x2)), np.exp(x2).sum(1))
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    print("child status", status)

    def work(k):
        return float(np.asarray(f(x + k)).sum())

    with mp.get_context("fork").Pool(2) as pool:
        got = pool.map(work, range(4))
    assert np.allclose(got, [float((np.exp(x + k) + 1).sum()) for k in range(4)])
    print("pool ok")
"""


def test_fork_after_a_parallel_kernel():
    out = _run_script(_FORK_SCRIPT)
    assert "child status 0" in out and "pool ok" in out, out
    assert "layer tbb" in out or "layer workqueue" in out, out


def test_without_tbb_concurrent_callers_and_fork_are_safe():
    # workqueue (the fallback) aborts the process when two threads launch parallel
    # kernels at once; absjit runs them one at a time
    out = _run_script("""
        from absjit.backends.numba_cpu.parallel import threads
        threads._tbb_loads = lambda: False
        import threading, numpy as np, absjit, absjit.numpy as jnp
        # a prange loop, and a loop on absjit's pool
        import os
        os.environ["ABSJIT_POOL_LOOPS"] = "0"
        f = absjit.jit(lambda x: jnp.sum(jnp.sqrt(x), axis=1) * 3,
                       compiler_options={"parallel": True})
        x = np.arange(20000, dtype=np.float32).reshape(200, 100)
        f(x)
        assert "prange(" in f.lower(x).compile().as_text()
        del os.environ["ABSJIT_POOL_LOOPS"]
        p = absjit.jit(lambda x: jnp.sqrt(x) * 3, compiler_options={"parallel": True})
        p(x)
        errors = []

        def hammer():
            try:
                for _ in range(200):
                    assert np.allclose(np.asarray(f(x)), np.sqrt(x).sum(1) * 3)
                    assert np.allclose(np.asarray(p(x)), np.sqrt(x) * 3)
            except Exception as e:
                errors.append(e)
        ts = [threading.Thread(target=hammer) for _ in range(4)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert not errors, errors
        print("layer", threads.info()["layer"])
    """, extra=_FORK_SCRIPT)
    assert "layer workqueue" in out and "child status 0" in out and "pool ok" in out, out


def test_user_chosen_layer_is_kept():
    out = _run_script("""
        import numpy as np, absjit, absjit.numpy as jnp
        from absjit.backends.numba_cpu.parallel import threads
        f = absjit.jit(lambda x: x * 2, compiler_options={"parallel": True})
        f(np.ones(10, np.float32))
        print("layer", threads.info()["layer"])
    """, env={"NUMBA_THREADING_LAYER": "workqueue", "ABSJIT_POOL_LOOPS": "0"})
    assert "layer workqueue" in out, out


def test_blas_threads_are_set_through_threadpoolctl():
    from threadpoolctl import threadpool_info
    threads._set_blas_threads(1)
    try:
        blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
        assert blas and all(lib["num_threads"] == 1 for lib in blas)
    finally:
        threads._set_blas_threads(10**6)
        threads._POLICY.blas_threads = None
    assert threads._BLAS_SETTERS and all(initial >= 1 for _, initial in threads._BLAS_SETTERS)
