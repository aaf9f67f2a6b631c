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


def _compare_all(ours, ref, msg):
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert_close(o, np.asarray(r).astype(np.asarray(o).dtype), rtol=1e-4, atol=1e-5,
                     err_msg=msg)


STFT_KWARGS = [dict(nperseg=16), dict(nperseg=16, noverlap=4, nfft=20),
               dict(nperseg=15, boundary="even"), dict(nperseg=15, boundary="odd", padded=False),
               dict(nperseg=16, boundary="constant", detrend="linear"),
               dict(nperseg=16, boundary=None), dict(nperseg=16, window=("tukey", 0.3),
                                                     return_onesided=False),
               dict(nperseg=16, fs=3.0)]
PSD_KWARGS = [dict(), dict(nperseg=16), dict(nperseg=16, scaling="spectrum", fs=2.0),
              dict(nperseg=16, average="median"), dict(nperseg=17, nfft=21, detrend="linear"),
              dict(nperseg=16, return_onesided=False), dict(nperseg=16, detrend=False),
              dict(nperseg=8, average="median", window="boxcar")]


@pytest.mark.filterwarnings("ignore:nperseg")
def test_spectral_against_scipy(rng):
    x = rng.standard_normal((2, 50)).astype(np.float32)
    y = rng.standard_normal((2, 50)).astype(np.float32)
    for kw in STFT_KWARGS:
        _compare_all(signal.stft(x, **kw), ss.stft(x, **kw), f"stft {kw}")
    for kw in PSD_KWARGS:
        _compare_all(signal.welch(x, **kw), ss.welch(x, **kw), f"welch {kw}")
        _compare_all(signal.csd(x, y, **kw), ss.csd(x, y, **kw), f"csd {kw}")
    _compare_all(signal.stft(x.T, nperseg=16, axis=0), ss.stft(x.T, nperseg=16, axis=0),
                 "stft axis=0")
    _compare_all(signal.welch(x.T, nperseg=16, axis=0), ss.welch(x.T, nperseg=16, axis=0),
                 "welch axis=0")
    _compare_all(signal.csd(x, y[:, :40], nperseg=16), ss.csd(x, y[:, :40], nperseg=16),
                 "csd of unequal lengths")
    window = np.hanning(12).astype(np.float32)
    _compare_all(signal.welch(x, window=window), ss.welch(x, window=window), "array window")


ISTFT_KWARGS = [dict(nperseg=16), dict(nperseg=15), dict(nperseg=16, noverlap=10, nfft=20),
                dict(nperseg=16, boundary=None), dict(nperseg=16, return_onesided=False)]


@pytest.mark.parametrize("kw", ISTFT_KWARGS)
def test_istft_against_scipy(rng, kw):
    x = rng.standard_normal((2, 50)).astype(np.float32)
    z = ss.stft(x, **kw)[2].astype(np.complex64)
    inverse = dict(kw)
    if "boundary" in inverse:
        inverse["boundary"] = False
    if "return_onesided" in inverse:
        inverse["input_onesided"] = inverse.pop("return_onesided")
    ours = signal.istft(z, **inverse)
    _compare_all(ours, ss.istft(z, **inverse), f"istft {kw}")
    if "boundary" not in kw:  # the round trip
        assert_close(ours[1][:, :50].real, x, rtol=1e-4, atol=1e-5)
    if jss is not None and kw == ISTFT_KWARGS[0]:
        theirs = jss.istft(z, **inverse)
        assert [(o.dtype, o.weak_type) for o in ours] == \
            [(t.dtype, t.weak_type) for t in theirs]


def test_istft_axes(rng):
    x = rng.standard_normal((2, 50)).astype(np.float32)
    z = ss.stft(x.T, nperseg=16, axis=0)[2]
    _compare_all(signal.istft(z, nperseg=16, time_axis=-1, freq_axis=0),
                 ss.istft(z, nperseg=16, time_axis=-1, freq_axis=0), "freq axis 0")
    z = np.moveaxis(ss.stft(x, nperseg=16)[2], -1, 0)
    _compare_all(signal.istft(z, nperseg=16, time_axis=0, freq_axis=-1),
                 ss.istft(z, nperseg=16, time_axis=0, freq_axis=-1), "time axis 0")
    with pytest.raises(ValueError, match="2d"):
        signal.istft(jnp.ones(4))
    with pytest.raises(ValueError, match="differing"):
        signal.istft(z, time_axis=0, freq_axis=0)
    with pytest.raises(ValueError, match="length"):
        signal.istft(z, nperseg=16, window=jnp.ones(8))


