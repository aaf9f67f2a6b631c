"""Elementwise functions of ``absjit.numpy``: promotion + broadcasting, then lax ops.

Each is a thin wrapper; anything with more logic than "promote and call lax" is written
out below its one-line siblings. Result dtypes and weak types follow JAX: a constant
that JAX materialises with the operand's dtype (``log2``'s ``log(2)``) is strongly typed
here too, so ``jnp.log2(8)`` is a strong ``float32`` exactly as in JAX.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.trace import Tracer, get_aval
from ..ops import elementwise as ew
from ._promote import (asarray_weak, broadcast_shapes, broadcast_to_shape, check_arraylike,
                       promote_args, promote_args_inexact)

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
    fn.__doc__ = doc or f"NumPy-style ``{name}``, elementwise.\n\n" \
        f"Examples\n--------\n>>> jnp.{name}(jnp.array([0.5, 1.]))  # doctest: +SKIP\n"
    __all__.append(name)
    return fn


def _public(fn):
    __all__.append(fn.__name__)
    return fn


def _quiet(fn):
    """Silence NumPy's floating-point warnings from intermediate steps (``inf - inf``
    inside ``isclose``): the user did not write those operations."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    return wrapped


def _dt(x):
    return get_aval(x).dtype


def _shape(x):
    return get_aval(x).shape


def _const(x, value, weak=True):
    """A rank-0 constant of ``x``'s dtype; weak ones leave the result's weak type alone,
    strong ones make it strong (as JAX's constants built with the operand's dtype do)."""
    return Array._new(np.asarray(value, dtype=_dt(x)), weak)


def _full(x, value, shape, weak=True):
    c = _const(x, value, weak)
    return c if shape == () else broadcast_to_shape(c, shape)


def _where(c, x, y):
    """``lax.select`` for already-promoted operands of one dtype, broadcasting all three."""
    shapes = [_shape(c), _shape(x), _shape(y)]
    full = broadcast_shapes("where", *shapes)
    if shapes[0] != ():
        c = broadcast_to_shape(c, full)
    if shapes[0] != () or (shapes[1] != full and shapes[2] != full) or \
            (shapes[1] != () and shapes[1] != full) or (shapes[2] != () and shapes[2] != full):
        x, y = broadcast_to_shape(x, full), broadcast_to_shape(y, full)
    return ew.select(c, x, y)


def _jconst(x, value):
    """A constant typed as JAX types the constants of these composites: weak when ``x``
    is a weak rank-0 value (a Python scalar), otherwise strong, so that it then makes
    the result strong."""
    aval = get_aval(x)
    return _const(x, value, aval.ndim == 0 and aval.weak_type)


def _to_complex(re, im, dt):
    """``re + 1j * im`` built from two real arrays (there is no complex primitive)."""
    cre = ew.convert_element_type(re, dt, get_aval(re).weak_type)
    cim = ew.convert_element_type(im, dt, get_aval(im).weak_type)
    return ew.add(cre, ew.mul(cim, _const(cim, 1j)))


# ---------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------
add = _binary("add", lambda a, b: ew.bitwise_or(a, b) if dtypes.is_bool(a.dtype)
              else ew.add(a, b))
subtract = _binary("subtract", ew.sub)
multiply = _binary("multiply", lambda a, b: ew.bitwise_and(a, b) if dtypes.is_bool(a.dtype)
                   else ew.mul(a, b))
true_divide = _binary("true_divide", ew.div, inexact=True)
divide = true_divide
__all__.append("divide")
maximum = _binary("maximum", lambda a, b: ew.bitwise_or(a, b) if dtypes.is_bool(a.dtype)
                  else ew.max(a, b))
minimum = _binary("minimum", lambda a, b: ew.bitwise_and(a, b) if dtypes.is_bool(a.dtype)
                  else ew.min(a, b))
arctan2 = _binary("arctan2", ew.atan2, inexact=True)
nextafter = _binary("nextafter", ew.nextafter, inexact=True)


