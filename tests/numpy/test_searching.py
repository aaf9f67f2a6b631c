import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import errors
from tests.checks import assert_close, check_against_numpy, jax
from tests.grad_checks import check_grads

X = np.array([[0, 3, 0], [5, 0, 7]], np.int32)


def test_nonzero_family_eager():
    for got, want in zip(jnp.nonzero(X), np.nonzero(X)):
        assert_close(got, want.astype(np.int32))
    assert_close(jnp.argwhere(X), np.argwhere(X).astype(np.int32))
    assert_close(jnp.flatnonzero(X), np.flatnonzero(X).astype(np.int32))
    assert jnp.argwhere(5).shape == (1, 0) and jnp.argwhere(0).shape == (0, 0)
    with pytest.raises(ValueError, match="0d"):
        jnp.nonzero(3)


@pytest.mark.parametrize("size", [2, 3, 5, 8])
def test_nonzero_with_size_under_transforms(size, mode):
    def f(a):
        return jnp.nonzero(a, size=size, fill_value=-1)
    rows, cols = np.nonzero(X)
    out = mode(f)(X)
    k = min(size, rows.size)
    exp_r = np.full(size, -1, np.int32)
    exp_c = np.full(size, -1, np.int32)
    exp_r[:k], exp_c[:k] = rows[:k], cols[:k]
    assert_close(out, (exp_r, exp_c))
    aw = mode(lambda a: jnp.argwhere(a, size=size, fill_value=(9, 8)))(X)
    expected = np.stack([np.where(exp_r < 0, 9, exp_r), np.where(exp_c < 0, 8, exp_c)], -1)
    assert_close(aw, expected.astype(np.int32))
    fl = mode(lambda a: jnp.flatnonzero(a, size=size))(X)
    exp_f = np.zeros(size, np.int32)
    exp_f[:k] = np.flatnonzero(X)[:k]
    assert_close(fl, exp_f)


def test_nonzero_without_size_under_jit_explains():
    with pytest.raises(errors.ConcretizationTypeError, match="size="):
        absjit.jit(jnp.nonzero)(X)
    with pytest.raises(errors.ConcretizationTypeError, match="length="):
        absjit.jit(jnp.bincount)(jnp.array([1, 2]))
    # under grad (concrete level) the value is known, so no size is needed
    g = absjit.grad(lambda v: jnp.sum(v[jnp.nonzero(v > 1.0)]))(jnp.array([0.5, 2.0, 3.0]))
    assert_close(g, np.array([0.0, 1.0, 1.0], np.float32))


def test_isin_select_piecewise(mode):
    e = np.array([[1, 2], [3, 4]], np.int32)
    t = np.array([4, 1, 9], np.int32)
    check_against_numpy(jnp.isin, np.isin, e, t, transform=mode,
                        jax_fn=jax.numpy.isin if jax else None)
    check_against_numpy(lambda a, b: jnp.isin(a, b, invert=True),
                        lambda a, b: np.isin(a, b, invert=True), e, t, transform=mode)
    x = np.linspace(-2, 2, 9).astype(np.float32)
    check_against_numpy(lambda v: jnp.select([v < -1, v > 1], [v * 2, v ** 2], default=-7),
                        lambda v: np.select([v < -1, v > 1], [v * 2, v ** 2], default=-7),
                        x, transform=mode)
    check_against_numpy(
        lambda v: jnp.piecewise(v, [v < 0, v > 1], [lambda u: -u, 5.0, lambda u: u / 2]),
        lambda v: np.piecewise(v, [v < 0, v > 1], [lambda u: -u, 5.0, lambda u: u / 2]),
        x, transform=mode)


def test_select_and_piecewise_errors_and_gradient():
    with pytest.raises(ValueError, match="same length"):
        jnp.select([True], [1, 2])
    with pytest.raises(ValueError, match="funclist"):
        jnp.piecewise(jnp.ones(3), [jnp.ones(3) > 0], [1, 2, 3])
    x = np.array([-1.5, 0.5, 2.0])
    check_grads(lambda v: jnp.piecewise(v, [v < 0], [lambda u: u ** 2, lambda u: jnp.sin(u)]),
                (x,), order=1)


def test_bincount(mode):
    x = np.array([0, 1, 1, 3, 7], np.int32)
    w = np.array([0.5, 1.0, 2.0, 3.0, 4.0], np.float32)
    assert_close(jnp.bincount(x), np.bincount(x).astype(np.int32))
    assert_close(jnp.bincount(x, minlength=10), np.bincount(x, minlength=10).astype(np.int32))
    out = mode(lambda a, b: jnp.bincount(a, b, length=5))(x, w)
    assert_close(out, np.bincount(x, w)[:5].astype(np.float32))
    if jax is not None:
        assert out.dtype == jax.numpy.bincount(x, w, length=5).dtype
    with pytest.raises(TypeError, match="integer"):
        jnp.bincount(jnp.ones(3))
    with pytest.raises(ValueError, match="1-D"):
        jnp.bincount(jnp.ones((2, 2), jnp.int32))


@pytest.mark.parametrize("bins, rng_, density", [(5, None, None), (3, (0.0, 1.0), True),
                                                 (np.array([0.0, 0.1, 0.5, 2.0]), None, None)])
