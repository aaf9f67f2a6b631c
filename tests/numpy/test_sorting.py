"""absjit.numpy sorting, order statistics and convolution against NumPy and JAX."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as hst
from hypothesis.extra import numpy as hnp

import absjit
import absjit.numpy as jnp
from absjit.errors import ConcretizationTypeError
from tests.checks import assert_close, check_against_numpy, jax_numpy


def _with(fn, **kw):
    return lambda *a: fn(*a, **kw)


def _jfn(name, **kw):
    if jax_numpy is None:
        return None
    fn = getattr(jax_numpy, name)
    return lambda *a: fn(*a, **kw)


_floats = hst.floats(-10, 10, width=32) | hst.just(np.nan)
arrays = hst.sampled_from([np.int32, np.float32]).flatmap(
    lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                          elements=_floats if dt == np.float32 else hst.integers(-5, 5)))


@given(arrays, hst.data())
def test_sort_and_argsort(x, data):
    axis = data.draw(hst.sampled_from([None] + list(range(-x.ndim, x.ndim))))
    check_against_numpy(_with(jnp.sort, axis=axis), _with(np.sort, axis=axis), x,
                        jax_fn=_jfn("sort", axis=axis))
    check_against_numpy(_with(jnp.argsort, axis=axis),
                        lambda a: np.argsort(a, axis=axis, kind="stable"), x,
                        jax_fn=_jfn("argsort", axis=axis))


@given(hnp.arrays(np.int32, hst.integers(0, 8), elements=hst.integers(0, 3)))
def test_descending_is_stable(x):
    idx = np.asarray(jnp.argsort(x, descending=True))
    expected = np.argsort(-x.astype(np.int64), kind="stable")
    np.testing.assert_array_equal(idx, expected)
    np.testing.assert_array_equal(np.asarray(jnp.sort(x, descending=True)), x[expected])


def test_sort_under_mode(mode, rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)

    def f(x):
        return jnp.sort(x), jnp.argsort(x, axis=0), jnp.sort(x, axis=None, descending=True)

    def ref(x):
        return np.sort(x), np.argsort(x, axis=0), np.sort(x, axis=None)[::-1]
    check_against_numpy(mode(f), ref, x)


def test_sort_methods_and_0d():
    x = jnp.array([3., 1., 2.])
    assert_close(x.sort() if hasattr(x, "sort") else jnp.sort(x), np.array([1, 2, 3], np.float32))
    assert jnp.sort(jnp.float32(2)).shape == ()
    assert jnp.argsort(jnp.float32(2)).dtype == np.int32


def test_lexsort_and_searchsorted(mode, rng):
    a = rng.integers(0, 3, 6).astype(np.int32)
    b = rng.integers(0, 3, 6).astype(np.int32)
    check_against_numpy(mode(lambda x, y: jnp.lexsort((x, y))), lambda x, y: np.lexsort((x, y)),
                        a, b)
    s = np.array([1., 2., 2., 3.5], np.float32)
    v = np.array([[0., 2.], [3., 9.]], np.float32)
    for side in ("left", "right"):
        check_against_numpy(mode(_with(jnp.searchsorted, side=side)),
                            _with(np.searchsorted, side=side), s, v,
                            jax_fn=_jfn("searchsorted", side=side))
    perm = np.array([2, 0, 3, 1], np.int32)
    unsorted = s[np.argsort(perm)]
    sorter = np.argsort(unsorted).astype(np.int32)
    check_against_numpy(_with(jnp.searchsorted, sorter=sorter),
                        _with(np.searchsorted, sorter=sorter), unsorted, v)


METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantile(rng, method, axis, keepdims):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    for q in (0.5, 0.3, np.array([0., 0.25, 1.], np.float32),
              np.array([[0.1], [0.9]], np.float32)):
        kw = dict(axis=axis, method=method, keepdims=keepdims)
        check_against_numpy(lambda a: jnp.quantile(a, q, **kw),
                            lambda a: np.quantile(a, q, **kw), x,
                            jax_fn=(None if jax_numpy is None or np.ndim(q) > 1 else
                                    lambda a: jax_numpy.quantile(a, q, **kw)),
                            rtol=1e-5, atol=1e-6)


def test_median_percentile_nan_variants(mode, rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    x[1, 2] = np.nan
    x[3, :] = np.nan

    def f(x):
        return (jnp.median(x), jnp.median(x, axis=1), jnp.percentile(x, 30, axis=0),
                jnp.nanmedian(x, axis=1), jnp.nanquantile(x, 0.2, axis=1),
                jnp.nanpercentile(x, 75, axis=1, keepdims=True))

    def ref(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return (np.median(x), np.median(x, axis=1), np.percentile(x, 30, axis=0),
                    np.nanmedian(x, axis=1), np.nanquantile(x, 0.2, axis=1),
                    np.nanpercentile(x, 75, axis=1, keepdims=True))
    check_against_numpy(mode(f), ref, x, rtol=1e-5)


def test_median_dtypes_like_jax():
    out = jnp.median(jnp.array([3, 1, 2, 10]))
    assert out.dtype == np.float32 and float(out) == 2.5
    if jax_numpy is not None:
        assert jax_numpy.median(jax_numpy.array([3, 1, 2, 10])).dtype == out.dtype


def test_quantile_traced_q(mode):
    x = np.arange(10, dtype=np.float32)
    out = mode(lambda a, q: jnp.quantile(a, q))(x, np.array([0.25, 0.5], np.float32))
    assert_close(out, np.quantile(x, [0.25, 0.5]).astype(np.float32))


def test_quantile_bad_input():
    with pytest.raises(ValueError, match="method"):
        jnp.quantile(np.ones(3), 0.5, method="bogus")
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.median(np.ones(3), axis=2)
    with pytest.raises(TypeError, match="complex"):
        jnp.median(np.ones(3, np.complex64))


def test_unique_eager_and_concretization():
    assert_close(jnp.unique(jnp.array([3, 1, 3, 2])), np.array([1, 2, 3], np.int32))
    vals, counts = jnp.unique(np.array([3, 1, 3]), return_counts=True)
    assert_close(counts, np.array([1, 2], np.int32))
    with pytest.raises(ConcretizationTypeError):
        absjit.jit(jnp.unique)(np.array([1, 2]))


@given(hnp.arrays(np.int32, hst.integers(1, 8), elements=hst.integers(-3, 3)),
       hst.integers(1, 6))
def test_unique_with_size_under_jit(x, size):
    out = absjit.jit(lambda a: jnp.unique(a, size=size, fill_value=-9),
                     backend="interpret")(x)
    expected = np.unique(x)[:size]
    expected = np.concatenate([expected, np.full(size - len(expected), -9, np.int32)])
    assert_close(out, expected.astype(np.int32))
    if jax_numpy is not None:
        assert_close(out, np.asarray(jax_numpy.unique(x, size=size, fill_value=-9)))


def test_unique_size_defaults_and_errors():
    assert_close(jnp.unique(np.array([4, 2, 4], np.int32), size=3),
                 np.array([2, 4, 2], np.int32))   # padded with the smallest value
    with pytest.raises(ValueError, match="fill_value"):
        jnp.unique(np.zeros(0, np.int32), size=2)
    with pytest.raises(NotImplementedError, match="axis"):
        jnp.unique(np.ones((3, 2)), size=2, axis=0)


# ---------------------------------------------------------------------------
# convolve / correlate
# ---------------------------------------------------------------------------
def test_seed_convolve(mode):
    out = mode(jnp.convolve)(jnp.array([1, 2, 1]), jnp.ones(10))
    assert out.dtype == np.float32
    assert_close(out, np.array([1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.], np.float32))


@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("mode_", ["full", "same", "valid"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32])
def test_convolve_correlate(rng, fn, mode_, dtype):
    for n, m in [(1, 1), (5, 2), (5, 3), (2, 5), (3, 6), (4, 4)]:
        a = rng.standard_normal(n) + (1j * rng.standard_normal(n) if dtype == np.complex64 else 0)
        v = rng.standard_normal(m) + (1j * rng.standard_normal(m) if dtype == np.complex64 else 0)
        a, v = (a * 3).astype(dtype), (v * 3).astype(dtype)
        check_against_numpy(_with(getattr(jnp, fn), mode=mode_),
                            _with(getattr(np, fn), mode=mode_), a, v,
                            jax_fn=_jfn(fn, mode=mode_) if (n, m) == (5, 3) else None,
                            rtol=1e-4, atol=1e-4)


def test_convolve_bad_input():
    with pytest.raises(ValueError, match="1-D"):
        jnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="mode"):
        jnp.convolve(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(ValueError, match="empty"):
        jnp.correlate(np.ones(0), np.ones(2))


def test_grad_of_order_statistics(rng):
    x = rng.standard_normal(6).astype(np.float32)
    g = absjit.grad(lambda a: jnp.quantile(a, 0.3) + jnp.median(a))(x)
    if jax_numpy is not None:
        import jax
        jg = jax.grad(lambda a: jax_numpy.quantile(a, 0.3) + jax_numpy.median(a))(x)
        assert_close(g, np.asarray(jg), rtol=1e-5, atol=1e-6)
    assert abs(float(np.sum(np.asarray(g))) - 2.0) < 1e-5   # both are weighted averages
