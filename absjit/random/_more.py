"""Samplers composed from the ones in ``_basic`` and ``_gamma``: ``rayleigh``,
``maxwell``, ``double_sided_maxwell``, ``wald``, ``f``, ``geometric``,
``generalized_normal``, ``triangular``, ``binomial`` and ``multinomial``; and the key
helpers ``clone`` and ``key_dtype``.

Each composes its draws with JAX's key schedule, so for the same key, shape and dtype
it gives JAX's numbers wherever the parts do (``tests/random/test_random_more.py`` compares
them with live JAX). ``binomial`` is a rejection sampler and matches JAX's
distribution, not its draws.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..core.trace import get_aval, is_tracer
from ._basic import (_cast, _normal_real, _uniform, bernoulli, check_param_shapes,
                     float_dtype, rademacher)
from ._gamma import _gamma_linear, _gamma_log
from ._keyarray import _KEY_DTYPE
from ._keys import _check_impl, canonical_shape, check_key, key_words, split, split_words

__all__ = ["rayleigh", "maxwell", "double_sided_maxwell", "wald", "f", "geometric",
           "generalized_normal", "triangular", "binomial", "multinomial", "clone",
           "key_dtype"]


def _c(v, dt):
    return jnp.asarray(np.array(v, dt))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh samples ``scale * sqrt(-2 log u)`` for ``u`` uniform on ``[0, 1)``,
    equal to ``jax.random.rayleigh``.

    Examples
    --------
    >>> from absjit import random
    >>> random.rayleigh(random.PRNGKey(0), 2.0, (3,)).shape
    (3,)
    """
    key = check_key("rayleigh", key)
    dt = float_dtype("rayleigh", dtype)
    shape = check_param_shapes("rayleigh", shape, scale)
    u = _uniform(key, shape, dt, 0.0, 1.0)
    return jnp.sqrt(_c(-2.0, dt) * jnp.log(u)) * _cast(scale, dt)


def maxwell(key, shape=(), dtype=None):
    """One-sided Maxwell samples: the length of a standard normal 3-vector, equal to
    ``jax.random.maxwell``.

    Examples
    --------
    >>> from absjit import random
    >>> random.maxwell(random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    key = check_key("maxwell", key)
    dt = float_dtype("maxwell", dtype)
    shape = canonical_shape("maxwell", shape)
    z = _normal_real(key, (*shape, 3), dt)
    return jnp.linalg.norm(z, axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples ``loc + scale * sign * maxwell`` (a random sign),
    equal to ``jax.random.double_sided_maxwell``. As in JAX, the result has shape
    ``shape + broadcast(loc, scale).shape``; with ``shape=()`` and array parameters
    JAX 0.10 uses the parameters' shape twice, absjit once.

    Examples
    --------
    >>> from absjit import random
    >>> random.double_sided_maxwell(random.PRNGKey(0), 0.0, 1.0, (3,)).shape
    (3,)
    """
    key = check_key("double_sided_maxwell", key)
    dt = float_dtype("double_sided_maxwell", dtype)
    shape = canonical_shape("double_sided_maxwell", shape)
    pshape = tuple(np.broadcast_shapes(*[get_aval(p).shape if is_tracer(p) else np.shape(p)
                                         for p in (loc, scale)]))
    shape = shape + pshape
    k_m, k_s = split(key)
    m = maxwell(k_m, shape, dt)
    s = rademacher(k_s, shape, dt)
    return s * m * _cast(scale, dt) + _cast(loc, dt)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples with the given ``mean`` and unit shape, by the
    transformation of Michael, Schucany and Haas (as JAX).

    Examples
    --------
    >>> from absjit import random
    >>> random.wald(random.PRNGKey(0), 1.5, (3,)).shape
    (3,)
    """
    key = check_key("wald", key)
    dt = float_dtype("wald", dtype)
    shape = check_param_shapes("wald", shape, mean)
    k1, k2 = split(key)
    mean = _cast(mean, dt)
    v = _normal_real(k1, shape, dt)
    z = _uniform(k2, shape, dt, 0.0, 1.0)
    y = v * v
    y_sq = y * y
    mean_sq = mean * mean
    sqrt_term = jnp.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distribution samples: the ratio of two chi-square draws, each over its
    degrees of freedom (as JAX).

    Examples
    --------
    >>> from absjit import random
    >>> random.f(random.PRNGKey(0), 3.0, 5.0, (3,)).shape
    (3,)
    """
    key = check_key("f", key)
    dt = float_dtype("f", dtype)
    shape = check_param_shapes("f", shape, dfnum, dfden)
    dfnum = jnp.broadcast_to(_cast(dfnum, dt), shape)
    dfden = jnp.broadcast_to(_cast(dfden, dt), shape)
    k_den, k_num = split(key)
    num = jnp.exp(_gamma_log(k_num, dfnum / 2)) * 2 / dfnum
    den = jnp.exp(_gamma_log(k_den, dfden / 2)) * 2 / dfden
    return num / den