def test_histogram(bins, rng_, density, mode):
    a = np.random.default_rng(0).random(50).astype(np.float32)
    counts, edges = mode(lambda v: jnp.histogram(v, bins=bins, range=rng_,
                                                 density=density))(a)
    e_counts, e_edges = np.histogram(a, bins=bins, range=rng_, density=density)
    assert_close(edges, e_edges.astype(np.float32))
    assert_close(counts, e_counts.astype(np.float32), rtol=1e-5)
    if jax is not None and density:
        jc, je = jax.numpy.histogram(a, bins=bins, range=rng_, density=density)
        assert counts.dtype == jc.dtype and edges.dtype == je.dtype
    w = np.arange(50, dtype=np.float32)
    assert_close(jnp.histogram(a, 4, weights=w)[0], np.histogram(a, 4, weights=w)[0]
                 .astype(np.float32))


def test_interp(mode):
    xp = np.array([0.0, 1.0, 1.0, 3.0], np.float32)
    fp = np.array([0.0, 2.0, 3.0, -1.0], np.float32)
    x = np.linspace(-1, 4, 11).astype(np.float32)
    check_against_numpy(jnp.interp, np.interp, x, xp, fp, transform=mode,
                        jax_fn=jax.numpy.interp if jax else None)
    check_against_numpy(lambda a, b, c: jnp.interp(a, b, c, left=-5.0, right=9.0),
                        lambda a, b, c: np.interp(a, b, c, left=-5.0, right=9.0),
                        x, xp, fp, transform=mode)
    xp2 = np.array([350.0, 10.0, 90.0], np.float32)
    fp2 = np.array([1.0, 2.0, 3.0], np.float32)
    x2 = np.array([0.0, 45.0, 200.0, 370.0], np.float32)
    assert_close(jnp.interp(x2, xp2, fp2, period=360), np.interp(x2, xp2, fp2, period=360)
                 .astype(np.float32), rtol=1e-5)
    assert_close(jnp.interp(jnp.array([1, 2]), jnp.array([0, 4]), jnp.array([0, 8])),
                 np.array([2.0, 4.0], np.float32))
    check_grads(lambda v, f: jnp.interp(v, jnp.asarray(xp[[0, 1, 3]]), f),
                (np.array([0.3, 2.0]), np.array([0.0, 2.0, -1.0])), order=1)
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.interp(x, xp, fp[:2])


def test_nonzero_with_size_edge_cases():
    assert_close(jnp.nonzero(jnp.zeros(0), size=3, fill_value=-1),
                 (np.full(3, -1, np.int32),))
    assert_close(jnp.nonzero(jnp.zeros((0, 2)), size=2), (np.zeros(2, np.int32),) * 2)
    assert_close(jnp.nonzero(jnp.array([1, 0, 2, 3, 0, 4]), size=2),
                 (np.array([0, 2], np.int32),))
    with pytest.raises(ValueError, match="fill_value"):
        jnp.nonzero(X, size=2, fill_value=(1, 2, 3))
    with pytest.raises(ValueError, match="non-negative"):
        jnp.nonzero(X, size=-1)


@pytest.mark.parametrize("kw", [{}, {"bins": [2, 4]}, {"bins": np.array([-1., 0., 1.5])},
                                {"bins": 3, "range": [(-1, 1), (0, 2)]},
                                {"bins": 3, "density": True}, {"bins": 3, "weights": True}])
def test_histogram2d_and_histogramdd(mode, kw):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2, 25)).astype(np.float32)
    kw = dict(kw)
    if kw.get("weights") is True:
        kw["weights"] = rng.random(25).astype(np.float32)
    got = mode(lambda a, b: jnp.histogram2d(a, b, **kw))(x, y)
    want = np.histogram2d(x, y, **kw)
    assert_close(got, tuple(np.asarray(w).astype(np.asarray(g).dtype)
                            for g, w in zip(got, want)))
    # JAX's dtypes, asked in eager mode only (JAX compiles for each call); every mode
    # gives eager's
    reference = jnp.histogram2d(x, y, **kw)
    eager = mode(jnp.histogram2d) is jnp.histogram2d
    if jax is not None and eager:
        reference = jax.numpy.histogram2d(x, y, **kw)
    for g, r in zip(got, reference):
        assert g.dtype == r.dtype
    pts = np.stack([x, y, x * y], axis=1)
    counts, edges = mode(lambda s: jnp.histogramdd(s, bins=[2, 3, 2]))(pts)
    want_c, want_e = np.histogramdd(pts, bins=[2, 3, 2])
    assert_close(counts, want_c.astype(np.int32))
    assert_close(edges, [e.astype(np.float32) for e in want_e])


def test_histogramdd_errors():
    with pytest.raises(ValueError, match="one entry per dimension"):
        jnp.histogramdd(np.ones((4, 2)), bins=[2, 3, 4])
    with pytest.raises(ValueError, match="one entry per dimension"):
        jnp.histogramdd(np.ones((4, 2)), range=[(0, 1)])
    with pytest.raises(ValueError, match=r"\(N, D\)"):
        jnp.histogramdd(np.ones((2, 2, 2)))
