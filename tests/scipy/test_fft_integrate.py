"""absjit.scipy.fft (DCT) and absjit.scipy.integrate against SciPy (values) and JAX
(dtypes, weak types), in every mode, under grad and vmap, and on bad input."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.fft as sf
import scipy.integrate as si
from hypothesis import given, strategies as hst

import absjit
import absjit.numpy as jnp
from absjit.scipy import fft, integrate
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads

jsf = jsi = None
if jax is not None:
    import jax.scipy.fft as jsf
    import jax.scipy.integrate as jsi


@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
def test_dct_idct_against_scipy(rng, norm):
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    for axis in (0, 1, -1):
        for n in (None, 3, 8):
            for ours, ref in ((fft.dct, sf.dct), (fft.idct, sf.idct)):
                assert_close(ours(x, n=n, axis=axis, norm=norm),
                             ref(x, n=n, axis=axis, norm=norm).astype(np.float32), rtol=1e-4,
                             atol=1e-4, err_msg=f"{ours.__name__} n={n} axis={axis}")
    for s, axes in ((None, None), ((3, 7), None), (None, [0, 2]), ((2,), [1])):
        for ours, ref in ((fft.dctn, sf.dctn), (fft.idctn, sf.idctn)):
            assert_close(ours(x, s=s, axes=axes, norm=norm),
                         ref(x, s=s, axes=axes, norm=norm).astype(np.float32), rtol=1e-4,
                         atol=1e-3, err_msg=f"{ours.__name__} s={s} axes={axes}")


def test_dtypes_complex_and_x64(rng):
    z = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype(np.complex64)
    assert_close(fft.dct(z), sf.dct(z).astype(np.complex64), rtol=1e-4, atol=1e-4)
    assert_close(fft.idct(z, norm="ortho"), sf.idct(z, norm="ortho").astype(np.complex64),
                 rtol=1e-4, atol=1e-4)
    for fn in (fft.dct, fft.idct, fft.dctn, fft.idctn):
        out = fn(np.arange(4))
        assert out.dtype == np.float32
        if jsf is not None:
            ref = getattr(jsf, fn.__name__)(np.arange(4))
            assert (ref.dtype, ref.weak_type) == (out.dtype, out.weak_type)
    absjit.config.update("enable_x64", True)
    x = rng.standard_normal(7)
    out = fft.dct(x, norm="ortho")
    assert out.dtype == np.float64
    assert_close(out, sf.dct(x, norm="ortho"), rtol=1e-12, atol=1e-12)
    assert_close(fft.idct(out, norm="ortho"), x, rtol=1e-12, atol=1e-12)


@given(hst.integers(1, 9), hst.sampled_from([None, "ortho"]), hst.integers(0, 2**16))
def test_dct_round_trip_hypothesis(n, norm, seed):
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    assert_close(fft.dct(x, norm=norm), sf.dct(x, norm=norm).astype(np.float32), rtol=1e-4,
                 atol=1e-4)
    assert_close(fft.idct(fft.dct(x, norm=norm), norm=norm), x, rtol=1e-4, atol=1e-4)


def test_one_program_every_mode(mode, rng):
    x = rng.standard_normal((3, 8)).astype(np.float32)
    t = np.sort(rng.uniform(0, 3, 8)).astype(np.float32)

    def program(x, t):
        return (fft.dct(x), fft.idct(x, norm="ortho", axis=0), fft.dctn(x, s=(4, 5)),
                fft.idctn(x), integrate.trapezoid(x), integrate.trapezoid(x, t),
                integrate.trapezoid(x, dx=0.5, axis=0))

    out = mode(program)(x, t)
    expected = (sf.dct(x), sf.idct(x, norm="ortho", axis=0), sf.dctn(x, s=(4, 5)),
                sf.idctn(x), si.trapezoid(x), si.trapezoid(x, t),
                si.trapezoid(x, dx=0.5, axis=0))
    assert_close(list(out), [np.asarray(e, np.float32) for e in expected], rtol=1e-4,
                 atol=1e-4)


def test_trapezoid_dtypes():
    out = integrate.trapezoid(np.arange(4))
    assert out.dtype == np.float32 and float(out) == 4.5
    if jsi is not None:
        for args in ((np.arange(4),), (np.arange(4.0), np.arange(4))):
            ref, mine = jsi.trapezoid(*args), integrate.trapezoid(*args)
            assert (ref.dtype, ref.weak_type) == (mine.dtype, mine.weak_type)


def test_grad_and_vmap(rng):
    x = rng.standard_normal(6).astype(np.float32)
    check_grads(lambda x: fft.dct(x, norm="ortho"), [x])
    check_grads(lambda x: fft.idctn(x.reshape(2, 3)), [x])
    batch = rng.standard_normal((3, 6)).astype(np.float32)
    assert_close(absjit.vmap(fft.dct)(batch), sf.dct(batch).astype(np.float32), rtol=1e-4,
                 atol=1e-4)
    assert_close(absjit.vmap(integrate.trapezoid)(batch),
                 si.trapezoid(batch).astype(np.float32), rtol=1e-5, atol=1e-5)


def test_bad_input():
    x = jnp.ones(4)
    with pytest.raises(NotImplementedError, match="type 2"):
        fft.dct(x, type=3)
    with pytest.raises(NotImplementedError, match="type 2"):
        fft.idctn(x, type=1)
    with pytest.raises(ValueError, match="norm"):
        fft.dct(x, norm="forward")
    with pytest.raises(ValueError, match="data points"):
        fft.dct(x, n=0)
    with pytest.raises(ValueError, match="out of bounds"):
        fft.dct(x, axis=2)
    with pytest.raises(ValueError, match="different lengths"):
        fft.dctn(jnp.ones((2, 2)), s=(2, 2), axes=[0])
    with pytest.raises(TypeError):
        fft.dct("abc")
