"""Tier 0's block evaluator (:mod:`absjit.backends.numba_cpu.evaluator.block_vm`) and
the fused schedules that call it (:mod:`absjit.backends.numba_cpu.evaluator.block_plan`):
every program is run by the NumPy interpreter's schedule and by the fused one, on the
same inputs."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.interpret import Schedule
from absjit.backends.numba_cpu.evaluator import block_plan, block_vm
from absjit.backends.numba_cpu.parallel import threads
from absjit.config import ConfigError

F32 = np.dtype(np.float32)


@pytest.fixture(scope="module")
def evaluators():
    return {F32: block_vm.obtain(F32)}


def run_both(evaluators, f, *args, fused=1, rtol=2e-6):
    """``f`` on ``args`` through a NumPy schedule and a fused one: the results agree
    and the fused schedule has ``fused`` evaluator steps."""
    closed = absjit.make_jaxpr(f)(*args)
    consts = [np.asarray(c) for c in closed.consts]
    leaves = [np.asarray(a) for a in absjit.tree_util.tree_leaves(args)]
    plain = Schedule(closed.jaxpr)
    schedule = block_plan.FusedSchedule(closed.jaxpr, evaluators)
    assert schedule.fused_runs == fused, closed
    want = plain.run(consts, leaves)
    for _ in range(2):  # a second call reuses the kept buffers
        got = schedule.run(consts, leaves)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)
    return got


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def jacobi(u, f, sweeps=3):
    for _ in range(sweeps):
        avg = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                      - 1e-3 * f[1:-1, 1:-1])
        u = u.at[1:-1, 1:-1].set(0.2 * u[1:-1, 1:-1] + 0.8 * avg)
    return u


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("n", [0, 1, 5, 2047, 2048, 2049, 300_000])
def test_selu_every_size_and_block_boundary(evaluators, n):
    run_both(evaluators, selu, rand(n))


def test_large_runs_shared_between_threads(evaluators, monkeypatch):
    monkeypatch.setitem(threads.TIER0, "threads", 2)
    x = rand(400_000)
    run_both(evaluators, selu, x)
    run_both(evaluators, lambda a, b: (jnp.tanh(a) * b, a - b), x, rand(400_000, seed=1))


def test_stencil_slices_and_updates_in_order(evaluators, monkeypatch):
    """Each sweep reads the previous sweep's array through shifted windows: the groups
    depend on each other and run one after the other (threads or not)."""
    monkeypatch.setitem(threads.TIER0, "threads", 2)
    run_both(evaluators, jacobi, rand(32, 32), rand(32, 32, seed=1))
    run_both(evaluators, jacobi, rand(300, 700), rand(300, 700, seed=1))


def test_broadcasts_transposes_and_scalars(evaluators):
    x, b, w = rand(64, 48), rand(48), rand(48, 64)
    run_both(evaluators, lambda x, b: jnp.maximum(x + b, 0.0) * 2.0, x, b)
    run_both(evaluators, lambda x, w: x * 0.5 - w.T, x, w)
    run_both(evaluators, lambda x, s: jnp.exp(x * s) + s, x, np.float32(0.3))
    run_both(evaluators, lambda x, c: x / c[:, None] + c[:, None], x, rand(64) + 3)


def test_reshape_of_a_strided_view_is_copied_first(evaluators):
    x = rand(16, 16)
    run_both(evaluators, lambda x: (x[::2, 1:9] * 2).reshape(64) + 1.0, x)
    run_both(evaluators, lambda x: jnp.exp(x[::2, 1:9].reshape(8, 2, 4)) + 1.0, x)


def test_boolean_and_integer_values(evaluators):
    x, i = rand(1000), np.arange(1000, dtype=np.int32)
    mask = run_both(evaluators, lambda x: (x > 0) & (x < 1), x)[0]
    assert mask.dtype == np.bool_
    run_both(evaluators, lambda x, i: x * i.astype(jnp.float32) + 1.0, x, i)
    run_both(evaluators, lambda x: jnp.where(jnp.isfinite(x / x), x, 0.0) ** 2, x)


def test_an_output_that_is_an_input_seen_as_float(evaluators):
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    a, b = run_both(evaluators, lambda i: (i.astype(jnp.float32),
                                           i.astype(jnp.float32) * 2 + 1), i)
    np.testing.assert_array_equal(a, i)


def test_update_of_a_value_computed_in_the_same_group(evaluators):
    x = rand(8, 8)
    run_both(evaluators, lambda x: lax.dynamic_update_slice(x * 2, x[:2, :2] + 1, (3, 5)),
             x)
    run_both(evaluators, lambda x: lax.dynamic_update_slice(jnp.exp(x), jnp.tanh(x[2:4]),
                                                            (9, 0)), x)  # clamped


def test_values_read_by_numpy_steps_between_runs(evaluators):
    def f(x):
        e = jnp.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    run_both(evaluators, f, rand(200, 100), fused=2)


def test_broadcast_constants(evaluators):
    x = rand(3000)
    run_both(evaluators, lambda x: (jnp.where(x > 0, x, 0.0), jnp.zeros_like(x) + 2.0,
                                    jnp.full((4, 5), 7.0)[1:3] * 3.0), x)


def test_scalar_programs(evaluators):
    run_both(evaluators, lambda a, b: jnp.sqrt(a * a + b * b) - jnp.abs(a),
             np.float32(3), np.float32(-4))


def test_an_operation_never_writes_a_register_it_reads(evaluators):
    closed = absjit.make_jaxpr(selu)(rand(10))
    (step,) = [s[1] for s in block_plan.FusedSchedule(closed.jaxpr, evaluators).steps]
    ops = set(evaluators[F32][1].values())
    for row in step.code:
        if row[0] in ops:
            assert row[1] not in row[2:5] or row[2:5].tolist() == [0, 0, 0]


_UNARY = [jnp.negative, jnp.abs, jnp.tanh, lambda a: jnp.exp(-a * a), jnp.floor,
          lambda a: jnp.sqrt(jnp.abs(a)), lambda a: jnp.log1p(jnp.abs(a)),
          lambda a: 1.0 / (1.0 + jnp.exp(-a)), lambda a: a ** 2, jnp.sin]
_BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum,
           lambda a, b: a / (jnp.abs(b) + 1.0), lambda a, b: jnp.where(a > b, a, b * 0.5),
           lambda a, b: jnp.clip(a, -1.0, b)]


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
       program=st.lists(st.tuples(st.booleans(), st.integers(0, 99), st.integers(0, 99),
                                  st.integers(0, 99)), min_size=1, max_size=12),
       seed=st.integers(0, 2 ** 16))
def test_random_elementwise_programs(evaluators, shape, program, seed):
    """Random chains of elementwise operations on two inputs and a broadcast row."""
    def f(x, y, row):
        values = [x, y, x + row]
        for binary, k, i, j in program:
            a, b = values[i % len(values)], values[j % len(values)]
            values.append(_BINARY[k % len(_BINARY)](a, b) if binary else
                          _UNARY[k % len(_UNARY)](a))
        return values[-1], values[len(values) // 2]
    x, y = rand(*shape, seed=seed), rand(*shape, seed=seed + 1)
    closed = absjit.make_jaxpr(f)(x, y, rand(shape[-1], seed=seed + 2))
    fused = block_plan.FusedSchedule(closed.jaxpr, evaluators).fused_runs
    run_both(evaluators, f, x, y, rand(shape[-1], seed=seed + 2), fused=fused, rtol=1e-5)


def test_fusable_dtypes_need_no_evaluator():
    closed = absjit.make_jaxpr(selu)(rand(4))
    assert block_plan.fusable_dtypes(closed.jaxpr) == {F32}
    closed = absjit.make_jaxpr(lambda a, b: a @ b)(rand(3, 3), rand(3, 3))
    assert block_plan.fusable_dtypes(closed.jaxpr) == set()


def test_tier0_uses_the_evaluator_once_loaded(evaluators, monkeypatch):
    """With tiering on, tier 0 runs on NumPy until the evaluator is ready, then on fused
    schedules; both agree with the compiled tier."""
    from absjit.backends.base import CompileOptions, get_backend
    absjit.config.update("tier0_evaluator", True)
    try:
        x = rand(5000)
        closed = absjit.make_jaxpr(selu)(x)
        monkeypatch.setattr(block_vm, "ready", lambda dtypes: {})
        tier0 = get_backend("cpu").interpreted(closed, CompileOptions())
        first = tier0(x)
        inner = tier0.__wrapped__ if hasattr(tier0, "__wrapped__") else tier0
        assert isinstance(inner, block_plan.FusingInterpreter)
        assert not isinstance(inner.executable.schedule, block_plan.FusedSchedule)
        monkeypatch.undo()
        second = tier0(x)
        assert isinstance(inner.executable.schedule, block_plan.FusedSchedule)
        want = absjit.jit(selu)(x)
        np.testing.assert_allclose(first[0], want, rtol=2e-6, atol=1e-6)
        np.testing.assert_allclose(second[0], want, rtol=2e-6, atol=1e-6)
    finally:
        absjit.config.update("tier0_evaluator", False)


def test_evaluators_are_asked_for_when_the_first_call_returns(monkeypatch):
    # Loading one imports Numba in the background: not while the first call runs.
    from absjit.backends.base import CompileOptions, get_backend
    asked = []
    monkeypatch.setattr(block_vm, "request", lambda dtypes: asked.append(set(dtypes)))
    absjit.config.update("tier0_evaluator", True)
    try:
        x = rand(500)
        tier0 = get_backend("cpu").interpreted(absjit.make_jaxpr(selu)(x),
                                               CompileOptions())
        assert asked == []
        tier0(x)
        assert asked == [{np.dtype(np.float32)}]
        tier0(x)
        assert len(asked) == 1
    finally:
        absjit.config.update("tier0_evaluator", False)


def test_no_disk_cache_no_background_work(monkeypatch):
    from absjit.backends import background, diskcache
    submitted = []
    monkeypatch.setattr(diskcache, "usable", lambda: False)
    monkeypatch.setattr(background, "submit", submitted.append)
    monkeypatch.setattr(block_vm, "_STARTED", set())
    block_vm.request([np.float32, np.float64])
    assert submitted == [] and block_vm._STARTED == set()


def test_the_switch_takes_booleans_only():
    with pytest.raises(ConfigError, match="tier0_evaluator"):
        absjit.config.update("tier0_evaluator", "yes")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_both_float_types(dtype):
    absjit.config.update("enable_x64", dtype == np.float64)  # (conftest restores it)
    evaluators = {np.dtype(dtype): block_vm.obtain(dtype)}
    x = rand(3000).astype(dtype)
    got = run_both(evaluators, selu, x, rtol=1e-12 if dtype == np.float64 else 2e-6)[0]
    assert got.dtype == dtype
    run_both(evaluators, jacobi, rand(20, 20).astype(dtype), rand(20, 20).astype(dtype))
