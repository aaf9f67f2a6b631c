"""The cpu backend's own ``exp`` and ``log`` (``fastmath_kernels``) against NumPy, in ulp.

``np.exp``/``np.log`` inside Numba are scalar libm calls that keep loops from
vectorising, so the backend lowers float32/float64 ``exp``, ``logistic`` and ``log`` to
branch-free kernels. These
tests sweep the float32 range by bit pattern and the float64 range by random sampling,
and check the special values NumPy defines exactly.
"""
from __future__ import annotations

import platform

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import absjit  # noqa: E402
import absjit.numpy as jnp  # noqa: E402
from absjit.backends.numba_cpu.kernels.fastmath_kernels import (  # noqa: E402
    _exp_float32, _exp_float64, _log_float32, _log_float64)

from tests.checks import assert_close  # noqa: E402


pytestmark = pytest.mark.usefixtures("module_cache_dir")


@numba.njit(error_model="numpy")
def _loop32(x, out):
    for i in range(x.shape[0]):
        out[i] = _exp_float32(x[i])


@numba.njit(error_model="numpy")
def _loop64(x, out):
    for i in range(x.shape[0]):
        out[i] = _exp_float64(x[i])


@numba.njit(error_model="numpy")
def _log_loop32(x, out):
    for i in range(x.shape[0]):
        out[i] = _log_float32(x[i])


@numba.njit(error_model="numpy")
def _log_loop64(x, out):
    for i in range(x.shape[0]):
        out[i] = _log_float64(x[i])


def _exp(x):
    out = np.empty_like(x)
    (_loop32 if x.dtype == np.float32 else _loop64)(x, out)
    return out


def _log(x):
    out = np.empty_like(x)
    (_log_loop32 if x.dtype == np.float32 else _log_loop64)(x, out)
    return out


def ulp_distance(a, b):
    """Distance in representable values between equal-dtype arrays (nan == nan)."""
    ity = np.int32 if a.dtype == np.float32 else np.int64
    sign = ity(np.iinfo(ity).max)

    def ordered(v):
        i = v.view(ity).astype(np.int64)
        return np.where(i < 0, -(i & np.int64(sign)), i)

    d = np.abs(ordered(a) - ordered(b))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    d[nan_a & nan_b] = 0
    d[nan_a ^ nan_b] = np.iinfo(np.int64).max
    return d


F32_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754944e-38, 1e-8, -1e-8,
             0.34657359, -0.34657359, 88.0, 88.72283, 88.722839, 88.72284, 89.0, 100.0,
             -87.33654, -87.3365, -88.0, -100.0, -103.27893, -103.972, -103.9721, -104.0,
             -150.0, -1e4, 3.4028235e38, -3.4028235e38]
F64_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-300, 1e-17, -1e-17,
             0.34657359027997264, 709.0, 709.782712893384, 709.7827128933841, 709.79, 710.0,
             -708.3964185322641, -708.4, -709.0, -740.0, -745.1332191019411,
             -745.1332191019412, -745.14, -746.0, -1000.0, 1.7976931348623157e308,
             -1.7976931348623157e308]


def _with_neighbours(values, dt):
    v = np.array(values, dt)
    with np.errstate(over="ignore"):
        up, down = np.nextafter(v, dt(np.inf)), np.nextafter(v, dt(-np.inf))
    return np.concatenate([v, up, down])


def test_exp_float32_sweep():
    # Every 433rd bit pattern (~1e7 values: all exponents, both signs) plus the edges.
    bits = np.arange(0, 1 << 32, 433, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), _with_neighbours(F32_EDGES, np.float32)])
    got = _exp(x)
    with np.errstate(all="ignore"):
        want = np.exp(x)
        exact = np.exp(x.astype(np.float64)).astype(np.float32)  # correctly rounded
    assert ulp_distance(got, exact).max() <= 1
    assert ulp_distance(got, want).max() <= 2