@pytest.mark.filterwarnings("ignore:Input data is complex")
def test_spectral_complex_and_dtypes(rng):
    z = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype(np.complex64)
    _compare_all(signal.stft(z, nperseg=8), ss.stft(z, nperseg=8, return_onesided=False),
                 "complex stft")
    _compare_all(signal.welch(z, nperseg=8), ss.welch(z, nperseg=8, return_onesided=False),
                 "complex welch")
    if jss is not None:
        x = rng.standard_normal(40).astype(np.float32)
        for name, args in (("stft", (np.arange(20),)), ("csd", (x, x[::-1])),
                           ("welch", (z,))):
            ours = getattr(signal, name)(*args, nperseg=8)
            theirs = getattr(jss, name)(*args, nperseg=8)
            assert [(o.dtype, o.weak_type) for o in ours] == \
                [(t.dtype, t.weak_type) for t in theirs], name
            assert_close(list(ours), list(theirs), rtol=1e-4, atol=1e-5)


def test_spectral_every_mode(mode, rng):
    x = rng.standard_normal(40).astype(np.float32)
    y = rng.standard_normal(40).astype(np.float32)

    def program(x, y, fs):
        f, t, z = signal.stft(x, fs, nperseg=8)
        return (f, t, z, *signal.istft(z, fs, nperseg=8),
                *signal.welch(x, fs, nperseg=8, average="median"),
                *signal.csd(x, y, fs, nperseg=8, scaling="spectrum"))

    out = mode(program)(x, y, np.float32(2.0))
    f, t, z = ss.stft(x, 2.0, nperseg=8)
    expected = (f, t, z, *ss.istft(z, 2.0, nperseg=8),
                *ss.welch(x, 2.0, nperseg=8, average="median"),
                *ss.csd(x, y, 2.0, nperseg=8, scaling="spectrum"))
    _compare_all(out, expected, "one program")


def test_spectral_grad_vmap(rng):
    x = rng.standard_normal(24)
    check_grads(lambda x: signal.welch(x, nperseg=8)[1], [x])
    check_grads(lambda x: jnp.abs(signal.stft(x, nperseg=8)[2]) ** 2, [x])
    batch = rng.standard_normal((3, 24)).astype(np.float32)
    out = absjit.vmap(lambda v: signal.welch(v, nperseg=8)[1])(batch)
    assert_close(out, ss.welch(batch, nperseg=8)[1].astype(np.float32), rtol=1e-4, atol=1e-5)


def test_spectral_bad_input():
    x = jnp.ones(32)
    with pytest.raises(ValueError, match="noverlap"):
        signal.stft(x, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="nfft"):
        signal.welch(x, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="boundary"):
        signal.stft(x, nperseg=8, boundary="periodic")
    with pytest.raises(ValueError, match="scaling"):
        signal.welch(x, nperseg=8, scaling="power")
    with pytest.raises(ValueError, match="average"):
        signal.csd(x, x, nperseg=8, average="mode")
    with pytest.raises(ValueError, match="differs"):
        signal.welch(x, window=jnp.ones(8), nperseg=4)
    with pytest.raises(ValueError, match="1-D"):
        signal.welch(x, window=jnp.ones((2, 4)))


def test_detrend_traced_breakpoints():
    x = jnp.arange(8.0)
    with pytest.raises(absjit.errors.ConcretizationTypeError, match="bp"):
        absjit.jit(lambda x, bp: signal.detrend(x, bp=bp))(x, jnp.array([3]))
    out = absjit.jit(lambda x: signal.detrend(x ** 2, bp=np.array([3])))(x)
    assert_close(out, ss.detrend(np.arange(8.0) ** 2, bp=[3]).astype(np.float32), rtol=1e-4,
                 atol=1e-4)
