"""``disable_jit``, ``ensure_compile_time_eval``, ``named_scope``/``named_call``,
``typeof``, ``linear_transpose`` and ``print_environment_info`` against JAX's behaviour."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.errors import ConcretizationTypeError
from tests.checks import assert_close, jax, jax_numpy


def _counting():
    calls = []

    @absjit.jit
    def f(x, n):
        calls.append(1)
        return jnp.sin(x) * n
    return f, calls


def test_disable_jit_runs_python_every_call_and_leaves_the_cache_alone():
    f, calls = _counting()
    x = np.linspace(0, 1, 5, dtype=np.float32)
    expected = f(x, 2.0)
    assert len(calls) == 1 and f._cache_size() == 1
    with absjit.disable_jit():
        for _ in range(3):
            assert_close(f(x, 2.0), expected, rtol=1e-6)
        assert len(calls) == 4           # traced again on every call: plain Python
        assert f._cache_size() == 1      # nothing added
    f(x, 2.0)
    assert len(calls) == 4               # back on the cached entry


def test_disable_jit_gives_concrete_values_inside_and_composes_with_transforms():
    seen = []

    @absjit.jit
    def f(x):
        seen.append(float(x.sum()))       # a ConcretizationTypeError under jit
        return x * 3.0

    x = jnp.arange(3.0)
    with pytest.raises(ConcretizationTypeError):
        f(x)
    with absjit.disable_jit():
        assert_close(f(x), np.arange(3.0, dtype=np.float32) * 3)
        g = absjit.grad(lambda v: jnp.sum(absjit.jit(jnp.tanh)(v)))(x)
        r = np.arange(3.0, dtype=np.float32)
        assert_close(g, 1 - np.tanh(r) ** 2, rtol=1e-6)
        assert_close(absjit.vmap(absjit.jit(lambda v: v * 2))(x), r * 2)
    assert seen == [3.0]


def test_disable_jit_is_per_thread_and_the_config_flag_is_global():
    f, calls = _counting()
    f(np.float32(1), 1.0)
    inside = []

    def other():
        f(np.float32(1), 1.0)
        inside.append(len(calls))
    with absjit.disable_jit():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert inside == [1]                 # the other thread still hit the cache
    absjit.config.update("jax_disable_jit", True)
    try:
        f(np.float32(1), 1.0)
        assert len(calls) == 2
    finally:
        absjit.config.update("disable_jit", False)
    with pytest.raises(ValueError, match="disable_jit"):
        absjit.config.update("disable_jit", "yes")


def test_ensure_compile_time_eval_folds_known_values_and_traces_arguments():
    def f(x):
        with absjit.ensure_compile_time_eval():
            n = int(jnp.arange(4).sum())          # concrete inside the context
            y = x * 2.0                            # an argument: still traced
        return y + n

    assert_close(absjit.jit(f)(jnp.float32(1.5)), np.float32(9.0))
    eqns = [e.primitive.name for e in absjit.make_jaxpr(f)(1.0).jaxpr.eqns]
    assert "iota" not in eqns and "reduce_sum" not in eqns and "mul" in eqns
    if jax is not None:
        def fj(x):
            with jax.ensure_compile_time_eval():
                n = int(jax_numpy.arange(4).sum())
            return x * 2.0 + n
        assert_close(absjit.jit(f)(1.5), jax.jit(fj)(1.5))


def test_named_scope_and_named_call_change_nothing():
    with absjit.named_scope("block"):
        y = absjit.jit(absjit.named_call(lambda v: v + 1, name="inc"))(jnp.ones(2))
    assert_close(y, np.full(2, 2.0, np.float32))
    assert absjit.named_call(jnp.sin).__name__ == jnp.sin.__name__
    with pytest.raises(TypeError):
        with absjit.named_scope(3):
            pass
    with pytest.raises(TypeError):
        absjit.named_call(3)


@pytest.mark.parametrize("value", [np.ones((2, 3), np.float32), 1.0, 2,
                                   np.arange(3, dtype=np.int32)])
def test_typeof_matches_jax(value):
    got = absjit.typeof(jnp.asarray(value) if isinstance(value, np.ndarray) else value)
    assert isinstance(got, absjit.ShapedArray)
    if jax is not None:
        want = jax.typeof(jax_numpy.asarray(value) if isinstance(value, np.ndarray) else value)
        assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype,
                                                         want.weak_type)
    seen = []
    absjit.jit(lambda x: seen.append(absjit.typeof(x)) or x)(np.ones(4, np.float32))
    assert str(seen[0]) == "ShapedArray(float32[4])"


def test_linear_transpose_against_jax():
    m = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x, y):
        return {"a": m @ x, "b": x[::-1] - 2.0 * y.sum()}
    x, y = np.zeros(3, np.float32), np.zeros((2, 2), np.float32)
    ct = {"a": np.array([1.0, -2.0], np.float32), "b": np.array([0.5, 1.0, 3.0], np.float32)}
    got = absjit.linear_transpose(f, x, y)(ct)
    assert isinstance(got, tuple) and len(got) == 2
    want_x = m.T @ ct["a"] + ct["b"][::-1]
    assert_close(got[0], want_x)
    assert_close(got[1], np.full((2, 2), -2.0 * ct["b"].sum()))
    if jax is not None:
        jt = jax.linear_transpose(f, x, y)(ct)
        assert_close(got[0], jt[0])
        assert_close(got[1], jt[1])
    shape_only = absjit.linear_transpose(lambda v: 3.0 * v, absjit.ShapeDtypeStruct((2,), np.float32))
    assert_close(shape_only(np.ones(2, np.float32))[0], np.full(2, 3.0, np.float32))


def test_linear_transpose_refuses_what_it_cannot_transpose():
    with pytest.raises(ValueError, match="not linear"):
        absjit.linear_transpose(lambda v: v + 1.0, np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="floating"):
        absjit.linear_transpose(lambda v: v * 2, np.zeros(2, np.int32))
    t = absjit.linear_transpose(lambda v: (v, v), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="structure"):
        t(np.ones(2, np.float32))


def test_print_environment_info(capsys):
    text = absjit.print_environment_info(return_string=True)
    assert text.splitlines()[0].startswith("absjit:")
    for name in ("numpy", "numba", "llvmlite", "scipy", "ml_dtypes", "jax"):
        assert f"\n{name}:" in text
    assert "\nthreading layer: " in text  # from the cpu backend's environment()
    assert absjit.print_environment_info() is None
    assert capsys.readouterr().out.strip() == text


def _closure_outer(lib, w, with_count=False):
    f, consts = lib.closure_convert(lambda x, y: x * w + y * w ** 2, 1.0, 2.0)
    out = f(2.0, 3.0, *consts)
    return (out, len(consts)) if with_count else out


def test_closure_convert_hoists_traced_floats_for_gradients():
    assert _closure_outer(absjit, 3.0, True)[1] == 0            # nothing traced: nothing hoisted
    seen = []
    g = absjit.grad(lambda w: seen.append(_closure_outer(absjit, w, True)[1])
                    or _closure_outer(absjit, w))(3.0)
    assert seen == [1]
    assert_close(g, np.float32(20.0), check_dtype=False)
    if jax is not None:
        assert_close(g, jax.grad(lambda w: _closure_outer(jax, w))(3.0), check_dtype=False)
    f, consts = absjit.closure_convert(lambda x: x * 2.0, 1.0)
    with pytest.raises(TypeError, match="constants"):
        f(1.0, 2.0)
    assert absjit.float0 == np.dtype([("float0", np.void, 0)])