def _fmod(a, b):
    was_bool = dtypes.is_bool(_dt(a))
    a, b = _int_of_bool(a, b)
    if dtypes.is_integer(_dt(a)) and not was_bool:  # booleans keep lax.rem's x % 0 == x
        # Integer x % 0 is 0 (as JAX), not lax.rem's x.
        zero = ew.eq(b, _const(b, 0))
        return _where(zero, _const(a, 0), ew.rem(a, _where(zero, _const(b, 1), b)))
    return ew.rem(a, b)


fmod = _binary("fmod", _fmod, doc="Remainder with the sign of the dividend (C's fmod).")
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
right_shift = _binary("right_shift", lambda a, b: ew.shift_right_logical(a, b)
                      if a.dtype.kind == "u" else ew.shift_right_arithmetic(a, b))
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift
__all__ += ["bitwise_left_shift", "bitwise_right_shift"]


def _int_of_bool(a, b):
    """Integer division-like ops treat booleans as int32 (as JAX does)."""
    if dtypes.is_bool(_dt(a)):
        i32 = np.dtype(np.int32)
        return ew.convert_element_type(a, i32), ew.convert_element_type(b, i32)
    return a, b


@_public
@_quiet
def floor_divide(x1, x2, /):
    """``x1 // x2`` rounding toward -inf. Integer ``x // 0`` is derived from
    ``lax.div``'s rule (``-1``) like JAX: ``0 // 0 == -1`` and ``x // 0 == -2`` otherwise.

    Examples
    --------
    >>> jnp.floor_divide(jnp.array([7, -7]), 2)  # doctest: +SKIP
    Array([ 3, -4], dtype=int32)
    """
    a, b = _int_of_bool(*promote_args("floor_divide", x1, x2))
    dt = _dt(a)
    if dtypes.is_complex(dt):
        raise TypeError("floor_divide does not support complex inputs")
    if dtypes.is_integer(dt):
        q = ew.div(a, b)
        if dt.kind == "u":
            return q
        # Truncation rounds toward zero; step down where the signs differ and it was inexact.
        adjust = ew.bitwise_and(ew.ne(ew.sign(a), ew.sign(b)),
                                ew.ne(ew.rem(a, b), _const(a, 0)))
        return _where(adjust, ew.sub(q, _const(q, 1)), q)
    q = _float_divmod(a, b)[0]
    # The remainder is NaN for a zero divisor; NumPy and JAX give x / 0 (+-inf or NaN).
    return _where(ew.eq(b, _const(b, 0)), ew.div(a, b), q)


def _float_divmod(a, b):
    mod = ew.rem(a, b)
    div = ew.div(ew.sub(a, mod), b)
    # Python's convention: the remainder takes the divisor's sign.
    fix = ew.bitwise_and(ew.ne(mod, _const(mod, 0)), ew.ne(ew.sign(b), ew.sign(mod)))
    mod = _where(fix, ew.add(mod, b), mod)
    div = _where(fix, ew.sub(div, _const(div, 1)), div)
    return ew.round(div, ew.ROUND_TO_NEAREST_EVEN), mod


@_public
@_quiet
def remainder(x1, x2, /):
    """Remainder with the sign of the divisor (NumPy's ``%``); integer ``x % 0 == 0``.

    Examples
    --------
    >>> jnp.remainder(jnp.array([7, -7]), 3)  # doctest: +SKIP
    Array([1, 2], dtype=int32)
    """
    a, b = _int_of_bool(*promote_args("remainder", x1, x2))
    dt = _dt(a)
    if dtypes.is_complex(dt):
        raise TypeError("remainder does not support complex inputs")
    if dtypes.is_integer(dt):
        r = ew.rem(a, b)
        if dt.kind != "u":
            fix = ew.bitwise_and(ew.ne(r, _const(r, 0)),
                                 ew.ne(ew.lt(r, _const(r, 0)), ew.lt(b, _const(b, 0))))
            r = _where(fix, ew.add(r, b), r)
        return _where(ew.eq(b, _const(b, 0)), _const(r, 0), r)
    return _float_divmod(a, b)[1]


mod = remainder
__all__.append("mod")


