"""``absjit.nn``: neural-network activation functions and initializers, as in
``jax.nn``.

Examples
--------
>>> import absjit.numpy as jnp
>>> from absjit import nn
>>> nn.relu(jnp.array([-1.0, 2.0]))
Array([0., 2.], dtype=float32)
"""
from . import _functions
from ._functions import *  # noqa: F401,F403
from ._attention import dot_product_attention  # noqa: F401
from . import initializers  # noqa: F401
from ..scipy.special import logsumexp  # noqa: F401  (jax.nn.logsumexp is the same function)

__all__ = list(_functions.__all__) + ["dot_product_attention", "initializers", "logsumexp"]
