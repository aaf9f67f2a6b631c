"""Segment reductions (``absjit.ops.segment_sum`` and friends, as ``jax.ops``): rows of
``data`` combined into ``num_segments`` slots named by ``segment_ids``.

Each is one scatter (:mod:`.indexing`) into an array filled with the combiner's
identity, so it needs no rules of its own: autodiff, vmap and every backend come from
the scatter's. On the cpu backend the scatter is one compiled loop over the updates in
order (repeated ids simply fold into the same slot).

Ids outside ``[0, num_segments)`` — negative ones included — are dropped, as in JAX
(``mode="clip"`` clamps them into range instead). ``indices_are_sorted``,
``unique_indices`` and ``bucket_size`` are accepted for JAX compatibility; they change
no result.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.avals import ConcreteArray
from ..core.trace import get_aval, is_tracer, to_numpy
from . import elementwise as ew, indexing, structural

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]

_MODES = (None, "drop", "fill", "promise_in_bounds", "clip")


def _identity(kind, dt):
    dt = np.dtype(dt)
    if kind == "sum":
        return np.zeros((), dt)
    if kind == "prod":
        return np.ones((), dt)
    if dt == np.bool_:
        return np.array(kind == "min")
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return np.array(info.min if kind == "max" else info.max, dt)
    return np.array(-np.inf if kind == "max" else np.inf, dt)


def _known_value(x):
    """The NumPy value of ``x``, or None when it is abstract (a tracer above the
    concrete level)."""
    if is_tracer(x):
        aval = x.aval
        return aval.concrete_value() if isinstance(aval, ConcreteArray) else None
    return to_numpy(x)


def _segment(kind, scatter, data, segment_ids, num_segments, mode):
    name = f"segment_{kind}"
    if not hasattr(data, "shape") or not hasattr(data, "dtype"):
        data = np.asarray(data)
    if not hasattr(segment_ids, "shape") or not hasattr(segment_ids, "dtype"):
        segment_ids = np.asarray(segment_ids)
    daval, iaval = get_aval(data), get_aval(segment_ids)
    if not dtypes.is_integer(iaval.dtype):
        raise TypeError(f"{name}: segment_ids must be an integer array, got dtype "
                        f"{np.dtype(iaval.dtype).name}")
    if daval.dtype.kind == "c" and kind in ("max", "min"):
        raise TypeError(f"{name}: complex data has no order")
    ni = len(iaval.shape)
    if tuple(daval.shape[:ni]) != tuple(iaval.shape):
        raise ValueError(f"{name}: segment_ids of shape {tuple(iaval.shape)} must match the "
                         f"leading dimensions of data of shape {tuple(daval.shape)}")
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {_MODES[1:]} or None, got {mode!r}")
    if num_segments is None:
        ids = _known_value(segment_ids)
        if ids is None:
            raise ValueError(f"{name}: num_segments must be given when segment_ids is not "
                             "known at trace time (under jit, pass num_segments=...)")
        num_segments = int(np.max(ids)) + 1 if np.size(ids) else 0
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError(f"{name}: num_segments must be nonnegative, got {num_segments}")
    shape = (num_segments,) + tuple(daval.shape[ni:])
    init = structural.broadcast_in_dim(_identity(kind, daval.dtype), shape, ())
    if mode == "clip" and num_segments > 0:
        dt = np.dtype(iaval.dtype)
        segment_ids = ew.clamp(np.zeros((), dt), segment_ids,
                               np.array(num_segments - 1, dt))
    return scatter(init, data, [segment_ids], (0,))


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Sum of the rows of ``data`` per segment: ``out[s] = sum(data[i] for i where
    segment_ids[i] == s)``; empty segments are 0.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import ops
    >>> ops.segment_sum(np.array([1., 2., 3.], np.float32), np.array([0, 0, 2]), 3)
    Array([3., 0., 3.], dtype=float32)
    """
    return _segment("sum", indexing.scatter_add, data, segment_ids, num_segments, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """Product of the rows of ``data`` per segment; empty segments are 1.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import ops
    >>> ops.segment_prod(np.array([2., 3., 4.], np.float32), np.array([0, 0, 1]), 2)
    Array([6., 4.], dtype=float32)
    """
    return _segment("prod", indexing.scatter_mul, data, segment_ids, num_segments, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Largest row of ``data`` per segment; empty segments hold the dtype's lowest
    value (``-inf`` for floats).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import ops
    >>> ops.segment_max(np.array([2., 3., 4.], np.float32), np.array([0, 0, 2]), 3)
    Array([  3., -inf,   4.], dtype=float32)
    """
    return _segment("max", indexing.scatter_max, data, segment_ids, num_segments, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Smallest row of ``data`` per segment; empty segments hold the dtype's highest
    value (``inf`` for floats).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import ops
    >>> ops.segment_min(np.array([2., 3., 4.], np.float32), np.array([0, 0, 2]), 3)
    Array([ 2., inf,  4.], dtype=float32)
    """
    return _segment("min", indexing.scatter_min, data, segment_ids, num_segments, mode)
