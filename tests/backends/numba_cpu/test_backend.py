"""The cpu backend against the NumPy reference (the interpret backend).

Every function here is compiled by the cpu backend and compared with the same function
run on ``interpret``; the loop IR the kernel was rendered from is checked for the fusion
the compiler promises (one loop nest, no temporaries) where that is the point of the test.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import pytest
from hypothesis import given, settings, strategies as hst

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.numba_cpu import NumbaExecutable
from absjit.compiler import ir
from absjit.errors import CompilationError

from tests.checks import assert_close


pytestmark = pytest.mark.usefixtures("module_cache_dir")


def both(f, *args, **jit_kwargs):
    """``f`` compiled by cpu and by interpret on ``args``: (cpu result, reference)."""
    got = absjit.jit(f, backend="cpu", **jit_kwargs)(*args)
    want = absjit.jit(f, backend="interpret")(*args)
    return got, want


def check(f, *args, **kw):
    got, want = both(f, *args)
    assert_close(got, want, **kw)
    return got


def executable(f, *args, **jit_kwargs):
    return absjit.jit(f, backend="cpu", **jit_kwargs).lower(*args).compile().executable


def source(f, *args, **jit_kwargs):
    return absjit.jit(f, backend="cpu", **jit_kwargs).lower(*args).compile().as_text()


def program(f, *args, **jit_kwargs):
    """The optimised loop IR the cpu kernel of ``f`` was rendered from."""
    exe = executable(f, *args, **jit_kwargs)
    assert isinstance(exe, NumbaExecutable), exe.as_text()  # not a fallback
    return exe.program


def stmts(prog, kind):
    return [s for s in ir.walk(prog.body) if isinstance(s, kind)]


# ---------------------------------------------------------------------------
# elementwise, with the integer and float corner cases of the shared rules
# ---------------------------------------------------------------------------
FLOAT_UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "arcsinh", "arctan",
               "expm1", "log1p", "floor", "ceil", "abs", "negative", "sign", "cbrt",
               "isfinite", "round", "rint"]


def test_float_unary():
    # One kernel for all of them: each compile costs far more than the comparison.
    x = np.array([-2.5, -1.0, -0.5, 0.0, 0.5, 1.5, 2.5, np.inf, -np.inf, np.nan], np.float32)
    check(lambda a: [getattr(jnp, name)(a) for name in FLOAT_UNARY], x)


def test_float_binary_with_nan_and_inf():
    x = np.array([1.0, -2.0, np.nan, np.inf, 0.0, -0.0, 3.0], np.float32)
    y = np.array([2.0, np.nan, 1.0, np.inf, 0.0, 1.0, -np.inf], np.float32)
    names = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
             "arctan2", "fmod", "less", "equal", "greater_equal", "not_equal"]
    check(lambda a, b: [getattr(jnp, name)(a, b) for name in names], x, y)


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
def test_integer_division_rules(dt):
    info = np.iinfo(dt)
    x = np.array([7, -7, 7, -7, 0, info.min, info.max, 5]).astype(dt)
    y = np.array([2, 2, -2, -2, 0, -1 if info.min else 1, 0, 3]).astype(dt)
    if dt in (np.int64,):
        absjit.config.update("enable_x64", True)
    check(lax.div, x, y)
    check(lax.rem, x, y)


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.float32, np.uint8),
                                     (np.float64, np.int64), (np.float32, np.int8),
                                     (np.int32, np.float32), (np.int32, np.bool_),
                                     (np.float32, np.bool_), (np.bool_, np.int32),
                                     (np.int32, np.int8), (np.float64, np.float32)])
def test_casts_saturate(src, dst):
    absjit.config.update("enable_x64", True)
    if np.dtype(src).kind == "f":
        x = np.array([1e20, -1e20, np.nan, np.inf, -np.inf, 2.7, -2.7, 255.5, 0.0], src)
    elif src == np.bool_:
        x = np.array([True, False])
    else:
        x = np.array([0, 1, -1, 300, -300, 2**31 - 1], src)
    check(lambda a: lax.convert_element_type(a, dst), x)


@pytest.mark.parametrize("name", ["shift_left", "shift_right_arithmetic",
                                  "shift_right_logical"])
def test_shifts_out_of_range(name):
    x = np.array([1, -8, 123456, -1, 7, 7], np.int32)
    y = np.array([0, 1, 3, 31, 32, -1], np.int32)
    check(getattr(lax, name), x, y)


def test_bitwise_and_bool_ops():
    x = np.array([0, 1, 5, -3], np.int32)
    y = np.array([3, 1, 4, 12], np.int32)
    check(lambda a, b: (a & b, a | b, a ^ b, ~a), x, y)
    p = np.array([True, False, True, False])
    q = np.array([True, True, False, False])
    check(lambda a, b: (a & b, a | b, a ^ b, ~a), p, q)


def test_integer_pow_and_select_n_and_clamp():
    x = np.linspace(-3, 3, 11).astype(np.float32)
    check(lambda a: (lax.integer_pow(a, 2), lax.integer_pow(a, 3), lax.integer_pow(a, -2),
                     lax.integer_pow(a, 0)), x)
    i = np.arange(-2, 9, dtype=np.int32)
    check(lambda a: lax.integer_pow(a, 5), i)
    which = np.array([0, 1, 2, 5, -1], np.int32)
    a, b, c = (np.full(5, v, np.float32) for v in (1, 2, 3))
    check(lax.select_n, which, a, b, c)
    check(lambda v: lax.clamp(np.float32(-1), v, np.float32(1)), x)


def test_integer_overflow_wraps():
    x = np.array([2**31 - 1, -2**31, 100000], np.int32)
    check(lambda a: (a + a, a * a, a - np.int32(1)), x)


# ---------------------------------------------------------------------------
# fusion: one loop nest, no temporaries
# ---------------------------------------------------------------------------
def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def test_selu_is_one_loop_without_temporaries():
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    check(selu, x)
    prog = program(selu, x)
    assert [a.buf for a in stmts(prog, ir.Alloc)] == prog.outputs  # only the output
    assert len(stmts(prog, ir.Nest)) == 1
    assert "# { lambda ; a:f32[1000]. let" in source(selu, x)  # the jaxpr, as a comment


def test_broadcasting_is_index_arithmetic():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = np.arange(4, dtype=np.float32)
    got = check(lambda a, b: a * b + b[None, :] - 1.0, x, v)
    prog = program(lambda a, b: a * b + b[None, :] - 1.0, x, v)
    assert len(stmts(prog, ir.Alloc)) == 1 and len(stmts(prog, ir.Nest)) == 1
    assert np.asarray(got).shape == (3, 4)


def test_norm_reductions_fuse_with_producers():
    def norm(X):
        X = X - X.mean(0)
        return X / jnp.sqrt(jnp.mean(X * X, 0))
    X = np.random.default_rng(1).standard_normal((100, 10)).astype(np.float32)
    check(norm, X, rtol=1e-4)
    prog = program(norm, X)
    # Full-size (100, 10) arrays: the output only; the rest are (10,) accumulators.
    assert [a.buf.shape for a in stmts(prog, ir.Alloc)].count((100, 10)) == 1
    # mean and variance: two reductions over the input, each fused with its producer.
    reduces = stmts(prog, ir.Reduce)
    assert [r.shape for r in reduces] == [(100, 10), (100, 10)]
    assert all(r.monoid.acc_dtype == np.float64 for r in reduces)


def test_costly_value_used_by_two_outputs_is_computed_once():
    x = np.linspace(0, 1, 50).astype(np.float32)
    check(lambda a: (jnp.exp(a) + 1, jnp.exp(a) * 2), x)
    prog = program(lambda a: (jnp.exp(a) + 1, jnp.exp(a) * 2), x)
    exps = [s for s in stmts(prog, ir.Let) if isinstance(s.expr, ir.Op)
            and s.expr.prim.name == "exp"]
    assert len(exps) == 1


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
def test_reductions_every_axis_set(op):
    x = np.random.default_rng(2).uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)
    fn = getattr(lax, f"reduce_{op}")
    axes_sets = [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2), ()]
    check(lambda a: [fn(a * 1.5, axes) for axes in axes_sets], x, rtol=1e-5)


def test_reductions_bool_int_empty_and_nan():
    b = np.array([[True, False], [True, True]])
    check(lambda a: (lax.reduce_and(a, (1,)), lax.reduce_or(a, (0,))), b)
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    check(lambda a: (jnp.sum(a, 0), jnp.max(a, 1), jnp.min(a)), i)
    e = np.zeros((0, 3), np.float32)
    check(lambda a: (jnp.sum(a, 0), lax.reduce_max(a, (0,)), jnp.prod(a, 0)), e)
    n = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]], np.float32)
    check(lambda a: (jnp.max(a, 1), jnp.min(a, 0), jnp.sum(a, 1)), n)


@pytest.mark.parametrize("axis", [0, 1])
def test_argmax_argmin_first_wins_and_nan(axis):
    x = np.array([[1.0, 3.0, 3.0, np.nan], [2.0, 2.0, 0.0, 0.0], [5.0, np.nan, 5.0, 1.0]],
                 np.float32)
    check(lambda a: (jnp.argmax(a, axis), jnp.argmin(a, axis)), x)
    i = np.array([[1, 3, 3], [2, 2, 0]], np.int32)
    check(lambda a: (jnp.argmax(a, axis), jnp.argmin(a, axis)), i)


def test_cumulative():
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 3
    check(lambda a: (lax.cumsum(a, 0), lax.cumprod(a, 1), lax.cummax(a, 1, reverse=True),
                     lax.cummin(a, 0)), x, rtol=1e-5)


# ---------------------------------------------------------------------------
# structural
# ---------------------------------------------------------------------------
def test_structural_ops():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(lambda a: (a.T, jnp.transpose(a, (1, 0, 2)) + 1, a[:, 1:3, ::2], a[::-1, :, 1],
                     jnp.reshape(a, (6, 4)), jnp.reshape(a + 1, (4, 6)),
                     jnp.expand_dims(a, 1) * 2, jnp.squeeze(a[:1], 0), a.reshape(-1)), x)
    check(lambda a: (jnp.concatenate([a, a * 2], 1), lax.pad(a, np.float32(-1),
                                                             ((1, 0, 0), (0, 2, 1), (-1, 1, 0)))),
          x)
    check(lambda: (lax.iota(np.int32, 5), jnp.arange(3.0)[None, :] + jnp.zeros((2, 1))))
    check(lambda a: jnp.flip(a, (0, 2)) * a, x)


def test_dynamic_slices_clamp_starts():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    u = np.full((2, 2), -1.0, np.float32)
    for i, j in ((0, 0), (3, 4), (-2, 1), (1, 9)):
        check(lambda a, b, p, q: (lax.dynamic_slice(a * 2, (p, q), (2, 3)),
                                  lax.dynamic_update_slice(a, b, (p, q))),
              x, u, np.int32(i), np.int32(j))


def test_gather_clamps_and_scatter_drops():
    from absjit.ops import indexing as ix
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    i = np.array([[0, 3], [-2, 9]], np.int32)
    j = np.array([[1, 1], [4, 7]], np.int32)
    check(lambda a, p, q: (ix.gather(a * 2, [p], (0,)), ix.gather(a, [p, q], (1, 0)),
                           a[jnp.array([2, 0])]), x, i, j)
    u = np.full((2, 2, 5), 7.0, np.float32)
    check(lambda a, b, p: [f(a, b, [p], (0,)) for f in (ix.scatter, ix.scatter_add,
                                                         ix.scatter_mul, ix.scatter_min,
                                                         ix.scatter_max)], x, u, i)
    check(lambda a: a.at[1].add(5.0).at[jnp.array([0, 0])].set(-1.0), x)


_SCATTERS = ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")


@settings(max_examples=12, deadline=None)
@given(kind=hst.sampled_from(_SCATTERS),
       dtype=hst.sampled_from([np.float32, np.float64, np.int32, np.complex64]),
       rows=hst.integers(1, 6), width=hst.integers(0, 5), n=hst.integers(0, 12),
       two_axes=hst.booleans(), seed=hst.integers(0, 2 ** 16))
def test_scatters_as_loops_match_the_interpreter(kind, dtype, rows, width, n, two_axes,
                                                 seed):
    """Scatters written as loops (operand, indices and a gathered update read lazily):
    duplicate, negative and out-of-range indices, one or two indexed axes, empty
    windows and batches, against the interpreter."""
    from absjit.ops import indexing as ix
    if kind in ("scatter_min", "scatter_max") and np.dtype(dtype).kind == "c":
        return  # complex has no order (the primitive refuses it)
    r = np.random.default_rng(seed)
    x = (r.standard_normal((rows, width)) * 4).astype(dtype)
    table = (r.standard_normal((7, width)) * 4).astype(dtype)
    ids = r.integers(-2, 9, n).astype(np.int32)
    i0 = r.integers(-2, rows + 2, n).astype(np.int32)
    i1 = r.integers(-1, width + 1, n).astype(np.int32)
    fn = getattr(ix, kind)

    def f(x, table, ids, i0, i1):
        upd = ix.gather(table, [ids], (0,)) * dtype(2)
        if two_axes:
            return fn(x * dtype(3), upd[:, 0] if width else upd.sum(1), [i0, i1], (0, 1))
        return fn(x * dtype(3), upd, [i0], (0,))
    if two_axes and not width:
        return
    check(f, x, table, ids, i0, i1)


@pytest.mark.parametrize("kind", _SCATTERS)
def test_a_large_scatter_in_parallel_parts_matches_the_interpreter(kind, rng):
    """A scatter large enough to run as parallel parts (each folding the updates of its
    share of the rows) gives the serial answer bit for bit: duplicates still arrive in
    order, so a plain scatter keeps the last and float sums round the same way."""
    from absjit.compiler.lower import SCATTER_PART_WINDOW, SCATTER_PARTS
    from absjit.ops import indexing as ix
    n, width, rows = 6000, SCATTER_PART_WINDOW, 3 * SCATTER_PARTS + 1
    x = rng.standard_normal((rows, width)).astype(np.float32)
    upd = rng.standard_normal((n, width)).astype(np.float32)
    seg = rng.integers(-3, rows + 3, n).astype(np.int32)
    f = lambda x, u, s: getattr(ix, kind)(x, u * 1.5, [s], (0,))
    got, want = both(f, x, upd, seg)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert "_pool_for(" in source(f, x, upd, seg) or \
        "prange(" in source(f, x, upd, seg)


def test_a_gathered_update_is_not_stored_before_its_scatter(rng):
    """``zeros.at[seg].add(table[ids])``: the gathered rows are read inside the scatter's
    loop; no (n, width) buffer is allocated."""
    table = rng.standard_normal((50, 8)).astype(np.float32)
    ids = rng.integers(0, 50, 300).astype(np.int32)
    seg = rng.integers(0, 10, 300).astype(np.int32)

    def f(t, i, s):
        return jnp.zeros((10, 8), jnp.float32).at[s].add(t[i])
    want = np.zeros((10, 8), np.float32)
    np.add.at(want, seg, table[ids])
    assert_close(check(f, table, ids, seg), want, rtol=1e-5, atol=1e-5)
    text = source(f, table, ids, seg)
    assert "(300, 8, )" not in text and "_empty((10, 8, )" in text, text


def test_kernels_compile_at_the_kernel_opt_level(monkeypatch):
    """absjit's kernels are optimised at -O2 (``compat.KERNEL_OPT_LEVEL``: -O3's unrolling
    multiplied the compile time of loop-heavy kernels), the level is part of the cache
    key, Numba's own level is restored after, and ``NUMBA_OPT`` set by the user wins."""
    from numba.core import codegen, config

    from absjit import compat
    from absjit.backends import get_backend
    if "NUMBA_OPT" in __import__("os").environ:
        pytest.skip("NUMBA_OPT is set for this process")
    seen = []
    original = codegen.CPUCodegen._pass_builder

    def spy(self, **kw):
        seen.append(int(kw.get("opt", config.OPT)))
        return original(self, **kw)
    monkeypatch.setattr(codegen.CPUCodegen, "_pass_builder", spy)
    before = config.OPT
    scale = float(np.random.default_rng().integers(1, 1 << 20)) + 0.375  # a new program
    f = absjit.jit(lambda x: x * scale + 1.0, backend="cpu")
    x = np.ones(5, np.float32)
    assert_close(f(x), x * np.float32(scale) + 1)
    assert compat.KERNEL_OPT_LEVEL in seen and 3 not in seen, seen
    assert config.OPT == before
    assert f"O{compat.KERNEL_OPT_LEVEL}" in get_backend("cpu").version_key()
    monkeypatch.setenv("NUMBA_OPT", "3")
    assert compat.kernel_opt_level() == str(config.OPT)


