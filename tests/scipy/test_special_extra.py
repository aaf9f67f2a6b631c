"""The added absjit.scipy.special functions against scipy.special (values) and JAX
(values, dtypes, weak types, gradients)."""
import numpy as np
import pytest
from scipy import special as sp

import absjit
from absjit.scipy import special as asp
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads

jsp = None
if jax is not None:
    import jax.scipy.special as jsp

X = np.array([-2.5, -1.5, -1.0, 0.0, 0.5, 3.0, 20.0, 35.0], np.float32)
P = np.array([0.0, 1.0, 1.0, -1.0, 1.0, 0.0, 2.0, 3.5], np.float32)
Q = np.array([1.0, 2.0, 0.0, 1.0, -1.0, 0.0, 0.5, 1.25], np.float32)

# name -> (absjit arguments, SciPy reference, rtol)
_UNARY = {
    "gamma": (X, sp.gamma, 2e-5), "gammasgn": (X, sp.gammasgn, 0),
    "loggamma": (X, lambda v: np.where(v > 0, sp.gammaln(v), np.nan), 2e-5),
    "factorial": (X, lambda v: np.where(v < 0, 0.0, sp.gamma(v + 1)), 2e-5),
    "i0": (X, sp.i0, 2e-5), "i0e": (X, sp.i0e, 2e-5),
    "i1": (X, sp.i1, 2e-5), "i1e": (X, sp.i1e, 2e-5),
    "erfcx": (np.array([-30, -5, -1, 0, 1, 1.9, 2.1, 5, 10, 1e4, np.inf, -np.inf],
                       np.float32), sp.erfcx, 2e-5),
}


def _check(got, want, rtol):
    got = np.asarray(got)
    assert got.dtype == np.float32
    want = np.asarray(want, np.float64).astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=1e-6 * rtol,
                               equal_nan=True)


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_unary_matches_scipy_and_jax(name):
    x, ref, rtol = _UNARY[name]
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    got = getattr(asp, name)(x)
    _check(got, want, rtol)
    if jsp is not None:
        assert_close(got, np.asarray(getattr(jsp, name)(x)), rtol=max(rtol, 1e-6))
        for arg in (2, 2.5):   # dtype and weak type of Python scalars, as JAX
            ours, theirs = getattr(asp, name)(arg), getattr(jsp, name)(arg)
            assert ours.dtype == theirs.dtype
            assert ours.weak_type == theirs.weak_type, (name, arg)


_BINARY = {
    "gammainc": (sp.gammainc, 5e-5), "gammaincc": (sp.gammaincc, 5e-5),
    "beta": (sp.beta, 5e-5), "poch": (sp.poch, 5e-5), "comb": (sp.comb, 5e-5),
    "zeta": (sp.zeta, 5e-5), "kl_div": (sp.kl_div, 2e-5), "rel_entr": (sp.rel_entr, 2e-5),
}


@pytest.mark.parametrize("name", sorted(_BINARY))
def test_binary_matches_scipy_and_jax(name):
    ref, rtol = _BINARY[name]
    a, b = P + 1.5, Q + 2.0
    if name in ("kl_div", "rel_entr"):
        a, b = P, Q     # their edge cases: zeros and negatives
    got = getattr(asp, name)(a, b)
    with np.errstate(all="ignore"):
        _check(got, ref(a.astype(np.float64), b.astype(np.float64)), rtol)
    if jsp is not None:
        assert_close(got, np.asarray(getattr(jsp, name)(a, b)), rtol=rtol)
        ours, theirs = getattr(asp, name)(3, 2), getattr(jsp, name)(3, 2)
        assert ours.dtype == theirs.dtype and ours.weak_type == theirs.weak_type, name


def test_betainc_comb_poch_edges():
    a, b = np.float32([2, 1, 0.5]), np.float32([3, 1, 4])
    x = np.float32([0.3, 0.0, 1.0])
    _check(asp.betainc(a, b, x), sp.betainc(a, b, x), 5e-5)
    _check(asp.betainc(2, 3, 0.3), sp.betainc(2, 3, 0.3), 5e-5)
    n, k = np.float32([5, 4, -1, 5]), np.float32([2, 6, 2, -1])
    _check(asp.comb(n, k), np.array([10, 0, 0, 0]), 5e-5)
    _check(asp.comb(5, 2, repetition=True), sp.comb(5, 2, repetition=True), 5e-5)
    _check(asp.poch(np.float32([2, -1.5, 0]), np.float32([3, 2, 0])), [24, 0.75, 1], 5e-5)
    with pytest.raises(NotImplementedError):
        asp.factorial(3, exact=True)


def test_polygamma():
    n = np.array([0, 1, 2, 3])
    _check(asp.polygamma(n, 2.5), sp.polygamma(n, 2.5), 5e-5)
    x = np.float32([-0.5, 0.0, 1.0, -1.0, 0.1, 7.0])
    for order in (1, 2, 3):
        got = asp.polygamma(order, x)
        want = sp.polygamma(order, x.astype(np.float64))
        # At the poles odd orders are +inf and even ones NaN (as JAX).
        want = np.where((x <= 0) & (x == np.floor(x)), np.inf if order % 2 else np.nan, want)
        _check(got, want, 5e-5)
        if jsp is not None:
            assert_close(got, np.asarray(jsp.polygamma(order, x)), rtol=5e-5)
    with pytest.raises(ValueError, match="integer type"):
        asp.polygamma(1.5, 2.0)


def test_zeta_riemann_default():
    _check(asp.zeta(np.float32([2, 4])), [np.pi ** 2 / 6, np.pi ** 4 / 90], 2e-6)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
