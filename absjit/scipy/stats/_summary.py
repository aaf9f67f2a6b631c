"""Summary statistics of samples: ``sem``, ``rankdata`` and ``mode``, with
``jax.scipy.stats``'s signatures and results. All have static result shapes, so they
trace, batch and compile like any composite.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from ... import dtypes
from ... import lax
from ... import numpy as jnp
from ...core.trace import is_tracer

__all__ = ["sem", "rankdata", "mode", "ModeResult"]


def _arr(a):
    return a if is_tracer(a) else jnp.asarray(a)


def _check_nan_policy(nan_policy, allowed):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"nan_policy must be 'propagate', 'omit' or 'raise', got "
                         f"{nan_policy!r}")
    if nan_policy == "raise":
        raise ValueError("nan_policy='raise' is not supported (it would need the values "
                         "at trace time)")
    if nan_policy not in allowed:
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not "
                                  "implemented")


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, ``std(a, ddof=ddof) / sqrt(n)`` along ``axis``
    (``None``: all elements). With ``nan_policy='omit'`` NaNs are left out of both
    the deviation and the count.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy import stats
    >>> stats.sem(jnp.array([1.0, 2.0, 4.0, 7.0]))
    Array(1.3228756, dtype=float32)
    """
    _check_nan_policy(nan_policy, ("propagate", "omit"))
    a = _arr(a)
    if not dtypes.is_inexact(a.dtype):
        a = a.astype(dtypes.default_float())
    elif a.weak_type:
        a = a.astype(a.dtype)
    if nan_policy == "omit":
        n = jnp.sum(jnp.logical_not(jnp.isnan(a)), axis=axis, keepdims=keepdims)
        std = jnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)
        return std / jnp.sqrt(n.astype(a.dtype))
    n = a.size if axis is None else a.shape[operator.index(axis)]
    std = jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
    return std / jnp.sqrt(jnp.asarray(np.array(n, a.dtype)))


def _rank_last(x, method):
    """Ranks along the last axis (float result)."""
    n = x.shape[-1]
    idx = jnp.arange(n)
    order = jnp.argsort(x, axis=-1, stable=True)
    inv = jnp.argsort(order, axis=-1)  # the sorted position of each element
    if method == "ordinal":
        return (inv + 1).astype(dtypes.default_float())
    s = jnp.take_along_axis(x, order, axis=-1)
    new_group = jnp.concatenate([jnp.ones(x.shape[:-1] + (1,), bool),
                                 s[..., 1:] != s[..., :-1]], axis=-1)
    if method == "dense":
        dense = jnp.cumsum(new_group, axis=-1)
        return jnp.take_along_axis(dense, inv, axis=-1).astype(dtypes.default_float())
    # the first and last sorted positions of each element's group of ties
    first = lax.cummax(jnp.where(new_group, idx, 0), axis=x.ndim - 1)
    ends = jnp.concatenate([new_group[..., 1:], jnp.ones(x.shape[:-1] + (1,), bool)], axis=-1)
    last = lax.cummin(jnp.where(ends, idx, n - 1), axis=x.ndim - 1, reverse=True)
    lo = jnp.take_along_axis(first, inv, axis=-1).astype(dtypes.default_float()) + 1
    hi = jnp.take_along_axis(last, inv, axis=-1).astype(dtypes.default_float()) + 1
    if method == "min":
        return lo
    if method == "max":
        return hi
    return (lo + hi) / 2


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of the data, from 1, as floats (JAX's result type; SciPy gives integers
    for the methods other than ``'average'``). Ties get the mean (``'average'``), the
    lowest (``'min'``) or highest (``'max'``) of their ranks, consecutive ranks
    (``'dense'``) or ranks in order of appearance (``'ordinal'``). ``axis=None``
    ranks the flattened data. With ``nan_policy='propagate'`` a NaN makes every rank
    of its slice NaN.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy import stats
    >>> stats.rankdata(jnp.array([3.0, 1.0, 2.0, 2.0]))
    Array([4. , 1. , 2.5, 2.5], dtype=float32)
    """
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    _check_nan_policy(nan_policy, ("propagate",))
    a = _arr(a)
    if axis is None:
        x = a.ravel()
        ax = 0
    else:
        ax = operator.index(axis) % max(a.ndim, 1)
        x = jnp.moveaxis(a, ax, -1)
    if x.shape[-1] == 0:
        out = jnp.zeros(x.shape, dtypes.default_float())
    else:
        out = _rank_last(x, method)
        if dtypes.is_inexact(a.dtype):
            has_nan = jnp.any(jnp.isnan(x), axis=-1, keepdims=True)
            out = jnp.where(has_nan, jnp.asarray(np.nan, out.dtype), out)
    return out if axis is None else jnp.moveaxis(out, -1, ax)


class ModeResult(NamedTuple):
    """The result of ``mode``: the modal values and how often they occur."""
    mode: object
    count: object


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along ``axis`` (``None``: all elements) and its count;
    among equally common values the smallest. NaNs count as equal to each other, so
    NaN is the mode when it is the most common value (as JAX). Counting compares
    every pair of elements along the axis (``n**2`` work), with static shapes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy import stats
    >>> stats.mode(jnp.array([[1, 2, 2], [3, 3, 1], [1, 2, 3]]))
    ModeResult(mode=Array([1, 2, 1], dtype=int32), count=Array([2, 2, 1], dtype=int32))
    """
    _check_nan_policy(nan_policy, ("propagate",))
    a = _arr(a)
    if axis is None:
        x = a.ravel()
        ax = 0
    else:
        ax = operator.index(axis) % max(a.ndim, 1)
        x = jnp.moveaxis(a, ax, -1) if a.ndim else a.reshape(1)
    if x.shape[-1] == 0:
        raise ValueError("mode of an empty axis is undefined")
    eq = x[..., :, None] == x[..., None, :]
    if dtypes.is_inexact(a.dtype):
        nan = jnp.isnan(x)
        eq = eq | (nan[..., :, None] & nan[..., None, :])
    counts = jnp.sum(eq, axis=-1).astype(dtypes.default_int())
    best = jnp.max(counts, axis=-1, keepdims=True)
    # the smallest value among the most common (sorting puts NaN last)
    order = jnp.argsort(x, axis=-1, stable=True)
    s = jnp.take_along_axis(x, order, axis=-1)
    sc = jnp.take_along_axis(counts, order, axis=-1)
    first = jnp.argmax(sc == best, axis=-1, keepdims=True)
    value = jnp.take_along_axis(s, first, axis=-1)[..., 0]
    count = best[..., 0]
    if keepdims:
        if axis is None:
            shape = (1,) * a.ndim
        else:
            shape = a.shape[:ax] + (1,) + a.shape[ax + 1:] if a.ndim else (1,)
        value, count = value.reshape(shape), count.reshape(shape)
    return ModeResult(value, count)