def test_exp_float64_random_and_edges():
    rng = np.random.default_rng(1234)
    x = np.concatenate([
        rng.uniform(-746.0, 710.0, 1_500_000),
        rng.standard_normal(500_000) * 4.0,
        rng.uniform(-745.2, -708.0, 300_000),              # subnormal results
        rng.uniform(709.0, 709.8, 100_000),                # near overflow
        rng.integers(0, 1 << 63, 500_000, dtype=np.int64).view(np.float64),  # any bits
        -rng.integers(0, 1 << 63, 500_000, dtype=np.int64).view(np.float64),
        _with_neighbours(F64_EDGES, np.float64)])
    got = _exp(x)
    with np.errstate(all="ignore"):
        want = np.exp(x)
    assert ulp_distance(got, want).max() <= 2
    if np.finfo(np.longdouble).nmant > 52:
        with np.errstate(all="ignore"):
            exact = np.exp(x.astype(np.longdouble)).astype(np.float64)
        assert ulp_distance(got, exact).max() <= 1


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_exp_special_values_exact(dt):
    edges = F32_EDGES if dt == np.float32 else F64_EDGES
    x = _with_neighbours(edges, dt)
    got = _exp(x)
    with np.errstate(all="ignore"):
        want = np.exp(x)
    # nan/inf/zero inputs and results that overflow or flush to 0 are exact; the
    # rounding of finite results (subnormals included) is the sweeps' business.
    specials = ~np.isfinite(x) | (x == 0) | (want == 0) | np.isinf(want)
    np.testing.assert_array_equal(got[specials], want[specials])
    assert got[np.isnan(x)].size and np.isnan(got[np.isnan(x)]).all()
    one = _exp(np.array([-0.0, 0.0], dt))
    assert (one == 1).all()


def test_loops_have_no_libm_call():
    # The point of these kernels: no call to exp/expf left in the loop.
    _exp(np.ones(8, np.float32)), _exp(np.ones(8)), _log(np.ones(8, np.float32))
    _log(np.ones(8))
    asm = _loop32.inspect_asm(_loop32.signatures[0]) + _loop64.inspect_asm(
        _loop64.signatures[0])
    log_asm = _log_loop32.inspect_asm(_log_loop32.signatures[0]) + \
        _log_loop64.inspect_asm(_log_loop64.signatures[0])
    assert "expf" not in asm and "@exp" not in asm and "exp@" not in asm
    assert "logf" not in log_asm and "@log" not in log_asm and "log@" not in log_asm
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert "mulps" in asm and "mulpd" in asm  # packed (vectorised) multiplies
        assert "divpd" in log_asm


@pytest.fixture
def x64():
    absjit.config.update("enable_x64", True)  # conftest restores the setting


def _both(f, *args):
    got = absjit.jit(f, backend="cpu")(*args)
    want = absjit.jit(f, backend="interpret")(*args)
    return got, want


def _source(f, *args):
    return absjit.jit(f, backend="cpu").lower(*args).compile().as_text()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_jit_exp_matches_interpret(dt, x64):
    rng = np.random.default_rng(0)
    edges = F32_EDGES if dt == np.float32 else F64_EDGES
    x = np.concatenate([rng.standard_normal(300_000) * 30, np.array(edges)]).astype(dt)
    with np.errstate(all="ignore"):
        got, want = _both(jnp.exp, x)
    assert f"_exp_{np.dtype(dt).name}" in _source(jnp.exp, x)
    assert got.dtype == want.dtype == dt
    assert ulp_distance(np.asarray(got), np.asarray(want)).max() <= 2


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_jit_selu_and_logistic_match_interpret(dt, x64):
    alpha, lam = 1.6732632423543772, 1.0507009873554805

    def selu(x):
        return lam * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    def logistic(x):
        return absjit.lax.logistic(x)

    x = (np.random.default_rng(1).standard_normal((400, 700)) * 10).astype(dt)
    rtol = 1e-6 if dt == np.float32 else 1e-14
    for f in (selu, logistic):
        with np.errstate(all="ignore"):
            got, want = _both(f, x)
        assert_close(got, want, rtol=rtol, atol=rtol)  # alpha*exp(x) - alpha cancels


def test_jit_exp_of_small_arrays_and_scalars(x64):
    for dt in (np.float32, np.float64):
        for x in (np.array(0.5, dt), np.array([-1.0, 2.0, np.nan], dt)):
            got, want = _both(lambda v: jnp.exp(v) * 2, x)
            assert_close(got, want, rtol=3e-7, atol=0)


