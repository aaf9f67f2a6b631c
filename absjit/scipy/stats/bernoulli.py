"""The Bernoulli distribution: ``logpmf pmf``.

Examples
--------
>>> from absjit.scipy.stats import bernoulli
>>> round(float(bernoulli.pmf(1, 0.3)), 6)
0.3
"""
import numpy as np

from ... import numpy as jnp
from ..special import promote_inexact, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """``log P(k)``; ``-inf`` outside ``{0, 1}`` (shifted by ``loc``)."""
    k, p, loc = promote_inexact(k, p, loc)
    x = k - loc
    out = xlogy(x, p) + xlog1py(1 - x, -p)
    return jnp.where(jnp.logical_or(x < 0, x > 1), -np.inf, out)


def pmf(k, p, loc=0):
    """``P(k)``."""
    return jnp.exp(logpmf(k, p, loc))
