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
    (arithmetic); an arithmetic right shift treats the top bit as the sign bit for
    unsigned types too.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.avals import ShapedArray
from ..core.fusion import COSTLY, Elementwise, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, array_ops, batching
from ._select import MIN_ELEMENTS as BLEND_MIN_ELEMENTS, blend_into
from ._util import (binop_shape, check_dtype_kind, same_dtypes, standard_naryop_abstract)
from .structural import broadcast_in_dim

__all__ = [
    "add_p", "add", "sub_p", "sub", "mul_p", "mul", "div_p", "div", "rem_p", "rem",
    "max_p", "max", "min_p", "min", "atan2_p", "atan2", "nextafter_p", "nextafter",
    "neg_p", "neg", "sign_p", "sign", "abs_p", "abs", "exp_p", "exp", "exp2_p", "exp2",
    "expm1_p", "expm1", "log_p", "log", "log1p_p", "log1p", "sqrt_p", "sqrt", "rsqrt_p",
    "rsqrt", "cbrt_p", "cbrt", "sin_p", "sin", "cos_p", "cos", "tan_p", "tan", "asin_p",
    "asin", "acos_p", "acos", "atan_p", "atan", "sinh_p", "sinh", "cosh_p", "cosh",
    "tanh_p", "tanh", "asinh_p", "asinh", "acosh_p", "acosh", "atanh_p", "atanh",
    "floor_p", "floor", "ceil_p", "ceil", "is_finite_p", "is_finite", "signbit_p",
    "logistic_p",
    "logistic", "eq_p", "eq", "ne_p", "ne", "lt_p", "lt", "le_p", "le", "gt_p", "gt",
    "ge_p", "ge", "and_p", "bitwise_and", "or_p", "bitwise_or", "xor_p", "bitwise_xor",
    "not_p", "bitwise_not", "real_p", "real", "imag_p", "imag", "conj_p", "conj",
    "shift_left_p", "shift_left", "shift_right_arithmetic_p", "shift_right_arithmetic",
    "shift_right_logical_p", "shift_right_logical", "pow_p", "pow", "integer_pow_p",
    "integer_pow", "round_p", "round", "ROUND_AWAY_FROM_ZERO", "ROUND_TO_NEAREST_EVEN",
    "convert_element_type_p", "convert_element_type", "float_to_int", "select_n_p",
    "select_n", "select", "clamp_p", "clamp", "stop_gradient_p", "stop_gradient",
]

# Transcendental and dividing ops: the fusion planner stores them rather than
# recomputing them in several loops.
_COSTLY = frozenset(['exp', 'exp2', 'expm1', 'log', 'log1p', 'sqrt', 'rsqrt', 'cbrt', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'tanh', 'asinh', 'acosh', 'atanh', 'atan2', 'logistic', 'div', 'rem', 'nextafter'])


def _quiet():
    return np.errstate(all="ignore")


def _define(name: str, np_impl, kind: str, nargs: int, out_dtype=None, quiet=False):
    """A standard elementwise primitive and its one-line lax function."""
    prim = Primitive(name)
    def_fusion(prim, Elementwise(COSTLY if name in _COSTLY else 1))
    abstract_eval_rules[prim] = standard_naryop_abstract(name, kind, out_dtype)
    if quiet:
        def impl(*xs):
            with _quiet():
                return [np_impl(*xs)]
    else:
        def impl(*xs):
            return [np_impl(*xs)]
    impl.__name__ = f"{name}_impl"
    if isinstance(np_impl, np.ufunc):
        # The interpreter may write the result into a buffer it owns (``out=``).
        impl.ufunc = np_impl
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


# ---------------------------------------------------------------------------
# Helpers shared by the autodiff and batching rules below
# ---------------------------------------------------------------------------
def _const(val, like):
    """A weakly typed rank-0 constant of ``like``'s dtype: weak, so that it never
    changes the weak type of the expression it appears in."""
    return Array._new(np.asarray(val, dtype=get_aval(like).dtype), True)


def _bcast(x, shape):
    """Broadcast a rank-0 ``x`` to ``shape`` (lax ops broadcast only rank-0 operands)."""
    return x if get_aval(x).shape == tuple(shape) else broadcast_in_dim(x, shape, ())


def _unbroadcast(aval, ct):
    """Cotangent of an operand that was broadcast from rank 0: sum it back."""
    if ct is None:
        return None
    shape = get_aval(ct).shape
    if shape == aval.shape:
        return ct
    from .reductions import reduce_sum
    return reduce_sum(ct, tuple(range(len(shape))))


