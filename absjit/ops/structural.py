"""Structural primitives: broadcasting, reshaping, transposition, slicing, padding,
concatenation, reversal and iota.

Backends turn most of these into index arithmetic or views rather than copies.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules

# ---------------------------------------------------------------------------
# broadcast_in_dim
# ---------------------------------------------------------------------------
broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"lax.broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} "
                        f"must have one entry per operand dimension ({x.ndim})")
    if any(not 0 <= d < len(shape) for d in broadcast_dimensions) or \
            list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(f"lax.broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} "
                        f"must be strictly increasing and within the rank of {shape}")
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] != 1 and x.shape[i] != shape[d]:
            raise TypeError(f"lax.broadcast_in_dim: operand of shape {x.shape} cannot be "
                            f"broadcast to {shape} (dimension {i} has size {x.shape[i]}, "
                            f"target dimension {d} has size {shape[d]})")
    return [ShapedArray(shape, x.dtype, x.weak_type)]


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return [np.broadcast_to(np.reshape(x, expanded), shape)]


abstract_eval_rules[broadcast_in_dim_p] = _broadcast_in_dim_abstract
impl_rules[broadcast_in_dim_p] = _broadcast_in_dim_impl


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast ``x`` to ``shape``; operand dim ``i`` maps to ``broadcast_dimensions[i]``."""
    return broadcast_in_dim_p.bind(x, shape=tuple(int(d) for d in shape),
                                   broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions))


def broadcast(x, sizes):
    """Prepend dimensions of ``sizes`` to ``x`` (``lax.broadcast``)."""
    shape = tuple(sizes) + tuple(np.shape(x))
    nlead = len(sizes)
    return broadcast_in_dim(x, shape, tuple(range(nlead, len(shape))))


# ---------------------------------------------------------------------------
# reshape
# ---------------------------------------------------------------------------
reshape_p = Primitive("reshape")


def _reshape_abstract(x, *, new_sizes, dimensions):
    size = int(np.prod(new_sizes, dtype=np.int64))
    if size != x.size:
        raise TypeError(f"lax.reshape: cannot reshape array of shape {x.shape} (size "
                        f"{x.size}) into shape {tuple(new_sizes)} (size {size})")
    return [ShapedArray(new_sizes, x.dtype, x.weak_type)]


def _reshape_impl(x, *, new_sizes, dimensions):
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return [np.reshape(x, new_sizes)]


abstract_eval_rules[reshape_p] = _reshape_abstract
impl_rules[reshape_p] = _reshape_impl


def reshape(x, new_sizes, dimensions=None):
    """Reshape ``x`` (row-major); ``dimensions`` optionally transposes first."""
    new_sizes = tuple(int(operator_index(d, "reshape")) for d in new_sizes)
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"lax.reshape: sizes must be non-negative, got {new_sizes}")
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    return reshape_p.bind(x, new_sizes=new_sizes, dimensions=dims)


def operator_index(d, where: str):
    """``operator.index(d)``, with a ConcretizationTypeError for abstract tracers."""
    import operator
    try:
        return operator.index(d)
    except TypeError:
        if hasattr(d, "aval"):
            raise
        raise TypeError(f"{where}: expected an integer, got {d!r} of type {type(d).__name__}") from None


__all__ = ["broadcast_in_dim_p", "broadcast_in_dim", "broadcast", "reshape_p", "reshape",
           "operator_index"]
