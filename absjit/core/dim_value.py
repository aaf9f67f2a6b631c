"""``dim_value``: a symbolic size used as a value.

At the ``ranked`` level sizes are symbolic (:class:`~absjit.core.dims.Dim`); when traced
code uses one as a number — ``x.sum() / x.shape[0]``, the count in ``jnp.mean`` — the
staging trace records a ``dim_value[size=x0]`` equation. It has no operands: compiled
code reads the size from the argument it measures, and the interpreter evaluates it
once the sizes are bound. (Its JVP and batching rules are in ``absjit.ops.shape_values``.)
"""
from __future__ import annotations

import numpy as np

from .avals import ShapedArray
from .dims import register_dim_value
from .fusion import Value, def_fusion
from .primitive import Primitive, abstract_eval_rules, impl_rules
from .shapes import ix_const

__all__ = ["dim_value_p"]

dim_value_p = Primitive("dim_value", param_order=("size", "dtype"))


def _dim_value_abstract(*, size, dtype):
    return [ShapedArray((), dtype, True)]


def _dim_value_impl(*, size, dtype):
    return [np.asarray(int(size), dtype=dtype)]


def _dim_value_index(out_idx, out_aval, *, size, dtype):
    return ix_const(size)


abstract_eval_rules[dim_value_p] = _dim_value_abstract
impl_rules[dim_value_p] = _dim_value_impl
def_fusion(dim_value_p, Value(_dim_value_index))
register_dim_value(dim_value_p)  # what Dim.value binds
