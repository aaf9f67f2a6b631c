"""Windowed-segment spectra shared by ``signal.stft``, ``csd`` and ``welch``.

The signal is cut into overlapping segments by one gather with a static index table
(``segment i`` starts at ``i * step``), each segment is detrended, windowed and
transformed by ``absjit.numpy.fft``. Segment lengths, overlaps and the window's shape
decide array shapes, so they are Python values; the signal, ``fs`` and an explicit
window array may be traced.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import numpy as jnp
from ..numpy._linalg_decomp import _inexact

_BOUNDARIES = (None, "zeros", "even", "odd", "constant")


def _window(name, window, nperseg, n, default_nperseg, dtype):
    """``(window array, nperseg)``."""
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            nperseg = default_nperseg
        nperseg = operator.index(nperseg)
        if nperseg < 1:
            raise ValueError(f"{name}: nperseg must be a positive integer, got {nperseg}")
        nperseg = min(nperseg, n)
        import scipy.signal  # a slow import, needed only to build named windows
        win = scipy.signal.get_window(window, nperseg)
        return jnp.asarray(win, dtype=dtype), nperseg
    win = jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError(f"{name}: window must be 1-D, got shape {win.shape}")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError(f"{name}: value specified for nperseg ({nperseg}) differs from the "
                         f"length of window ({win.shape[0]})")
    if win.shape[0] > n:
        raise ValueError(f"{name}: window is longer than the input signal ({win.shape[0]} > "
                         f"{n})")
    return win.astype(dtype), win.shape[0]


def istft_window(window, nperseg, dtype):
    if isinstance(window, (str, tuple)):
        import scipy.signal  # a slow import, needed only to build named windows
        return jnp.asarray(scipy.signal.get_window(window, nperseg), dtype=dtype)
    win = jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("istft: window must be 1-D")
    if win.shape[0] != nperseg:
        raise ValueError(f"istft: window must have length of {nperseg}")
    return win.astype(dtype)


def _extend(x, width, boundary):
    if boundary == "zeros":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(width, width)])
    if boundary == "constant":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(width, width)], mode="edge")
    even = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(width, width)], mode="reflect")
    if boundary == "even":
        return even
    # odd: reflected about the end values, 2 * edge - mirror image.
    n = x.shape[-1]
    first, last = x[..., :1], x[..., -1:]
    left = 2 * first - even[..., :width]
    right = 2 * last - even[..., width + n:]
    return jnp.concatenate([left, x, right], axis=-1)


def _detrend_segments(seg, detrend):
    if detrend is False or detrend is None:
        return seg
    if callable(detrend):
        return detrend(seg)
    from .signal import detrend as detrend_fn
    return detrend_fn(seg, axis=-1, type=detrend)


def spectral(name, x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
             scaling, axis, mode, boundary=None, padded=False, default_nperseg=256):
    """``(freqs, times, result)`` with ``result`` shaped ``(..., freq, time)`` and the
    frequency axis moved to where ``axis`` was. ``mode`` is ``'stft'`` or ``'psd'``."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{name}: unknown boundary option {boundary!r}, must be one of "
                         f"{list(_BOUNDARIES)}")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"{name}: unknown scaling {scaling!r}")
    same = y is None
    if same:
        (x,) = _inexact(name, x)
    else:
        x, y = _inexact(name, x, y)
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for rank {x.ndim}")
    x = jnp.moveaxis(x, axis, -1)
    if not same:
        y = jnp.moveaxis(y, axis, -1)
        nx, ny = x.shape[-1], y.shape[-1]
        if nx != ny:  # the shorter is zero-padded, as SciPy does
            if nx < ny:
                x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, ny - nx)])
            else:
                y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, nx - ny)])
        shape = jnp.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        x = jnp.broadcast_to(x, shape + x.shape[-1:])
        y = jnp.broadcast_to(y, shape + y.shape[-1:])
    n = x.shape[-1]
    if n == 0:
        raise ValueError(f"{name}: the input signal is empty")
    real_dtype = jnp.zeros((), x.dtype).real.dtype
    win, nperseg = _window(name, window, nperseg, n, default_nperseg, real_dtype)
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    if not 0 <= noverlap < nperseg:
        raise ValueError(f"{name}: noverlap must be less than nperseg, got {noverlap} and "
                         f"{nperseg}")
    nfft = nperseg if nfft is None else operator.index(nfft)
    if nfft < nperseg:
        raise ValueError(f"{name}: nfft must be greater than or equal to nperseg, got {nfft} "
                         f"and {nperseg}")
    step = nperseg - noverlap

    def prepare(v):
        if boundary is not None:
            v = _extend(v, nperseg // 2, boundary)
        if padded:
            extra = (-(v.shape[-1] - nperseg) % step) % nperseg
            if extra:
                v = jnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, extra)])
        return v

    x = prepare(x)
    length = x.shape[-1]
    nseg = (length - nperseg) // step + 1
    index = np.arange(nseg)[:, None] * step + np.arange(nperseg)[None, :]
    complex_input = jnp.issubdtype(x.dtype, jnp.complexfloating) or (
        not same and jnp.issubdtype(y.dtype, jnp.complexfloating))
    onesided = return_onesided and not complex_input
    if return_onesided and complex_input:
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      stacklevel=3)

    def transform(v):
        seg = _detrend_segments(v[..., index], detrend) * win
        return jnp.fft.rfft(seg, nfft) if onesided else jnp.fft.fft(seg, nfft)

    spec_x = transform(x)
    if mode == "stft":
        result = spec_x / jnp.sum(win)
    else:
        spec_y = spec_x if same else transform(prepare(y))
        if scaling == "density":
            scale = 1.0 / (fs * jnp.sum(win * win))
        else:
            scale = 1.0 / jnp.sum(win) ** 2
        result = jnp.conj(spec_x) * spec_y * scale
        if onesided:
            stop = nfft // 2 if nfft % 2 == 0 else nfft // 2 + 1
            doubling = np.ones(result.shape[-1])
            doubling[1:stop] = 2
            result = result * jnp.asarray(doubling, dtype=real_dtype)
        if same:
            result = result.real
    unit = np.fft.rfftfreq(nfft) if onesided else np.fft.fftfreq(nfft)
    freqs = jnp.asarray(unit, dtype=real_dtype) * fs
    centres = np.arange(nperseg / 2, length - nperseg / 2 + 1, step)
    if boundary is not None:
        centres = centres - nperseg / 2
    times = jnp.asarray(centres, dtype=real_dtype) / fs
    result = jnp.swapaxes(result, -1, -2)                 # (..., freq, time)
    out_axis = axis - 1 if axis < 0 else axis
    return freqs.astype(real_dtype), times.astype(real_dtype), jnp.moveaxis(result, -2,
                                                                            out_axis)


def median_bias(n):
    """The bias of the median of ``n`` periodogram segments, as SciPy corrects it."""
    k = np.arange(1, (n - 1) // 2 + 1)
    return 1 + np.sum(1.0 / (2 * k + 1) - 1.0 / (2 * k))
