"""Evenly spaced samples: ``linspace``, ``logspace`` and ``geomspace``.

They take array endpoints and may be traced, so they broadcast and join with
``_shape`` and compute with the ufuncs; ``arange`` and the other creation functions,
which need neither, are in ``_creation``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dims import Dim
from ..core.trace import Tracer
from ..ops import structural as st
from . import _ufuncs as uf
from ._creation import _static_scalar, array
from ._promote import asarray_weak, promote_args_inexact
from ._shape import broadcast_arrays, concatenate, moveaxis

__all__ = ["linspace", "logspace", "geomspace"]


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (inclusive with
    ``endpoint``); ``start``/``stop`` may be arrays (a new ``axis``) and traced.

    Examples
    --------
    >>> jnp.linspace(0, 1, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    symbolic = type(num) is Dim  # ranked: never 1 (unit sizes are static), maybe 0
    if not symbolic:
        num = int(num)
    if not symbolic and num < 0:
        raise ValueError(f"jnp.linspace: number of samples, {num}, must be non-negative")
    out_dt = None if dtype is None else dtypes.user_dtype(dtype)
    start, stop = promote_args_inexact("linspace", start, stop)
    work_dt = start.dtype if hasattr(start, "dtype") else dtypes.default_float()
    if out_dt is not None and dtypes.is_inexact(out_dt):
        work_dt = dtypes.promote_types(work_dt, out_dt)
    out_dt = out_dt or work_dt
    start, stop = broadcast_arrays(array(start, dtype=work_dt), array(stop, dtype=work_dt))
    div = (num - 1) if endpoint else num
    traced = isinstance(start, Tracer) or isinstance(stop, Tracer) or symbolic
    if not traced:
        lo, hi = start._value, stop._value
        res, step = np.linspace(lo.astype(np.float64) if lo.dtype.kind == "f" else lo,
                                hi.astype(np.float64) if hi.dtype.kind == "f" else hi,
                                num, endpoint=endpoint, retstep=True, axis=axis)
        if out_dt.kind in "iu":
            res = np.floor(res)
        out = Array._new(np.asarray(res).astype(out_dt), False)
        step = Array._new(np.asarray(step).astype(work_dt), False)
        return (out, step) if retstep else out
    shp = tuple(np.shape(start))
    positive = symbolic or div > 0  # (a symbolic num is 0 or at least 2)
    step = uf.divide(uf.subtract(stop, start), div) if positive else \
        uf.multiply(uf.subtract(stop, start), np.nan)
    ramp = st.iota(work_dt, (num,) + shp, 0)
    sb = st.broadcast_in_dim(start, (num,) + shp, tuple(range(1, len(shp) + 1)))
    db = st.broadcast_in_dim(step, (num,) + shp, tuple(range(1, len(shp) + 1)))
    out = uf.add(sb, uf.multiply(ramp, db)) if positive else sb  # no NaN step at num <= 1
    if endpoint and symbolic:  # the last sample is ``stop`` exactly (none when num is 0)
        last = st.broadcast_in_dim(stop, (num,) + shp, tuple(range(1, len(shp) + 1)))
        final = uf.subtract(asarray_weak(num.value(), work_dt, False), 1)
        out = uf.where(uf.equal(ramp, final), last, out)
    elif endpoint and num > 1:
        last = st.broadcast_in_dim(stop, (1,) + shp, tuple(range(1, len(shp) + 1)))
        out = concatenate([st.slice_in_dim(out, 0, num - 1, 1, 0), last], 0)
    if out_dt != work_dt:
        out = uf.floor(out) if out_dt.kind in "iu" else out
        out = asarray_weak(out, out_dt, False)
    out = moveaxis(out, 0, axis) if shp else out
    return (out, step) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``.

    Examples
    --------
    >>> jnp.logspace(0, 2, 3)
    Array([  1.,  10., 100.], dtype=float32)
    """
    exps = linspace(start, stop, num, endpoint, dtype=None, axis=axis)
    out = uf.power(asarray_weak(base, exps.dtype, True) if type(base) in (int, float)
                   else base, exps)
    if dtype is not None:
        out = asarray_weak(out, dtypes.user_dtype(dtype), False)
    return out


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (same sign)."""
    lo, hi = _static_scalar(start, "geomspace", "start"), _static_scalar(stop, "geomspace", "stop")
    if lo == 0 or hi == 0:
        raise ValueError("jnp.geomspace: geometric sequence cannot include zero")
    if (lo < 0) != (hi < 0):
        raise ValueError("jnp.geomspace: start and stop must have the same sign")
    sign = -1.0 if lo < 0 else 1.0
    out = uf.multiply(sign, logspace(np.log10(abs(lo)), np.log10(abs(hi)), num, endpoint,
                                     10.0, dtype, axis))
    return asarray_weak(out, out.dtype, False)
