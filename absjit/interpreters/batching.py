"""Batching (``vmap``): rule table and helpers for defining rules.

``batch_rules[p](vals, dims, **params) -> (vals_out, dims_out)``
    ``vals`` are the batched operands; ``dims[i]`` is the batch axis of ``vals[i]`` or
    ``None`` when that operand is not batched. Returns lists.

Helpers: :func:`defvectorized` (unary elementwise: the batch axis passes through) and
:func:`defbroadcasting` (n-ary elementwise: batch axes are moved to 0 and unbatched
non-scalar operands are broadcast).
"""
from __future__ import annotations

__all__ = ["batch_rules", "not_mapped", "moveaxis", "bdim_at_front", "defvectorized",
           "defbroadcasting"]

batch_rules: dict = {}
not_mapped = None


def moveaxis(x, src: int, dst: int):
    """Move axis ``src`` of ``x`` to ``dst`` with a ``transpose`` primitive."""
    import numpy as np
    from ..core.trace import get_aval
    ndim = len(get_aval(x).shape)
    src, dst = src % ndim, dst % ndim
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    from ..ops import structural
    return structural.transpose(x, tuple(int(p) for p in perm)) if hasattr(structural, "transpose") \
        else np.moveaxis(x, src, dst)


def bdim_at_front(x, bdim, size: int):
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast to ``size``."""
    from ..core.trace import get_aval
    from ..ops import structural
    if bdim is None:
        shape = get_aval(x).shape
        return structural.broadcast_in_dim(x, (size,) + tuple(shape),
                                           tuple(range(1, len(shape) + 1)))
    return moveaxis(x, bdim, 0)


def defvectorized(primitive):
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        return [primitive.bind(x, **params)], [d]
    rule.__name__ = f"{primitive.name}_batch"
    batch_rules[primitive] = rule
    return rule


def defbroadcasting(primitive):
    def rule(vals, dims, **params):
        from ..core.trace import get_aval
        size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
        out_rank = max(len(get_aval(v).shape) - (d is not None) for v, d in zip(vals, dims))
        moved = []
        for v, d in zip(vals, dims):
            rank = len(get_aval(v).shape) - (d is not None)
            if d is None and rank == 0:
                moved.append(v)  # rank-0 operands broadcast for free
            elif d is None or rank < out_rank:
                moved.append(bdim_at_front(v, d, size))
            else:
                moved.append(moveaxis(v, d, 0))
        return [primitive.bind(*moved, **params)], [0]
    rule.__name__ = f"{primitive.name}_batch"
    batch_rules[primitive] = rule
    return rule
