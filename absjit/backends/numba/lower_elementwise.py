"""Scalar lowerings of elementwise primitives.

Each rule takes the operands as scalar expressions (names of locals in the loop body)
and returns one Python expression that Numba compiles to the same value the NumPy impl
rule computes. ``args`` are already of the operand dtype; the code generator wraps
every result in the output dtype's constructor (``np.float32(...)``), so the rules may
let Numba widen intermediates (int32 + int32 is int64 in Numba; the cast wraps it back,
which is exactly two's-complement wraparound).

Integer division, remainder, shifts and float -> int casts follow the rules written in
``absjit.ops.elementwise``'s docstring.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...ops import elementwise as ew
from ...ops.fma import fma_p
from ...ops.threefry import threefry2x32_p

__all__ = ["scalar_rules", "dtype_ctor", "literal_expr", "preserves_dtype", "NOT_LOWERED"]

# Elementwise primitives with no scalar spelling, and why (the function runs on the
# interpret backend).
NOT_LOWERED: dict = {}

scalar_rules: dict = {}


def dtype_ctor(dt) -> str:
    """The constructor of a dtype as it appears in generated source (``np.float32``)."""
    dt = np.dtype(dt)
    return "np.bool_" if dt == np.bool_ else f"np.{dt.name}"


def literal_expr(value, dt) -> str:
    """A scalar constant of dtype ``dt`` as source text."""
    dt = np.dtype(dt)
    v = np.asarray(value, dtype=dt)[()]
    if dt == np.bool_:
        return "True" if bool(v) else "False"
    if dt.kind == "f":
        f = float(v)
        if f != f:
            body = "np.nan"
        elif f in (float("inf"), float("-inf")):
            body = "np.inf" if f > 0 else "-np.inf"
        else:
            body = repr(f)
        return f"{dtype_ctor(dt)}({body})"
    if dt.kind == "c":
        re = literal_expr(v.real, np.float64)
        im = literal_expr(v.imag, np.float64)
        return f"{dtype_ctor(dt)}(complex({re}, {im}))"
    return f"{dtype_ctor(dt)}({int(v)})"


def _is_int(dt) -> bool:
    return np.dtype(dt).kind in "iu"


def _is_complex(dt) -> bool:
    return np.dtype(dt).kind == "c"


def _register(prim, rule):
    rule.__name__ = f"lower_{prim.name}"
    scalar_rules[prim] = rule


def _infix(op):
    def rule(args, in_avals, out_aval, **params):
        return f"({args[0]} {op} {args[1]})"
    return rule


def _call(fn):
    def rule(args, in_avals, out_aval, **params):
        return f"{fn}({', '.join(args)})"
    return rule


for _p, _op in ((ew.add_p, "+"), (ew.sub_p, "-"), (ew.mul_p, "*"), (ew.eq_p, "=="),
                (ew.ne_p, "!="), (ew.and_p, "&"), (ew.or_p, "|"), (ew.xor_p, "^")):
    _register(_p, _infix(_op))


def _compare(op, helper, swap):
    """An order comparison; complex operands compare lexicographically, as in NumPy."""
    def rule(args, in_avals, out_aval, **params):
        x, y = args
        if _is_complex(in_avals[0].dtype):
            return f"{helper}({y}, {x})" if swap else f"{helper}({x}, {y})"
        return f"({x} {op} {y})"
    return rule


for _p, _op, _h, _swap in ((ew.lt_p, "<", "_clt", False), (ew.le_p, "<=", "_cle", False),
                           (ew.gt_p, ">", "_clt", True), (ew.ge_p, ">=", "_cle", True)):
    _register(_p, _compare(_op, _h, _swap))


def _call_or_complex(fn, cfn):
    """``fn`` for real operands, absjit's ``cfn`` for complex ones (where Numba's
    complex function differs from NumPy's on infinite arguments)."""
    def rule(args, in_avals, out_aval, **params):
        return f"{cfn if _is_complex(in_avals[0].dtype) else fn}({', '.join(args)})"
    return rule


for _p, _fn, _cfn in ((ew.acosh_p, "np.arccosh", "_cacosh"),
                      (ew.sign_p, "np.sign", "_csign")):
    _register(_p, _call_or_complex(_fn, _cfn))


