"""lax.erf/erfc/erf_inv/lgamma/digamma/polygamma: values vs SciPy, agreement with
XLA's float32 results (ulps, when JAX is installed), analytic derivatives."""
import numpy as np
import pytest
from scipy import special as sp

import absjit
from absjit import lax
from tests.grad_checks import check_grads

GRIDS = {
    "erf": (np.linspace(-5, 5, 2001), sp.erf, 2e-6),
    "erfc": (np.linspace(-3, 9, 2001), sp.erfc, 2e-5),
    "erf_inv": (np.linspace(-0.999, 0.999, 2001), sp.erfinv, 2e-6),
    "lgamma": (np.linspace(0.05, 40, 2001), sp.gammaln, 2e-5),
    "digamma": (np.linspace(0.05, 40, 2001), sp.digamma, 5e-5),
}


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_values_match_scipy(name, mode):
    x, ref, tol = GRIDS[name]
    x32 = x.astype(np.float32)
    got = np.asarray(mode(getattr(lax, name))(x32))
    assert got.dtype == np.float32
    want = ref(x32.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_float64(name):
    absjit.config.update("enable_x64", True)
    x, ref, _ = GRIDS[name]
    got = np.asarray(getattr(lax, name)(x))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref(x), rtol=1e-9 if name != "digamma" else 1e-8,
                               atol=1e-12)


def test_edge_values():
    inf, nan = np.inf, np.nan
    np.testing.assert_array_equal(np.asarray(lax.erf_inv(np.float32([-1, 1]))), [-inf, inf])
    assert np.isnan(float(lax.erf_inv(np.float32(1.5))))
    np.testing.assert_array_equal(np.asarray(lax.erf(np.float32([-inf, inf]))), [-1, 1])
    np.testing.assert_array_equal(np.asarray(lax.erfc(np.float32([-inf, inf]))), [2, 0])
    np.testing.assert_allclose(np.asarray(lax.lgamma(np.float32([1, 2]))), [0, 0], atol=1e-6)
    assert float(lax.lgamma(np.float32(inf))) == inf
    assert np.isinf(float(lax.lgamma(np.float32(-2.0))))
    assert np.isnan(float(lax.digamma(np.float32(-2.0))))
    np.testing.assert_allclose(float(lax.lgamma(np.float32(-2.5))), sp.gammaln(-2.5), rtol=1e-5)
    np.testing.assert_allclose(float(lax.digamma(np.float32(-2.5))), sp.digamma(-2.5), rtol=1e-5)
    np.testing.assert_allclose(float(lax.polygamma(1, np.float32(-2.5))),
                               sp.polygamma(1, -2.5), rtol=1e-4)
    assert lax.erf(np.float16(0.5)).dtype == np.float16
    assert lax.lgamma(3).dtype == np.float32


def test_trigamma_matches_scipy():
    x = np.linspace(-3.7, 30, 401).astype(np.float32)
    x = x[np.abs(x - np.round(x)) > 0.05]
    np.testing.assert_allclose(np.asarray(lax.polygamma(1, x)), sp.polygamma(1, x.astype(float)),
                               rtol=2e-4)
    with pytest.raises(NotImplementedError):
        lax.polygamma(2, 1.0)


def test_bad_dtype():
    with pytest.raises(TypeError, match="floating"):
        lax.erf(np.complex64(1))


@pytest.mark.parametrize("name,x", [("erf", 0.7), ("erfc", -0.4), ("erf_inv", 0.6),
                                    ("lgamma", 2.3), ("digamma", 1.7)])
def test_derivatives(name, x):
    check_grads(getattr(lax, name), (np.float64(x),), order=2, atol=1e-5, rtol=1e-4)


def test_derivatives_against_jax():
    jax = pytest.importorskip("jax")
    for name, x in [("erf", 0.7), ("erf_inv", 0.6), ("lgamma", 2.3), ("digamma", 1.7)]:
        g = float(absjit.grad(getattr(lax, name))(np.float32(x)))
        gj = float(jax.grad(getattr(jax.lax, name))(np.float32(x)))
        np.testing.assert_allclose(g, gj, rtol=2e-5)


def _ulps(a, b):
    ia = a.view(np.int32).astype(np.int64)
    ib = b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


@pytest.mark.parametrize("name,lo,hi,max_ulp", [("erf", -5, 5, 0), ("erf_inv", -1, 1, 2),
                                                ("erfc", -3, 9, 6)])
def test_float32_ulps_against_xla(name, lo, hi, max_ulp):
    jax = pytest.importorskip("jax")
    x = np.linspace(lo, hi, 100_001, dtype=np.float32)
    got = np.asarray(absjit.jit(getattr(lax, name))(x))
    want = np.asarray(jax.jit(getattr(jax.lax, name))(x))
    normal = (np.abs(want) >= np.finfo(np.float32).tiny) | (want == 0)  # XLA flushes denormals
    assert _ulps(got[normal], want[normal]).max() <= max_ulp
