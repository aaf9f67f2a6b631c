"""XLA rules for elementwise, structural and reduction primitives.

``xla_rules[p](ctx, *operands, **params) -> list of jax values``: each rule re-expresses
one absjit primitive with the public ``jax.lax`` API, keeping absjit's semantics where
they are stricter than XLA's (see :mod:`absjit.ops.elementwise`): rank-0 operands
broadcast, float -> integer casts saturate and send NaN to 0, integer division by zero
gives -1, ``select_n`` clamps its index, and float16/float32 sums accumulate in a wider
type. ``ctx`` carries the equation's output avals and the platform.

Imported by :mod:`.backend` on the first compile (it imports jax).
"""
from __future__ import annotations

import numpy as np
from jax import lax

from ... import dtypes

__all__ = ["xla_rules", "NOT_LOWERED", "register"]

# Primitives without an XLA rule, and why. Compiling a program holding one raises
# :class:`absjit.errors.CompilationError` naming it.
NOT_LOWERED = {
    "custom_lin": "appears only inside linearised jaxprs, which are transposed, never run "
                  "(its NumPy rule raises the same error a jvp of a custom_vjp function does)",
}
NOT_LOWERED.update((name, "a collective over a named vmap axis: vmap removes it before any "
                          "backend sees it") for name in ("psum", "pmax", "pmin",
                                                          "all_gather", "axis_index"))

xla_rules: dict = {}


def register(*names):
    """Decorator: the rule of the primitives called ``names``."""
    def deco(fn):
        for n in names:
            xla_rules[n] = fn
        return fn
    return deco


def _shape(x):
    return tuple(np.shape(x))


def _bcast(x, shape):
    """A rank-0 operand broadcast to ``shape`` (absjit's elementwise ops allow it)."""
    return x if _shape(x) == tuple(shape) else lax.broadcast_in_dim(x, tuple(shape), ())


def _full(value, dtype, shape=()):
    return lax.full(tuple(shape), np.asarray(value, dtype), np.dtype(dtype))


def _out_shape(ctx):
    return tuple(ctx.out_avals[0].shape)


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------
_UNARY = {
    "neg": lax.neg, "sign": lax.sign, "exp": lax.exp, "exp2": lax.exp2, "expm1": lax.expm1,
    "log": lax.log, "log1p": lax.log1p, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt,
    "cbrt": lax.cbrt, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan, "asin": lax.asin,
    "acos": lax.acos, "atan": lax.atan, "sinh": lax.sinh, "cosh": lax.cosh,
    "tanh": lax.tanh, "asinh": lax.asinh, "acosh": lax.acosh, "atanh": lax.atanh,
    "floor": lax.floor, "ceil": lax.ceil, "is_finite": lax.is_finite,
    "logistic": lax.logistic, "not": lax.bitwise_not, "real": lax.real, "imag": lax.imag,
}
_BINARY = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "max": lax.max, "min": lax.min,
    "atan2": lax.atan2, "nextafter": lax.nextafter, "eq": lax.eq, "ne": lax.ne,
    "lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge, "and": lax.bitwise_and,
    "or": lax.bitwise_or, "xor": lax.bitwise_xor, "shift_left": lax.shift_left,
    "shift_right_logical": lax.shift_right_logical,
    "shift_right_arithmetic": lax.shift_right_arithmetic,
}


def _unary_rule(fn):
    def rule(ctx, x):
        return [fn(x)]
    return rule


def _binary_rule(fn):
    def rule(ctx, x, y):
        shape = _out_shape(ctx)
        return [fn(_bcast(x, shape), _bcast(y, shape))]
    return rule


for _name, _fn in _UNARY.items():
    xla_rules[_name] = _unary_rule(_fn)


@register("signbit")
def _signbit(ctx, x):
    # The top bit of the same-width integer: a NaN's sign too.
    ints = {2: np.int16, 4: np.int32, 8: np.int64}[np.dtype(x.dtype).itemsize]
    return [lax.lt(lax.bitcast_convert_type(x, ints), ints(0))]
for _name, _fn in _BINARY.items():
    xla_rules[_name] = _binary_rule(_fn)


def _complex_lt(x, y, or_equal=False):
    """NumPy's order of complex numbers: by real part, then imaginary part."""
    xr, yr, xi, yi = lax.real(x), lax.real(y), lax.imag(x), lax.imag(y)
    tie = (lax.le if or_equal else lax.lt)(xi, yi)
    return lax.bitwise_or(lax.lt(xr, yr), lax.bitwise_and(lax.eq(xr, yr), tie))


