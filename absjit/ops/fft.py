"""``fft``: the discrete Fourier transform over the trailing axes, as ``lax.fft``.

One primitive with ``fft_type`` in ``FFT``, ``IFFT`` (complex to complex, the inverse
scaled by ``1/n`` as NumPy's), ``RFFT`` (real to the non-negative frequencies) and
``IRFFT`` (its inverse), over the last ``len(fft_lengths)`` axes. The impl is
``numpy.fft``. The transform is linear, so its JVP applies it to the tangent; the DFT
matrix is symmetric, so ``FFT`` and ``IFFT`` transpose to themselves, and ``RFFT`` and
``IRFFT`` transpose through the full transform (with JAX's conventions for complex
cotangents). Batching moves the batch axis in front of the transformed ones.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.avals import ShapedArray
from ..core.dims import is_dim
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, batching

__all__ = ["fft_p", "fft", "FftType"]


class FftType:
    """The four transforms ``lax.fft`` computes."""

    FFT = "FFT"
    IFFT = "IFFT"
    RFFT = "RFFT"
    IRFFT = "IRFFT"


_TYPES = (FftType.FFT, FftType.IFFT, FftType.RFFT, FftType.IRFFT)
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}

fft_p = Primitive("fft", param_order=("fft_type", "fft_lengths"))


def fft(x, fft_type, fft_lengths):
    """The DFT of type ``fft_type`` over the last ``len(fft_lengths)`` axes of ``x``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.fft(jnp.array([1.0, 0.0, 0.0, 0.0], jnp.complex64), "FFT", (4,))
    Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    fft_type = getattr(fft_type, "name", fft_type)
    if isinstance(fft_type, str):
        fft_type = fft_type.upper()
    if fft_type not in _TYPES:
        raise ValueError(f"lax.fft: unknown fft_type {fft_type!r}; use one of {_TYPES}")
    try:
        lengths = tuple(n if is_dim(n) else int(n) for n in fft_lengths)
    except TypeError:
        raise TypeError(f"lax.fft: fft_lengths must be a sequence of ints, got "
                        f"{fft_lengths!r}") from None
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=lengths)


def _fft_abstract(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if not 1 <= k <= 3:
        raise ValueError(f"lax.fft: 1 to 3 transformed axes are supported, got {k}")
    if x.ndim < k:
        raise ValueError(f"lax.fft: an operand of rank {x.ndim} has fewer than {k} axes")
    shape, trailing = tuple(x.shape), tuple(x.shape[x.ndim - k:])
    if fft_type == FftType.RFFT:
        if x.dtype not in _COMPLEX_OF:
            raise TypeError(f"lax.fft: RFFT needs a float32 or float64 operand, got "
                            f"{x.dtype.name}")
        if trailing != fft_lengths:
            raise ValueError(f"lax.fft: RFFT of an operand of shape {shape} needs "
                             f"fft_lengths {trailing}, got {fft_lengths}")
        out = shape[:-1] + (fft_lengths[-1] // 2 + 1,)
        return [ShapedArray(out, _COMPLEX_OF[x.dtype], False)]
    if x.dtype not in _REAL_OF:
        raise TypeError(f"lax.fft: {fft_type} needs a complex64 or complex128 operand, got "
                        f"{x.dtype.name}")
    if fft_type == FftType.IRFFT:
        expected = fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        if trailing != expected:
            raise ValueError(f"lax.fft: IRFFT with fft_lengths {fft_lengths} needs trailing "
                             f"axes {expected}, got an operand of shape {shape}")
        return [ShapedArray(shape[:-1] + (fft_lengths[-1],), _REAL_OF[x.dtype], False)]
    if trailing != fft_lengths:
        raise ValueError(f"lax.fft: {fft_type} of an operand of shape {shape} needs "
                         f"fft_lengths {trailing}, got {fft_lengths}")
    return [ShapedArray(shape, x.dtype, False)]


def _fft_impl(x, *, fft_type, fft_lengths):
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        out = np.fft.fftn(x, axes=axes)
    elif fft_type == FftType.IFFT:
        out = np.fft.ifftn(x, axes=axes)
    elif fft_type == FftType.RFFT:
        out = np.fft.rfftn(x, axes=axes)
    else:
        out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
    return [out]


abstract_eval_rules[fft_p] = _fft_abstract
impl_rules[fft_p] = _fft_impl


def _fft_jvp(primals, tangents, *, fft_type, fft_lengths):
    (x,), (t,) = primals, tangents
    out = fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)
    t_out = None if t is None else fft_p.bind(t, fft_type=fft_type, fft_lengths=fft_lengths)
    return [out], [t_out]


_fft_jvp.symbolic_zeros = True


def _rfft_transpose(ct, fft_lengths):
    """RFFT is ``slice(FFT(complex(x)))``: transpose each piece in reverse order."""
    from . import elementwise as ew
    from . import structural as st
    n = fft_lengths[-1]
    aval = get_aval(ct)
    cfg = [(0, 0, 0)] * len(aval.shape)
    cfg[-1] = (0, n - aval.shape[-1], 0)
    zero = ew.convert_element_type(np.zeros((), aval.dtype), aval.dtype)
    full = st.pad(ct, zero, tuple(cfg))
    return ew.real(fft_p.bind(full, fft_type=FftType.FFT, fft_lengths=fft_lengths))


def _irfft_transpose(ct, fft_lengths):
    """JAX's rule: the RFFT of the cotangent, the doubled non-edge frequencies, the
    ``1/n`` scale, conjugated (JAX's convention for complex cotangents)."""
    from . import elementwise as ew
    from . import structural as st
    x = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    aval = get_aval(x)
    m = aval.shape[-1]
    odd = fft_lengths[-1] % 2
    mask = np.concatenate([np.ones(1), np.full(m - 2 + odd, 2.0), np.ones(1 - odd)])
    scale = mask / math.prod(fft_lengths)
    scale = st.broadcast_in_dim(np.asarray(scale, aval.dtype), tuple(aval.shape),
                                (len(aval.shape) - 1,))
    return ew.conj(ew.mul(x, scale))


def _fft_transpose(cts, x, *, fft_type, fft_lengths):
    ct = cts[0]
    if ct is None:
        return [None]
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


ad.jvp_rules[fft_p] = _fft_jvp
ad.transpose_rules[fft_p] = _fft_transpose


def _fft_batch(vals, dims, *, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    return [fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)], [0]


batching.batch_rules[fft_p] = _fft_batch
