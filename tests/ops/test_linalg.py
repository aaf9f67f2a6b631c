"""lax.dot_general / dot / batch_matmul: values against NumPy and JAX, and the JVP,
transpose and batching rules checked directly against NumPy references."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as hst

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.core.avals import ShapedArray
from absjit.interpreters import ad, batching
from absjit.ops.linalg import dot_general_p
from tests.checks import assert_close, jax

DTYPES = [np.int32, np.float32, np.complex64]


def _rand(rng, shape, dtype):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-5, 6, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@hst.composite
def dot_problems(draw):
    """Random (lhs shape, rhs shape, dimension_numbers) with shuffled axis orders."""
    nb, nc = draw(hst.integers(0, 2)), draw(hst.integers(0, 2))
    nlf, nrf = draw(hst.integers(0, 2)), draw(hst.integers(0, 2))
    size = hst.integers(0, 3)
    bsz = [draw(size) for _ in range(nb)]
    csz = [draw(size) for _ in range(nc)]
    lf = [draw(size) for _ in range(nlf)]
    rf = [draw(size) for _ in range(nrf)]
    lperm = draw(hst.permutations(range(nb + nc + nlf)))
    rperm = draw(hst.permutations(range(nb + nc + nrf)))
    # Logical axes: batch, contract, free; perm[i] says where logical axis i lives.
    lshape = [0] * len(lperm)
    for logical, size_ in enumerate(bsz + csz + lf):
        lshape[lperm[logical]] = size_
    rshape = [0] * len(rperm)
    for logical, size_ in enumerate(bsz + csz + rf):
        rshape[rperm[logical]] = size_
    dn = ((tuple(lperm[nb + i] for i in range(nc)), tuple(rperm[nb + i] for i in range(nc))),
          (tuple(lperm[i] for i in range(nb)), tuple(rperm[i] for i in range(nb))))
    return tuple(lshape), tuple(rshape), dn, draw(hst.sampled_from(DTYPES))


def _ref_dot_general(x, y, dn):
    """Reference via einsum: letters for every axis."""
    (lc, rc), (lb, rb) = dn
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    ls = [next(letters) for _ in range(x.ndim)]
    rs = [next(letters) for _ in range(y.ndim)]
    for i, j in zip(lc + lb, rc + rb):
        rs[j] = ls[i]
    out = [ls[i] for i in lb] + [ls[i] for i in range(x.ndim) if i not in lc + lb] + \
        [rs[j] for j in range(y.ndim) if j not in rc + rb]
    return np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", x, y)


@given(dot_problems(), hst.integers(0, 2**31 - 1))
def test_dot_general_matches_numpy_and_jax(problem, seed):
    lshape, rshape, dn, dtype = problem
    rng = np.random.default_rng(seed)
    x, y = _rand(rng, lshape, dtype), _rand(rng, rshape, dtype)
    out = lax.dot_general(x, y, dn)
    expected = _ref_dot_general(x, y, dn).astype(dtype)
    assert out.dtype == np.dtype(dtype)
    assert_close(out, expected, rtol=1e-4, atol=1e-4)
    if jax is not None:
        j = jax.lax.dot_general(x, y, dn)
        assert j.dtype == out.dtype and j.shape == out.shape
        assert_close(out, np.asarray(j), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dot_general_under_mode(mode, dtype, rng):
    x, y = _rand(rng, (2, 3, 4), dtype), _rand(rng, (2, 4, 5), dtype)
    dn = (((2,), (1,)), ((0,), (0,)))
    out = mode(lambda a, b: lax.dot_general(a, b, dn))(x, y)
    assert_close(out, np.matmul(x, y), rtol=1e-4, atol=1e-4)


def test_matmul_fast_path_matches_einsum(mode, rng):
    x, y = _rand(rng, (20, 30), np.float32), _rand(rng, (30, 10), np.float32)
    out = mode(lax.dot)(x, y)
    assert_close(out, np.einsum("ij,jk->ik", x, y), rtol=1e-4, atol=1e-4)


def test_integer_dot_accumulates_in_operand_dtype():
    x = np.full((2,), 2**30, np.int32)
    out = lax.dot(x, np.ones(2, np.int32))
    assert out.dtype == np.int32
    assert int(out) == np.int32(-(2**31))  # wraps, like XLA


def test_preferred_element_type():
    x = np.ones((3, 4), np.int8) * 100
    out = lax.dot_general(x, x.T.copy(), (((1,), (0,)), ((), ())),
                          preferred_element_type=np.int32)
    assert out.dtype == np.int32
    assert_close(out, np.full((3, 3), 40000, np.int32))


def test_dot_and_batch_matmul_shapes():
    a = np.ones((3,), np.float32)
    m = np.ones((2, 3), np.float32)
    assert lax.dot(a, a).shape == ()
    assert lax.dot(m, a).shape == (2,)
    assert lax.batch_matmul(np.ones((4, 2, 3), np.float32),
                            np.ones((4, 3, 5), np.float32)).shape == (4, 2, 5)


def test_jaxpr_prints_dot_general():
    text = str(absjit.make_jaxpr(lambda a, b: lax.dot(a, b))(np.ones((2, 3), np.float32),
                                                             np.ones((3,), np.float32)))
    assert "dot_general[" in text and "dimension_numbers=(((1,), (0,)), ((), ()))" in text
    assert "b:f32[3]" in text and "f32[2] = dot_general" in text


@pytest.mark.parametrize("lshape,rshape,dn,match", [
    ((2, 3), (4, 5), (((1,), (0,)), ((), ())), "equal sizes"),
    ((2, 3), (3, 5), (((2,), (0,)), ((), ())), "out of range"),
    ((2, 3), (3, 5), (((1,), (0, 1)), ((), ())), "same number of contracting"),
    ((2, 3), (2, 3), (((1,), (1,)), ((1,), (0,))), "both batch and contracting"),
    ((2, 3), (2, 3), (((1, 1), (1, 0)), ((), ())), "repeated"),
])
def test_dot_general_bad_dimension_numbers(lshape, rshape, dn, match):
    with pytest.raises(TypeError, match=match) as info:
        lax.dot_general(np.ones(lshape, np.float32), np.ones(rshape, np.float32), dn)
    assert str(lshape) in str(info.value)


def test_dot_general_malformed_and_mixed_dtypes():
    with pytest.raises(TypeError, match="dimension_numbers must be"):
        lax.dot_general(np.ones(2, np.float32), np.ones(2, np.float32), ((0,), (0,)))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.dot(np.ones(2, np.float32), np.ones(2, np.int32))
    with pytest.raises(TypeError, match="rank 1 or 2"):
        lax.dot(np.ones((1, 2, 2), np.float32), np.ones(2, np.float32))


# ---------------------------------------------------------------------------
# Rules, checked directly (the rule tables' documented signatures)
# ---------------------------------------------------------------------------
RULE_CASES = [
    ((2, 3), (3, 4), (((1,), (0,)), ((), ()))),
    ((3, 2), (4, 3), (((0,), (1,)), ((), ()))),
    ((5, 2, 3), (3, 5, 4), (((2,), (0,)), ((0,), (1,)))),
    ((2, 3, 4), (4, 3), (((2, 1), (0, 1)), ((), ()))),
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((2,), (3,), (((), ()), ((), ()))),
    ((2, 0), (0, 3), (((1,), (0,)), ((), ()))),
]


@pytest.mark.parametrize("lshape,rshape,dn", RULE_CASES)
def test_dot_general_transpose_is_adjoint(lshape, rshape, dn, rng):
    x, y = _rand(rng, lshape, np.float32), _rand(rng, rshape, np.float32)
    out = _ref_dot_general(x, y, dn)
    ct = _rand(rng, out.shape, np.float32)
    params = dict(dimension_numbers=dn, precision=None, preferred_element_type=None)
    rule = ad.transpose_rules[dot_general_p]
    ct_x, none = rule([ct], ad.UndefinedPrimal(ShapedArray(lshape, np.dtype(np.float32))),
                      y, **params)
    assert none is None and ct_x.shape == lshape
    none, ct_y = rule([ct], x, ad.UndefinedPrimal(ShapedArray(rshape, np.dtype(np.float32))),
                      **params)
    assert none is None and ct_y.shape == rshape
    # <ct, x . y> == <ct_x, x> == <ct_y, y>
    lhs_side = float(np.sum(ct * out))
    assert np.isclose(float(np.sum(np.asarray(ct_x) * x)), lhs_side, rtol=1e-4, atol=1e-4)
    assert np.isclose(float(np.sum(np.asarray(ct_y) * y)), lhs_side, rtol=1e-4, atol=1e-4)
    if jax is not None and x.size and y.size:
        _, vjp = jax.vjp(lambda a, b: jax.lax.dot_general(a, b, dn), x, y)
        jx, jy = vjp(ct)
        assert_close(ct_x, np.asarray(jx), rtol=1e-4, atol=1e-4)
        assert_close(ct_y, np.asarray(jy), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("lshape,rshape,dn", RULE_CASES)
def test_dot_general_jvp_is_bilinear(lshape, rshape, dn, rng):
    x, y = _rand(rng, lshape, np.float32), _rand(rng, rshape, np.float32)
    tx, ty = _rand(rng, lshape, np.float32), _rand(rng, rshape, np.float32)
    params = dict(dimension_numbers=dn, precision=None, preferred_element_type=None)
    (out,), (t_out,) = ad.jvp_rules[dot_general_p]([x, y], [tx, ty], **params)
    assert_close(out, _ref_dot_general(x, y, dn).astype(np.float32), rtol=1e-4, atol=1e-4)
    expected = _ref_dot_general(tx, y, dn) + _ref_dot_general(x, ty, dn)
    assert_close(t_out, expected.astype(np.float32), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("lshape,rshape,dn", RULE_CASES)
@pytest.mark.parametrize("which", ["both", "lhs", "rhs"])
@pytest.mark.parametrize("bdim", [0, -1])
def test_dot_general_batch_rule(lshape, rshape, dn, which, bdim, rng):
    k = 3
    x = _rand(rng, (k,) + lshape if which != "rhs" else lshape, np.float32)
    y = _rand(rng, (k,) + rshape if which != "lhs" else rshape, np.float32)
    ld = None if which == "rhs" else bdim % x.ndim
    rd = None if which == "lhs" else bdim % y.ndim
    xb = np.moveaxis(x, 0, ld) if ld is not None else x
    yb = np.moveaxis(y, 0, rd) if rd is not None else y
    params = dict(dimension_numbers=dn, precision=None, preferred_element_type=None)
    (out,), (od,) = batching.batch_rules[dot_general_p]([xb, yb], [ld, rd], **params)
    out = np.moveaxis(np.asarray(out), od, 0)
    expected = np.stack([_ref_dot_general(x[i] if ld is not None else x,
                                          y[i] if rd is not None else y, dn)
                         for i in range(k)])
    assert_close(out, expected.astype(np.float32), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# Through the transforms
# ---------------------------------------------------------------------------
def test_grad_through_dot_general_matches_jax(mode, rng):
    x, y = _rand(rng, (2, 3, 4), np.float32), _rand(rng, (4, 2, 5), np.float32)
    dn = (((2,), (0,)), ((0,), (1,)))

    def f(a, b):
        return absjit.numpy.sum(absjit.numpy.tanh(lax.dot_general(a, b, dn)))
    gx, gy = mode(absjit.grad(f, argnums=(0, 1)))(x, y)
    if jax is not None:
        jf = lambda a, b: jax.numpy.sum(jax.numpy.tanh(jax.lax.dot_general(a, b, dn)))  # noqa: E731
        jx, jy = jax.grad(jf, argnums=(0, 1))(x, y)
        assert_close(gx, np.asarray(jx), rtol=1e-4, atol=1e-5)
        assert_close(gy, np.asarray(jy), rtol=1e-4, atol=1e-5)
    else:  # d/dx sum(x . y) is the row sums of y, batched
        assert gx.shape == x.shape and gy.shape == y.shape


@pytest.mark.parametrize("in_axes", [(0, 1), (0, None), (None, 1)])
def test_vmap_of_dot(in_axes, rng):
    x = _rand(rng, (3, 2, 4) if in_axes[0] == 0 else (2, 4), np.float32)
    y = _rand(rng, (4, 3, 5) if in_axes[1] == 1 else (4, 5), np.float32)
    out = absjit.vmap(lax.dot, in_axes=in_axes)(x, y)
    xs = [x[i] if in_axes[0] == 0 else x for i in range(3)]
    ys = [y[:, i] if in_axes[1] == 1 else y for i in range(3)]
    assert_close(out, np.stack([a @ b for a, b in zip(xs, ys)]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("lshape, rshape", [((2, 1), (1, 1)), ((3, 1), (1,)), ((1,), (1, 2)),
                                            ((2, 2), (2, 1))])
def test_inf_times_zero_is_nan_in_every_mode(lshape, rshape):
    """IEEE (and XLA): inf * 0 in a product is nan. NumPy's np.dot of an (n, 1) by (1, 1)
    product gave 0 through its scaling shortcut, so eager and jit disagreed."""
    a = np.full(lshape, np.inf, np.float32)
    if a.size > 1:
        a.reshape(-1)[0] = 1.5
    b = np.zeros(rshape, np.float32)
    want = np.matmul(a, b)
    assert np.isnan(want).any()
    for run in (lambda f: f, lambda f: absjit.jit(f, backend="interpret"),
                lambda f: absjit.jit(f, backend="cpu")):
        got = np.asarray(run(lambda u, v: jnp.matmul(u, v))(a, b))
        np.testing.assert_array_equal(got, want)
    if jax is not None:
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda u, v: u @ v)(a, b)), want)
