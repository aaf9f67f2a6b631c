"""Parallel loops on absjit's own pool: chunk functions called through ``_pool_for``
(absjit/backends/numba_cpu/parallel/loop_kernels.py, render.CpuRenderer.pool_loop)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.numba_cpu.parallel import pool, threads
from absjit.backends.numba_cpu.render import _free_names
from tests.checks import assert_close

pytestmark = pytest.mark.skipif(not pool.available(),
                                reason="the native pool runs on Linux x86-64/AArch64")



@pytest.fixture(autouse=True)
def _pool_loops_on(monkeypatch):
    # these tests are about pool loops: a suite run with ABSJIT_POOL_LOOPS=0 still runs them
    monkeypatch.delenv("ABSJIT_POOL_LOOPS", raising=False)


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
PAR = {"parallel": True}


def _text(f, *args):
    return f.lower(*args).compile().as_text()


def _check(fn, *args, rtol=1e-6, atol=1e-6, **jit):
    f = absjit.jit(fn, backend="cpu", compiler_options=PAR, **jit)
    got = f(*args)
    want = absjit.jit(fn, backend="interpret", **jit)(*args)
    assert_close(got, want, rtol=rtol, atol=atol)
    return _text(f, *args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8,
                                   np.complex64, np.bool_])
def test_elementwise_loops_of_every_dtype(dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((37, 11)) * 50).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * x[::-1]
    text = _check(lambda a: (a * a + a) if np.dtype(dtype) != np.bool_ else a ^ a.T.T, x)
    assert "_pool_for(" in text and "prange(" not in text


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 17, 1000, 100_003])
def test_every_iteration_runs_once_whatever_the_size(n):
    # task boundaries: t * n // tasks, for sizes below, at and above the task count
    x = np.arange(n, dtype=np.int64)
    f = absjit.jit(lambda a: a * 3 + 1, compiler_options=PAR)
    np.testing.assert_array_equal(np.asarray(f(x)), x * 3 + 1)
    assert ("_pool_for(" in _text(f, x)) == (n > 1)  # one element: no loop


@pytest.mark.parametrize("name, fn, ref", [
    ("sum", lambda a: jnp.sum(jnp.sin(a), axis=1), lambda a: np.sin(a).sum(1)),
    ("max", lambda a: jnp.max(a * 2, axis=1), lambda a: (a * 2).max(1)),
    ("argmin", lambda a: jnp.argmin(a, axis=1), lambda a: a.argmin(1).astype(np.int32)),
    ("softmax", lambda a: absjit.nn.softmax(a, axis=-1),
     lambda a: np.exp(a - a.max(1, keepdims=True))
     / np.exp(a - a.max(1, keepdims=True)).sum(1, keepdims=True)),
    ("mean_var", lambda a: (jnp.mean(a, 1), jnp.var(a, 1)), lambda a: (a.mean(1), a.var(1))),
])
def test_row_reductions(name, fn, ref):
    x = np.random.default_rng(1).standard_normal((500, 300)).astype(np.float32)
    f = absjit.jit(fn)
    text = _text(f, x)
    assert "_pool_for(" in text and "prange(" not in text
    got = f(x)
    want = ref(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert_close(g, w, rtol=2e-5, atol=2e-5)


def test_ranked_sizes_and_scalars_are_passed_to_the_chunk():
    f = absjit.jit(lambda a, s: jnp.exp(a) * s - a[::-1], abstraction="ranked")
    for n in (5, 1000, 300_001):
        x = np.linspace(-2, 2, n, dtype=np.float32)
        assert_close(f(x, np.float32(1.5)), np.exp(x) * 1.5 - x[::-1], rtol=1e-5, atol=1e-5)
    assert "_pool_for(" in _text(f, x, np.float32(1.5))


def test_loops_inside_control_flow_and_pieces():
    def body(i, c):
        return jnp.tanh(c) * 0.5 + i

    def fn(x):
        y = lax.fori_loop(0, 3, body, x)
        return jnp.where(y > 0, y, -y).sum(axis=1)
    x = np.random.default_rng(2).standard_normal((300, 200)).astype(np.float32)
    text = _check(fn, x, rtol=1e-5, atol=1e-5)
    assert "_pool_for(" in text


def test_concurrent_callers_get_their_own_results():
    f = absjit.jit(lambda a: jnp.exp(a) - a)
    xs = [np.full(200_000, k, np.float32) for k in range(4)]
    for x in xs:
        f(x)
    errors = []

    def hammer(x):
        try:
            want = np.exp(x) - x
            for _ in range(100):
                np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    ts = [threading.Thread(target=hammer, args=(x,)) for x in xs]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not errors, errors


def test_loop_threads_follow_numbas_count_when_not_adaptive(monkeypatch):
    import numba
    monkeypatch.setattr(threads, "_enabled", lambda: False)
    monkeypatch.setattr(threads._POLICY, "loops_checked", None)
    f = absjit.jit(lambda a: a + 1, compiler_options=PAR)
    f(np.ones(10, np.float32))
    assert pool.loop_threads() == numba.config.NUMBA_NUM_THREADS
    assert threads.info()["pool"]["loop_threads"] == numba.config.NUMBA_NUM_THREADS


def test_free_names_are_the_kernels_values_in_order_of_use():
    lines = ["    for t_k in range(t_hi - t_lo):",
             "        j0 = t_lo + t_k",
             "        s1 = _exp_float32(arg1[j0]) * c0",
             "        b0[j0] = s1 + piece_abc(arg0, _n_a0) + np.float32(h_2)"]
    assert _free_names(lines, ("t_lo", "t_hi", "t_k"), {"piece_abc": None}) == \
        ["arg1", "c0", "b0", "arg0", "_n_a0", "h_2"]


_CACHED = r"""
import json, numpy as np, absjit, absjit.numpy as jnp
from absjit.backends.numba_cpu import stats
x = np.linspace(-3, 3, 300_000, dtype=np.float32).reshape(600, 500)
r = np.asarray(absjit.jit(lambda a: jnp.sum(jnp.exp(a) * 2, axis=1))(x))
assert np.allclose(r, (np.exp(x) * 2).sum(1), rtol=1e-5), r
print(json.dumps({k: stats[k] for k in ("compiles", "disk_hits")}))
"""


def test_a_kernel_with_pool_loops_loads_from_the_disk_cache(tmp_path):
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", _CACHED], env=env, capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    assert runs[0]["compiles"] >= 1
    assert runs[1] == {"compiles": 0, "disk_hits": 1}


def test_the_switch_is_read_at_each_compile(monkeypatch):
    # ABSJIT_POOL_LOOPS=0: prange loops on Numba's threads; the in-memory cache keeps
    # both programs apart
    x = np.linspace(0, 1, 5000, dtype=np.float32)

    def fn(a):
        return jnp.sqrt(a) + 0.75
    monkeypatch.setenv("ABSJIT_POOL_LOOPS", "0")
    assert "prange(" in _text(absjit.jit(fn, compiler_options=PAR), x)
    monkeypatch.delenv("ABSJIT_POOL_LOOPS")
    f = absjit.jit(fn, compiler_options=PAR)
    assert "_pool_for(" in _text(f, x)
    assert_close(f(x), np.sqrt(x) + 0.75, rtol=1e-6)


def _thread_masks():
    masks = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            masks[int(tid)] = os.sched_getaffinity(int(tid))
        except OSError:
            pass  # a thread that ended meanwhile
    return masks


def test_workers_are_kept_off_the_callers_core_on_a_busy_machine(monkeypatch):
    import numba
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        pytest.skip("one core")
    f = absjit.jit(lambda a: jnp.exp(a) + 2.5)
    x = np.ones(300_000, np.float32)
    f(x)
    monkeypatch.setattr(threads._POLICY, "before_pool_loops", lambda: None)
    pool.set_keep_off(True)  # what the thread policy sets while others keep cores busy
    try:
        f(x)
        # every worker: the process's cores but one (the caller's at the last job)
        pinned = {t: m for t, m in _thread_masks().items()
                  if m < allowed and len(m) == len(allowed) - 1}
        assert len(pinned) >= 2 * numba.config.NUMBA_NUM_THREADS - 1
        assert len({frozenset(allowed - m) for m in pinned.values()}) == 1
        assert threads.info()["pool"]["keep_off_caller"]
    finally:
        pool.set_keep_off(False)
    f(x)  # idle again: every core
    now = _thread_masks()
    assert all(now[t] == allowed for t in pinned if t in now)


def test_a_failing_task_raises_after_the_loop_joins():
    # generated chunks can fail only to allocate a scratch array; the kernel raises
    # MemoryError instead of returning what the other tasks computed
    import numba
    from absjit.backends.numba_cpu.parallel.loop_kernels import _pool_for
    assert pool.ensure()

    @numba.njit
    def chunk(lo, hi, out, big):
        for i in range(lo, hi):
            out[i] = np.empty(big, np.float64).size if i == 77 else i

    @numba.njit
    def kernel(out, big):
        _pool_for(chunk, out.shape[0], (out, big))
        return out.sum()
    out = np.zeros(100)
    assert kernel(out, 1) == sum(range(100)) - 76
    with pytest.raises(MemoryError, match="parallel loop"):
        kernel(out, 1 << 56)  # 512 PiB: more than any address space, so malloc fails


# -- reductions of every axis, in parts on the pool -----------------------------------------
WHOLE = [
    ("sum, sum of squares", lambda a: (jnp.sum(a), jnp.sum(a * a))),
    ("max, min", lambda a: (jnp.max(a), jnp.min(a))),
    ("argmax, argmin", lambda a: (jnp.argmax(a), jnp.argmin(a))),
    ("mean of a product", lambda a: jnp.mean(a * 1.5)),
    ("prod of signs", lambda a: jnp.prod(jnp.sign(a) + (a == 0))),  # exact: +-1
]


def _part_cases():
    """64-bit dtypes on the long vector are the slow tier (their 2-D cases stay)."""
    for dt in (np.float32, np.float64, np.int32, np.int64):
        for shape in ((1_000_003,), (700, 301)):
            slow = np.dtype(dt).itemsize == 8 and len(shape) == 1
            yield pytest.param(dt, shape, id=f"{np.dtype(dt).name}-{len(shape)}d",
                               marks=pytest.mark.slow if slow else ())


@pytest.mark.parametrize("dtype, shape", list(_part_cases()))
@pytest.mark.parametrize("name, fn", WHOLE, ids=[w[0] for w in WHOLE])
def test_reductions_of_every_axis_run_in_parts(name, fn, dtype, shape):
    absjit.config.update("enable_x64", True)  # (reset after each test)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    f = absjit.jit(fn)
    text = _text(f, x)
    assert "_pool_for(" in text
    tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    assert_close(f(x), absjit.jit(fn, backend="interpret")(x), rtol=tol, atol=tol)


def test_arg_reductions_in_parts_keep_the_first_extremum_and_the_first_nan():
    x = np.zeros(1_000_000, np.float32)
    x[[123_456, 654_321, 999_999]] = 7  # ties in different parts: the first wins
    x[[5, 700_000]] = -7
    f = absjit.jit(lambda a: (jnp.argmax(a), jnp.argmin(a), jnp.max(a)))
    assert "_pool_for(" in _text(f, x)
    assert [int(v) for v in f(x)[:2]] == [123_456, 5]
    x[[400_000, 800_000]] = np.nan  # NaN wins, its first occurrence
    got = f(x)
    assert [int(v) for v in got[:2]] == [400_000, 400_000] and np.isnan(got[2])


def test_a_sum_in_parts_has_the_same_bits_on_any_thread_count_and_without_the_pool(
        monkeypatch):
    # the parts depend on the shape alone: 1, 2 or 5 threads, or no pool at all
    # (float64: its sum shows the order of the additions in its last bits)
    absjit.config.update("enable_x64", True)  # (reset after each test)
    x = np.random.default_rng(4).standard_normal(2_000_001)

    def fn(a):
        return jnp.sum(a), jnp.sum(jnp.exp(a * 0.1)), jnp.max(a), jnp.argmax(a)
    f = absjit.jit(fn)
    assert "_pool_for(" in _text(f, x)
    f(x)
    monkeypatch.setattr(threads._POLICY, "before_pool_loops", lambda: None)
    results = []
    for n in (1, 2, 5):
        pool.set_loop_threads(n)
        results.append([np.asarray(v).tobytes() for v in f(x)])
    pool.set_loop_threads(threads._POLICY._available())
    serial = absjit.jit(fn, compiler_options={"parallel": False})
    assert "_pool_for(" not in _text(serial, x)
    results.append([np.asarray(v).tobytes() for v in serial(x)])
    assert all(r == results[0] for r in results)
    # and close to NumPy's sum
    one_loop = float(np.add.reduce(x.astype(np.float64)))
    assert np.isclose(np.frombuffer(results[0][0])[0], one_loop, rtol=1e-12)
