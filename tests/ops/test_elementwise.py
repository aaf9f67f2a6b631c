"""lax elementwise primitives: values against NumPy and ``jax.lax``, dtypes, weak types,
errors, and the JVP / transpose / batching rules registered beside each primitive."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import absjit
from absjit import lax
from absjit.core.trace import get_aval
from absjit.interpreters import ad, batching
from tests.checks import assert_close, jax, tolerance

jlax = None if jax is None else jax.lax

FLOATS = [np.float16, np.float32]
INEXACT = FLOATS + [np.complex64]
INTS = [np.int8, np.int32, np.uint8]


def _arrays(dtype, shape=None, lo=-3.0, hi=3.0):
    dt = np.dtype(dtype)
    shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3) \
        if shape is None else st.just(shape)
    if dt.kind == "f":
        lo, hi = float(dt.type(lo)), float(dt.type(hi))
        # XLA flushes subnormals to zero; NumPy does not: keep them out of comparisons.
        elems = st.floats(lo, hi, width=16 if dt.itemsize == 2 else 32,
                          allow_subnormal=False)
    elif dt.kind == "c":
        part = st.floats(lo, hi, width=32, allow_subnormal=False)
        elems = st.builds(complex, part, part)
    elif dt.kind == "b":
        elems = st.booleans()
    else:
        info = np.iinfo(dt)
        elems = st.integers(int(info.min), int(info.max))
    return hnp.arrays(dt, shapes, elements=elems)


# name, accepted dtypes, (lo, hi) of the sampled domain
UNARY = [
    ("neg", INEXACT + INTS[:2], (-3, 3)), ("sign", FLOATS + INTS[:2], (-3, 3)),
    ("abs", INEXACT + INTS[:2], (-3, 3)), ("exp", INEXACT, (-3, 3)),
    ("exp2", FLOATS, (-3, 3)), ("expm1", FLOATS, (-3, 3)), ("log", FLOATS, (0.1, 5)),
    ("log1p", FLOATS, (-0.5, 3)), ("sqrt", INEXACT, (0, 5)), ("rsqrt", FLOATS, (0.1, 5)),
    ("cbrt", FLOATS, (-3, 3)), ("sin", INEXACT, (-3, 3)), ("cos", INEXACT, (-3, 3)),
    ("tan", FLOATS, (-1.2, 1.2)), ("asin", FLOATS, (-0.9, 0.9)),
    ("acos", FLOATS, (-0.9, 0.9)), ("atan", FLOATS, (-3, 3)), ("sinh", FLOATS, (-3, 3)),
    ("cosh", FLOATS, (-3, 3)), ("tanh", INEXACT, (-3, 3)), ("asinh", FLOATS, (-3, 3)),
    ("acosh", FLOATS, (1.1, 4)), ("atanh", FLOATS, (-0.9, 0.9)),
    ("floor", FLOATS, (-3, 3)), ("ceil", FLOATS, (-3, 3)),
    ("is_finite", FLOATS, (-3, 3)), ("logistic", FLOATS, (-3, 3)),
    ("real", [np.complex64], (-3, 3)), ("imag", [np.complex64], (-3, 3)),
    ("conj", [np.complex64], (-3, 3)), ("bitwise_not", INTS + [np.bool_], (-3, 3)),
]
BINARY = [
    ("add", INEXACT + INTS), ("sub", INEXACT + INTS), ("mul", INEXACT + INTS),
    ("div", FLOATS + INTS), ("rem", FLOATS + INTS), ("max", FLOATS + INTS + [np.bool_]),
    ("min", FLOATS + INTS), ("atan2", FLOATS), ("nextafter", [np.float32]),
    ("eq", FLOATS + INTS + [np.bool_]), ("ne", FLOATS + INTS), ("lt", FLOATS + INTS),
    ("le", FLOATS + INTS), ("gt", FLOATS + INTS), ("ge", FLOATS + INTS),
    ("bitwise_and", INTS + [np.bool_]), ("bitwise_or", INTS + [np.bool_]),
    ("bitwise_xor", INTS + [np.bool_]), ("shift_left", INTS),
    ("shift_right_arithmetic", INTS), ("shift_right_logical", INTS),
    ("pow", [np.float32, np.complex64]),
]
_JAX_NAME = {"bitwise_not": "bitwise_not", "bitwise_and": "bitwise_and",
             "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor"}


def _jax_fn(name):
    return getattr(jlax, _JAX_NAME.get(name, name))


def _compare_with_jax(out, jax_out, dtype):
    assert np.dtype(out.dtype) == np.dtype(jax_out.dtype)
    assert out.weak_type == jax_out.weak_type
    tol = 4 * tolerance(dtype) if np.dtype(dtype).kind in "fc" else None
    assert_close(np.asarray(out), np.asarray(jax_out), rtol=tol, atol=tol, check_dtype=False)


@pytest.mark.parametrize("name,dts,dom", UNARY, ids=[u[0] for u in UNARY])
@settings(max_examples=6)
@given(data=st.data())
def test_unary_against_jax(name, dts, dom, data):
    dtype = data.draw(st.sampled_from(dts))
    x = data.draw(_arrays(dtype, lo=dom[0], hi=dom[1]))
    if x.dtype.kind == "c":  # -0.0 imaginary parts pick the other branch in JAX
        x = x + np.zeros((), x.dtype)
    out = getattr(lax, name)(x)
    assert out.shape == x.shape
    if jlax is not None:
        _compare_with_jax(out, _jax_fn(name)(x), dtype)


@pytest.mark.parametrize("name,dts", BINARY, ids=[b[0] for b in BINARY])
@settings(max_examples=6)
@given(data=st.data())
def test_binary_against_jax(name, dts, data):
    dtype = data.draw(st.sampled_from(dts))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    lo, hi = (0.5, 2.0) if name == "pow" else (-3, 3)
    x = data.draw(_arrays(dtype, shape, lo, hi))
    # One operand is sometimes rank 0: lax broadcasts rank-0 operands.
    y = data.draw(st.one_of(_arrays(dtype, shape, lo, hi), _arrays(dtype, (), lo, hi)))
    if name.startswith("shift"):
        y = (np.abs(y.astype(np.int64)) % (8 * np.dtype(dtype).itemsize + 2)).astype(dtype)
    out = getattr(lax, name)(x, y)
    assert out.shape == x.shape
    if jlax is not None:
        _compare_with_jax(out, _jax_fn(name)(x, y), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, np.bool_])
def test_every_op_under_each_mode(dtype, mode, rng):
    """Each mode (every jit backend) agrees with the eager reference, all ops of a dtype
    in one function (one compile)."""
    dt = np.dtype(dtype)
    x = (rng.uniform(0.2, 0.9, (2, 3)) * (1 if dt.kind != "c" else 1 + 0.5j)).astype(dt) \
        if dt.kind in "fc" else (rng.integers(0, 5, (2, 3)).astype(dt))
    y = (x[::-1] + x.dtype.type(1)) if dt.kind != "b" else ~x
    unary = [n for n, dts, _ in UNARY if dtype in dts and n not in ("acosh",)]
    binary = [n for n, dts in BINARY if dtype in dts]
    if dt.kind in "iu":
        y = np.abs(y) % 7

    def run(a, b):
        return ([getattr(lax, n)(a) for n in unary] + [getattr(lax, n)(a, b) for n in binary]
                + [lax.select(a == b, a, b), lax.clamp(b[0, 0], a, b)])
    with np.errstate(all="ignore"):
        expected = run(x, y)
        got = mode(run)(x, y)
    for name, g, e in zip(unary + binary + ["select", "clamp"], got, expected):
        assert_close(g, e, err_msg=name)


def test_weak_types_follow_operands():
    assert lax.add(1.0, 2.0).weak_type
    assert not lax.add(np.float32(1), 2.0).weak_type
    assert lax.exp(1.0).weak_type
    assert lax.eq(1.0, 2.0).dtype == np.bool_


@pytest.mark.parametrize("fn,args,msg", [
    (lax.add, (1, 1.0), "lax.add requires arguments to have the same dtypes, got int32, "
                        "float32"),
    (lax.mul, (np.ones(2, np.float32), np.ones(3, np.float32)), "incompatible shapes"),
    (lax.sin, (np.ones(2, np.int32),), "lax.sin does not accept dtype int32"),
    (lax.bitwise_and, (np.ones(2, np.float32), np.ones(2, np.float32)),
     "lax.and does not accept dtype float32"),
    (lax.shift_left, (np.ones(2, np.float32), np.ones(2, np.float32)), "shift_left"),
    (lambda x: lax.integer_pow(x, -1), (np.ones(2, np.int32),), "negative powers"),
    (lambda p: lax.select_n(p, np.ones(2, np.float32), np.ones(2, np.int32)),
     (np.ones(2, bool),), "same dtypes"),
    (lambda p: lax.select_n(p, np.ones(2, np.float32)), (np.ones(2, np.float32),),
     "bool or int32"),
    (lambda x: lax.clamp(np.zeros(3, np.float32), x, np.float32(1)),
     (np.ones(2, np.float32),), "must be scalar or have shape"),
])
def test_bad_input_raises_before_running(fn, args, msg):
    with pytest.raises(TypeError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        fn(*args)
    # The abstract rule is what raises: tracing fails the same way.
    with pytest.raises(TypeError):
        absjit.make_jaxpr(fn)(*args)


def test_integer_division_semantics(mode):
    x = np.array([7, -7, 7, -7, 0, 5, np.iinfo(np.int32).min], np.int32)
    y = np.array([2, 2, -2, -2, 0, 0, -1], np.int32)
    q, r = mode(lax.div)(x, y), mode(lax.rem)(x, y)
    np.testing.assert_array_equal(q, [3, -3, -3, 3, -1, -1, np.iinfo(np.int32).min])
    np.testing.assert_array_equal(r, [1, -1, 1, -1, 0, 5, 0])
    if jlax is not None:
        np.testing.assert_array_equal(q, jlax.div(x, y))
        np.testing.assert_array_equal(r, jlax.rem(x, y))
    u = np.array([7, 0, 200], np.uint8)
    np.testing.assert_array_equal(mode(lax.div)(u, np.array([2, 0, 3], np.uint8)),
                                  [3, 255, 66])


def test_shift_out_of_range_amounts(mode):
    x = np.array([-8, 8, 1], np.int32)
    y = np.array([40, -1, 31], np.int32)
    np.testing.assert_array_equal(mode(lax.shift_right_arithmetic)(x, y), [-1, 0, 0])
    np.testing.assert_array_equal(mode(lax.shift_right_logical)(x, y), [0, 0, 0])
    np.testing.assert_array_equal(mode(lax.shift_left)(x, y), [0, 0, np.iinfo(np.int32).min])


@pytest.mark.parametrize("to", [np.int32, np.uint8, np.int8, np.bool_, np.float16])
def test_convert_element_type(to, mode):
    x = np.array([np.nan, 1e10, -1e10, 2.7, -2.7, 0.0, np.inf], np.float32)
    out = mode(lambda v: lax.convert_element_type(v, to))(x)
    assert out.dtype == np.dtype(to) and not out.weak_type
    if jlax is not None and to != np.bool_:
        np.testing.assert_array_equal(out, jlax.convert_element_type(x, to))
    if to == np.bool_:
        np.testing.assert_array_equal(out, x != 0)


def test_convert_element_type_canonicalizes_and_keeps_weak():
    out = lax.convert_element_type(np.ones(2, np.float32), np.float64)
    assert out.dtype == np.float32  # x64 is off
    assert lax.convert_element_type(1.0, np.float32, weak_type=True).weak_type


@pytest.mark.parametrize("method", [lax.ROUND_AWAY_FROM_ZERO, lax.ROUND_TO_NEAREST_EVEN])
def test_round(method, mode):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1.2, -2.7], np.float32)
    out = mode(lambda v: lax.round(v, method))(x)
    expected = np.round(x) if method else np.sign(x) * np.floor(np.abs(x) + 0.5)
    np.testing.assert_array_equal(out, expected)
    if jlax is not None:
        np.testing.assert_array_equal(out, jlax.round(x, method))


@pytest.mark.parametrize("y", [-2, -1, 0, 1, 2, 3, 7])
def test_integer_pow(y, mode):
    x = np.array([0.5, -1.5, 2.0, 3.0], np.float32)
    out = mode(lambda v: lax.integer_pow(v, y))(x)
    np.testing.assert_allclose(out, x.astype(np.float64) ** y, rtol=1e-6)
    if y >= 0:
        np.testing.assert_array_equal(lax.integer_pow(np.array([2, -3], np.int32), y),
                                      np.array([2, -3]) ** y)
    assert "integer_pow[y=" in str(absjit.make_jaxpr(lambda v: lax.integer_pow(v, y))(x))


def test_select_n_and_clamp(mode):
    a, b, c = (np.full(4, v, np.float32) for v in (1, 2, 3))
    which = np.array([0, 1, 2, 1], np.int32)
    np.testing.assert_array_equal(mode(lax.select_n)(which, a, b, c), [1, 2, 3, 2])
    np.testing.assert_array_equal(mode(lax.select_n)(np.True_, a, b), b)
    pred = np.array([True, False, True, False])
    np.testing.assert_array_equal(mode(lax.select)(pred, a, b), [1, 2, 1, 2])
    x = np.array([-2, 0.5, 3], np.float32)
    np.testing.assert_array_equal(mode(lax.clamp)(np.float32(0), x, np.float32(1)),
                                  [0, 0.5, 1])
    if jlax is not None:
        np.testing.assert_array_equal(lax.select_n(which, a, b, c),
                                      jlax.select_n(which, a, b, c))


def test_stop_gradient_is_identity_on_trees():
    tree = {"a": np.ones(2, np.float32), "b": (1.0,)}
    out = lax.stop_gradient(tree)
    np.testing.assert_array_equal(out["a"], tree["a"])
    assert float(out["b"][0]) == 1.0


def test_nan_and_inf_flow_through():
    x = np.array([np.nan, np.inf, -np.inf], np.float32)
    np.testing.assert_array_equal(np.isnan(lax.exp(x)), [True, False, False])
    np.testing.assert_array_equal(lax.is_finite(x), [False, False, False])


# ---------------------------------------------------------------------------
# Rules, called directly (the transformations that drive them are tested with them)
# ---------------------------------------------------------------------------
def _jvp(prim, primals, tangents, **params):
    outs, touts = ad.jvp_rules[prim](list(primals), list(tangents), **params)
    return outs[0], touts[0]


def _numeric_jvp(fn, primals, tangents, eps=1e-3):
    up = fn(*[np.asarray(p, np.float64) + eps * t for p, t in zip(primals, tangents)])
    dn = fn(*[np.asarray(p, np.float64) - eps * t for p, t in zip(primals, tangents)])
    return (np.asarray(up, np.float64) - np.asarray(dn, np.float64)) / (2 * eps)


_SMOOTH_UNARY = [u for u in UNARY if np.float32 in u[1] and u[0] not in
                 ("floor", "ceil", "is_finite", "sign", "bitwise_not")]


@pytest.mark.parametrize("name,dts,dom", _SMOOTH_UNARY, ids=[u[0] for u in _SMOOTH_UNARY])
def test_unary_jvp_matches_finite_differences(name, dts, dom, rng):
    lo, hi = dom
    x = rng.uniform(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo), (3, 2)).astype(np.float32)
    t = rng.normal(size=(3, 2)).astype(np.float32)
    prim = getattr(lax, f"{name}_p")
    out, tout = _jvp(prim, [x], [t])
    np.testing.assert_array_equal(out, getattr(lax, name)(x))
    f = lambda v: getattr(lax, name)(v.astype(np.float32))  # noqa: E731
    np.testing.assert_allclose(tout, _numeric_jvp(lambda v: np.asarray(f(v)), [x], [t]),
                               rtol=2e-2, atol=2e-2)
    if jax is not None:
        _, jt = jax.jvp(_jax_fn(name), (x,), (t,))
        np.testing.assert_allclose(tout, jt, rtol=1e-4, atol=1e-5)


_SMOOTH_BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "atan2", "pow"]


@pytest.mark.parametrize("name", _SMOOTH_BINARY)
@pytest.mark.parametrize("scalar_y", [False, True])
def test_binary_jvp_against_jax(name, scalar_y, rng):
    x = rng.uniform(0.5, 2, (3,)).astype(np.float32)
    y = rng.uniform(0.5, 2, () if scalar_y else (3,)).astype(np.float32)
    if name in ("max", "min"):  # ties and non-ties
        x[0] = 1.0
        if not scalar_y:
            y = x.copy()
            y[1] += 1
        else:
            y = np.float32(1.0)
    tx, ty = rng.normal(size=x.shape).astype(np.float32), \
        rng.normal(size=y.shape).astype(np.float32)
    out, tout = _jvp(getattr(lax, f"{name}_p"), [x, y], [tx, ty])
    assert tout.shape == out.shape
    if jax is not None:
        _, jt = jax.jvp(_jax_fn(name), (x, y), (tx, ty))
        np.testing.assert_allclose(tout, jt, rtol=1e-4, atol=1e-5)


def test_zero_derivative_rules():
    x = np.array([1.5, -2.0], np.float32)
    for prim, args, params in [(lax.floor_p, [x], {}), (lax.lt_p, [x, x], {}),
                               (lax.sign_p, [x], {}),
                               (lax.round_p, [x], {"rounding_method": 1}),
                               (lax.stop_gradient_p, [x], {})]:
        _, t = _jvp(prim, args, [np.ones_like(a) for a in args], **params)
        assert not np.any(np.asarray(t))
    _, t = _jvp(lax.convert_element_type_p, [x], [x], new_dtype=np.dtype(np.int32),
                weak_type=False)
    assert t.dtype == np.int32 and not np.any(np.asarray(t))
    _, t = _jvp(lax.integer_pow_p, [x], [x], y=3)
    np.testing.assert_allclose(t, 3 * x ** 2 * x, rtol=1e-6)


def test_select_n_and_clamp_jvp():
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    t = np.array([1.0, 2.0, 3.0], np.float32)
    _, tout = _jvp(lax.clamp_p, [np.float32(0), x, np.float32(1)],
                   [np.float32(10), t, np.float32(20)])
    np.testing.assert_array_equal(tout, [10, 2, 20])
    pred = np.array([True, False, True])
    _, tout = _jvp(lax.select_n_p, [pred, x, x], [pred, t, 2 * t])
    np.testing.assert_array_equal(tout, [2, 2, 6])


def _transpose_check(prim, args, linear_index, params=None, rng=np.random.default_rng(1)):
    """<ct, f(x)> == <f^T(ct), x> for f linear in ``args[linear_index]``."""
    params = params or {}
    x = args[linear_index]
    if prim in (lax.add_p, lax.sub_p, lax.select_n_p):
        # Jointly linear (select_n: in its cases): check the map of one operand alone.
        first = 1 if prim is lax.select_n_p else 0
        args = [a if i == linear_index or i < first else np.zeros_like(a)
                for i, a in enumerate(args)]
    y = prim.bind(*args, **params)
    ct = rng.normal(size=np.shape(y)).astype(np.asarray(y).dtype)
    targs = list(args)
    targs[linear_index] = ad.UndefinedPrimal(get_aval(x))
    cts = ad.transpose_rules[prim]([absjit.numpy.asarray(ct)], *targs, **params)
    ct_x = cts[linear_index]
    assert np.shape(ct_x) == np.shape(x)
    lhs = np.vdot(ct, np.asarray(y)).real
    rhs = np.vdot(np.asarray(ct_x), np.asarray(x)).real
    np.testing.assert_allclose(lhs, rhs, rtol=1e-4)


def test_transpose_rules_of_linear_ops(rng):
    x = rng.normal(size=(2, 3)).astype(np.float32)
    y = rng.normal(size=(2, 3)).astype(np.float32)
    s = np.float32(1.5)
    c = (rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))).astype(np.complex64)
    for prim, args, i in [(lax.add_p, [x, y], 0), (lax.add_p, [x, y], 1),
                          (lax.sub_p, [x, y], 1), (lax.add_p, [s, y], 0),
                          (lax.mul_p, [x, y], 0), (lax.mul_p, [x, s], 0),
                          (lax.mul_p, [s, y], 0), (lax.div_p, [x, y], 0),
                          (lax.neg_p, [x], 0), (lax.real_p, [c], 0), (lax.conj_p, [c], 0)]:
        _transpose_check(prim, args, i)
    _transpose_check(lax.convert_element_type_p, [x], 0,
                     dict(new_dtype=np.dtype(np.float16), weak_type=False))
    pred = x > 0
    _transpose_check(lax.select_n_p, [pred, x, y], 1)
    _transpose_check(lax.select_n_p, [pred, x, y], 2)


def _batch(prim, vals, dims, **params):
    outs, out_dims = batching.batch_rules[prim](list(vals), list(dims), **params)
    return np.moveaxis(np.asarray(outs[0]), out_dims[0], 0)


def _unbatched(v, d, i):
    return v if d is None else np.take(v, i, axis=d)


@pytest.mark.parametrize("case", [
    # (shape of x as batched, dim of x, shape of y, dim of y); batch size 2
    ((2, 3), 0, (3,), None), ((3, 2), 1, (2, 3), 0), ((2,), 0, (3,), None),
    ((2,), 0, (), None), ((), None, (2, 3), 0), ((2, 3), 0, (2,), 0),
])
@pytest.mark.parametrize("name", ["add", "mul", "max", "lt", "atan2", "pow"])
def test_nary_batching_matches_a_loop(case, name, rng):
    sx, dx, sy, dy = case
    x = rng.uniform(0.5, 2, sx).astype(np.float32)
    y = rng.uniform(0.5, 2, sy).astype(np.float32)
    prim = getattr(lax, f"{name}_p")
    out = _batch(prim, [x, y], [dx, dy])
    fn = getattr(lax, name)
    expected = np.stack([np.asarray(fn(_unbatched(x, dx, i), _unbatched(y, dy, i)))
                         for i in range(2)])
    assert_close(out, expected)


def test_unary_and_select_batching(rng):
    x = rng.normal(size=(3, 2)).astype(np.float32)
    np.testing.assert_allclose(_batch(lax.sin_p, [x], [1]), np.sin(x).T, rtol=1e-6)
    pred = np.array([True, False])
    a, b = np.float32(1), np.float32(2)
    # Only the predicate is batched and the cases are scalars.
    np.testing.assert_array_equal(_batch(lax.select_n_p, [pred, a, b], [0, None, None]),
                                  [2, 1])
    cases = rng.normal(size=(2, 3)).astype(np.float32)
    out = _batch(lax.select_n_p, [np.True_, a, cases], [None, None, 0])
    np.testing.assert_array_equal(out, cases)
    lo = np.array([0.0, 0.5], np.float32)
    out = _batch(lax.clamp_p, [lo, x.T, np.float32(1)], [0, 0, None])
    np.testing.assert_array_equal(out, np.clip(x.T, lo[:, None], 1))
    out = _batch(lax.clamp_p, [lo, np.float32(0.7), np.float32(1)], [0, None, None])
    np.testing.assert_array_equal(out, np.clip(0.7, lo, 1).astype(np.float32))
