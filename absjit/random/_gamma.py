"""Samplers built on rejection loops: ``gamma``/``loggamma`` (Marsaglia-Tsang, one
``while_loop`` per element, vmapped, with JAX's key schedule), ``beta``,
``dirichlet``, ``chisquare``, ``t``, ``poisson`` (Knuth below 10, Hormann's
transformed rejection above), and ``ball``.

They follow JAX's algorithms and key schedules, so most draws equal JAX's, but they
match JAX's *distribution*, not every draw: an acceptance test compares values
computed with ``log``/``log1p``/``lgamma``, whose last bit can differ from XLA's, and
``gamma`` redraws a rejected first candidate with Box-Muller normals (see
``_gamma_one``), so a retried draw differs from JAX's. ``tests/random/test_random_stats.py``
checks every such sampler against its exact law at 1e5 samples.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..api_transforms import vmap
from ..core.dims import is_dim, unify_shapes
from ..core.shapes import broadcast_shapes, size_of
from ..custom_derivatives import custom_jvp
from ._basic import (_cast, _exponential, _normal_real, _uniform, check_param_shapes,
                     float_dtype, rademacher)
from ._keys import canonical_shape, check_key, key_words, split, split_words

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "t", "poisson", "ball",
           "multivariate_normal", "orthogonal"]


def _box_muller(key, dt):
    """One standard normal from two uniforms (``sqrt(-2 log u1) cos(2 pi u2)``): exact
    in law and cheap to compile, for the rare retried candidates of ``gamma``."""
    k1, k2 = split_words(key, 2)
    u1 = _uniform(k1, (), dt, 0.0, 1.0)
    u2 = _uniform(k2, (), dt, 0.0, 1.0)
    one = jnp.asarray(np.array(1.0, dt))
    r = jnp.sqrt(jnp.asarray(np.array(-2.0, dt)) * jnp.log(one - u1))
    return r * jnp.cos(jnp.asarray(np.array(2 * np.pi, dt)) * u2)


def _gamma_one(key, alpha, log_space):
    """One Gamma(``alpha``) draw by Marsaglia-Tsang, in two stages.

    The first candidate is JAX's: the same keys, the inverse-CDF normal, the same
    acceptance test, so when JAX accepts its first candidate (most draws: over 95% for
    ``alpha >= 1`` and for boosted small ``alpha``) the draw equals JAX's. A rejected
    first candidate is redrawn by a loop whose normals come from Box-Muller (keys split
    from JAX's continuation key), so the heavy ``erf_inv`` never sits inside a loop
    body: the cpu backend compiles it once, in straight-line code. The law is exactly
    Gamma(``alpha``) either way; only retried draws differ from JAX's."""
    dt = alpha.dtype

    def c(v):
        return jnp.asarray(np.array(v, dt))

    zero, one = c(0.0), c(1.0)
    boost_mask = alpha >= one
    alpha_orig = alpha
    alpha = jnp.where(boost_mask, alpha, alpha + one)
    d = alpha - c(1.0 / 3.0)
    cc = c(1.0 / 3.0) / jnp.sqrt(d)

    def accepted(x, u):
        # v <= 0 rejects (JAX draws x again; log(v) would be NaN), then the squeeze
        # and the log test of Marsaglia-Tsang.
        v = one + x * cc
        big_v = v * v * v
        xx = x * x
        reject = jnp.logical_and(u >= one - c(0.0331) * (xx * xx),
                                 jnp.log(u) >= xx * c(0.5) + d * (one - big_v + jnp.log(big_v)))
        return jnp.logical_and(v > zero, jnp.logical_not(reject)), big_v

    # Keys are carried as word pairs (see ``key_words``): the same keys as JAX's
    # ``split`` arrays, with no stacking and slicing inside the loop.
    key, sub = split_words(key, 2)
    k, x_key, u_key = split_words(key, 3)
    x = _normal_real(split_words(x_key, 2)[1], (), dt)
    ok, V = accepted(x, _uniform(u_key, (), dt, 0.0, 1.0))

    def retry(s):
        k, _, _ = s
        k, x_key, u_key = split_words(k, 3)
        ok, v = accepted(_box_muller(x_key, dt), _uniform(u_key, (), dt, 0.0, 1.0))
        return k, v, ok

    _, V, _ = lax.while_loop(lambda s: jnp.logical_not(s[2]), retry, (k, V, ok))
    if log_space:
        log_samples = -_exponential(sub, (), dt)
        log_boost = jnp.where(jnp.logical_or(boost_mask, log_samples == zero), zero,
                              log_samples * (one / alpha_orig))
        return jnp.log(d) + jnp.log(V) + log_boost
    samples = one - _uniform(sub, (), dt, 0.0, 1.0)
    boost = jnp.where(boost_mask, one, jnp.power(samples, one / alpha_orig))
    return d * V * boost


def _gamma_impl(key, a, log_space):
    n = size_of(a.shape)
    if not is_dim(n) and n == 0:
        return jnp.zeros(a.shape, a.dtype)
    keys = split(key, n)
    flat = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, a.reshape(n))
    return flat.reshape(a.shape)


