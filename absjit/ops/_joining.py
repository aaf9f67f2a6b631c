"""Joining absjit values of one dtype: the checks and the ``concatenate`` primitive
behind ``jnp.concatenate`` and ``jnp.stack``.

The public functions (``absjit.numpy._shape``) convert and promote their arguments
first; converting a nested sequence (:mod:`absjit.ops.values`, behind ``jnp.array``)
stacks its tracers with :func:`stack_values`. The error messages name the ``jnp``
functions, the only public ones that reach here.
"""
from __future__ import annotations

import operator

import numpy as np

from ..core.dims import unify, unify_shapes
from ..errors import IncompatibleShapesError
from ..ops import structural as st
from ..ops._util import canonical_axes

__all__ = ["concatenate_values", "stack_values"]


def _shape_of(x):
    return tuple(np.shape(x))


def concatenate_values(arrs, axis):
    """``arrs`` (Arrays or tracers of one dtype) joined along their axis ``axis``."""
    nd = len(_shape_of(arrs[0]))
    if nd == 0:
        raise ValueError("jnp.concatenate: zero-dimensional arrays cannot be concatenated")
    for a in arrs:
        if len(_shape_of(a)) != nd:
            raise ValueError("jnp.concatenate: all arrays must have the same number of "
                             f"dimensions, got shapes {[_shape_of(b) for b in arrs]}")
    ax = canonical_axes("concatenate", operator.index(axis), nd)[0]
    for a in arrs[1:]:
        # the other axes must be equal: at the ranked level that unifies their sizes
        if any(not unify(s, t) for i, (s, t) in
               enumerate(zip(_shape_of(a), _shape_of(arrs[0]))) if i != ax):
            raise IncompatibleShapesError(
                f"jnp.concatenate: array shapes must match except along axis {ax}, got "
                f"{[_shape_of(b) for b in arrs]}")
    return arrs[0] if len(arrs) == 1 else st.concatenate(arrs, ax)


def stack_values(arrs, axis):
    """``arrs`` (same-shaped Arrays or tracers of one dtype) joined along a new axis
    ``axis``."""
    shp = _shape_of(arrs[0])
    for a in arrs[1:]:
        if not unify_shapes(_shape_of(a), shp, "jnp.stack"):
            raise ValueError(f"jnp.stack: all input arrays must have the same shape, got "
                             f"{[_shape_of(b) for b in arrs]}")
    ax = canonical_axes("stack", operator.index(axis), len(shp) + 1)[0]
    return concatenate_values([st.expand_dims(a, (ax,)) for a in arrs], ax)
