"""Elementwise primitives: arithmetic, transcendental, comparison, bitwise, casts,
``select_n`` and ``clamp``.

All operands of one primitive share a dtype (``absjit.lax`` does no promotion); rank-0
operands broadcast against the others, otherwise shapes must be equal (``absjit.numpy``
inserts ``broadcast_in_dim``). The result is weakly typed when every operand is.

Integer semantics, shared by every backend:
  * ``div`` truncates toward zero; ``x // 0 == -1``; ``INT_MIN // -1 == INT_MIN``.
  * ``rem`` takes the sign of the dividend; ``x % 0 == x``.
  * float → integer casts truncate toward zero and saturate to the target's range;
    NaN becomes 0.
  * shifts by an amount outside ``[0, bits)`` give 0 (logical/left) or the sign fill
    (arithmetic).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.avals import ShapedArray
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ._util import (binop_shape, check_dtype_kind, same_dtypes, standard_naryop_abstract)

__all__ = [
    "add_p",
    "add",
    "sub_p",
    "sub",
    "mul_p",
    "mul",
    "div_p",
    "div",
    "rem_p",
    "rem",
    "max_p",
    "max",
    "min_p",
    "min",
    "atan2_p",
    "atan2",
    "nextafter_p",
    "nextafter",
    "neg_p",
    "neg",
    "sign_p",
    "sign",
    "abs_p",
    "abs",
    "exp_p",
    "exp",
    "exp2_p",
    "exp2",
    "expm1_p",
    "expm1",
    "log_p",
    "log",
    "log1p_p",
    "log1p",
    "sqrt_p",
    "sqrt",
    "rsqrt_p",
    "rsqrt",
    "cbrt_p",
    "cbrt",
    "sin_p",
    "sin",
    "cos_p",
    "cos",
    "tan_p",
    "tan",
    "asin_p",
    "asin",
    "acos_p",
    "acos",
    "atan_p",
    "atan",
    "sinh_p",
    "sinh",
    "cosh_p",
    "cosh",
    "tanh_p",
    "tanh",
    "asinh_p",
    "asinh",
    "acosh_p",
    "acosh",
    "atanh_p",
    "atanh",
    "floor_p",
    "floor",
    "ceil_p",
    "ceil",
    "is_finite_p",
    "is_finite",
    "logistic_p",
    "logistic",
    "eq_p",
    "eq",
    "ne_p",
    "ne",
    "lt_p",
    "lt",
    "le_p",
    "le",
    "gt_p",
    "gt",
    "ge_p",
    "ge",
    "and_p",
    "bitwise_and",
    "or_p",
    "bitwise_or",
    "xor_p",
    "bitwise_xor",
    "not_p",
    "bitwise_not",
    "real_p",
    "real",
    "imag_p",
    "imag",
    "conj_p",
    "conj",
    "shift_left_p",
    "shift_left",
    "shift_right_arithmetic_p",
    "shift_right_arithmetic",
    "shift_right_logical_p",
    "shift_right_logical",
    "pow_p",
    "pow",
    "integer_pow_p",
    "integer_pow",
    "round_p",
    "round",
    "ROUND_AWAY_FROM_ZERO",
    "ROUND_TO_NEAREST_EVEN",
    "convert_element_type_p",
    "convert_element_type",
    "float_to_int",
    "select_n_p",
    "select_n",
    "select",
    "clamp_p",
    "clamp",
    "stop_gradient_p",
    "stop_gradient",
]

def _quiet():
    return np.errstate(all="ignore")


def _define(name: str, np_impl, kind: str, nargs: int, out_dtype=None, quiet=False):
    """A standard elementwise primitive and its one-line lax function."""
    prim = Primitive(name)
    abstract_eval_rules[prim] = standard_naryop_abstract(name, kind, out_dtype)
    if quiet:
        def impl(*xs):
            with _quiet():
                return [np_impl(*xs)]
    else:
        def impl(*xs):
            return [np_impl(*xs)]
    impl.__name__ = f"{name}_impl"
    impl_rules[prim] = impl
    if nargs == 1:
        def fn(x):
            return prim.bind(x)
    else:
        def fn(x, y):
            return prim.bind(x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (``absjit.lax.{name}``): no implicit promotion."
    return prim, fn


def _bool_out(dt):
    return dtypes.bool_


def _real_dtype(dt):
    return np.dtype(np.float32) if dt == dtypes.complex64 else (
        np.dtype(np.float64) if dt == dtypes.complex128 else dt)


# ---------------------------------------------------------------------------
# Integer division and remainder with one documented rule for every backend
# ---------------------------------------------------------------------------
def _div_impl(x, y):
    if x.dtype.kind in "iu":
        with _quiet():
            safe_y = np.where(y == 0, 1, y)
            if x.dtype.kind == "i":
                # INT_MIN // -1 overflows: define it as INT_MIN (wraparound).
                overflow = (y == -1)
                safe_y = np.where(overflow, 1, safe_y)
                q = np.trunc(np.true_divide(x, safe_y)) if x.dtype.itemsize < 8 else None
                if q is None:  # int64: avoid float rounding
                    q = np.floor_divide(x, safe_y)
                    fix = (np.remainder(x, safe_y) != 0) & ((x < 0) != (safe_y < 0))
                    q = q + fix
                q = np.asarray(q).astype(x.dtype)
                q = np.where(overflow, -x, q).astype(x.dtype)
            else:
                q = np.floor_divide(x, safe_y)
            return np.where(y == 0, np.array(-1).astype(x.dtype), q).astype(x.dtype)
    with _quiet():
        return np.true_divide(x, y)


def _rem_impl(x, y):
    with _quiet():
        if x.dtype.kind in "iu":
            safe_y = np.where(y == 0, 1, y)
            r = np.fmod(x, safe_y)
            return np.where(y == 0, x, r).astype(x.dtype)
        return np.fmod(x, y)


add_p, add = _define("add", np.add, "number", 2)
sub_p, sub = _define("sub", np.subtract, "number", 2)
mul_p, mul = _define("mul", np.multiply, "number", 2)
div_p, div = _define("div", _div_impl, "number", 2)
rem_p, rem = _define("rem", _rem_impl, "number", 2)
max_p, max = _define("max", np.maximum, "any", 2)  # noqa: A001 - lax.max
min_p, min = _define("min", np.minimum, "any", 2)  # noqa: A001 - lax.min
atan2_p, atan2 = _define("atan2", np.arctan2, "float", 2, quiet=True)
nextafter_p, nextafter = _define("nextafter", np.nextafter, "float", 2)

neg_p, neg = _define("neg", np.negative, "number", 1)
sign_p, sign = _define("sign", np.sign, "number", 1, quiet=True)
abs_p, abs = _define("abs", np.abs, "number", 1, out_dtype=_real_dtype)  # noqa: A001
exp_p, exp = _define("exp", np.exp, "inexact", 1, quiet=True)
exp2_p, exp2 = _define("exp2", np.exp2, "inexact", 1, quiet=True)
expm1_p, expm1 = _define("expm1", np.expm1, "inexact", 1, quiet=True)
log_p, log = _define("log", np.log, "inexact", 1, quiet=True)
log1p_p, log1p = _define("log1p", np.log1p, "inexact", 1, quiet=True)
sqrt_p, sqrt = _define("sqrt", np.sqrt, "inexact", 1, quiet=True)
rsqrt_p, rsqrt = _define("rsqrt", lambda x: np.reciprocal(np.sqrt(x)), "inexact", 1,
                         quiet=True)
cbrt_p, cbrt = _define("cbrt", np.cbrt, "float", 1)
sin_p, sin = _define("sin", np.sin, "inexact", 1, quiet=True)
cos_p, cos = _define("cos", np.cos, "inexact", 1, quiet=True)
tan_p, tan = _define("tan", np.tan, "inexact", 1, quiet=True)
asin_p, asin = _define("asin", np.arcsin, "inexact", 1, quiet=True)
acos_p, acos = _define("acos", np.arccos, "inexact", 1, quiet=True)
atan_p, atan = _define("atan", np.arctan, "inexact", 1, quiet=True)
sinh_p, sinh = _define("sinh", np.sinh, "inexact", 1, quiet=True)
cosh_p, cosh = _define("cosh", np.cosh, "inexact", 1, quiet=True)
tanh_p, tanh = _define("tanh", np.tanh, "inexact", 1, quiet=True)
asinh_p, asinh = _define("asinh", np.arcsinh, "inexact", 1, quiet=True)
acosh_p, acosh = _define("acosh", np.arccosh, "inexact", 1, quiet=True)
atanh_p, atanh = _define("atanh", np.arctanh, "inexact", 1, quiet=True)
floor_p, floor = _define("floor", np.floor, "float", 1)
ceil_p, ceil = _define("ceil", np.ceil, "float", 1)
is_finite_p, is_finite = _define("is_finite", np.isfinite, "float", 1, out_dtype=_bool_out)
logistic_p, logistic = _define("logistic", lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype),
                               "inexact", 1, quiet=True)

eq_p, eq = _define("eq", np.equal, "any", 2, out_dtype=_bool_out)
ne_p, ne = _define("ne", np.not_equal, "any", 2, out_dtype=_bool_out)
lt_p, lt = _define("lt", np.less, "any", 2, out_dtype=_bool_out)
le_p, le = _define("le", np.less_equal, "any", 2, out_dtype=_bool_out)
gt_p, gt = _define("gt", np.greater, "any", 2, out_dtype=_bool_out)
ge_p, ge = _define("ge", np.greater_equal, "any", 2, out_dtype=_bool_out)

and_p, bitwise_and = _define("and", np.bitwise_and, "int_or_bool", 2)
or_p, bitwise_or = _define("or", np.bitwise_or, "int_or_bool", 2)
xor_p, bitwise_xor = _define("xor", np.bitwise_xor, "int_or_bool", 2)
not_p, bitwise_not = _define("not", np.invert, "int_or_bool", 1)

real_p, real = _define("real", np.real, "inexact", 1, out_dtype=_real_dtype)
imag_p, imag = _define("imag", np.imag, "inexact", 1, out_dtype=_real_dtype)
conj_p, conj = _define("conj", np.conjugate, "inexact", 1)


# ---------------------------------------------------------------------------
# Shifts: out-of-range amounts are defined (see module docstring)
# ---------------------------------------------------------------------------
def _shift_impl(kind):
    def impl(x, y):
        bits = x.dtype.itemsize * 8
        out_of_range = (y < 0) | (y >= bits)
        safe = np.where(out_of_range, 0, y).astype(x.dtype)
        if kind == "left":
            r = np.left_shift(x, safe)
            fill = np.zeros_like(x)
        elif kind == "arith":
            r = np.right_shift(x, safe)
            fill = np.where(x < 0, np.array(-1).astype(x.dtype), np.zeros_like(x))
        else:
            ux = x.view(np.dtype(f"u{x.dtype.itemsize}"))
            r = np.right_shift(ux, safe.view(ux.dtype)).view(x.dtype)
            fill = np.zeros_like(x)
        return np.where(out_of_range, fill, r).astype(x.dtype)
    return impl


shift_left_p, shift_left = _define("shift_left", _shift_impl("left"), "int", 2)
shift_right_arithmetic_p, shift_right_arithmetic = _define(
    "shift_right_arithmetic", _shift_impl("arith"), "int", 2)
shift_right_logical_p, shift_right_logical = _define(
    "shift_right_logical", _shift_impl("logical"), "int", 2)


# ---------------------------------------------------------------------------
# pow and integer_pow
# ---------------------------------------------------------------------------
pow_p = Primitive("pow")


def _pow_abstract(x, y):
    check_dtype_kind("pow", x.dtype, "inexact")
    if y.dtype != x.dtype and not dtypes.is_integer(y.dtype):
        same_dtypes("pow", x, y)
    return [ShapedArray(binop_shape("pow", x, y), x.dtype, x.weak_type and y.weak_type)]


def _pow_impl(x, y):
    with _quiet():
        return [np.power(x, y).astype(x.dtype)]


abstract_eval_rules[pow_p] = _pow_abstract
impl_rules[pow_p] = _pow_impl


def pow(x, y):  # noqa: A001 - lax.pow
    """``x ** y`` for a float/complex ``x`` and ``y`` of the same dtype (or integer ``y``)."""
    return pow_p.bind(x, y)


integer_pow_p = Primitive("integer_pow")


def _integer_pow_abstract(x, *, y):
    check_dtype_kind("integer_pow", x.dtype, "number")
    if dtypes.is_integer(x.dtype) and y < 0:
        raise TypeError("lax.integer_pow: integers cannot be raised to negative powers "
                        f"(y={y})")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def _integer_pow_impl(x, *, y):
    with _quiet():
        if y == 0:
            return [np.ones_like(x)]
        if y == 2:
            return [x * x]
        if y < 0:
            return [(1 / np.power(x, -y)).astype(x.dtype)]
        return [np.power(x, y).astype(x.dtype)]


abstract_eval_rules[integer_pow_p] = _integer_pow_abstract
impl_rules[integer_pow_p] = _integer_pow_impl


def integer_pow(x, y: int):
    """``x ** y`` for a static Python int ``y``."""
    return integer_pow_p.bind(x, y=int(y))


# ---------------------------------------------------------------------------
# round
# ---------------------------------------------------------------------------
round_p = Primitive("round")
ROUND_AWAY_FROM_ZERO, ROUND_TO_NEAREST_EVEN = 0, 1


def _round_abstract(x, *, rounding_method):
    check_dtype_kind("round", x.dtype, "float")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def _round_impl(x, *, rounding_method):
    if rounding_method == ROUND_TO_NEAREST_EVEN:
        return [np.round(x)]
    return [(np.sign(x) * np.floor(np.abs(x) + np.asarray(0.5, x.dtype))).astype(x.dtype)]


abstract_eval_rules[round_p] = _round_abstract
impl_rules[round_p] = _round_impl


def round(x, rounding_method=ROUND_AWAY_FROM_ZERO):  # noqa: A001 - lax.round
    """Round to integral values; ``rounding_method`` 0 = away from zero, 1 = to even."""
    return round_p.bind(x, rounding_method=int(rounding_method))


# ---------------------------------------------------------------------------
# convert_element_type
# ---------------------------------------------------------------------------
convert_element_type_p = Primitive("convert_element_type")


def _convert_abstract(x, *, new_dtype, weak_type):
    return [ShapedArray(x.shape, new_dtype, weak_type)]


def float_to_int(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Truncate toward zero, saturate to ``dt``'s range, NaN -> 0."""
    info = np.iinfo(dt)
    with _quiet():
        t = np.trunc(x.real if x.dtype.kind == "c" else x).astype(np.float64)
        t = np.where(np.isnan(t), 0, np.clip(t, info.min, info.max))
        out = t.astype(dt)
        # float64 cannot represent int64 max exactly: pin saturated values.
        out = np.where(t >= float(info.max), info.max, out)
        return out.astype(dt)