def _ordered(name, fn):
    """Comparisons, max and min: XLA orders no complex numbers, NumPy orders them
    lexicographically (and propagates NaN in max/min)."""
    def rule(ctx, x, y):
        shape = _out_shape(ctx)
        x, y = _bcast(x, shape), _bcast(y, shape)
        if np.dtype(x.dtype).kind != "c":
            return [fn(x, y)]
        if name == "lt":
            return [_complex_lt(x, y)]
        if name == "le":
            return [_complex_lt(x, y, True)]
        if name == "gt":
            return [_complex_lt(y, x)]
        if name == "ge":
            return [_complex_lt(y, x, True)]
        nan = lax.bitwise_or(lax.ne(x, x), lax.ne(y, y))
        pick_x = _complex_lt(y, x) if name == "max" else _complex_lt(x, y)
        out = lax.select(pick_x, x, y)
        either = lax.select(lax.ne(x, x), x, y)
        return [lax.select(nan, either, out)]
    return rule


for _name in ("lt", "le", "gt", "ge", "max", "min"):
    xla_rules[_name] = _ordered(_name, _BINARY[_name])


@register("abs")
def _abs(ctx, x):
    return [lax.abs(x)]


@register("conj")
def _conj(ctx, x):
    # lax.conj of a real operand returns a complex value; absjit keeps the dtype.
    return [lax.conj(x) if np.dtype(x.dtype).kind == "c" else x]


@register("stop_gradient")
def _stop_gradient(ctx, x):
    return [x]


@register("div")
def _div(ctx, x, y):
    shape = _out_shape(ctx)
    x, y = _bcast(x, shape), _bcast(y, shape)
    dt = np.dtype(x.dtype)
    if dt.kind not in "iu":
        return [lax.div(x, y)]
    # x // 0 == -1 and INT_MIN // -1 == INT_MIN (wraparound), written out.
    zero = lax.eq(y, _full(0, dt, shape))
    safe = lax.select(zero, _full(1, dt, shape), y)
    if dt.kind == "i":
        minus_one = lax.eq(y, _full(-1, dt, shape))
        safe = lax.select(minus_one, _full(1, dt, shape), safe)
        q = lax.select(minus_one, lax.neg(x), lax.div(x, safe))
    else:
        q = lax.div(x, safe)
    return [lax.select(zero, _full(np.array(-1).astype(dt), dt, shape), q)]


@register("rem")
def _rem(ctx, x, y):
    shape = _out_shape(ctx)
    x, y = _bcast(x, shape), _bcast(y, shape)
    dt = np.dtype(x.dtype)
    if dt.kind not in "iu":
        return [lax.rem(x, y)]
    zero = lax.eq(y, _full(0, dt, shape))
    safe = lax.select(zero, _full(1, dt, shape), y)
    if dt.kind == "i":  # INT_MIN % -1 is 0
        safe = lax.select(lax.eq(y, _full(-1, dt, shape)), _full(1, dt, shape), safe)
    return [lax.select(zero, x, lax.rem(x, safe))]


@register("pow")
def _pow(ctx, x, y):
    shape = _out_shape(ctx)
    return [lax.pow(_bcast(x, shape), _bcast(y, shape))]


@register("integer_pow")
def _integer_pow(ctx, x, *, y):
    return [lax.integer_pow(x, y)]


@register("round")
def _round(ctx, x, *, rounding_method):
    return [lax.round(x, lax.RoundingMethod(rounding_method))]


def float_to_int(x, dt):
    """Truncate toward zero, saturate to ``dt``'s range, NaN -> 0 (absjit's rule; XLA
    leaves out-of-range conversions unspecified)."""
    dt = np.dtype(dt)
    info = np.iinfo(dt)
    if np.dtype(x.dtype).kind == "c":
        x = lax.real(x)
    fdt = np.dtype(x.dtype)
    shape = _shape(x)
    t = _trunc(x)
    # info.max as a float of x's type may round up (2**31 in float32): ">=" catches it.
    high = lax.ge(t, _full(float(info.max), fdt, shape))
    low = lax.le(t, _full(float(info.min), fdt, shape))
    nan = lax.ne(t, t)
    safe = lax.select(lax.bitwise_or(lax.bitwise_or(high, low), nan), _full(0, fdt, shape), t)
    out = lax.convert_element_type(safe, dt)
    out = lax.select(high, _full(info.max, dt, shape), out)
    out = lax.select(low, _full(info.min, dt, shape), out)
    return out