def geometric(key, p, shape=None, dtype=None):
    """Geometric samples (trials up to and including the first success, so ``>= 1``):
    ``floor(log(u) / log1p(-p)) + 1``, equal to ``jax.random.geometric``.

    Examples
    --------
    >>> from absjit import random
    >>> random.geometric(random.PRNGKey(0), 0.3, (3,)).dtype
    dtype('int32')
    """
    key = check_key("geometric", key)
    dt = dtypes.default_int() if dtype is None else dtypes.user_dtype(dtype)
    if not dtypes.is_integer(dt):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dt}")
    shape = check_param_shapes("geometric", shape, p)
    p = p if is_tracer(p) else jnp.asarray(p)
    pdt = get_aval(p).dtype
    if not dtypes.is_float(pdt):
        p = p.astype(dtypes.default_float())
        pdt = get_aval(p).dtype
    u = _uniform(key, shape, pdt, 0.0, 1.0)
    out = jnp.floor(jnp.log(u) / jnp.log1p(-p)) + 1
    return out.astype(dt)


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal samples with density proportional to ``exp(-|x|**p)``: a
    random sign times ``Gamma(1/p) ** (1/p)`` (as JAX).

    Examples
    --------
    >>> from absjit import random
    >>> random.generalized_normal(random.PRNGKey(0), 1.5, (3,)).shape
    (3,)
    """
    key = check_key("generalized_normal", key)
    dt = float_dtype("generalized_normal", dtype)
    shape = canonical_shape("generalized_normal", shape)
    k_g, k_s = split(key)
    s = 2 * bernoulli(k_s, jnp.asarray(np.array(0.5, dt)), shape).astype(dt) - 1
    pp = _cast(p, dt)
    g = _gamma_linear(k_g, jnp.broadcast_to(1 / pp, shape))
    return s * g ** (1 / pp)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular samples on ``[left, right]`` with peak at ``mode``, by inverting the
    CDF (as JAX).

    Examples
    --------
    >>> from absjit import random
    >>> x = random.triangular(random.PRNGKey(0), 0.0, 1.0, 3.0, (1000,))
    >>> bool((x >= 0).all() and (x <= 3).all())
    True
    """
    key = check_key("triangular", key)
    dt = float_dtype("triangular", dtype)
    shape = check_param_shapes("triangular", shape, left, mode, right)
    left, mode, right = _cast(left, dt), _cast(mode, dt), _cast(right, dt)
    fc = (mode - left) / (right - left)
    u = _uniform(key, shape, dt, 0.0, 1.0)
    out1 = left + jnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
    return jnp.where(u < fc, out1, out2)


# ---------------------------------------------------------------------------
# binomial, multinomial
# ---------------------------------------------------------------------------
def _binomial_inversion(key, n, p, dt):
    """Counts by summing geometric waiting times until they pass ``n`` (fast when
    ``n * p`` is small): every element loops until its sum exceeds ``n``."""
    log1mp = jnp.log1p(-p)

    def body(s):
        rng, total, count, done = s
        rng, sub = split_words(rng, 2)
        u = _uniform(sub, n.shape, dt, 0.0, 1.0)
        geom = jnp.ceil(jnp.log(u) / log1mp)
        total = jnp.where(done, total, total + geom)
        stop = total > n
        count = jnp.where(jnp.logical_or(done, stop), count, count + 1)
        return rng, total, count, jnp.logical_or(done, stop)

    init = (key_words(key), jnp.zeros(n.shape, dt), jnp.zeros(n.shape, dt),
            jnp.zeros(n.shape, bool))
    return lax.while_loop(lambda s: jnp.any(jnp.logical_not(s[3])), body, init)[2]


