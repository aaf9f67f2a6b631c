"""Counter-based pseudo-random numbers (threefry-2x32), as in ``jax.random``.

A key is a ``uint32[2]`` array; functions are pure: the same key always gives the same
numbers, and ``split`` derives independent keys. Everything is written with
``absjit.numpy`` operations on ``uint32`` words, so random code traces and compiles
like any other code (a key can be a traced argument of a jitted function).

The streams are absjit's own: values differ from JAX's for the same seed (``normal``
uses Box-Muller, ``randint`` reduces bits modulo the range).

Examples
--------
>>> from absjit import random
>>> key = random.PRNGKey(0)
>>> key, sub = random.split(key)
>>> random.normal(sub, (2, 3)).shape
(2, 3)
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from . import numpy as jnp
from .ops.elementwise import rem as _rem
from .ops.structural import broadcast_in_dim as _broadcast_in_dim
from .ops.structural import reshape as _reshape

__all__ = ["PRNGKey", "key", "split", "fold_in", "bits", "uniform", "normal", "randint",
           "bernoulli", "threefry_2x32"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = 0x1BD11BDA  # the Threefry key-schedule constant


def _u32(x):
    return jnp.asarray(x, dtype=jnp.uint32)


def _rotl(x, d: int):
    return jnp.bitwise_or(jnp.left_shift(x, _u32(d)), _logical_right_shift(x, 32 - d))


def _logical_right_shift(x, d: int):
    from .ops.elementwise import shift_right_logical
    return shift_right_logical(x, _u32(d))


def threefry_2x32(k0, k1, x0, x1):
    """The Threefry-2x32 block cipher (20 rounds) on uint32 words; returns two words.

    ``k0, k1`` are scalar key words; ``x0, x1`` are counter arrays of equal shape.
    """
    ks = (k0, k1, jnp.bitwise_xor(jnp.bitwise_xor(k0, k1), _u32(_KEY_PARITY)))
    x0 = x0 + ks[0]
    x1 = x1 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = x0 + x1
            x1 = jnp.bitwise_xor(_rotl(x1, r), x0)
        x0 = x0 + ks[(i + 1) % 3]
        x1 = x1 + ks[(i + 2) % 3] + _u32(i + 1)
    return x0, x1


def _check_key(key):
    if tuple(np.shape(key)) != (2,) or np.dtype(key.dtype) != np.uint32:
        raise TypeError(f"a PRNG key must be a uint32[2] array (from random.PRNGKey), got "
                        f"{getattr(key, 'dtype', type(key))}{tuple(np.shape(key))}")


def _stream(key, n: int, lane: int = 0):
    """``n`` random uint32 words from ``key``; different ``lane`` values give
    independent streams."""
    _check_key(key)
    counters = _u32(np.arange(n, dtype=np.uint32))
    lanes = _u32(np.full(n, lane, dtype=np.uint32))
    out, _ = threefry_2x32(key[0], key[1], counters, lanes)
    return out


def PRNGKey(seed) -> "jnp.ndarray":  # noqa: N802 - JAX's name
    """A key from an integer seed (the high and low 32 bits of the seed)."""
    seed = int(seed)
    return jnp.asarray(np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF],
                                dtype=np.uint32))


key = PRNGKey


def split(key, num: int = 2):
    """``num`` new independent keys, shape ``(num, 2)``."""
    words = _stream(key, 2 * int(num), lane=0x5EED)
    return _reshape(words, (int(num), 2))


def fold_in(key, data):
    """A new key derived from ``key`` and an integer ``data``."""
    _check_key(key)
    d = _broadcast_in_dim(_u32(data), (2,), ())
    out0, _ = threefry_2x32(key[0], key[1], d, _u32(np.array([1, 2], np.uint32)))
    return out0


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def bits(key, shape=()):
    """Raw uint32 random bits of ``shape``."""
    shape = _shape(shape)
    n = int(np.prod(shape, dtype=np.int64))
    return _reshape(_stream(key, n), shape)


def _unit_floats(key, shape, dtype, lane: int):
    """Floats in [0, 1) with 24 (float32) or 53 (float64) random bits."""
    shape = _shape(shape)
    n = int(np.prod(shape, dtype=np.int64))
    dt = dtypes.canonicalize_dtype(dtypes.check_user_dtype(dtype))
    if not dtypes.is_float(dt):
        raise TypeError(f"random floats need a floating dtype, got {dt}")
    hi = _stream(key, n, lane)
    if dt == np.float64:
        lo = _stream(key, n, lane + 1)
        top = _logical_right_shift(hi, 5).astype(dt)
        bottom = _logical_right_shift(lo, 6).astype(dt)
        u = (top * 67108864.0 + bottom) * (1.0 / 9007199254740992.0)
    else:
        u = (_logical_right_shift(hi, 8).astype(np.float32) * np.float32(1.0 / 16777216.0))
        u = u.astype(dt)
    return _reshape(u, shape)


def uniform(key, shape=(), dtype=np.float32, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)``."""
    u = _unit_floats(key, shape, dtype, lane=1)
    return u * (jnp.asarray(maxval, u.dtype) - jnp.asarray(minval, u.dtype)) + \
        jnp.asarray(minval, u.dtype)


def normal(key, shape=(), dtype=np.float32):
    """Standard normal floats (Box-Muller on two independent uniform streams)."""
    u1 = _unit_floats(key, shape, dtype, lane=3)
    u2 = _unit_floats(key, shape, dtype, lane=5)
    radius = jnp.sqrt(-2.0 * jnp.log1p(-u1))  # log1p(-u) is finite: u < 1
    return (radius * jnp.cos((2.0 * np.pi) * u2)).astype(u1.dtype)


def randint(key, shape, minval, maxval, dtype=np.int32):
    """Integers in ``[minval, maxval)`` (``maxval > minval``, static bounds)."""
    shape = _shape(shape)
    minval, maxval = int(minval), int(maxval)
    if maxval <= minval:
        raise ValueError(f"randint needs maxval > minval, got [{minval}, {maxval})")
    span = maxval - minval
    if span > 0xFFFFFFFF:
        raise ValueError("randint range must fit in 32 bits")
    raw = bits(key, shape)
    dt = dtypes.canonicalize_dtype(dtypes.check_user_dtype(dtype))
    offset = _rem(raw, _u32(span))
    return (offset.astype(np.int64 if dtypes.canonicalize_dtype(np.int64) == np.int64
                          else np.uint32).astype(dt) + jnp.asarray(minval, dt)).astype(dt)


def bernoulli(key, p=0.5, shape=()):
    """Booleans that are True with probability ``p``."""
    return uniform(key, shape) < p