def _trunc(x):
    return lax.select(lax.lt(x, _full(0, x.dtype, _shape(x))), lax.ceil(x), lax.floor(x))


@register("convert_element_type")
def _convert(ctx, x, *, new_dtype, weak_type):
    new = np.dtype(new_dtype)
    old = np.dtype(x.dtype)
    if old == new:
        return [x]
    if new == np.bool_:
        return [lax.ne(x, _full(0, old, _shape(x)))]
    if dtypes.is_integer(new) and dtypes.is_inexact(old):
        return [float_to_int(x, new)]
    if old.kind == "c" and new.kind != "c":
        x = lax.real(x)
    return [lax.convert_element_type(x, new)]


@register("select_n")
def _select_n(ctx, which, *cases):
    shape = _out_shape(ctx)
    cases = [_bcast(c, shape) for c in cases]
    if len(cases) == 1:
        return [cases[0]]
    which = _bcast(which, shape)
    if np.dtype(which.dtype) != np.bool_:
        wdt = np.dtype(which.dtype)
        which = lax.clamp(_full(0, wdt), which, _full(len(cases) - 1, wdt))
        if len(cases) == 2:
            which = lax.ne(which, _full(0, wdt, shape))
        else:  # XLA takes an int32 case index
            which = lax.convert_element_type(which, np.int32)
    return [lax.select_n(which, *cases)]


@register("clamp")
def _clamp(ctx, lo, x, hi):
    shape = _out_shape(ctx)
    return [lax.min(lax.max(_bcast(x, shape), _bcast(lo, shape)), _bcast(hi, shape))]


# ---------------------------------------------------------------------------
# structural
# ---------------------------------------------------------------------------
@register("broadcast_in_dim")
def _broadcast_in_dim(ctx, x, *, shape, broadcast_dimensions):
    return [lax.broadcast_in_dim(x, tuple(shape), tuple(broadcast_dimensions))]


@register("reshape")
def _reshape(ctx, x, *, new_sizes, dimensions):
    if dimensions is not None:
        x = lax.transpose(x, tuple(dimensions))
    return [lax.reshape(x, tuple(new_sizes))]


@register("transpose")
def _transpose(ctx, x, *, permutation):
    return [lax.transpose(x, tuple(permutation))]


@register("squeeze")
def _squeeze(ctx, x, *, dimensions):
    return [lax.squeeze(x, tuple(dimensions))]


@register("slice")
def _slice(ctx, x, *, start_indices, limit_indices, strides):
    return [lax.slice(x, tuple(start_indices), tuple(limit_indices),
                      None if strides is None else tuple(strides))]


@register("dynamic_slice")
def _dynamic_slice(ctx, x, *idx, slice_sizes):
    # XLA clamps the start indices into range exactly as absjit's rule does (negative
    # starts clamp to 0; jax's wrapper would wrap them instead, so that is turned off).
    return [lax.dynamic_slice(x, list(idx), tuple(slice_sizes), allow_negative_indices=False)]


@register("dynamic_update_slice")
def _dynamic_update_slice(ctx, x, update, *idx):
    return [lax.dynamic_update_slice(x, update, list(idx), allow_negative_indices=False)]


@register("concatenate")
def _concatenate(ctx, *xs, dimension):
    return [lax.concatenate(list(xs), dimension)]


@register("pad")
def _pad(ctx, x, v, *, padding_config):
    return [lax.pad(x, v, tuple(tuple(c) for c in padding_config))]


@register("rev")
def _rev(ctx, x, *, dimensions):
    return [lax.rev(x, tuple(dimensions)) if dimensions else x]


@register("dim_value")
def _dim_value(ctx, *, size, dtype):
    # The xla backend compiles ranked programs once per concrete shape
    # (:class:`~absjit.backends.base.PerShapeExecutable`): ``size`` is an int.
    return [_full(int(size), dtype)]


