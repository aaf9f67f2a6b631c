"""scipy.stats: norm.sf/logsf/isf, sem, rankdata and mode against scipy.stats (values)
and JAX (values, dtypes, weak types), in every mode, under vmap and grad, with
hypothesis-drawn data for the rankings, and their errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st_
from hypothesis.extra import numpy as hnp
from scipy import stats as ss

import absjit
import absjit.numpy as jnp
from absjit.scipy import stats as st
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads

X = np.array([-3.0, -0.3, 0.0, 0.7, 2.5, 9.0], np.float32)


def test_norm_tails(mode):
    got = mode(lambda x, q: (st.norm.sf(x, 0.5, 2.0), st.norm.logsf(x, 0.5, 2.0),
                             st.norm.isf(q, 1.0, 3.0)))(X, np.float32([0.01, 0.3, 0.5, 0.9]))
    assert_close(got[0], ss.norm.sf(X, 0.5, 2.0).astype(np.float32), rtol=2e-5, atol=0)
    assert_close(got[1], ss.norm.logsf(X, 0.5, 2.0).astype(np.float32), rtol=2e-5)
    assert_close(got[2], ss.norm.isf([0.01, 0.3, 0.5, 0.9], 1.0, 3.0).astype(np.float32),
                 rtol=1e-4, atol=1e-5)
    # the upper tail keeps its relative precision
    assert_close(st.norm.sf(np.float32(8.0)), np.float32(ss.norm.sf(8.0)), rtol=1e-4)
    assert_close(st.norm.logsf(np.float32(40.0)), np.float32(ss.norm.logsf(40.0)), rtol=1e-5)


@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("x", [1.0, 1, np.float32(2.0), np.array([0.5, -1.0], np.float32)])
@pytest.mark.parametrize("name", ["sf", "logsf"])
def test_norm_dtypes_match_jax(name, x):
    out = getattr(st.norm, name)(x)
    ref = getattr(jax.scipy.stats.norm, name)(x)
    assert out.dtype == ref.dtype and out.weak_type == ref.weak_type
    assert_close(out, np.asarray(ref), rtol=1e-5)
    q = getattr(st.norm, "isf")(0.25)
    assert q.dtype == jax.scipy.stats.norm.isf(0.25).dtype


def test_norm_grads():
    absjit.config.update("enable_x64", True)
    x = np.array([-1.0, 0.3, 2.0])
    check_grads(lambda v: st.norm.sf(v, 0.5, 2.0), (x,))
    check_grads(lambda v: st.norm.logsf(v, 0.5, 2.0), (x,))
    check_grads(lambda q: st.norm.isf(q, 1.0, 3.0), (np.array([0.1, 0.4, 0.8]),))


def test_sem():
    r = np.random.default_rng(0)
    a = r.standard_normal((4, 5)).astype(np.float32)
    for kw in (dict(), dict(axis=1), dict(axis=None), dict(ddof=0, keepdims=True)):
        assert_close(st.sem(a, **kw), np.asarray(ss.sem(a, **kw), np.float32), rtol=1e-5)
    b = a.copy()
    b[1, 2] = b[3, 0] = np.nan
    assert_close(st.sem(b, nan_policy="omit"),
                 np.asarray(ss.sem(b, nan_policy="omit"), np.float32), rtol=1e-5)
    assert np.isnan(np.asarray(st.sem(b))[2])
    assert st.sem(np.arange(4)).dtype == np.float32
    if jax is not None:
        for v in (a, np.arange(4), [1.0, 2.0, 4.0]):
            out, ref = st.sem(v), jax.scipy.stats.sem(jax.numpy.asarray(v))
            assert out.dtype == ref.dtype and out.weak_type == ref.weak_type
    g = absjit.grad(lambda v: st.sem(v))(a[0])
    eps = 1e-3
    num = [(ss.sem(a[0] + eps * np.eye(5)[i]) - ss.sem(a[0] - eps * np.eye(5)[i])) / (2 * eps)
           for i in range(5)]
    assert_close(g, np.asarray(num, np.float32), rtol=1e-2, atol=1e-3)


METHODS = ["average", "min", "max", "dense", "ordinal"]


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=2, max_side=6),
                  elements=st_.integers(-3, 3).map(float)),
       st_.sampled_from(METHODS), st_.sampled_from([None, 0, -1]))
def test_rankdata_matches_scipy(a, method, axis):
    got = st.rankdata(a, method, axis=axis)
    want = ss.rankdata(a, method, axis=axis).astype(np.float32)
    assert_close(got, want)


@given(hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=2, max_side=6),
                  elements=st_.integers(-2, 2)),
       st_.sampled_from([None, 0, -1]), st_.booleans())
def test_mode_matches_scipy(a, axis, keepdims):
    got = st.mode(a, axis=axis, keepdims=keepdims)
    want = ss.mode(a, axis=axis, keepdims=keepdims)
    assert_close(got.mode, np.asarray(want.mode, np.int32))
    assert_close(got.count, np.asarray(want.count, np.int32))


def test_rank_and_mode_every_mode_and_vmap(mode):
    a = np.array([[3.0, 1.0, 2.0, 2.0, 5.0, 1.0], [0.0, 0.0, 0.0, 4.0, -1.0, 4.0]], np.float32)

    def prog(a):
        return tuple(st.rankdata(a, m, axis=1) for m in METHODS) + tuple(st.mode(a, axis=1)) + (
            st.sem(a, axis=1),)
    got = mode(prog)(a)
    for m, g in zip(METHODS, got):
        assert_close(g, ss.rankdata(a, m, axis=1).astype(np.float32), err_msg=m)
    want = ss.mode(a, axis=1)
    assert_close(got[5], want.mode.astype(np.float32))
    assert_close(got[6], want.count.astype(np.int32))
    assert_close(got[7], ss.sem(a, axis=1).astype(np.float32), rtol=1e-5)
    batched = absjit.vmap(lambda r: st.rankdata(r))(a)
    assert_close(batched, ss.rankdata(a, axis=1).astype(np.float32))


def test_nan_handling_matches_jax():
    a = np.array([1.0, 2.0, 2.0, np.nan, np.nan, np.nan], np.float32)
    m = st.mode(a)
    assert np.isnan(np.asarray(m.mode)) and int(m.count) == 3
    assert np.isnan(np.asarray(st.rankdata(np.array([3.0, np.nan, 2.0])))).all()
    if jax is not None:
        jm = jax.scipy.stats.mode(a)
        assert int(jm.count) == 3 and np.isnan(np.asarray(jm.mode))
        r = np.array([[3, 1], [2, 2]], np.int32)
        jr = jax.scipy.stats.rankdata(r, axis=0)
        out = st.rankdata(r, axis=0)
        assert out.dtype == jr.dtype
        assert_close(out, np.asarray(jr))


def test_bad_input():
    with pytest.raises(ValueError, match="unknown method"):
        st.rankdata([1, 2], method="foo")
    with pytest.raises(NotImplementedError, match="omit"):
        st.rankdata([1, 2], nan_policy="omit")
    with pytest.raises(NotImplementedError, match="omit"):
        st.mode([1, 2], nan_policy="omit")
    with pytest.raises(ValueError, match="raise"):
        st.sem([1.0, 2.0], nan_policy="raise")
    with pytest.raises(ValueError, match="nan_policy"):
        st.sem([1.0, 2.0], nan_policy="bogus")
    with pytest.raises(ValueError, match="empty"):
        st.mode(np.zeros((0,), np.float32))
