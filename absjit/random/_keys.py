"""Keys and raw bits: the threefry-2x32 hash, ``PRNGKey``/``key``, ``split``,
``fold_in``, ``bits``, ``key_data``/``wrap_key_data``/``key_impl``.

These reproduce JAX's default PRNG (``jax_default_prng_impl = "threefry2x32"``) with
``jax_threefry_partitionable = True``, JAX's default since 0.5 and in JAX 0.10: the
counter of element ``i`` of an output of shape ``s`` is the 64-bit flat index ``i``
split into (high, low) 32-bit words, and 32 random bits are ``hash_hi ^ hash_lo``.

Keys come in JAX's two forms: a raw ``uint32[2]`` array (``PRNGKey``) and a typed key
array of dtype ``key<fry>`` (``key``, ``wrap_key_data``; see ``_keyarray``). Every
function accepts both and ``split``/``fold_in`` return the form they were given. The
hash is one elementwise primitive (``absjit.ops.threefry``) and everything else
``lax`` ``uint32`` operations, so it traces, batches (``vmap``), compiles into one
fused loop and has zero tangents under ``grad`` like any integer computation.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..core.dim_assumptions import assume_at_least
from ..core.dims import is_dim
from ..core.shapes import size_of
from ..core.trace import get_aval, is_tracer
from ..ops.threefry import threefry2x32_p
from ._keyarray import THREEFRY, KeyArray

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in",
           "bits", "threefry_2x32"]

_U32 = np.dtype(np.uint32)


def _u32(x):
    return jnp.asarray(np.asarray(x, dtype=np.uint32))


def _uint32_operands(*vals):
    vals = [v if is_tracer(v) else jnp.asarray(v) for v in vals]
    if any(get_aval(v).dtype != _U32 for v in vals):
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got "
                        f"{[get_aval(a).dtype.name for a in vals]}")
    return vals


def threefry_2x32(k0, k1, x0, x1):
    """The Threefry-2x32 block cipher (20 rounds) on ``uint32`` words.

    ``k0, k1`` are the two key words (rank 0); ``x0, x1`` the two counter words
    (arrays of one shape). Returns the two hashed words.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import random
    >>> y0, y1 = random.threefry_2x32(np.uint32(0), np.uint32(0), np.zeros(1, np.uint32),
    ...                               np.zeros(1, np.uint32))
    >>> hex(int(y0[0])), hex(int(y1[0]))
    ('0x6b200159', '0x99ba4efe')
    """
    k0, k1, x0, x1 = _uint32_operands(k0, k1, x0, x1)
    return (threefry2x32_p.bind(k0, k1, x0, x1, output="x0"),
            threefry2x32_p.bind(k0, k1, x0, x1, output="x1"))


# ---------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------
_KEY_HELP = ("a PRNG key is a typed key made by random.key(seed) or a uint32[2] array "
             "made by random.PRNGKey(seed) (or split/fold_in of one)")


def check_key(name: str, key):
    """The ``uint32[2]`` words of one key (typed or raw), or a ``TypeError`` saying
    what a key is."""
    if isinstance(key, KeyArray):
        if key.shape != ():
            raise TypeError(f"random.{name} accepts a single key, but was given a key array "
                            f"of shape {key.shape} != (). Use absjit.vmap for batching.")
        return key._data
    if isinstance(key, (bool, int, float, complex)) or key is None:
        raise TypeError(f"random.{name}: {_KEY_HELP}; got {type(key).__name__} {key!r}")
    try:
        arr = jnp.asarray(key) if not is_tracer(key) else key
        aval = get_aval(arr)
    except Exception:
        raise TypeError(f"random.{name}: {_KEY_HELP}; got {type(key).__name__}") from None
    if aval.shape != (2,) or aval.dtype != _U32:
        extra = (" (a batch of keys: use absjit.vmap over the leading axis)"
                 if aval.dtype == _U32 and aval.shape[-1:] == (2,) and len(aval.shape) > 1
                 else "")
        raise TypeError(f"random.{name}: {_KEY_HELP}; got {aval.dtype.name}"
                        f"{list(aval.shape)}{extra}")
    return arr


def PRNGKey(seed) -> jnp.ndarray:  # noqa: N802 - JAX's name
    """A PRNG key from an integer seed, bit for bit as ``jax.random.PRNGKey``.

    The key is ``[seed >> 32, seed & 0xFFFFFFFF]`` as ``uint32`` words of a 64-bit
    seed; a 32-bit (or narrower) seed has a zero high word. Without ``enable_x64``
    a Python int is taken modulo ``2**32``, as JAX does. ``seed`` may be traced (an
    integer scalar argument of ``jit``/``vmap``).

    Examples
    --------
    >>> from absjit import random
    >>> random.PRNGKey(42)
    Array([ 0, 42], dtype=uint32)
    """
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"PRNGKey seed must be an integer; got bool {seed!r}")
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, np.ndarray):
        s = int(seed)
        wide = dtypes.canonicalize_dtype(np.int64) == np.int64 or (
            isinstance(seed, np.integer) and np.dtype(type(seed)).itemsize == 8)
        hi = (s >> 32) & 0xFFFFFFFF if wide else 0
        return jnp.asarray(np.array([hi, s & 0xFFFFFFFF], dtype=np.uint32))
    if isinstance(seed, (float, complex)):
        raise TypeError(f"PRNGKey seed must be an integer; got {type(seed).__name__} "
                        f"{seed!r}")
    seed = seed if is_tracer(seed) else jnp.asarray(seed)
    aval = get_aval(seed)
    if aval.shape != ():
        raise TypeError(f"PRNGKey accepts a scalar seed, but was given an array of shape "
                        f"{aval.shape} != (). Use absjit.vmap for batching")
    if not dtypes.is_integer(aval.dtype):
        raise TypeError(f"PRNGKey seed must be an integer; got {aval.dtype.name}")
    lo = lax.convert_element_type(seed, np.uint32)
    if aval.dtype.itemsize == 8:
        hi = lax.convert_element_type(lax.shift_right_logical(
            seed, jnp.asarray(np.array(32, aval.dtype))), np.uint32)
    else:
        hi = jnp.zeros((), np.uint32)
    return jnp.stack([hi, lo])


def key(seed, *, impl=None) -> KeyArray:
    """A typed PRNG key (shape ``()``, dtype ``key<fry>``) from an integer seed, as
    ``jax.random.key``: its ``key_data`` equals ``PRNGKey(seed)``, and every sampler
    gives the same numbers for either. ``seed`` may be traced.

    Examples
    --------
    >>> from absjit import random
    >>> k = random.key(0)
    >>> k
    Array((), dtype=key<fry>) overlaying:
    [0 0]
    >>> random.key_data(random.split(k, 2)).shape
    (2, 2)
    """
    _check_impl("key", impl)
    if isinstance(seed, KeyArray):
        raise TypeError("random.key: the seed is already a PRNG key")
    return KeyArray(PRNGKey(seed))


def _check_impl(name, impl):
    if impl not in (None, "threefry2x32", "threefry"):
        raise ValueError(f"random.{name}: only impl='threefry2x32' is provided, got {impl!r}")


def _raw_keys(name: str, keys):
    """The words of raw keys ``uint32[..., 2]`` (checked)."""
    if isinstance(keys, (bool, int, float, complex)) or keys is None:
        raise TypeError(f"random.{name}: {_KEY_HELP}; got {type(keys).__name__} {keys!r}")
    arr = jnp.asarray(keys) if not is_tracer(keys) else keys
    aval = get_aval(arr)
    if aval.dtype != _U32 or aval.shape[-1:] != (2,):
        raise TypeError(f"random.{name}: {_KEY_HELP}; got {aval.dtype.name}"
                        f"{list(aval.shape)}")
    return arr


def key_data(keys) -> jnp.ndarray:
    """The ``uint32`` words of a key array: ``uint32[*keys.shape, 2]`` for typed keys;
    a raw ``uint32[..., 2]`` key array is returned as it is.

    Examples
    --------
    >>> from absjit import random
    >>> random.key_data(random.key(42))
    Array([ 0, 42], dtype=uint32)
    """
    if isinstance(keys, KeyArray):
        return keys._data
    return _raw_keys("key_data", keys)


def wrap_key_data(key_bits_array, *, impl=None) -> KeyArray:
    """Typed keys from their words: ``uint32[..., 2]`` becomes a key array of shape
    ``key_bits_array.shape[:-1]`` (only ``impl='threefry2x32'``).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import random
    >>> random.wrap_key_data(np.array([[0, 1], [0, 2]], np.uint32)).shape
    (2,)
    """
    _check_impl("wrap_key_data", impl)
    if isinstance(key_bits_array, KeyArray):
        raise TypeError("random.wrap_key_data: the argument is already a typed key array; "
                        "wrap its random.key_data")
    return KeyArray(_raw_keys("wrap_key_data", key_bits_array))


def key_impl(keys):
    """The PRNG implementation of a key (typed or raw): ``'threefry2x32'``.

    Examples
    --------
    >>> from absjit import random
    >>> random.key_impl(random.key(0))
    'threefry2x32'
    """
    if not isinstance(keys, KeyArray):
        _raw_keys("key_impl", keys)
    return THREEFRY


# ---------------------------------------------------------------------------
# Counters, split, fold_in, bits
# ---------------------------------------------------------------------------
def canonical_shape(name: str, shape) -> tuple:
    if isinstance(shape, (int, np.integer)) or is_dim(shape):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"random.{name}: shape must be a tuple of ints, got {shape!r}") from None
    out = []
    for d in shape:
        if is_dim(d):  # a size of the ranked level (never negative)
            out.append(d)
            continue
        if is_tracer(d) or not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise TypeError(f"random.{name}: shape must be a tuple of Python ints (static), "
                            f"got {shape!r}")
        if int(d) < 0:
            raise ValueError(f"random.{name}: negative dimension in shape {shape}")
        out.append(int(d))
    return tuple(out)


def _iota_2x32(shape):
    """The (high, low) uint32 words of the flat 64-bit index of each element."""
    n = size_of(shape)
    if is_dim(n):  # ranked: checked when the compiled program is entered
        assume_at_least(2 ** 32 - 1 - n, 0, "random arrays hold fewer than 2**32 elements")
    elif n >= 2 ** 32:
        raise NotImplementedError("random arrays of 2**32 or more elements")
    if not shape:
        z = jnp.zeros((), np.uint32)
        return z, z
    lo = lax.reshape(lax.iota(np.uint32, (n,)), shape) if len(shape) > 1 \
        else lax.iota(np.uint32, shape)
    return jnp.zeros(shape, np.uint32), lo


def key_words(key):
    """The two ``uint32`` words of a key: a ``uint32[2]`` array, or already a pair.

    Samplers inside loops (``gamma``, ``poisson``) carry keys as word pairs: splitting
    a pair is two hashes of literal counters, where splitting an array stacks the words
    into a new array and slices it again on every trip."""
    return key if isinstance(key, tuple) else (key[0], key[1])


def split_words(key, num: int) -> list:
    """``split(key, num)`` as ``num`` word pairs (the same keys, never stacked)."""
    k0, k1 = key_words(key)
    return [tuple(threefry2x32_p.bind(k0, k1, _u32(0), _u32(i), output=o)
                  for o in ("x0", "x1")) for i in range(num)]


def _hash(key, shape, output=None):
    """Both hashed words of each element's counter, or one (``output``)."""
    hi, lo = _iota_2x32(shape)
    k0, k1 = key_words(key)
    if output is None:
        return threefry_2x32(k0, k1, hi, lo)
    return threefry2x32_p.bind(k0, k1, hi, lo, output=output)


