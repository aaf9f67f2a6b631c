"""The multivariate normal distribution: ``logpdf pdf``.

The covariance is factorised by an unrolled Cholesky decomposition built from
elementwise and reduction operations (the matrix size is static), suitable for the
small dimensions these densities are used with; batches of ``x`` broadcast.

Examples
--------
>>> import numpy as np
>>> from absjit.scipy.stats import multivariate_normal
>>> round(float(multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 5)
-1.83788
"""
import numpy as np

from ... import numpy as jnp
from ..special import promote_inexact

__all__ = ["logpdf", "pdf", "cholesky_unrolled", "solve_lower_unrolled"]


def cholesky_unrolled(cov):
    """The lower Cholesky factor of ``cov`` (``(..., n, n)``, static ``n``)."""
    n = cov.shape[-1]
    cols = []
    for j in range(n):
        s = cov[..., j:, j]
        for k in range(j):
            s = s - cols[k][..., j:] * cols[k][..., j:j + 1]
        d = jnp.sqrt(s[..., :1])
        col = s / d
        pad = jnp.zeros(cov.shape[:-2] + (j,), cov.dtype)
        cols.append(jnp.concatenate([pad, col], axis=-1))
    return jnp.stack(cols, axis=-1)


def solve_lower_unrolled(L, b):
    """``L^{-1} b`` for lower-triangular ``L`` (``(..., n, n)``) and ``b`` (``(..., n)``)."""
    n = L.shape[-1]
    xs = []
    for i in range(n):
        s = b[..., i]
        for k in range(i):
            s = s - L[..., i, k] * xs[k]
        xs.append(s / L[..., i, i])
    return jnp.stack(xs, axis=-1)


def logpdf(x, mean, cov, allow_singular=None):
    """``log N(x; mean, cov)``; ``cov`` may be a scalar, a vector (diagonal) or a
    matrix."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_inexact(x, mean, cov)
    if mean.ndim == 0:
        if cov.ndim:
            raise ValueError("multivariate_normal.logpdf got incompatible shapes")
        return (-1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (np.log(2 * np.pi)
                                                             + jnp.log(cov)))
    n = mean.shape[-1]
    if cov.ndim < 2:
        cov = cov * jnp.eye(n, dtype=cov.dtype) if cov.ndim == 0 else jnp.diag(cov)
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal.logpdf got incompatible shapes: mean "
                         f"{mean.shape}, cov {cov.shape}")
    L = cholesky_unrolled(cov)
    y = solve_lower_unrolled(L, x - mean)
    logdet = jnp.sum(jnp.log(jnp.diagonal(L, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(y * y, axis=-1) - n / 2 * np.log(2 * np.pi) - logdet


def pdf(x, mean, cov):
    """The multivariate normal density."""
    return jnp.exp(logpdf(x, mean, cov))
