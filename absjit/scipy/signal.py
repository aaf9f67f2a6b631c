"""``absjit.scipy.signal``: SciPy's convolutions and detrending with JAX's semantics.

The direct convolutions are one ``lax.conv_general_dilated`` each (a correlation, so
the kernel is flipped); ``fftconvolve`` multiplies spectra from ``absjit.numpy.fft``.
Integer and boolean input is promoted to the default float, as in JAX.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..array import Array
from ..core.avals import ConcreteArray
from ..core.trace import Tracer
from ..errors import ConcretizationTypeError
from ..numpy._linalg_decomp import _inexact
from ._spectral import istft_window, median_bias, spectral

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend",
           "stft", "istft", "csd", "welch"]

_MODES = ("full", "same", "valid")


def _check_mode(name, mode):
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")


def _valid_swap(name, s1, s2):
    """Whether 'valid' mode needs the inputs swapped (in2 larger in every dimension)."""
    if all(a >= b for a, b in zip(s1, s2)):
        return False
    if all(a <= b for a, b in zip(s1, s2)):
        return True
    raise ValueError(f"{name}: in 'valid' mode one input must be at least as large as the "
                     f"other in every dimension, got shapes {tuple(s1)} and {tuple(s2)}")


def _convolve_nd(name, in1, in2, mode, precision, late_center=False):
    _check_mode(name, mode)
    in1, in2 = _inexact(name, in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"{name}: in1 and in2 must have the same number of dimensions, got "
                         f"{in1.ndim} and {in2.ndim}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {in1.shape} and "
                         f"{in2.shape}")
    if mode == "valid" and _valid_swap(name, in1.shape, in2.shape):
        in1, in2 = in2, in1
    nd = in1.ndim
    if mode == "full":
        pads = [(m - 1, m - 1) for m in in2.shape]
    elif mode == "same":
        pads = [((m - 1) // 2, m // 2) if late_center else (m // 2, (m - 1) // 2)
                for m in in2.shape]
    else:
        pads = [(0, 0)] * nd
    kernel = jnp.flip(in2)
    out = lax.conv_general_dilated(in1[None, None], kernel[None, None], (1,) * nd, pads,
                                   precision=precision)
    return out[0, 0]


def _check_method(name, method):
    if method not in ("auto", "fft", "direct"):
        raise ValueError(f"{name}: got method={method!r}; expected 'auto', 'fft', or "
                         f"'direct'.")


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional convolution of two arrays of the same rank.

    ``mode`` is ``'full'``, ``'same'`` (the shape of ``in1``) or ``'valid'``.
    ``method='fft'`` computes it with :func:`fftconvolve`; ``'auto'`` and ``'direct'``
    with a direct convolution (JAX does the same rather than estimating which is
    faster, as SciPy's ``'auto'`` does).

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> signal.convolve(jnp.array([1., 2., 3.]), jnp.array([0., 1., 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    _check_method("convolve", method)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _convolve_nd("convolve", in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional cross-correlation: ``convolve(in1, flip(conj(in2)))``.

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> signal.correlate(jnp.array([1., 2., 3.]), jnp.array([0., 1., 0.5]))
    Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
    """
    _check_method("correlate", method)
    (in2,) = _inexact("correlate", in2)
    in2 = jnp.flip(jnp.conj(in2))
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _convolve_nd("correlate", in1, in2, mode, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if jnp.ndim(in1) != 2 or jnp.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs, got ranks "
                         f"{jnp.ndim(in1)} and {jnp.ndim(in2)}")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """Two-dimensional convolution; only ``boundary='fill'`` with ``fillvalue=0`` (as JAX).

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> signal.convolve2d(jnp.ones((3, 3)), jnp.ones((2, 2)), mode="valid")
    Array([[4., 4.],
           [4., 4.]], dtype=float32)
    """
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd("convolve2d", in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """Two-dimensional cross-correlation; only ``boundary='fill'`` with ``fillvalue=0``.

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> signal.correlate2d(jnp.eye(3), jnp.array([[1., 0.], [0., 0.]]), mode="valid")
    Array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    (in2,) = _inexact("correlate2d", in2)
    # SciPy (and JAX) centre correlate2d's 'same' window one sample later than
    # correlate's when the kernel has an even length.
    return _convolve_nd("correlate2d", in1, jnp.flip(jnp.conj(in2)), mode, precision,
                        late_center=True)


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolution by FFT: the product of zero-padded spectra, transformed back and
    cropped to ``mode``. Along axes not in ``axes`` the inputs broadcast.

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> r = signal.fftconvolve(jnp.array([1., 2., 3.]), jnp.array([0., 1., 0.5]))
    >>> print(np.round(np.asarray(r), 4))
    [0.  1.  2.5 4.  1.5]
    """
    _check_mode("fftconvolve", mode)
    in1, in2 = _inexact("fftconvolve", in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"fftconvolve: in1 and in2 should have the same dimensionality, "
                         f"got {in1.ndim} and {in2.ndim}")
    nd = in1.ndim
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"fftconvolve: inputs cannot be empty, got shapes {in1.shape} and "
                         f"{in2.shape}")
    if axes is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(sorted({operator.index(a) % nd if -nd <= a < nd else _bad_axis(a, nd)
                             for a in np.atleast_1d(axes).tolist()}))
    for ax in range(nd):
        if ax not in axes and in1.shape[ax] != in2.shape[ax] and 1 not in (
                in1.shape[ax], in2.shape[ax]):
            raise ValueError(f"fftconvolve: incompatible shapes {in1.shape} and {in2.shape} "
                             f"along axis {ax}, which is not convolved")
    if mode == "valid" and _valid_swap("fftconvolve", [in1.shape[a] for a in axes],
                                       [in2.shape[a] for a in axes]):
        in1, in2 = in2, in1
    full = [in1.shape[a] + in2.shape[a] - 1 for a in axes]
    if jnp.issubdtype(in1.dtype, jnp.complexfloating):
        sp = jnp.fft.fftn(in1, full, axes) * jnp.fft.fftn(in2, full, axes)
        out = jnp.fft.ifftn(sp, full, axes)
    else:
        sp = jnp.fft.rfftn(in1, full, axes) * jnp.fft.rfftn(in2, full, axes)
        out = jnp.fft.irfftn(sp, full, axes)
    index = [slice(None)] * nd
    for a, n_full in zip(axes, full):
        n1, n2 = in1.shape[a], in2.shape[a]
        if mode == "same":
            start = (n_full - n1) // 2
            index[a] = slice(start, start + n1)
        elif mode == "valid":
            index[a] = slice(n2 - 1, n1)
    return out[tuple(index)]