def _kernel(name, np_name, complex_fn=None):
    """absjit's vectorisable kernel ``_{name}_{dtype}`` (:mod:`.kernels_special`,
    :mod:`.kernels_trig`) for float32/float64; NumPy's function (or ``complex_fn``) for
    other dtypes."""
    def rule(args, in_avals, out_aval, **params):
        dt = np.dtype(in_avals[0].dtype)
        if dt in (np.float32, np.float64):
            return f"_{name}_{dt.name}({args[0]})"
        if complex_fn is not None and dt.kind == "c":
            return f"{complex_fn}({args[0]})"
        return f"{np_name}({args[0]})"
    return rule


for _p, _np_name, _cfn in ((ew.expm1_p, "np.expm1", None), (ew.log1p_p, "np.log1p", None),
                           (ew.atan_p, "np.arctan", None), (ew.tanh_p, "np.tanh", "_ctanh"),
                           (ew.sinh_p, "np.sinh", "_csinh"), (ew.cosh_p, "np.cosh", "_ccosh"),
                           (ew.sin_p, "np.sin", None), (ew.cos_p, "np.cos", None),
                           (ew.tan_p, "np.tan", None)):
    _register(_p, _kernel(_p.name, _np_name, _cfn))

for _p, _fn in ((ew.exp2_p, "np.exp2"), (ew.sqrt_p, "np.sqrt"),
                (ew.cbrt_p, "np.cbrt"), (ew.asin_p, "np.arcsin"), (ew.acos_p, "np.arccos"),
                (ew.asinh_p, "np.arcsinh"), (ew.atanh_p, "np.arctanh"),
                (ew.floor_p, "np.floor"), (ew.ceil_p, "np.ceil"),
                (ew.is_finite_p, "np.isfinite"), (ew.signbit_p, "np.signbit"),
                (ew.atan2_p, "np.arctan2"),
                (ew.nextafter_p, "np.nextafter")):
    _register(_p, _call(_fn))


def _recip(one, den, dt) -> str:
    return f"_cdiv({one}, {den})" if _is_complex(dt) else f"({one} / {den})"


def lower_div(args, in_avals, out_aval, **params):
    x, y = args
    dt = in_avals[0].dtype
    if _is_complex(dt):
        return f"_cdiv({x}, {y})"
    if not _is_int(dt):
        return f"({x} / {y})"
    return f"_idiv_{np.dtype(dt).name}({x}, {y})"


def lower_rem(args, in_avals, out_aval, **params):
    x, y = args
    dt = in_avals[0].dtype
    if not _is_int(dt):
        return f"np.fmod({x}, {y})"
    return f"({x} if {y} == 0 else {x} - {y} * _idiv_{np.dtype(dt).name}({x}, {y}))"


def lower_max(args, in_avals, out_aval, **params):
    x, y = args
    if _is_complex(in_avals[0].dtype):  # lexicographic; NaN wins
        return f"({x} if (_cle({y}, {x}) or {x} != {x}) else {y})"
    if np.dtype(in_avals[0].dtype).kind == "f":  # NaN wins, as in np.maximum
        # ``|`` (not ``or``): both tests always run, a select without a branch, which
        # lets a max reduction's lanes vectorise
        return f"({x} if (({x} >= {y}) | ({x} != {x})) else {y})"
    return f"({x} if {x} >= {y} else {y})"


def lower_min(args, in_avals, out_aval, **params):
    x, y = args
    if _is_complex(in_avals[0].dtype):
        return f"({x} if (_cle({x}, {y}) or {x} != {x}) else {y})"
    if np.dtype(in_avals[0].dtype).kind == "f":
        return f"({x} if (({x} <= {y}) | ({x} != {x})) else {y})"
    return f"({x} if {x} <= {y} else {y})"


def lower_neg(args, in_avals, out_aval, **params):
    return f"(-{args[0]})"


def lower_abs(args, in_avals, out_aval, **params):
    return f"abs({args[0]})"


def lower_rsqrt(args, in_avals, out_aval, **params):
    one = literal_expr(1, in_avals[0].dtype)
    return _recip(one, f"np.sqrt({args[0]})", in_avals[0].dtype)


def _exp_fn(dt, name="exp") -> str:
    """``exp``/``log`` for one dtype: the vectorisable kernels of ``fastmath_kernels`` for
    float32/float64 (a libm call is scalar and stops the loop vectoriser)."""
    dt = np.dtype(dt)
    return f"_{name}_{dt.name}" if dt in (np.float32, np.float64) else f"np.{name}"