def _binomial_btrs(key, n, p, dt):
    """Hormann's transformed rejection with squeeze (BTRS), for ``p <= 1/2`` and
    ``n * p >= 10``."""
    q = 1 - p
    spq = jnp.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = jnp.log(p / q)
    m = jnp.floor((n + 1) * p)
    h = lax.lgamma(m + 1) + lax.lgamma(n - m + 1)

    def body(s):
        rng, out, done = s
        rng, ku, kv = split_words(rng, 3)
        u = _uniform(ku, n.shape, dt, 0.0, 1.0) - 0.5
        v = _uniform(kv, n.shape, dt, 0.0, 1.0)
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + c)
        inside = jnp.logical_and(k >= 0, k <= n)
        k = jnp.where(inside, k, m)  # a rejected candidate: keep lgamma finite
        quick = jnp.logical_and(us >= 0.07, v <= v_r)
        lv = jnp.log(v * alpha / (a / (us * us) + b))
        bound = h - lax.lgamma(k + 1) - lax.lgamma(n - k + 1) + (k - m) * lpq
        accept = jnp.logical_and(inside, jnp.logical_or(quick, lv <= bound))
        new = jnp.logical_and(accept, jnp.logical_not(done))
        return rng, jnp.where(new, k, out), jnp.logical_or(done, accept)

    init = (key_words(key), jnp.zeros(n.shape, dt), jnp.zeros(n.shape, bool))
    return lax.while_loop(lambda s: jnp.any(jnp.logical_not(s[2])), body, init)[1]


