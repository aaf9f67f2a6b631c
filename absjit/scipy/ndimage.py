"""``absjit.scipy.ndimage``: interpolation at arbitrary coordinates
(``jax.scipy.ndimage.map_coordinates``), with spline orders 0 and 1."""
from __future__ import annotations

import itertools

from .. import dtypes, lax
from .. import numpy as jnp
from ..numpy._promote import check_arraylike

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _mapped(index, size, mode):
    """``(index into an axis of length size, whether it is inside)`` for ``mode``."""
    if mode == "constant":
        inside = (index >= 0) & (index < size)
        return jnp.clip(index, 0, size - 1), inside
    if mode == "nearest":
        return jnp.clip(index, 0, size - 1), None
    if mode == "wrap":
        return jnp.mod(index, size), None
    if mode == "mirror":
        if size == 1:
            return jnp.zeros_like(index), None
        period = 2 * size - 2
        i = jnp.mod(index, period)
        return jnp.where(i >= size, period - i, i), None
    period = 2 * size                                  # reflect: the edge repeats
    i = jnp.mod(index, period)
    return jnp.where(i >= size, period - 1 - i, i), None


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """Values of ``input`` at the points ``coordinates`` (one array of positions per
    axis of ``input``, all of one shape), by nearest-neighbour (``order=0``) or linear
    (``order=1``) interpolation.

    Outside the array, ``mode`` decides: ``'constant'`` (each missing neighbour counts
    as ``cval``), ``'nearest'``, ``'wrap'`` (periodic), ``'mirror'`` or ``'reflect'``.
    As in JAX, ``order=0`` rounds halves away from zero, ``'wrap'`` is plain periodic
    (SciPy's ``'grid-wrap'``) and integer input gives rounded integer output.

    Examples
    --------
    >>> from absjit.scipy.ndimage import map_coordinates
    >>> map_coordinates(jnp.array([0., 10., 20.]), [jnp.array([0.5, 1.25])], order=1)
    Array([ 5. , 12.5], dtype=float32)
    """
    check_arraylike("map_coordinates", input)
    input = jnp.asarray(input)
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates currently requires order<=1, got "
                                  f"order={order!r}")
    if mode not in _MODES:
        raise NotImplementedError(f"map_coordinates does not support mode {mode!r}; "
                                  f"supported modes are {_MODES}")
    if len(coordinates) != input.ndim:
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input.ndim}")
    check_arraylike("map_coordinates", *coordinates)
    ftype = input.dtype if dtypes.is_inexact(input.dtype) else dtypes.default_float()
    wtype = jnp.zeros((), ftype).real.dtype
    coords = [jnp.asarray(c).astype(wtype) for c in coordinates]
    shape = jnp.broadcast_shapes(*[c.shape for c in coords])
    coords = [jnp.broadcast_to(c, shape) for c in coords]

    # Per axis: the neighbours as (index, inside-or-None, weight-or-None).
    per_axis = []
    for c, size in zip(coords, input.shape):
        if order == 0:
            i = lax.round(c).astype(jnp.int32)
            per_axis.append([(*_mapped(i, size, mode), None)])
        else:
            lo = jnp.floor(c)
            frac = c - lo
            lo = lo.astype(jnp.int32)
            per_axis.append([(*_mapped(lo, size, mode), 1 - frac),
                             (*_mapped(lo + 1, size, mode), frac)])
    cval = jnp.asarray(cval, ftype)
    result = None
    for corner in itertools.product(*per_axis):
        value = input[tuple(i for i, _, _ in corner)].astype(ftype)
        insides = [ok for _, ok, _ in corner if ok is not None]
        if insides:
            value = jnp.where(jnp.all(jnp.stack(insides), axis=0), value, cval)
        for _, _, w in corner:
            if w is not None:
                value = value * w
        result = value if result is None else result + value
    if not dtypes.is_inexact(input.dtype):
        result = lax.round(result)
    return result.astype(input.dtype)
