"""``lax.conv_transpose``: a transposed ("fractionally strided") convolution, as a
``conv_general_dilated`` whose *input* is dilated by the strides.

With ``'SAME'`` or ``'VALID'`` padding the explicit padding is chosen so the output
size is ``in * stride`` (``SAME``) or ``in * stride + max(k - stride, 0)`` (``VALID``),
the sizes a convolution with those strides maps back from. ``transpose_kernel=True``
flips the kernel's spatial axes and swaps its input and output channels: the exact
transpose (gradient) of the forward convolution.
"""
from __future__ import annotations

import math

from ..core.trace import get_aval
from ..ops import structural as st
from ..ops.conv import conv_dimension_numbers, conv_general_dilated

__all__ = ["conv_transpose"]

_DEFAULT_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def _padding_for(kernel: int, stride: int, padding: str) -> tuple:
    """Explicit (low, high) padding of the dilated input for one spatial axis."""
    if padding == "SAME":
        total = kernel + stride - 2
        low = kernel - 1 if stride > kernel - 1 else math.ceil(total / 2)
    elif padding == "VALID":
        total = kernel + stride - 2 + max(kernel - stride, 0)
        low = kernel - 1
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or explicit "
                         f"(low, high) pairs, got {padding!r}")
    return low, total - low


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """The transposed convolution of ``lhs`` with the kernel ``rhs``.

    Parameters
    ----------
    lhs, rhs : arrays of equal rank (>= 2)
    strides : sequence of int
        The strides of the forward convolution (the input is dilated by them).
    padding : 'SAME', 'VALID' or a sequence of (low, high) pairs
    rhs_dilation : sequence of int, optional
    dimension_numbers : optional
        Layout strings; default ``('NHWC', 'HWIO', 'NHWC')`` for rank 4 (and the
        matching ones for ranks 2, 3 and 5).
    transpose_kernel : bool
        Flip the kernel spatially and swap its channel axes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> lax.conv_transpose(jnp.ones((1, 2, 2, 1)), jnp.ones((2, 2, 1, 1)), (2, 2),
    ...                    "SAME").shape
    (1, 4, 4, 1)
    """
    lhs_shape, rhs_shape = tuple(get_aval(lhs).shape), tuple(get_aval(rhs).shape)
    nd = len(lhs_shape)
    if len(rhs_shape) != nd or nd < 2:
        raise TypeError(f"conv_transpose: lhs and rhs need equal rank >= 2, got shapes "
                        f"{lhs_shape} and {rhs_shape}")
    if dimension_numbers is None:
        if nd not in _DEFAULT_LAYOUTS:
            raise ValueError(f"conv_transpose: no default layout for rank {nd}; pass "
                             "dimension_numbers")
        dimension_numbers = _DEFAULT_LAYOUTS[nd]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n_spatial = nd - 2
    strides = tuple(int(s) for s in strides)
    if len(strides) != n_spatial:
        raise TypeError(f"conv_transpose: strides {strides} need one entry per spatial "
                        f"axis ({n_spatial})")
    if rhs_dilation is None:
        rhs_dilation = (1,) * n_spatial
    kernel_spatial = [rhs_shape[i] for i in dn.rhs_spec[2:]]
    if isinstance(padding, str):
        eff = [(k - 1) * d + 1 for k, d in zip(kernel_spatial, rhs_dilation)]
        pads = [_padding_for(k, s, padding.upper()) for k, s in zip(eff, strides)]
    else:
        pads = [(int(lo), int(hi)) for lo, hi in padding]
    if transpose_kernel:
        rhs = st.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = perm[i], perm[o]
        rhs = st.transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * n_spatial, pads, lhs_dilation=strides,
                                rhs_dilation=tuple(rhs_dilation), dimension_numbers=dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