def test_output_aliasing_an_input_is_a_copy():
    x = np.arange(6, dtype=np.float32)
    out = absjit.jit(lambda a: (a, a.reshape(2, 3)), backend="cpu")(x)
    x[0] = 100.0
    assert float(out[0][0]) == 0.0 and float(out[1][0, 0]) == 0.0


def test_literal_and_scalar_outputs():
    check(lambda a: (a, 3.0, a * 2), np.float32(2.0))
    check(lambda a: jnp.sum(a), np.float32(4.0))


# ---------------------------------------------------------------------------
# dot_general
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.bool_])
def test_dot_layouts(dt):
    absjit.config.update("enable_x64", True)
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 5)) * 3).astype(dt)
    b = (rng.standard_normal((5, 3)) * 3).astype(dt)
    v = (rng.standard_normal(5) * 3).astype(dt)
    c = (rng.standard_normal((2, 4, 5)) * 3).astype(dt)
    d = (rng.standard_normal((2, 5, 3)) * 3).astype(dt)
    rtol = 1e-5 if dt == np.float32 else None
    check(lambda x, y: (x @ y, x.T.T @ y, x @ v, v @ y, v @ v), a, b, rtol=rtol)
    check(lambda x, y: jnp.matmul(x, y), c, d, rtol=rtol)
    dn = (((0,), (1,)), ((), ()))
    check(lambda x, y: lax.dot_general(x, y, dn), b, b.T.copy(), rtol=rtol)
    check(lambda x, y: jnp.einsum("bij,bjk->bik", x, y), c, d, rtol=rtol)


