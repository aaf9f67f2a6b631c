"""Control flow: cond, switch, while_loop, fori_loop, scan, map against plain Python,
printing, derivatives, batching and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads


# ---------------------------------------------------------------------------
# values against plain Python
# ---------------------------------------------------------------------------
@given(st.floats(-3, 3), st.integers(-1, 3))
def test_cond_and_switch_match_python(x, i):
    x = np.float32(x)
    got = lax.cond(x > 0, lambda a: a * 2.0, lambda a: a - 1.0, x)
    assert_close(got, np.float32(x * 2 if x > 0 else x - 1), check_dtype=False)
    branches = [lambda a: a + 1.0, lambda a: a * a, lambda a: -a]
    got = lax.switch(i, branches, x)
    assert_close(got, np.float32(branches[min(max(i, 0), 2)](x)), check_dtype=False)


def test_cond_modes(mode):
    f = mode(lambda p, x: lax.cond(p, lambda a: (a[0] + 1.0, a[1]), lambda a: (a[0], a[1] * 2),
                                   (x, x)))
    assert_close(f(True, np.float32(2.0)), (np.float32(3.0), np.float32(2.0)))
    assert_close(f(False, np.float32(2.0)), (np.float32(2.0), np.float32(4.0)))
    g = mode(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x))
    for i, ref in enumerate([np.sin, np.cos, np.exp, np.exp]):
        assert_close(g(i, np.float32(0.5)), np.float32(ref(np.float32(0.5))), rtol=1e-6)


def test_while_fori_scan_map_modes(mode):
    collatz = mode(lambda n: lax.while_loop(lambda c: c[0] != 1,
                                            lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2,
                                                                 3 * c[0] + 1), c[1] + 1),
                                            (n, 0))[1])
    assert int(collatz(27)) == 111
    fori = mode(lambda x: lax.fori_loop(0, 5, lambda i, acc: acc + i * x, 0.0))
    assert_close(fori(np.float32(2.0)), np.float32(20.0), check_dtype=False)
    fori_dyn = mode(lambda n, x: lax.fori_loop(0, n, lambda i, acc: acc * x, 1.0))
    assert_close(fori_dyn(4, np.float32(2.0)), np.float32(16.0), check_dtype=False)
    xs = np.arange(1, 6, dtype=np.float32)
    cums = mode(lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs))
    c, ys = cums(xs)
    ref_c, ref_ys = 0.0, []
    for x in xs:
        ref_ys.append(ref_c * x)
        ref_c += x
    assert_close(c, np.float32(ref_c), check_dtype=False)
    assert_close(ys, np.array(ref_ys, np.float32), check_dtype=False)
    rev = mode(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs, reverse=True)[1])
    assert_close(rev(xs), np.array([14, 12, 9, 5, 0], np.float32), check_dtype=False)
    assert_close(mode(lambda xs: lax.map(lambda x: x * x, xs))(xs), xs * xs)


def test_scan_pytrees_and_no_xs():
    init = {"a": np.float32(1.0), "b": (np.int32(0),)}
    carry, ys = lax.scan(lambda c, _: ({"a": c["a"] * 2, "b": (c["b"][0] + 1,)}, c["a"]),
                         init, None, length=4)
    assert float(carry["a"]) == 16.0 and int(carry["b"][0]) == 4
    assert_close(ys, np.array([1, 2, 4, 8], np.float32), check_dtype=False)


def test_seed_fori_loop_indexing(mode):
    ary = jnp.array([0., 1., 2.])
    out = mode(lambda a: lax.fori_loop(0, 3, lambda idx, acc: acc + a[idx] ** 2, 0))(ary)
    assert repr(out) == "Array(5., dtype=float32)"
    out = lax.fori_loop(0, 3, lambda idx, acc: acc + ary[idx] ** 2, 0)
    assert repr(out) == "Array(5., dtype=float32)"


def test_weak_carry_promotes_like_jax():
    out = lax.while_loop(lambda c: c < 3.5, lambda c: c + np.float32(1.0), 0)
    assert out.dtype == np.float32 and not out.weak_type
    if jax is not None:
        j = jax.lax.while_loop(lambda c: c < 3.5, lambda c: c + np.float32(1.0), 0)
        assert j.dtype == out.dtype and float(j) == float(out)


# ---------------------------------------------------------------------------
# printing
# ---------------------------------------------------------------------------
def test_printed_forms():
    text = str(absjit.make_jaxpr(lambda x: lax.cond(x > 0, lambda a: a * 2.0,
                                                    lambda a: a + 1.0, x))(1.0))
    assert "cond[" in text and "branches=(" in text and "{ lambda" in text.split("cond[")[1]
    text = str(absjit.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x, c), 0.0, xs))(
        np.ones(3, np.float32)))
    assert "scan[" in text and "length=3" in text and "jaxpr={ lambda" in text
    text = str(absjit.make_jaxpr(lambda x: lax.while_loop(lambda c: c < 10.0,
                                                          lambda c: c * x, x))(2.0))
    assert "while[" in text and "body_jaxpr={ lambda" in text and "cond_jaxpr={ lambda" in text
    # closed-over values become operands, not constants baked into params
    text = str(absjit.make_jaxpr(lambda x, y: lax.cond(x > 0, lambda: y, lambda: -y))(1.0, 2.0))
    assert "cond[" in text


# ---------------------------------------------------------------------------
# derivatives
# ---------------------------------------------------------------------------
def test_cond_switch_grads(rng):
    def f(x, y):
        return lax.cond(jnp.sum(x) > 0, lambda a, b: jnp.sin(a) * b, lambda a, b: a * a - b,
                        x, y)
    def jf(x, y):
        return jax.lax.cond(jax.numpy.sum(x) > 0, lambda a, b: jax.numpy.sin(a) * b,
                            lambda a, b: a * a - b, x, y)
    for sign in (1.0, -1.0):
        x = sign * rng.uniform(0.5, 1.0, (3,))
        check_grads(f, [x, rng.standard_normal(3)], order=2, jax_fn=jf if jax else None)
    g = lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda a: a ** 3], x)  # noqa: E731
    for i in range(3):
        check_grads(lambda x: g(i, x), [rng.standard_normal(2)], order=2)


def test_scan_fori_grads(rng):
    def f(xs, w):
        return lax.scan(lambda c, x: (jnp.tanh(c * w + x), c * x), 0.5, xs)
    def jf(xs, w):
        return jax.lax.scan(lambda c, x: (jax.numpy.tanh(c * w + x), c * x), 0.5, xs)
    check_grads(f, [rng.standard_normal(4), np.float64(0.7)], order=2,
                jax_fn=jf if jax else None)
    rev = lambda xs: lax.scan(lambda c, x: (c * x + 1.0, c), 1.0, xs, reverse=True)  # noqa
    check_grads(rev, [rng.standard_normal(3)], order=1)
    fl = lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * x + i, x)  # noqa: E731
    check_grads(fl, [np.float64(0.3)], order=2)


def test_grad_through_control_flow_under_jit(mode):
    f = lambda x: lax.fori_loop(0, 3, lambda i, a: a * x, x)  # noqa: E731  (x ** 4)
    assert_close(mode(absjit.grad(f))(2.0), np.float32(32.0), check_dtype=False)
    assert_close(mode(absjit.grad(absjit.grad(f)))(2.0), np.float32(48.0), check_dtype=False)
    g = lambda x: lax.cond(x > 0, lambda a: a * a, lambda a: -a, x)  # noqa: E731
    assert_close(mode(absjit.grad(g))(3.0), np.float32(6.0), check_dtype=False)
    assert_close(mode(absjit.grad(g))(-3.0), np.float32(-1.0), check_dtype=False)


def test_while_forward_mode_and_reverse_error():
    f = lambda x: lax.while_loop(lambda a: a < 10.0, lambda a: a * x, x)  # noqa: E731
    _, t = absjit.jvp(f, (2.0,), (1.0,))
    assert float(t) == 32.0  # f = x ** 4 for x = 2
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                                         "lax.while_loop"):
        absjit.grad(f)(2.0)
    dyn = lambda n, x: lax.fori_loop(0, n, lambda i, a: a * x, 1.0)  # noqa: E731
    with pytest.raises(ValueError, match="Reverse-mode"):
        absjit.grad(dyn, argnums=1)(jnp.int32(3), 2.0)


# ---------------------------------------------------------------------------
# batching
# ---------------------------------------------------------------------------
def test_vmap_batched_predicates(mode):
    xs = np.array([-2.0, -0.5, 0.5, 3.0], np.float32)
    f = mode(absjit.vmap(lambda x: lax.cond(x > 0, lambda a: a * a, lambda a: -a, x)))
    assert_close(f(xs), np.where(xs > 0, xs * xs, -xs))
    idx = np.array([0, 1, 2, 5], np.int32)
    g = mode(absjit.vmap(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x)))
    assert_close(g(idx, xs), np.array([np.sin(-2.0), np.cos(-0.5), np.exp(0.5), np.exp(3.0)],
                                      np.float32), rtol=1e-6)
    h = mode(absjit.vmap(lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1,
                                                                                c[1] * 2.0),
                                                  (0, 1.0))[1]))
    assert_close(h(np.array([0, 3, 1], np.int32)), np.array([1, 8, 2], np.float32))


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
def test_cond_bad_input():
    with pytest.raises(TypeError, match=r"pred must be a scalar.*\(2,\)"):
        lax.cond(np.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="type structure"):
        lax.cond(True, lambda: (1.0, 2.0), lambda: 1.0)
    with pytest.raises(TypeError, match=r"identical types.*\n.*f32\[\].*\n.*i32\[\]"):
        lax.cond(True, lambda: np.float32(1.0), lambda: np.int32(1))
    with pytest.raises(TypeError, match="index must be an integer scalar"):
        lax.switch(1.5, [lambda: 1.0], ())
    with pytest.raises(TypeError, match="pred"):
        absjit.jit(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(np.ones(3, bool))


def test_while_bad_carry():
    def body_shape(c):
        return jnp.concatenate([c, c])
    with pytest.raises(TypeError, match=r"body_shape.*f32\[2\].*f32\[4\].*shapes"):
        lax.while_loop(lambda c: False, body_shape, np.ones(2, np.float32))
    def body_dtype(c):
        return c.astype(jnp.int32)
    with pytest.raises(TypeError, match=r"body_dtype.*f32\[\].*i32\[\].*dtypes"):
        lax.while_loop(lambda c: False, body_dtype, np.float32(1.0))
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c, np.float32(1.0))
    with pytest.raises(TypeError, match="same type structure"):
        lax.while_loop(lambda c: False, lambda c: (c, c), np.float32(1.0))


def test_scan_bad_input():
    def step(c, x):
        return c + x[0] * x[1], None
    with pytest.raises(ValueError, match=r"step.*different leading axis sizes: 3, 4"):
        lax.scan(step, 0.0, (np.ones(3, np.float32), np.ones(4, np.float32)))
    with pytest.raises(TypeError, match="pair"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"scan body.*f32\[\].*f32\[2\]"):
        lax.scan(lambda c, x: (jnp.stack([c, x]), None), np.float32(0.0),
                 np.ones(3, np.float32))
    with pytest.raises(ValueError, match="length"):
        lax.scan(lambda c, x: (c, None), 0.0, None)
