"""lax.sort / sort_key_val / top_k against NumPy and JAX, and the sort rules."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as hst
from hypothesis.extra import numpy as hnp

import absjit
from absjit import lax
from absjit.core.avals import ShapedArray
from absjit.interpreters import ad, batching
from absjit.ops.sorting import sort_p
from tests.checks import assert_close, jax

DTYPES = [np.int32, np.float32, np.bool_, np.uint8]


def _arrays(dtype):
    elements = None
    if np.dtype(dtype).kind == "f":
        elements = hst.floats(-10, 10, width=32) | hst.just(np.nan) | hst.just(np.inf)
    elif np.dtype(dtype).kind == "i":
        elements = hst.integers(-5, 5)
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0,
                                              max_side=4), elements=elements)


@given(hst.sampled_from(DTYPES).flatmap(_arrays), hst.data())
def test_sort_matches_numpy(x, data):
    axis = data.draw(hst.integers(-x.ndim, x.ndim - 1))
    out = lax.sort(x, dimension=axis)
    assert out.dtype == x.dtype
    assert_close(out, np.sort(x, axis=axis, kind="stable"))


@given(_arrays(np.float32), hst.data())
def test_sort_key_val_is_stable_argsort(x, data):
    axis = data.draw(hst.integers(0, x.ndim - 1))
    idx = np.broadcast_to(np.arange(x.shape[axis], dtype=np.int32).reshape(
        [-1 if i == axis else 1 for i in range(x.ndim)]), x.shape)
    keys, vals = lax.sort_key_val(x, idx, dimension=axis)
    assert_close(vals, np.argsort(x, axis=axis, kind="stable").astype(np.int32))
    assert_close(keys, np.sort(x, axis=axis))


def test_sort_under_mode(mode, rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    x[0, 1] = np.nan
    out = mode(lambda a: lax.sort(a, dimension=1))(x)
    assert_close(out, np.sort(x, axis=1))


def test_multi_key_sort(mode):
    k1 = np.array([2, 1, 2, 1, 0], np.int32)
    k2 = np.array([1., 5., 0., 3., 9.], np.float32)
    v = np.arange(5, dtype=np.int32)
    a, b, c = mode(lambda x, y, z: lax.sort((x, y, z), num_keys=2))(k1, k2, v)
    order = np.lexsort((k2, k1))
    assert_close(a, k1[order])
    assert_close(b, k2[order])
    assert_close(c, v[order])
    # One key: ties keep their order (stable), the second operand is just carried.
    _, _, c1 = lax.sort((k1, k2, v), num_keys=1)
    assert_close(c1, np.argsort(k1, kind="stable").astype(np.int32))


def test_complex_sorts_lexicographically():
    x = np.array([1 + 2j, 1 + 1j, 0 + 5j], np.complex64)
    assert_close(lax.sort(x), np.sort(x))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_top_k_matches_jax(mode, rng, dtype):
    x = (rng.standard_normal((2, 7)) * 4).astype(dtype)
    x[0, 2] = x[0, 5]  # a tie: the lower index comes first
    vals, idx = mode(lambda a: lax.top_k(a, 3))(x)
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[:, :3]
    assert_close(idx, order.astype(np.int32))
    assert_close(vals, np.take_along_axis(x, order, -1))
    if jax is not None:
        jv, ji = jax.lax.top_k(x, 3)
        assert_close(vals, np.asarray(jv))
        assert_close(idx, np.asarray(ji))


def test_top_k_nan_is_largest():
    vals, idx = lax.top_k(np.array([1., np.nan, 3.], np.float32), 2)
    assert np.isnan(np.asarray(vals)[0]) and list(np.asarray(idx)) == [1, 2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64,
                                   np.uint8, np.uint64, np.bool_])
@pytest.mark.parametrize("k", [0, 1, 4, 37])
def test_top_k_total_order_every_backend(mode, rng, dtype, k):
    """IEEE total order (+nan > inf > … > 0.0 > -0.0 > … > -inf > -nan), ties by lower
    index: the compiled per-row selection, the NumPy rule and JAX agree bit for bit."""
    x = (rng.standard_normal((3, 4, 37)) * 5).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[0, 0, [1, 5, 9, 20]] = [np.nan, np.inf, -np.nan, -np.inf]
        x[0, 1, :8] = [0., -0., 0., -0., 1., 1., np.nan, np.inf]
    if dtype == np.uint64:
        x[1, 1, :3] = [2 ** 64 - 1, 2 ** 63, 2 ** 63 + 5]
    vals, idx = mode(lambda a: lax.top_k(a, k))(x)
    ref_vals, ref_idx = absjit.jit(lambda a: lax.top_k(a, k), backend="interpret")(x)
    assert np.asarray(vals).tobytes() == np.asarray(ref_vals).tobytes()
    assert np.array_equal(np.asarray(idx), np.asarray(ref_idx)) and idx.dtype == np.int32
    if jax is not None and dtype not in (np.int64, np.uint64, np.float64):
        jv, ji = jax.lax.top_k(x, k)
        assert np.asarray(vals).tobytes() == np.asarray(jv).tobytes()
        assert np.array_equal(np.asarray(idx), np.asarray(ji))


def test_top_k_order_matches_jax_signs():
    x = np.array([1., -np.nan, np.nan, -np.inf, 0., -0., np.inf], np.float32)
    vals, idx = lax.top_k(x, 7)
    assert list(np.asarray(idx)) == [2, 6, 0, 4, 5, 3, 1]
    if jax is not None:
        assert list(np.asarray(jax.lax.top_k(x, 7)[1])) == [2, 6, 0, 4, 5, 3, 1]


def test_top_k_is_a_selection_on_cpu():
    """``top_k`` is its own primitive (lowered as a per-row selection), not a sort."""
    jaxpr = absjit.make_jaxpr(lambda a: lax.top_k(a, 2))(np.ones((3, 5), np.float32))
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["top_k"]
    from absjit.backends.numba_cpu.lowering import lower_arrays, lower_sort
    from absjit.ops.sorting import top_k_p
    assert lower_arrays.array_rules[top_k_p] is lower_sort.lower_top_k


def test_vmap_and_jit_of_top_k(rng):
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    v, i = absjit.jit(absjit.vmap(lambda r: lax.top_k(r, 2), in_axes=1))(x)
    ref = np.argsort(-np.moveaxis(x, 1, 0), axis=-1, kind="stable")[..., :2]
    assert np.array_equal(np.asarray(i), ref)
    assert_close(v, np.take_along_axis(np.moveaxis(x, 1, 0), ref, -1))


def test_sort_jaxpr():
    text = str(absjit.make_jaxpr(lambda a: lax.sort(a))(np.ones((2, 3), np.float32)))
    assert "sort[dimension=1 is_stable=True num_keys=1]" in text


@pytest.mark.parametrize("call,exc,match", [
    (lambda: lax.sort(np.ones(3, np.float32), dimension=1), ValueError, "out of range"),
    (lambda: lax.sort((np.ones(3, np.float32), np.ones(4, np.float32))), TypeError,
     "same shape"),
    (lambda: lax.sort((np.ones(3, np.float32),), num_keys=2), ValueError, "num_keys"),
    (lambda: lax.sort(np.float32(1)), ValueError, "out of range"),
    (lambda: lax.top_k(np.ones(3, np.float32), 4), ValueError, "k=4"),
    (lambda: lax.top_k(np.ones(3, np.float32), -1), ValueError, "nonnegative"),
    (lambda: absjit.jit(lambda a: lax.top_k(a, 5))(np.ones((2, 3), np.float32)), ValueError,
     "no larger than"),
    (lambda: lax.top_k(np.ones(3, np.complex64), 1), TypeError, "complex"),
    (lambda: lax.sort(()), TypeError, "at least one operand"),
])
def test_sort_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------
def test_sort_jvp_permutes_tangents(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    t = rng.standard_normal((3, 4)).astype(np.float32)
    (out,), (t_out,) = ad.jvp_rules[sort_p]([x], [t], dimension=1, is_stable=True,
                                            num_keys=1)
    perm = np.argsort(x, axis=1, kind="stable")
    assert_close(out, np.take_along_axis(x, perm, 1))
    assert_close(t_out, np.take_along_axis(t, perm, 1))
    if jax is not None:
        _, jt = jax.jvp(lambda a: jax.lax.sort(a, dimension=1), (x,), (t,))
        assert_close(t_out, np.asarray(jt))


def test_sort_transpose_of_carried_operand(rng):
    keys = rng.standard_normal((2, 5)).astype(np.float32)
    ct = rng.standard_normal((2, 5)).astype(np.float32)
    f32 = np.dtype(np.float32)
    res = ad.transpose_rules[sort_p]([None, ct], keys, ad.UndefinedPrimal(ShapedArray((2, 5), f32)),
                                     dimension=1, is_stable=True, num_keys=1)
    assert res[0] is None
    perm = np.argsort(keys, axis=1, kind="stable")
    expected = np.zeros_like(ct)
    np.put_along_axis(expected, perm, ct, 1)
    assert_close(res[1], expected)
    with pytest.raises(TypeError, match="not linear in its keys"):
        ad.transpose_rules[sort_p]([ct], ad.UndefinedPrimal(ShapedArray((2, 5), f32)),
                                   dimension=1, is_stable=True, num_keys=1)


@pytest.mark.parametrize("dims", [(0, None), (1, 1), (None, 0)])
def test_sort_batch_rule(dims, rng):
    k = 3
    keys = rng.integers(0, 3, (k, 4)).astype(np.int32)
    vals = rng.standard_normal((k, 4)).astype(np.float32)
    operands = []
    for x, d in zip((keys, vals), dims):
        operands.append(x[0] if d is None else np.moveaxis(x, 0, d))
    outs, out_dims = batching.batch_rules[sort_p](operands, list(dims), dimension=0,
                                                  is_stable=True, num_keys=1)
    for i in range(k):
        ki = keys[0] if dims[0] is None else keys[i]
        vi = vals[0] if dims[1] is None else vals[i]
        perm = np.argsort(ki, kind="stable")
        assert_close(np.moveaxis(np.asarray(outs[0]), out_dims[0], 0)[i], ki[perm])
        assert_close(np.moveaxis(np.asarray(outs[1]), out_dims[1], 0)[i], vi[perm])


# ---------------------------------------------------------------------------
# Through the transforms
# ---------------------------------------------------------------------------
def test_grad_through_sort_and_top_k(mode, rng):
    x = rng.standard_normal(6).astype(np.float32)
    weights = np.arange(6, dtype=np.float32)

    def f(a):
        vals, _ = lax.top_k(a, 2)
        return absjit.numpy.sum(lax.sort(a) * weights) + absjit.numpy.sum(vals ** 2)
    g = mode(absjit.grad(f))(x)
    perm = np.argsort(x, kind="stable")
    expected = np.zeros(6, np.float32)
    expected[perm] = weights
    top = np.argsort(-x, kind="stable")[:2]
    expected[top] += 2 * x[top]
    assert_close(g, expected, rtol=1e-5, atol=1e-6)


def test_vmap_of_sort_key_val(rng):
    keys = rng.integers(0, 4, (3, 5)).astype(np.int32)
    vals = rng.standard_normal((3, 5)).astype(np.float32)
    k, v = absjit.vmap(lax.sort_key_val)(keys, vals)
    perm = np.argsort(keys, axis=1, kind="stable")
    assert_close(k, np.take_along_axis(keys, perm, 1))
    assert_close(v, np.take_along_axis(vals, perm, 1))


def test_top_k_ranked_compiles_once_and_checks_k_on_entry():
    f = absjit.jit(lambda x: lax.top_k(x, 3), abstraction="ranked", backend="cpu")
    for n in (5, 40):
        x = np.random.default_rng(n).standard_normal((4, n)).astype(np.float32)
        _, idx = f(x)
        assert np.array_equal(np.asarray(idx), np.argsort(-x, -1, kind="stable")[:, :3])
    assert f._cache_size() == 1
    with pytest.raises(ValueError, match="k=3"):
        f(np.ones((2, 2), np.float32))
