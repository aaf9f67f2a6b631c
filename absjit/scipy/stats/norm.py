"""The normal distribution: ``pdf logpdf cdf logcdf ppf sf logsf isf``.

Examples
--------
>>> from absjit.scipy.stats import norm
>>> round(float(norm.pdf(0.0)), 6)
0.398942
"""
import numpy as np

from ... import numpy as jnp
from ..special import log_ndtr, ndtr, ndtri, promote_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "ppf", "sf", "logsf", "isf"]


def logpdf(x, loc=0, scale=1):
    """``log N(x; loc, scale**2)``."""
    x, loc, scale = promote_inexact(x, loc, scale)
    scale2 = scale * scale
    return (jnp.log(2 * np.pi * scale2) + (x - loc) ** 2 / scale2) / -2


def pdf(x, loc=0, scale=1):
    """The normal density."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The normal CDF ``ndtr((x - loc) / scale)``."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """``log_ndtr((x - loc) / scale)``."""
    x, loc, scale = promote_inexact(x, loc, scale)
    return log_ndtr((x - loc) / scale)


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc + scale * ndtri(q)``."""
    q, loc, scale = promote_inexact(q, loc, scale)
    return ndtri(q) * scale + loc


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``, computed as ``ndtr((loc - x) / scale)`` so
    that it keeps full relative precision in the upper tail.

    Examples
    --------
    >>> from absjit.scipy.stats import norm
    >>> norm.sf(1.0)
    Array(0.15865529, dtype=float32)
    """
    x, loc, scale = promote_inexact(x, loc, scale)
    return ndtr((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    """``log(sf(x))``, computed as ``log_ndtr((loc - x) / scale)`` (finite far into
    the upper tail).

    Examples
    --------
    >>> from absjit.scipy.stats import norm
    >>> norm.logsf(0.0)
    Array(-0.6931472, dtype=float32)
    """
    x, loc, scale = promote_inexact(x, loc, scale)
    return log_ndtr((loc - x) / scale)


def isf(q, loc=0, scale=1):
    """The inverse survival function ``loc - scale * ndtri(q)``.

    Examples
    --------
    >>> from absjit.scipy.stats import norm
    >>> norm.isf(0.5, 1.0, 2.0)
    Array(1., dtype=float32)
    """
    q, loc, scale = promote_inexact(q, loc, scale)
    return loc - scale * ndtri(q)