def lower_exp(args, in_avals, out_aval, **params):
    return f"{_exp_fn(in_avals[0].dtype)}({args[0]})"


def lower_log(args, in_avals, out_aval, **params):
    return f"{_exp_fn(in_avals[0].dtype, 'log')}({args[0]})"


def lower_logistic(args, in_avals, out_aval, **params):
    one = literal_expr(1, in_avals[0].dtype)
    return _recip(one, f"({one} + {_exp_fn(in_avals[0].dtype)}(-{args[0]}))",
                  in_avals[0].dtype)


def lower_not(args, in_avals, out_aval, **params):
    if np.dtype(in_avals[0].dtype) == np.bool_:
        return f"(not {args[0]})"
    return f"(~{args[0]})"


def _shift(kind):
    def rule(args, in_avals, out_aval, **params):
        x, y = args
        dt = np.dtype(in_avals[0].dtype)
        bits = dt.itemsize * 8
        ctor = dtype_ctor(dt)
        ok = f"(0 <= {y} and {y} < {bits})"
        if kind == "left":
            return f"({ctor}({x} << {y}) if {ok} else {ctor}(0))"
        if kind == "arith":
            # The top bit is the sign bit for unsigned types too (the impl rule's spec).
            sx = x if dt.kind == "i" else f"np.int{bits}({x})"
            fill = f"({ctor}(-1) if {sx} < 0 else {ctor}(0))"
            return f"({ctor}({sx} >> {y}) if {ok} else {fill})"
        unsigned = f"np.uint{bits}"
        return f"({ctor}({unsigned}({x}) >> {unsigned}({y})) if {ok} else {ctor}(0))"
    return rule


def lower_pow(args, in_avals, out_aval, **params):
    x, y = args
    if not dtypes.is_float(in_avals[0].dtype) or _is_int(in_avals[1].dtype):
        return f"({x} ** {y})"
    # IEEE pow(x, 0.5) is +inf at -inf and +0 at -0; LLVM and SVML evaluate a power of
    # one half as a square root, which gives NaN and -0 there.
    return f"(({x} ** {y}) if {y} != 0.5 else (abs({x} ** {y}) if {x} != -np.inf else np.inf))"


