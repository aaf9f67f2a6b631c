"""``absjit.numpy._mathfuncs``: frexp, ldexp, spacing, gcd, lcm, i0, unwrap, the
real/complex predicates and the windows against NumPy/SciPy and (where installed) JAX,
eagerly and under every backend (one program per mode), with grad/vmap and bad input."""
import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings, strategies as hst
from hypothesis.extra import numpy as hnp

import absjit
import absjit.numpy as jnp
from tests.checks import assert_close, jax_numpy

# No subnormals here: XLA on the CPU flushes them to zero (see test_subnormals).
F = np.array([0, 1.5, -3, np.inf, -np.inf, np.nan, 1e-30, 3e38, 1, 0.5, 2 ** -126, 7.0],
             np.float32)
N = np.array([0, 3, -1, 200, -200, -300, 5, 1000, -1000, 1, 2, 3], np.int32)
I1 = np.array([12, 0, -9, 7, 0, 100], np.int32)
I2 = np.array([18, 5, 6, -14, 0, 75], np.int32)
R = np.array([0, 1, -2.5, 10, 14.9, 15.1, 30, 80], np.float32)
P = np.array([0., 3., 6.5, -4., 10., 2.], np.float32)


def _all(x, n, a, b, r, p):
    m, e = jnp.frexp(x)
    return (m, e, jnp.ldexp(x, n), jnp.ldexp(m, e), jnp.spacing(x), jnp.gcd(a, b),
            jnp.lcm(a, b), jnp.i0(r), jnp.unwrap(p), jnp.unwrap(p, discont=1.0, period=4.0),
            jnp.iscomplex(p), jnp.isreal(p + 0j), jnp.kaiser(5, 3.0))


# overflow to inf (ldexp) and inf - inf (spacing of inf) are the expected results
@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
def test_math_functions_every_mode(mode):
    got = mode(_all)(F, N, I1, I2, R, P)
    m, e = np.frexp(F)
    want = (m, e, np.ldexp(F, N), F, np.spacing(F), np.gcd(I1, I2), np.lcm(I1, I2),
            scipy.special.i0(R.astype(np.float64)), np.unwrap(P),
            np.unwrap(P, discont=1.0, period=4.0), np.iscomplex(P), np.isreal(P + 0j),
            np.kaiser(5, 3.0))
    for k, (g, w) in enumerate(zip(got, want)):
        tol = 2e-6 if k in (7, 12) else None
        assert_close(g, np.asarray(w).astype(g.dtype), rtol=tol, err_msg=str(k))


def test_subnormals_follow_numpy():
    # NumPy's exact results (JAX, and absjit's xla backend, flush subnormals to zero)
    x = np.array([1e-40, -3e-42, 2 ** -149], np.float32)
    f = absjit.jit(lambda v: (*jnp.frexp(v), jnp.spacing(v), jnp.ldexp(v, 3)),
                   backend="interpret")
    for got in (f(x), (*jnp.frexp(x), jnp.spacing(x), jnp.ldexp(x, 3))):
        assert_close(got, (*np.frexp(x), np.spacing(x), np.ldexp(x, 3)))
    assert_close(jnp.ldexp(np.float32(1e30), -230), np.ldexp(np.float32(1e30), -230))


