"""``absjit.numpy.fft``: NumPy's FFT functions on top of the ``fft`` primitive
(``lax.fft``), with NumPy's ``n``/``s``, ``axis``/``axes`` and ``norm`` arguments and
JAX's dtypes (``complex64`` results for 32-bit and integer inputs).

Examples
--------
>>> import absjit.numpy as jnp
>>> jnp.fft.fft(jnp.array([1.0, 0.0, 0.0, 0.0]))
Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ._array_api import place
from ._creation import asarray
from ._indexing import getitem
from ._padding import pad
from ._promote import check_arraylike
from ._shape import roll, transpose
from ._ufuncs import sqrt
from ..array import Array
from ..core.dim_assumptions import assume_at_least
from ..core.dims import is_dim, same_shape
from ..ops import fft as _fft

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _complex_dtype():
    return np.dtype(np.complex128) if dtypes.default_float() == np.float64 \
        else np.dtype(np.complex64)


def _resize(x, axis, n):
    """``x`` cropped or zero-padded to length ``n`` along ``axis``."""
    size = x.shape[axis]
    if same_shape((n,), (size,)):
        return x
    if n < size:
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(0, n)
        return getitem(x, tuple(idx))
    if n > size:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, n - size)
        return pad(x, widths)
    return x


def _fft_core(name, fft_type, a, s, axes, norm):
    check_arraylike(name, a)
    if norm not in _NORMS:
        raise ValueError(f'{name}: invalid norm value {norm!r}; should be "backward", '
                         '"ortho" or "forward"')
    x = asarray(a)
    if fft_type == _fft.FftType.RFFT:
        if dtypes.is_complex(x.dtype):
            raise TypeError(f"{name} does not support complex input, got {x.dtype.name}")
        if not dtypes.is_float(x.dtype) or x.dtype not in (np.float32, np.float64):
            x = x.astype(dtypes.default_float())
    elif not dtypes.is_complex(x.dtype):
        x = x.astype(np.complex128 if x.dtype == np.float64 else _complex_dtype())
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(operator.index(ax) for ax in axes)
    for ax in axes:
        if not -x.ndim <= ax < x.ndim:
            raise ValueError(f"{name}: axis {ax} is out of bounds for an array of rank "
                             f"{x.ndim}")
    axes = tuple(ax % x.ndim for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes {axes} repeat an axis")
    if not 1 <= len(axes) <= 3:
        raise ValueError(f"{name} only supports 1D, 2D, and 3D FFTs; got axes {axes}")
    if s is None:
        s = [x.shape[ax] for ax in axes]
        if fft_type == _fft.FftType.IRFFT:
            s[-1] = 2 * (x.shape[axes[-1]] - 1)
    s = [n if is_dim(n) else operator.index(n) for n in s]
    if len(s) != len(axes):
        raise ValueError(f"{name}: s {tuple(s)} and axes {axes} must have the same length")
    for n in s:
        if is_dim(n):  # ranked: checked at entry
            assume_at_least(n, 1, f"{name} needs at least one data point")
        elif n < 1:
            raise ValueError(f"{name}: invalid number of FFT data points {tuple(s)}")
    for ax, n in zip(axes, s):
        # IRFFT's input holds the n // 2 + 1 non-negative frequencies of its last axis
        last_irfft = fft_type == _fft.FftType.IRFFT and ax == axes[-1]
        x = _resize(x, ax, n // 2 + 1 if last_irfft else n)
    # the transformed axes go last, in order, for the primitive
    rest = [i for i in range(x.ndim) if i not in axes]
    perm = rest + list(axes)
    moved = transpose(x, perm) if perm != list(range(x.ndim)) else x
    out = _fft.fft(moved, fft_type, tuple(s))
    if perm != list(range(x.ndim)):
        out = transpose(out, tuple(int(i) for i in np.argsort(perm)))
    n_total = math.prod(s)
    inverse = fft_type in (_fft.FftType.IFFT, _fft.FftType.IRFFT)
    if norm not in ("ortho", "forward"):
        return out
    real = np.float64 if out.dtype in (np.complex128, np.float64) else np.float32
    if is_dim(n_total):  # ranked: the count is known at run time
        count = asarray(n_total, real)
        count = sqrt(count) if norm == "ortho" else count
        return out * count if inverse else out / count
    if norm == "ortho":
        factor = math.sqrt(n_total) if inverse else 1 / math.sqrt(n_total)
    else:
        factor = n_total if inverse else 1 / n_total
    return out * asarray(factor, real)


def fft(a, n=None, axis=-1, norm=None):
    """The one-dimensional DFT along ``axis`` (``n`` crops or zero-pads it).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.fft(jnp.array([0.0, 1.0]))
    Array([ 1.+0.j, -1.+0.j], dtype=complex64)
    """
    return _fft_core("fft", "FFT", a, None if n is None else [n], (axis,), norm)


def ifft(a, n=None, axis=-1, norm=None):
    """The inverse of :func:`fft`.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.ifft(jnp.array([1.0, -1.0]))
    Array([0.+0.j, 1.+0.j], dtype=complex64)
    """
    return _fft_core("ifft", "IFFT", a, None if n is None else [n], (axis,), norm)


def rfft(a, n=None, axis=-1, norm=None):
    """The DFT of real input: the ``n // 2 + 1`` non-negative frequencies.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.rfft(jnp.array([1.0, 1.0, 1.0, 1.0]))
    Array([4.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
    """
    return _fft_core("rfft", "RFFT", a, None if n is None else [n], (axis,), norm)


def irfft(a, n=None, axis=-1, norm=None):
    """The inverse of :func:`rfft` (``n`` output points, default ``2 * (m - 1)``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.irfft(jnp.array([4.0, 0.0, 0.0]))
    Array([1., 1., 1., 1.], dtype=float32)
    """
    return _fft_core("irfft", "IRFFT", a, None if n is None else [n], (axis,), norm)


# A Hermitian signal's transform is the inverse real transform of its conjugate, with
# the normalisation on the other side (and ``ihfft`` the reverse).
_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(a, n=None, axis=-1, norm=None):
    """The DFT of a signal with Hermitian symmetry, given its first half (``n`` real
    output points, default ``2 * (m - 1)``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.hfft(jnp.array([1.0, 2.0, 1.0]))
    Array([ 6.,  0., -2.,  0.], dtype=float32)
    """
    check_arraylike("hfft", a)
    if norm not in _NORMS:
        raise ValueError(f'hfft: invalid norm value {norm!r}; should be "backward", '
                         '"ortho" or "forward"')
    x = asarray(a)
    if not dtypes.is_complex(x.dtype):
        x = x.astype(np.complex128 if x.dtype == np.float64 else _complex_dtype())
    return irfft(x.conj(), n, axis, _SWAPPED[norm])


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of :func:`hfft`: the first half of the spectrum of a real signal
    whose transform is Hermitian.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.ihfft(jnp.array([6.0, 0.0, -2.0, 0.0])).real
    Array([1., 2., 1.], dtype=float32)
    """
    check_arraylike("ihfft", a)
    if norm not in _NORMS:
        raise ValueError(f'ihfft: invalid norm value {norm!r}; should be "backward", '
                         '"ortho" or "forward"')
    return rfft(a, n, axis, _SWAPPED[norm]).conj()


def fftn(a, s=None, axes=None, norm=None):
    """The DFT over ``axes`` (default: all, or the last ``len(s)``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.fftn(jnp.ones((2, 2)))
    Array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _fft_core("fftn", "FFT", a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """The inverse of :func:`fftn`.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.ifftn(jnp.array([[4.0, 0.0], [0.0, 0.0]])).real
    Array([[1., 1.],
           [1., 1.]], dtype=float32)
    """
    return _fft_core("ifftn", "IFFT", a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """The real-input DFT over ``axes`` (the last one halved).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.rfftn(jnp.ones((2, 4))).shape
    (2, 3)
    """
    return _fft_core("rfftn", "RFFT", a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of :func:`rfftn`.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.irfftn(jnp.fft.rfftn(jnp.ones((2, 4)))).shape
    (2, 4)
    """
    return _fft_core("irfftn", "IRFFT", a, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """:func:`fftn` over the last two axes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.fft2(jnp.ones((2, 2)))[0, 0]
    Array(4.+0.j, dtype=complex64)
    """
    return _fft_core("fft2", "FFT", a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """:func:`ifftn` over the last two axes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.ifft2(jnp.ones((2, 2)))[0, 0]
    Array(1.+0.j, dtype=complex64)
    """
    return _fft_core("ifft2", "IFFT", a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """:func:`rfftn` over the last two axes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.rfft2(jnp.ones((2, 4))).shape
    (2, 3)
    """
    return _fft_core("rfft2", "RFFT", a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """:func:`irfftn` over the last two axes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.irfft2(jnp.ones((2, 3))).shape
    (2, 4)
    """
    return _fft_core("irfft2", "IRFFT", a, s, axes, norm)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an ``n``-point DFT with spacing ``d``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.fftfreq(4)
    Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    dt = dtypes.default_float() if dtype is None else dtype
    out = Array._new(np.fft.fftfreq(operator.index(n), d).astype(dtypes.user_dtype(dt)), False)
    return place(out, device, "fft.fftfreq")


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of :func:`rfft`.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.rfftfreq(4)
    Array([0.  , 0.25, 0.5 ], dtype=float32)
    """
    dt = dtypes.default_float() if dtype is None else dtype
    out = Array._new(np.fft.rfftfreq(operator.index(n), d).astype(dtypes.user_dtype(dt)), False)
    return place(out, device, "fft.rfftfreq")


def _shift(x, axes, sign):
    x = asarray(x)
    axes = tuple(range(x.ndim)) if axes is None else \
        ((axes,) if isinstance(axes, int) else tuple(axes))
    shifts = tuple(sign * (x.shape[ax] // 2) for ax in axes)
    return roll(x, shifts, axes)


def fftshift(x, axes=None):
    """Move the zero frequency to the centre.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.fftshift(jnp.fft.fftfreq(4))
    Array([-0.5 , -0.25,  0.  ,  0.25], dtype=float32)
    """
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of :func:`fftshift`.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.fft.ifftshift(jnp.array([-0.5, -0.25, 0.0, 0.25]))
    Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    return _shift(x, axes, -1)