def _zeros(aval):
    return ad.zeros_like_aval(aval)


def _jvp_rule(prim, *fns, ans_fn=None):
    """Register ``prim``'s JVP: ``fns[i](t_i, *primals, ans=..., **params)`` is input
    ``i``'s contribution (``None``: not differentiable in it). Integer and bool results
    have zero tangents; the summed tangent is broadcast to the output's shape."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        out_aval = get_aval(ans)
        if not dtypes.is_inexact(out_aval.dtype):
            return [ans], [_zeros(out_aval)]
        total = None
        for fn, t in zip(fns, tangents):
            if fn is None or t is None:
                continue
            c = fn(t, *primals, ans=ans, **params)
            total = c if total is None else add(total, c)
        if total is None:
            return [ans], [_zeros(out_aval)]
        return [ans], [_bcast(total, out_aval.shape)]
    rule.__name__ = f"{prim.name}_jvp"
    # Zero tangents stay symbolic: an input with no tangent adds no term (pow's exponent
    # term ``log(x) * x**y`` is NaN at a negative base and must not be formed).
    rule.symbolic_zeros = True
    ad.jvp_rules[prim] = rule
    return rule


def _nary_batch(prim):
    return batching.defbroadcasting(prim)


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
        q = np.true_divide(x, y)
        if q.dtype.kind == "c":
            # A zero divisor: XLA (and so JAX) divides both parts by the divisor's real
            # part, keeping its sign; NumPy divides by its absolute value.
            y = np.broadcast_to(np.asarray(y, q.dtype), q.shape)
            zero = (y.real == 0) & (y.imag == 0)
            if zero.any():
                x = np.broadcast_to(np.asarray(x, q.dtype), q.shape)
                q = np.array(q)
                q.real[zero] = x.real[zero] / y.real[zero]
                q.imag[zero] = x.imag[zero] / y.real[zero]
        return q


def _rem_impl(x, y):
    with _quiet():
        if x.dtype.kind in "iu":
            safe_y = np.where(y == 0, 1, y)
            r = np.fmod(x, safe_y)
            return np.where(y == 0, x, r).astype(x.dtype)
        return np.fmod(x, y)


add_p, add = _define("add", np.add, "number", 2)
array_ops.register(add=add)  # autodiff adds tangents with it
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
# The sign bit, NaNs included (-NaN gives True): no comparison can read it. (jnp.signbit;
# not in lax's public names, as in JAX.)
signbit_p, signbit = _define("signbit", np.signbit, "float", 1, out_dtype=_bool_out)
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
# ``and``/``or``/``not`` are Python keywords: the functions are named after their
# ``bitwise_*`` spelling (``lax.and_`` is the same function).
for _fn in (bitwise_and, bitwise_or, bitwise_xor, bitwise_not):
    _fn.__name__ = _fn.__qualname__ = "bitwise_" + _fn.__name__
del _fn

real_p, real = _define("real", np.real, "inexact", 1, out_dtype=_real_dtype)
imag_p, imag = _define("imag", np.imag, "inexact", 1, out_dtype=_real_dtype)
conj_p, conj = _define("conj", np.conjugate, "inexact", 1)


# ---------------------------------------------------------------------------
# Autodiff and batching rules of the primitives above
# ---------------------------------------------------------------------------
def _linear_binary_transpose(sign_y):
    def transpose(cts, x, y):
        ct = cts[0]
        ct_x = _unbroadcast(x.aval, ct) if ad.is_undefined_primal(x) else None
        ct_y = None
        if ad.is_undefined_primal(y) and ct is not None:
            ct_y = _unbroadcast(y.aval, ct if sign_y > 0 else neg(ct))
        return [ct_x, ct_y]
    return transpose


_jvp_rule(add_p, lambda t, x, y, ans: t, lambda t, x, y, ans: t)
ad.transpose_rules[add_p] = _linear_binary_transpose(+1)
_jvp_rule(sub_p, lambda t, x, y, ans: t, lambda t, x, y, ans: neg(t))
ad.transpose_rules[sub_p] = _linear_binary_transpose(-1)
_jvp_rule(mul_p, lambda t, x, y, ans: mul(t, y), lambda t, x, y, ans: mul(x, t))


def _mul_transpose(cts, x, y):
    ct = cts[0]
    if ad.is_undefined_primal(x) and ad.is_undefined_primal(y):
        raise ValueError("mul is not linear in both operands at once")
    if ct is None:
        return [None, None]
    if ad.is_undefined_primal(x):
        return [_unbroadcast(x.aval, mul(ct, y)), None]
    return [None, _unbroadcast(y.aval, mul(x, ct))]


ad.transpose_rules[mul_p] = _mul_transpose
# d(x/y) = tx/y - ty * (x/y)/y
_jvp_rule(div_p, lambda t, x, y, ans: div(t, y),
          lambda t, x, y, ans: neg(mul(t, div(ans, y))))


def _div_transpose(cts, x, y):
    if ad.is_undefined_primal(y):
        raise ValueError("div is linear only in its numerator")
    ct = cts[0]
    return [None if ct is None else _unbroadcast(x.aval, div(ct, y)), None]


ad.transpose_rules[div_p] = _div_transpose
# rem(x, y) = x - y * trunc(x / y): the trunc has zero derivative.
_jvp_rule(rem_p, lambda t, x, y, ans: t,
          lambda t, x, y, ans: neg(mul(t, _trunc(div(sub(x, ans), y)))))


def _trunc(q):
    return mul(sign(q), floor(abs(q)))


def _minmax_coef(pick, x, y):
    """Where ``x`` wins 1, where the operands tie 1/2 (the derivative is shared), else 0."""
    one, half, zero = _const(1, x), _const(0.5, x), _const(0, x)
    shape = binop_shape("max", get_aval(x), get_aval(y))
    tie = select(eq(x, y), _bcast(half, shape), _bcast(zero, shape))
    return select(pick(x, y), _bcast(one, shape), tie)


_jvp_rule(max_p, lambda t, x, y, ans: mul(t, _minmax_coef(gt, x, y)),
          lambda t, x, y, ans: mul(t, _minmax_coef(gt, y, x)))
_jvp_rule(min_p, lambda t, x, y, ans: mul(t, _minmax_coef(lt, x, y)),
          lambda t, x, y, ans: mul(t, _minmax_coef(lt, y, x)))


def _atan2_denom(x, y):
    return add(mul(x, x), mul(y, y))


_jvp_rule(atan2_p, lambda t, x, y, ans: div(mul(t, y), _atan2_denom(x, y)),
          lambda t, x, y, ans: neg(div(mul(t, x), _atan2_denom(x, y))))
ad.defjvp_zero(nextafter_p)
for _p in (add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, atan2_p, nextafter_p,
           eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p):
    _nary_batch(_p)
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, not_p, sign_p,
           floor_p, ceil_p, is_finite_p, signbit_p):
    ad.defjvp_zero(_p)

ad.deflinear(neg_p, lambda ct, x: [neg(ct)])


def _abs_jvp(t, x, ans):
    if dtypes.is_complex(get_aval(x).dtype):
        # d|z| = Re(conj(z) dz) / |z|, taken as 0 at z == 0.
        safe = select(eq(ans, _const(0, ans)), _bcast(_const(1, ans), get_aval(ans).shape), ans)
        return div(real(mul(conj(x), t)), safe)
    return mul(sign(x), t)


_jvp_rule(abs_p, _abs_jvp)
_jvp_rule(exp_p, lambda t, x, ans: mul(t, ans))
_jvp_rule(exp2_p, lambda t, x, ans: mul(t, mul(ans, _const(np.log(2.0), ans))))
_jvp_rule(expm1_p, lambda t, x, ans: mul(t, add(ans, _const(1, ans))))
_jvp_rule(log_p, lambda t, x, ans: div(t, x))
_jvp_rule(log1p_p, lambda t, x, ans: div(t, add(x, _const(1, x))))
_jvp_rule(sqrt_p, lambda t, x, ans: div(t, mul(ans, _const(2, ans))))
_jvp_rule(rsqrt_p, lambda t, x, ans: mul(t, mul(div(ans, x), _const(-0.5, x))))
_jvp_rule(cbrt_p, lambda t, x, ans: div(t, mul(mul(ans, ans), _const(3, ans))))
_jvp_rule(sin_p, lambda t, x, ans: mul(t, cos(x)))
_jvp_rule(cos_p, lambda t, x, ans: neg(mul(t, sin(x))))
_jvp_rule(tan_p, lambda t, x, ans: mul(t, add(_const(1, ans), mul(ans, ans))))
_jvp_rule(asin_p, lambda t, x, ans: mul(t, rsqrt(sub(_const(1, x), mul(x, x)))))
_jvp_rule(acos_p, lambda t, x, ans: neg(mul(t, rsqrt(sub(_const(1, x), mul(x, x))))))
_jvp_rule(atan_p, lambda t, x, ans: div(t, add(_const(1, x), mul(x, x))))
_jvp_rule(sinh_p, lambda t, x, ans: mul(t, cosh(x)))
_jvp_rule(cosh_p, lambda t, x, ans: mul(t, sinh(x)))
_jvp_rule(tanh_p, lambda t, x, ans: mul(t, sub(_const(1, ans), mul(ans, ans))))
_jvp_rule(asinh_p, lambda t, x, ans: mul(t, rsqrt(add(mul(x, x), _const(1, x)))))
_jvp_rule(acosh_p, lambda t, x, ans: mul(t, mul(rsqrt(sub(x, _const(1, x))),
                                                rsqrt(add(x, _const(1, x))))))
_jvp_rule(atanh_p, lambda t, x, ans: div(t, sub(_const(1, x), mul(x, x))))
_jvp_rule(logistic_p, lambda t, x, ans: mul(t, mul(ans, sub(_const(1, ans), ans))))


def _real_transpose(ct, x):
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=False)]


def _imag_transpose(ct, x):
    # As in JAX: the cotangent of imag is -i * ct, so complex grads match jax.grad.
    c = convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=False)
    return [mul(c, _const(-1j, c))]


ad.deflinear(real_p, _real_transpose)
ad.deflinear(imag_p, _imag_transpose)
ad.deflinear(conj_p, lambda ct, x: [conj(ct)])
for _p in (neg_p, sign_p, abs_p, exp_p, exp2_p, expm1_p, log_p, log1p_p, sqrt_p, rsqrt_p,
           cbrt_p, sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p, tanh_p,
           asinh_p, acosh_p, atanh_p, floor_p, ceil_p, is_finite_p, signbit_p, logistic_p,
           not_p,
           real_p, imag_p, conj_p):
    batching.defvectorized(_p)


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
            # The top bit is the sign bit even for unsigned types (as in XLA).
            sx = x.view(np.dtype(f"i{x.dtype.itemsize}"))
            r = np.right_shift(sx, safe.view(sx.dtype)).view(x.dtype)
            fill = np.where(sx < 0, np.array(-1).astype(sx.dtype),
                            np.zeros_like(sx)).view(x.dtype)
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
for _p in (shift_left_p, shift_right_arithmetic_p, shift_right_logical_p):
    ad.defjvp_zero(_p)
    _nary_batch(_p)


# ---------------------------------------------------------------------------
# pow and integer_pow
# ---------------------------------------------------------------------------
pow_p = Primitive("pow")
def_fusion(pow_p, Elementwise(COSTLY))


def _pow_abstract(x, y):
    check_dtype_kind("pow", x.dtype, "inexact")
    if y.dtype != x.dtype and not dtypes.is_integer(y.dtype):
        same_dtypes("pow", x, y)
    return [ShapedArray(binop_shape("pow", x, y), x.dtype, x.weak_type and y.weak_type)]


def _pow_impl(x, y):
    with _quiet():
        out = np.power(x, y).astype(x.dtype)
        if dtypes.is_float(x.dtype) and not dtypes.is_integer(np.result_type(y)):
            # NumPy takes a power of one half as a square root, which gives NaN at -inf
            # and -0 at -0; IEEE pow (and JAX) give +inf and +0.
            half = np.asarray(y) == 0.5
            if half.any():
                out = np.where(half & (x == -np.inf), np.inf,
                               np.where(half & (x == 0), 0, out)).astype(x.dtype)
    return [out]


abstract_eval_rules[pow_p] = _pow_abstract
impl_rules[pow_p] = _pow_impl


def pow(x, y):  # noqa: A001 - lax.pow
    """``x ** y`` for a float/complex ``x`` and ``y`` of the same dtype (or integer ``y``)."""
    return pow_p.bind(x, y)


def _pow_jvp_x(t, x, y, ans):
    # y * x**(y-1), with 0 where y == 0 (avoids 0 * inf at x == 0).
    y_dt = get_aval(y).dtype
    yx = y if y_dt == get_aval(x).dtype else convert_element_type_p.bind(
        y, new_dtype=get_aval(x).dtype, weak_type=False)
    coef = mul(yx, pow(x, sub(y, _const(1, y))))
    shape = get_aval(ans).shape
    coef = select(eq(yx, _const(0, yx)), _bcast(_const(0, coef), shape), _bcast(coef, shape))
    return mul(t, coef)


def _pow_jvp_y(t, x, y, ans):
    if not dtypes.is_inexact(get_aval(y).dtype):
        return None
    # log(x) * x**y, with x == 0 contributing 0.
    shape = get_aval(ans).shape
    safe_x = select(eq(x, _const(0, x)), _bcast(_const(1, x), get_aval(x).shape), x)
    return _bcast(mul(t, mul(log(safe_x), ans)), shape)


_jvp_rule(pow_p, _pow_jvp_x, lambda t, x, y, ans: _pow_jvp_y(t, x, y, ans))
_nary_batch(pow_p)


integer_pow_p = Primitive("integer_pow")
def_fusion(integer_pow_p, Elementwise(2))


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


def _integer_pow_jvp(t, x, ans, y):
    if y == 0:
        return _zeros(get_aval(ans))
    coef = x if y == 2 else (_const(1, x) if y == 1 else integer_pow(x, y - 1))
    return mul(t, mul(_const(y, x), coef))


_jvp_rule(integer_pow_p, _integer_pow_jvp)
batching.defvectorized(integer_pow_p)


# ---------------------------------------------------------------------------
# round
# ---------------------------------------------------------------------------
round_p = Primitive("round")
def_fusion(round_p, Elementwise(1))
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


ad.defjvp_zero(round_p)
batching.defvectorized(round_p)


# ---------------------------------------------------------------------------
# convert_element_type
# ---------------------------------------------------------------------------
convert_element_type_p = Primitive("convert_element_type")
def_fusion(convert_element_type_p, Elementwise(1))


def _convert_abstract(x, *, new_dtype, weak_type):
    return [ShapedArray(x.shape, new_dtype, weak_type)]


def float_to_int(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Truncate toward zero, saturate to ``dt``'s range, NaN -> 0.

    Written out rather than left to NumPy's ``astype``, whose result for NaN and
    out-of-range values is unspecified and has changed between versions: only values
    that are exactly representable in ``dt`` are ever cast.
    """
    dt = np.dtype(dt)
    info = np.iinfo(dt)
    with _quiet():
        t = np.trunc(x.real if x.dtype.kind == "c" else x).astype(np.float64)
        # float(info.max) rounds up for 64-bit types (2**63, 2**64): ">=" catches it.
        high = t >= float(info.max)
        low = t <= float(info.min)
        bad = np.isnan(t) | high | low
        out = np.where(bad, 0.0, t).astype(dt)
        out = np.where(high, np.asarray(info.max, dt), out)
        out = np.where(low, np.asarray(info.min, dt), out)
        return np.asarray(out, dtype=dt)


