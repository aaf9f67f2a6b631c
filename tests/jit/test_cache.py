"""The per-function entry cache: what is a new entry, what is a hit, cache_info,
clearing, explain-misses logging, the recompile warning, threads, errors."""
from __future__ import annotations

import logging
import threading
import time
import warnings
from functools import partial

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.config import Config

BACKENDS = absjit.backends()


@pytest.fixture
def explain():
    absjit.config.update("explain_cache_misses", True)
    yield
    absjit.config.update("explain_cache_misses", False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dotproduct_sequence_traces_twice(backend, capsys):
    @partial(absjit.jit, backend=backend)
    def dotproduct(x, y):
        print("Inside dotproduct")
        return jnp.dot(x, y)

    rng = np.random.default_rng(0)
    for n in (100, 100, 50, 100):
        v = rng.random(n)
        jv = jnp.asarray(v)
        np.testing.assert_allclose(float(dotproduct(jv, jv.T)), np.dot(v, v), rtol=1e-4)
    assert capsys.readouterr().out.count("Inside dotproduct") == 2
    assert dotproduct._cache_size() == 2
    info = dotproduct.cache_info()
    assert (info.hits, info.misses, info.size) == (2, 2, 2)
    assert [e.key for e in info.entries] == ["x: f32[100], y: f32[100]",
                                            "x: f32[50], y: f32[50]"]
    assert all(e.trace_seconds > 0 and e.compile_seconds >= 0 for e in info.entries)
    assert "dotproduct: 2 entries, 2 hits, 2 misses" in str(info)


def test_side_effects_and_globals_run_once_per_entry():
    state = {"power": 5}
    seen = []

    def powerof(x):
        seen.append(x)
        return x ** state["power"]

    assert int(absjit.jit(powerof)(2)) == 32
    state["power"] = 10
    assert int(absjit.jit(powerof)(2)) == 32  # the value closed over when traced
    assert np.asarray(absjit.jit(powerof)(jnp.array([2., 2.]))).tolist() == [1024.0, 1024.0]
    assert len(seen) == 2


def test_hits_from_fast_and_general_paths_share_entries():
    f = absjit.jit(lambda x, y: x * y)
    x = jnp.ones(3)
    f(x, 2.0)
    f(x, 2.0)  # fast path
    f(x, y=2.0)  # general path, same entry
    f((x), **{"y": 2.0})
    f(np.ones(3, np.float32), 2.0)  # an ndarray of the same type: same entry
    assert f._cache_size() == 1
    info = f.cache_info()
    assert info.misses == 1 and info.hits == 4


def test_clear_cache_and_clear_caches():
    traces = []

    def fn(x):
        traces.append(1)
        return x + 1

    f = absjit.jit(fn)
    f(1.0)
    f(1.0)
    f.clear_cache()
    assert f._cache_size() == 0
    f(1.0)
    assert len(traces) == 2
    absjit.clear_caches()
    assert f._cache_size() == 0
    assert absjit.jit.compile_cache.stats()["entries"] == 0
    f(1.0)
    assert len(traces) == 3


def test_explain_cache_misses(explain, caplog):
    @absjit.jit
    def dotproduct(x, y):
        return jnp.sum(x) * jnp.sum(y)

    with caplog.at_level(logging.WARNING, logger="absjit"):
        dotproduct(jnp.ones(100), jnp.ones(100))
        dotproduct(jnp.ones(100), jnp.ones(100))
        dotproduct(jnp.ones(50), jnp.ones(100))
    msgs = [r.getMessage() for r in caplog.records if r.name == "absjit"]
    assert msgs[0].startswith("dotproduct: first call")
    assert msgs[1] == "dotproduct: x: f32[100] -> f32[50]"
    assert len(msgs) == 2


def test_explain_cache_misses_static(explain, caplog):
    @partial(absjit.jit, static_argnames=["n"])
    def f3(x, n):
        return x * n

    with caplog.at_level(logging.WARNING, logger="absjit"):
        f3(2.0, 5.0)
        f3(2.0, 4.0)
        f3(jnp.ones(2), 4.0)
    msgs = [r.getMessage() for r in caplog.records if r.name == "absjit"]
    assert msgs[1] == "f3: n: 5.0 -> 4.0 (static)"
    assert msgs[2] == "f3: x: f32[] -> f32[2]"


def test_explain_cache_misses_config_change(explain, caplog):
    f = absjit.jit(lambda x: x + 1)
    with caplog.at_level(logging.WARNING, logger="absjit"):
        f(np.ones(2))
        absjit.config.update("enable_x64", True)
        f(np.ones(2))
    msgs = [r.getMessage() for r in caplog.records if r.name == "absjit"]
    assert "config enable_x64: False -> True" in msgs[1]
    assert "x: f32[2] -> f64[2]" in msgs[1]


def test_explain_cache_misses_from_environment(monkeypatch):
    monkeypatch.setenv("ABSJIT_EXPLAIN_CACHE_MISSES", "1")
    assert Config().explain_cache_misses is True
    monkeypatch.setenv("ABSJIT_EXPLAIN_CACHE_MISSES", "0")
    assert Config().explain_cache_misses is False


def test_recompile_warning_once():
    absjit.config.update("recompile_warning_threshold", 3)
    try:
        f = absjit.jit(lambda x: x + 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for n in range(1, 7):
                f(jnp.ones(n))
        msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert len(msgs) == 1
        assert "4 times" in msgs[0] and "static" in msgs[0]
        # Only levels that exist are suggested: each suggestion must work as written.
        for level in ("ranked", "shaped", "concrete"):
            if f"abstraction='{level}'" in msgs[0]:
                assert level in absjit.registered_levels()
    finally:
        absjit.config.update("recompile_warning_threshold", 32)


def test_nothing_cached_after_an_error():
    mode = {"fail": True}

    def fn(x):
        if mode["fail"]:
            raise RuntimeError("boom")
        return x * 2

    f = absjit.jit(fn)
    with pytest.raises(RuntimeError, match="boom"):
        f(jnp.ones(2))
    assert f._cache_size() == 0
    mode["fail"] = False
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2))), [2.0, 2.0])
    assert f._cache_size() == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_first_calls_trace_once(backend):
    traces = []

    def slow(x):
        traces.append(1)
        time.sleep(0.05)  # widen the window in which other threads arrive
        return x * 2 + 1

    f = absjit.jit(slow, backend=backend)
    barrier = threading.Barrier(6)
    results, errors = {}, []

    def worker(i):
        try:
            barrier.wait()
            results[i] = np.asarray(f(jnp.full(4, float(i))))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(traces) == 1
    for i in range(6):
        np.testing.assert_array_equal(results[i], np.full(4, 2.0 * i + 1, np.float32))


def test_default_backend_is_part_of_the_key():
    f = absjit.jit(lambda x: x + 1)
    f(1.0)
    before = absjit.config.default_backend
    absjit.config.update("default_backend", "interpret")
    try:
        f(1.0)
        assert f._cache_size() == 2
        assert {e.backend for e in f.cache_info().entries} >= {"interpret"}
    finally:
        absjit.config.update("default_backend", before)