@register("iota")
def _iota(ctx, *, dtype, shape, dimension):
    return [lax.broadcasted_iota(np.dtype(dtype), tuple(shape), dimension)]


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
def _sum_acc_dtype(dt, platform):
    """The accumulator of a sum: float16/bfloat16 in float32; float32 in float64 (as the
    NumPy rule and the cpu backend do) except on TPUs, which have no float64."""
    dt = np.dtype(dt)
    if dt.kind == "f" and dt.itemsize < 4 or dtypes.is_bfloat16(dt):
        return np.dtype(np.float32)
    if dt == np.float32 and platform != "tpu":
        return np.dtype(np.float64)
    if dt == np.complex64 and platform != "tpu":
        return np.dtype(np.complex128)
    return dt


@register("reduce_sum")
def _reduce_sum(ctx, x, *, axes):
    dt = np.dtype(x.dtype)
    acc = _sum_acc_dtype(dt, ctx.platform)
    if acc != dt:
        x = lax.convert_element_type(x, acc)
    out = lax.reduce_sum(x, tuple(axes)) if axes else x
    return [lax.convert_element_type(out, dt) if acc != dt else out]


def _reducer(fn):
    def rule(ctx, x, *, axes):
        return [fn(x, tuple(axes)) if axes else x]
    return rule


register("reduce_max")(_reducer(lax.reduce_max))
register("reduce_min")(_reducer(lax.reduce_min))
register("reduce_prod")(_reducer(lax.reduce_prod))
register("reduce_and")(_reducer(lax.reduce_and))
register("reduce_or")(_reducer(lax.reduce_or))


@register("argmax")
def _argmax(ctx, x, *, axes, index_dtype):
    return [lax.argmax(x, axes[0], np.dtype(index_dtype))]


@register("argmin")
def _argmin(ctx, x, *, axes, index_dtype):
    return [lax.argmin(x, axes[0], np.dtype(index_dtype))]


def _cumulative(fn):
    def rule(ctx, x, *, axis, reverse):
        return [fn(x, axis=axis, reverse=reverse)]
    return rule


register("cumsum")(_cumulative(lax.cumsum))
register("cumprod")(_cumulative(lax.cumprod))
register("cummax")(_cumulative(lax.cummax))
register("cummin")(_cumulative(lax.cummin))


# ---------------------------------------------------------------------------
# fma and the Threefry hash (absjit.random)
# ---------------------------------------------------------------------------
@register("fma")
def _fma(ctx, a, b, c):
    """``a * b + c`` rounded once to float32: the float32 product is exact in float64,
    the float64 sum is rounded to odd (so that the final rounding to float32 cannot
    round twice), then converted."""
    shape = _out_shape(ctx)
    a, b, c = (_bcast(lax.convert_element_type(v, np.float64), shape) for v in (a, b, c))
    p = lax.mul(a, b)
    s = lax.add(p, c)
    back = lax.sub(s, p)
    err = lax.add(lax.sub(p, lax.sub(s, back)), lax.sub(c, back))  # s + err is exact
    bits = lax.bitcast_convert_type(s, np.int64)
    even = lax.eq(lax.bitwise_and(bits, _full(1, np.int64, shape)), _full(0, np.int64, shape))
    inexact = lax.ne(err, _full(0.0, np.float64, shape))
    toward = lax.add(s, lax.mul(err, _full(np.inf, np.float64, shape)))
    odd = lax.select(lax.bitwise_and(even, inexact), lax.nextafter(s, toward), s)
    return [lax.convert_element_type(odd, np.float32)]


@register("threefry2x32")
def _threefry2x32(ctx, k0, k1, x0, x1, *, output):
    from ...ops.threefry import KEY_PARITY, ROTATIONS
    shape = _out_shape(ctx)
    k0, k1, x0, x1 = (_bcast(v, shape) for v in (k0, k1, x0, x1))
    u32 = np.uint32

    def const(v):
        return _full(v, u32, shape)

    ks = (k0, k1, lax.bitwise_xor(lax.bitwise_xor(k0, k1), const(KEY_PARITY)))
    x0 = lax.add(x0, ks[0])
    x1 = lax.add(x1, ks[1])
    for i in range(5):
        for r in ROTATIONS[i % 2]:
            x0 = lax.add(x0, x1)
            rotated = lax.bitwise_or(lax.shift_left(x1, const(r)),
                                     lax.shift_right_logical(x1, const(32 - r)))
            x1 = lax.bitwise_xor(rotated, x0)
        x0 = lax.add(x0, ks[(i + 1) % 3])
        x1 = lax.add(lax.add(x1, ks[(i + 2) % 3]), const(i + 1))
    return [{"x0": x0, "x1": x1, "xor": lax.bitwise_xor(x0, x1)}[output]]
