"""``ravel_pytree``: a pytree of arrays as one flat vector, and back.

Examples
--------
>>> import absjit.numpy as jnp
>>> from absjit.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.zeros(2)})
>>> flat
Array([0., 0., 1., 1., 1., 1.], dtype=float32)
>>> unravel(flat)["w"].shape
(2, 2)
"""
from __future__ import annotations

import numpy as np

from . import dtypes, tree_util

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """Ravel every leaf of ``pytree`` and concatenate them (in ``tree_flatten`` order).

    Returns ``(flat, unravel)``: ``flat`` is a 1-D array of the leaves' promoted dtype
    (float32 zeros of length 0 for a tree without leaves), and ``unravel(v)`` rebuilds
    a pytree of ``pytree``'s structure, shapes and dtypes from a vector like ``flat``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> flat, unravel = ravel_pytree((jnp.arange(3), 2.0))
    >>> flat
    Array([0., 1., 2., 2.], dtype=float32)
    >>> unravel(flat)
    (Array([0, 1, 2], dtype=int32), Array(2., dtype=float32))
    """
    from . import numpy as jnp
    leaves, treedef = tree_util.tree_flatten(pytree)
    leaves = [jnp.asarray(x) for x in leaves]
    shapes = [tuple(x.shape) for x in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    leaf_dtypes = [x.dtype for x in leaves]
    if leaves:
        flat_dtype = jnp.result_type(*leaves)
        flat = jnp.concatenate([jnp.ravel(x).astype(flat_dtype) for x in leaves])
    else:
        flat_dtype = dtypes.default_float()
        flat = jnp.zeros((0,), flat_dtype)
    total = sum(sizes)

    def unravel(vector):
        v = jnp.asarray(vector)
        if tuple(v.shape) != (total,):
            raise ValueError(f"unravel: expected a vector of shape ({total},), got "
                             f"{tuple(v.shape)}")
        if v.dtype != flat_dtype:
            raise TypeError(f"unravel: expected a vector of dtype {np.dtype(flat_dtype)}, "
                            f"got {v.dtype}")
        out, start = [], 0
        for shape, size, dt in zip(shapes, sizes, leaf_dtypes):
            piece = jnp.reshape(v[start:start + size], shape)
            start += size
            if piece.dtype != dt:  # as jax: leaves come back strongly typed
                piece = piece.astype(dt)
            out.append(piece)
        return tree_util.tree_unflatten(treedef, out)

    return flat, unravel