def split(key, num=2):
    """``num`` new keys: typed keys of shape ``(num,)`` for a typed key, ``uint32``
    words of shape ``(num, 2)`` for a raw one (``num`` may be a tuple of dims).

    Examples
    --------
    >>> from absjit import random
    >>> random.split(random.PRNGKey(0))
    Array([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
    """
    typed = isinstance(key, KeyArray)
    key = check_key("split", key)
    shape = canonical_shape("split", num)
    b1, b2 = _hash(key, shape)
    out = jnp.stack([b1, b2], axis=len(shape))
    return KeyArray(out) if typed else out


def fold_in(key, data):
    """A new key (of ``key``'s form) from ``key`` and a 32-bit integer ``data`` (may
    be traced).

    Examples
    --------
    >>> from absjit import random
    >>> random.fold_in(random.PRNGKey(0), 1)
    Array([ 928981903, 3453687069], dtype=uint32)
    """
    typed = isinstance(key, KeyArray)
    key = check_key("fold_in", key)
    if isinstance(data, (int, np.integer)) and not is_tracer(data):
        d = _u32(int(data) & 0xFFFFFFFF)
    else:
        data = data if is_tracer(data) else jnp.asarray(data)
        aval = get_aval(data)
        if aval.shape != ():
            raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                            f"{aval.shape} != (). Use absjit.vmap for batching.")
        if not (dtypes.is_integer(aval.dtype) or dtypes.is_bool(aval.dtype)):
            raise TypeError(f"fold_in data must be an integer, got {aval.dtype.name}")
        d = lax.convert_element_type(data, np.uint32)
    y0, y1 = threefry_2x32(key[0], key[1], jnp.zeros((), np.uint32), d)
    out = jnp.stack([y0, y1])
    return KeyArray(out) if typed else out