def _convert_impl(x, *, new_dtype, weak_type):
    if x.dtype == new_dtype:
        return [x]
    if new_dtype == dtypes.bool_:
        return [x != 0]
    if dtypes.is_integer(new_dtype) and (dtypes.is_inexact(x.dtype)):
        return [float_to_int(x, new_dtype)]
    with _quiet():
        if x.dtype.kind == "c" and new_dtype.kind != "c":
            x = x.real
        return [x.astype(new_dtype)]


abstract_eval_rules[convert_element_type_p] = _convert_abstract
impl_rules[convert_element_type_p] = _convert_impl


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Cast ``x`` to ``new_dtype`` (canonicalized: float64 -> float32 without x64)."""
    new_dtype = dtypes.canonicalize_dtype(dtypes.check_user_dtype(new_dtype))
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


# ---------------------------------------------------------------------------
# select_n and clamp
# ---------------------------------------------------------------------------
select_n_p = Primitive("select_n")


def _select_n_abstract(which, *cases):
    if not cases:
        raise TypeError("lax.select_n requires at least one case")
    dt = same_dtypes("select_n", *cases)
    shape = binop_shape("select_n", *cases)
    if which.dtype != dtypes.bool_ and which.dtype != dtypes.int32:
        raise TypeError(f"lax.select_n: `which` must be bool or int32, got {which.dtype}")
    if which.dtype == dtypes.bool_ and len(cases) > 2:
        raise TypeError("lax.select_n: a boolean `which` selects between at most 2 cases")
    if which.shape not in ((), shape):
        raise TypeError(f"lax.select_n: `which` must be scalar or have the cases' shape "
                        f"{shape}, got {which.shape}")
    return [ShapedArray(shape, dt, all(c.weak_type for c in cases))]


def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return [cases[0]]
    if which.dtype == np.bool_:
        return [np.where(which, cases[1], cases[0])]
    idx = np.clip(which, 0, len(cases) - 1)
    return [np.choose(idx, np.broadcast_arrays(*cases))]


abstract_eval_rules[select_n_p] = _select_n_abstract
impl_rules[select_n_p] = _select_n_impl


def select_n(which, *cases):
    """``cases[which]`` elementwise; ``which`` is bool (2 cases) or int32."""
    return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false`` (``lax.select``)."""
    return select_n_p.bind(pred, on_false, on_true)


