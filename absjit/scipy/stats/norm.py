"""The normal distribution: ``pdf logpdf cdf logcdf ppf``.

Examples
--------
>>> from absjit.scipy.stats import norm
>>> round(float(norm.pdf(0.0)), 6)
0.398942
"""
import numpy as np

from ... import numpy as jnp
from ..special import log_ndtr, ndtr, ndtri, promote_inexact

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "ppf"]


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
