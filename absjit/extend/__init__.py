"""Pieces for writing one's own transformations (``jax.extend``).

:mod:`absjit.extend.core` holds the jaxpr types and :class:`Primitive`, so that a
custom interpreter written for JAX (walk ``make_jaxpr(f)(x).jaxpr`` and ``bind`` each
equation's primitive) runs on absjit.

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> from absjit.extend import core
>>> closed = absjit.make_jaxpr(lambda x: jnp.exp(x) + 1.0)(0.0)
>>> [type(x) is core.Literal for x in closed.jaxpr.eqns[1].invars]
[False, True]
"""
from . import core

__all__ = ["core"]
