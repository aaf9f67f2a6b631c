"""The eager fast path of binary operators: ``x + y`` on two ``Array`` values of one
dtype, neither weakly typed, outside any trace.

The first call for a signature (operator, dtypes, shapes, configuration) traces the
operator once; when that gives a single primitive applied to the two operands as they
are (no promotion, no broadcast), the primitive's NumPy implementation and result aval
are remembered, and later calls run the implementation directly — skipping promotion,
the trace stack and abstract evaluation, whose results cannot differ for the same
signature. Any other signature takes the ordinary path, and so does every call when
the result would need promotion or broadcasting.
"""
from __future__ import annotations

import numpy as np
from numpy import ndarray as _ndarray

from ..array import Array
from ..config import config
from ..core.primitive import impl_rules
from ..core.trace import _BASE_STATE, _STATE, wrap_outputs
from ..interpreters.staging import make_jaxpr

__all__ = ["binary", "FAST_OPERATORS"]

#: Operators with a fast path (``absjit.numpy`` names).
FAST_OPERATORS = frozenset({"add", "subtract", "multiply", "true_divide", "equal",
                            "not_equal", "less", "less_equal", "greater", "greater_equal",
                            "bitwise_and", "bitwise_or", "bitwise_xor"})
_MAX_ENTRIES = 4096
_cache: dict = {}


def _forget(name, value) -> None:
    _cache.clear()  # a configuration change may change any result type


config.on_update(_forget)


def _learn(fn, x, y):
    """``(impl, params, result aval, exact)`` when ``fn(x, y)`` is one primitive on
    ``x`` and ``y`` as they are, else False; ``exact``: the implementation returns an
    ndarray of the result's dtype and shape (NumPy's result types depend on the input
    dtypes only), so it needs no fixing up."""
    closed = make_jaxpr(fn)(x, y)
    jaxpr = closed.jaxpr
    if closed.consts or jaxpr.constvars or len(jaxpr.eqns) != 1:
        return False
    (eqn,) = jaxpr.eqns
    prim = eqn.primitive
    if prim.multiple_results or prim.effectful or prim not in impl_rules \
            or tuple(eqn.invars) != tuple(jaxpr.invars) \
            or tuple(eqn.outvars) != tuple(jaxpr.outvars):
        return False
    impl, params, aval = impl_rules[prim], dict(eqn.params), eqn.outvars[0].aval
    (out,) = impl(x._value, y._value, **params)
    exact = type(out) is np.ndarray and out.dtype == aval.dtype and out.shape == aval.shape
    return impl, params, aval, exact


def binary(namespace, fn_name, x, y):
    """``namespace.<fn_name>(x, y)`` (``namespace`` is ``absjit.numpy``) through the fast
    path, or None when it does not apply (the caller then takes the ordinary path)."""
    vx, vy = x._value, y._value
    if x._weak_type or y._weak_type or vx.dtype != vy.dtype \
            or _STATE.get() is not _BASE_STATE:
        return None
    key = (fn_name, vx.dtype, vx.shape, vy.shape)
    hit = _cache.get(key)
    if hit is None:
        if len(_cache) >= _MAX_ENTRIES:
            _cache.clear()
        hit = _cache[key] = _learn(getattr(namespace, fn_name), x, y)
    if not hit:
        return None
    impl, params, aval, exact = hit
    (out,) = impl(vx, vy, **params) if params else impl(vx, vy)
    if exact and type(out) is _ndarray:
        # Array._new, inlined: this path is all overhead
        out.flags.writeable = False
        res = _object_new(Array)
        res._value = out
        res._weak_type = aval.weak_type
        res._aval = aval
        return res
    return wrap_outputs((out,), (aval,))[0]


_object_new = object.__new__