def test_dot_then_bias_relu_fuses_after_the_dot():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    f = lambda x, y, z: jnp.maximum(x @ y + z, 0)  # noqa: E731
    check(f, a, w, bias, rtol=1e-5)
    prog = program(f, a, w, bias)
    (dot,) = stmts(prog, ir.Opaque)
    assert dot.prim.name == "dot_general" and not stmts(prog, ir.Alloc)
    (alias,) = stmts(prog, ir.Alias)  # bias + relu write in place over the product
    assert alias.src is dot.outs[0] and "_bgemm(" in source(f, a, w, bias)


def test_zero_size_dot():
    check(lambda x, y: x @ y, np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32))
    check(lambda x, y: x @ y, np.zeros((0, 3), np.float32), np.ones((3, 2), np.float32))


# ---------------------------------------------------------------------------
# nested jit, fallback, errors, options
# ---------------------------------------------------------------------------
def test_nested_jit_is_inlined():
    inner = absjit.jit(lambda a: jnp.sin(a) * 2)
    f = lambda a: inner(a) + inner(a * 3)  # noqa: E731
    x = np.linspace(0, 1, 7).astype(np.float32)
    check(f, x)
    exe = executable(f, x)
    assert exe.n_pieces == 1 and len(stmts(exe.program, ir.Alloc)) == 1