def _binomial(key, n, p, dt):
    flip = p > 0.5
    pp = jnp.where(flip, 1 - p, p)
    bad = jnp.logical_or(jnp.logical_or(jnp.isnan(n), jnp.isnan(p)),
                         jnp.logical_or(n < 0, jnp.logical_or(p < 0, p > 1)))
    trivial = jnp.logical_or(bad, jnp.logical_or(n == 0, pp == 0))
    small = n * pp < 10
    # Each method sees safe parameters where the other (or neither) applies, so that
    # every element's loop ends.
    n_inv = jnp.where(jnp.logical_and(small, jnp.logical_not(trivial)), n, 0.0)
    p_inv = jnp.where(jnp.logical_and(small, jnp.logical_not(trivial)), pp, 0.5)
    use_rej = jnp.logical_and(jnp.logical_not(small), jnp.logical_not(trivial))
    n_rej = jnp.where(use_rej, n, 100.0)
    p_rej = jnp.where(use_rej, pp, 0.5)
    k_inv, k_rej = split(key)
    count = jnp.where(small, _binomial_inversion(k_inv, n_inv, p_inv, dt),
                      _binomial_btrs(k_rej, n_rej, p_rej, dt))
    count = jnp.where(flip, n - count, count)
    count = jnp.where(jnp.logical_or(n == 0, pp == 0), jnp.where(flip, n, 0.0), count)
    return jnp.where(bad, jnp.asarray(np.array(np.nan, dt)), count)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(``n``, ``p``) counts, as floats (JAX's result type).

    Geometric waiting times are summed where ``n * min(p, 1 - p) < 10``, and
    Hormann's BTRS rejection sampler is used above. This follows the distribution of
    ``jax.random.binomial``, not its draws (its key schedule is not reproduced);
    ``tests/random/test_random_more.py`` tests it against the exact law. Invalid parameters
    (``n < 0``, ``p`` outside ``[0, 1]``, NaN) give NaN, as in JAX. ``n`` and ``p``
    pass through ``stop_gradient`` (a count has no useful derivative).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import random
    >>> x = np.asarray(random.binomial(random.PRNGKey(0), 10, 0.3, (1000,)))
    >>> x.dtype, bool(((x >= 0) & (x <= 10) & (x == np.round(x))).all())
    (dtype('float32'), True)
    """
    key = check_key("binomial", key)
    dt = float_dtype("binomial", dtype)
    shape = check_param_shapes("binomial", shape, n, p)
    n = jnp.broadcast_to(lax.stop_gradient(_cast(n, dt)), shape)
    p = jnp.broadcast_to(lax.stop_gradient(_cast(p, dt)), shape)
    if 0 in shape:
        return jnp.zeros(shape, dt)
    return _binomial(key, n, p, dt)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts: ``n`` draws among the categories on the last axis of ``p``
    (normalised by its sum), by conditional binomials category after category (as
    JAX). ``shape`` includes the category axis; ``n`` broadcasts to ``shape[:-1]``.
    Follows JAX's distribution, not its draws (see ``binomial``); ``unroll`` is
    accepted for compatibility and has no effect.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import random
    >>> c = random.multinomial(random.PRNGKey(0), 10, np.array([0.2, 0.3, 0.5]))
    >>> c.shape, float(c.sum())
    ((3,), 10.0)
    """
    key = check_key("multinomial", key)
    dt = dtypes.default_float() if dtype is None else dtypes.user_dtype(dtype)
    p = p if is_tracer(p) else jnp.asarray(p)
    if get_aval(p).ndim < 1:
        raise ValueError("multinomial: p must have at least one dimension (the categories)")
    if not dtypes.is_float(get_aval(p).dtype):
        p = p.astype(dtypes.default_float())
    fdt = get_aval(p).dtype
    if shape is None:
        nshape = np.shape(n) if not is_tracer(n) else get_aval(n).shape
        shape = tuple(np.broadcast_shapes(tuple(nshape) + (p.shape[-1],), p.shape))
    shape = canonical_shape("multinomial", shape)
    if len(shape) < 1 or shape[-1] != p.shape[-1]:
        raise ValueError(f"multinomial: shape {shape} must end with the number of "
                         f"categories {p.shape[-1]}")
    p = jnp.broadcast_to(p, shape)
    n = jnp.broadcast_to(lax.stop_gradient(_cast(n, fdt)), shape[:-1])
    p = lax.stop_gradient(p / jnp.sum(p, axis=-1, keepdims=True))
    # P(category i | not in 0..i-1) = p_i / (p_i + ... + p_last)
    tail = jnp.flip(jnp.cumsum(jnp.flip(p, -1), axis=-1), -1)
    ratios = jnp.clip(jnp.where(tail > 0, p / jnp.where(tail > 0, tail, 1), 0), 0, 1)
    ncat = shape[-1]
    keys = split(key, ncat)  # raw uint32[ncat, 2] (check_key unwraps typed keys)
    ratios = jnp.moveaxis(ratios, -1, 0)

    def step(i, carry):
        remaining, counts = carry
        k = lax.dynamic_index_in_dim(keys, i, 0, keepdims=False)
        ratio = lax.dynamic_index_in_dim(ratios, i, 0, keepdims=False)
        count = _binomial(k, remaining, ratio, fdt)
        return remaining - count, lax.dynamic_update_index_in_dim(counts, count, i, 0)

    # The last ratio is 1, so the last category takes what remains. (One loop over
    # the categories, so the binomial sampler is compiled once.)
    _, counts = lax.fori_loop(0, ncat, step, (n, jnp.zeros((ncat, *shape[:-1]), fdt)))
    return jnp.moveaxis(counts, 0, -1).astype(dt)


def clone(key):
    """A copy of ``key``. absjit's arrays are immutable and never donated, so this
    returns the key unchanged (JAX's ``clone`` exists for key reuse checking).

    Examples
    --------
    >>> from absjit import random
    >>> random.clone(random.key(0)).shape
    ()
    """
    return key


def key_dtype(impl_spec=None):
    """The dtype of typed keys of an implementation: ``key<fry>`` (only
    ``'threefry2x32'`` is provided).

    Examples
    --------
    >>> from absjit import random
    >>> random.key_dtype()
    key<fry>
    """
    _check_impl("key_dtype", impl_spec)
    return _KEY_DTYPE