def _no_grad(name):
    def wrap(f):
        g = custom_jvp(f)

        @g.defjvp
        def jvp(primals, tangents):
            raise NotImplementedError(
                f"random.{name} is not differentiable with respect to its parameters in "
                "absjit (JAX uses implicit reparameterisation gradients here); wrap the "
                "parameter in lax.stop_gradient if a zero gradient is intended")
        return g
    return wrap


@_no_grad("gamma")
def _gamma_linear(key, a):
    return _gamma_impl(key, a, False)


@_no_grad("loggamma")
def _gamma_log(key, a):
    return _gamma_impl(key, a, True)


def _gamma(name, key, a, shape, dtype, log_space):
    key = check_key(name, key)
    dt = float_dtype(name, dtype)
    shape = check_param_shapes(name, shape, a)
    a = jnp.broadcast_to(_cast(a, dt), shape)
    return (_gamma_log if log_space else _gamma_linear)(key, a)


def gamma(key, a, shape=None, dtype=None):
    """Gamma(``a``, 1) samples (Marsaglia-Tsang; matches JAX's distribution, and its
    draws wherever JAX accepts its first candidate, typically 70-97% of them).

    Examples
    --------
    >>> from absjit import random
    >>> random.gamma(random.PRNGKey(0), 2.0, (3,)).shape
    (3,)
    """
    return _gamma("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """``log`` of Gamma(``a``, 1) samples, accurate for small ``a``."""
    return _gamma("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(``a``, ``b``) samples from two log-gamma draws (as JAX)."""
    key = check_key("beta", key)
    dt = float_dtype("beta", dtype)
    shape = check_param_shapes("beta", shape, a, b)
    ks = split(key)
    a = jnp.broadcast_to(_cast(a, dt), shape)
    b = jnp.broadcast_to(_cast(b, dt), shape)
    lga, lgb = _gamma_log(ks[0], a), _gamma_log(ks[1], b)
    m = lax.max(lga, lgb)
    ga, gb = jnp.exp(lga - m), jnp.exp(lgb - m)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(``alpha``) samples: softmax of log-gamma draws (as JAX)."""
    key = check_key("dirichlet", key)
    dt = float_dtype("dirichlet", dtype)
    alpha = jnp.asarray(alpha)
    if alpha.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}")
    shape = alpha.shape[:-1] if shape is None else check_param_shapes(
        "dirichlet", shape, np.empty(alpha.shape[:-1]))
    full = tuple(shape) + alpha.shape[-1:]
    lg = _gamma_log(key, jnp.broadcast_to(_cast(alpha, dt), full))
    lg = lg - jnp.max(lg, axis=-1, keepdims=True)
    e = jnp.exp(lg)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square(``df``) samples: ``2 * Gamma(df / 2)`` (from a log-gamma draw)."""
    key = check_key("chisquare", key)
    dt = float_dtype("chisquare", dtype)
    shape = check_param_shapes("chisquare", shape, df)
    half = jnp.broadcast_to(_cast(df, dt) / 2, shape)
    return jnp.exp(_gamma_log(key, half)) * 2


def t(key, df, shape=None, dtype=None):
    """Student's t(``df``) samples: ``normal * sqrt(df / 2 / Gamma(df / 2))``."""
    key = check_key("t", key)
    dt = float_dtype("t", dtype)
    shape = check_param_shapes("t", shape, df)
    ks = split(key)
    n = _normal_real(ks[0], shape, dt)
    half = jnp.broadcast_to(_cast(df, dt) / 2, shape)
    g = _gamma_linear(ks[1], half)
    return n * jnp.sqrt(half / g)


# ---------------------------------------------------------------------------
# poisson
# ---------------------------------------------------------------------------
def _poisson_knuth(key, lam, shape, dt, max_iters):
    def body(s):
        i, k, rng, log_prod = s
        rng, sub = split_words(rng, 2)
        k = jnp.where(log_prod > -lam, k + 1, k)
        u = _uniform(sub, shape, np.dtype(np.float32), 0.0, 1.0)
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond(s):
        return jnp.logical_and(jnp.any(s[3] > -lam), s[0] < max_iters)

    init = (jnp.asarray(0), jnp.zeros(shape, dt), key_words(key), jnp.zeros(shape, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dt)


def _poisson_rejection(key, lam, shape, dt, max_iters):
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(s):
        i, k_out, accepted, rng = s
        rng, ku, kv = split_words(rng, 3)
        u = _uniform(ku, shape, lam.dtype, 0.0, 1.0) - 0.5
        v = _uniform(kv, shape, lam.dtype, 0.0, 1.0)
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + lam + 0.43)
        s_ = jnp.log(v * inv_alpha / (a / (us * us) + b))
        t_ = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = jnp.logical_and(us >= 0.07, v <= v_r)
        reject = jnp.logical_or(k < 0, jnp.logical_and(us < 0.013, v > us))
        accept = jnp.logical_or(accept1, jnp.logical_and(jnp.logical_not(reject), s_ <= t_))
        return i + 1, jnp.where(accept, k, k_out), jnp.logical_or(accepted, accept), rng

    def cond(s):
        return jnp.logical_and(jnp.any(jnp.logical_not(s[2])), s[0] < max_iters)

    init = (jnp.asarray(0), jnp.full(shape, -1.0, lam.dtype), jnp.zeros(shape, bool),
            key_words(key))
    return lax.while_loop(cond, body, init)[1].astype(dt)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(``lam``) counts (Knuth's method below 10, Hormann's transformed
    rejection above, as JAX; matches its distribution).

    Examples
    --------
    >>> from absjit import random
    >>> random.poisson(random.PRNGKey(0), 3.0, (4,)).dtype
    dtype('int32')
    """
    key = check_key("poisson", key)
    dt = dtypes.default_int() if dtype is None else dtypes.user_dtype(dtype)
    if not dtypes.is_integer(dt):
        raise TypeError(f"poisson: dtype must be an integer dtype, got {dt}")
    shape = check_param_shapes("poisson", shape, lam)
    lam = jnp.broadcast_to(_cast(lam, np.float32), shape)
    max_iters = int(np.iinfo(dt).max)
    use_knuth = jnp.logical_or(jnp.isnan(lam), lam < 10)
    lam_knuth = jnp.where(use_knuth, lam, 0.0)
    lam_rej = jnp.where(use_knuth, 1e5, lam)
    result = jnp.where(use_knuth, _poisson_knuth(key, lam_knuth, shape, dt, max_iters),
                       _poisson_rejection(key, lam_rej, shape, dt, max_iters))
    return jnp.where(lam == 0, jnp.zeros_like(result), result)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the ``d``-dimensional unit ``p``-norm ball (as JAX)."""
    key = check_key("ball", key)
    dt = float_dtype("ball", dtype)
    shape = canonical_shape("ball", shape)
    d = int(d)
    k1, k2 = split(key)
    g1, g2 = split(k1)
    g = rademacher(g2, (*shape, d), dt) * _gamma_linear(
        g1, jnp.full((*shape, d), 1.0 / p, dt)) ** (1.0 / p)
    e = _exponential(k2, shape, dt)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1.0 / p))[..., None]


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal samples ``mean + L @ z`` with ``L`` the Cholesky factor of
    ``cov`` (``method='cholesky'``, JAX's default; the factor is an unrolled
    decomposition, so ``n`` should be small). Equal to JAX's draws up to rounding.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import random
    >>> random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), (3,)).shape
    (3, 2)
    """
    from ..scipy.stats.multivariate_normal import cholesky_unrolled
    key = check_key("multivariate_normal", key)
    if method != "cholesky":
        raise NotImplementedError("multivariate_normal: only method='cholesky' is provided")
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    dt = float_dtype("multivariate_normal", dtype if dtype is not None else (
        mean.dtype if dtypes.is_float(mean.dtype) else None))
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got {mean.ndim}")
    n = mean.shape[-1]
    if cov.ndim < 2 or not unify_shapes(cov.shape[-2:], (n, n), "multivariate_normal"):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    batch = tuple(broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    shape = batch if shape is None else check_param_shapes("normal", shape,
                                                           np.empty(batch))
    factor = cholesky_unrolled(cov.astype(dt))
    z = _normal_real(key, tuple(shape) + (n,), dt)
    return mean.astype(dt) + jnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Random ``n x m`` matrices with orthonormal columns (rows, if ``n < m``), Haar
    distributed: the Q factor, with a positive ``R`` diagonal, of a Gaussian matrix (as
    JAX). The factorisation is an unrolled modified Gram-Schmidt (static, small
    ``n``), so it agrees with JAX's LAPACK-based draw up to rounding.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import random
    >>> q = np.asarray(random.orthogonal(random.PRNGKey(0), 3))
    >>> bool(np.allclose(q.T @ q, np.eye(3), atol=1e-5))
    True
    """
    key = check_key("orthogonal", key)
    dt = float_dtype("orthogonal", dtype)
    shape = canonical_shape("orthogonal", shape)
    n = int(n)
    m = n if m is None else int(m)
    rows, cols = max(n, m), min(n, m)
    z = _normal_real(key, (*shape, rows, cols), dt)
    qs = []
    for j in range(cols):
        v = z[..., :, j]
        for q in qs:
            v = v - jnp.sum(q * v, axis=-1, keepdims=True) * q
        qs.append(v / jnp.sqrt(jnp.sum(v * v, axis=-1, keepdims=True)))
    x = jnp.stack(qs, axis=-1)
    return jnp.swapaxes(x, -1, -2) if n < m else x
