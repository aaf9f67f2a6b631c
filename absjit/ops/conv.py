"""``conv_general_dilated``: N-D convolution (as in XLA, a cross-correlation: the kernel
is not flipped) with strides, padding, lhs/rhs dilation, feature and batch groups.

Layouts are described by :class:`ConvDimensionNumbers`: ``lhs_spec`` is
``(batch, feature, *spatial)`` axis indices of the input, ``rhs_spec`` is
``(out_feature, in_feature, *spatial)`` of the kernel and ``out_spec`` is
``(batch, feature, *spatial)`` of the result. The default is NC[spatial] / OI[spatial].
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..core.avals import ShapedArray
from ..core.dim_assumptions import assume_at_least
from ..core.dims import Dim
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..errors import InconclusiveDimensionError
from ..interpreters import ad, batching
from ._util import same_dtypes

__all__ = ["conv_general_dilated_p", "conv_general_dilated", "conv",
           "conv_with_general_padding", "ConvDimensionNumbers", "conv_dimension_numbers",
           "padtype_to_pads"]


class ConvDimensionNumbers(NamedTuple):
    """Axis indices of (batch, feature, *spatial) for lhs and out, and
    (out_feature, in_feature, *spatial) for rhs."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Normalise ``dimension_numbers`` (None, a ConvDimensionNumbers, or three layout
    strings such as ``('NHWC', 'HWIO', 'NHWC')``) for operands of the given shapes."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError("lax.conv_general_dilated: lhs and rhs must have the same rank, got "
                        f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if nd < 2:
        raise TypeError("lax.conv_general_dilated: operands need rank >= 2 (batch and "
                        f"feature axes), got shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        spec = tuple(range(nd))
        return ConvDimensionNumbers(spec, spec, spec)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        dn = ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
    else:
        try:
            lhs_s, rhs_s, out_s = dimension_numbers
        except (TypeError, ValueError):
            raise TypeError("lax.conv_general_dilated: dimension_numbers must be None, a "
                            "ConvDimensionNumbers or three layout strings, got "
                            f"{dimension_numbers!r}") from None
        if all(isinstance(s, str) for s in (lhs_s, rhs_s, out_s)):
            dn = _specs_from_strings(lhs_s, rhs_s, out_s, nd)
        else:
            dn = ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in (lhs_s, rhs_s, out_s)))
    for name, s in zip(("lhs_spec", "rhs_spec", "out_spec"), dn):
        if sorted(s) != list(range(nd)):
            raise TypeError(f"lax.conv_general_dilated: {name} {s} must be a permutation of "
                            f"range({nd}) for operands of shapes {tuple(lhs_shape)}, "
                            f"{tuple(rhs_shape)}")
    return dn


def _specs_from_strings(lhs_s, rhs_s, out_s, nd):
    where = f"dimension_numbers {(lhs_s, rhs_s, out_s)!r} for operands of rank {nd}"
    for s, need in ((lhs_s, "NC"), (rhs_s, "OI"), (out_s, "NC")):
        if len(s) != nd or len(set(s)) != nd or any(c not in s for c in need):
            raise TypeError(f"lax.conv_general_dilated: bad layout string {s!r} in {where} "
                            f"(needs {nd} distinct letters including {need[0]!r} and "
                            f"{need[1]!r})")
    spatial = [c for c in lhs_s if c not in "NC"]
    for s, skip in ((rhs_s, "OI"), (out_s, "NC")):
        if sorted(c for c in s if c not in skip) != sorted(spatial):
            raise TypeError("lax.conv_general_dilated: spatial letters of the layout "
                            f"strings must match; {where}")
    lhs_spec = (lhs_s.index("N"), lhs_s.index("C")) + tuple(lhs_s.index(c) for c in spatial)
    rhs_spec = (rhs_s.index("O"), rhs_s.index("I")) + tuple(rhs_s.index(c) for c in spatial)
    out_spec = (out_s.index("N"), out_s.index("C")) + tuple(out_s.index(c) for c in spatial)
    return ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)