@_public
def divmod(x1, x2, /):  # noqa: A001 - numpy name
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    return floor_divide(x1, x2), remainder(x1, x2)


def _int_pow(base, exp):
    """``base ** exp`` for integer arrays by binary exponentiation over the exponent's
    six low bits, as JAX's ``jnp.power`` does (its result for every input, negative
    exponents included, where ``x ** e`` is ``x ** (e & 63)`` wrapped to the dtype;
    ``0 ** e`` is 0 for ``e != 0``). Eager and jit run the same six steps."""
    zero, one = _const(exp, 0), _const(exp, 1)
    shape = _shape(base)
    zero_base = ew.eq(base, _const(base, 0))
    if _shape(exp) != shape:
        exp = broadcast_to_shape(exp, shape) if shape != () else exp
    weak = get_aval(base).weak_type
    acc = _where(ew.bitwise_and(zero_base, ew.ne(exp, zero)), _full(base, 0, shape, weak),
                 _full(base, 1, shape, weak))
    for i in range(6):
        take = ew.ne(ew.bitwise_and(exp, one), zero)
        acc = _where(take, ew.mul(acc, base), acc)
        if i + 1 < 6:
            exp = ew.shift_right_logical(exp, one)
            base = ew.mul(base, base)
    return acc


@_public
def power(x1, x2, /):
    """``x1 ** x2``. A Python ``int`` exponent becomes ``lax.integer_pow`` (integers
    cannot be raised to negative Python ints: ``TypeError``, as in JAX); integer arrays
    stay integer.

    Examples
    --------
    >>> jnp.power(jnp.array([2, 3]), 3)  # doctest: +SKIP
    Array([ 8, 27], dtype=int32)
    """
    x1 = _bool_to_int(x1)
    static = x2 if isinstance(x2, int) else _concrete_int(x2)
    if static is not None:  # a static exponent (Python bools count, as in JAX)
        (a,) = promote_args("power", x1)
        return ew.integer_pow(a, int(static))
    x2 = _bool_to_int(x2)
    check_arraylike("power", x1, x2)
    (b_orig,) = promote_args("power", x2)
    dt, weak = dtypes.result_type_and_weak(x1, x2)
    if dtypes.is_inexact(dt) and dtypes.is_integer(_dt(b_orig)):
        a = asarray_weak(x1, dt, weak)
        # A float base with an integer exponent array keeps the exponent integral (as
        # JAX's lax.pow does); the result's weak type then follows both operands.
        shape = broadcast_shapes("power", _shape(a), _shape(b_orig))
        if shape != () and _shape(b_orig) != shape:
            b_orig = broadcast_to_shape(b_orig, shape)
        if shape != () and _shape(a) not in ((), shape):
            a = broadcast_to_shape(a, shape)
        return ew.pow(a, b_orig)
    a, b = promote_args("power", x1, x2)
    if dtypes.is_integer(_dt(a)):
        shape = broadcast_shapes("power", _shape(a), _shape(b))
        return _int_pow(broadcast_to_shape(a, shape) if _shape(a) != () else a, b)
    return ew.pow(a, b)


def _concrete_int(x):
    """The value of a concrete rank-0 integer array (JAX then uses integer_pow too)."""
    if isinstance(x, Tracer) or not isinstance(x, (Array, np.ndarray, np.integer)):
        return None
    if np.ndim(x) != 0 or not dtypes.is_integer(np.result_type(np.asarray(x))):
        return None
    return int(np.asarray(x))


def _bool_to_int(x):
    """``power`` takes booleans as (strong) default integers, as JAX does."""
    if type(x) is bool or (not isinstance(x, (int, float, complex))
                           and dtypes.is_bool(np.result_type(x) if isinstance(
                               x, (np.ndarray, np.generic)) else _dt(x))):
        (a,) = promote_args("power", x)
        return ew.convert_element_type(a, dtypes.default_int(), False)
    return x


pow = power  # noqa: A001 - numpy name
__all__.append("pow")
float_power = _binary("float_power", ew.pow, inexact=True,
                      doc="``x1 ** x2`` computed in floating point.")


