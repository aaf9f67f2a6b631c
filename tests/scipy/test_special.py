"""absjit.scipy.special against scipy.special (values), JAX (dtypes, gradients)."""
import numpy as np
import pytest
from scipy import special as sp

import absjit
import absjit.numpy as jnp
from absjit.scipy import special as asp
from tests.checks import assert_close


X = np.array([-3.0, -0.5, 0.0, 0.3, 1.0, 4.5], np.float32)
P = np.array([1e-3, 0.1, 0.5, 0.8, 0.999], np.float32)


@pytest.mark.parametrize("name,x,rtol", [
    ("erf", X, 1e-6), ("erfc", X, 1e-5), ("erfinv", P * 2 - 1, 1e-5),
    ("gammaln", np.abs(X) + 0.1, 1e-5), ("digamma", np.abs(X) + 0.1, 1e-5),
    ("expit", X, 1e-6), ("logit", P, 1e-5), ("ndtr", X, 1e-5), ("ndtri", P, 1e-4),
    ("log_ndtr", np.array([-40, -10, -5.5, -4, -1, 0, 2, 7], np.float32), 1e-5),
    ("entr", np.array([-1, 0, 0.5, 2], np.float32), 1e-6),
])
def test_unary_matches_scipy(name, x, rtol):
    got = getattr(asp, name)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), getattr(sp, name)(x.astype(np.float64)),
                               rtol=rtol, atol=1e-6)


def test_integer_inputs_promote():
    assert asp.erf(np.int32(1)).dtype == np.float32
    assert asp.gammaln(3).dtype == np.float32
    assert asp.xlogy(2, 3).dtype == np.float32


def test_xlogy_xlog1py_and_grads():
    x = np.array([0.0, 0.0, 1.5, 2.0], np.float32)
    y = np.array([0.0, 2.0, 0.5, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(asp.xlogy(x, y)), sp.xlogy(x, y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(asp.xlog1py(x, y)), sp.xlog1py(x, y), rtol=1e-6)
    gx, gy = absjit.grad(lambda a, b: asp.xlogy(a, b), argnums=(0, 1))(1.5, 0.5)
    np.testing.assert_allclose([float(gx), float(gy)], [np.log(0.5), 3.0], rtol=1e-6)


def test_logsumexp_semantics():
    a = np.array([[0.0, 1.0, -np.inf], [2.0, -1.0, 0.5]], np.float32)
    for axis in (None, 0, 1, (0, 1)):
        assert_close(asp.logsumexp(a, axis=axis),
                     np.asarray(sp.logsumexp(a, axis=axis), np.float32), rtol=1e-6)
    assert asp.logsumexp(a, axis=1, keepdims=True).shape == (2, 1)
    b = np.array([[1.0, -2.0, 1.0], [0.5, 0.0, 1.0]], np.float32)
    out, sign = asp.logsumexp(a, axis=1, b=b, return_sign=True)
    ref, rsign = sp.logsumexp(a, axis=1, b=b, return_sign=True)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(sign), rsign)
    assert np.isnan(float(asp.logsumexp(a[0], b=b[0])))            # negative sum
    assert float(asp.logsumexp(np.full(3, -np.inf, np.float32))) == -np.inf
    empty = asp.logsumexp(np.zeros((0, 3), np.float32), axis=0)
    np.testing.assert_array_equal(np.asarray(empty), [-np.inf] * 3)


@pytest.mark.parametrize("name", ["ndtr", "log_ndtr", "logit"])
def test_compiled_matches_eager(name, mode):
    x = np.array([-7.0, -0.5, 0.25, 0.6, 3.0], np.float32)
    if name == "logit":
        x = np.abs(x) / 8
    np.testing.assert_allclose(np.asarray(mode(getattr(asp, name))(x)),
                               np.asarray(getattr(asp, name)(x)), rtol=2e-6)


def test_logsumexp_grad_is_softmax_and_jit(mode):
    x = np.array([1.0, 2.0, 0.5], np.float32)
    g = mode(absjit.grad(lambda v: asp.logsumexp(v)))(x)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(np.asarray(g), e / e.sum(), rtol=1e-6)
    g_inf = absjit.grad(lambda v: asp.logsumexp(v))(np.array([0.0, -np.inf], np.float32))
    np.testing.assert_array_equal(np.asarray(g_inf), [1.0, 0.0])


def test_against_jax_dtypes_and_grads():
    jax = pytest.importorskip("jax")
    import jax.scipy.special as jsp
    x = np.array([0.2, 1.3, 2.5], np.float32)
    for name in ("gammaln", "digamma", "erf", "ndtr", "log_ndtr", "expit"):
        ours = absjit.grad(lambda v: jnp.sum(getattr(asp, name)(v)))(x)
        theirs = jax.grad(lambda v: jax.numpy.sum(getattr(jsp, name)(v)))(x)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, err_msg=name)
        assert getattr(asp, name)(x).dtype == getattr(jsp, name)(x).dtype
    lse = absjit.grad(lambda v: asp.logsumexp(v, b=np.array([1.0, 2.0, 0.5], np.float32)))(x)
    jlse = jax.grad(lambda v: jsp.logsumexp(v, b=np.array([1.0, 2.0, 0.5], np.float32)))(x)
    np.testing.assert_allclose(np.asarray(lse), np.asarray(jlse), rtol=1e-5)
