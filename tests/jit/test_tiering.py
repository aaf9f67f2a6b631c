"""Tiered execution (``absjit.jit.tiering``): a miss runs on the NumPy interpreter while
the program compiles in the background, then calls switch to the compiled tier.

The rest of the suite runs with tiering off (``tests/conftest.py``); these tests turn
it on. Each builds a program no other test compiles (a distinct constant), so its
compile really happens in the background here.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax, random
from absjit.backends.interpret import InterpretExecutable
from absjit.backends.numba_cpu import NumbaExecutable
from absjit.config import ConfigError
from absjit.errors import CompilationError
from absjit.jit import tiering


@pytest.fixture(autouse=True)
def tiering_on():
    absjit.config.update("tiering", True)
    yield
    tiering.wait_all(120)
    absjit.config.update("tiering", False)


def _unique():
    """A constant no other test uses: its program misses the compile cache."""
    return float(np.random.default_rng(time.perf_counter_ns()).integers(1, 1 << 20)) + 0.5


def _entry(f):
    (entry,) = f._entry_cache.entries.values()
    return entry


def test_first_call_runs_tier0_then_switches_to_the_compiled_tier():
    c = _unique()
    f = absjit.jit(lambda x: jnp.tanh(x * c) + jnp.sum(x))
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    want = np.asarray(absjit.jit(lambda x: jnp.tanh(x * c) + jnp.sum(x),
                                 backend="interpret")(x))
    first = f(x)
    info = f.cache_info()
    assert info.entries[0].tier in ("interpret", "compiled")
    np.testing.assert_allclose(np.asarray(first), want, rtol=1e-6, atol=1e-6)
    assert tiering.wait_all(120)
    assert f.cache_info().entries[0].tier == "compiled"
    assert f.cache_info().entries[0].compile_seconds > 0
    entry = _entry(f)
    assert isinstance(entry.executable, NumbaExecutable)  # the wrapper is gone
    # hits after the switch go through a fast runner of the compiled executable
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-5, atol=1e-6)
    runner = next(iter(f._entry_cache.fast.values()))
    assert runner.__globals__.get("exe") is entry.executable


def test_tier0_result_is_the_interpreters_and_later_calls_the_kernels():
    c = _unique()
    f = absjit.jit(lambda x, y: (x @ y) * c)
    x = np.ones((8, 8), np.float32)
    out = f(x, x)
    exe = _entry(f).executable
    if isinstance(exe, tiering.TieredExecutable):
        assert isinstance(getattr(exe.tier0, "__wrapped__", exe.tier0), InterpretExecutable)
    np.testing.assert_allclose(np.asarray(out), 8 * c * np.ones((8, 8)), rtol=1e-6)
    tiering.wait_all(120)
    np.testing.assert_allclose(np.asarray(f(x, x)), 8 * c * np.ones((8, 8)), rtol=1e-6)


def test_long_scalar_loops_compile_before_the_first_call():
    c = _unique() * 1e-7
    f = absjit.jit(lambda x: lax.fori_loop(0, 200_000, lambda i, v: v * 0.5 + c, x))
    f(np.float32(1.0))
    assert f.cache_info().entries[0].tier == "compiled"  # the caller waited
    assert isinstance(_entry(f).executable, NumbaExecutable)


def test_cost_model_orders_programs_by_their_work():
    def jaxpr(fn, *args):
        return absjit.make_jaxpr(fn)(*args).jaxpr
    small = jaxpr(lambda x: x + 1, np.ones(10, np.float32))
    big = jaxpr(lambda x: x + 1, np.ones(10_000_000, np.float32))
    loop = jaxpr(lambda x: lax.fori_loop(0, 1000, lambda i, v: v + 1, x),
                 np.ones(10, np.float32))
    est = tiering.estimate_interpret_seconds
    assert est(small) < est(big)
    assert est(loop) > 200 * est(small)  # 1000 trips of an array op and a scalar one
    assert tiering.estimate_compile_seconds(loop) > tiering.estimate_compile_seconds(small) \
        > 0
    # the decision: a very long scalar loop waits for its compile (one of 20,000 steps
    # interprets in ~20 ms: it does not), the small program not
    long_loop = jaxpr(lambda x: lax.fori_loop(0, 2_000_000, lambda i, v: v * 0.5, x),
                      np.float32(1))
    short_loop = jaxpr(lambda x: lax.fori_loop(0, 20_000, lambda i, v: v * 0.5, x),
                       np.float32(1))
    frac = tiering.TIER0_FRACTION
    assert est(short_loop) < frac * tiering.estimate_compile_seconds(short_loop)
    assert est(long_loop) > frac * tiering.estimate_compile_seconds(long_loop)
    assert est(small) < frac * tiering.estimate_compile_seconds(small)


def test_an_interpreted_loop_stops_when_the_compiled_tier_is_ready():
    """A ``while_loop`` whose trip count only shows at run time: the model assumes a
    short one and runs tier 0, but the interpreter stops inside the loop once the
    compile finishes and the call runs compiled (interpreting 3e7 trips takes 10 s or
    more)."""
    c = np.float32(_unique() * 1e-9)

    def count(x):
        return lax.while_loop(lambda v: v[0] < 30_000_000,
                              lambda v: (v[0] + 1, v[1] + c), (jnp.int32(0), x))
    f = absjit.jit(count)
    t0 = time.perf_counter()
    n, total = f(np.float32(0.0))
    assert int(n) == 30_000_000
    assert time.perf_counter() - t0 < 90
    assert f.cache_info().entries[0].tier == "compiled"


def test_random_bits_equal_on_both_tiers():
    c = _unique()

    def draw(key):
        return random.normal(key, (1000,)) * c, random.randint(key, (50,), 0, 1000)
    f = absjit.jit(draw)
    key = random.PRNGKey(3)
    first = [np.asarray(a) for a in f(key)]
    tiering.wait_all(120)
    assert f.cache_info().entries[0].tier == "compiled"
    later = [np.asarray(a) for a in f(key)]
    np.testing.assert_array_equal(first[1], later[1])
    np.testing.assert_allclose(first[0], later[0], rtol=2e-6, atol=1e-6)


def test_a_failed_background_compile_warns_once_and_keeps_tier0(monkeypatch):
    from absjit.backends.base import get_backend
    cpu = get_backend("cpu")
    real = cpu.compile

    def broken(closed, options):  # every compile in the background thread fails
        if threading.current_thread().name == "absjit-compile":
            raise CompilationError("kernel refused for this test")
        return real(closed, options)
    c = _unique()
    monkeypatch.setattr(cpu, "compile", broken)
    f = absjit.jit(lambda x: x * c)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f(np.ones(4, np.float32))
        tiering.wait_all(120)
    np.testing.assert_allclose(np.asarray(out), c)
    msgs = [str(w.message) for w in caught if "could not be compiled" in str(w.message)]
    assert len(msgs) == 1 and "kernel refused for this test" in msgs[0], msgs
    assert f.cache_info().entries[0].tier == "interpret"
    np.testing.assert_allclose(np.asarray(f(np.ones(4, np.float32))), c)


def test_lower_compile_and_tiering_off_stay_synchronous():
    c = _unique()
    g = absjit.jit(lambda x: x - c)
    compiled = g.lower(np.ones(3, np.float32)).compile()
    assert isinstance(compiled.executable, NumbaExecutable)
    absjit.config.update("tiering", False)
    h = absjit.jit(lambda x: x + c * 2)
    h(np.ones(3, np.float32))
    assert h.cache_info().entries[0].tier == "compiled"
    with pytest.raises(ConfigError, match="tiering"):
        absjit.config.update("tiering", "yes")


def test_explain_cache_misses_logs_the_tier_and_the_switch(caplog):
    c = _unique()
    absjit.config.update("explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="absjit"):
            f = absjit.jit(lambda x: jnp.exp(x) * c)
            f(np.ones(5, np.float32))
            tiering.wait_all(120)
    finally:
        absjit.config.update("explain_cache_misses", False)
    text = caplog.text
    assert "tier 0" in text or "compiling now" in text
    if "tier 0" in text:
        assert "compiled tier ready" in text


def _run(code, timeout=120):
    env = dict(os.environ, ABSJIT_TIERING="1", ABSJIT_DISABLE_DISK_CACHE="1")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_during_background_compiles_leaves_a_working_child():
    """A thread keeps compiling new programs (and a tiered program compiles in the
    background) while the main thread forks: each child compiles a program of its own
    and exits; none hangs."""
    res = _run("""
        import os, threading, numpy as np, absjit, absjit.numpy as jnp
        from absjit.jit import tiering
        stop = False
        def churn():  # new programs: tier 0 with background compiles, and compiles
            i = 0     # in this thread (lower().compile() never uses a tier)
            while not stop:
                i += 1
                f = absjit.jit(lambda x, i=i: x * (i + 0.25), backend="cpu")
                if i % 2:
                    f(np.ones(3, np.float32))
                else:
                    f.lower(np.ones(3, np.float32)).compile()
        t = threading.Thread(target=churn, daemon=True); t.start()
        big = absjit.jit(lambda x: jnp.tanh(jnp.cumsum(x, axis=0) * 1.5) @ x.T)
        big(np.ones((4, 4), np.float32))
        for k in range(3):
            pid = os.fork()
            if pid == 0:
                absjit.config.update("tiering", False)
                out = absjit.jit(lambda x: jnp.sin(x) + 7.0 + k)(np.zeros(2, np.float32))
                os._exit(0 if abs(float(out[0]) - 7.0 - k) < 1e-6 else 3)
            _, status = os.waitpid(pid, 0)
            assert os.WEXITSTATUS(status) == 0, status
        stop = True
        print("ok")
    """)
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr[-3000:]


def test_exit_during_a_background_compile_is_quick_and_clean():
    """A script that exits right after its first (tier 0) call neither waits for the
    whole compile nor crashes."""
    res = _run("""
        import time, numpy as np, absjit, absjit.numpy as jnp
        from absjit.jit import tiering
        def prog(x):
            for i in range(40):
                x = jnp.tanh(x * (1.0 + i / 100)) + jnp.roll(x, i)
            return x
        f = absjit.jit(prog)
        t0 = time.perf_counter()
        f(np.ones(64, np.float32))
        assert tiering.pending() == 1, tiering.pending()
        print("first", time.perf_counter() - t0)
    """)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "first" in res.stdout


def test_a_decomposition_on_tier0_while_its_lapack_kernel_compiles():
    """Tier 0 runs SciPy's cholesky while the background compile binds SciPy's LAPACK
    symbols: scipy.linalg is imported in the caller's thread first (imported by both
    threads at once, one could see a half-initialised Cython module)."""
    res = _run("""
        import numpy as np, absjit, absjit.numpy as jnp
        from absjit.jit import tiering
        def nll(t, y):
            k = jnp.exp(-(y[:, None] - y[None, :]) ** 2 / t) + jnp.eye(y.shape[0])
            c = jnp.linalg.cholesky(k)
            return jnp.sum(jnp.log(jnp.diagonal(c))) + y @ jnp.linalg.solve(k, y)
        f = absjit.jit(absjit.value_and_grad(nll))
        y = np.linspace(0, 1, 50).astype(np.float32)
        first = f(np.float32(0.5), y)
        tiering.wait_all(120)
        later = f(np.float32(0.5), y)
        np.testing.assert_allclose(np.asarray(first[0]), np.asarray(later[0]), rtol=1e-4)
        print("ok")
    """)
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr[-3000:]


def test_a_short_first_call_starts_the_compile_when_it_returns(monkeypatch):
    # The compile thread would take the GIL from the first call (Numba's import alone
    # holds it for much of ~0.3 s); a first call expected to be short runs alone.
    from absjit.backends.base import CompileOptions, get_backend
    c = _unique()
    x = np.linspace(-1, 1, 100, dtype=np.float32)
    closed = absjit.make_jaxpr(lambda x: x * c + 1)(x)
    assert tiering._defer_compile(closed.jaxpr, 0.001)
    submitted = []
    monkeypatch.setattr(tiering.background, "submit", submitted.append)
    exe = tiering.TieredExecutable(closed, get_backend("cpu"), CompileOptions(), "f", 1.0,
                                   defer_compile=True)
    assert submitted == []
    (got,) = exe(x)
    np.testing.assert_allclose(np.asarray(got), x * np.float32(c) + 1, rtol=1e-6)
    assert submitted == [exe._compile]
    exe(x)
    assert len(submitted) == 1  # once
    submitted[0]()  # the compile, here
    assert exe.compiled is not None


def test_loops_of_unknown_length_and_long_first_calls_compile_beside_them():
    x = np.float32(1.0)
    loop = absjit.make_jaxpr(lambda x: lax.while_loop(lambda v: v < 100, lambda v: v * 2,
                                                      x))(x)
    assert not tiering._defer_compile(loop.jaxpr, 0.001)  # may run long: switch inside it
    cheap = absjit.make_jaxpr(lambda x: x + 1)(x)
    assert tiering._defer_compile(cheap.jaxpr, 0.001)
    assert not tiering._defer_compile(cheap.jaxpr, 2 * tiering.DEFER_COMPILE_SECONDS)