clamp_p = Primitive("clamp")


def _clamp_abstract(lo, x, hi):
    same_dtypes("clamp", lo, x, hi)
    for b, nm in ((lo, "min"), (hi, "max")):
        if b.shape not in ((), x.shape):
            raise TypeError(f"lax.clamp: `{nm}` must be scalar or have shape {x.shape}, "
                            f"got {b.shape}")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


abstract_eval_rules[clamp_p] = _clamp_abstract
impl_rules[clamp_p] = lambda lo, x, hi: [np.minimum(np.maximum(x, lo), hi)]


def clamp(min, x, max):  # noqa: A002 - lax's argument names
    """``min(max(x, min), max)`` elementwise (``lax.clamp(min, x, max)``)."""
    return clamp_p.bind(min, x, max)


# ---------------------------------------------------------------------------
# stop_gradient: identity whose derivative is zero (rules in interpreters/ad.py)
# ---------------------------------------------------------------------------
stop_gradient_p = Primitive("stop_gradient")
abstract_eval_rules[stop_gradient_p] = lambda x: [ShapedArray(x.shape, x.dtype, x.weak_type)]
impl_rules[stop_gradient_p] = lambda x: [x]


def stop_gradient(x):
    """The identity, but autodiff treats the result as a constant."""
    from ..tree_util import tree_map
    return tree_map(lambda leaf: stop_gradient_p.bind(leaf), x)
