"""float16 and bfloat16 on the cpu backend: stored as uint16, computed in float32.

Every program here is compiled by the cpu backend (no fallback, no warning) and compared
with the interpret backend (NumPy and ml_dtypes), and with ``jax.jit`` where JAX is
installed: bit for bit for single operations and chains of basic arithmetic (each
operation is rounded to 16 bits, as NumPy and XLA on a CPU do), within a few units in
the last place for transcendental functions, reductions and products. Several cases
share one jitted function: every distinct program is a Numba compile.
"""
from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.numba_cpu import NumbaExecutable
from absjit.backends.numba_cpu.kernels import half_kernels as hk
from absjit.backends.numba_cpu.lowering.half import NARROW, QUANTIZE, WIDEN
from absjit.compiler import ir

from tests.checks import assert_close, jax

BF16 = np.dtype(jnp.bfloat16)
HALF = [np.dtype(np.float16), BF16]
IDS = ["float16", "bfloat16"]


pytestmark = pytest.mark.usefixtures("module_cache_dir")


def compiled(f, *args, **jit_kwargs):
    """``f`` compiled by the cpu backend: no warning, no fallback, no 16-bit float left
    in the loop IR the kernel was rendered from."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        c = absjit.jit(f, backend="cpu", **jit_kwargs).lower(*args).compile()
    exe = c.executable
    assert isinstance(exe, NumbaExecutable), exe.as_text()
    for stmt in ir.walk(exe.program.body):
        for v in ir.stmt_defs(stmt) + ir.stmt_uses(stmt):
            assert np.dtype(v.dtype) not in HALF, stmt
    return c


def run_both(f, *args, **jit_kwargs):
    got = compiled(f, *args, **jit_kwargs)(*args)
    want = absjit.jit(f, backend="interpret")(*args)
    return got, want


def assert_same_bits(got, want):
    """Equal shapes, dtypes and values, zero signs included; NaN where NaN is."""
    for g, w in zip(absjit.tree_util.tree_leaves(got), absjit.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.dtype, w.dtype)
        if g.dtype in HALF:
            gf, wf = g.astype(np.float32), w.astype(np.float32)
            assert np.array_equal(np.isnan(gf), np.isnan(wf)), f"\n{g}\n{w}"
            g, w = g.view(np.uint16)[~np.isnan(gf)], w.view(np.uint16)[~np.isnan(wf)]
        np.testing.assert_array_equal(g, w)


def ulps(dt, k):
    """A relative tolerance of ``k`` units in the last place of ``dt``."""
    return k * float(2.0 ** -(10 if dt == np.float16 else 7))


def values(dt, n=64, seed=0):
    """Random values of all magnitudes, then the special ones: signed zeros, infinities,
    NaN, the largest finite value, the smallest normal and subnormal."""
    rng = np.random.default_rng(seed)
    fi = absjit.dtypes.finfo(dt)
    x = rng.standard_normal(n) * 4.0 ** rng.integers(-3, 4, n)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, float(fi.max), -float(fi.max),
                float(fi.tiny), float(fi.tiny) * 2.0 ** -3, -float(fi.tiny) * 2.0 ** -2, 1.0,
                -1.5]
    return np.concatenate([x, specials]).astype(dt)


# -- the conversion kernels --------------------------------------------------------------
def _mapper(fn, out_dtype):
    @numba.njit
    def run(a):
        out = np.empty(a.size, out_dtype)
        for i in range(a.size):
            out[i] = fn(a[i])
        return out
    return run


@pytest.mark.parametrize("fn,dt", [(hk._f16_to_f32_native, np.float16),
                                   (hk._f16_to_f32_soft, np.float16),
                                   (hk._bf16_to_f32, BF16)],
                         ids=["f16-native", "f16-soft", "bf16"])
def test_widening_every_bit_pattern(fn, dt):
    if fn is hk._f16_to_f32_native and not hk.NATIVE_HALF:
        fn = hk._f16_to_f32_soft  # the native form is not linked on this CPU
    bits = np.arange(1 << 16, dtype=np.uint16)
    got = _mapper(fn, np.float32)(bits)
    want = bits.view(dt).astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan])
    assert np.array_equal(np.signbit(got[nan]), np.signbit(want[nan]))


def _narrowing_inputs():
    """float64 values: random magnitudes, every float16 halfway point and its float64
    and float32 neighbours, overflow thresholds and specials."""
    rng = np.random.default_rng(1)
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)
    h = np.unique(h[np.isfinite(h)])
    mids = (h[:-1] + h[1:]) / 2
    mids32 = mids.astype(np.float32)
    return np.concatenate([
        rng.standard_normal(1 << 16) * 10.0 ** rng.integers(-12, 8, 1 << 16), mids,
        np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
        np.nextafter(mids32, np.float32(np.inf)), np.nextafter(mids32, -np.float32(np.inf)),
        [np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 65504.0, 65519.99, 65520.0, -65520.0,
         2.0 ** -25, 2.0 ** -25 * (1 + 2.0 ** -30), 3.3e38, 3.4e38, -3.4e38, 1e300, 1e-300]])


def _bf16_rounded_once(x):
    """float64 ``x`` rounded once to nearest even on bfloat16's grid, by exact float64
    arithmetic: scale to units of bfloat16's last place at ``x`` (8 significant bits for
    normal values, a fixed 2**-133 for subnormal ones), ``rint``, scale back."""
    with np.errstate(all="ignore"):
        a = np.abs(x)
        _, e = np.frexp(a)
        ulp = np.maximum(e - 8, -133)
        r = np.ldexp(np.rint(np.ldexp(a, -ulp)), ulp)
        r = np.where(np.isfinite(a), r, a)
        return np.copysign(r, x).astype(np.float32).astype(BF16)  # exact from here


def test_bfloat16_reference_is_one_rounding():
    """The reference above against exact rationals on ties and their neighbours."""
    from fractions import Fraction
    one, ulp = 1.0, 2.0 ** -7
    ties = [one + ulp / 2, one + 3 * ulp / 2, 3.0 * 2.0 ** -130, 2.0 ** -134]
    xs = [t for v in ties for t in (v, np.nextafter(v, 2 * v), np.nextafter(v, 0))]
    grid = np.arange(1 << 16, dtype=np.uint16).view(BF16).astype(np.float64)
    grid = np.unique(grid[np.isfinite(grid)])  # sorted
    for x, got in zip(xs, _bf16_rounded_once(np.array(xs)).astype(np.float64)):
        at = int(np.searchsorted(grid, x))
        near_x = grid[max(at - 2, 0):at + 2]  # the nearest lie among these
        dist = [abs(Fraction(g) - Fraction(x)) for g in near_x]
        best = min(dist)
        near = [g for g, d in zip(near_x, dist) if d == best]
        want = near[0] if len(near) == 1 else [g for g in near
                                               if not int(np.float32(g).view(np.uint32) >> 16) & 1][0]
        assert got == want, (x, got, want)


@pytest.mark.parametrize("name", ["f32_to_f16_native", "f32_to_f16_soft",
                                  "f64_to_f16_native", "f64_to_f16_soft", "f32_to_bf16",
                                  "f64_to_bf16"])
def test_narrowing_rounds_to_nearest_even(name):
    if "native" in name and not hk.NATIVE_HALF:
        name = name.replace("native", "soft")
    dt = BF16 if "bf16" in name else np.dtype(np.float16)
    x = _narrowing_inputs()
    if name.startswith("f32"):
        x = x.astype(np.float32)
    got = _mapper(getattr(hk, f"_{name}"), np.uint16)(x)
    if name == "f64_to_bf16":
        # One correct rounding, computed here from the definition: ml_dtypes before 0.7
        # rounds twice (through float32), 0.7 once, so it cannot be the reference.
        want = _bf16_rounded_once(x)
    else:
        with np.errstate(over="ignore"):
            want = x.astype(dt)
    gv = got.view(dt).astype(np.float32)
    nan = np.isnan(want.astype(np.float32))
    assert np.array_equal(np.isnan(gv), nan)
    assert np.array_equal(got[~nan], want.view(np.uint16)[~nan])
    assert np.array_equal(np.signbit(gv[nan]), np.signbit(want.astype(np.float32)[nan]))


def test_float64_to_bfloat16_rounds_once_eager_and_jit():
    """``astype`` from float64 gives the one correct rounding eagerly, on the interpret
    backend and compiled: the three agree bit for bit (NaNs aside)."""
    x = _narrowing_inputs()
    want = _bf16_rounded_once(x).view(np.uint16)
    nan = np.isnan(x)
    absjit.config.update("enable_x64", True)
    try:
        eager = np.asarray(jnp.asarray(x).astype(jnp.bfloat16))
        created = np.asarray(jnp.asarray(x, dtype=jnp.bfloat16))
        got, interp = run_both(lambda v: v.astype(jnp.bfloat16), x)
    finally:
        absjit.config.update("enable_x64", False)
    for out in (eager, created, np.asarray(got), np.asarray(interp)):
        assert out.dtype == BF16
        assert np.array_equal(out.view(np.uint16)[~nan], want[~nan])
        assert np.isnan(out.astype(np.float32)[nan]).all()


# -- elementwise operations ------------------------------------------------------------
def _exact_ops(x, y, z32):
    """Operations whose 16-bit result is one rounding of an exact or correctly rounded
    float32 result: bit for bit what NumPy/ml_dtypes give. (``sign(-0.0)`` is +0.0 for
    NumPy's float16 and float32 but -0.0 for ml_dtypes' bfloat16 and for this backend's
    float32, hence the ``+ 0``.)"""
    return (x + y, x - y, x * y, x / y, jnp.maximum(x, y), jnp.minimum(x, y), -x,
            jnp.abs(x), jnp.sqrt(jnp.abs(y)), x < y, x == y, x >= y, jnp.where(x > y, x, y),
            jnp.floor(x), jnp.ceil(x), jnp.round(x), jnp.sign(x) + 0, jnp.clip(x, -1, 2),
            lax.nextafter(x, y), jnp.fmod(x, y), x.astype(jnp.float32),
            x.astype(jnp.int32), x.astype(jnp.bool_), x.astype(jnp.uint8),
            z32.astype(x.dtype), (z32 * 3).astype(jnp.int8).astype(x.dtype),
            x.astype(jnp.float16).astype(jnp.bfloat16), x.astype(jnp.bfloat16),
            jnp.isfinite(x), jnp.isnan(y), x * 2.5 + 1, ((x * 1.7 + 0.3) * y - y / 3) * 0.5,
            lax.convert_element_type(jnp.arange(3000), x.dtype))


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_exact_operations_bit_for_bit(dt):
    x, y = values(dt), values(dt, seed=2)[::-1].copy()
    z32 = values(np.float32, seed=3) * np.float32(1000)  # out of range for float16 too
    with np.errstate(all="ignore"):
        got, want = run_both(_exact_ops, x, y, z32)
    assert_same_bits(got, want)


@pytest.mark.skipif(jax is None, reason="compares with jax.jit")
@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_arithmetic_chains_match_jax_jit_bit_for_bit(dt):
    # XLA on a CPU also rounds every 16-bit operation: a fused chain gives the same bits.
    # (XLA flushes subnormal results to zero and turns a division by a constant into a
    # product, so the inputs keep results normal and the chain divides by a variable.)
    import jax.numpy as jxn

    def f(np_, x, y):
        return (x + y, x * y, x / y, -x, np_.abs(x), np_.sqrt(np_.abs(y)),
                ((x * 1.7 + 0.3) * y - y / x) * 0.5, np_.maximum(x, y) * x,
                np_.where(x > y, x - y, y * y))
    rng = np.random.default_rng(6)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]
    x, y = (np.concatenate([rng.uniform(-8, 8, 200), specials]).astype(dt) for _ in "xy")
    got = compiled(lambda a, b: f(jnp, a, b), x, y)(x, y)
    want = jax.jit(lambda a, b: f(jxn, a, b))(x, y)
    assert_same_bits(got, [np.asarray(w) for w in want])


def _math_ops(x, y):
    ax = jnp.abs(x)
    return (jnp.exp(x), jnp.log(ax), jnp.tanh(x), absjit.nn.sigmoid(x), jnp.sin(x),
            jnp.cos(x), jnp.expm1(x), jnp.log1p(ax), jnp.power(ax, y), jnp.arctan2(x, y),
            lax.rsqrt(ax), x ** 3, absjit.nn.selu(x), absjit.nn.gelu(x), jnp.arctan(x),
            jnp.cbrt(x))


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_transcendental_functions(dt):
    x = (np.linspace(-6, 6, 97)).astype(dt)
    y = np.linspace(-3, 3, 97).astype(dt)[::-1].copy()
    with np.errstate(all="ignore"):
        got, want = run_both(_math_ops, x, y)
    assert_close(got, want, rtol=ulps(dt, 2), atol=ulps(dt, 1))
    if jax is not None:
        import jax.numpy as jxn
        ref = jax.jit(lambda a: (jxn.exp(a), jxn.tanh(a), jax.nn.sigmoid(a),
                                 jax.nn.selu(a)))(x)
        assert_close([got[0], got[2], got[3], got[12]], [np.asarray(r) for r in ref],
                     rtol=ulps(dt, 2), atol=ulps(dt, 1))


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_special_values_on_store(dt):
    big = float(absjit.dtypes.finfo(dt).max)
    tiny = float(absjit.dtypes.finfo(dt).tiny)
    x = np.array([big, -big, big / 2, tiny, -tiny, 0.0, -0.0, np.inf, np.nan, 1.0], dt)

    def f(a):
        return (a * 2,             # overflow to +-inf on store
                a + a,             # big/2 + big/2 is exactly big
                a * 2.0 ** -5,     # subnormal results, and zeros keep their sign
                a * -1.0,          # -0.0 from 0.0
                a - a,             # inf - inf and nan are nan
                (a.astype(jnp.float32) * 4).astype(a.dtype))  # overflow in a cast
    with np.errstate(all="ignore"):
        got, want = run_both(f, x)
    assert_same_bits(got, want)
    assert np.isinf(np.asarray(got[0], np.float32)[:2]).all()
    assert np.signbit(np.asarray(got[3], np.float32)[5]) and \
        not np.signbit(np.asarray(got[3], np.float32)[6])


def test_float64_to_float16_rounds_once():
    absjit.config.update("enable_x64", True)
    # Rounded to float32 first, 1 + 2**-11 + 2**-40 would be a tie and round down.
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -11, 65519.999, 2.0 ** -25 + 2.0 ** -60],
                 np.float64)
    got, want = run_both(lambda a: (a.astype(jnp.float16), a.astype(jnp.bfloat16)), x)
    assert_same_bits(got, want)
    assert np.asarray(got[0])[0] == np.float16(1 + 2.0 ** -10)


# -- reductions, products, arrays --------------------------------------------------------
@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_reductions_accumulate_in_float32(dt):
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (37, 300)).astype(dt)
    xn = x.copy()
    xn[3, 5] = np.nan

    def f(a, b):
        return (jnp.sum(a), jnp.sum(a, axis=0), jnp.sum(a, axis=1), jnp.mean(a, axis=1),
                jnp.max(a, axis=0), jnp.min(a), jnp.argmax(a, axis=1), jnp.argmin(a, axis=0),
                jnp.max(b, axis=1), jnp.argmax(b, axis=1), jnp.prod(a[:4, :8], axis=1),
                jnp.var(a, axis=0), jnp.cumsum(a[:3], axis=1))
    got, want = run_both(f, x, xn)
    # A cumulative sum also accumulates in float32, where NumPy rounds every partial sum
    # to 16 bits (and drifts): each result is the float32 prefix sum rounded once.
    prefix = np.cumsum(x[:3].astype(np.float32), axis=1, dtype=np.float32).astype(dt)
    assert_close(got[-1], prefix, rtol=ulps(dt, 1), atol=ulps(dt, 1))
    got, want = got[:-1], want[:-1]
    # Order statistics are exact; sums round once from float32 (the reference from
    # float64): they may differ in the last place.
    assert_same_bits([got[k] for k in (4, 5, 6, 7, 8, 9)], [want[k] for k in (4, 5, 6, 7, 8, 9)])
    assert_close(got, want, rtol=ulps(dt, 2), atol=ulps(dt, 2))
    if jax is not None:
        import jax.numpy as jxn
        ref = jax.jit(lambda a: (jxn.sum(a, axis=0), jxn.mean(a, axis=1)))(x)
        assert_close([got[1], got[3]], [np.asarray(r) for r in ref], rtol=ulps(dt, 2),
                     atol=ulps(dt, 2))


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_products_and_mixed_precision(dt):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 40)).astype(dt)
    b = rng.standard_normal((40, 24)).astype(dt)
    c = rng.standard_normal((3, 16, 40)).astype(dt)

    def f(a, b, c):
        return (a @ b, jnp.matmul(c, b), a @ b[:, 0],
                lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                preferred_element_type=jnp.float32),
                jnp.maximum(a @ b + 1, 0).astype(jnp.float32),
                (a.astype(jnp.float32) @ b.astype(jnp.float32)).astype(a.dtype))
    got, want = run_both(f, a, b, c)
    assert_close(got, want, rtol=ulps(dt, 2), atol=ulps(dt, 4) * 8)
    assert np.asarray(got[3]).dtype == np.float32
    if jax is not None:
        assert_close(got[0], np.asarray(jax.jit(lambda p, q: p @ q)(a, b)),
                     rtol=ulps(dt, 2), atol=ulps(dt, 4) * 8)


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_array_operations_move_the_values(dt):
    x = values(dt, n=20)
    m = x[:30].reshape(5, 6)

    def f(x, m):
        return (jnp.sort(x), jnp.argsort(x), jnp.concatenate([x, x[::-1]]),
                jnp.pad(m, 1, constant_values=2.5), m.T, m.T.reshape(3, 10),
                x.at[jnp.array([0, 3])].set(7.0), x.at[jnp.array([1, 1])].add(1.5),
                lax.dynamic_update_slice(x, x[:4] * 2, (5,)), jnp.flip(m, 0), m[1:4, ::2],
                jnp.take(x, jnp.array([3, 1, 2])), jnp.broadcast_to(x[:3], (2, 3)))
    with np.errstate(all="ignore"):
        got, want = run_both(f, x, m)
    assert_same_bits(got, want)


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_noncontiguous_empty_and_scalar_inputs(dt):
    x = values(dt, n=60).reshape(6, 12)

    def f(a, e, s):
        return a * 2 + s, jnp.sum(e, axis=0), e * s, jnp.exp(s)
    e = np.zeros((0, 3), dt)
    s = np.array(1.5, dt)
    with np.errstate(all="ignore"):
        for a in (x[:, ::2], x.T, x[::-1]):
            got, want = run_both(f, a, e, s)
            assert_same_bits(got, want)


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_control_flow_carries(dt):
    x = np.array([3.0, 1.0, 2.0, 1e-3], dt)

    def f(a):
        doubled = lax.fori_loop(0, 3, lambda i, c: c * 2 + 0.1, a)
        halved = lax.while_loop(lambda c: c[0] > 0.5, lambda c: c / 3, a)
        picked = lax.cond(a[0] > 2, lambda v: jnp.exp(v), lambda v: -v, a)
        return doubled, halved, picked, lax.cumsum(a)
    got, want = run_both(f, x)
    assert_same_bits(got[:2], want[:2])
    assert_close(got, want, rtol=ulps(dt, 2))


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_equations_without_a_loop_lowering_see_16_bit_arrays(dt):
    # A callback has no loop lowering: it runs from the compiled code on 16-bit arrays
    # (viewed, not converted), inside a loop and at the top level.
    seen = []

    def cb(v):
        seen.append(v.dtype)
        return (v * 2).astype(v.dtype)

    def f(a):
        spec = absjit.ShapeDtypeStruct(a.shape, a.dtype)
        top = absjit.pure_callback(cb, spec, a) + 1
        return (top, lax.fori_loop(0, 2, lambda i, c: absjit.pure_callback(cb, spec, c) - 1, a),
                jnp.outer(top, a) @ a)
    x = np.array([1.5, -2.0, 0.25], dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the callback's one warning
        exe = absjit.jit(f, backend="cpu").lower(x).compile()
    # The top-level callback cuts the program into compiled pieces and a driver.
    assert isinstance(exe.executable, NumbaExecutable) and exe.executable.n_pieces >= 2
    got = exe(x)
    assert set(seen) == {np.dtype(dt)}
    want = absjit.jit(f, backend="interpret")(x)
    assert_same_bits(got[:2], want[:2])
    assert_close(got[2], want[2], rtol=ulps(dt, 2))


# -- precision policy ------------------------------------------------------------------
def _conversions(program):
    return [s.expr.prim for s in ir.walk(program.body)
            if isinstance(s, ir.Let) and isinstance(s.expr, ir.Op)
            and s.expr.prim in (WIDEN, NARROW, QUANTIZE)]


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_fastmath_rounds_only_on_store(dt):
    x = np.linspace(-3, 3, 101).astype(dt)

    def f(a):
        return ((a * 1.7 + 0.3) * a - a / 3) * 0.5
    exact = compiled(f, x)
    fast = compiled(f, x, compiler_options={"fastmath": True})
    # Six operations: five results rounded in registers, the last rounded on store.
    assert _conversions(exact.executable.program) == [WIDEN] + [QUANTIZE] * 5 + [NARROW]
    assert _conversions(fast.executable.program) == [WIDEN, NARROW]
    x32 = x.astype(np.float32)
    once = f(x32).astype(dt)  # float32 all the way, rounded once
    assert_close(fast(x), once, rtol=ulps(dt, 1), atol=ulps(dt, 1))
    assert_same_bits(exact(x), absjit.jit(f, backend="interpret")(x))


def test_loaded_values_are_stored_as_their_bits():
    # A transpose moves bits: no conversion runs between the load and the store.
    x = values(np.float16, n=18).reshape(6, 5)
    c = compiled(lambda a: a.T, x)
    assert _conversions(c.executable.program) == []
    assert_same_bits(c(x), x.T)


@pytest.mark.parametrize("dt", HALF, ids=IDS)
def test_debug_print_shows_16_bit_values(dt, capsys):
    def f(a):
        absjit.debug.print("v={} w={}", a * 3, a.astype(jnp.float32))
        return lax.fori_loop(0, 2, lambda i, c: (absjit.debug.print("c={}", c), c * 2)[1], a)
    x = np.array([0.1, 2.0], dt)
    got = compiled(f, x)(x)
    printed = capsys.readouterr().out
    want = absjit.jit(f, backend="interpret")(x)
    assert printed == capsys.readouterr().out and printed.count("\n") == 3
    assert_same_bits(got, want)


def test_ranked_level_one_compile_for_every_size():
    def f(a, b):
        return jnp.sum(jnp.exp(a), axis=1), a @ b, jnp.max(a), a.T * 2
    g = absjit.jit(f, backend="cpu", abstraction="ranked")
    for n in (3, 7):
        a = values(np.float16, n=4 * n - 12, seed=n).reshape(n, 4)
        b = values(np.float16, n=8, seed=9).reshape(4, 5)
        with np.errstate(all="ignore"):
            got, want = compiled(f, a, b, abstraction="ranked")(a, b), \
                absjit.jit(f, backend="interpret")(a, b)
            assert_close(g(a, b), want, rtol=ulps(np.float16, 2))
        assert_same_bits(got[2:], want[2:])
    assert g._cache_size() == 1


def test_integer_only_float16_conversions_in_kernels(monkeypatch):
    # What a CPU without hardware half conversions compiles (forced here).
    monkeypatch.setattr(hk, "NATIVE_HALF", False)
    absjit.jit.compile_cache.clear()  # not the native kernel compiled for an equal program

    def f(x, y, z32):
        return x * y + x, lax.nextafter(x, y), z32.astype(x.dtype), jnp.sqrt(x)
    x, y = values(np.float16), values(np.float16, seed=2)[::-1].copy()
    z32 = values(np.float32, seed=3) * np.float32(1000)
    with np.errstate(all="ignore"):
        c = compiled(f, x, y, z32)
        assert "_f32_to_f16_soft(" in c.as_text() and "_native(" not in c.as_text()
        assert_same_bits(c(x, y, z32), absjit.jit(f, backend="interpret")(x, y, z32))
    absjit.jit.compile_cache.clear()
