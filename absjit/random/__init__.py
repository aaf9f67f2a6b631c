"""``absjit.random``: counter-based pseudo-random numbers, equal to ``jax.random``.

The same seed and calls give the same numbers as JAX 0.10 with its defaults
(``threefry2x32``, ``jax_threefry_partitionable=True``): keys, ``split``, ``fold_in``,
``bits`` (uint8/16/32/64) and ``randint`` are equal integers; float32 ``uniform``,
``normal``, ``truncated_normal``, ``exponential`` and ``laplace`` are bit for bit equal to
``jax.random`` under ``jax.jit`` on the CPU, eagerly and compiled (``erf_inv`` and
``log1p`` follow XLA's CPU algorithms with its fused multiply-adds), and so are
``geometric`` and ``triangular``. Samplers built on ``log``/``exp``/``tan``/``pow``/
``sqrt`` (``rayleigh``, ``maxwell``, ``wald``, ...) follow JAX's algorithms and key
schedules and differ from its draws by an ulp or a few on some draws; rejection
samplers (``gamma``, ``poisson``, and ``f``/``generalized_normal`` built on gamma)
follow JAX's algorithms and match its distribution (a draw whose acceptance test's
last bit differs takes another path). ``binomial`` and ``multinomial`` match JAX's
distribution only (their rejection sampler's key schedule is absjit's own).

Functions are pure: a key always gives the same numbers, ``split`` derives
independent keys. A key is either a typed key array (``key(seed)``: shape ``()``,
dtype ``key<fry>``, as JAX's new-style keys) or a raw ``uint32[2]`` array
(``PRNGKey(seed)``, JAX's legacy keys); every function takes both, with the same
numbers, and ``split``/``fold_in`` return the form they are given. ``key_data`` and
``wrap_key_data`` convert between them. Keys and seeds may be traced, so random code
works under ``jit``, ``vmap`` (batches of keys) and ``grad`` (zero tangents), and keys
are valid ``jit`` arguments, outputs and loop carries.

Examples
--------
>>> from absjit import random
>>> key = random.key(0)
>>> key, sub = random.split(key)
>>> random.normal(sub, (2, 3)).shape
(2, 3)
"""
from ._keys import (PRNGKey, bits, fold_in, key, key_data, key_impl, split,  # noqa: F401
                    threefry_2x32, wrap_key_data)
from ._basic import (bernoulli, categorical, cauchy, choice, exponential, gumbel,  # noqa: F401
                     laplace, logistic, lognormal, normal, pareto, permutation, rademacher,
                     randint, truncated_normal, uniform, weibull_min)
from ._gamma import (ball, beta, chisquare, dirichlet, gamma, loggamma,  # noqa: F401
                     multivariate_normal, orthogonal, poisson, t)
from ._more import (binomial, clone, double_sided_maxwell, f, generalized_normal,  # noqa: F401
                    geometric, key_dtype, maxwell, multinomial, rayleigh, triangular, wald)

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in", "bits",
           "threefry_2x32", "uniform", "normal", "randint", "bernoulli", "categorical",
           "choice", "permutation", "truncated_normal", "exponential", "gumbel", "laplace",
           "logistic", "rademacher", "cauchy", "lognormal", "pareto", "weibull_min",
           "gamma", "loggamma", "beta", "dirichlet", "poisson", "t", "chisquare", "ball",
           "multivariate_normal", "orthogonal", "binomial", "geometric", "multinomial",
           "maxwell", "double_sided_maxwell", "rayleigh", "triangular", "wald", "f",
           "generalized_normal", "clone", "key_dtype"]
