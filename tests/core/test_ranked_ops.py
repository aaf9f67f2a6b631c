"""Whole-array operations on ``ranked`` arguments stay compiled on ``cpu`` (no fallback
warning), serve every size from one entry and agree with NumPy; bounds computed from
sizes are assumed and checked at entry."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.numba_cpu import tiers
from tests.checks import assert_close

IDX = np.array([3, 0, 2, 2, 1], np.int32)

# name -> (absjit function, NumPy reference, rank of the input)
CASES = {
    "half": (lambda x: x[: x.shape[0] // 2], lambda x: x[: x.shape[0] // 2], 1),
    "strided": (lambda x: x[1::3] * 2, lambda x: x[1::3] * 2, 1),
    "from_size": (lambda x: x[x.shape[0] - 3:], lambda x: x[x.shape[0] - 3:], 1),
    "diff": (lambda x: x[1:] - x[:-1], lambda x: x[1:] - x[:-1], 1),
    "roll": (lambda x: jnp.roll(x, 2), lambda x: np.roll(x, 2), 1),
    "pad": (lambda x: jnp.pad(x, ((1, 2), (0, 3))), lambda x: np.pad(x, ((1, 2), (0, 3))),
            2),
    "pad_edge": (lambda x: jnp.pad(x, ((2, 3), (1, 0)), mode="edge"),
                 lambda x: np.pad(x, ((2, 3), (1, 0)), mode="edge"), 2),
    "pad_wrap": (lambda x: jnp.pad(x, (7, 2), mode="wrap"),
                 lambda x: np.pad(x, (7, 2), mode="wrap"), 1),
    "pad_reflect": (lambda x: jnp.pad(x, ((9, 2), (1, 4)), mode="reflect"),
                    lambda x: np.pad(x, ((9, 2), (1, 4)), mode="reflect"), 2),
    "pad_symmetric": (lambda x: jnp.pad(x, (3, 45), mode="symmetric"),
                      lambda x: np.pad(x, (3, 45), mode="symmetric"), 1),
    "sort_rows": (lambda x: jnp.sort(x, axis=-1), lambda x: np.sort(x, axis=-1), 2),
    "sort_cols": (lambda x: jnp.sort(x, axis=0), lambda x: np.sort(x, axis=0), 2),
    "argsort": (lambda x: jnp.argsort(x[0]), lambda x: np.argsort(x[0], kind="stable"), 2),
    "transpose": (lambda x: x.T * 2 + 1, lambda x: x.T * 2 + 1, 2),
    "keepdims": (lambda x: x - x.sum(1, keepdims=True), lambda x: x - x.sum(1, keepdims=True),
                 2),
    "gather": (lambda x: x[IDX], lambda x: x[IDX], 1),
    "take": (lambda x: jnp.take(x, IDX, axis=0), lambda x: np.take(x, IDX, axis=0), 2),
    "outer": (lambda x: jnp.outer(x, x), lambda x: np.outer(x, x), 1),
    "first_last": (lambda x: x[0] + x[-1], lambda x: x[0] + x[-1], 1),
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (2,), (3,)), lambda x: x[2:5], 1),
    "at_set": (lambda x: x.at[0].set(5.0), lambda x: _np_set(x, 0, 5.0), 1),
    "at_add": (lambda x: x.at[IDX].add(1.0), lambda x: _np_add_at(x, IDX, 1.0), 1),
    "at_max_rows": (lambda x: x.at[IDX].max(0.5), lambda x: _np_max_at(x, IDX, 0.5), 2),
}


def _np_set(x, i, v):
    y = x.copy()
    y[i] = v
    return y


def _np_add_at(x, i, v):
    y = x.copy()
    np.add.at(y, i, v)
    return y


def _np_max_at(x, i, v):
    y = x.copy()
    np.maximum.at(y, i, np.float32(v))
    return y


def _input(rank, n, rng):
    shape = (n,) if rank == 1 else (n, n // 2 + 3)
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbolic_op_on_cpu_matches_numpy(name, rng):
    fn, ref, rank = CASES[name]
    f = absjit.jit(fn, abstraction="ranked", backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warning fails the test
        for n in (6, 17, 40):
            x = _input(rank, n, rng)
            assert_close(f(x), ref(x), rtol=1e-6, atol=1e-6, check_dtype=False)
    assert f._cache_size() == 1


@pytest.mark.parametrize("mode", ["reflect", "symmetric", "wrap", "edge"])
@pytest.mark.parametrize("widths", [(2, 3), (0, 7), (9, 1), (0, 0)])
def test_index_pads_of_every_size_match_numpy(mode, widths):
    """Pads wider than the axis (several periods), and axes of 1 and 2 elements."""
    f = absjit.jit(lambda x: jnp.pad(x, widths, mode=mode), abstraction="ranked",
                   backend="cpu")
    for n in (1, 2, 3, 5, 8):
        x = np.arange(n, dtype=np.float32) * 1.5 - 2
        np.testing.assert_array_equal(np.asarray(f(x)), np.pad(x, widths, mode=mode))
    assert f._cache_size() == 2  # size 1 is part of a ranked aval: one entry for it


def test_gather_with_ranked_index_array(rng):
    f = absjit.jit(lambda x, i: x[i] * 2, abstraction="ranked", backend="cpu")
    for n, m in ((10, 3), (50, 7)):
        x = rng.standard_normal(n).astype(np.float32)
        i = rng.integers(-n, n, m).astype(np.int32)
        assert_close(f(x, i), x[i] * 2, rtol=1e-6, check_dtype=False)
    assert f._cache_size() == 1


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_bound_from_size_is_checked_at_entry(backend):
    f = absjit.jit(lambda x: x[x.shape[0] - 3:], abstraction="ranked", backend=backend)
    assert f(np.arange(5.0, dtype=np.float32)).shape == (3,)
    with pytest.raises(ValueError, match="ranked"):
        f(np.arange(2.0, dtype=np.float32))


def test_serial_and_parallel_tiers_agree(rng, monkeypatch):
    # prange loops on Numba's threads: their parfor compile runs in the background
    # while a serial tier serves the first calls
    monkeypatch.setenv("ABSJIT_POOL_LOOPS", "0")
    f = absjit.jit(lambda x: jnp.exp(x) * 3 - x, abstraction="ranked", backend="cpu")
    x = rng.standard_normal(300_000).astype(np.float32)
    first = np.asarray(f(x))
    exe = f.lower(x).compile().executable
    tiered = [t for t in _walk_wrapped(exe) if isinstance(t, tiers.Tiered)]
    assert tiered, "a ranked kernel with a prange loop compiles in two tiers"
    assert tiered[0].wait(120)
    assert "prange(" in exe.as_text()
    assert_close(f(x), first, rtol=0, atol=0)
    assert_close(first, np.exp(x) * 3 - x, rtol=1e-5, atol=1e-5)


@pytest.fixture
def own_cold_tiers(monkeypatch):
    """``tiers.promote_all()`` promotes this test's ranked kernels only, not every cold
    kernel earlier tests left in this worker (each a parallel compile)."""
    import weakref
    monkeypatch.setattr(tiers, "_COLD", weakref.WeakSet())


def test_tiers_of_pool_loops_agree(rng, own_cold_tiers):
    # loops on the native pool: the serial tier first, the pool's in the background
    from absjit.backends.numba_cpu.parallel import pool
    if not pool.ensure():
        pytest.skip("no native pool on this platform")
    f = absjit.jit(lambda x: jnp.exp(x) * 3 - x, abstraction="ranked", backend="cpu")
    x = rng.standard_normal(300_000).astype(np.float32)
    first = np.asarray(f(x))
    exe = f.lower(x).compile().executable
    (tiered,) = [t for t in _walk_wrapped(exe) if isinstance(t, tiers.Tiered)]
    assert "_pool_for(" in exe.as_text() and "prange(" not in exe.as_text()
    tiers.promote_all()
    assert tiered.wait(120) and tiered.current is not None
    assert_close(f(x), first, rtol=0, atol=0)
    assert_close(first, np.exp(x) * 3 - x, rtol=1e-5, atol=1e-5)
    small = rng.standard_normal(1000).astype(np.float32)  # under the threshold: serial
    assert_close(f(small), np.exp(small) * 3 - small, rtol=1e-5, atol=1e-5)


def test_parallel_tier_compiles_only_once_hot(rng, monkeypatch):
    monkeypatch.setenv("ABSJIT_POOL_LOOPS", "0")  # tiers hide prange's parfor compile
    monkeypatch.setattr(tiers, "HOT_SECONDS", 0.02)
    monkeypatch.setattr(tiers, "HOT_CALL_SECONDS", 0.0)
    f = absjit.jit(lambda x: jnp.exp(x) * 2.5 - x, abstraction="ranked", backend="cpu")
    x = rng.standard_normal(200_000).astype(np.float32)
    for n in (10, 1000, 200_000):  # a few calls: the serial tier only
        f(x[:n])
    (tiered,) = [t for t in _walk_wrapped(f.lower(x).compile().executable)
                 if isinstance(t, tiers.Tiered)]
    assert tiered._thread is None and not tiered.parallel_ready.is_set()
    assert tiered in set(tiers._COLD)
    for _ in range(10_000):  # hot: the background compile starts
        f(x)
        if tiered._thread is not None:
            break
    assert tiered._thread is not None and tiered.serial_seconds >= 0.02
    assert tiered.wait(120) and tiered.current is not None
    assert_close(f(x), np.exp(x) * 2.5 - x, rtol=1e-5, atol=1e-5)


def test_promote_all_starts_every_cold_tier(monkeypatch, own_cold_tiers):
    monkeypatch.setenv("ABSJIT_POOL_LOOPS", "0")  # tiers hide prange's parfor compile
    f = absjit.jit(lambda x: jnp.exp(x) + 1.25, abstraction="ranked", backend="cpu")
    x = np.ones(10, np.float32)
    f(x)
    (tiered,) = [t for t in _walk_wrapped(f.lower(x).compile().executable)
                 if isinstance(t, tiers.Tiered)]
    tiers.promote_all()
    tiers.wait(120)
    assert tiered.parallel_ready.is_set() and not tiers.pending()
    assert_close(f(x), np.exp(x) + 1.25, rtol=1e-6)


def _walk_wrapped(exe):
    fn = getattr(exe, "_fn", None)
    inner = getattr(exe, "inner", None) or getattr(exe, "_inner", None)
    if inner is not None:
        yield from _walk_wrapped(inner)
    while fn is not None:
        yield fn
        fn = getattr(fn, "__wrapped__", None)


_SWEEP = absjit.jit(lambda x: (x[: x.shape[0] // 2].sum() + jnp.sort(x)[::-1] - x[::2].mean(),
                               jnp.cumsum(x)[x.shape[0] - 1]),
                    abstraction="ranked", backend="cpu")


@given(st.integers(2, 70), st.integers(0, 2**32 - 1))
@settings(max_examples=25, deadline=None)
def test_one_entry_matches_numpy_for_any_size(n, seed):
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    got = _SWEEP(x)
    want = (x[: n // 2].sum() + np.sort(x)[::-1] - x[::2].mean(), np.cumsum(x)[n - 1])
    assert_close(got, want, rtol=1e-4, atol=1e-4, check_dtype=False)
    assert _SWEEP._cache_size() == 1  # size 1 would be a new entry (a unit dim)
