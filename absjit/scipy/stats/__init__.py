"""``absjit.scipy.stats``: log-densities and friends of common distributions, with
``jax.scipy.stats``'s signatures (``norm``, ``multivariate_normal``, ``bernoulli``,
``poisson``, ``beta``, ``gamma``) and the sample summaries ``sem``, ``rankdata`` and
``mode``."""
from . import bernoulli, beta, gamma, multivariate_normal, norm, poisson  # noqa: F401
from ._summary import ModeResult, mode, rankdata, sem  # noqa: F401

__all__ = ["norm", "multivariate_normal", "bernoulli", "poisson", "beta", "gamma", "sem",
           "rankdata", "mode", "ModeResult"]
