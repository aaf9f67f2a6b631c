"""The smaller lax conveniences (absjit/lax/_extra.py) and the incomplete gamma/beta,
zeta and Bessel functions (absjit/lax/_special.py) against NumPy/SciPy and JAX."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import special as sp

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads

jlax = jax.lax if jax is not None else None


def _same_as_jax(ours, theirs, rtol=2e-5):
    """Values, dtype and weak type equal to JAX's result."""
    assert_close(np.asarray(ours), np.asarray(theirs), rtol=rtol)
    assert bool(getattr(ours, "weak_type", False)) == bool(getattr(theirs, "weak_type", False))


X = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)


# ---------------------------------------------------------------------------
# Creation, shapes, arithmetic
# ---------------------------------------------------------------------------
@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("name,args,kwargs", [
    ("full", ((2, 3), 3), {}), ("full", ((2,), 1.5, np.float16), {}), ("full", ((), True), {}),
    ("full_like", (X, 2), {}), ("full_like", (X, 2), {"shape": (4,)}),
    ("full_like", (X, 2), {"dtype": np.int32}), ("full_like", (2.0, 5), {}),
    ("empty", ((2, 2), np.int32), {}),
    ("broadcasted_iota", (np.float32, (2, 3), 0), {}),
    ("broadcasted_iota", (np.int32, (2, 3, 4), 2), {}),
    ("broadcast_to_rank", (X, 4), {}), ("broadcast_to_rank", (X, 1), {}),
    ("collapse", (np.zeros((2, 3, 4), np.float32), 0, 2), {}),
    ("collapse", (np.zeros((2, 3, 4), np.float32), -2), {}),
    ("square", (X,), {}), ("square", (3,), {}), ("reciprocal", (X,), {}),
    ("reciprocal", (2.0,), {}),
    ("complex", (X, X[::-1]), {}), ("complex", (1.0, 2.0), {}),
])
def test_creation_and_arithmetic_match_jax(name, args, kwargs):
    _same_as_jax(getattr(lax, name)(*args, **kwargs), getattr(jlax, name)(*args, **kwargs))


def test_broadcast_shapes():
    assert lax.broadcast_shapes((2, 1), (1, 3), (3,)) == (2, 3)
    assert lax.broadcast_shapes() == ()
    assert lax.broadcast_shapes((5,)) == (5,)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))


def test_creation_errors():
    with pytest.raises(TypeError, match="scalar fill_value"):
        lax.full((2,), np.ones(2))
    with pytest.raises(ValueError, match="dimension"):
        lax.broadcasted_iota(np.int32, (2, 3), 2)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.complex(np.float32(1), np.float16(1))
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        lax.complex(np.int32(1), np.int32(2))


def test_creation_under_jit_and_vmap(mode):
    def f(x):
        return (lax.full_like(x, 2.0) + lax.broadcasted_iota(jnp.float32, (2, 3), 1),
                lax.square(x) * lax.reciprocal(x + 10), lax.collapse(x, 0),
                lax.broadcast_to_rank(x, 3), lax.complex(x, x))
    out = mode(f)(X)
    iota = np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))
    assert_close(out[0], 2 + iota)
    assert_close(out[1], X * X / (X + 10), rtol=1e-6)
    assert_close(out[2], X.reshape(6))
    assert_close(out[3], X[None])
    assert_close(out[4], (X + 1j * X).astype(np.complex64))
    v = absjit.vmap(lambda r: lax.full_like(r, 1.0) * lax.square(r))(X)
    assert_close(v, X * X)


# ---------------------------------------------------------------------------
# Bits, reductions, scans
# ---------------------------------------------------------------------------
_INT_DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


def _popcount_ref(a):
    bits = 8 * a.dtype.itemsize
    u = a.astype(f"u{a.dtype.itemsize}").astype(np.uint64)
    return np.array([bin(int(v)).count("1") for v in u.ravel()]).reshape(a.shape), bits, u


@given(dt=st.sampled_from(_INT_DTYPES), vals=st.lists(st.integers(-2**40, 2**40), min_size=1,
                                                      max_size=6))
def test_population_count_and_clz(dt, vals):
    info = np.iinfo(dt)
    a = np.array([info.min + (v % (int(info.max) - int(info.min) + 1)) for v in vals], dt)
    pc, bits, u = _popcount_ref(a)
    got = lax.population_count(a)
    assert got.dtype == dt
    np.testing.assert_array_equal(np.asarray(got), pc.astype(dt))
    clz_ref = np.array([bits - int(v).bit_length() for v in u.ravel()]).astype(dt)
    np.testing.assert_array_equal(np.asarray(lax.clz(a)), clz_ref)


