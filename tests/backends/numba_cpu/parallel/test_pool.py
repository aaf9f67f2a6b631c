"""The native task pool behind blocked products
(absjit/backends/numba_cpu/parallel/pool.py)."""
from __future__ import annotations

import ctypes
import threading

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu.parallel import pool, threads

pytestmark = pytest.mark.skipif(not pool.available(),
                                reason="the native pool runs on Linux x86-64/AArch64")

_TASK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)


def _recording_task():
    """A native-callable task (a ctypes callback) that records ``(t, ctx, thread)``."""
    seen = []
    lock = threading.Lock()

    def task(t, ctx):
        with lock:
            seen.append((t, ctx, threading.get_ident()))
    cb = _TASK(task)
    return cb, seen


@pytest.mark.parametrize("nthreads", [1, 2, 3, 8, 0])
@pytest.mark.parametrize("ntasks", [0, 1, 2, 17])
def test_every_task_runs_once(nthreads, ntasks):
    cb, seen = _recording_task()
    addr = ctypes.cast(cb, ctypes.c_void_p).value
    pool.run_python(addr, 1234, ntasks, nthreads)
    assert sorted(t for t, _, _ in seen) == list(range(ntasks))
    assert all(ctx == 1234 for _, ctx, _ in seen)
    if nthreads == 1 or ntasks <= 1:  # runs on the calling thread
        assert {tid for _, _, tid in seen} <= {threading.get_ident()}


def test_many_jobs_in_a_row_never_mix():
    """Jobs published back to back: each task of each job runs once with its own
    context (a worker late for one job never runs a task of the next with the old
    one)."""
    rng = np.random.default_rng(0)
    cb, seen = _recording_task()
    addr = ctypes.cast(cb, ctypes.c_void_p).value
    sizes = rng.integers(2, 12, 200)
    for job, n in enumerate(sizes):
        pool.run_python(addr, job, int(n), 4)
    by_job = {}
    for t, ctx, _ in seen:
        by_job.setdefault(ctx, []).append(t)
    assert sorted(by_job) == list(range(len(sizes)))
    for job, n in enumerate(sizes):
        assert sorted(by_job[job]) == list(range(n))


def test_concurrent_callers_get_their_own_products():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 1024)).astype(np.float32)
    bs = [rng.standard_normal((1024, 512 + 64 * i)).astype(np.float32) for i in range(4)]
    f = absjit.jit(lambda x, y: jnp.maximum(x @ y, 0))
    want = [np.maximum(a.astype(np.float64) @ b, 0) for b in bs]
    for b in bs:
        f(a, b)  # compile before the threads start
    errors = []

    def work(i):
        try:
            for _ in range(15):
                got = np.asarray(f(a, bs[i]))
                np.testing.assert_allclose(got, want[i], rtol=1e-4, atol=1e-3)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[0]


def test_pool_thread_count_follows_the_load():
    assert threads.pool_threads(4, 0.0) == 4
    assert threads.pool_threads(4, 0.2) == 4      # noise
    assert threads.pool_threads(4, 1.5) == 6
    assert threads.pool_threads(4, 64.0) == 8     # at most twice the cores
    assert threads.pool_threads(1, 3.0) == 2


def test_products_use_the_pool():
    f = absjit.jit(lambda x, y: x @ y)
    x = np.ones((100, 1000), np.float32)
    y = np.ones((1000, 2000), np.float32)
    text = f.lower(x, y).compile().as_text()
    assert "_pgemm_pool(" in text
    np.testing.assert_array_equal(np.asarray(f(x, y)), np.full((100, 2000), 1000.0))
    got = threads.info()["pool"]
    assert got["available"] and got["built"]
    assert 1 <= got["threads"] <= 2 * threads.info()["max_threads"]


_CACHED_PRODUCT = r"""
import json, numpy as np, absjit, absjit.numpy as jnp
from absjit.backends.numba_cpu import stats
a = np.ones((100, 1000), np.float32)
b = np.ones((1000, 2000), np.float32)
r = np.asarray(absjit.jit(lambda x, y: jnp.maximum(x @ y, 0))(a, b))
assert r.shape == (100, 2000) and (r == 1000).all()
print(json.dumps({k: stats[k] for k in ("compiles", "disk_hits")}))
"""


def test_a_kernel_with_a_blocked_product_loads_from_the_disk_cache(tmp_path):
    """The kernel reaches the pool by symbol name: a new process builds the pool before
    linking the cached kernel."""
    import json
    import os
    import subprocess
    import sys
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path), PYTHONPATH=root)
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", _CACHED_PRODUCT], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    assert runs[0]["compiles"] >= 1
    assert runs[1] == {"compiles": 0, "disk_hits": 1}
