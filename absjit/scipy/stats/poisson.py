"""The Poisson distribution: ``logpmf pmf``.

Examples
--------
>>> from absjit.scipy.stats import poisson
>>> round(float(poisson.pmf(0, 2.0)), 6)   # exp(-2)
0.135335
"""
import numpy as np

from ... import numpy as jnp
from ..special import gammaln, promote_inexact, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """``log P(k) = k log mu - lgamma(k + 1) - mu``; ``-inf`` off the integers >= 0."""
    k, mu, loc = promote_inexact(k, mu, loc)
    x = k - loc
    out = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where(jnp.logical_or(x < 0, x != jnp.floor(x)), -np.inf, out)


def pmf(k, mu, loc=0):
    """``P(k)``."""
    return jnp.exp(logpmf(k, mu, loc))