def test_bits_match_jax_and_reject_floats():
    a = np.array([0, 1, -1, 255, 2**31 - 1, -2**31, 12345], np.int32)
    if jax is not None:
        _same_as_jax(lax.population_count(a), jlax.population_count(a))
        _same_as_jax(lax.clz(a), jlax.clz(a))
        _same_as_jax(lax.population_count(7), jlax.population_count(7))
    with pytest.raises(TypeError, match="population_count does not accept dtype float32"):
        lax.population_count(np.float32(1))
    with pytest.raises(TypeError, match="clz"):
        lax.clz(1.0)


def test_reduce_xor():
    a = np.array([[1, 2, 7], [8, 3, 3]], np.int32)
    for axes in [(0,), (1,), (0, 1)]:
        want = np.bitwise_xor.reduce(a, axis=axes)
        assert_close(lax.reduce_xor(a, axes), want)
    b = np.array([[True, True, False], [True, False, False]])
    assert_close(lax.reduce_xor(b, (1,)), np.array([False, True]))
    with pytest.raises(TypeError, match="reduce_xor"):
        lax.reduce_xor(np.ones(2, np.float32), (0,))


def _cumlogsumexp_ref(x, axis, reverse):
    x = np.asarray(x, np.float64)
    if reverse:
        x = np.flip(x, axis)
    out = np.logaddexp.accumulate(x, axis=axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("axis,reverse", [(0, False), (1, True), (-1, False)])
def test_cumlogsumexp(axis, reverse):
    y = np.array([[-1000.0, 0.0, 3.0], [1.0, 2.0, -np.inf]], np.float32)
    got = lax.cumlogsumexp(y, axis, reverse)
    assert_close(got, _cumlogsumexp_ref(y, axis, reverse).astype(np.float32), rtol=1e-6)
    if jax is not None and axis >= 0:   # JAX's rejects negative axes
        _same_as_jax(got, jlax.cumlogsumexp(y, axis, reverse))


def test_cumlogsumexp_grad_and_errors():
    x = np.array([0.3, -1.2, 2.0], np.float64)
    check_grads(lambda v: lax.cumlogsumexp(v), (x,), order=1)
    with pytest.raises(TypeError, match="cumlogsumexp"):
        lax.cumlogsumexp(np.arange(3))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cumlogsumexp(np.zeros(3, np.float32), axis=1)


# ---------------------------------------------------------------------------
# Indexing, top-k, barrier
# ---------------------------------------------------------------------------
def test_scatter_sub_and_apply(mode):
    def f(x, i):
        return (lax.scatter_sub(x, jnp.array([1.0, 2.0, 4.0]), [i], (0,)),
                lax.scatter_apply(x, [i], jnp.exp, (0,)))
    x = np.arange(4, dtype=np.float32)
    i = np.array([0, 0, 3], np.int32)
    sub, app = mode(f)(x, i)
    assert_close(sub, np.array([-3.0, 1.0, 2.0, -1.0], np.float32))
    assert_close(app, np.array([1.0, 1.0, 2.0, np.exp(3.0)], np.float32), rtol=1e-6)
    g = absjit.grad(lambda u: lax.scatter_sub(jnp.zeros(4), u, [i], (0,)).sum())(
        np.ones(3, np.float32))
    assert_close(g, -np.ones(3, np.float32))


def test_index_take():
    src = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    idx = np.array([[1, 2, -1], [0, 5, 3]], np.int32)
    got = lax.index_take(src, list(idx), (1, 2))
    want = src.transpose(1, 2, 0)[idx[0] % 3, idx[1] % 4]
    assert_close(got, want)
    if jax is not None:
        _same_as_jax(got, jlax.index_take(src, idx, (1, 2)))
        _same_as_jax(lax.index_take(src, idx, (0, 2)), jlax.index_take(src, idx, (0, 2)))
    with pytest.raises(TypeError, match="one index array per axis"):
        lax.index_take(src, [idx[0]], (0, 1))


@pytest.mark.parametrize("dim", [-1, 0])
def test_approx_top_k(dim):
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [7.0, 0.0, 2.0]], np.float32)
    k = 2
    vmax, imax = lax.approx_max_k(x, k, reduction_dimension=dim)
    vmin, imin = lax.approx_min_k(x, k, reduction_dimension=dim)
    order = np.argsort(-x, axis=dim, kind="stable")
    assert_close(imax, np.take(order, range(k), axis=dim).astype(np.int32))
    assert_close(vmax, np.take_along_axis(x, np.asarray(imax), axis=dim))
    assert_close(vmin, np.take(np.sort(x, axis=dim), range(k), axis=dim))
    if jax is not None:
        for ours, theirs in [((vmax, imax), jlax.approx_max_k(x, k, reduction_dimension=dim)),
                             ((vmin, imin), jlax.approx_min_k(x, k, reduction_dimension=dim))]:
            _same_as_jax(ours[0], theirs[0])
            _same_as_jax(ours[1], theirs[1])
    ints = np.array([4, -7, 3, 2**31 - 1], np.int32)
    assert_close(lax.approx_min_k(ints, 2)[0], np.array([-7, 3], np.int32))


