"""The cpu backend (Numba) against the xla backend (XLA): two independent compilers of
the same programs must agree, on an op suite that walks the primitive families with
their corner cases, and on random programs from the differential fuzzer."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as hst

import absjit
import absjit.numpy as jnp
from absjit import lax

from tests.checks import jax
from tests.test_fuzz_programs import _inputs, assert_same, describe, programs, run_program

pytestmark = pytest.mark.skipif(jax is None, reason="the xla extra (jax) is not installed")

F = np.array([-2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, np.inf, -np.inf, np.nan, 3e9],
             np.float32)
G = np.array([2.0, np.nan, 1.0, np.inf, 0.0, 1.0, -np.inf, -3.0, 0.5, 2.0, 1.0, -1.0],
             np.float32)
I = np.array([7, -7, 7, -7, 0, -2**31, 2**31 - 1, 5, 1, 31, 32, -1], np.int32)
J = np.array([2, 2, -2, -2, 0, -1, 0, 3, 0, 1, -3, 33], np.int32)
U = np.array([0, 1, 5, 200, 255, 7, 3, 128, 9, 2, 33, 64], np.uint8)
M = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
IDX = np.array([0, 3, -1, 9, 2], np.int32)

UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "arcsinh", "arctan", "expm1",
         "log1p", "floor", "ceil", "abs", "negative", "sign", "cbrt", "isfinite", "round",
         "rint", "exp2", "arccos", "arccosh", "arctanh", "cosh", "sinh"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "arctan2",
          "fmod", "less", "equal", "greater_equal", "not_equal", "nextafter"]

SUITE = {
    "float_unary": (lambda a: [getattr(jnp, n)(a) for n in UNARY], (F,)),
    "float_binary": (lambda a, b: [getattr(jnp, n)(a, b) for n in BINARY], (F, G)),
    "integer_rules": (lambda a, b: (lax.div(a, b), lax.rem(a, b), lax.shift_left(a, b),
                                    lax.shift_right_arithmetic(a, b),
                                    lax.shift_right_logical(a, b), a & b, a | b, a ^ b, ~a,
                                    lax.integer_pow(a, 3), jnp.abs(a), jnp.sign(a)), (I, J)),
    "unsigned": (lambda u: (lax.div(u, u[::-1]), lax.rem(u, u[::-1]),
                            lax.shift_right_arithmetic(u, np.uint8(3)), u * u, -u), (U,)),
    "casts": (lambda a: (a.astype(jnp.int32), a.astype(jnp.uint8), a.astype(jnp.int8),
                         a.astype(bool), a.astype(jnp.uint32), (a > 0).astype(jnp.float32),
                         lax.convert_element_type(a * 1e3, jnp.int16)), (F,)),
    "select_clamp": (lambda i, a, b: (lax.select_n(i % 4 - 1, a, b, a * 2),
                                      lax.clamp(np.float32(-1), a, np.float32(1)),
                                      jnp.where(a > b, a, b)), (J, F, G)),
    "reductions": (lambda m: (m.sum(0), m.sum((0, 2)), m.max(1), m.min(), m.prod(2),
                              jnp.argmax(m, 1), jnp.argmin(m, 2), (m > 0).all(1),
                              (m > 0).any(), jnp.cumsum(m, 1), jnp.cumprod(m[..., :3], 2),
                              lax.cummax(m, 2, reverse=True), lax.cummin(m, 0),
                              m.mean(1), jnp.var(m, 2)), (M,)),
    "structural": (lambda m: (m.reshape(4, 6), m.transpose(2, 0, 1), m[:, ::-1, 1::2],
                              jnp.concatenate([m, m * 2], 1), lax.rev(m, (0, 2)),
                              lax.pad(m, np.float32(9), ((1, -1, 1), (0, 0, 0), (-1, 2, 0))),
                              jnp.broadcast_to(m[:, :1], (2, 3, 4)), jnp.squeeze(m[:1], 0),
                              lax.iota(np.int32, 5), jnp.tile(m[0, 0], 2)), (M,)),
    "dynamic": (lambda m, i: (lax.dynamic_slice(m, (i, i - 3, i), (1, 2, 2)),
                              lax.dynamic_update_slice(m, -m[:1, :2, :2], (i, i + 9, i)),
                              lax.dynamic_slice(m[0, 0], (i + 2,), (3,))), (M, np.int32(1))),
    "indexing": (lambda m, ix: (m[:, ix % 3], m[1, :, ix[:2]], jnp.take(m, ix, axis=2,
                                                                    mode="clip"),
                                m.at[:, ix].add(1.0, mode="drop"),
                                m.at[0, 1].set(7.0), m.at[:, 0, ix].max(0.0, mode="drop"),
                                m.at[1, ix % 3].multiply(2.0), m.at[:, :, 0].min(-100.0)),
                 (M, IDX)),
    "products": (lambda m: (m[0] @ m[1].T, jnp.einsum("abc,abd->acd", m, m),
                            m[0].astype(jnp.int32) @ m[1].T.astype(jnp.int32),
                            (m[0] > 0) @ (m[1].T > 0), jnp.dot(m[0, 0], m[1, 1])), (M,)),
    "control_flow": (lambda a, n: (
        lax.fori_loop(0, n, lambda i, c: c * 0.5 + jnp.sin(c), a),
        lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] + c[1].sum()), (n, a))[1],
        lax.cond(n > 2, lambda v: v.max(), lambda v: v.min(), a),
        lax.scan(lambda c, v: (c + v, c * v), 0.0, a, reverse=True)), (F[:8], np.int32(3))),
}


@pytest.mark.parametrize("name", sorted(SUITE))
def test_cpu_and_xla_agree_on_the_op_suite(name):
    fn, args = SUITE[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cpu = absjit.jit(fn, backend="cpu")(*args)
        xla = absjit.jit(fn, backend="xla")(*args)
    cpu_leaves, xla_leaves = absjit.tree_util.tree_leaves(cpu), absjit.tree_util.tree_leaves(xla)
    assert len(cpu_leaves) == len(xla_leaves)
    for n, (c, x) in enumerate(zip(cpu_leaves, xla_leaves)):
        c, x = np.asarray(c), np.asarray(x)
        assert c.dtype == x.dtype and c.shape == x.shape, f"{name}[{n}]"
        if c.dtype.kind == "f":
            # transcendental functions of two libraries: a few ulp apart
            np.testing.assert_allclose(x, c, rtol=1e-5, atol=1e-6, equal_nan=True,
                                       err_msg=f"{name} output {n}")
        else:
            np.testing.assert_array_equal(x, c, err_msg=f"{name} output {n}")


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(), hst.integers(0, 2**16))
def test_random_programs_agree_on_cpu_and_xla(prog, seed):
    x, y = _inputs(prog, seed)

    def fn(x, y):
        return run_program(prog, jnp, lax, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cpu = absjit.jit(fn, backend="cpu")(x, y)
        xla = absjit.jit(fn, backend="xla")(x, y)
    for n, (c, a) in enumerate(zip(cpu, xla)):
        assert_same(a, c, f"output {n}: jit(xla) vs jit(cpu)", prog)
    assert describe(prog)
