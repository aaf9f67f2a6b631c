"""Background compiles in a worker process (``absjit.backends.numba_cpu.compile_process``).

The tiered tests (tests/jit/test_tiering.py) run their background compiles through the
worker too; these check what is particular to it: the result is linked here and saved
to the disk cache as a compile here would be, a worker that dies or cannot send a
function back leaves the compile to this process, and Numba's refusal is reported as
it is for an in-process compile.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.backends.base import get_backend
from absjit.backends.numba_cpu import compile_process
from absjit.jit import tiering


@pytest.fixture(autouse=True)
def tiering_on():
    absjit.config.update("tiering", True)
    compile_process.start()  # small programs use it once it runs
    yield
    tiering.wait_all(120)
    absjit.config.update("tiering", False)


def _unique():
    return float(np.random.default_rng(time.perf_counter_ns()).integers(1, 1 << 20)) + 0.5


def _spec(text, fn="f", sig=None, flags=None):
    from numba import types as nt
    name = f"absjit_test_{time.perf_counter_ns()}"
    return {"module": name, "text": text, "fn": fn, "sig": sig or (nt.float64,),
            "flags": flags or {"error_model": "numpy"}, "pool": False, "callees": {}}


def test_background_compile_runs_in_the_worker_and_matches_the_interpreter():
    cpu = get_backend("cpu")
    before = cpu.stats["worker_compiles"]
    c = _unique()
    f = absjit.jit(lambda x: jnp.tanh(x * c) + jnp.cumsum(x))
    x = np.linspace(-1, 1, 257, dtype=np.float32)
    first = np.asarray(f(x))
    assert tiering.wait_all(120)
    assert f.cache_info().entries[0].tier == "compiled"
    assert cpu.stats["worker_compiles"] > before
    np.testing.assert_allclose(np.asarray(f(x)), first, rtol=1e-5, atol=1e-6)


def test_numba_refusal_in_the_worker_is_reported_like_a_local_one():
    with pytest.raises(compile_process.NumbaRefused, match="(?i)typing"):
        compile_process.compile_remote(_spec("def f(x):\n    return x + 'a'\n"))
    # the worker survives a refusal
    payload = compile_process.compile_remote(_spec("def f(x):\n    return x * 2.0\n"))
    assert isinstance(payload, bytes) and compile_process.enabled()


def test_object_mode_blocks_run_in_this_process(capfd):
    """``debug.print`` is an object-mode block in the kernel: compiled by the worker,
    it prints from this process."""
    c = _unique()

    def f(x):
        absjit.debug.print("total {t}", t=jnp.sum(x) * 0 + c)
        return x * 2

    g = absjit.jit(f)
    x = np.ones(8, np.float32)
    g(x)
    assert tiering.wait_all(120)
    capfd.readouterr()
    np.testing.assert_allclose(np.asarray(g(x)), 2 * x)
    assert g.cache_info().entries[0].tier == "compiled"
    assert f"total {np.float32(c)}" in capfd.readouterr().out


def test_a_dead_worker_leaves_the_compile_to_this_process():
    compile_process.start()
    proc = compile_process._state["proc"]
    proc.kill()
    proc.wait(10)
    cpu = get_backend("cpu")
    try:
        before = cpu.stats["worker_compiles"]
        c = _unique()
        f = absjit.jit(lambda x: jnp.sin(x) * c)
        x = np.ones(16, np.float32)
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * c, rtol=1e-6)
        assert tiering.wait_all(120)
        assert f.cache_info().entries[0].tier == "compiled"
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * c, rtol=1e-6)
        assert cpu.stats["worker_compiles"] == before
        assert not compile_process.running()
    finally:
        compile_process._state.update(proc=None, dead=None)


def test_worker_results_are_saved_to_the_disk_cache(tmp_path):
    """A kernel the worker compiled is on disk, MAC and all: the next process loads
    it instead of compiling."""
    code = textwrap.dedent("""
        import json, numpy as np, absjit, absjit.numpy as jnp
        from absjit.jit import tiering
        from absjit.backends.base import get_backend
        from absjit.backends.numba_cpu import compile_process
        compile_process.start()  # this small program would otherwise compile in a thread
        f = absjit.jit(lambda x: jnp.exp(x) * 3.25 - jnp.sum(x))
        x = np.linspace(0, 1, 100, dtype=np.float32)
        first = f(x)
        assert tiering.wait_all(120)
        np.testing.assert_allclose(np.asarray(f(x)), np.asarray(first), rtol=1e-5)
        print(json.dumps(get_backend("cpu").stats))
    """)
    env = dict(os.environ, ABSJIT_TIERING="1", ABSJIT_COMPILE_PROCESS="1",
               ABSJIT_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    import json
    stats = []
    for _ in range(2):
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
        stats.append(json.loads(res.stdout.strip().splitlines()[-1]))
    assert stats[0]["worker_compiles"] >= 1 and stats[0]["disk_hits"] == 0, stats
    assert stats[1]["disk_hits"] >= 1 and stats[1]["compiles"] == 0, stats


def test_compile_process_flag_is_checked():
    from absjit.config import ConfigError
    with pytest.raises(ConfigError, match="compile_process"):
        absjit.config.update("compile_process", "yes")


def test_a_description_that_does_not_pickle_is_compiled_here():
    spec = _spec("def f(x):\n    return x\n")
    spec["sig"] = (lambda: 0,)  # nothing Numba would send, and no pickle takes it
    with pytest.raises(compile_process.Unavailable, match="does not pickle"):
        compile_process.compile_remote(spec)
    assert compile_process.running()  # the worker is still there for the next one
