"""lax reduction and cumulative primitives: values against NumPy and ``jax.lax``, empty
reductions, NaN handling, printing, errors, and their JVP / transpose / batching rules."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import absjit
from absjit import lax
from absjit.core.trace import get_aval
from absjit.interpreters import ad, batching
from tests.checks import assert_close, jax

jlax = None if jax is None else jax.lax

DTYPES = [np.bool_, np.int8, np.int32, np.uint8, np.float16, np.float32, np.complex64]
_KIND_OK = {
    "reduce_sum": "iufc", "reduce_prod": "iufc", "reduce_max": "biuf", "reduce_min": "biuf",
    "reduce_and": "biu", "reduce_or": "biu",
}
_NP = {
    "reduce_sum": lambda x, a: np.sum(x, axis=a, dtype=x.dtype),
    "reduce_prod": lambda x, a: np.prod(x, axis=a, dtype=x.dtype),
    "reduce_max": lambda x, a: np.max(x, axis=a),
    "reduce_min": lambda x, a: np.min(x, axis=a),
    "reduce_and": lambda x, a: np.bitwise_and.reduce(x, axis=a),
    "reduce_or": lambda x, a: np.bitwise_or.reduce(x, axis=a),
}


def _array(dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        elems = st.booleans()
    elif dt.kind in "iu":
        elems = st.integers(-3 if dt.kind == "i" else 0, 5)
    elif dt.kind == "c":
        part = st.floats(-2, 2, width=32, allow_subnormal=False)
        elems = st.builds(complex, part, part)
    else:
        elems = st.floats(-2, 2, width=8 * dt.itemsize, allow_subnormal=False)
    return hnp.arrays(dt, shape, elements=elems)


@st.composite
def _operand_and_axes(draw, kinds):
    dtype = draw(st.sampled_from([d for d in DTYPES if np.dtype(d).kind in kinds]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    x = draw(_array(dtype, shape))
    axes = tuple(sorted(draw(st.sets(st.integers(0, max(len(shape) - 1, 0)),
                                     max_size=len(shape)))))
    return x, axes


@pytest.mark.parametrize("name", sorted(_NP))
@settings(max_examples=8)
@given(data=st.data())
def test_reductions_against_numpy_and_jax(name, data):
    x, axes = data.draw(_operand_and_axes(_KIND_OK[name]))
    out = getattr(lax, name)(x, axes)
    assert out.dtype == x.dtype and not out.weak_type
    if any(x.shape[a] == 0 for a in axes):
        kind = name[len("reduce_"):]
        expected = np.full([d for i, d in enumerate(x.shape) if i not in axes],
                           lax.reduction_identity(kind, x.dtype))
    else:
        expected = _NP[name](x, axes)
    rtol = 5e-3 if x.dtype == np.float16 else 1e-5
    assert_close(out, np.asarray(expected, x.dtype), rtol=rtol, atol=rtol)
    if jlax is not None and not (x.dtype.kind == "c" and name == "reduce_prod"):
        j = getattr(jlax, name)(x, axes)
        assert j.dtype == out.dtype
        assert_close(out, np.asarray(j), rtol=rtol, atol=rtol, check_dtype=False)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_every_reduction_under_each_mode(dtype, mode, rng):
    """Each mode agrees with the eager reference (all reductions in one compile)."""
    x = rng.uniform(-2, 2, (3, 4)).astype(dtype) if dtype != np.bool_ else \
        rng.uniform(-2, 2, (3, 4)) > 0
    kind = np.dtype(dtype).kind
    names = [n for n in sorted(_NP) if kind in _KIND_OK[n]]

    def run(v):
        outs = [getattr(lax, n)(v, axes) for n in names for axes in ((0,), (1,), (0, 1))]
        if kind != "b":
            outs += [lax.argmax(v, 1, np.int32), lax.argmin(v, 0, np.int32)]
            outs += [getattr(lax, c)(v, 1, r) for c in ("cumsum", "cumprod", "cummax",
                                                        "cummin") for r in (False, True)]
        return outs
    for g, e in zip(mode(run)(x), run(x)):
        assert_close(g, e, rtol=1e-5, atol=1e-5)


def test_empty_reduction_identities():
    e = np.zeros((0, 2), np.float32)
    np.testing.assert_array_equal(lax.reduce_sum(e, (0,)), [0, 0])
    np.testing.assert_array_equal(lax.reduce_prod(e, (0,)), [1, 1])
    np.testing.assert_array_equal(lax.reduce_max(e, (0,)), [-np.inf, -np.inf])
    np.testing.assert_array_equal(lax.reduce_min(e, (0,)), [np.inf, np.inf])
    ei = np.zeros((0,), np.int32)
    assert int(lax.reduce_max(ei, (0,))) == np.iinfo(np.int32).min
    assert int(lax.reduce_min(ei, (0,))) == np.iinfo(np.int32).max
    assert bool(lax.reduce_and(np.zeros((0,), bool), (0,)))
    assert not bool(lax.reduce_or(np.zeros((0,), bool), (0,)))


def test_nan_propagates_and_argmax_takes_first_nan(mode):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 5.0, 5.0, 0.0]], np.float32)
    assert np.isnan(np.asarray(mode(lambda v: lax.reduce_max(v, (0, 1)))(x)))
    am = mode(lambda v: lax.argmax(v, 1, np.int32))(x)
    np.testing.assert_array_equal(am, [1, 1])
    np.testing.assert_array_equal(mode(lambda v: lax.argmin(v, 1, np.int32))(x), [1, 3])
    assert am.dtype == np.int32
    if jlax is not None:
        np.testing.assert_array_equal(am, jlax.argmax(x, 1, np.int32))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("reverse", [False, True])
@settings(max_examples=5)
@given(data=st.data())
def test_cumulative_against_jax(name, reverse, data):
    dtype = data.draw(st.sampled_from([np.int32, np.float32, np.uint8]))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))
    x = data.draw(_array(dtype, shape))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    out = getattr(lax, name)(x, axis, reverse)
    npfn = {"cumsum": np.cumsum, "cumprod": np.cumprod, "cummax": np.maximum.accumulate,
            "cummin": np.minimum.accumulate}[name]
    xr = np.flip(x, axis) if reverse else x
    expected = npfn(xr, axis=axis).astype(x.dtype) if name.startswith("cum") and \
        name in ("cummax", "cummin") else npfn(xr, axis=axis, dtype=x.dtype)
    expected = np.flip(expected, axis) if reverse else expected
    assert_close(out, expected, rtol=1e-5, atol=1e-5)
    if jlax is not None:
        assert_close(out, np.asarray(getattr(jlax, name)(x, axis % len(shape), reverse)),
                     rtol=1e-5, atol=1e-5)


def test_printing_matches_jax_style():
    x = np.ones((2, 3), np.float32)
    text = str(absjit.make_jaxpr(lambda v: lax.reduce_sum(v, (0,)))(x))
    assert "reduce_sum[axes=(0,)] a" in text
    text = str(absjit.make_jaxpr(lambda v: lax.argmax(v, 1, np.int32))(x))
    assert "argmax[axes=(1,) index_dtype=int32] a" in text
    text = str(absjit.make_jaxpr(lambda v: lax.cumsum(v, 1, reverse=True))(x))
    assert "cumsum[axis=1 reverse=True] a" in text


@pytest.mark.parametrize("fn,exc,msg", [
    (lambda x: lax.reduce_sum(x, (2,)), ValueError, "out of bounds"),
    (lambda x: lax.reduce_sum(x.astype(bool), (0,)), TypeError, "reduce_sum does not accept"),
    (lambda x: lax.reduce_and(x, (0,)), TypeError, "reduce_and does not accept dtype float32"),
    (lambda x: lax.argmax(x[:0], 0, np.int32), ValueError, "empty"),
    (lambda x: lax.argmax(x, 0, np.float32), TypeError, "index_dtype"),
    (lambda x: lax.cumsum(x, 3), ValueError, "out of bounds"),
    (lambda x: lax.reduce_max_p.bind(x, axes=(1, 0)), ValueError, "sorted"),
])
def test_bad_input(fn, exc, msg):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(exc, match=msg):
        fn(x)


def test_negative_axes_are_normalised():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(lax.reduce_sum(x, (-1,)), x.sum(-1))
    np.testing.assert_array_equal(lax.argmax(x, -1, np.int32), [2, 2])


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------
def _jvp(prim, x, t, **params):
    outs, touts = ad.jvp_rules[prim]([x], [t], **params)
    return outs[0], touts[0]


@pytest.mark.parametrize("name,axes", [("reduce_sum", (0, 2)), ("reduce_max", (1,)),
                                       ("reduce_min", (0, 1, 2)), ("reduce_prod", (2,)),
                                       ("reduce_prod", (0, 2))])
def test_reduce_jvp_against_jax(name, axes, rng):
    x = rng.uniform(0.5, 2, (2, 3, 4)).astype(np.float32)
    x[0, 0, 0] = 0.0  # products with a zero must stay exact
    x[1, 1, :2] = 5.0  # ties in max
    t = rng.normal(size=x.shape).astype(np.float32)
    out, tout = _jvp(getattr(lax, f"{name}_p"), x, t, axes=axes)
    if jax is not None:
        jfn = {"reduce_sum": jax.numpy.sum, "reduce_max": jax.numpy.max,
               "reduce_min": jax.numpy.min, "reduce_prod": jax.numpy.prod}[name]
        jo, jt = jax.jvp(lambda v: jfn(v, axis=axes), (x,), (t,))
        np.testing.assert_allclose(out, jo, rtol=1e-5)
        np.testing.assert_allclose(tout, jt, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_jvp_against_jax(name, reverse, axis, rng):
    x = rng.uniform(0.5, 2, (3, 4)).astype(np.float32)
    x[1, 1] = 0.0
    t = rng.normal(size=x.shape).astype(np.float32)
    out, tout = _jvp(getattr(lax, f"{name}_p"), x, t, axis=axis, reverse=reverse)
    if jax is not None:
        jo, jt = jax.jvp(lambda v: getattr(jlax, name)(v, axis, reverse), (x,), (t,))
        np.testing.assert_allclose(out, jo, rtol=1e-5)
        np.testing.assert_allclose(tout, jt, rtol=1e-4, atol=1e-5)


def test_integer_reductions_have_zero_tangents():
    x = np.array([1, 2, 3], np.int32)
    for prim in (lax.reduce_max_p, lax.reduce_prod_p, lax.argmax_p):
        params = dict(axes=(0,))
        if prim is lax.argmax_p:
            params["index_dtype"] = np.dtype(np.int32)
        _, t = _jvp(prim, x, x, **params)
        assert not np.any(np.asarray(t))


def _dot_test(prim, x, **params):
    """<ct, f(x)> == <f^T(ct), x> for a linear primitive."""
    y = prim.bind(x, **params)
    ct = np.random.default_rng(2).normal(size=np.shape(y)).astype(np.float32)
    (ct_x,) = ad.transpose_rules[prim]([absjit.numpy.asarray(ct)],
                                       ad.UndefinedPrimal(get_aval(x)), **params)
    assert ct_x.shape == x.shape
    np.testing.assert_allclose(np.vdot(ct, y), np.vdot(np.asarray(ct_x), x), rtol=1e-4)


def test_transposes_of_linear_reductions(rng):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    _dot_test(lax.reduce_sum_p, x, axes=(0, 2))
    _dot_test(lax.reduce_sum_p, x, axes=())
    _dot_test(lax.cumsum_p, x, axis=1, reverse=False)
    _dot_test(lax.cumsum_p, x, axis=2, reverse=True)


@pytest.mark.parametrize("prim,params", [
    (lax.reduce_sum_p, dict(axes=(0,))), (lax.reduce_max_p, dict(axes=(0, 1))),
    (lax.reduce_and_p, dict(axes=(1,))),
    (lax.argmin_p, dict(axes=(1,), index_dtype=np.dtype(np.int32))),
    (lax.cumprod_p, dict(axis=0, reverse=True)), (lax.cummax_p, dict(axis=1, reverse=False)),
])
@pytest.mark.parametrize("bdim", [0, 1, 2])
def test_batching_matches_a_loop(prim, params, bdim, rng):
    x = rng.uniform(0.5, 2, (2, 3, 4)).astype(np.float32)
    if prim is lax.reduce_and_p:
        x = x > 1
    outs, dims = batching.batch_rules[prim]([x], [bdim], **params)
    got = np.moveaxis(np.asarray(outs[0]), dims[0], 0)
    expected = np.stack([np.asarray(prim.bind(np.take(x, i, axis=bdim), **params))
                         for i in range(x.shape[bdim])])
    assert_close(got, expected)