def test_custom_jvp_body_is_inlined():
    @absjit.custom_jvp
    def softplus(v):
        return jnp.log1p(jnp.exp(v))

    @softplus.defjvp
    def _jvp(primals, tangents):
        (v,), (t,) = primals, tangents
        return softplus(v), t * jax_like_sigmoid(v)

    def jax_like_sigmoid(v):
        return 1 / (1 + jnp.exp(-v))
    x = np.linspace(-3, 3, 9).astype(np.float32)
    check(lambda a: softplus(a) * 2, x)
    assert isinstance(executable(lambda a: softplus(a) * 2, x), NumbaExecutable)


def test_control_flow_becomes_native_branches_and_loops():
    def f(x, n):
        y = lax.fori_loop(0, n, lambda i, c: c * 0.5 + jnp.sin(c) + i, x)
        z = lax.while_loop(lambda c: c[1] < 5, lambda c: (c[0] @ c[0].T, c[1] + 1),
                           (x[:2, :2], 0))
        w = lax.cond(n > 2, lambda v: v + 1.0, lambda v: v * 2.0, x)
        s = lax.switch(n, [lambda v: v, lambda v: -v, lambda v: jnp.exp(v)], x[0])
        return y, z, w, s
    x = np.linspace(-1, 1, 12).astype(np.float32).reshape(3, 4) / 2
    for n in (0, 1, 3):
        check(f, x, np.int32(n), rtol=1e-5)
    prog = program(f, x, np.int32(1))
    assert len(stmts(prog, ir.While)) == 2 and len(stmts(prog, ir.Switch)) == 2


