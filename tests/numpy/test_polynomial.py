"""``absjit.numpy._polynomial``: poly, polyadd, polysub, polymul, polydiv, polyder and
polyint against NumPy and (where installed) JAX, eagerly and under every backend (one
program per mode), with grad and bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hst
from hypothesis.extra import numpy as hnp

import absjit
import absjit.numpy as jnp
from absjit import errors
from tests.checks import assert_close, jax_numpy

I = np.array([1, 2, 3], np.int32)
F = np.array([1., 2., 3.], np.float32)
U = np.array([3., 1., 4., 1., 5.], np.float32)
V = np.array([2., 7.], np.float32)


def _all(i, f, u, v):
    return (jnp.poly(i), jnp.poly(f), jnp.polyadd(i, np.array([1, 1], np.int32)),
            jnp.polysub(np.array([1, 1], np.int32), f), jnp.polymul(i, f),
            *jnp.polydiv(u, v), jnp.polyder(i), jnp.polyder(f, 2), jnp.polyint(i),
            jnp.polyint(f, 2, k=np.array([1., 2.], np.float32)), jnp.polyint(u, 2, k=3.0))


def test_polynomials_every_mode(mode):
    got = mode(_all)(I, F, U, V)
    q, r = np.polydiv(U, V)
    want = (np.poly(I), np.poly(F), np.polyadd(I, [1, 1]), np.polysub([1, 1], F),
            np.polymul(I, F), q, np.concatenate([np.zeros(U.size - r.size), r]),
            np.polyder(I), np.polyder(F, 2), np.polyint(I), np.polyint(F, 2, k=[1., 2.]),
            np.polyint(U, 2, k=3.0))
    for k, (g, w) in enumerate(zip(got, want)):
        assert_close(g, np.asarray(w).astype(g.dtype), rtol=1e-5, atol=1e-5, err_msg=str(k))
    if jax_numpy is not None:
        want_jax = (jax_numpy.poly(I), jax_numpy.poly(F), jax_numpy.polyadd(I, np.array([1, 1])),
                    jax_numpy.polysub(np.array([1, 1]), F), jax_numpy.polymul(I, F),
                    *jax_numpy.polydiv(U, V), jax_numpy.polyder(I), jax_numpy.polyder(F, 2),
                    jax_numpy.polyint(I), jax_numpy.polyint(F, 2, k=np.array([1., 2.])),
                    jax_numpy.polyint(U, 2, k=3.0))
        for g, w in zip(got, want_jax):
            assert np.dtype(g.dtype) == np.dtype(w.dtype)
            assert bool(g.weak_type) == bool(w.weak_type)


def test_edge_cases_match_jax():
    cases = [("poly", (np.array([1j, -1j]),), {}), ("poly", (3.,), {}),
             ("poly", (np.zeros(0),), {}),
             ("polymul", (np.array([0, 0, 1]), np.array([0, 2])), {"trim_leading_zeros": True}),
             ("polymul", (np.array([0, 0, 1]), np.array([0, 2])), {}),
             ("polymul", (I, np.array([])), {}),
             ("polydiv", (np.array([1, 3]), np.array([1, 1, 1])), {}),
             ("polydiv", (np.array([0, 0, 1, 3.]), np.array([1, 1.])),
              {"trim_leading_zeros": True}),
             ("polydiv", (U, V), {"trim_leading_zeros": True}),
             ("polyder", (I, 0), {}), ("polyder", (I, 5), {}), ("polyint", (I, 0), {}),
             ("polyint", (F, 1), {"k": 5})]
    for name, args, kw in cases:
        got = getattr(jnp, name)(*args, **kw)
        if jax_numpy is None:
            continue
        want = getattr(jax_numpy, name)(*args, **kw)
        got_l = got if isinstance(got, tuple) else (got,)
        want_l = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got_l, want_l):
            assert np.dtype(g.dtype) == np.dtype(w.dtype), name
            assert bool(g.weak_type) == bool(w.weak_type), name
            assert_close(g, np.asarray(w), rtol=1e-5, atol=1e-5, err_msg=name)


@settings(max_examples=15)
@given(hnp.arrays(np.float32, hst.integers(1, 5), elements=hst.integers(-5, 5)),
       hnp.arrays(np.float32, hst.integers(1, 3), elements=hst.integers(1, 5)))
def test_div_then_mul_recovers_numerator(u, v):
    q, r = jnp.polydiv(u, v)
    back = jnp.polyadd(jnp.polymul(q, v), r)
    assert_close(back[back.shape[0] - u.shape[0]:], u, rtol=1e-4, atol=1e-3)
    assert_close(jnp.polymul(u, v, trim_leading_zeros=True), np.polymul(u, v))
    assert_close(jnp.polyder(jnp.polyint(u, 2), 2), u, rtol=1e-5, atol=1e-5)


def test_roots_and_poly_of_a_matrix(mode):
    def f(p, a):
        return (jnp.roots(p, strip_zeros=False), jnp.poly(a))
    p = np.array([1., -6., 11., -6.], np.float32)
    a = np.array([[1., 2.], [3., 4.]], np.float32)
    got = mode(f)(p, a)
    assert got[0].dtype == np.complex64 and got[1].dtype == np.complex64
    assert_close(np.sort_complex(np.asarray(got[0])), np.array([1, 2, 3], np.complex64),
                 rtol=1e-4, atol=1e-4)
    assert_close(got[1], np.poly(a).astype(np.complex64), rtol=1e-5, atol=1e-5)
    for q in (np.array([0., 1., -3., 2.]), np.array([1., 0., 0.]), np.array([1., 2.]),
              np.array([0., 0.]), np.array([2., 0., 8.])):
        got = jnp.roots(q)
        assert_close(np.sort_complex(np.asarray(got)),
                     np.sort_complex(np.roots(q)).astype(np.complex64), atol=1e-6)
        if jax_numpy is not None:
            want = jax_numpy.roots(q)
            assert got.dtype == want.dtype and got.shape == want.shape


def test_gradients():
    # d/dr of the coefficients of (x - r0)(x - r1) = [1, -(r0 + r1), r0 r1]
    jac = absjit.jacobian(jnp.poly)(np.array([2., 3.], np.float32))
    assert_close(jac, np.array([[0., 0.], [-1., -1.], [3., 2.]], np.float32))
    g = absjit.grad(lambda p: jnp.polyval(jnp.polyint(p), 2.0))(F)
    assert_close(g, np.array([8 / 3, 2., 2.], np.float32), rtol=1e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="1-D"):
        jnp.polyadd(np.ones((2, 2)), I)
    with pytest.raises(errors.ConcretizationTypeError):
        absjit.jit(jnp.roots)(F)
    with pytest.raises(ValueError, match="non-negative"):
        jnp.polyder(I, -1)
    with pytest.raises(ValueError, match="length 1 or m"):
        jnp.polyint(I, 2, k=np.ones(3))
    with pytest.raises(errors.ConcretizationTypeError):
        absjit.jit(lambda a: jnp.polymul(a, a, trim_leading_zeros=True))(F)
    with pytest.raises(errors.ConcretizationTypeError):
        absjit.jit(lambda m: jnp.polyder(F, m))(1)
    with pytest.raises(TypeError):
        jnp.polyadd([1, 2], I)
