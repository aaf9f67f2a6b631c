"""The jaxpr types and primitives (``jax.extend.core``).

A :class:`Jaxpr` has ``constvars``, ``invars``, ``eqns`` and ``outvars``; each
:class:`JaxprEqn` has ``primitive``, ``invars`` (:class:`Var` or :class:`Literal`, whose
``val`` is the value), ``outvars`` and ``params``; ``eqn.primitive.bind(*values,
**eqn.params)`` applies it (one value, or a list when ``primitive.multiple_results``).
A :class:`ClosedJaxpr` pairs a jaxpr with the values of its constvars (``consts``, also
``literals`` as JAX 0.10 names them).

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> from absjit.extend.core import Literal
>>> closed = absjit.make_jaxpr(lambda x: jnp.tanh(x) * 2.0)(1.0)
>>> env = dict(zip(closed.jaxpr.invars, [1.0]))
>>> for eqn in closed.jaxpr.eqns:
...     vals = [x.val if type(x) is Literal else env[x] for x in eqn.invars]
...     env[eqn.outvars[0]] = eqn.primitive.bind(*vals, **eqn.params)
>>> env[closed.jaxpr.outvars[0]]
Array(1.5231884, dtype=float32)
"""
from ..core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, jaxpr_as_fun
from ..core.primitive import Primitive
from ..core.avals import ShapedArray
from ..core.trace import get_aval

__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Var", "Primitive",
           "ShapedArray", "jaxpr_as_fun", "get_aval"]
