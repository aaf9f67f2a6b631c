"""absjit.scipy.stats against scipy.stats (values) and JAX (gradients)."""
import numpy as np
import pytest
from scipy import stats as ss

import absjit
import absjit.numpy as jnp
from absjit.scipy import stats as st

X = np.array([-2.0, -0.3, 0.0, 0.7, 3.0], np.float32)


def test_norm(mode):
    # every mode: the erf/erfc composites fuse into one cpu kernel
    for name in ("pdf", "logpdf", "cdf", "logcdf"):
        got = mode(lambda x: getattr(st.norm, name)(x, 0.5, 2.0))(X)
        np.testing.assert_allclose(np.asarray(got), getattr(ss.norm, name)(X, 0.5, 2.0),
                                   rtol=2e-5, err_msg=name)
    q = np.array([0.01, 0.3, 0.5, 0.9], np.float32)
    np.testing.assert_allclose(np.asarray(st.norm.ppf(q, 1.0, 3.0)), ss.norm.ppf(q, 1.0, 3.0),
                               rtol=1e-4)
    np.testing.assert_allclose(float(st.norm.logcdf(-20.0)), ss.norm.logcdf(-20.0), rtol=1e-5)


def test_discrete():
    k = np.array([-1, 0, 1, 2, 5], np.float32)
    np.testing.assert_allclose(np.asarray(st.bernoulli.logpmf(k, 0.3)),
                               ss.bernoulli.logpmf(k, 0.3), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(st.bernoulli.pmf(k, 0.3)), ss.bernoulli.pmf(k, 0.3),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(st.poisson.logpmf(k, 2.5)), ss.poisson.logpmf(k, 2.5),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(st.poisson.pmf(k, 2.5)), ss.poisson.pmf(k, 2.5),
                               rtol=1e-5)
    assert float(st.poisson.logpmf(1.5, 2.0)) == -np.inf


def test_continuous():
    mode = lambda f: absjit.jit(f, backend="interpret")
    x = np.array([-0.1, 0.05, 0.3, 0.9, 1.2], np.float32)
    np.testing.assert_allclose(np.asarray(mode(lambda v: st.beta.logpdf(v, 2.0, 3.0))(x)),
                               ss.beta.logpdf(x, 2.0, 3.0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(st.beta.pdf(x, 0.5, 0.5)), ss.beta.pdf(x, 0.5, 0.5),
                               rtol=1e-5)
    assert np.isnan(float(st.beta.logpdf(0.5, -1.0, 2.0)))
    g = np.array([-1.0, 0.0, 0.5, 3.0, 10.0], np.float32)
    np.testing.assert_allclose(np.asarray(st.gamma.logpdf(g, 2.5, scale=1.5)),
                               ss.gamma.logpdf(g, 2.5, scale=1.5), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(st.gamma.pdf(g, 1.0)), ss.gamma.pdf(g, 1.0), rtol=1e-5)


def test_multivariate_normal():
    mode = lambda f: absjit.jit(f, backend="interpret")
    cov = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.5]], np.float32)
    mean = np.array([0.1, 0.2, 0.3], np.float32)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    got = mode(lambda v: st.multivariate_normal.logpdf(v, mean, cov))(x)
    np.testing.assert_allclose(np.asarray(got), ss.multivariate_normal.logpdf(x, mean, cov),
                               rtol=1e-5)
    np.testing.assert_allclose(float(st.multivariate_normal.pdf(x[0], mean, np.diag(cov))),
                               ss.multivariate_normal.pdf(x[0], mean, np.diag(np.diag(cov))),
                               rtol=1e-5)


def test_gradients_against_jax():
    jax = pytest.importorskip("jax")
    import jax.scipy.stats as jst
    pos = np.abs(X) + 0.1
    u = np.array([0.2, 0.7], np.float32)
    cases = [lambda m, n, s: n.sum(m.norm.logpdf(X, 0.5, 2.0 * s)),
             lambda m, n, s: n.sum(m.gamma.logpdf(pos, 2.5 * s)),
             lambda m, n, s: n.sum(m.beta.logpdf(u, 2.0 * s, 3.0)),
             lambda m, n, s: n.sum(m.norm.logcdf(X * s))]
    for f in cases:
        ours = float(absjit.grad(lambda s: f(st, jnp, s))(1.3))
        theirs = float(jax.grad(lambda s: f(jst, jax.numpy, s))(1.3))
        np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    loc = np.array([0.3, -0.2], np.float32)
    cov = np.array([[1.0, 0.3], [0.3, 2.0]], np.float32)
    x = np.array([0.5, 0.5], np.float32)
    ours = absjit.grad(lambda m: st.multivariate_normal.logpdf(x, m, cov))(loc)
    theirs = jax.grad(lambda m: jst.multivariate_normal.logpdf(x, m, cov))(loc)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5)