@_public
def square(x, /):
    """``x * x`` (``integer_pow[y=2]``); booleans become int32 like in JAX."""
    (a,) = promote_args("square", x)
    if dtypes.is_bool(_dt(a)):
        a = ew.convert_element_type(a, np.int32, get_aval(a).weak_type)
    return ew.integer_pow(a, 2)


@_public
def reciprocal(x, /):
    """``1 / x`` in floating point."""
    (a,) = promote_args_inexact("reciprocal", x)
    return ew.integer_pow(a, -1)


@_public
def positive(x, /):
    """``+x`` (a no-op that checks its argument)."""
    (a,) = promote_args("positive", x)
    return a


negative = _unary("negative", ew.neg)

# ---------------------------------------------------------------------------
# Transcendental
# ---------------------------------------------------------------------------
exp = _unary("exp", ew.exp, inexact=True)
exp2 = _unary("exp2", ew.exp2, inexact=True)
_expm1 = _unary("expm1", ew.expm1, inexact=True)
__all__.remove("expm1")


@_public
@_quiet
def expm1(x, /):
    """``exp(x) - 1``, accurate near 0. For complex ``x`` the Array API's special cases
    hold: a zero imaginary part gives ``expm1(real(x)) + 0j``, ``real(x) = -inf`` gives
    ``-1 + 0j`` and ``real(x) = +inf`` with a non-finite imaginary part ``inf + nan j``.

    Examples
    --------
    >>> jnp.expm1(jnp.array([0., 1e-10]))
    Array([0.e+00, 1.e-10], dtype=float32)
    """
    out = _expm1(x)
    dt = _dt(out)
    if not dtypes.is_complex(dt):
        return out
    (z,) = promote_args_inexact("expm1", x)
    a, b = ew.real(z), ew.imag(z)
    shape = _shape(out)
    # b == 0: the exact real result (+0 for a = -0), imaginary part b (sign kept).
    on_axis = ew.convert_element_type(ew.add(ew.expm1(a), _const(a, 0)), dt, False)
    neg_zero = ew.lt(ew.div(_const(b, 1), b), _const(b, 0))
    on_axis = ew.select_n(neg_zero, on_axis, ew.conj(on_axis))
    out = ew.select_n(ew.eq(b, _const(b, 0)), out, on_axis)
    wild = ew.bitwise_not(ew.is_finite(b))
    minus_inf = ew.bitwise_and(ew.eq(a, _const(a, -np.inf)), wild)
    plus_inf = ew.bitwise_and(ew.eq(a, _const(a, np.inf)), wild)
    out = ew.select_n(minus_inf, out, _full(out, complex(-1, 0), shape))
    return ew.select_n(plus_inf, out, _full(out, complex(np.inf, np.nan), shape))
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
_tanh = _unary("tanh", ew.tanh, inexact=True)
__all__.remove("tanh")


@_public
@_quiet
def tanh(x, /):
    """Hyperbolic tangent. For complex ``x`` with an infinite real part and a finite
    imaginary part ``b`` the result is ``±1 + 0j`` with the zero's sign that of ``b``
    (the Array API's special case; C's ``ctanh`` signs it as ``sin(2b)``).

    Examples
    --------
    >>> jnp.tanh(jnp.array([0., 100.]))
    Array([0., 1.], dtype=float32)
    """
    out = _tanh(x)
    dt = _dt(out)
    if not dtypes.is_complex(dt):
        return out
    (z,) = promote_args_inexact("tanh", x)
    a, b = ew.real(z), ew.imag(z)
    shape = _shape(out)
    at_inf = ew.bitwise_and(ew.bitwise_not(ew.is_finite(a)), ew.eq(a, a))
    at_inf = ew.bitwise_and(at_inf, ew.is_finite(b))
    neg_a, neg_b = ew.lt(a, _const(a, 0)), ew.signbit(b)
    pos = ew.select_n(neg_b, _full(out, complex(1, 0), shape),
                      _full(out, complex(1, -0.0), shape))
    neg = ew.select_n(neg_b, _full(out, complex(-1, 0), shape),
                      _full(out, complex(-1, -0.0), shape))
    return ew.select_n(at_inf, out, ew.select_n(neg_a, pos, neg))
