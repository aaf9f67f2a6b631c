"""``dot_product_attention``: scaled dot-product attention as ``jax.nn`` defines it
(its ``'xla'`` implementation), written with ``absjit.numpy``: two ``einsum`` calls
around a masked softmax, so it traces, differentiates, batches and compiles like user
code.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from .. import numpy as jnp
from ..core.trace import is_tracer
from ._functions import softmax

__all__ = ["dot_product_attention"]


def _arr(x):
    return x if is_tracer(x) else jnp.asarray(x)


def _window(local_window_size):
    if local_window_size is None:
        return None
    if isinstance(local_window_size, (tuple, list)):
        if len(local_window_size) != 2:
            raise ValueError("local_window_size must be an int or a pair (left, right), "
                             f"got {local_window_size!r}")
        left, right = (operator.index(w) for w in local_window_size)
    else:
        left = right = operator.index(local_window_size)
    if left < 0 or right < 0:
        raise ValueError(f"local_window_size must be non-negative, got {local_window_size!r}")
    return left, right


def _positions_mask(T, S, is_causal, window):
    """A ``(T, S)`` boolean mask of the key positions each query may see, or None."""
    if not is_causal and window is None:
        return None
    t = jnp.arange(T)[:, None]
    s = jnp.arange(S)[None, :]
    ok = jnp.ones((T, S), bool)
    if is_causal:
        ok = ok & (s <= t)
    if window is not None:
        left, right = window
        ok = ok & (s >= t - left) & (s <= t + right)
    return ok


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """Scaled dot-product attention, ``softmax(scale * Q K^T + bias) V``, as
    ``jax.nn.dot_product_attention``.

    Parameters
    ----------
    query : array ``(B, T, N, H)`` or ``(T, N, H)``
    key, value : arrays ``(B, S, K, H)`` or ``(S, K, H)``
        ``N`` must be a multiple of ``K`` (grouped-query attention: each group of
        ``N // K`` consecutive query heads shares one key/value head).
    bias : array, optional
        Added to the logits; broadcasts to ``(B, N, T, S)``.
    mask : bool array, optional
        Broadcasts to ``(B, N, T, S)``; False entries are excluded from the softmax.
    scale : float, optional
        Default ``1 / sqrt(H)``.
    is_causal : bool
        Query ``t`` sees only keys ``s <= t``.
    query_seq_lengths, key_value_seq_lengths : int arrays ``(B,)``, optional
        Valid lengths of each sequence: keys beyond the length are excluded, and
        outputs for queries beyond it are 0.
    local_window_size : int or (int, int), optional
        Query ``t`` sees only keys with ``t - left <= s <= t + right``.
    implementation : None or 'xla'
        Both run the same composite (cuDNN's fused kernel is not available).
    return_residual : bool
        Only False is supported.

    Returns
    -------
    array with the shape and dtype of ``query``

    Notes
    -----
    As in JAX, excluded logits are set to a large finite negative number, so a query
    whose keys are all excluded averages all values uniformly; the softmax runs in
    float32 for lower-precision inputs.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> q = jnp.ones((1, 2, 1, 4))
    >>> v = jnp.arange(8.0).reshape(1, 2, 1, 4)
    >>> nn.dot_product_attention(q, q, v, is_causal=True)[0, :, 0]
    Array([[0., 1., 2., 3.],
           [2., 3., 4., 5.]], dtype=float32)
    """
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise RuntimeError("dot_product_attention: implementation='cudnn' needs cuDNN, "
                               "which absjit does not use; use implementation=None or 'xla'")
        raise ValueError(f"Unsupported implementation option: {implementation}")
    if return_residual:
        raise NotImplementedError("dot_product_attention: return_residual=True is not "
                                  "supported")
    query, key, value = _arr(query), _arr(key), _arr(value)
    rank = query.ndim
    if rank not in (3, 4) or key.ndim != rank or value.ndim != rank:
        raise ValueError("dot_product_attention: query, key and value must all be rank 4 "
                         "(B, T, N, H) or all rank 3 (T, N, H), got shapes "
                         f"{query.shape}, {key.shape}, {value.shape}")
    if rank == 3:
        query, key, value = query[None], key[None], value[None]
    B, T, N, H = query.shape
    _, S, K, Hk = key.shape
    if Hk != H or key.shape[0] != B:
        raise ValueError(f"key shape should be [{B}, S, K, {H}], got {key.shape}")
    if tuple(value.shape) != tuple(key.shape):
        raise ValueError(f"value shape should be {list(key.shape)}: but got "
                         f"{tuple(value.shape)}")
    if N % K:
        raise ValueError("The number of query heads must be a multiple of key/value "
                         f"heads, but got {N} vs {K}")
    for name, x in (("key", key), ("value", value)):
        if x.dtype != query.dtype:
            raise ValueError(f"dot_product_attention: {name} dtype {x.dtype} differs from "
                             f"query dtype {query.dtype}")
    if not dtypes.is_float(query.dtype):
        raise ValueError(f"dot_product_attention: inputs must be floating, got {query.dtype}")
    dt = query.dtype
    G = N // K
    scale = 1.0 / np.sqrt(H) if scale is None else scale

    def full(x):  # a bias or mask, broadcast to (B, K, G, T, S)
        x = jnp.broadcast_to(x if rank == 4 or x.ndim < 4 else x[None], (B, N, T, S))
        return x.reshape(B, K, G, T, S)

    logits = jnp.einsum("btkgh,bskh->bkgts", query.reshape(B, T, K, G, H), key)
    logits = logits * jnp.asarray(np.array(scale, dt))
    if bias is not None:
        logits = logits + full(_arr(bias)).astype(dt)

    masks = []
    if mask is not None:
        mask = _arr(mask)
        if mask.dtype != np.bool_:
            raise ValueError(f"mask dtype should be bool, but got {mask.dtype}")
        masks.append(full(mask))
    pos = _positions_mask(T, S, is_causal, _window(local_window_size))
    if pos is not None:
        masks.append(pos)
    if query_seq_lengths is not None:
        q_ok = jnp.arange(T)[None, :] < _arr(query_seq_lengths).reshape(B, 1)
        masks.append(q_ok[:, None, None, :, None])
    if key_value_seq_lengths is not None:
        kv_ok = jnp.arange(S)[None, :] < _arr(key_value_seq_lengths).reshape(B, 1)
        masks.append(kv_ok[:, None, None, None, :])
    if masks:
        keep = masks[0]
        for m in masks[1:]:
            keep = keep & m
        big_negative = np.array(-0.7 * float(jnp.finfo(dt).max), dt)
        logits = jnp.where(keep, logits, big_negative)

    low = np.dtype(dt).itemsize < 4
    probs = softmax(logits.astype(np.float32) if low else logits, axis=-1).astype(dt)
    out = jnp.einsum("bkgts,bskh->btkgh", probs, value).reshape(B, T, N, H)
    if query_seq_lengths is not None:
        q_ok = jnp.arange(T)[None, :] < _arr(query_seq_lengths).reshape(B, 1)
        out = jnp.where(q_ok[:, :, None, None], out, jnp.zeros((), dt))
    return out[0] if rank == 3 else out

