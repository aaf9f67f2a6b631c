"""Samplers that are deterministic functions of the random bits, written as JAX
writes them so that the same key gives the same numbers: ``uniform``, ``normal``,
``randint``, ``bernoulli``, ``categorical``, ``choice``, ``permutation``,
``truncated_normal`` and the inverse-CDF samplers (``exponential``, ``gumbel``,
``laplace``, ``logistic``, ``cauchy``, ``rademacher``, ``lognormal``, ``pareto``,
``weibull_min``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..core.dim_assumptions import assume_at_least
from ..core.dims import is_dim
from ..core.shapes import broadcast_shapes, size_of
from ..core.trace import get_aval, is_tracer
from ..numpy._indexing import size_value
from ..lax._erf_gamma import _fma32, _log1p32_xla
from ._keys import canonical_shape, check_key, random_bits, split

__all__ = ["uniform", "normal", "randint", "bernoulli", "categorical", "choice",
           "permutation", "truncated_normal", "exponential", "gumbel", "laplace",
           "logistic", "rademacher", "cauchy", "lognormal", "pareto", "weibull_min"]


def float_dtype(name: str, dtype, allow_complex=False) -> np.dtype:
    dt = dtypes.default_float() if dtype is None else dtypes.user_dtype(dtype)
    ok = dtypes.is_inexact(dt) if allow_complex else dtypes.is_float(dt)
    if not ok:
        kind = "a float or complex" if allow_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kind} dtype, got {dt}")
    return dt


def _finfo(dt):
    return jnp.finfo(dt)


def _cast(x, dt):
    if not is_tracer(x) and not isinstance(x, jnp.ndarray):
        # A host value becomes a literal of ``dt`` directly (no convert equation).
        return jnp.asarray(np.asarray(x).astype(dt))
    return lax.convert_element_type(x, dt)


def check_param_shapes(name, shape, *params):
    """Broadcast parameter shapes; an explicit ``shape`` must equal the broadcast."""
    pshapes = [tuple(np.shape(p)) if not is_tracer(p) else get_aval(p).shape for p in params]
    if shape is None:
        return tuple(broadcast_shapes(*pshapes)) if pshapes else ()
    shape = canonical_shape(name, shape)
    if pshapes:
        try:
            full = tuple(broadcast_shapes(shape, *pshapes))
        except ValueError:
            full = None
        if full != shape:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with "
                             f"shape argument, and the result of broadcasting the shapes "
                             f"must equal the shape argument, but got result {full} for "
                             f"shape argument {shape}.")
    return shape


# ---------------------------------------------------------------------------
# uniform, normal
# ---------------------------------------------------------------------------
def _uniform(key, shape, dt, minval, maxval):
    minval = jnp.broadcast_to(_cast(minval, dt), shape)
    maxval = jnp.broadcast_to(_cast(maxval, dt), shape)
    fi = _finfo(dt)
    nbits, nmant = int(fi.bits), int(fi.nmant)
    rng_bits = 8 if nmant < 8 else nbits
    raw = random_bits(key, rng_bits, shape)
    udt = np.dtype(f"uint{nbits}")
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, udt)
    # JAX ORs the top mantissa bits into 1.0 and subtracts 1: that is m * 2**-nmant
    # exactly, computed here without a bitcast.
    mant = lax.shift_right_logical(raw, jnp.asarray(np.array(rng_bits - nmant, udt)))
    floats = lax.mul(lax.convert_element_type(mant, dt),
                     jnp.asarray(np.array(2.0 ** -nmant, dt)))
    span = lax.sub(maxval, minval)
    if dt == dtypes.float32:
        out = _fma32(floats, span, minval)  # XLA:CPU contracts this into an FMA
    else:
        out = lax.add(lax.mul(floats, span), minval)
    return lax.max(minval, out)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)``; equal to ``jax.random.uniform`` bit for
    bit (the top mantissa bits of ``bits`` scaled into ``[0, 1)``).

    Examples
    --------
    >>> from absjit import random
    >>> random.uniform(random.PRNGKey(0), (3,))
    Array([0.947667  , 0.9785799 , 0.33229148], dtype=float32)
    """
    key = check_key("uniform", key)
    dt = float_dtype("uniform", dtype)
    return _uniform(key, canonical_shape("uniform", shape), dt, minval, maxval)