arcsinh = _unary("arcsinh", ew.asinh, inexact=True)
arccosh = _unary("arccosh", ew.acosh, inexact=True)
arctanh = _unary("arctanh", ew.atanh, inexact=True)


def _log_base(a, base):
    ln = ew.log(a)
    if dtypes.is_complex(_dt(a)):
        # Divide the parts by a real number: complex division would turn log(0)'s
        # -inf + 0j into -inf + nan j.
        re, im = ew.real(ln), ew.imag(ln)
        c = _const(re, np.log(base), weak=False)
        return _to_complex(ew.div(re, c), ew.div(im, c), _dt(a))
    return ew.div(ln, ew.log(_const(a, base, weak=False)))


log2 = _unary("log2", lambda a: _log_base(a, 2), inexact=True)
log10 = _unary("log10", lambda a: _log_base(a, 10), inexact=True)
deg2rad = _unary("deg2rad", lambda a: ew.mul(a, _const(a, np.pi / 180)), inexact=True)
rad2deg = _unary("rad2deg", lambda a: ew.mul(a, _const(a, 180 / np.pi)), inexact=True)
radians, degrees = deg2rad, rad2deg
__all__ += ["radians", "degrees"]


@_public
@_quiet
def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))`` without overflow.

    Examples
    --------
    >>> jnp.logaddexp(1000., 1000.)  # doctest: +SKIP
    Array(1000.6931, dtype=float32, weak_type=True)
    """
    a, b = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(a, b, ew.exp, ew.log1p, 1.0)


@_public
@_quiet
def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)`` without overflow."""
    a, b = promote_args_inexact("logaddexp2", x1, x2)
    ln2 = np.log(2.0)
    return _logaddexp(a, b, ew.exp2, lambda v: ew.div(ew.log1p(v), _jconst(v, ln2)), ln2)


def _logaddexp(a, b, expf, log1pf, _scale):
    big = ew.max(a, b)
    delta = ew.sub(a, b)
    # delta is NaN for NaN inputs and for two infinities of the same sign: in the
    # latter case the answer is that infinity, which a + b gives.
    return _where(ew.ne(delta, delta), ew.add(a, b),
                  ew.add(big, log1pf(expf(ew.neg(ew.abs(delta))))))


@_public
@_quiet
def hypot(x1, x2, /):
    """``sqrt(x1**2 + x2**2)``, scaled to avoid overflow; infinity wins over NaN."""
    a, b = promote_args_inexact("hypot", x1, x2)
    a, b = ew.abs(a), ew.abs(b)
    any_inf = ew.bitwise_or(ew.eq(a, _const(a, np.inf)), ew.eq(b, _const(b, np.inf)))
    big, small = ew.max(a, b), ew.min(a, b)
    zero = ew.eq(big, _const(big, 0))
    ratio = ew.div(small, _where(zero, _const(big, 1), big))
    out = ew.mul(big, ew.sqrt(ew.add(_const(ratio, 1), ew.mul(ratio, ratio))))
    return _where(any_inf, _jconst(out, np.inf), out)


@_public
@_quiet
def sinc(x, /):
    """``sin(pi x) / (pi x)`` with ``sinc(0) == 1``."""
    (a,) = promote_args_inexact("sinc", x)
    zero = ew.eq(a, _const(a, 0))
    pix = ew.mul(_where(zero, _const(a, 1), a), _const(a, np.pi))
    return _where(zero, _const(a, 1), ew.div(ew.sin(pix), pix))


# ---------------------------------------------------------------------------
# min/max variants, clip, where
# ---------------------------------------------------------------------------
@_public
def fmax(x1, x2, /):
    """Maximum that ignores NaN (returns the other operand)."""
    a, b = promote_args("fmax", x1, x2)
    if not dtypes.is_inexact(_dt(a)):
        return maximum(a, b)
    return _where(ew.bitwise_or(ew.ne(b, b), ew.gt(a, b)), a, b)


