"""absjit.scipy.signal against scipy.signal (values) and JAX (dtypes), in every mode, under
grad and vmap, and on bad input."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss
from hypothesis import given, strategies as hst

import absjit
import absjit.numpy as jnp
from absjit.scipy import signal
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads

jss = None
if jax is not None:
    import jax.scipy.signal as jss

SHAPES = [((7,), (3,)), ((3,), (7,)), ((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4, 5, 3), (2, 2, 2))]


def _pair(rng, s1, s2, dtype=np.float32):
    a = rng.standard_normal(s1).astype(dtype)
    b = rng.standard_normal(s2).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(s1).astype(dtype)
        b = b + 1j * rng.standard_normal(s2).astype(dtype)
    return a, b


@pytest.mark.parametrize("s1,s2", SHAPES)
def test_against_scipy_eager(rng, s1, s2):
    a, b = _pair(rng, s1, s2)
    for mode in ("full", "same", "valid"):
        for ours, ref in [(signal.convolve, ss.convolve), (signal.correlate, ss.correlate),
                          (signal.fftconvolve, ss.fftconvolve)]:
            out = ours(a, b, mode=mode)
            assert out.dtype == np.float32
            assert_close(out, ref(a, b, mode=mode).astype(np.float32), rtol=1e-4, atol=1e-4,
                         err_msg=f"{ours.__name__} {mode}")
        for method in ("fft", "direct"):
            assert_close(signal.convolve(a, b, mode, method=method),
                         ss.convolve(a, b, mode).astype(np.float32), rtol=1e-4, atol=1e-4)
            assert_close(signal.correlate(a, b, mode, method=method),
                         ss.correlate(a, b, mode).astype(np.float32), rtol=1e-4, atol=1e-4)
        if len(s1) == 2:
            assert_close(signal.convolve2d(a, b, mode), ss.convolve2d(a, b, mode)
                         .astype(np.float32), rtol=1e-4, atol=1e-4)
            assert_close(signal.correlate2d(a, b, mode), ss.correlate2d(a, b, mode)
                         .astype(np.float32), rtol=1e-4, atol=1e-4)


def test_complex_and_integer(rng):
    a, b = _pair(rng, (8,), (3,), np.complex64)
    for mode in ("full", "same", "valid"):
        for x, y in ((a, b), (b, a)):
            for ours, ref in [(signal.convolve, ss.convolve), (signal.correlate, ss.correlate),
                              (signal.fftconvolve, ss.fftconvolve)]:
                out = ours(x, y, mode)
                assert out.dtype == np.complex64
                assert_close(out, ref(x, y, mode).astype(np.complex64), rtol=1e-4, atol=1e-4)
    i, k = np.arange(5), np.arange(3)
    for fn in (signal.convolve, signal.correlate, signal.fftconvolve):
        out = fn(i, k)
        assert out.dtype == np.float32 and not out.weak_type
        if jss is not None:
            assert getattr(jss, fn.__name__)(i, k).dtype == out.dtype
    assert_close(signal.convolve(i, k), ss.convolve(i, k).astype(np.float32))


def test_every_mode_one_program(mode, rng):
    """The functions together in one program (one compile per backend)."""
    a, b = _pair(rng, (6, 5), (3, 2))
    x = rng.standard_normal((3, 12)).astype(np.float32)

    def program(a, b, x):
        return (signal.convolve(a, b), signal.correlate(a, b, "same"),
                signal.convolve2d(a, b, "valid"), signal.correlate2d(a, b),
                signal.fftconvolve(a, b, "same"), signal.convolve(a, b, method="fft"),
                signal.detrend(x), signal.detrend(x, type="constant", axis=0),
                signal.detrend(x, bp=[4, 9]))

    out = mode(program)(a, b, x)
    expected = (ss.convolve(a, b), ss.correlate(a, b, "same"), ss.convolve2d(a, b, "valid"),
                ss.correlate2d(a, b), ss.fftconvolve(a, b, "same"), ss.convolve(a, b),
                ss.detrend(x), ss.detrend(x, type="constant", axis=0), ss.detrend(x, bp=[4, 9]))
    assert_close(list(out), [e.astype(np.float32) for e in expected], rtol=1e-4, atol=1e-4)


@given(hst.integers(1, 6), hst.integers(1, 6), hst.sampled_from(["full", "same", "valid"]),
       hst.integers(0, 2**16))
def test_1d_shapes_hypothesis(n, m, conv_mode, seed):
    rng = np.random.default_rng(seed)
    a, b = _pair(rng, (n,), (m,))
    assert_close(signal.convolve(a, b, conv_mode), ss.convolve(a, b, conv_mode)
                 .astype(np.float32), rtol=1e-4, atol=1e-4)
    assert_close(signal.fftconvolve(a, b, conv_mode), ss.fftconvolve(a, b, conv_mode)
                 .astype(np.float32), rtol=1e-4, atol=1e-4)


def test_fftconvolve_axes(rng):
    a = rng.standard_normal((3, 8)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    for mode in ("full", "same", "valid"):
        assert_close(signal.fftconvolve(a, b, mode, axes=1),
                     ss.fftconvolve(a, b, mode, axes=1).astype(np.float32), rtol=1e-4,
                     atol=1e-4)
    assert_close(signal.fftconvolve(a, b[:1], axes=[-1]),
                 ss.fftconvolve(a, b[:1], axes=[-1]).astype(np.float32), rtol=1e-4, atol=1e-4)


def test_detrend(rng):
    x = rng.standard_normal((4, 11)).astype(np.float32)
    for kw in ({}, {"axis": 0}, {"type": "constant"}, {"bp": [3, 7]}, {"bp": 5, "axis": -1},
               {"type": "c", "axis": 0}, {"type": "l"}):
        assert_close(signal.detrend(x, **kw), ss.detrend(x, **kw).astype(np.float32),
                     rtol=1e-4, atol=1e-5, err_msg=str(kw))
    out = signal.detrend(np.arange(6))
    assert out.dtype == np.float32
    if jss is not None:
        assert jss.detrend(np.arange(6)).dtype == out.dtype


def test_grad_and_vmap(rng):
    a, b = _pair(rng, (6,), (3,))
    check_grads(lambda a, b: signal.convolve(a, b, "same"), [a, b])
    check_grads(lambda a, b: signal.fftconvolve(a, b), [a, b])
    check_grads(lambda x: signal.detrend(x, bp=[3]), [a])
    batch = rng.standard_normal((4, 6)).astype(np.float32)
    out = absjit.vmap(lambda x: signal.correlate(x, b, "valid"))(batch)
    assert_close(out, np.stack([ss.correlate(x, b, "valid") for x in batch]), rtol=1e-4,
                 atol=1e-4)


def test_bad_input():
    x = jnp.ones(4)
    with pytest.raises(ValueError, match="mode"):
        signal.convolve(x, x, mode="middle")
    with pytest.raises(ValueError, match="method"):
        signal.convolve(x, x, method="foo")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(x, jnp.ones((1, 3)))
    with pytest.raises(ValueError, match="every dimension"):
        signal.convolve(jnp.ones((3, 1)), jnp.ones((1, 3)), mode="valid")
    with pytest.raises(ValueError, match="dimensionality"):
        signal.fftconvolve(x, jnp.ones((1, 3)))
    with pytest.raises(NotImplementedError, match="boundary"):
        signal.convolve2d(jnp.ones((3, 3)), jnp.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional"):
        signal.correlate2d(x, x)
    with pytest.raises(ValueError, match="trend type"):
        signal.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match="breakpoints"):
        signal.detrend(x, bp=[9])
    with pytest.raises(TypeError):
        signal.convolve("abc", x)