def _dilate_dim(d: int, rate: int) -> int:
    return 0 if d == 0 else 1 + rate * (d - 1)


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> tuple:
    """Explicit ``(low, high)`` pairs for ``'SAME'``, ``'SAME_LOWER'`` or ``'VALID'``."""
    kind = padding.upper()
    if kind == "VALID":
        return tuple((0, 0) for _ in in_shape)
    if kind in ("SAME", "SAME_LOWER"):
        pads = []
        for n, k, s in zip(in_shape, window_shape, window_strides):
            out = -(-n // s)
            total = max((out - 1) * s + k - n, 0)
            lo = total // 2 if kind == "SAME" else -(-total // 2)
            pads.append((lo, total - lo))
        return tuple(pads)
    raise ValueError(f"lax.conv_general_dilated: unknown padding {padding!r}; expected "
                     "'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs")


# ---------------------------------------------------------------------------
# conv_general_dilated
# ---------------------------------------------------------------------------
conv_general_dilated_p = Primitive(
    "conv_general_dilated",
    param_order=("window_strides", "padding", "lhs_dilation", "rhs_dilation",
                 "dimension_numbers", "feature_group_count", "batch_group_count",
                 "precision", "preferred_element_type"))


def _int_tuple(name, v, n, default=1):
    if v is None:
        return (default,) * n
    try:
        t = tuple(int(i) for i in v)
    except TypeError:
        raise TypeError(f"lax.conv_general_dilated: {name} must be a sequence of "
                        f"{n} ints, got {v!r}") from None
    if len(t) != n:
        raise TypeError(f"lax.conv_general_dilated: {name} {t} must have one entry per "
                        f"spatial dimension ({n})")
    if any(i < 1 for i in t):
        raise ValueError(f"lax.conv_general_dilated: {name} must be positive, got {t}")
    return t


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """General N-D convolution (``absjit.lax.conv_general_dilated``).

    Parameters
    ----------
    lhs, rhs : array_like
        Input and kernel, of one dtype and equal rank.
    window_strides : sequence of int
        Stride per spatial dimension.
    padding : str or sequence of (int, int)
        ``'SAME'``, ``'VALID'``, or explicit ``(low, high)`` pairs (negative crops).
    lhs_dilation, rhs_dilation : sequence of int, optional
        Dilation of the input (transposed convolution) and of the kernel (atrous).
    dimension_numbers : optional
        None (NC[spatial], OI[spatial], NC[spatial]), a :class:`ConvDimensionNumbers`
        or layout strings like ``('NHWC', 'HWIO', 'NHWC')``.
    feature_group_count, batch_group_count : int
        Grouped convolutions.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> x = np.array([1., 2., 1.], np.float32).reshape(1, 1, 3)
    >>> k = np.ones((1, 1, 10), np.float32)
    >>> lax.conv_general_dilated(x, k, (1,), [(9, 9)])[0, 0].shape
    (12,)
    """
    from ..core.trace import get_aval
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    window_strides = _int_tuple("window_strides", window_strides, n)
    lhs_dilation = _int_tuple("lhs_dilation", lhs_dilation, n)
    rhs_dilation = _int_tuple("rhs_dilation", rhs_dilation, n)
    if isinstance(padding, str):
        in_sp = [lhs_shape[i] for i in dn.lhs_spec[2:]]
        k_sp = [_dilate_dim(rhs_shape[i], r) for i, r in zip(dn.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads(in_sp, k_sp, window_strides, padding)
    else:
        try:
            padding = tuple((int(lo), int(hi)) for lo, hi in padding)
        except InconclusiveDimensionError:
            raise  # a padding computed from a size of the ranked level
        except (TypeError, ValueError):
            raise TypeError("lax.conv_general_dilated: padding must be a string or a "
                            f"sequence of (low, high) pairs, got {padding!r}") from None
        if len(padding) != n:
            raise TypeError(f"lax.conv_general_dilated: padding {padding} must have one pair "
                            f"per spatial dimension ({n})")
    pet = None if preferred_element_type is None else \
        dtypes.canonicalize_dtype(np.dtype(preferred_element_type))
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dn,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        precision=None if precision is None else str(precision), preferred_element_type=pet)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution with the default NC[spatial] layout and no dilation (``lax.conv``)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """Convolution with explicit dilations, default layout (``lax``'s name for it)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
                                rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def window_count(size, window, stride):
    """How many windows of ``window`` elements, ``stride`` apart, fit in ``size``
    elements (a convolution's or ``reduce_window``'s output length). At the ranked
    level at least one is assumed to fit, checked at entry."""
    if isinstance(size, Dim) or isinstance(window, Dim):
        assume_at_least(size - window, 0, "a VALID window needs the window to fit")
        return (size - window) // stride + 1
    return (size - window) // stride + 1 if size >= window and window > 0 else 0


def _conv_out_shape(lhs_shape, rhs_shape, window_strides, padding, lhs_dilation,
                    rhs_dilation, dn, batch_group_count):
    """Output shape in out_spec layout."""
    spatial = []
    for li, ri, s, (lo, hi), ld, rd in zip(dn.lhs_spec[2:], dn.rhs_spec[2:], window_strides,
                                         padding, lhs_dilation, rhs_dilation):
        size = _dilate_dim(lhs_shape[li], ld) + lo + hi
        k = _dilate_dim(rhs_shape[ri], rd)
        spatial.append(window_count(size, k, s))
    logical = [lhs_shape[dn.lhs_spec[0]] // batch_group_count, rhs_shape[dn.rhs_spec[0]]]
    logical += spatial
    out = [0] * len(logical)
    for pos, axis in enumerate(dn.out_spec):
        out[axis] = logical[pos]
    return tuple(out)


def _conv_abstract(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    dn = dimension_numbers
    dt = same_dtypes("conv_general_dilated", lhs, rhs)
    if not (dt.kind in "iufc" or dtypes.is_bfloat16(dt)):
        raise TypeError(f"lax.conv_general_dilated does not accept dtype {dt.name}")
    where = (f"lhs shape {tuple(lhs.shape)}, rhs shape {tuple(rhs.shape)}, "
             f"dimension_numbers {tuple(dn)}")
    if lhs.ndim != rhs.ndim:
        raise TypeError(f"lax.conv_general_dilated: lhs and rhs must have equal rank; {where}")
    fgc, bgc = feature_group_count, batch_group_count
    if fgc < 1 or bgc < 1 or (fgc > 1 and bgc > 1):
        raise ValueError("lax.conv_general_dilated: feature_group_count and "
                         "batch_group_count must be positive and at most one of them > 1, "
                         f"got {fgc} and {bgc}")
    n_batch, c_in = lhs.shape[dn.lhs_spec[0]], lhs.shape[dn.lhs_spec[1]]
    c_out, k_in = rhs.shape[dn.rhs_spec[0]], rhs.shape[dn.rhs_spec[1]]
    if c_in != k_in * fgc:
        raise TypeError("lax.conv_general_dilated: lhs feature dimension "
                        f"({c_in}) must equal rhs input-feature dimension ({k_in}) times "
                        f"feature_group_count ({fgc}); {where}")
    if c_out % fgc:
        raise TypeError(f"lax.conv_general_dilated: rhs output-feature dimension ({c_out}) "
                        f"must be a multiple of feature_group_count ({fgc}); {where}")
    if n_batch % bgc or c_out % bgc:
        raise TypeError(f"lax.conv_general_dilated: lhs batch ({n_batch}) and rhs "
                        f"output-feature ({c_out}) dimensions must be multiples of "
                        f"batch_group_count ({bgc}); {where}")
    for li, (lo, hi), ld in zip(dn.lhs_spec[2:], padding, lhs_dilation):
        if _dilate_dim(lhs.shape[li], ld) + lo + hi < 0:
            raise ValueError(f"lax.conv_general_dilated: negative padding {padding} is "
                             "larger than the (dilated) input; " + where)
    shape = _conv_out_shape(lhs.shape, rhs.shape, window_strides, padding, lhs_dilation,
                            rhs_dilation, dn, bgc)
    out_dt = dt if preferred_element_type is None else np.dtype(preferred_element_type)
    return [ShapedArray(shape, out_dt, lhs.weak_type and rhs.weak_type)]


def _dilate_pad(x, lhs_dilation, padding):
    """Insert ``rate - 1`` zeros between elements of each spatial axis (axes 2..), then
    pad (negative padding crops)."""
    n = x.ndim - 2
    if any(r != 1 for r in lhs_dilation):
        shape = x.shape[:2] + tuple(_dilate_dim(d, r) for d, r in zip(x.shape[2:], lhs_dilation))
        y = np.zeros(shape, x.dtype)
        y[(slice(None), slice(None)) + tuple(slice(None, None, r) for r in lhs_dilation)] = x
        x = y
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    if any(p != (0, 0) for p in pos):
        x = np.pad(x, [(0, 0), (0, 0)] + pos)
    crop = tuple(slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0))
                 for i, (lo, hi) in enumerate(padding)) if n else ()
    return x[(slice(None), slice(None)) + crop]


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision,
               preferred_element_type):
    dn = dimension_numbers
    out_dt = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    out_shape = _conv_out_shape(lhs.shape, rhs.shape, window_strides, padding, lhs_dilation,
                                rhs_dilation, dn, batch_group_count)
    # NumPy's einsum has no bfloat16 loop: accumulate in float32 (as XLA does) instead.
    acc_dt = np.dtype(np.float32) if out_dt.kind not in "biufc" else out_dt
    x = np.transpose(lhs, dn.lhs_spec).astype(acc_dt, copy=False)   # N C spatial
    w = np.transpose(rhs, dn.rhs_spec).astype(acc_dt, copy=False)   # O I spatial
    n_sp = x.ndim - 2
    x = _dilate_pad(x, lhs_dilation, padding)
    logical_out = [out_shape[a] for a in dn.out_spec]
    if 0 in logical_out or 0 in w.shape[1:2] or any(d == 0 for d in w.shape[2:]):
        out = np.zeros(logical_out, acc_dt)
    else:
        # Windows over the padded input, at the dilated kernel's extent, every stride.
        ext = tuple(_dilate_dim(k, r) for k, r in zip(w.shape[2:], rhs_dilation))
        win = np.lib.stride_tricks.sliding_window_view(x, ext, axis=tuple(range(2, 2 + n_sp)))
        win = win[(slice(None), slice(None))
                  + tuple(slice(None, None, s) for s in window_strides)
                  + tuple(slice(None, None, r) for r in rhs_dilation)]
        win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in logical_out[2:])]
        nb, c = win.shape[:2]
        fgc, bgc = feature_group_count, batch_group_count
        o = w.shape[0]
        sp = "".join(chr(ord("p") + i) for i in range(n_sp))   # output positions
        kk = "".join(chr(ord("h") + i) for i in range(n_sp))   # kernel offsets
        if bgc > 1:
            # Batch groups: group g of the lhs batch (g-major) feeds output features
            # of group g.
            xw = win.reshape((bgc, nb // bgc, c) + win.shape[2:])
            ww = w.reshape((bgc, o // bgc) + w.shape[1:])
            out = np.einsum(f"gnc{sp}{kk},goc{kk}->ngo{sp}", xw, ww, optimize=True)
            out = out.reshape((nb // bgc, o) + out.shape[3:])
        else:
            xw = win.reshape((nb, fgc, c // fgc) + win.shape[2:])
            ww = w.reshape((fgc, o // fgc) + w.shape[1:])
            out = np.einsum(f"ngc{sp}{kk},goc{kk}->ngo{sp}", xw, ww, optimize=True)
            out = out.reshape((nb, o) + out.shape[3:])
    inv = np.argsort(dn.out_spec)
    return [np.ascontiguousarray(np.transpose(out, inv).astype(out_dt, copy=False))]


abstract_eval_rules[conv_general_dilated_p] = _conv_abstract
impl_rules[conv_general_dilated_p] = _conv_impl


def _conv_jvp(primals, tangents, **params):
    lhs, rhs = primals
    t_lhs, t_rhs = tangents
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    t_out = None
    if t_lhs is not None:
        t_out = conv_general_dilated_p.bind(t_lhs, rhs, **params)
    if t_rhs is not None:
        t = conv_general_dilated_p.bind(lhs, t_rhs, **params)
        t_out = t if t_out is None else ad.add_tangents(t_out, t)
    return [out], [t_out]


ad.jvp_rules[conv_general_dilated_p] = _conv_jvp


# ---------------------------------------------------------------------------
# Batching: fold the vmapped axis into the batch axis (lhs only), the output-feature
# axis (rhs only) or the feature groups (both).
# ---------------------------------------------------------------------------
def _conv_batch(vals, dims, **params):
    from ..core.trace import get_aval
    lhs, rhs = vals
    ld, rd = dims
    dn = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    size = get_aval(lhs).shape[ld] if ld is not None else get_aval(rhs).shape[rd]
    # ``dn`` names axes of the unbatched operands. With the vmapped axis moved to the
    # front, unbatched axis ``a`` sits at ``a + 1``; folding axis 0 into it (vmapped
    # axis major) leaves the unbatched rank, so ``dn`` stays valid unchanged.
    if ld is not None and rd is not None:
        # Each vmapped pair is its own group: feature groups (or batch groups).
        lhs = batching.moveaxis(lhs, ld, 0)
        rhs = _merge_axis(batching.moveaxis(rhs, rd, 0), 0, dn.rhs_spec[0])
        if bgc > 1:
            lhs = _merge_axis(lhs, 0, dn.lhs_spec[0])
            p = dict(params, batch_group_count=bgc * size)
        else:
            lhs = _merge_axis(lhs, 0, dn.lhs_spec[1])
            p = dict(params, feature_group_count=fgc * size)
        out = conv_general_dilated_p.bind(lhs, rhs, **p)
        return [_split_axis(out, dn.out_spec[1], size)], [dn.out_spec[1]]
    if ld is not None:
        lhs = batching.moveaxis(lhs, ld, 0)
        n = dn.lhs_spec[0] + 1
        if bgc > 1:
            # Keep batch groups outermost: (B, .., g*Nb, ..) -> (.., g*B*Nb, ..).
            lhs = _split_axis(lhs, n, bgc)               # g at n, Nb at n + 1
            lhs = _merge_axis(lhs, 0, n)                 # B into Nb
            lhs = _merge_axis(lhs, n - 1, n - 1)         # g into B*Nb
        else:
            lhs = _merge_axis(lhs, 0, n - 1)
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return [_split_axis(out, dn.out_spec[0], size)], [dn.out_spec[0]]
    rhs = batching.moveaxis(rhs, rd, 0)
    o = dn.rhs_spec[0] + 1
    groups = max(fgc, bgc)
    # Output features are group-major; the vmapped axis goes inside each group.
    rhs = _split_axis(rhs, o, groups)                    # g at o, Og at o + 1
    rhs = _merge_axis(rhs, 0, o)                         # B into Og
    rhs = _merge_axis(rhs, o - 1, o - 1)                 # g into B*Og
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    c = dn.out_spec[1]
    if groups == 1:
        return [_split_axis(out, c, size)], [c]
    out = _split_axis(out, c, groups)                    # g at c, B*Og at c + 1
    out = _split_axis(out, c + 1, size)                  # g, B, Og
    out = _merge_axis(out, c, c + 1)                     # g into Og: (B, g*Og)
    return [out], [c]


batching.batch_rules[conv_general_dilated_p] = _conv_batch


# ---------------------------------------------------------------------------
# Transpose: the cotangent of either operand is itself a convolution.
# ---------------------------------------------------------------------------
def _split_axis(x, axis, size):
    """Split ``axis`` into ``(size, rest)``, both at ``axis``/``axis + 1``."""
    from ..core.trace import get_aval
    from . import structural
    shape = list(get_aval(x).shape)
    return structural.reshape(x, tuple(shape[:axis] + [size, shape[axis] // size]
                                       + shape[axis + 1:]))


def _merge_axis(x, src, dst):
    """Merge axis ``src`` into axis ``dst`` (its index once ``src`` is removed), ``src``
    the major part."""
    from ..core.trace import get_aval
    from . import structural
    shape = list(get_aval(x).shape)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    if perm != list(range(len(shape))):
        x = structural.transpose(x, tuple(perm))
    new = [shape[i] for i in range(len(shape)) if i != src]
    new[dst] *= shape[src]
    return structural.reshape(x, tuple(new))


def _swap_first_two(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _conv_transpose_lhs(ct, rhs, lhs_aval, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type):
    # The input gradient is a convolution of the cotangent with the spatially reversed
    # kernel, in/out features swapped; strides and input dilation trade places.
    from ..core.trace import get_aval
    from . import structural
    dn = dimension_numbers
    lhs_shape, rhs_shape = lhs_aval.shape, get_aval(rhs).shape
    ct_shape = get_aval(ct).shape
    fgc = feature_group_count
    if fgc > 1:
        rhs = _merge_axis(_split_axis(rhs, dn.rhs_spec[0], fgc), dn.rhs_spec[0], dn.rhs_spec[1])
    elif batch_group_count > 1:
        rhs = _merge_axis(_split_axis(rhs, dn.rhs_spec[0], batch_group_count),
                          dn.rhs_spec[0], dn.rhs_spec[1])
        fgc = batch_group_count
    pads = []
    for li, ri, oi, s, (lo, _), ld, rd in zip(dn.lhs_spec[2:], dn.rhs_spec[2:],
                                              dn.out_spec[2:], window_strides, padding,
                                              lhs_dilation, rhs_dilation):
        in_d = _dilate_dim(lhs_shape[li], ld)
        k_d = _dilate_dim(rhs_shape[ri], rd)
        out_d = _dilate_dim(ct_shape[oi], s)
        before = k_d - lo - 1
        pads.append((before, in_d + k_d - 1 - out_d - before))
    t_dn = ConvDimensionNumbers(dn.out_spec, _swap_first_two(dn.rhs_spec), dn.lhs_spec)
    rev_rhs = structural.rev(rhs, tuple(dn.rhs_spec[2:])) if dn.rhs_spec[2:] else rhs
    out = conv_general_dilated_p.bind(
        ct, _cast(rev_rhs, get_aval(ct).dtype), window_strides=tuple(lhs_dilation),
        padding=tuple(pads), lhs_dilation=tuple(window_strides),
        rhs_dilation=tuple(rhs_dilation), dimension_numbers=t_dn, feature_group_count=fgc,
        batch_group_count=1, precision=precision, preferred_element_type=None)
    if batch_group_count > 1:
        out = _merge_axis(_split_axis(out, dn.lhs_spec[1], batch_group_count),
                          dn.lhs_spec[1], dn.lhs_spec[0])
    return _cast(out, lhs_aval.dtype)


def _conv_transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type):
    # The kernel gradient correlates the input with the cotangent: batch and feature
    # roles swap, and feature groups become batch groups (and back).
    from ..core.trace import get_aval
    dn = dimension_numbers
    lhs_shape, rhs_shape = get_aval(lhs).shape, rhs_aval.shape
    ct_shape = get_aval(ct).shape
    fgc, bgc = feature_group_count, batch_group_count
    if bgc > 1:
        fgc, bgc = bgc, 1
    elif fgc > 1:
        fgc, bgc = 1, fgc
    pads = []
    for li, ri, oi, s, (lo, _), ld, rd in zip(dn.lhs_spec[2:], dn.rhs_spec[2:],
                                              dn.out_spec[2:], window_strides, padding,
                                              lhs_dilation, rhs_dilation):
        in_d = _dilate_dim(lhs_shape[li], ld)
        k_d = _dilate_dim(rhs_shape[ri], rd)
        out_d = _dilate_dim(ct_shape[oi], s)
        pads.append((lo, (out_d - in_d) + (k_d - lo - 1)))
    t_dn = ConvDimensionNumbers(_swap_first_two(dn.lhs_spec), _swap_first_two(dn.out_spec),
                                _swap_first_two(dn.rhs_spec))
    out = conv_general_dilated_p.bind(
        _cast(lhs, get_aval(ct).dtype), ct, window_strides=tuple(rhs_dilation),
        padding=tuple(pads), lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(window_strides), dimension_numbers=t_dn, feature_group_count=fgc,
        batch_group_count=bgc, precision=precision, preferred_element_type=None)
    return _cast(out, rhs_aval.dtype)


def _cast(x, dtype):
    from ..core.trace import get_aval
    from .elementwise import convert_element_type
    return x if get_aval(x).dtype == dtype else convert_element_type(x, dtype, False)


def _conv_transpose(cts, lhs, rhs, **params):
    (ct,) = cts
    if ct is None:
        return [None, None]
    out = [None, None]
    if ad.is_undefined_primal(lhs):
        out[0] = _conv_transpose_lhs(ct, rhs, lhs.aval, **params)
    if ad.is_undefined_primal(rhs):
        out[1] = _conv_transpose_rhs(ct, lhs, rhs.aval, **params)
    return out


ad.transpose_rules[conv_general_dilated_p] = _conv_transpose