@_public
def fmin(x1, x2, /):
    """Minimum that ignores NaN (returns the other operand)."""
    a, b = promote_args("fmin", x1, x2)
    if not dtypes.is_inexact(_dt(a)):
        return minimum(a, b)
    return _where(ew.bitwise_or(ew.ne(b, b), ew.lt(a, b)), a, b)


@_public
def clip(arr, /, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002
    """Limit values to ``[min, max]`` (either bound may be ``None``).

    Examples
    --------
    >>> jnp.clip(jnp.array([1, 5, 9]), 2, 7)  # doctest: +SKIP
    Array([2, 5, 7], dtype=int32)
    """
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max
    check_arraylike("clip", arr)
    if lo is not None:
        arr = maximum(lo, arr)
    if hi is not None:
        arr = minimum(hi, arr)
    return arr


def where(condition, x, y, /):
    """``x`` where ``condition`` else ``y``, broadcasting all three: the three-argument
    form of ``jnp.where``, which ``_searching`` defines (its one-argument form is
    ``nonzero``)."""
    check_arraylike("where", condition, x, y)
    (c,) = promote_args("where", condition)
    if not dtypes.is_bool(_dt(c)):
        c = ew.ne(c, _const(c, 0))
    a, b = promote_args("where", x, y)
    return _where(c, a, b)


# ---------------------------------------------------------------------------
# Classification
# ---------------------------------------------------------------------------
@_public
def isnan(x, /):
    """True where ``x`` is NaN (never for integers)."""
    (a,) = promote_args("isnan", x)
    return ew.ne(a, a)


@_public
def isinf(x, /):
    """True where ``x`` is +inf or -inf (real or imaginary part for complex)."""
    (a,) = promote_args("isinf", x)
    dt = _dt(a)
    if dtypes.is_complex(dt):
        return ew.bitwise_or(isinf(ew.real(a)), isinf(ew.imag(a)))
    if not dtypes.is_float(dt):
        return _all_false(a)
    return ew.eq(ew.abs(a), _const(a, np.inf, weak=False))


def _all_false(a):
    """Strong bool zeros (JAX's full_like result for integer inputs)."""
    return _full(ew.ne(a, a), False, _shape(a), weak=False)


def _isinf_signed(name, sign):
    def fn(x, /):
        (a,) = promote_args(name, x)
        if not dtypes.is_float(_dt(a)):
            if dtypes.is_complex(_dt(a)):
                raise TypeError(f"{name} does not support complex inputs")
            return _all_false(a)
        return ew.eq(a, _const(a, sign * np.inf, weak=False))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"True where ``x`` is {'+' if sign > 0 else '-'}inf."
    __all__.append(name)
    return fn


isposinf = _isinf_signed("isposinf", 1)
isneginf = _isinf_signed("isneginf", -1)


@_public
def isfinite(x, /):
    """True where ``x`` is neither infinite nor NaN (always for integers)."""
    (a,) = promote_args("isfinite", x)
    dt = _dt(a)
    if dtypes.is_complex(dt):
        return ew.bitwise_and(ew.is_finite(ew.real(a)), ew.is_finite(ew.imag(a)))
    if not dtypes.is_float(dt):
        return ew.bitwise_not(_all_false(a))
    return ew.is_finite(a)


@_public
@_quiet
def signbit(x, /):
    """True where the sign bit is set: negative numbers, ``-0.0`` and ``-nan``."""
    (a,) = promote_args("signbit", x)
    dt = _dt(a)
    if dtypes.is_complex(dt):
        raise TypeError("signbit does not support complex inputs")
    if dtypes.is_bool(dt) or dt.kind == "u":
        return _all_false(a)
    if dtypes.is_float(dt):
        out = ew.signbit(a)
        # A bool result is never weakly typed (as jax), even from a Python float.
        return ew.convert_element_type(out, dtypes.bool_, False) if \
            get_aval(out).weak_type else out
    return ew.lt(a, _const(a, 0, weak=False))


@_public
@_quiet
def copysign(x1, x2, /):
    """``|x1|`` with the sign of ``x2``."""
    a, b = promote_args_inexact("copysign", x1, x2)
    if dtypes.is_complex(_dt(a)):
        raise TypeError("copysign does not support complex inputs")
    mag = ew.abs(a)
    shape = broadcast_shapes("copysign", _shape(a), _shape(b))
    return _where(signbit(b), ew.neg(mag), mag) if shape == _shape(a) or _shape(a) == () \
        else _where(signbit(b), ew.neg(broadcast_to_shape(mag, shape)),
                    broadcast_to_shape(mag, shape))


@_public
def heaviside(x1, x2, /):
    """0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``."""
    a, b = promote_args_inexact("heaviside", x1, x2)
    zero, one = _jconst(a, 0), _jconst(a, 1)
    # NaN stays NaN; x1 == 0 takes x2.
    mid = _where(ew.eq(a, zero), b, a)
    return _where(ew.lt(a, zero), zero, _where(ew.gt(a, zero), one, mid))


# ---------------------------------------------------------------------------
# Logical and bitwise
# ---------------------------------------------------------------------------
def _to_bool(a):
    return a if dtypes.is_bool(_dt(a)) else ew.ne(a, _const(a, 0))


def _to_bool_strong(x):
    """Truth value as JAX's logical functions take it: non-bools compare against a
    strongly typed zero, so the result is strong."""
    (a,) = promote_args("logical", x)
    return a if dtypes.is_bool(_dt(a)) else ew.ne(a, _jconst(a, 0))


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        # Promoted first, as in JAX: a Python float meeting a float16 array is rounded
        # to float16 (2.2e-16 becomes 0, so False) before its truth is taken.
        a, b = promote_args(name, x1, x2)
        return lax_fn(_to_bool_strong(a), _to_bool_strong(b))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of the truth values of ``x1`` and ``x2``."
    __all__.append(name)
    return fn


logical_and = _logical("logical_and", ew.bitwise_and)
logical_or = _logical("logical_or", ew.bitwise_or)
logical_xor = _logical("logical_xor", ew.bitwise_xor)


@_public
def logical_not(x, /):
    """Elementwise NOT of the truth value of ``x``."""
    (a,) = promote_args("logical_not", x)
    return ew.bitwise_not(_to_bool(a))


@_public
def invert(x, /):
    """Bitwise NOT (logical NOT for bools)."""
    (a,) = promote_args("invert", x)
    return ew.bitwise_not(a)


bitwise_not = bitwise_invert = invert
__all__ += ["bitwise_not", "bitwise_invert"]

# ---------------------------------------------------------------------------
# Sign, absolute value, rounding
# ---------------------------------------------------------------------------


@_public
def sign(x, /):
    """Elementwise sign (-1, 0, 1; ``x / |x|`` for complex); bools are rejected like JAX."""
    (a,) = promote_args("sign", x)
    return ew.sign(a)


@_public
def absolute(x, /):
    """Elementwise absolute value; unsigned and bool inputs are returned as is."""
    (a,) = promote_args("absolute", x)
    if dtypes.is_bool(a.dtype) or a.dtype.kind == "u":
        return a
    return ew.abs(a)


abs = absolute  # noqa: A001 - numpy name
__all__.append("abs")
fabs = _unary("fabs", ew.abs, inexact=True, doc="Absolute value, as a float.")


def _rounding(name, lax_fn, doc):
    def fn(x, /):
        (a,) = promote_args(name, x)
        if not dtypes.is_inexact(_dt(a)):
            return a  # integers and bools are already integral
        if dtypes.is_complex(_dt(a)):
            raise TypeError(f"{name} does not support complex inputs")
        return lax_fn(a)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    __all__.append(name)
    return fn


floor = _rounding("floor", ew.floor, "Round down; integers are returned unchanged.")
ceil = _rounding("ceil", ew.ceil, "Round up; integers are returned unchanged.")
trunc = _rounding("trunc", lambda a: _where(ew.lt(a, _const(a, 0)), ew.ceil(a), ew.floor(a)),
                  "Round toward zero; integers are returned unchanged.")
fix = trunc
__all__.append("fix")


@_public
def rint(x, /):
    """Round to the nearest integer, ties to even; always a float (as JAX)."""
    (a,) = promote_args("rint", x)
    if not dtypes.is_inexact(_dt(a)):
        return ew.convert_element_type(a, dtypes.default_float(), False)
    if dtypes.is_complex(_dt(a)):
        return _round_complex(a, 0)
    return ew.round(a, ew.ROUND_TO_NEAREST_EVEN)


def _round_float(a, decimals):
    if decimals == 0:
        return ew.round(a, ew.ROUND_TO_NEAREST_EVEN)
    factor = _const(a, 10.0 ** decimals)
    return ew.div(ew.round(ew.mul(a, factor), ew.ROUND_TO_NEAREST_EVEN), factor)


def _round_complex(a, decimals):
    return _to_complex(_round_float(ew.real(a), decimals), _round_float(ew.imag(a), decimals),
                       _dt(a))


@_public
@_quiet
def round(a, decimals=0, out=None):  # noqa: A001 - numpy name
    """Round to ``decimals`` places, halves to even (NumPy's ``around``).

    Examples
    --------
    >>> jnp.round(jnp.array([0.5, 1.5, 2.5]))  # doctest: +SKIP
    Array([0., 2., 2.], dtype=float32)
    """
    if out is not None:
        raise TypeError("round: the 'out' argument is not supported (arrays are immutable)")
    decimals = int(decimals)
    (x,) = promote_args("round", a)
    dt = _dt(x)
    if dtypes.is_bool(dt):
        raise TypeError("round does not support bool inputs")
    if dtypes.is_integer(dt):
        if decimals >= 0:
            return x
        # Integer rounding to tens, hundreds...: halves to even, exact in integers.
        f = _const(x, 10 ** -decimals)
        q = floor_divide(x, f)
        r = ew.sub(x, ew.mul(q, f))
        twice = ew.mul(r, _const(r, 2))
        up = ew.bitwise_or(ew.gt(twice, f), ew.bitwise_and(
            ew.eq(twice, f), ew.ne(remainder(q, _const(q, 2)), _const(q, 0))))
        q = _where(up, ew.add(q, _const(q, 1)), q)
        return ew.mul(q, f)
    if dtypes.is_complex(dt):
        return _round_complex(x, decimals)
    return _round_float(x, decimals)


around = round
__all__.append("around")


@_public
def modf(x, /):
    """``(fractional part, integral part)``, both with the sign of ``x``."""
    (a,) = promote_args_inexact("modf", x)
    whole = trunc(a)
    return ew.sub(a, whole), whole


# ---------------------------------------------------------------------------
# Complex parts
# ---------------------------------------------------------------------------
@_public
def real(val, /):
    """Real part; real inputs are returned as is."""
    (a,) = promote_args("real", val)
    return ew.real(a) if dtypes.is_complex(_dt(a)) else a


@_public
def imag(val, /):
    """Imaginary part; zeros of the same dtype for real inputs."""
    (a,) = promote_args("imag", val)
    if dtypes.is_complex(_dt(a)):
        return ew.imag(a)
    return _full(a, 0, _shape(a), weak=get_aval(a).weak_type)


@_public
def conjugate(x, /):
    """Complex conjugate; real inputs are returned as is."""
    (a,) = promote_args("conjugate", x)
    return ew.conj(a) if dtypes.is_complex(_dt(a)) else a


conj = conjugate
__all__.append("conj")


@_public
def angle(z, deg=False):
    """Argument of a complex number (radians, or degrees with ``deg=True``)."""
    (a,) = promote_args("angle", z)
    if dtypes.is_complex(_dt(a)):
        re, im = ew.real(a), ew.imag(a)
    else:
        # As JAX: non-float inputs and float scalars are measured in the default float.
        if not dtypes.is_float(_dt(a)) or _shape(a) == ():
            a = ew.convert_element_type(a, dtypes.default_float(), False)
        re, im = a, _full(a, 0, _shape(a), weak=False)
    out = ew.atan2(im, re)
    return rad2deg(out) if deg else out