def test_unlowered_primitive_falls_back_with_one_warning():
    """A primitive with no rule here (one defined outside absjit) runs through its NumPy
    implementation between compiled pieces, with one warning per primitive."""
    from absjit.core.primitive import Primitive, abstract_eval_rules, impl_rules
    foreign_p = Primitive("foreign_flip")
    abstract_eval_rules[foreign_p] = lambda x: [x]
    impl_rules[foreign_p] = lambda x: [np.flip(x, -1)]
    m = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.25, 1.0, 4.0]], np.float32)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        got = absjit.jit(lambda a: foreign_p.bind(a) + 1, backend="cpu")(m)
        absjit.jit(lambda a: foreign_p.bind(a) * 2, backend="cpu")(m)
    np.testing.assert_array_equal(np.asarray(got), np.flip(m, -1) + 1)
    import importlib
    be = importlib.import_module("absjit.backends.numba_cpu").BACKEND
    assert "foreign_flip" in be._warned
    assert len([w for w in rec if "foreign_flip" in str(w.message)]) == 1
    # Per equation: the foreign primitive runs between compiled pieces, the rest is
    # compiled.
    exe = executable(lambda a: foreign_p.bind(a) + 1, m)
    assert isinstance(exe, NumbaExecutable) and exe.n_pieces >= 2