def float64_to_bfloat16(x: np.ndarray) -> np.ndarray:
    """``x`` (float64) as bfloat16, rounded once to nearest even.

    Rounding to float32 and then to bfloat16 can round twice at a tie (ml_dtypes before
    0.7 does): float32 is rounded *to odd* first, which leaves enough bits for the
    second rounding to be exact, as the compiled kernels do.
    """
    with _quiet():
        f = x.astype(np.float32)
        back = f.astype(np.float64)
        inexact = (back != x) & np.isfinite(f) & ~np.isnan(x)
        bits = f.view(np.uint32).copy()
        even = (bits & 1) == 0
        toward_zero = np.abs(back) > np.abs(x)
        bits = np.where(inexact & even & toward_zero, bits - 1, bits)
        bits = np.where(inexact & even & ~toward_zero, bits + 1, bits)
        return bits.astype(np.uint32).view(np.float32).astype(dtypes.bfloat16)


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
        if x.dtype == np.float64 and dtypes.is_bfloat16(new_dtype):
            return [float64_to_bfloat16(x)]
        return [x.astype(new_dtype)]


abstract_eval_rules[convert_element_type_p] = _convert_abstract
impl_rules[convert_element_type_p] = _convert_impl


def convert_element_type(x, new_dtype, weak_type: bool = False):
    """Cast ``x`` to ``new_dtype`` (canonicalized: float64 -> float32 without x64)."""
    new_dtype = dtypes.canonicalize_dtype(dtypes.check_user_dtype(new_dtype))
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if dtypes.is_inexact(get_aval(x).dtype) and dtypes.is_inexact(new_dtype):
        return [ans], [convert_element_type_p.bind(t, new_dtype=new_dtype,
                                                   weak_type=weak_type)]
    return [ans], [_zeros(get_aval(ans))]


