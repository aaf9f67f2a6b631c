"""The gamma distribution: ``logpdf pdf``.

Examples
--------
>>> from absjit.scipy.stats import gamma
>>> round(float(gamma.pdf(1.0, 1.0)), 6)   # exp(-1)
0.367879
"""
import numpy as np

from ... import numpy as jnp
from ..special import gammaln, promote_inexact, xlogy

__all__ = ["logpdf", "pdf"]


def logpdf(x, a, loc=0, scale=1):
    """``log Gamma(x; a, scale)`` for ``x >= loc``; ``-inf`` below."""
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, jnp.ones_like(x))
    out = xlogy(a - 1, y) - y - (gammaln(a) + jnp.log(scale))
    return jnp.where(ok, out, -np.inf)


def pdf(x, a, loc=0, scale=1):
    """The gamma density."""
    return jnp.exp(logpdf(x, a, loc, scale))
