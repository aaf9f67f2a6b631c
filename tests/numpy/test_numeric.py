import numpy as np
import pytest

import absjit.numpy as jnp
from tests.checks import assert_close, check_against_numpy, jax
from tests.grad_checks import check_grads


def test_diff_and_ediff1d(mode):
    x = np.array([[1, 4, 9, 16], [2, 3, 5, 8]], np.int32)
    check_against_numpy(lambda a: jnp.diff(a, n=2, prepend=0, append=[[1], [2]]),
                        lambda a: np.diff(a, n=2, prepend=0, append=[[1], [2]]), x,
                        transform=mode)
    for kw in [{}, {"axis": 0}, {"n": 0}]:
        check_against_numpy(lambda a: jnp.diff(a, **kw), lambda a: np.diff(a, **kw), x)
    b = np.array([True, False, False, True])
    assert_close(jnp.diff(b), np.diff(b))
    check_against_numpy(lambda a: jnp.ediff1d(a, to_end=[7, 8], to_begin=-1),
                        lambda a: np.ediff1d(a, to_end=[7, 8], to_begin=-1), x, transform=mode)
    with pytest.raises(ValueError, match="non-negative"):
        jnp.diff(x, n=-1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        jnp.diff(3)


def test_cov_and_corrcoef(mode):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 6)).astype(np.float32)
    y = rng.standard_normal((2, 6)).astype(np.float32)
    fw = np.array([1, 2, 1, 3, 1, 1])
    aw = rng.random(6).astype(np.float32)
    for kw in [{}, {"rowvar": False}, {"bias": True}, {"ddof": 2}, {"fweights": fw},
               {"aweights": aw}]:
        check_against_numpy(lambda a: jnp.cov(a, **kw), lambda a: np.cov(a, **kw), m,
                            rtol=1e-4, atol=1e-5)
    check_against_numpy(lambda a: jnp.cov(a, fweights=fw, aweights=aw),
                        lambda a: np.cov(a, fweights=fw, aweights=aw), m,
                        rtol=1e-4, atol=1e-5)
    check_against_numpy(jnp.cov, np.cov, m, y, rtol=1e-4, atol=1e-5)
    check_against_numpy(jnp.corrcoef, np.corrcoef, m, rtol=1e-4, atol=1e-5, transform=mode,
                        jax_fn=jax.numpy.corrcoef if jax else None)
    check_against_numpy(jnp.cov, np.cov, m[0], rtol=1e-4,
                        jax_fn=jax.numpy.cov if jax else None)
    check_grads(lambda a: jnp.corrcoef(a), (m.astype(np.float64),), order=1)


def test_polyval_and_nan_to_num(mode):
    p = np.array([2.0, -1.0, 0.5], np.float32)
    x = np.linspace(-2, 2, 7).astype(np.float32)
    check_against_numpy(jnp.polyval, np.polyval, p, x, transform=mode,
                        jax_fn=jax.numpy.polyval if jax else None)
    check_against_numpy(jnp.polyval, np.polyval, np.array([1, 0, -1], np.int32),
                        np.array([2, 3], np.int32), transform=mode)
    check_grads(jnp.polyval, (p.astype(np.float64), x.astype(np.float64)), order=2)
    v = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    check_against_numpy(jnp.nan_to_num, np.nan_to_num, v, transform=mode,
                        jax_fn=jax.numpy.nan_to_num if jax else None)
    check_against_numpy(lambda a: jnp.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0),
                        lambda a: np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), v,
                        transform=mode)
    assert_close(jnp.nan_to_num(jnp.array([1, 2])), np.array([1, 2], np.int32))


def test_index_helpers():
    for fn in ("tril_indices", "triu_indices"):
        for args in [(3,), (3, 1), (3, -1, 4)]:
            got = getattr(jnp, fn)(*args)
            want = getattr(np, fn)(*args)
            assert_close(got, tuple(w.astype(np.int32) for w in want))
    a = np.ones((3, 4))
    assert_close(jnp.tril_indices_from(a, 1), tuple(w.astype(np.int32)
                                                    for w in np.tril_indices_from(a, 1)))
    assert_close(jnp.triu_indices_from(a), tuple(w.astype(np.int32)
                                                 for w in np.triu_indices_from(a)))
    assert_close(jnp.diag_indices(3, 3), tuple(w.astype(np.int32)
                                               for w in np.diag_indices(3, 3)))
    assert_close(jnp.diag_indices_from(np.ones((2, 2))), (np.arange(2, dtype=np.int32),) * 2)
    with pytest.raises(ValueError, match="2-dimensional"):
        jnp.tril_indices_from(np.ones(3))
    with pytest.raises(ValueError, match="equal length"):
        jnp.diag_indices_from(np.ones((2, 3)))
    with pytest.raises(TypeError, match="concrete integer"):
        jnp.tril_indices(2.5)


def test_vectorize(mode):
    f = jnp.vectorize(lambda a, b: jnp.where(a > b, a - b, 0.0))
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    assert_close(mode(f)(x, np.float32(2.0)), np.where(x > 2, x - 2, 0).astype(np.float32))
    dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    a = np.arange(12.0, dtype=np.float32).reshape(2, 2, 3)
    b = np.arange(3.0, dtype=np.float32)
    assert_close(mode(dot)(a, b), np.einsum("ijk,k->ij", a, b))
    outer = jnp.vectorize(lambda u, v: (jnp.outer(u, v), u.sum()), signature="(n),(m)->(n,m),()")
    o, s = outer(a, np.ones(2, np.float32))
    assert o.shape == (2, 2, 3, 2) and s.shape == (2, 2)
    scaled = jnp.vectorize(lambda v, k: v * k, excluded={1})
    assert_close(scaled(jnp.arange(3.0), 2.0), np.arange(3.0, dtype=np.float32) * 2)
    kw = jnp.vectorize(lambda v, *, k: v + k)
    assert_close(kw(jnp.arange(3.0), k=jnp.ones(3)), np.arange(1.0, 4.0, dtype=np.float32))
    with pytest.raises(ValueError, match="signature"):
        jnp.vectorize(jnp.dot, signature="(n),(n)>()")
    with pytest.raises(ValueError, match="core dimension"):
        dot(a, np.ones(4, np.float32))
    if jax is not None:
        jdot = jax.numpy.vectorize(jax.numpy.dot, signature="(n),(n)->()")
        assert dot(a, b).dtype == jdot(a, b).dtype