def _convert_transpose(cts, x, *, new_dtype, weak_type):
    ct = cts[0]
    if ct is None:
        return [None]
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype,
                                        weak_type=x.aval.weak_type)]


ad.jvp_rules[convert_element_type_p] = _convert_jvp
ad.transpose_rules[convert_element_type_p] = _convert_transpose
batching.defvectorized(convert_element_type_p)


# ---------------------------------------------------------------------------
# select_n and clamp
# ---------------------------------------------------------------------------
select_n_p = Primitive("select_n")
def_fusion(select_n_p, Elementwise(1))


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
        if which.size >= BLEND_MIN_ELEMENTS:  # no branch per element
            out = np.empty(which.shape, np.result_type(*cases))
            if blend_into(which, cases[0], cases[1], out) is not None:
                return [out]
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


def _select_n_jvp(primals, tangents):
    which, cases = primals[0], primals[1:]
    ans = select_n_p.bind(which, *cases)
    shape = get_aval(ans).shape
    if not dtypes.is_inexact(get_aval(ans).dtype):
        return [ans], [_zeros(get_aval(ans))]
    return [ans], [select_n_p.bind(which, *[_bcast(t, shape) if get_aval(which).shape
                                            else t for t in tangents[1:]])]


def _select_n_transpose(cts, which, *cases):
    if ad.is_undefined_primal(which):
        raise ValueError("select_n is not linear in its predicate")
    ct = cts[0]
    if ct is None:
        return [None] * (1 + len(cases))
    zeros = _zeros(get_aval(ct))
    out = [None]
    for i, c in enumerate(cases):
        if not ad.is_undefined_primal(c):
            out.append(None)
            continue
        picks = [ct if j == i else zeros for j in range(len(cases))]
        out.append(_unbroadcast(c.aval, select_n_p.bind(which, *picks)))
    return out


