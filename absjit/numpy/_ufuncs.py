"""Elementwise functions of ``absjit.numpy``: promotion + broadcasting, then one lax op.

Each is a thin wrapper; anything with more logic than "promote and call lax" is written
out below its one-line siblings.
"""
from __future__ import annotations

from .. import dtypes
from ..ops import elementwise as ew
from ._promote import promote_args, promote_args_inexact

__all__ = []


def _binary(name, lax_fn, inexact=False, doc=None):
    promote = promote_args_inexact if inexact else promote_args

    def fn(x1, x2, /):
        a, b = promote(name, x1, x2)
        return lax_fn(a, b)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or f"NumPy-style ``{name}`` with JAX type promotion.\n\n" \
        f"Examples\n--------\n>>> jnp.{name}(jnp.array([1., 2.]), 2.)  # doctest: +SKIP\n"
    __all__.append(name)
    return fn


def _unary(name, lax_fn, inexact=False, doc=None):
    promote = promote_args_inexact if inexact else promote_args

    def fn(x, /):
        (a,) = promote(name, x)
        return lax_fn(a)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or f"NumPy-style ``{name}``, elementwise."
    __all__.append(name)
    return fn


add = _binary("add", lambda a, b: ew.bitwise_or(a, b) if dtypes.is_bool(a.dtype)
              else ew.add(a, b))
subtract = _binary("subtract", ew.sub)
multiply = _binary("multiply", lambda a, b: ew.bitwise_and(a, b) if dtypes.is_bool(a.dtype)
                   else ew.mul(a, b))
true_divide = _binary("true_divide", ew.div, inexact=True)
divide = true_divide
__all__.append("divide")
maximum = _binary("maximum", ew.max)
minimum = _binary("minimum", ew.min)
arctan2 = _binary("arctan2", ew.atan2, inexact=True)
nextafter = _binary("nextafter", ew.nextafter, inexact=True)
equal = _binary("equal", ew.eq)
not_equal = _binary("not_equal", ew.ne)
less = _binary("less", ew.lt)
less_equal = _binary("less_equal", ew.le)
greater = _binary("greater", ew.gt)
greater_equal = _binary("greater_equal", ew.ge)
bitwise_and = _binary("bitwise_and", ew.bitwise_and)
bitwise_or = _binary("bitwise_or", ew.bitwise_or)
bitwise_xor = _binary("bitwise_xor", ew.bitwise_xor)
left_shift = _binary("left_shift", ew.shift_left)
right_shift = _binary("right_shift", ew.shift_right_arithmetic)

negative = _unary("negative", ew.neg)
exp = _unary("exp", ew.exp, inexact=True)
exp2 = _unary("exp2", ew.exp2, inexact=True)
expm1 = _unary("expm1", ew.expm1, inexact=True)
log = _unary("log", ew.log, inexact=True)
log1p = _unary("log1p", ew.log1p, inexact=True)
sqrt = _unary("sqrt", ew.sqrt, inexact=True)
cbrt = _unary("cbrt", ew.cbrt, inexact=True)
sin = _unary("sin", ew.sin, inexact=True)
cos = _unary("cos", ew.cos, inexact=True)
tan = _unary("tan", ew.tan, inexact=True)
arcsin = _unary("arcsin", ew.asin, inexact=True)
arccos = _unary("arccos", ew.acos, inexact=True)
arctan = _unary("arctan", ew.atan, inexact=True)
sinh = _unary("sinh", ew.sinh, inexact=True)
cosh = _unary("cosh", ew.cosh, inexact=True)
tanh = _unary("tanh", ew.tanh, inexact=True)
arcsinh = _unary("arcsinh", ew.asinh, inexact=True)
arccosh = _unary("arccosh", ew.acosh, inexact=True)
arctanh = _unary("arctanh", ew.atanh, inexact=True)
conjugate = _unary("conjugate", ew.conj)
conj = conjugate
__all__.append("conj")


def sign(x, /):
    """Elementwise sign (-1, 0, 1); bools pass through."""
    (a,) = promote_args("sign", x)
    return a if dtypes.is_bool(a.dtype) else ew.sign(a)


def absolute(x, /):
    """Elementwise absolute value; unsigned and bool inputs are returned as is."""
    (a,) = promote_args("absolute", x)
    if dtypes.is_bool(a.dtype) or a.dtype.kind == "u":
        return a
    return ew.abs(a)


abs = absolute  # noqa: A001 - numpy name


def floor(x, /):
    """Round down; integers are returned unchanged (as NumPy does)."""
    (a,) = promote_args("floor", x)
    return a if not dtypes.is_inexact(a.dtype) else ew.floor(a)


def ceil(x, /):
    """Round up; integers are returned unchanged."""
    (a,) = promote_args("ceil", x)
    return a if not dtypes.is_inexact(a.dtype) else ew.ceil(a)


def invert(x, /):
    """Bitwise NOT (logical NOT for bools)."""
    (a,) = promote_args("invert", x)
    return ew.bitwise_not(a)


bitwise_not = invert
__all__ += ["sign", "absolute", "abs", "floor", "ceil", "invert", "bitwise_not"]