def _normal_real(key, shape, dt):
    nmant = int(_finfo(dt).nmant)
    lo = -(1.0 - 2.0 ** -(nmant + 1))   # nextafter(-1, 0) in dt
    u = _uniform(key, shape, dt, lo, 1.0)
    return lax.mul(jnp.asarray(np.array(np.sqrt(2), dt)), lax.erf_inv(u))


def normal(key, shape=(), dtype=None):
    """Standard normal floats, as ``jax.random.normal``: ``sqrt(2) * erf_inv(u)`` for
    ``u`` uniform on ``(-1, 1)``. Complex dtypes give ``(re + 1j*im) / sqrt(2)``.

    Examples
    --------
    >>> from absjit import random
    >>> random.normal(random.PRNGKey(0), (3,))
    Array([ 1.6226422 ,  2.0252647 , -0.43359444], dtype=float32)
    """
    key = check_key("normal", key)
    dt = float_dtype("normal", dtype, allow_complex=True)
    shape = canonical_shape("normal", shape)
    if dtypes.is_complex(dt):
        rdt = np.dtype(np.float32 if dt == np.complex64 else np.float64)
        k_re, k_im = split(key)
        re = _normal_real(k_re, shape, rdt).astype(dt)
        im = _normal_real(k_im, shape, rdt).astype(dt)
        return (re + 1j * im) / jnp.asarray(np.array(np.sqrt(2), dt))
    return _normal_real(key, shape, dt)


# ---------------------------------------------------------------------------
# randint
# ---------------------------------------------------------------------------
def _int_bound(v, dt, name):
    """A bound as an integer array of ``dt`` (clipped to its range), and whether it
    lay above the range (JAX: ``randint(key, s, 0, 256, uint8)`` covers 0..255)."""
    info = np.iinfo(dt)
    if isinstance(v, (int, np.integer)) and not is_tracer(v):
        iv = int(v)
        return jnp.asarray(np.array(min(max(iv, int(info.min)), int(info.max)), dt)), \
            iv > int(info.max)
    arr = v if is_tracer(v) else jnp.asarray(v)
    adt = get_aval(arr).dtype
    if not dtypes.is_integer(adt):
        arr = lax.convert_element_type(arr, dtypes.default_int())
        adt = get_aval(arr).dtype
    ainfo = np.iinfo(adt)
    lo, hi = max(int(info.min), int(ainfo.min)), min(int(info.max), int(ainfo.max))
    over = jnp.asarray(arr) > hi if int(info.max) < int(ainfo.max) else False
    clipped = jnp.clip(arr, np.array(lo, adt), np.array(hi, adt))
    return lax.convert_element_type(clipped, dt), over