def test_jit_exp_under_fastmath_stays_close():
    # fastmath may reassociate the kernel's arithmetic; it must still compute exp.
    x = np.random.default_rng(3).uniform(-80, 80, 5000).astype(np.float32)
    f = absjit.jit(lambda v: jnp.exp(v), backend="cpu", compiler_options={"fastmath": True})
    assert_close(f(x), np.exp(x), rtol=1e-5, atol=0)


LOG_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, 2.0, 0.5, 0.7071067811865476,
             1.4142135623730951, 1e-45, 5e-324, 1.1754944e-38, 2.2250738585072014e-308,
             3.4028235e38, 1.7976931348623157e308, 1.0000001, 0.99999994]


def test_log_float32_sweep():
    bits = np.arange(0, 1 << 32, 433, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), _with_neighbours(LOG_EDGES, np.float32)])
    got = _log(x)
    with np.errstate(all="ignore"):
        want = np.log(x)
        exact = np.log(x.astype(np.float64)).astype(np.float32)
    assert ulp_distance(got, exact).max() <= 1
    assert ulp_distance(got, want).max() <= 4  # NumPy's float32 SIMD log is <= 3 ulp off


def test_log_float64_random_and_edges():
    rng = np.random.default_rng(99)
    x = np.concatenate([
        rng.integers(0, 1 << 63, 1_500_000, dtype=np.int64).view(np.float64),
        rng.uniform(0.5, 2.0, 500_000), 1.0 + rng.standard_normal(200_000) * 1e-7,
        rng.uniform(0.0, 1e-308, 100_000), -rng.uniform(0, 10, 1000),
        _with_neighbours(LOG_EDGES, np.float64)])
    got = _log(x)
    with np.errstate(all="ignore"):
        want = np.log(x)
    assert ulp_distance(got, want).max() <= 2
    if np.finfo(np.longdouble).nmant > 52:
        with np.errstate(all="ignore"):
            exact = np.log(x.astype(np.longdouble)).astype(np.float64)
        assert ulp_distance(got, exact).max() <= 1


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_log_special_values_exact(dt):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -1e-30, 1.0], dt)
    got = _log(x)
    with np.errstate(all="ignore"):
        want = np.log(x)
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got[:2]).all()  # -inf


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_jit_log_matches_interpret(dt, x64):
    rng = np.random.default_rng(4)
    with np.errstate(all="ignore"):
        x = np.concatenate([rng.uniform(0, 100, 200_000), rng.standard_normal(1000),
                            np.array(LOG_EDGES)]).astype(dt)
        got, want = _both(jnp.log, x)
        sm, sm_want = _both(lambda v: jnp.log(jnp.exp(v) + 1), x)
    assert f"_log_{np.dtype(dt).name}" in _source(jnp.log, x)
    assert got.dtype == want.dtype == dt
    assert ulp_distance(np.asarray(got), np.asarray(want)).max() <= 4
    assert_close(sm, sm_want, rtol=1e-6 if dt == np.float32 else 1e-14, atol=0)


def test_kernel_with_blas_dot_keeps_loops_serial_by_default():
    # A prange epilogue right after a BLAS call fights OpenBLAS's spinning threads.
    w = np.random.default_rng(5).standard_normal((100, 300)).astype(np.float32)
    x = np.random.default_rng(6).standard_normal((300, 2000)).astype(np.float32)

    def f(a, b):
        return jnp.maximum(0.0, jnp.dot(a, b))

    assert "prange(" not in _source(f, w, x) and "_pool_for(" not in _source(f, w, x)
    forced = absjit.jit(f, backend="cpu", compiler_options={"parallel": True})
    from absjit.backends.numba_cpu.parallel import pool
    parallel_loop = "_pool_for(" if pool.ensure() else "prange("
    assert parallel_loop in forced.lower(w, x).compile().as_text()
    got, want = _both(f, w, x)
    assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert_close(forced(w, x), want, rtol=1e-4, atol=1e-4)
    # without a dot, large loops still run in parallel
    assert parallel_loop in _source(lambda a: jnp.exp(a) * 2, x)
