"""The beta distribution: ``logpdf pdf``.

Examples
--------
>>> from absjit.scipy.stats import beta
>>> round(float(beta.pdf(0.5, 2.0, 2.0)), 4)
1.5
"""
import numpy as np

from ... import numpy as jnp
from ..special import betaln, promote_inexact, xlog1py, xlogy

__all__ = ["logpdf", "pdf"]


def logpdf(x, a, b, loc=0, scale=1):
    """``log Beta(x; a, b)`` on ``[loc, loc + scale]``; ``-inf`` outside, NaN for
    non-positive ``a``, ``b`` or ``scale``."""
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    out = -betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - jnp.log(scale)
    out = jnp.where(jnp.logical_or(x > loc + scale, x < loc), -np.inf, out)
    bad = jnp.logical_or(jnp.logical_or(a <= 0, b <= 0), scale <= 0)
    return jnp.where(bad, np.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    """The beta density."""
    return jnp.exp(logpdf(x, a, b, loc, scale))
