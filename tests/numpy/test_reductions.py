"""``absjit.numpy`` reductions: values against NumPy, result dtypes against JAX, over
axis choices (None, int, negative, tuple), keepdims, dtype, where, initial, 0-size and
size-1 dimensions; the Array methods that defer to them."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import absjit.numpy as jnp
from tests.checks import assert_close, jax_numpy

DTYPES = [np.bool_, np.int8, np.int32, np.uint8, np.float16, np.float32, np.complex64]


def _elements(dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind in "iu":
        return st.integers(-3 if dt.kind == "i" else 0, 4)
    part = st.floats(-3, 3, width=16 if dt.itemsize == 2 else 32, allow_subnormal=False)
    return st.builds(complex, part, part) if dt.kind == "c" else part


@st.composite
def _case(draw, dtypes=DTYPES, min_side=0, allow_nan=False):
    dt = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=min_side, max_side=3))
    elems = _elements(dt)
    if allow_nan and np.dtype(dt).kind == "f":
        elems = st.one_of(elems, st.just(np.nan))
    x = draw(hnp.arrays(dt, shape, elements=elems))
    nd = len(shape)
    axis = draw(st.one_of(
        st.none(), st.integers(-nd, nd - 1) if nd else st.none(),
        st.lists(st.integers(0, nd - 1), unique=True, max_size=nd).map(tuple) if nd
        else st.just(())))
    return x, axis, draw(st.booleans())


def _tol(dt):
    dt = np.dtype(dt)
    if dt == np.float16:
        return 3e-2
    return 2e-5 if dt.kind in "fc" else None


def _compare(name, out, x, np_ref, jax_kwargs):
    """Values against ``np_ref``; dtype and weak type against JAX."""
    if jax_numpy is not None:
        ref = getattr(jax_numpy, name)(x, **jax_kwargs)
        assert np.dtype(out.dtype) == np.dtype(ref.dtype), f"{out.dtype} != JAX {ref.dtype}"
        assert not out.weak_type and not ref.weak_type
    tol = _tol(out.dtype)
    assert_close(np.asarray(out), np.asarray(np_ref).astype(out.dtype), rtol=tol, atol=tol,
                 check_dtype=False)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all", "mean",
                                  "count_nonzero"])
@settings(max_examples=10)
@given(case=_case())
def test_reductions_against_numpy(name, case):
    x, axis, keepdims = case
    empty = any(np.shape(x)[a] == 0 for a in (range(x.ndim) if axis is None else
                                               np.atleast_1d(axis) % max(x.ndim, 1))) \
        if x.ndim else False
    if name in ("max", "min") and empty:
        with pytest.raises(ValueError, match="zero-size"):
            getattr(jnp, name)(x, axis=axis)
        return
    if name == "mean" and empty:
        return  # NaN with a NumPy warning; checked in test_mean_of_empty
    kwargs = dict(axis=axis, keepdims=keepdims)
    out = getattr(jnp, name)(x, **kwargs)
    with np.errstate(all="ignore"):
        if name == "prod" and x.dtype.kind in "biu":
            ref = np.prod(x.astype(np.int64), **kwargs)
        elif name in ("sum", "prod") and x.dtype.kind == "f":
            ref = getattr(np, name)(x.astype(np.float64), **kwargs)
        else:
            ref = getattr(np, name)(x, **kwargs)
    _compare(name, out, x, ref, kwargs)


@pytest.mark.parametrize("name", ["var", "std"])
@settings(max_examples=10)
@given(case=_case(dtypes=[np.int8, np.float16, np.float32, np.complex64], min_side=2),
       ddof=st.integers(0, 1))
def test_var_std(name, case, ddof):
    x, axis, keepdims = case
    kwargs = dict(axis=axis, keepdims=keepdims, ddof=ddof)
    out = getattr(jnp, name)(x, **kwargs)
    ref = getattr(np, name)(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
                            **kwargs)
    _compare(name, out, x, ref, kwargs)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@settings(max_examples=10)
@given(case=_case(dtypes=[np.bool_, np.int8, np.uint8, np.float16, np.float32], min_side=1,
                  allow_nan=True))
def test_argmax_argmin(name, case):
    x, axis, keepdims = case
    if isinstance(axis, tuple):
        axis = axis[0] if axis else None
    out = getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
    ref = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    _compare(name, out, x, ref, dict(axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@settings(max_examples=8)
@given(case=_case(dtypes=[np.bool_, np.int8, np.uint8, np.int32, np.float32], min_side=0,
                  allow_nan=True))
def test_cumulative(name, case):
    x, axis, _ = case
    if isinstance(axis, tuple):
        axis = axis[0] if axis else None
    if x.ndim == 0 and axis is not None:
        axis = None
    out = getattr(jnp, name)(x, axis=axis)
    if jax_numpy is not None:
        assert out.dtype == getattr(jax_numpy, name)(x, axis=axis).dtype
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x, axis=axis).astype(out.dtype)
    assert_close(out, ref, rtol=1e-5, atol=1e-5, check_dtype=False)


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean",
                                  "nanvar", "nanstd", "nanargmax", "nanargmin", "ptp"])
@settings(max_examples=8)
@given(case=_case(dtypes=[np.int32, np.float32], min_side=1, allow_nan=True))
def test_nan_variants(name, case):
    x, axis, keepdims = case
    if name in ("nanargmax", "nanargmin"):
        if isinstance(axis, tuple):
            axis = axis[0] if axis else None
        kwargs = dict(axis=axis)
    else:
        kwargs = dict(axis=axis, keepdims=keepdims)
    out = getattr(jnp, name)(x, **kwargs)
    with np.errstate(all="ignore"), _nowarn():
        try:
            ref = getattr(np, name)(x, **kwargs)
        except ValueError:  # NumPy's nanargmax of an all-NaN slice; JAX gives -1
            ref = None
    if jax_numpy is not None:
        j = getattr(jax_numpy, name)(x, **kwargs)
        assert out.dtype == j.dtype
        if ref is None:
            ref = j
    assert_close(np.asarray(out), np.asarray(ref).astype(out.dtype), rtol=1e-5, atol=1e-5,
                 check_dtype=False)


class _nowarn:
    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_])
def test_every_reduction_under_each_mode(dtype, mode, rng):
    """Each mode agrees with eager evaluation (all reductions of a dtype in one compile)."""
    x = rng.uniform(-2, 2, (3, 4)).astype(dtype) if dtype != np.bool_ else \
        rng.uniform(-2, 2, (3, 4)) > 0
    names = ["sum", "prod", "max", "min", "any", "all", "mean", "var", "std",
             "count_nonzero", "argmax", "argmin", "cumsum", "cumprod"]
    if dtype == np.float32:
        names += ["nansum", "nanmax", "nanmean", "ptp"]

    def run(v):
        outs = []
        for n in names:
            for axis in (None, 0, -1):
                outs.append(getattr(jnp, n)(v, axis=axis))
        outs.append(jnp.sum(v, axis=(0, 1), keepdims=True))
        outs.append(jnp.average(v.astype(np.float32), axis=1, weights=v[0].astype(np.float32)
                                + 3))
        return outs
    for g, e in zip(mode(run)(x), run(x)):
        assert_close(g, e, rtol=1e-5, atol=1e-5)


def test_dtypes_follow_jax():
    cases = {np.bool_: ("int32", "float32"), np.int8: ("int32", "float32"),
             np.uint8: ("uint32", "float32"), np.int32: ("int32", "float32"),
             np.float16: ("float16", "float16"), np.complex64: ("complex64", "complex64")}
    for dt, (sum_dt, mean_dt) in cases.items():
        x = np.ones((2, 3), dt)
        assert jnp.sum(x).dtype == sum_dt
        assert jnp.mean(x).dtype == mean_dt
        assert jnp.prod(x).dtype == sum_dt
    assert jnp.var(np.ones(3, np.complex64)).dtype == np.float32
    assert jnp.max(np.ones(3, np.int8)).dtype == np.int8
    assert not jnp.sum(2).weak_type and jnp.sum(2).dtype == np.int32
    assert jnp.sum(np.ones(3, np.int8), dtype=np.int8).dtype == np.int8
    assert jnp.mean(np.ones(3, np.int8), dtype=np.float16).dtype == np.float16
    assert jnp.count_nonzero(np.ones(3, np.float32)).dtype == np.int32


def test_where_and_initial(mode):
    x = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], np.float32)
    w = np.array([True, False, True])
    np.testing.assert_array_equal(mode(lambda v: jnp.sum(v, axis=1, where=w))(x),
                                  np.sum(x, axis=1, where=w))
    np.testing.assert_array_equal(jnp.sum(x, initial=10.0), np.sum(x, initial=10.0))
    np.testing.assert_array_equal(jnp.max(x, axis=0, initial=4.5),
                                  np.max(x, axis=0, initial=4.5))
    np.testing.assert_array_equal(jnp.max(x, axis=1, where=w, initial=-1.0),
                                  np.max(x, axis=1, where=w, initial=-1.0))
    np.testing.assert_allclose(jnp.mean(x, axis=1, where=w), np.mean(x, axis=1, where=w))
    np.testing.assert_allclose(jnp.var(x, where=w[None, :]), np.var(x, where=w[None, :]),
                               rtol=1e-6)
    np.testing.assert_array_equal(jnp.any(x > 4, where=w), np.any(x > 4, where=w))
    np.testing.assert_array_equal(jnp.prod(x, axis=0, where=w, keepdims=True),
                                  np.prod(x, axis=0, where=w, keepdims=True))
    with pytest.raises(ValueError, match="initial"):
        jnp.max(x, where=w)


def test_empty_and_size_one():
    e = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(jnp.sum(e, axis=0), [0, 0, 0])
    np.testing.assert_array_equal(jnp.prod(e, axis=0), [1, 1, 1])
    assert jnp.sum(e, axis=1).shape == (0,)
    assert bool(jnp.all(e)) and not bool(jnp.any(e))
    np.testing.assert_array_equal(jnp.max(e, axis=0, initial=-5.0), [-5, -5, -5])
    with pytest.raises(ValueError, match="zero-size"):
        jnp.max(e)
    with pytest.raises(ValueError, match="empty"):
        jnp.argmax(e)
    one = np.full((1, 1, 2), 3.0, np.float32)
    np.testing.assert_array_equal(jnp.sum(one, axis=(0, 1)), [3, 3])
    np.testing.assert_array_equal(jnp.var(one, axis=0), [[0, 0]])


def test_mean_of_empty():
    assert np.isnan(float(jnp.mean(np.zeros((0,), np.float32))))


def test_average():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.array([1, 2, 3])
    np.testing.assert_allclose(jnp.average(x), np.average(x))
    np.testing.assert_allclose(jnp.average(x, axis=1, weights=w), np.average(x, 1, w))
    avg, total = jnp.average(x, axis=1, weights=w, returned=True)
    ref_avg, ref_total = np.average(x, axis=1, weights=w, returned=True)
    np.testing.assert_allclose(avg, ref_avg)
    np.testing.assert_allclose(total, ref_total)
    np.testing.assert_allclose(jnp.average(x, weights=x + 1), np.average(x, weights=x + 1))
    assert jnp.average(x, axis=0, keepdims=True).shape == (1, 3)
    with pytest.raises(ValueError, match="weights"):
        jnp.average(x, axis=0, weights=w)


@pytest.mark.parametrize("call,exc", [
    (lambda x: jnp.sum(x, axis=2), ValueError), (lambda x: jnp.sum(x, axis=(0, 0)), ValueError),
    (lambda x: jnp.mean(x, axis=-3), ValueError), (lambda x: jnp.sum([1, 2]), TypeError),
    (lambda x: jnp.sum(x, out=x), TypeError), (lambda x: jnp.ptp(x > 0), TypeError),
    (lambda x: jnp.argmax(x.astype(np.complex64)), TypeError),
])
def test_bad_input(call, exc):
    with pytest.raises(exc):
        call(np.ones((2, 3), np.float32))


def test_array_methods(mode):
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    n = np.asarray(x)
    np.testing.assert_array_equal(x.sum(), n.sum())
    np.testing.assert_allclose(x.mean(0), n.mean(0))
    np.testing.assert_allclose(x.std(axis=1, ddof=1), n.std(axis=1, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(x.var(), n.var(), rtol=1e-6)
    np.testing.assert_array_equal(x.max(1, keepdims=True), n.max(1, keepdims=True))
    np.testing.assert_array_equal(x.min(), n.min())
    np.testing.assert_array_equal(x.prod(0), n.prod(0))
    np.testing.assert_array_equal(x.argmax(), n.argmax())
    np.testing.assert_array_equal(x.argmin(1), n.argmin(1))
    np.testing.assert_array_equal(x.cumsum(1), n.cumsum(1))
    np.testing.assert_array_equal(x.cumprod(), n.cumprod())
    np.testing.assert_array_equal(x.any(), n.any())
    np.testing.assert_array_equal(x.all(0), n.all(0))
    np.testing.assert_array_equal(x.ptp(), np.ptp(n))
    np.testing.assert_array_equal(mode(lambda v: v.sum(axis=0) + v.mean())(x),
                                  n.sum(0) + n.mean())


_GRAD_CASES = {
    "std": lambda m, v: m.std(v, axis=0).sum(),
    "logsumexp": lambda m, v: m.log(m.sum(m.exp(v))),
    "prod": lambda m, v: m.prod(v, axis=1).sum(),
    "max": lambda m, v: m.max(v),
    "cumprod": lambda m, v: m.cumprod(v, axis=1).sum(),
    "where_clip": lambda m, v: m.where(v > 1, m.sin(v), m.clip(v, 0.2, 0.8) ** 2).sum(),
    "hypot_atan2": lambda m, v: (m.hypot(v, 2.0) + m.arctan2(v, 1.5)).sum(),
    "mean_var": lambda m, v: m.var(v) + m.mean(v ** 3),
}


@pytest.mark.parametrize("name", sorted(_GRAD_CASES))
def test_grad_through_reductions_and_ufuncs(name):
    """The rules beside the primitives, driven by absjit.grad, against jax.grad."""
    import absjit
    x = np.array([[0.5, 1.5, 2.0], [1.0, 0.0, 3.0]], np.float32)
    f = _GRAD_CASES[name]
    g = np.asarray(absjit.grad(lambda v: f(jnp, v))(x))
    assert np.all(np.isfinite(g))
    if jax_numpy is not None:
        import jax
        np.testing.assert_allclose(g, jax.grad(lambda v: f(jax_numpy, v))(x), rtol=1e-4,
                                   atol=1e-5)