def _bad_axis(a, nd):
    raise ValueError(f"fftconvolve: axis {a} is out of bounds for arrays of rank {nd}")


def _concrete_bp(bp):
    """The NumPy value of the breakpoints: they decide the segments' shapes."""
    if isinstance(bp, Array):
        return np.asarray(bp)
    if isinstance(bp, Tracer):
        if isinstance(bp.aval, ConcreteArray):
            return bp.aval.concrete_value()
        raise ConcretizationTypeError(
            bp, "detrend's breakpoints bp decide the shapes of its segments, so they must "
                "be concrete: pass Python ints or a NumPy array (or mark bp static).")
    return np.asarray(bp)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """Remove the mean (``type='constant'``) or the least-squares line
    (``type='linear'``, piecewise between the breakpoints ``bp``) along ``axis``.

    ``bp`` must be concrete (Python ints or a NumPy array): it decides the shapes of the
    segments.

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> signal.detrend(jnp.array([1., 2., 3., 6.]), type="constant")
    Array([-2., -1.,  0.,  3.], dtype=float32)
    """
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"detrend: trend type must be 'linear' or 'constant', got {type!r}")
    (data,) = _inexact("detrend", data)
    if type in ("constant", "c"):
        return data - jnp.mean(data, axis=axis, keepdims=True)
    data = jnp.moveaxis(data, axis, -1)
    n = data.shape[-1]
    breaks = np.unique(np.concatenate([[0], np.atleast_1d(_concrete_bp(bp)).astype(int),
                                       [n]]))
    if breaks.min() < 0 or breaks.max() > n:
        raise ValueError(f"detrend: breakpoints must lie in [0, {n}], got {bp!r}")
    pieces = []
    for lo, hi in zip(breaks[:-1].tolist(), breaks[1:].tolist()):
        seg = data[..., lo:hi]
        t = np.arange(hi - lo, dtype=np.float64)
        t -= t.mean()
        denom = float((t * t).sum())
        t = jnp.asarray(t, dtype=data.real.dtype)
        mean = jnp.mean(seg, axis=-1, keepdims=True)
        if denom == 0.0:
            pieces.append(seg - mean)
            continue
        slope = jnp.sum(seg * t, axis=-1, keepdims=True) / denom
        pieces.append(seg - mean - slope * t)
    out = jnp.concatenate(pieces, axis=-1) if len(pieces) > 1 else pieces[0]
    return jnp.moveaxis(out, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """Short-time Fourier transform: ``(f, t, Zxx)``, the spectra of overlapping windowed
    segments of ``x`` along ``axis``, scaled by the window's sum (SciPy's
    ``scaling='spectrum'``).

    ``window`` is a name (or tuple) for ``scipy.signal.get_window`` or a 1-D array;
    ``boundary`` extends the signal by half a segment (``'zeros'``, ``'even'``,
    ``'odd'``, ``'constant'`` or ``None``) and ``padded`` zero-pads its end to a whole
    number of segments. Complex input gives two-sided spectra.

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> f, t, Z = signal.stft(jnp.ones(8), nperseg=4)
    >>> f.shape, t.shape, Z.shape, Z.dtype
    ((3,), (5,), (3, 5), dtype('complex64'))
    """
    freqs, times, result = spectral("stft", x, None, fs, window, nperseg, noverlap, nfft,
                                    detrend, return_onesided, "spectrum", axis, "stft",
                                    boundary=boundary, padded=padded)
    return freqs, times, result


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """Inverse of :func:`stft` by weighted overlap-add: ``(t, x)``.

    The inverse transforms of the segments are windowed, added at their offsets and
    divided by the summed squared window (where it is not tiny). ``nperseg`` defaults to
    the segment length the frequency axis implies. As in SciPy and JAX, ``t`` counts the
    samples along the *first* axis of ``x`` (``arange(x.shape[0]) / fs``).

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> _, _, Z = signal.stft(jnp.arange(8.), nperseg=4)
    >>> t, x = signal.istft(Z, nperseg=4)
    >>> print(np.round(np.asarray(x), 4))
    [0. 1. 2. 3. 4. 5. 6. 7.]
    """
    Zxx = jnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("istft: input stft must be at least 2d")
    nd = Zxx.ndim
    freq_axis, time_axis = operator.index(freq_axis) % nd, operator.index(time_axis) % nd
    if freq_axis == time_axis:
        raise ValueError("istft: must specify differing time and frequency axes")
    dtype = jnp.result_type(Zxx.dtype, jnp.complex64)
    Zxx = Zxx.astype(dtype)
    nseg, nfreq = Zxx.shape[time_axis], Zxx.shape[freq_axis]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = n_default if nperseg is None else operator.index(nperseg)
    if nperseg < 1:
        raise ValueError("istft: nperseg must be a positive integer")
    if nfft is None:
        nfft = nperseg if input_onesided and nperseg == n_default + 1 else n_default
    elif nfft < nperseg:
        raise ValueError("istft: nfft must be greater than or equal to nperseg")
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    if noverlap >= nperseg:
        raise ValueError("istft: noverlap must be less than nperseg")
    step = nperseg - noverlap
    outer = [a for a in range(nd) if a not in (freq_axis, time_axis)]
    Zxx = jnp.transpose(Zxx, outer + [time_axis, freq_axis])      # (..., time, freq)
    real_dtype = jnp.zeros((), dtype).real.dtype
    win = istft_window(window, nperseg, real_dtype)
    if input_onesided:
        segs = jnp.fft.irfft(Zxx, nfft, axis=-1)[..., :nperseg]
    else:
        segs = jnp.fft.ifft(Zxx, nfft, axis=-1)[..., :nperseg]
    segs = segs * jnp.sum(win) * win
    length = nperseg + (nseg - 1) * step
    index = (np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]).ravel()
    x = jnp.zeros(segs.shape[:-2] + (length,), segs.dtype)
    x = x.at[..., index].add(segs.reshape(segs.shape[:-2] + (-1,)))
    norm = jnp.zeros(length, real_dtype).at[index].add(jnp.tile(win * win, nseg))
    if boundary:
        x = x[..., nperseg // 2:length - nperseg // 2]
        norm = norm[nperseg // 2:length - nperseg // 2]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != nd - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    t = jnp.arange(x.shape[0], dtype=real_dtype) / fs
    return t.astype(real_dtype), x


def _average(name, result, average):
    if average not in ("mean", "median"):
        raise ValueError(f"{name}: average must be 'median' or 'mean', got {average!r}")
    nseg = result.shape[-1]
    if nseg == 1:
        return result[..., 0]
    if average == "mean":
        return jnp.mean(result, axis=-1)
    bias = median_bias(nseg)
    if jnp.issubdtype(result.dtype, jnp.complexfloating):
        med = jnp.median(result.real, axis=-1) + 1j * jnp.median(result.imag, axis=-1)
    else:
        med = jnp.median(result, axis=-1)
    return med / bias


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """Cross power spectral density of ``x`` and ``y`` by Welch's method: ``(f, Pxy)``,
    the average over segments of ``conj(X) * Y``, scaled by ``scaling`` (``'density'``
    or ``'spectrum'``). ``y=None`` means ``y = x`` (and a real result, as :func:`welch`).
    ``nperseg`` defaults to 256, or the signal's length when that is shorter.

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> f, p = signal.csd(jnp.arange(8.), jnp.ones(8), nperseg=4)
    >>> f
    Array([0.  , 0.25, 0.5 ], dtype=float32)
    """
    freqs, _, result = spectral("csd", x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                return_onesided, scaling, axis, "psd")
    return freqs, _average("csd", result, average)


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """Power spectral density by Welch's method: ``(f, Pxx)``, :func:`csd` of ``x`` with
    itself.

    Examples
    --------
    >>> from absjit.scipy import signal
    >>> f, p = signal.welch(jnp.ones(16), nperseg=8)
    >>> p
    Array([0., 0., 0., 0., 0.], dtype=float32)
    """
    freqs, _, result = spectral("welch", x, None, fs, window, nperseg, noverlap, nfft,
                                detrend, return_onesided, scaling, axis, "psd")
    return freqs, _average("welch", result, average)