def _select_n_batch(vals, dims):
    cases_full = any(d is not None or get_aval(v).ndim for v, d in zip(vals[1:], dims[1:]))
    moved = batching.broadcast_batched(vals, dims, [True] + [cases_full] * (len(vals) - 1))
    return [select_n_p.bind(*moved)], [0]


ad.jvp_rules[select_n_p] = _select_n_jvp
ad.transpose_rules[select_n_p] = _select_n_transpose
batching.batch_rules[select_n_p] = _select_n_batch


clamp_p = Primitive("clamp")
def_fusion(clamp_p, Elementwise(2))


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


def _clamp_jvp(primals, tangents):
    lo, x, hi = primals
    t_lo, t_x, t_hi = tangents
    ans = clamp_p.bind(lo, x, hi)
    aval = get_aval(ans)
    if not dtypes.is_inexact(aval.dtype):
        return [ans], [_zeros(aval)]
    b = lambda v: _bcast(v, aval.shape)  # noqa: E731
    # As JAX: x's tangent strictly inside the interval, lo's below, hi's above, and 0
    # where x touches a bound.
    inside = bitwise_and(gt(x, lo), lt(x, hi))
    t = select(inside, b(t_x), b(_const(0, x)))
    t = select(lt(x, lo), b(t_lo), t)
    t = select(gt(x, hi), b(t_hi), t)
    return [ans], [t]


def _clamp_batch(vals, dims):
    moved = batching.broadcast_batched(vals, dims, [True, False, True])
    return [clamp_p.bind(*moved)], [0]


ad.jvp_rules[clamp_p] = _clamp_jvp
batching.batch_rules[clamp_p] = _clamp_batch


# ---------------------------------------------------------------------------
# stop_gradient: identity whose derivative is zero
# ---------------------------------------------------------------------------
stop_gradient_p = Primitive("stop_gradient")
def_fusion(stop_gradient_p, Elementwise(0))
abstract_eval_rules[stop_gradient_p] = lambda x: [ShapedArray(x.shape, x.dtype, x.weak_type)]
impl_rules[stop_gradient_p] = lambda x: [x]
ad.defjvp_zero(stop_gradient_p)
batching.defvectorized(stop_gradient_p)


def stop_gradient(x):
    """The identity, but autodiff treats the result as a constant."""
    from ..tree_util import tree_map
    return tree_map(lambda leaf: stop_gradient_p.bind(leaf), x)