def test_dtypes_and_weak_types_match_jax():
    if jax_numpy is None:
        pytest.skip("JAX is not installed")
    cases = [("frexp", (3,)), ("frexp", (np.int32([3, 4]),)), ("ldexp", (3., 2)),
             ("ldexp", (np.int32(3), 2)), ("spacing", (1.0,)), ("gcd", (12, np.int32(18))),
             ("lcm", (np.int8([4]), 6)), ("i0", (1.0,)), ("i0", (3,)),
             ("unwrap", (np.array([0, 3, 7]),)),
             ("unwrap", (np.array([0, 3, 7, -3, 11, 13]),), {"period": 5}),
             ("unwrap", (np.array([0, 3, 7], np.int8),), {"period": 4}),
             ("unwrap", (np.array([True, False]),), {"period": 4}),
             ("iscomplex", (1 + 0j,)), ("isreal", (np.array([1, 2j]),)),
             ("bartlett", (5,)), ("bartlett", (0,)), ("bartlett", (1,)),
             ("blackman", (6,)), ("hamming", (7,)), ("hanning", (4,)), ("kaiser", (6, 14.)),
             ("kaiser", (1, 14.))]
    for name, args, *kw in cases:
        kw = kw[0] if kw else {}
        got, want = getattr(jnp, name)(*args, **kw), getattr(jax_numpy, name)(*args, **kw)
        got_l = got if isinstance(got, tuple) else (got,)
        want_l = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got_l, want_l):
            assert np.dtype(g.dtype) == np.dtype(w.dtype), name
            assert bool(g.weak_type) == bool(w.weak_type), name
            assert_close(g, np.asarray(w), rtol=2e-6, atol=2e-6, err_msg=name)


def test_windows_match_numpy():
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        for m in (0, 1, 2, 7):
            assert_close(getattr(jnp, name)(m), getattr(np, name)(m).astype(np.float32),
                         atol=1e-6)
    assert_close(jnp.kaiser(9, 14.0), np.kaiser(9, 14.0).astype(np.float32), rtol=2e-6)


def test_predicates():
    assert jnp.iscomplexobj(1j) and not jnp.iscomplexobj(np.ones(2))
    assert jnp.isrealobj(jnp.ones(2)) and not jnp.isrealobj(jnp.array([1j]))
    assert jnp.isscalar(1) and jnp.isscalar(np.float32(1)) and jnp.isscalar(jnp.array(2.0))
    assert not jnp.isscalar([1]) and not jnp.isscalar(jnp.ones(2))
    assert jnp.iterable([1]) and not jnp.iterable(3)
    assert jnp.double == jnp.float64 and jnp.csingle == jnp.complex64
    assert jnp.issubdtype(np.str_, jnp.character) and jnp.issubdtype(np.str_, jnp.flexible)


@settings(max_examples=15)
@given(hnp.arrays(np.float32, 6, elements=hst.floats(width=32, allow_nan=True)))
def test_frexp_roundtrip(x):
    m, e = jnp.frexp(x)
    wm, we = np.frexp(x)
    assert_close((m, e), (wm, we))
    assert_close(jnp.ldexp(m, e), x)


@settings(max_examples=15)
@given(hnp.arrays(np.int32, 5, elements=hst.integers(-10 ** 6, 10 ** 6)),
       hnp.arrays(np.int32, 5, elements=hst.integers(-10 ** 6, 10 ** 6)))
def test_gcd_lcm_hypothesis(a, b):
    assert_close(jnp.gcd(a, b), np.gcd(a, b))
    small_a, small_b = a % 1000, b % 1000
    assert_close(jnp.lcm(small_a, small_b), np.lcm(small_a, small_b))


def test_i0_float64_and_gradient():
    absjit.config.update("enable_x64", True)
    x = np.array([0, 1, -2.5, 10, 14.9, 15.1, 30, 80, 700])
    assert_close(jnp.i0(x), scipy.special.i0(x), rtol=1e-11)
    # d/dx i0 = i1
    g = absjit.vmap(absjit.grad(jnp.i0))(x[:-1])
    assert_close(g, scipy.special.i1(x[:-1]), rtol=1e-10)
    assert_close(absjit.grad(jnp.i0)(0.0), np.float64(0.0))


def test_bad_input():
    with pytest.raises(ValueError, match="integers"):
        jnp.gcd(1.5, 2)
    with pytest.raises(ValueError, match="integer"):
        jnp.ldexp(1.0, 2.5)
    with pytest.raises(TypeError, match="complex"):
        jnp.frexp(1j)
    with pytest.raises(ValueError, match="complex"):
        jnp.unwrap(np.array([1j, 2]))
    with pytest.raises(TypeError):
        jnp.hamming(2.5)
    with pytest.raises(TypeError):
        jnp.frexp([1.0])