def test_hessenberg_and_schur_run_between_pieces_without_a_warning():
    """At the top level SciPy's call serves them (no compile, no warning)."""
    from absjit.scipy.linalg import hessenberg, schur
    m = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.25, -1.0, 4.0]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exe = executable(lambda a: (hessenberg(a, calc_q=True)[0] + 1, schur(a)[0]), m)
        h, t = exe(m)
    assert isinstance(exe, NumbaExecutable)
    np.testing.assert_allclose(np.abs(np.asarray(h) - 1), np.abs(scipy.linalg.hessenberg(m)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(t), scipy.linalg.schur(m)[0], rtol=1e-5,
                               atol=1e-6)


def test_fft_runs_between_pieces_at_the_top_level_and_compiled_in_loops():
    """An FFT at the top level runs between pieces (threaded DUCC or SciPy), without a
    warning; inside a loop it is compiled into the loop's kernel (no object mode)."""
    x = np.array([3.0, 1.0, 2.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exe = executable(lambda a: jnp.fft.fft(a).real + 1, x)
        np.testing.assert_allclose(np.asarray(exe(x)[0]), np.fft.fft(x).real + 1, rtol=1e-6)
        assert isinstance(exe, NumbaExecutable) and exe.n_pieces >= 2
        f = lambda a: lax.fori_loop(  # noqa: E731
            0, 2, lambda i, c: jnp.fft.fft(c).real.astype(jnp.float32) * 0.5, a)
        assert isinstance(executable(f, x), NumbaExecutable)
        assert "objmode" not in source(f, x) and "_fft_c2c_axis(" in source(f, x)
        check(f, x, rtol=1e-5)


def test_float16_is_compiled():
    # float16 is stored as uint16 and computed in float32 (test_numba_cpu_half.py).
    x = np.array([1.0, 2.0], np.float16)
    assert isinstance(executable(lambda a: a * 2, x), NumbaExecutable)
    check(lambda a: a * 2, x)


def test_numba_failure_is_a_compilation_error_naming_the_primitive(monkeypatch):
    from absjit.backends.numba import lower_elementwise as le
    from absjit.ops import elementwise as ew
    monkeypatch.setitem(le.scalar_rules, ew.cosh_p,
                        lambda args, in_avals, out_aval: f"np.linalg.inv({args[0]})")
    x = np.array([0.5, 1.5], np.float32)
    with pytest.raises(CompilationError, match="cosh"):
        absjit.jit(lambda a: jnp.cosh(a) + 1.0, backend="cpu")(x)
    monkeypatch.undo()
    check(lambda a: jnp.cosh(a) + 1.0, x)  # the failure left nothing behind


def test_fastmath_and_parallel_options():
    x = np.random.default_rng(5).standard_normal(2000).astype(np.float32)
    got = absjit.jit(selu, backend="cpu", compiler_options={"fastmath": True,
                                                             "parallel": True})(x)
    assert_close(got, absjit.jit(selu, backend="interpret")(x), rtol=1e-4)
    prog = program(selu, x, compiler_options={"parallel": True})
    assert all(n.parallel for n in stmts(prog, ir.Nest))
    from absjit.backends.numba_cpu.parallel import pool
    parallel_loop = "_pool_for(" if pool.ensure() else "prange("
    assert parallel_loop in source(selu, x, compiler_options={"parallel": True})
    assert not any(n.parallel for n in stmts(program(selu, x), ir.Nest))  # small: serial


def test_non_contiguous_and_scalar_buffers():
    from absjit.backends import get_backend
    from absjit.backends.base import CompileOptions
    closed = absjit.make_jaxpr(lambda a, b: a * b)(np.ones(4, np.float32), np.float32(2))
    exe = get_backend("cpu").compile(closed, CompileOptions())
    x = np.arange(8, dtype=np.float32)[::2]
    out = exe(x, 3.0)
    np.testing.assert_array_equal(out[0], x * 3)


def test_wrong_shape_buffer_is_refused_not_read_out_of_bounds():
    from absjit.backends import get_backend
    from absjit.backends.base import CompileOptions
    closed = absjit.make_jaxpr(lambda a: a + 1)(np.ones(8, np.float32))
    exe = get_backend("cpu").compile(closed, CompileOptions())
    with pytest.raises(ValueError, match="shape"):
        exe(np.ones(3, np.float32))


def test_compile_cache_reuses_kernel_for_fresh_lambdas():
    from absjit.backends.numba_cpu import stats
    x = np.arange(5, dtype=np.float32)
    absjit.jit(lambda a: a * 7.5 + 2.5, backend="cpu")(x)
    before = stats["compiles"]
    for _ in range(3):
        absjit.jit(lambda a: a * 7.5 + 2.5, backend="cpu")(x)
    assert stats["compiles"] == before


# ---------------------------------------------------------------------------
# random programs: cpu == interpret
# ---------------------------------------------------------------------------
_UNARY = [jnp.exp, jnp.tanh, jnp.abs, lambda a: a * a, lambda a: -a, jnp.floor]
_BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum,
           lambda a, b: jnp.where(a > b, a, b * 2)]


@hst.composite
def programs(draw):
    ndim = draw(hst.integers(0, 3))
    shape = tuple(draw(hst.lists(hst.sampled_from([0, 1, 2, 3, 5]), min_size=ndim,
                                 max_size=ndim)))
    dt = draw(hst.sampled_from([np.float32, np.int32]))
    steps = draw(hst.lists(hst.tuples(hst.integers(0, 6), hst.integers(0, 10**6)),
                           min_size=1, max_size=5))
    return shape, dt, steps


def _step(cur, kind, r, b, dt):
    """One random operation; every kind is valid for every shape."""
    if kind == 0 and dt == np.float32:
        return _UNARY[r % len(_UNARY)](cur)
    if kind == 1:
        return _BINARY[r % len(_BINARY)](cur, b)  # b is a scalar: broadcasts
    if kind == 2 and cur.ndim:
        ax = r % cur.ndim
        if r % 2 or cur.shape[ax] == 0:
            return jnp.sum(cur, ax)
        return jnp.max(cur, ax)
    if kind == 3 and cur.ndim >= 2:
        return cur.T
    if kind == 4:
        return jnp.reshape(cur, (-1,))[::-1]
    if kind == 5 and cur.ndim:
        return cur - jnp.sum(cur, -1, keepdims=True)  # broadcast of a reduction
    if kind == 6 and cur.ndim:
        return cur @ jnp.ones((cur.shape[-1], 2), dt)
    return cur


@settings(max_examples=10, deadline=None)
@given(programs(), hst.integers(0, 2**31 - 1))
def test_random_programs_match_interpret(prog, seed):
    shape, dt, steps = prog
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dt)
    y = np.asarray(rng.standard_normal() * 3).astype(dt)

    def f(a, b):
        vals = [a]
        for kind, r in steps:
            vals.append(_step(vals[-1], kind, r, b, dt))
        return vals[-1], vals[len(vals) // 2]

    got, want = both(f, x, y)
    assert_close(got, want, rtol=1e-4, atol=1e-3)


def test_rank0_values_inside_parallel_loops():
    # Numba's parallel lowering cannot index a 0-d array inside prange: such reads are
    # hoisted before the loop (found by tests/test_fuzz_programs.py).
    x = np.linspace(-1, 1, 1 << 17).astype(np.float32).reshape(2, -1)
    check(lambda a, y: a * y, x, np.float32(2.0))
    check(lambda a: a - jnp.mean(a), x, rtol=1e-4, atol=1e-5)
    check(lambda a: jnp.exp(a - jnp.max(a)), x, rtol=1e-5)
    check(lambda a: jnp.sum(a * jnp.max(a), axis=1), x, rtol=1e-4)
