"""``absjit.scipy.fft``: the type-2 discrete cosine transform and its inverse (the
transforms ``jax.scipy.fft`` offers), computed with ``absjit.numpy.fft``.

Both come from one FFT of length ``2n``: the DCT-II of ``x`` is
``2 Re(exp(-i pi k / 2n) * fft(x, 2n)[k])`` and its inverse (a scaled DCT-III) is the
real part of an inverse FFT of length ``2n`` of the coefficients turned by
``exp(i pi k / 2n)``. Complex input is transformed as its real and imaginary parts.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import numpy as jnp
from ..numpy._linalg_decomp import _inexact

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError(f"{name}: only DCT type 2 is implemented, got type={type!r}")
    if norm not in (None, "backward", "ortho"):
        raise ValueError(f"{name}: norm={norm!r} is not implemented (None, 'backward' or "
                         f"'ortho')")


def _resize(x, n, axis):
    """``x`` truncated or zero-padded to length ``n`` along ``axis``."""
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    size = x.shape[axis]
    if n < size:
        return jnp.take(x, jnp.arange(n), axis=axis)
    if n > size:
        pad = [(0, 0)] * x.ndim
        pad[axis] = (0, n - size)
        return jnp.pad(x, pad)
    return x


def _real_parts(fn, x, *rest):
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        return fn(x.real, *rest) + 1j * fn(x.imag, *rest)
    return fn(x, *rest)


def _twiddle(n, sign, dtype, axis, ndim):
    """``exp(sign * i pi k / 2n)`` for ``k < n``, shaped to broadcast along ``axis``."""
    k = np.arange(n)
    w = np.exp(sign * 1j * np.pi * k / (2 * n))
    shape = [1] * ndim
    shape[axis] = n
    return jnp.asarray(w.reshape(shape), dtype=dtype)


def _dct2_real(x, axis, norm):
    n = x.shape[axis]
    cdt = jnp.result_type(x.dtype, jnp.complex64)
    spec = jnp.take(jnp.fft.rfft(x, 2 * n, axis=axis), jnp.arange(n), axis=axis)
    y = 2 * (spec * _twiddle(n, -1, cdt, axis, x.ndim)).real
    if norm == "ortho":
        scale = np.full(n, np.sqrt(1 / (2 * n)))
        scale[0] = np.sqrt(1 / (4 * n))
        shape = [1] * x.ndim
        shape[axis] = n
        y = y * jnp.asarray(scale.reshape(shape), dtype=y.dtype)
    return y


def _idct2_real(x, axis, norm):
    n = x.shape[axis]
    cdt = jnp.result_type(x.dtype, jnp.complex64)
    weights = np.full(n, 2.0)
    weights[0] = 1.0
    if norm == "ortho":
        # The transpose of the orthonormal DCT-II matrix, brought to the same 1/2n form.
        weights = np.full(n, 2 * np.sqrt(2 * n))
        weights[0] = 2 * np.sqrt(n)
    shape = [1] * x.ndim
    shape[axis] = n
    u = x * jnp.asarray(weights.reshape(shape), dtype=x.dtype) * _twiddle(n, 1, cdt, axis,
                                                                          x.ndim)
    y = jnp.fft.ifft(u, 2 * n, axis=axis).real
    return jnp.take(y, jnp.arange(n), axis=axis)


def _prepare(name, x, type, norm):
    _check(name, type, norm)
    (x,) = _inexact(name, x)
    if x.ndim == 0:
        raise ValueError(f"{name}: input must have at least one dimension")
    return x


def _axes_and_sizes(name, x, s, axes):
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    axes = [operator.index(a) for a in axes]
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for an array of rank "
                             f"{x.ndim}")
    axes = [a % x.ndim for a in axes]
    if s is None:
        s = [x.shape[a] for a in axes]
    if len(s) != len(axes):
        raise ValueError(f"{name}: shape and axes have different lengths ({len(s)} and "
                         f"{len(axes)})")
    return axes, list(s)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """Discrete cosine transform of type 2 along ``axis`` (``x`` cut or zero-padded to
    ``n`` first); ``norm`` is ``None``/``'backward'`` or ``'ortho'``.

    Examples
    --------
    >>> from absjit.scipy import fft
    >>> r = fft.dct(jnp.array([1., 2., 3.]))
    >>> print(np.round(np.asarray(r), 4))
    [12.     -3.4641  0.    ]
    """
    x = _prepare("dct", x, type, norm)
    axis = operator.index(axis) % x.ndim if -x.ndim <= axis < x.ndim else _bad(axis, x)
    if n is not None:
        x = _resize(x, n, axis)
    return _real_parts(_dct2_real, x, axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """Inverse of :func:`dct` (a scaled DCT of type 3) along ``axis``.

    Examples
    --------
    >>> from absjit.scipy import fft
    >>> r = fft.idct(fft.dct(jnp.array([1., 2., 3.])))
    >>> print(np.round(np.asarray(r), 4))
    [1. 2. 3.]
    """
    x = _prepare("idct", x, type, norm)
    axis = operator.index(axis) % x.ndim if -x.ndim <= axis < x.ndim else _bad(axis, x)
    if n is not None:
        x = _resize(x, n, axis)
    return _real_parts(_idct2_real, x, axis, norm)


def _bad(axis, x):
    raise ValueError(f"axis {axis} is out of bounds for an array of rank {x.ndim}")


def dctn(x, type=2, s=None, axes=None, norm=None):
    """Multidimensional :func:`dct` over ``axes`` (all axes by default), each cut or
    zero-padded to the matching entry of ``s``.

    Examples
    --------
    >>> from absjit.scipy import fft
    >>> fft.dctn(jnp.ones((2, 2)))
    Array([[16.,  0.],
           [ 0.,  0.]], dtype=float32)
    """
    x = _prepare("dctn", x, type, norm)
    axes, s = _axes_and_sizes("dctn", x, s, axes)
    for a, n in zip(axes, s):
        x = _real_parts(_dct2_real, _resize(x, n, a), a, norm)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):
    """Multidimensional :func:`idct` over ``axes`` (all axes by default).

    Examples
    --------
    >>> from absjit.scipy import fft
    >>> r = fft.idctn(fft.dctn(jnp.array([[1., 2.], [3., 4.]])))
    >>> print(np.round(np.asarray(r), 4))
    [[1. 2.]
     [3. 4.]]
    """
    x = _prepare("idctn", x, type, norm)
    axes, s = _axes_and_sizes("idctn", x, s, axes)
    for a, n in zip(axes, s):
        x = _real_parts(_idct2_real, _resize(x, n, a), a, norm)
    return x