def test_optimization_barrier():
    tree = {"a": jnp.ones(2), "b": (1.0, 2)}
    assert lax.optimization_barrier(tree) is tree
    out = absjit.jit(lambda x: lax.optimization_barrier((x, x + 1)))(np.float32(1))
    assert_close(out, (np.float32(1), np.float32(2)))


# ---------------------------------------------------------------------------
# Incomplete gamma and beta, zeta, Bessel
# ---------------------------------------------------------------------------
_rng = np.random.default_rng(0)
A = np.concatenate([_rng.uniform(0.01, 20, 80), _rng.uniform(20, 300, 20),
                    [0, 0.5, 1, 2, -1, 1, 1, np.inf, 1]])
XG = np.concatenate([_rng.uniform(0, 30, 80) * _rng.uniform(0, 1, 80),
                     _rng.uniform(10, 400, 20), [1, 0, 0, 1, 1, -1, np.inf, 1, np.nan]])
BA = np.concatenate([_rng.uniform(0.01, 20, 60), [1, 2, 0, -1, 1, 1]])
BB = np.concatenate([_rng.uniform(0.01, 20, 60), [1, 3, 1, 1, 0, 1]])
BX = np.concatenate([_rng.uniform(0, 1, 60), [0.5, 0.3, 0.5, 0.5, 0.5, 1.5]])
ZS = np.concatenate([_rng.uniform(1.01, 20, 40), [2, 1, 0.5, 2, 2, 3, 2.5]])
ZQ = np.concatenate([_rng.uniform(-5, 20, 40), [1, 1, 1, 0, -1, -1.5, -1.5]])
ZB = np.concatenate([_rng.uniform(-100, 100, 60), [0, 1, -50, np.inf, 30, -30, 29.99, 1e-3]])

# name -> (args, SciPy reference); SciPy's gammainc(inf, x) is 0 where JAX and absjit
# give NaN (a = inf is outside the function's domain).
_SPECIAL = {
    "igamma": ((A, XG), lambda a, x: np.where(a == np.inf, np.nan, sp.gammainc(a, x))),
    "igammac": ((A, XG), lambda a, x: np.where(a == np.inf, np.nan, sp.gammaincc(a, x))),
    "betainc": ((BA, BB, BX), sp.betainc),
    "zeta": ((ZS, ZQ), sp.zeta),
    "bessel_i0e": ((ZB,), sp.i0e),
    "bessel_i1e": ((ZB,), sp.i1e),
}


def _rel_close(got, want, rtol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    # Relative accuracy where the value is representable; absolute near underflow.
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-30 if rtol < 1e-8 else 1e-35)


@pytest.mark.parametrize("name", sorted(_SPECIAL))
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_special_matches_scipy(name, dt):
    if dt == "float64":
        absjit.config.update("enable_x64", True)
    args, ref = _SPECIAL[name]
    cast = [a.astype(dt) for a in args]
    got = getattr(lax, name)(*cast)
    assert got.dtype == np.dtype(dt)
    want = ref(*[a.astype(np.float64) for a in cast])
    # float32: the exp(a log x - x - lgamma(a)) prefactor loses |a log x| ulps far in
    # the tails, as in JAX (whose float32 results differ from SciPy by as much).
    rtol = {"float32": 5e-4 if name in ("igamma", "igammac") else 5e-5,
            "float64": 1e-11}[dt]
    _rel_close(got, want, rtol)
    if jax is not None and dt == "float32":
        _rel_close(got, getattr(jlax, name)(*cast), rtol)


@pytest.mark.skipif(jax is None, reason="needs JAX")
def test_igamma_grad_a_and_random_gamma_grad_match_jax():
    # A and XG end with the edge cases (zeros, negatives, infinities, NaN).
    a, x = A.astype(np.float32), XG.astype(np.float32)
    _rel_close(lax.igamma_grad_a(a, x), jlax.igamma_grad_a(a, x), 5e-4)
    # JAX's random_gamma_grad is less accurate where P(a, x) underflows (x far below
    # a): compare where it does not (the next test checks the values themselves).
    keep = ~(sp.gammainc(a.astype(np.float64), x.astype(np.float64)) <= 1e-30)
    keep[::2] = False   # half the points keep JAX's compile of it short
    _rel_close(np.asarray(lax.random_gamma_grad(a[keep], x[keep])),
               np.asarray(jlax.random_gamma_grad(a[keep], x[keep])), 5e-4)


