"""The vectorisable ``sin cos tan`` kernels (``kernels_trig``) through the public API:
within 2 ulp of an extended-precision reference on the whole float range (with the
arguments closest to multiples of pi/2 and the largest ones), NumPy's exact results on
special values, no libm call left in the compiled loop, and the same results as the
interpret backend for 16-bit floats, complex numbers, empty and strided inputs.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu import NumbaExecutable

from tests.checks import assert_close

pytestmark = pytest.mark.usefixtures("module_cache_dir")

NAMES = ("sin", "cos", "tan")
# x86-64's long double has 11 more significand bits than float64, and its sinl/cosl/tanl
# reduce huge arguments exactly: a reference within ~0.001 ulp for float64 and float32.
LONG = np.longdouble if np.finfo(np.longdouble).nmant >= 63 else None

# Arguments closest to a multiple of pi/2 relative to their size (the reduction's hardest
# cases): float64's is 6381956970095103 * 2**797; float32's was found by sweeping all
# float32 values with the kernel's reduction.
HARD = {np.float32: [7.729179e+28, 1.5707964, 3.1415927, 4.712389,
                     2.3e7, 2.6e10, 3.4028235e38],
        np.float64: [6381956970095103.0 * 2.0 ** 797, 5.319372648326541e+255,
                     1.5707963267948966, 3.141592653589793, 1e22, 2.0 ** 1023 * 1.999,
                     1048576.0 * 1.5707963267948966, 1.7976931348623157e308]}


def _trig(x):
    return tuple(getattr(jnp, name)(x) for name in NAMES)


def _near_multiples(dtype, rng):
    """Floats within three ulp of ``k * pi/2`` for small and large ``k``."""
    k = np.concatenate([np.arange(1, 3000), rng.integers(1, 2 ** 40, 3000)])
    centre = (k.astype(LONG) * (np.arctan(LONG(1)) * 2)).astype(dtype)
    out, up, down = [centre], centre, centre
    for _ in range(3):
        up, down = np.nextafter(up, dtype(np.inf)), np.nextafter(down, dtype(-np.inf))
        out += [up, down]
    return np.concatenate(out)


def _grid(dtype, rng):
    fi = np.finfo(dtype)
    if dtype == np.float32:
        bits = rng.integers(0, 2 ** 32, 100_000, dtype=np.uint64).astype(np.uint32)
        anywhere = bits.view(np.float32)
    else:
        anywhere = 10.0 ** rng.uniform(-320, 308.25, 100_000)
    dense = [np.linspace(-4, 4, 40_001), np.linspace(-1e4, 1e4, 20_001),
             rng.uniform(-1e-4, 1e-4, 5_000), 2.0 ** rng.uniform(17, 24, 5_000),
             np.array(HARD[dtype]), np.array([fi.smallest_subnormal, fi.tiny, fi.eps])]
    x = np.concatenate([anywhere.astype(dtype), _near_multiples(dtype, rng)]
                       + [d.astype(dtype) for d in dense])
    x = np.concatenate([x, -x])
    return x[np.isfinite(x)]


def _ulp_errors(got, x, name, dtype):
    with np.errstate(all="ignore"):
        exact = getattr(np, name)(x.astype(LONG))
    rounded = exact.astype(dtype)
    assert np.isfinite(got).all(), name
    ulp = np.spacing(np.abs(rounded)).astype(LONG)
    return (np.abs(got.astype(LONG) - exact) / ulp).astype(np.float64)


SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0]


def _specials(dtype):
    fi = np.finfo(dtype)
    return np.array(SPECIALS + [fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny,
                                -fi.tiny, fi.eps / 4, -fi.eps / 4], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trig_kernels_are_accurate_exact_on_specials_and_vectorised(dtype):
    if LONG is None:
        pytest.fail("this platform's long double is no wider than float64: no reference")
    absjit.config.update("enable_x64", dtype == np.float64)
    try:
        grid, specials = _grid(dtype, np.random.default_rng(0)), _specials(dtype)
        x = np.concatenate([grid, specials])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the kernels compile: no fallback warning
            compiled = absjit.jit(_trig, backend="cpu",
                                  compiler_options={"parallel": False}).lower(x).compile()
        outs = [np.asarray(o) for o in compiled(x)]
    finally:
        absjit.config.update("enable_x64", False)
    for name, got in zip(NAMES, outs):
        assert got.dtype == dtype
        err = _ulp_errors(got[:grid.size], grid, name, dtype)
        assert err.max() <= 2.0, (name, float(err.max()), grid[np.argmax(err)])
        # NaN for NaN and ±inf; ±0 keep their sign (cos gives 1); a subnormal or tiny
        # argument gives itself (sin, tan) or 1 (cos), exactly as NumPy.
        with np.errstate(all="ignore"):
            want = getattr(np, name)(specials)
        got_s = got[grid.size:]
        assert np.array_equal(np.isnan(got_s), np.isnan(want)), name
        np.testing.assert_array_equal(got_s, want, err_msg=name)
        np.testing.assert_array_equal(np.signbit(got_s), np.signbit(want), err_msg=name)
    # No libm call left for these functions, and vector instructions in the kernel.
    exe = compiled.executable
    assert isinstance(exe, NumbaExecutable)
    llvm = "\n".join(exe._fn.inspect_llvm().values())
    called = set(re.findall(r"call [^@]*@([\w.]+)", llvm))
    assert not {c for c in called if re.search(r"sin|cos|tan", c)}, called
    if _target_vectorises_table_lookups():
        assert re.search(r"<\d+ x (float|double)>", llvm), "no vector instructions"


def _target_vectorises_table_lookups() -> bool:
    """Whether LLVM vectorises a loop that reads a table at computed indices on the CPU
    Numba compiles for, the one thing the kernels need beyond plain arithmetic (the
    argument reduction reads 2/pi's bits from a table).

    x86-64 CPUs whose gathers LLVM rates fast (Skylake, Ice Lake, AVX-512 parts) do;
    Haswell and Zen 2/3 have gathers that LLVM rates slow and keeps those loops scalar,
    so there the test holds the accuracy and no-libm properties only. arm64 has no
    gathers and is not asked either."""
    import numba

    table = np.arange(1024, dtype=np.int64)

    @numba.njit
    def lookup(a, b):
        for i in range(a.size):
            a[i] = table[(b[i] >> 3) & 1023] + b[i]

    a = np.zeros(64, np.int64)
    lookup(a, a)
    llvm = "\n".join(lookup.inspect_llvm().values())
    return re.search(r"masked\.gather", llvm) is not None


def _both(fn, *args):
    """``fn`` jitted on the cpu backend and on the interpret backend."""
    got = absjit.jit(fn, backend="cpu")(*args)
    want = absjit.jit(fn, backend="interpret")(*args)
    return got, want


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64"])
def test_trig_other_dtypes_match_interpret(dtype):
    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        dt = np.dtype(ml_dtypes.bfloat16)
    else:
        dt = np.dtype(dtype)
    x = np.linspace(-20, 20, 1001)
    if dt.kind == "c":
        x = x + 0.5j * x[::-1] / 20
    x = np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dt)
    got, want = _both(lambda v: (jnp.sin(v) * 2, jnp.cos(v), jnp.tan(v)), x)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype == dt
        if dt.kind == "c":
            assert_close(g, w, rtol=1e-5, atol=1e-6)
        else:
            # 16-bit results: computed in float32 and rounded once, as NumPy does; the
            # float32 kernels may differ from NumPy's by a float32 ulp, which can move
            # a result to the neighbouring 16-bit value.
            g32, w32 = g.astype(np.float32), w.astype(np.float32)
            assert np.array_equal(np.isnan(g32), np.isnan(w32))
            ok = ~np.isnan(w32)
            np.testing.assert_allclose(g32[ok], w32[ok], rtol=2 * float(np.finfo(dt).eps)
                                       if dt != np.dtype("bfloat16") else 2 ** -7, atol=0)


def test_trig_empty_and_strided_inputs_match_interpret():
    rng = np.random.default_rng(1)
    m = (rng.standard_normal((40, 30)) * 100).astype(np.float32)
    a, b = m[::2, ::3], m[:10, :20].T          # non-contiguous views, passed as such
    assert not (a.flags.c_contiguous or b.flags.c_contiguous)
    got, want = _both(lambda u, v: (jnp.sin(u) + jnp.cos(v), jnp.tan(u.T[::-1])), a, b)
    for g, w in zip(got, want):
        assert_close(np.asarray(g), np.asarray(w), rtol=3e-6, atol=1e-6)
    empty = np.zeros((0, 3), np.float32)
    got, want = _both(lambda v: (jnp.sin(v), jnp.cos(v) + 1, jnp.tan(v)), empty)
    for g, w in zip(got, want):
        assert np.asarray(g).shape == (0, 3) and np.asarray(g).dtype == np.float32
