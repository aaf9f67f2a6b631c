"""custom_jvp / custom_vjp and debug.print under every transform."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax, jax_numpy


@absjit.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


def test_custom_jvp_is_used(mode):
    # the naive derivative overflows to nan at 100; the custom rule does not
    g = mode(absjit.grad(log1pexp))(100.0)
    assert float(g) == 1.0
    _, t = absjit.jvp(log1pexp, (0.0,), (2.0,))
    assert_close(t, np.float32(1.0), check_dtype=False)
    assert_close(absjit.vmap(absjit.grad(log1pexp))(np.array([0.0, 100.0], np.float32)),
                 np.array([0.5, 1.0], np.float32))
    assert_close(mode(log1pexp)(0.0), np.float32(np.log(2.0)), check_dtype=False)
    if jax is not None:
        @jax.custom_jvp
        def jlog1pexp(x):
            return jax.numpy.log(1.0 + jax.numpy.exp(x))
        jlog1pexp.defjvp(lambda p, t: (jlog1pexp(p[0]),
                                       t[0] * (1.0 - 1.0 / (1.0 + jax.numpy.exp(p[0])))))
        assert float(jax.grad(jlog1pexp)(100.0)) == float(g)


@absjit.custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))


def test_custom_vjp_is_used(mode):
    f = lambda x: jnp.sum(clip_gradient(x) * 3.0)  # noqa: E731
    assert_close(mode(absjit.grad(f))(np.ones(2, np.float32)), np.ones(2, np.float32))
    assert_close(mode(clip_gradient)(np.float32(5.0)), np.float32(5.0))
    with pytest.raises(TypeError, match="forward-mode"):
        absjit.jvp(clip_gradient, (1.0,), (1.0,))


def test_custom_rules_missing():
    @absjit.custom_jvp
    def f(x):
        return x
    with pytest.raises(AttributeError, match="No JVP defined"):
        f(1.0)


def test_debug_print_runs_at_run_time(mode, capsys):
    def f(x):
        absjit.debug.print("x = {}", x)
        return x * 2
    g = mode(f)
    g(np.float32(1.0))
    g(np.float32(2.0))
    out = capsys.readouterr().out
    assert out.splitlines() == ["x = 1.0", "x = 2.0"]


def test_python_print_runs_at_trace_time(capsys):
    def f(x):
        print("traced")
        return x * 2
    g = absjit.jit(f)
    g(np.float32(1.0))
    g(np.float32(2.0))
    assert capsys.readouterr().out.count("traced") == 1


def test_debug_print_under_transforms(capsys):
    def f(x):
        absjit.debug.print("v={v}", v=x)
        return jnp.sum(x * x)
    absjit.grad(f)(np.array([1.0, 2.0], np.float32))
    assert capsys.readouterr().out.strip() == "v=[1. 2.]"
    absjit.vmap(f)(np.array([[1.0], [2.0]], np.float32))
    assert capsys.readouterr().out.split() == ["v=[1.]", "v=[2.]"]  # per element, as jax
    absjit.jit(absjit.grad(f))(np.array([3.0], np.float32))
    assert capsys.readouterr().out.strip() == "v=[3.]"
    lax.fori_loop(0, 2, lambda i, c: (absjit.debug.print("i={}", i), c + 1)[1], 0)
    assert capsys.readouterr().out.split() == ["i=0", "i=1"]
    text = str(absjit.make_jaxpr(f)(np.ones(1, np.float32)))
    assert "debug_print[" in text


def test_debug_print_bad_format():
    with pytest.raises(TypeError, match="format must be a str"):
        absjit.debug.print(3)


def test_debug_print_in_loops_prints_once_per_iteration(mode, capsys):
    def f(x):
        return lax.fori_loop(0, 2, lambda i, c: (absjit.debug.print("i={} c={}", i, c),
                                                 c * x)[1], x)
    expected = ["i=0 c=2.0", "i=1 c=4.0"]
    mode(f)(np.float32(2.0))
    assert capsys.readouterr().out.splitlines() == expected
    g = mode(absjit.grad(f))(np.float32(2.0))
    assert float(g) == 12.0
    assert capsys.readouterr().out.splitlines() == expected
    # a loop whose result is unused still prints (it is effectful)
    absjit.jit(lambda x: (f(x), x)[1])(np.float32(2.0))
    assert capsys.readouterr().out.splitlines() == expected


def test_debug_print_in_two_loops_compiles(capsys):
    def g(x):
        y = lax.fori_loop(0, 2, lambda i, c: (absjit.debug.print("a {}", c), c * 2.0)[1], x)
        return lax.fori_loop(0, 2, lambda i, c: (absjit.debug.print("b {}", c), c * 3.0)[1], y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # may fall back to interpret
        absjit.jit(g)(np.float32(1.0))
    assert capsys.readouterr().out.split("\n")[:4] == ["a 1.0", "a 2.0", "b 4.0", "b 12.0"]


def _custom_gradient_fn(lib, np_):
    @lib.custom_gradient
    def f(x, y):
        return np_.sin(x) * y, lambda g: (g * 2.0 * y, jnp_sum(np_, g * x))
    return f


def jnp_sum(np_, v):
    return np_.sum(v)


def test_custom_gradient_against_jax():
    x = np.linspace(0, 1, 4).astype(np.float32)
    y = np.float32(3)
    f = _custom_gradient_fn(absjit, jnp)
    loss = lambda a, b: f(a, b).sum()  # noqa: E731
    gx, gy = absjit.jit(absjit.grad(loss, argnums=(0, 1)))(x, y)
    assert_close(gx, np.full(4, 6.0, np.float32))
    assert_close(gy, np.float32(x.sum()))
    assert_close(absjit.jit(f)(x, y), np.sin(x) * y, rtol=1e-6)
    g_rows = absjit.vmap(absjit.grad(lambda a: f(a, y)))(x)
    assert_close(g_rows, np.full(4, 6.0, np.float32))
    if jax is not None:
        fj = _custom_gradient_fn(jax, jax_numpy)
        jx, jy = jax.grad(lambda a, b: fj(a, b).sum(), argnums=(0, 1))(x, y)
        assert_close(gx, jx)
        assert_close(gy, jy)


def test_custom_gradient_single_argument_and_bad_rules():
    @absjit.custom_gradient
    def sq(x):
        return x * x, lambda g: 10.0 * g          # a bare cotangent for one argument
    assert_close(absjit.grad(sq)(2.0), np.float32(10.0), check_dtype=False)

    @absjit.custom_gradient
    def not_pair(x):
        return x
    with pytest.raises(TypeError, match="pair"):
        not_pair(1.0)

    @absjit.custom_gradient
    def too_many(x):
        return x, lambda g: (g, g)
    with pytest.raises(TypeError, match="2 cotangents for 1 arguments"):
        absjit.grad(too_many)(1.0)


def test_custom_vjp_bwd_results_are_checked_and_none_means_zero():
    @absjit.custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1], None))
    x = np.arange(3, dtype=np.float32)
    gx, gy = absjit.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(x, x + 1)
    assert_close(gx, x + 1)
    assert_close(gy, np.zeros(3, np.float32))

    @absjit.custom_vjp
    def g(x, s):
        return x * s
    g.defvjp(lambda x, s: (x * s, (x, s)), lambda r, c: (c * r[1], c * r[0]))  # s: shape 3
    with pytest.raises(ValueError, match="argument 1 has shape \\(3,\\)"):
        absjit.grad(lambda a, b: g(a, b).sum(), argnums=(0, 1))(x, np.float32(2))

    @absjit.custom_vjp
    def h(p):
        return p["a"] * 2
    h.defvjp(lambda p: (p["a"] * 2, None), lambda r, c: ((c,),))
    with pytest.raises(TypeError, match="structure"):
        absjit.grad(lambda p: h(p).sum())({"a": x})


@pytest.mark.parametrize("backend", ["cpu", "xla"])
def test_io_callback_runs_once_per_call_on_compiling_backends(backend):
    if backend == "xla":
        pytest.importorskip("jax")
    from absjit.experimental import io_callback
    seen = []

    def host(x):
        seen.append(float(x.sum()))
        return np.asarray(x * 2, np.float32)

    def f(x):
        return io_callback(host, absjit.ShapeDtypeStruct((3,), np.float32), x) + 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cpu backend's host-call notice
        out = absjit.jit(f, backend=backend)(np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(out), 3.0)
    assert seen == [3.0]