def test_special_weak_types():
    # JAX: weak exactly when every argument is a Python scalar.
    assert lax.igamma(1.0, 2.0).weak_type
    assert not lax.igamma(np.float32(1), 2.0).weak_type
    assert lax.bessel_i0e(1.0).weak_type
    assert lax.betainc(1.0, 2.0, 0.5).weak_type
    out = lax.zeta(np.float16(2), np.float16(1))
    assert out.dtype == np.float16 and abs(float(out) - np.pi ** 2 / 6) < 2e-3


def test_random_gamma_grad_is_the_implicit_derivative():
    absjit.config.update("enable_x64", True)
    a = np.array([0.3, 2.0, 7.5, 385.0]); x = np.array([0.2, 1.0, 9.0, 12.6])
    h = 1e-6 * a
    dpda = (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)
    dens = np.exp(-x + (a - 1) * np.log(x) - sp.gammaln(a))
    mask = dens > 1e-200
    with np.errstate(invalid="ignore"):
        want = -dpda / dens
    np.testing.assert_allclose(np.asarray(lax.random_gamma_grad(a, x))[mask],
                               want[mask], rtol=1e-5)


def test_special_errors():
    with pytest.raises(TypeError, match="igamma does not accept dtype int32"):
        lax.igamma(1, 2)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.igamma(np.float32(1), np.float16(2))
    with pytest.raises(ValueError, match="with respect to a and b"):
        absjit.grad(lambda a: lax.betainc(a, 3.0, 0.2))(2.0)


def test_special_derivatives():
    check_grads(lax.igamma, (np.float64(2.3), np.float64(1.7)), order=1, rtol=1e-4)
    check_grads(lax.igamma, (np.float64(0.7), np.float64(4.2)), order=1, rtol=1e-4)
    check_grads(lax.igammac, (np.float64(3.1), np.float64(5.5)), order=1, rtol=1e-4)
    check_grads(lambda x: lax.betainc(np.float64(2.5), np.float64(1.5), x),
                (np.float64(0.4),), order=1)
    check_grads(lax.bessel_i0e, (np.array([-2.0, 0.5, 40.0]),), order=2)
    check_grads(lax.bessel_i1e, (np.array([-2.0, 0.5, 40.0]),), order=2)


@pytest.mark.skipif(jax is None, reason="needs JAX")
def test_special_derivatives_against_jax():
    a, x = np.float32([0.5, 2.0, 5.0]), np.float32([0.3, 1.0, 7.0])
    for name in ("igamma",):
        ours = absjit.grad(lambda u, v: getattr(lax, name)(u, v).sum(), argnums=(0, 1))(a, x)
        theirs = jax.grad(lambda u, v: getattr(jlax, name)(u, v).sum(), argnums=(0, 1))(a, x)
        assert_close(ours, tuple(np.asarray(t) for t in theirs), rtol=1e-5)
    for name in ("bessel_i1e",):
        ours = absjit.vmap(absjit.grad(getattr(lax, name)))(x - 1)
        assert_close(ours, np.asarray(jax.vmap(jax.grad(getattr(jlax, name)))(x - 1)),
                     rtol=1e-5)


def test_special_under_jit_and_vmap(mode):
    a, x = np.float32([0.5, 2.0, 5.0]), np.float32([0.3, 1.0, 7.0])

    def f(a, x):    # a while loop and an unrolled sum (compile time)
        return lax.igamma(a, x), lax.zeta(a + 1.5, x)
    ref = f(a, x)
    assert_close(mode(f)(a, x), ref, rtol=1e-5)
    assert_close(absjit.vmap(f)(a, x), ref, rtol=1e-5)


def test_beta_and_upper_gamma_staged():
    a, x = np.float32([0.5, 2.0, 5.0]), np.float32([0.3, 1.0, 7.0])

    def f(a, x):
        return (lax.igammac(a, x), lax.betainc(a, a, x / 10), lax.bessel_i0e(x),
                lax.bessel_i1e(x))
    ref = f(a, x)
    assert_close(absjit.jit(f, backend="interpret")(a, x), ref, rtol=1e-5)
    assert_close(absjit.vmap(f)(a, x), ref, rtol=1e-5)
