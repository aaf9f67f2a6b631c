"""``jnp.pad``: every NumPy mode, axis by axis (as NumPy does, so corners match).

Index modes (``edge``, ``wrap``, ``reflect``/``symmetric`` with ``reflect_type="even"``)
gather with source indices that NumPy itself computes on ``arange(n)``; the ``odd``
reflections are linear in the data, so they apply the matrix NumPy's padding makes of
the identity. Statistic modes (``maximum``, ``minimum``, ``mean``, ``median``) and
``linear_ramp`` broadcast one value per side; ``constant`` and ``empty`` concatenate
filled blocks.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..core.dim_assumptions import assume_at_least
from ..core.dims import Dim
from ..ops import elementwise as ew
from . import _reductions as red
from ._creation import arange, asarray, full
from ._indexing import getitem, size_value
from ._linalg import tensordot
from ._promote import check_arraylike
from ._shape import broadcast_to, concatenate, moveaxis, take
from ._sorting import median
from ._ufuncs import floor, round as _round

__all__ = ["pad"]

_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
          "reflect", "symmetric", "wrap", "empty")


def _pairs(name, value, ndim, cast=operator.index):
    """``value`` broadcast to one ``(before, after)`` pair per axis."""
    raw = np.asarray(value, dtype=object)
    if raw.ndim > 2 or (raw.ndim == 2 and raw.shape[1] != 2):
        raise ValueError(f"pad: {name} {value!r} must be a scalar, a pair or one pair per "
                         f"axis")
    try:
        b = np.broadcast_to(raw, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: {name} {value!r} cannot be broadcast to {ndim} (before, "
                         "after) pairs") from None
    try:
        return [(cast(lo), cast(hi)) for lo, hi in b]
    except TypeError:
        raise TypeError(f"pad: {name} must hold integers, got {value!r}") from None


def _value_pairs(name, value, ndim):
    """Like :func:`_pairs` for fill values, which may be arrays or traced."""
    def is_array(v):
        return hasattr(v, "shape") and not isinstance(v, (np.ndarray, np.generic))
    if is_array(value):
        v = asarray(value)
        if v.ndim == 0:
            return [(v, v)] * ndim
        try:
            v = broadcast_to(v, (ndim, 2))
        except ValueError:
            raise ValueError(f"pad: {name} of shape {v.shape} cannot be broadcast to "
                             f"{ndim} (before, after) pairs") from None
        return [(v[i, 0], v[i, 1]) for i in range(ndim)]
    if isinstance(value, (list, tuple)) and any(
            is_array(e) or isinstance(e, (list, tuple)) and any(is_array(f) for f in e)
            for e in value):
        entries = list(value)
        if all(not isinstance(e, (list, tuple)) for e in entries):
            if len(entries) == 1:
                entries = [entries[0], entries[0]]
            if len(entries) != 2:
                raise ValueError(f"pad: {name} must be a scalar, a pair or one pair per axis")
            return [tuple(entries)] * ndim
        if len(entries) == 1:
            entries = entries * ndim
        if len(entries) != ndim:
            raise ValueError(f"pad: {name} needs one (before, after) pair per axis ({ndim})")
        out = []
        for e in entries:
            e = list(e) if isinstance(e, (list, tuple)) else [e]
            out.append((e[0], e[0]) if len(e) == 1 else tuple(e))
        return out
    return _pairs(name, value, ndim, cast=lambda v: v)


def _slice(x, axis, start, stop):
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop)
    return getitem(x, tuple(idx))


def _block(x, axis, width, value):
    shape = list(x.shape)
    shape[axis] = width
    return broadcast_to(asarray(value, x.dtype), tuple(shape)) if hasattr(value, "shape") \
        else full(tuple(shape), value, x.dtype)


def _stat(x, axis, side, length, mode):
    n = x.shape[axis]
    length = n if length is None else min(length, n)
    part = _slice(x, axis, 0, length) if side == 0 else _slice(x, axis, n - length, n)
    if mode == "maximum":
        return red.max(part, axis=axis, keepdims=True)
    if mode == "minimum":
        return red.min(part, axis=axis, keepdims=True)
    if mode == "mean":
        v = red.mean(part, axis=axis, keepdims=True)
    else:
        v = median(part, axis=axis, keepdims=True)
    if not dtypes.is_inexact(x.dtype):
        v = _round(v)
    return v.astype(x.dtype)


def _ramp(x, axis, side, width, end):
    """``linspace(end, edge, width, endpoint=False)`` toward the edge, per position."""
    n = x.shape[axis]
    edge = _slice(x, axis, 0, 1) if side == 0 else _slice(x, axis, n - 1, n)
    shape = [1] * x.ndim
    shape[axis] = width
    k = arange(width, dtype=dtypes.default_float()).reshape(shape)
    if side == 1:
        k = k[(slice(None),) * axis + (slice(None, None, -1),)]
    edge_f = edge.astype(dtypes.default_float()) if not dtypes.is_inexact(x.dtype) else edge
    vals = end + k * ((edge_f - end) / width)  # numpy.linspace's formula
    if dtypes.is_integer(x.dtype):  # numpy.linspace rounds down for integer dtypes
        vals = floor(vals)
    return vals.astype(x.dtype)


def _index_mode(x, axis, before, after, mode, reflect_type):
    n = x.shape[axis]
    np_mode = {"edge": "edge", "wrap": "wrap", "reflect": "reflect",
               "symmetric": "symmetric"}[mode]
    if mode in ("reflect", "symmetric") and reflect_type == "odd":
        m = np.pad(np.eye(n), ((before, after), (0, 0)), np_mode, reflect_type="odd")
        moved = moveaxis(x, axis, 0)
        wide = dtypes.default_float() if not dtypes.is_inexact(x.dtype) else x.dtype
        out = tensordot(asarray(m, wide), moved.astype(wide), axes=1)
        if not dtypes.is_inexact(x.dtype):
            out = _round(out)
        return moveaxis(out.astype(x.dtype), 0, axis)
    if type(n) is Dim:
        return take(x, _symbolic_pad_index(n, before, after, mode), axis=axis)
    idx = np.pad(np.arange(n), (before, after), np_mode)
    return take(x, asarray(idx.astype(np.int32)), axis=axis)


def _symbolic_pad_index(n, before, after, mode):
    """The source positions of an index-mode pad (``edge``, ``wrap``, even ``reflect`` /
    ``symmetric``) of a symbolic size ``n`` (ranked level), computed in the program;
    ``n`` is assumed at least 1. The reflections are periodic in the position: period
    ``2n - 2`` (``reflect``, which does not repeat the edge; 1 when ``n == 1``) or ``2n``
    (``symmetric``), mirrored in each period's second half."""
    assume_at_least(n, 1, f"pad mode {mode!r} needs a non-empty axis")
    dt = np.dtype(np.int32)

    def const(v):
        return asarray(np.int32(v))

    pos = ew.sub(arange(n + before + after, dtype=dt), const(before))
    if mode == "edge":
        last = size_value(n - 1, dt)
        return ew.min(ew.max(pos, const(0)), last)

    def wrapped(period):  # pos mod period, in [0, period)
        return ew.rem(ew.add(ew.rem(pos, period), period), period)

    if mode == "wrap":
        return wrapped(size_value(n, dt))
    size = size_value(n, dt)
    if mode == "reflect":
        period = ew.max(size_value(2 * n - 2, dt), const(1))
        m = wrapped(period)
        mirrored = ew.sub(period, m)
    else:
        period = size_value(2 * n, dt)
        m = wrapped(period)
        mirrored = ew.sub(ew.sub(period, const(1)), m)
    return ew.select_n(ew.lt(m, size), mirrored, m)


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array, as ``numpy.pad``.

    Parameters
    ----------
    array : array_like
    pad_width : int, (before, after) or one (before, after) per axis
        Concrete non-negative integers.
    mode : str
        ``constant`` (``constant_values``), ``edge``, ``linear_ramp`` (``end_values``),
        ``maximum``/``mean``/``median``/``minimum`` (``stat_length``), ``reflect`` /
        ``symmetric`` (``reflect_type``: ``"even"`` or ``"odd"``), ``wrap``, ``empty``
        (absjit fills it with zeros).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.pad(jnp.array([1, 2, 3]), (2, 1), mode="reflect")
    Array([3, 2, 1, 2, 3, 2], dtype=int32)
    """
    check_arraylike("pad", array)
    x = asarray(array)
    if callable(mode):
        raise NotImplementedError("pad: a callable mode is not supported")
    if mode not in _MODES:
        raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad; use one of "
                         f"{', '.join(_MODES)}")
    allowed = {"constant": {"constant_values"}, "linear_ramp": {"end_values"},
               "maximum": {"stat_length"}, "mean": {"stat_length"},
               "median": {"stat_length"}, "minimum": {"stat_length"},
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}.get(mode, set())
    unexpected = set(kwargs) - allowed
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': "
                         f"{sorted(unexpected)}")
    widths = _pairs("pad_width", pad_width, x.ndim)
    if any(w < 0 for pair in widths for w in pair):
        raise ValueError(f"index can't contain negative values; got pad_width {pad_width!r}")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    if mode in ("constant", "empty"):
        values = _value_pairs("constant_values", kwargs.get("constant_values", 0), x.ndim) \
            if mode == "constant" else [(0, 0)] * x.ndim
    elif mode == "linear_ramp":
        values = _value_pairs("end_values", kwargs.get("end_values", 0), x.ndim)
    stat = kwargs.get("stat_length")
    stat_pairs = _pairs("stat_length", stat, x.ndim) if stat is not None \
        else [(None, None)] * x.ndim
    if any(s is not None and s <= 0 for pair in stat_pairs for s in pair):
        raise ValueError(f"pad: stat_length must be positive, got {stat!r}")
    for axis, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        n = x.shape[axis]
        if n == 0 and mode not in ("constant", "empty"):
            raise ValueError(f"can't extend empty axis {axis} using modes other than "
                             "'constant' or 'empty'")
        if mode in ("constant", "empty"):
            lo, hi = values[axis]
            x = concatenate([_block(x, axis, before, lo), x, _block(x, axis, after, hi)], axis)
        elif mode in ("edge", "wrap", "reflect", "symmetric"):
            x = _index_mode(x, axis, before, after, mode, reflect_type)
        elif mode == "linear_ramp":
            lo, hi = values[axis]
            parts = [x]
            if before:
                parts.insert(0, _ramp(x, axis, 0, before, lo))
            if after:
                parts.append(_ramp(x, axis, 1, after, hi))
            x = concatenate(parts, axis)
        else:
            s_lo, s_hi = stat_pairs[axis]
            lo = _stat(x, axis, 0, s_lo, mode)
            hi = _stat(x, axis, 1, s_hi, mode)
            x = concatenate([_block(x, axis, before, lo), x, _block(x, axis, after, hi)], axis)
    return x