def randint(key, shape, minval, maxval, dtype=None):
    """Integers in ``[minval, maxval)``, equal to ``jax.random.randint``.

    Each value reduces two independent words of random bits modulo the span (a
    slightly biased method when the span is not a power of two, as in JAX). Where
    ``maxval <= minval`` the result is ``minval`` (JAX's documented behaviour).
    Bounds may be arrays broadcasting to ``shape`` and may be traced.

    Examples
    --------
    >>> from absjit import random
    >>> random.randint(random.PRNGKey(0), (4,), 0, 10)
    Array([9, 0, 2, 3], dtype=int32)
    """
    key = check_key("randint", key)
    dt = dtypes.default_int() if dtype is None else dtypes.user_dtype(dtype)
    if not dtypes.is_integer(dt):
        raise TypeError(f"randint only accepts integer dtypes, got {dt}")
    shape = check_param_shapes("randint", shape, minval, maxval)
    sdt = np.dtype(np.int32) if np.iinfo(dt).bits < 32 else dt
    if sdt != dt:
        info = np.iinfo(dt)
        minval = jnp.clip(_int_bound(minval, np.int32, "minval")[0], int(info.min), int(info.max))
        maxval = jnp.clip(_int_bound(maxval, np.int32, "maxval")[0], int(info.min),
                          int(info.max) + 1)
    lo, _ = _int_bound(minval, sdt, "minval")
    hi, over = _int_bound(maxval, sdt, "maxval")
    lo, hi = jnp.broadcast_to(lo, shape), jnp.broadcast_to(hi, shape)
    nbits = np.iinfo(sdt).bits
    udt = np.dtype(f"uint{nbits}")
    k1, k2 = split(key)
    higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    span = lax.convert_element_type(lax.sub(hi, lo), udt)
    one = jnp.ones(shape, udt)
    span = lax.select(lax.le(hi, lo), one, span)
    if over is not False:
        span = jnp.where(jnp.logical_and(over, hi > lo), lax.add(span, one), span)
    multiplier = lax.rem(jnp.broadcast_to(jnp.asarray(np.array(2 ** (nbits // 2), udt)),
                                          shape), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    out = lax.add(lo, lax.convert_element_type(offset, sdt))
    return out if sdt == dt else lax.convert_element_type(out, dt)


# ---------------------------------------------------------------------------
# Discrete samplers
# ---------------------------------------------------------------------------
def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability ``p`` (``uniform < p``, as JAX).

    Examples
    --------
    >>> from absjit import random
    >>> random.bernoulli(random.PRNGKey(0), 0.5, (4,))
    Array([False, False,  True,  True], dtype=bool)
    """
    key = check_key("bernoulli", key)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    p = p if is_tracer(p) else jnp.asarray(p)
    dt = get_aval(p).dtype
    if not dtypes.is_float(dt):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dt}.")
    shape = check_param_shapes("bernoulli", shape, p)
    if mode == "high":
        u = _uniform(key, (2, *shape), dt, 0.0, 1.0)
        u1, u2 = u[0], u[1] * (2.0 ** -int(_finfo(dt).nmant))
        return u2 < p - u1
    return _uniform(key, shape, dt, 0.0, 1.0) < p


def rademacher(key, shape=(), dtype=None):
    """Random signs ``±1`` with equal probability (integers by default)."""
    key = check_key("rademacher", key)
    dt = dtypes.default_int() if dtype is None else dtypes.user_dtype(dtype)
    shape = canonical_shape("rademacher", shape)
    b = bernoulli(key, 0.5, shape).astype(dt)
    return (2 * b - 1).astype(dt)


def _gumbel(key, shape, dt):
    tiny = float(_finfo(dt).tiny)
    return -jnp.log(-jnp.log(_uniform(key, shape, dt, tiny, 1.0)))


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples ``-log(-log(u))`` (JAX's default ``mode='low'``)."""
    key = check_key("gumbel", key)
    if mode not in (None, "low"):
        raise ValueError(f"gumbel: only mode='low' (JAX's default) is provided, got {mode!r}")
    return _gumbel(key, canonical_shape("gumbel", shape), float_dtype("gumbel", dtype))


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Category indices drawn with probabilities ``softmax(logits, axis)`` (the
    Gumbel-max trick, as JAX).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import random
    >>> random.categorical(random.PRNGKey(0), jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(5,))
    Array([1, 2, 2, 1, 2], dtype=int32)
    """
    key = check_key("categorical", key)
    logits = jnp.asarray(logits) if not is_tracer(logits) else logits
    nd = logits.ndim
    if nd == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    axis = axis % nd
    batch_shape = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    shape = batch_shape if shape is None else check_param_shapes("categorical", shape,
                                                                np.empty(batch_shape))
    prefix = shape[:len(shape) - len(batch_shape)]
    dt = logits.dtype
    if not dtypes.is_float(dt):
        raise TypeError(f"categorical: logits must be floating, got {dt}")
    if replace:
        ax = axis - nd
        lshape = list(shape[len(shape) - len(batch_shape):])
        lshape.insert(ax % nd, logits.shape[ax])
        g = _gumbel(key, (*prefix, *lshape), dt)
        return jnp.argmax(g + jnp.expand_dims(logits, tuple(range(len(prefix)))), axis=ax)
    k = int(np.prod(prefix, dtype=np.int64))
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                         f"number of categories ({logits.shape[axis]}).")
    noisy = logits + _gumbel(key, logits.shape, dt)
    _, idx = lax.top_k(jnp.moveaxis(noisy, axis, -1), k)
    return jnp.moveaxis(idx, -1, 0).reshape(shape)


def _shuffle_rounds(n: int) -> int:
    """JAX's number of sorts that shuffle ``n`` elements: enough 32-bit keys that a
    collision is unlikely."""
    return int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))


# The largest sizes shuffled in 1 and in 2 rounds (3 rounds above, up to 2**32).
_ONE_ROUND_MAX, _TWO_ROUNDS_MAX = 1625, 2642245


def _shuffle(key, x, axis):
    def one_round(key, x):
        ks = split(key)
        key, sub = ks[0], ks[1]
        sort_keys = random_bits(sub, 32, x.shape)
        return key, lax.sort_key_val(sort_keys, x, axis)[1]

    n = size_of(x.shape)
    if not is_dim(n):
        for _ in range(_shuffle_rounds(n)):
            key, x = one_round(key, x)
        return x
    # ranked: the number of rounds, from the size at run time
    m = size_value(n, dtypes.default_int())
    rounds = sum(lax.convert_element_type(m > t, np.int32)
                 for t in (1, _ONE_ROUND_MAX, _TWO_ROUNDS_MAX))
    return lax.fori_loop(0, rounds, lambda _, c: one_round(*c), (key, x))[1]


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` (integer ``x``) or of ``x`` along
    ``axis``, equal to ``jax.random.permutation`` (repeated sorts by random keys).

    Examples
    --------
    >>> from absjit import random
    >>> random.permutation(random.PRNGKey(0), 5)
    Array([0, 1, 4, 3, 2], dtype=int32)
    """
    key = check_key("permutation", key)
    if isinstance(x, (int, np.integer)) and not is_tracer(x):
        n = int(x)
        if n < 0:
            raise ValueError(f"permutation: x must be non-negative, got {n}")
        return _shuffle(key, jnp.arange(n), 0)
    if is_dim(x):  # a size of the ranked level: ``range(x)``
        return _shuffle(key, jnp.arange(x), 0)
    x = x if is_tracer(x) else jnp.asarray(x)
    if x.ndim == 0:
        if not dtypes.is_integer(x.dtype):
            raise TypeError("x must be an integer or at least 1-dimensional")
        raise TypeError("permutation: an integer x must be a static Python int "
                        "(the length of the result depends on it)")
    axis = axis % x.ndim
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """A random sample from ``a`` (an array, or ``range(a)`` for an int), equal to
    ``jax.random.choice``. ``p`` need not sum to one: like JAX, draws use ``p``
    normalised by its sum. Without replacement, ``prod(shape)`` may not exceed the
    population (``ValueError``).

    Examples
    --------
    >>> from absjit import random
    >>> random.choice(random.PRNGKey(0), 10, (3,), replace=False)
    Array([0, 1, 8], dtype=int32)
    """
    key = check_key("choice", key)
    if isinstance(shape, (int, np.integer)):
        raise TypeError(f"shape argument of random.choice must be a sequence, got {shape}")
    shape = canonical_shape("choice", shape)
    if isinstance(a, (int, np.integer)) and not is_tracer(a):
        arr, n_inputs = None, int(a)
    elif is_dim(a):  # a size of the ranked level: ``range(a)``
        arr, n_inputs = None, a
    else:
        arr = a if is_tracer(a) else jnp.asarray(a)
        if arr.ndim == 0:
            raise TypeError("random.choice: an integer a must be a static Python int")
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = size_of(shape)
    if not is_dim(n_draws) and n_draws == 0:
        return jnp.zeros(shape if arr is None else arr.shape[:axis] + shape
                         + arr.shape[axis + 1:], dtypes.default_int() if arr is None else arr.dtype)
    if is_dim(n_inputs) or is_dim(n_draws):  # ranked: checked at entry
        assume_at_least(n_inputs, 1, "random.choice needs a non-empty population")
        if not replace:
            assume_at_least(n_inputs - n_draws, 0, "random.choice without replacement "
                            "takes at most the population")
    elif n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    elif not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr is None else jnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if arr is None else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=0 if arr is None else axis)
    else:
        p = jnp.asarray(p) if not is_tracer(p) else p
        if not dtypes.is_inexact(p.dtype):
            p = p.astype(dtypes.default_float())
        if p.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p)
            r = p_cuml[-1] * (1 - _uniform(key, shape, p_cuml.dtype, 0.0, 1.0))
            ind = jnp.searchsorted(p_cuml, r).astype(dtypes.default_int())
        else:
            g = _gumbel(key, (n_inputs,), p.dtype) + jnp.log(p)
            ind = lax.top_k(g, n_draws)[1].astype(dtypes.default_int())
        result = ind if arr is None else jnp.take(arr, ind, axis=axis)
    return result.reshape(shape if arr is None else
                          arr.shape[:axis] + shape + arr.shape[axis + 1:])


# ---------------------------------------------------------------------------
# Continuous samplers by inversion
# ---------------------------------------------------------------------------
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal samples conditioned on ``lower < x < upper`` (inverse CDF, as JAX)."""
    key = check_key("truncated_normal", key)
    dt = float_dtype("truncated_normal", dtype)
    shape = check_param_shapes("truncated_normal", shape, lower, upper)
    sqrt2 = jnp.asarray(np.array(np.sqrt(2), dt))
    lower, upper = _cast(lower, dt), _cast(upper, dt)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = _uniform(key, shape, dt, a, b)
    out = sqrt2 * lax.erf_inv(u)
    inf = jnp.asarray(np.array(np.inf, dt))
    lo = lax.nextafter(lax.stop_gradient(lower), inf)
    hi = lax.nextafter(lax.stop_gradient(upper), -inf)
    return jnp.clip(out, lo, hi)


def _simple(name, fn):
    def sampler(key, shape=(), dtype=None):
        key = check_key(name, key)
        dt = float_dtype(name, dtype)
        return fn(key, canonical_shape(name, shape), dt)
    sampler.__name__ = sampler.__qualname__ = name
    return sampler


def _log1p_neg(x):
    """``log1p(-x)`` for ``x`` in ``[0, 1)``: for float32 with XLA's CPU algorithm (its
    domain, ``1 - x >= 2**-24``, holds for a uniform draw), so the samplers built on it
    equal JAX's draws bit for bit."""
    if get_aval(x).dtype == dtypes.float32:
        return _log1p32_xla(lax.neg(x))
    return lax.log1p(lax.neg(x))


def _exponential(key, shape, dt):
    return lax.neg(_log1p_neg(_uniform(key, shape, dt, 0.0, 1.0)))


def _laplace(key, shape, dt):
    u = _uniform(key, shape, dt, -1.0 + float(_finfo(dt).epsneg), 1.0)
    return lax.mul(lax.sign(u), _log1p_neg(lax.abs(u)))


def _logistic(key, shape, dt):
    x = _uniform(key, shape, dt, float(_finfo(dt).tiny), 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def _cauchy(key, shape, dt):
    u = _uniform(key, shape, dt, float(_finfo(dt).eps), 1.0)
    return lax.tan(lax.mul(jnp.asarray(np.array(math.pi, dt)),
                           lax.sub(u, jnp.asarray(np.array(0.5, dt)))))


exponential = _simple("exponential", _exponential)
exponential.__doc__ = """Standard exponential samples ``-log1p(-u)``.

Examples
--------
>>> from absjit import random
>>> random.exponential(random.PRNGKey(0), (2,)).shape
(2,)
"""
laplace = _simple("laplace", _laplace)
laplace.__doc__ = "Standard Laplace samples ``sign(u) * log1p(-|u|)``, ``u`` on (-1, 1)."
logistic = _simple("logistic", _logistic)
logistic.__doc__ = "Standard logistic samples ``log(u) - log1p(-u)``."
cauchy = _simple("cauchy", _cauchy)
cauchy.__doc__ = "Standard Cauchy samples ``tan(pi * (u - 1/2))``."


def lognormal(key, sigma=1.0, shape=None, dtype=None):
    """``exp(sigma * normal)`` samples."""
    key = check_key("lognormal", key)
    dt = float_dtype("lognormal", dtype)
    shape = check_param_shapes("lognormal", shape, sigma)
    return lax.exp(_normal_real(key, shape, dt) * _cast(sigma, dt))


def pareto(key, b, shape=None, dtype=None):
    """Pareto samples with shape ``b``: ``exp(exponential / b)``."""
    key = check_key("pareto", key)
    dt = float_dtype("pareto", dtype)
    shape = check_param_shapes("pareto", shape, b)
    return lax.exp(_exponential(key, shape, dt) / _cast(b, dt))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples ``scale * (-log1p(-u)) ** (1 / concentration)``."""
    key = check_key("weibull_min", key)
    dt = float_dtype("weibull_min", dtype)
    u = _uniform(key, canonical_shape("weibull_min", shape), dt, 0.0, 1.0)
    return jnp.power(-jnp.log1p(-u), 1.0 / _cast(concentration, dt)) * _cast(scale, dt)
