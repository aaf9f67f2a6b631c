import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax

pytestmark = pytest.mark.filterwarnings("ignore:absjit cpu backend:RuntimeWarning")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 6)).astype(np.float32)
XC = (X + 1j * RNG.standard_normal((3, 4, 6))).astype(np.complex64)

CASES = [
    ("fft", XC, {}), ("fft", X, {"n": 8, "axis": 1}), ("fft", XC, {"n": 4, "norm": "ortho"}),
    ("ifft", XC, {"norm": "forward"}), ("ifft", XC, {"axis": 0}),
    ("rfft", X, {}), ("rfft", X, {"n": 5, "axis": 0, "norm": "ortho"}),
    ("irfft", XC, {}), ("irfft", XC, {"n": 7, "norm": "forward"}),
    ("fft2", XC, {}), ("ifft2", XC, {"s": (3, 8)}), ("rfft2", X, {"axes": (0, 2)}),
    ("irfft2", XC, {}), ("fftn", XC, {}), ("fftn", X, {"axes": (0, 2), "s": (2, 7)}),
    ("ifftn", XC, {"norm": "ortho"}), ("rfftn", X, {}), ("irfftn", XC, {"s": (3, 4, 9), "axes": (0, 1, 2)}),
    ("fft", np.arange(6, dtype=np.int32), {}),
    ("hfft", XC, {}), ("hfft", XC, {"n": 7, "axis": 1, "norm": "ortho"}),
    ("hfft", X, {"norm": "forward"}), ("ihfft", X, {}), ("ihfft", X, {"n": 5, "axis": 0}),
    ("ihfft", X, {"norm": "forward"}),
]


@pytest.mark.parametrize("name, x, kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                       enumerate(CASES)])
def test_fft_family_matches_numpy(name, x, kwargs):
    out = getattr(jnp.fft, name)(x, **kwargs)
    expected = getattr(np.fft, name)(x, **kwargs)
    assert out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-4, atol=2e-4)
    if jax is not None:
        assert out.dtype == getattr(jax.numpy.fft, name)(x, **kwargs).dtype


def test_fft_under_jit_and_vmap(mode):
    out = mode(lambda a: jnp.fft.irfft(jnp.fft.rfft(a)))(X)
    assert_close(out, X, rtol=1e-5, atol=1e-5)
    out = mode(lambda a: jnp.fft.hfft(jnp.fft.ihfft(a), n=X.shape[-1]))(X)
    assert_close(out, X, rtol=1e-5, atol=1e-5)
    batched = absjit.vmap(jnp.fft.fft, in_axes=1, out_axes=1)(XC)
    np.testing.assert_allclose(np.asarray(batched), np.fft.fft(XC, axis=-1), rtol=2e-4,
                               atol=2e-4)


@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("name, x, n", [("fft", XC, None), ("ifft", XC, None),
                                        ("rfft", X, None), ("irfft", XC[..., :4], 6),
                                        ("irfft", XC[..., :4], 7), ("fft2", XC, None),
                                        ("rfftn", X, None)])
def test_fft_gradients_match_jax(name, x, n):
    kwargs = {} if n is None else {"n": n}
    w = RNG.standard_normal(getattr(np.fft, name)(x, **kwargs).shape)

    def loss(mod):
        def f(v):
            y = getattr(mod.fft, name)(v, **kwargs)
            return mod.sum(mod.real(y) * w) + mod.sum(mod.imag(y) * w ** 2) \
                if np.iscomplexobj(np.asarray(getattr(np.fft, name)(x, **kwargs))) \
                else mod.sum(y * w)
        return f
    ours = absjit.grad(loss(jnp))(x)
    theirs = jax.grad(loss(jax.numpy))(x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-4)
    # forward mode agrees with reverse mode
    t = RNG.standard_normal(x.shape).astype(x.dtype)
    _, jvp_out = absjit.jvp(loss(jnp), (x,), (t,))
    expected = np.sum(np.asarray(ours).real * t.real) + (
        np.sum(np.asarray(ours).imag * t.imag) if np.iscomplexobj(t) else 0.0)
    assert abs(float(jvp_out) - expected) < 1e-3 * max(1.0, abs(expected))


def test_fft_helpers():
    assert_close(jnp.fft.fftfreq(5, 0.5), np.fft.fftfreq(5, 0.5).astype(np.float32))
    assert_close(jnp.fft.rfftfreq(6), np.fft.rfftfreq(6).astype(np.float32))
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    assert_close(jnp.fft.fftshift(a), np.fft.fftshift(a))
    assert_close(jnp.fft.ifftshift(a, axes=1), np.fft.ifftshift(a, axes=1))


def test_fft_errors():
    with pytest.raises(ValueError, match="norm"):
        jnp.fft.fft(XC, norm="weird")
    with pytest.raises(TypeError, match="complex"):
        jnp.fft.rfft(XC)
    with pytest.raises(ValueError, match="1D, 2D, and 3D"):
        jnp.fft.fftn(np.ones((2, 2, 2, 2)))
    with pytest.raises(ValueError, match="data points"):
        jnp.fft.fft(XC, n=0)
    with pytest.raises(ValueError, match="fft_type"):
        lax.fft(XC, "DCT", (6,))
    with pytest.raises(ValueError, match="fft_lengths"):
        lax.fft(XC, "FFT", (5,))
    with pytest.raises(TypeError, match="complex"):
        lax.fft(X, "FFT", (6,))