def test_softmax_log_softmax(axis):
    y = np.array([[1.0, 2.0, -1.0], [3.0, 5.0, 0.5]], np.float32)
    _check(asp.softmax(y, axis=axis), sp.softmax(y.astype(np.float64), axis=axis), 1e-6)
    _check(asp.log_softmax(y, axis=axis), sp.log_softmax(y.astype(np.float64), axis=axis),
           1e-6)


def test_multigammaln():
    a = np.float32([2.5, 4.0])
    _check(asp.multigammaln(a, 3), [sp.multigammaln(float(v), 3) for v in a], 2e-5)
    with pytest.raises(absjit.errors.ConcretizationTypeError):
        absjit.jit(lambda v, d: asp.multigammaln(v, d))(a, 3)


def test_under_jit_and_vmap(mode):
    def f(x, y):
        return asp.gamma(x), asp.beta(x, y), asp.softmax(x), asp.rel_entr(x, y)
    x = np.float32([0.5, 1.5, 4.0])
    y = np.float32([2.0, 0.5, 1.0])
    ref = f(x, y)
    assert_close(mode(f)(x, y), ref, rtol=1e-5)
    assert_close(absjit.vmap(lambda u, v: f(u, v)[:2])(x[:, None], y[:, None]),
                 tuple(r[:, None] for r in ref[:2]), rtol=1e-5)


def test_series_functions_staged():
    def f(x):
        return (asp.i0(x), asp.i1e(x), asp.polygamma(1, x), asp.gammainc(x, x + 1),
                asp.erfcx(x))
    x = np.float32([0.5, 1.5, 40.0])
    ref = f(x)
    assert_close(absjit.jit(f, backend="interpret")(x), ref, rtol=1e-5)
    assert_close(absjit.vmap(f)(x), ref, rtol=1e-5)


def test_derivatives():
    check_grads(asp.gamma, (np.float64(2.5),), order=1)
    check_grads(asp.erfcx, (np.array([-1.0, 0.5, 3.0, 8.0]),), order=2)
    check_grads(asp.i0, (np.array([-1.0, 0.5, 3.0]),), order=1)
    check_grads(asp.kl_div, (np.float64(0.7), np.float64(1.9)), order=1)
    check_grads(lambda a, x: asp.gammainc(a, x), (np.float64(1.5), np.float64(0.8)), order=1)
    check_grads(lambda v: asp.log_softmax(v, axis=0), (np.array([0.2, -1.0, 2.0]),), order=1)


@pytest.mark.skipif(jax is None, reason="needs JAX")
def test_derivatives_against_jax():
    for name, args in [("erfcx", (1.0,)), ("gamma", (2.5,)), ("poch", (2.0, 3.0)),
                       ("gammaincc", (2.0, 1.5))]:
        argnums = tuple(range(len(args)))
        ours = absjit.grad(getattr(asp, name), argnums=argnums)(*args)
        theirs = jax.grad(getattr(jsp, name), argnums=argnums)(*args)
        assert_close(ours, tuple(np.asarray(t) for t in theirs), rtol=5e-5)


_EXP_X = np.concatenate([np.linspace(0.01, 3, 40), np.linspace(3, 80, 30),
                         [1e-6, 0.999, 1.001, 1.999, 2.001, 39.9, 40.1]]).astype(np.float32)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_exponential_integrals(dt):
    if dt == "float64":
        absjit.config.update("enable_x64", True)
    x = _EXP_X.astype(dt)
    rtol = 2e-6 if dt == "float32" else 1e-13
    got = asp.exp1(x)
    assert got.dtype == np.dtype(dt) and not got.weak_type
    np.testing.assert_allclose(np.asarray(got, np.float64), sp.exp1(x.astype(np.float64)),
                               rtol=rtol, atol=0)
    xx = np.concatenate([x, -x])
    np.testing.assert_allclose(np.asarray(asp.expi(xx), np.float64),
                               sp.expi(xx.astype(np.float64)), rtol=rtol, atol=0)
    edges = np.array([-1.0, 0.0, np.inf, -np.inf, np.nan], dt)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(asp.exp1(edges[:3])), [np.nan, np.inf, 0])
        np.testing.assert_array_equal(np.asarray(asp.expi(edges[1:])),
                                      [-np.inf, np.inf, 0, np.nan])


def test_exponential_integral_derivatives():
    check_grads(asp.exp1, (np.array([0.3, 1.5, 5.0]),), order=1)
    check_grads(asp.expi, (np.array([-2.0, 0.3, 1.5, 50.0]),), order=1)
    if jsp is not None:
        assert_close(absjit.grad(asp.expi)(np.float32(1.5)),
                     np.asarray(jax.grad(jsp.expi)(np.float32(1.5))), rtol=2e-6)


def test_boxcox():
    x = np.float32([-1, 0, 0.5, 2, 3])
    lm = np.float32([0, 0.5, -1, 2, 0])
    with np.errstate(all="ignore"):
        _check(asp.boxcox(x, lm), sp.boxcox(x, lm), 1e-6)
        _check(asp.boxcox1p(x, lm), sp.boxcox1p(x, lm), 1e-6)
    assert asp.boxcox(2.0, 0.5).weak_type and not asp.boxcox1p(np.float32(2), 0.5).weak_type


def test_bernoulli():
    np.testing.assert_allclose(np.asarray(asp.bernoulli(30)), sp.bernoulli(30), rtol=1e-6)
    assert asp.bernoulli(0).shape == (1,) and asp.bernoulli(3).dtype == np.float32
    with pytest.raises(ValueError, match="non-negative"):
        asp.bernoulli(-1)
    with pytest.raises(absjit.errors.ConcretizationTypeError):
        absjit.jit(asp.bernoulli)(3)