def random_bits(key, bit_width: int, shape) -> jnp.ndarray:
    """Unsigned random integers of ``bit_width`` bits (8, 16, 32 or 64)."""
    if bit_width == 64:
        b1, b2 = _hash(key, shape)
        dt = np.dtype(np.uint64)
        hi = lax.convert_element_type(b1, dt)
        lo = lax.convert_element_type(b2, dt)
        return lax.bitwise_or(lax.shift_left(hi, jnp.asarray(np.uint64(32))), lo)
    out = _hash(key, shape, "xor")
    if bit_width == 32:
        return out
    return lax.convert_element_type(out, np.dtype(f"uint{bit_width}"))


def bits(key, shape=(), dtype=None) -> jnp.ndarray:
    """Random bits as unsigned integers (``uint32`` by default; ``uint64`` needs
    ``enable_x64``), equal to ``jax.random.bits`` for the same key.

    Examples
    --------
    >>> from absjit import random
    >>> random.bits(random.PRNGKey(0), (2,))
    Array([4070199207, 4202968722], dtype=uint32)
    """
    key = check_key("bits", key)
    dt = dtypes.default_uint() if dtype is None else dtypes.user_dtype(dtype)
    if not (dtypes.is_integer(dt) and dt.kind == "u"):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return random_bits(key, dt.itemsize * 8, canonical_shape("bits", shape))