def _power_by_squaring(x: str, n: int) -> str:
    if n == 1:
        return x
    half = _power_by_squaring(x, n // 2)
    sq = f"({half} * {half})"
    return f"({sq} * {x})" if n % 2 else sq


def lower_integer_pow(args, in_avals, out_aval, *, y):
    x = args[0]
    dt = in_avals[0].dtype
    if y == 0:
        return literal_expr(1, dt)
    if y < 0:
        return _recip(literal_expr(1, dt), _power_by_squaring(x, -y), dt)
    if _is_int(dt) and y > 2:
        # Wrap after every product so Numba's int64 intermediates cannot overflow.
        acc = x
        for _ in range(y - 1):
            acc = f"{dtype_ctor(dt)}({acc} * {x})"
        return acc
    return _power_by_squaring(x, y)


def lower_round(args, in_avals, out_aval, *, rounding_method):
    x = args[0]
    if rounding_method == ew.ROUND_TO_NEAREST_EVEN:
        return f"np.rint({x})"
    half = literal_expr(0.5, in_avals[0].dtype)
    return f"(np.sign({x}) * np.floor(abs({x}) + {half}))"


def lower_convert_element_type(args, in_avals, out_aval, *, new_dtype, weak_type):
    x = args[0]
    src, dst = np.dtype(in_avals[0].dtype), np.dtype(new_dtype)
    if dst == np.bool_:
        return f"({x} != 0)"
    if src.kind == "c" and dst.kind != "c":  # NumPy's astype keeps the real part
        x = f"({x}).real"
        src = np.dtype(np.float32 if src == np.complex64 else np.float64)
    if dst.kind in "iu" and src.kind == "f":
        info = np.iinfo(dst)
        ctor = dtype_ctor(dst)
        # Compare in float64: every float32 value is exact there. float64(info.max) may
        # round up to 2**bits, which is why the upper test is ``>=``.
        return (f"({ctor}(0) if {x} != {x} else ({ctor}({info.max}) if np.float64({x}) >= "
                f"{float(info.max)!r} else ({ctor}({info.min}) if np.float64({x}) <= "
                f"{float(info.min)!r} else {ctor}({x}))))")
    return x  # the generator's cast to the output dtype does the conversion


def lower_select_n(args, in_avals, out_aval, **params):
    which, cases = args[0], args[1:]
    if len(cases) == 1:
        return cases[0]
    if np.dtype(in_avals[0].dtype) == np.bool_:
        return f"({cases[1]} if {which} else {cases[0]})"
    expr = cases[-1]  # out-of-range indices clamp, as np.clip does in the impl rule
    for i in range(len(cases) - 2, -1, -1):
        expr = f"({cases[i]} if {which} <= {i} else {expr})"
    return expr


def lower_clamp(args, in_avals, out_aval, **params):
    lo, x, hi = args
    inner = lower_max([x, lo], in_avals[1:2] * 2, out_aval)
    return lower_min([inner, hi], in_avals[1:2] * 2, out_aval)


def lower_stop_gradient(args, in_avals, out_aval, **params):
    return args[0]


def lower_fma(args, in_avals, out_aval, **params):
    return f"_fma_{np.dtype(in_avals[0].dtype).name}({', '.join(args)})"


def lower_threefry2x32(args, in_avals, out_aval, *, output):
    return f"_threefry2x32_{output}({', '.join(args)})"


def lower_real(args, in_avals, out_aval, **params):
    return f"({args[0]}).real" if _is_complex(in_avals[0].dtype) else args[0]


def lower_imag(args, in_avals, out_aval, **params):
    if _is_complex(in_avals[0].dtype):
        return f"({args[0]}).imag"
    return literal_expr(0, in_avals[0].dtype)


def lower_conj(args, in_avals, out_aval, **params):
    return f"({args[0]}).conjugate()" if _is_complex(in_avals[0].dtype) else args[0]


for _p, _rule in ((ew.div_p, lower_div), (ew.rem_p, lower_rem), (ew.max_p, lower_max),
                  (ew.min_p, lower_min), (ew.neg_p, lower_neg),
                  (ew.abs_p, lower_abs), (ew.rsqrt_p, lower_rsqrt), (ew.exp_p, lower_exp),
                  (ew.log_p, lower_log),
                  (ew.logistic_p, lower_logistic), (ew.not_p, lower_not),
                  (ew.shift_left_p, _shift("left")),
                  (ew.shift_right_arithmetic_p, _shift("arith")),
                  (ew.shift_right_logical_p, _shift("logical")), (ew.pow_p, lower_pow),
                  (ew.integer_pow_p, lower_integer_pow), (ew.round_p, lower_round),
                  (ew.convert_element_type_p, lower_convert_element_type),
                  (ew.select_n_p, lower_select_n), (ew.clamp_p, lower_clamp),
                  (ew.stop_gradient_p, lower_stop_gradient), (fma_p, lower_fma),
                  (threefry2x32_p, lower_threefry2x32), (ew.real_p, lower_real),
                  (ew.imag_p, lower_imag), (ew.conj_p, lower_conj)):
    scalar_rules[_p] = _rule


# Rules whose Numba expression already has the output dtype when every operand has it
# (float arithmetic stays float32 in Numba; integer arithmetic widens to int64, so
# integer results are always cast back). The renderer skips the cast for these: fewer
# calls for Numba to type, a measurably quicker compile.
_FLOAT_PRESERVING = {"add", "sub", "mul", "div", "neg", "max", "min", "abs", "sqrt",
                     "rsqrt", "exp", "log", "logistic", "sin", "cos", "tan", "tanh",
                     "floor", "ceil", "select_n", "clamp", "stop_gradient", "integer_pow",
                     "exp2", "expm1", "log1p", "fma", "sinh", "cosh", "atan"}
_BOOL_RESULT = {"eq", "ne", "lt", "le", "gt", "ge"}
_BOOL_PRESERVING = {"and", "or", "xor", "not", "select_n", "stop_gradient"}


def preserves_dtype(prim, in_dtypes, out_dtype) -> bool:
    """Whether ``scalar_rules[prim]`` yields ``out_dtype`` without a cast."""
    out = np.dtype(out_dtype)
    name = prim.name
    if out == np.bool_:
        if name in _BOOL_RESULT:
            return True
        return name in _BOOL_PRESERVING and all(np.dtype(d) == out for d in in_dtypes)
    if out.kind != "f" or name not in _FLOAT_PRESERVING:
        return False
    if name == "select_n":
        return all(np.dtype(d) == out for d in in_dtypes[1:])
    return all(np.dtype(d) == out for d in in_dtypes)
