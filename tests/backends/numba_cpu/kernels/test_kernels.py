"""The vectorisable ``expm1 log1p tanh sinh cosh atan`` kernels (``kernels_special``),
through the public API: within 2 ulp of an extended-precision reference on dense grids
over the whole float range, NumPy's exact results on special values, and no libm call
left in the compiled loop (so LLVM could vectorise it).
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu import NumbaExecutable

# A fresh cache directory: a kernel loaded from disk has no LLVM IR to inspect.
pytestmark = pytest.mark.usefixtures("module_cache_dir")

NAMES = ("expm1", "log1p", "tanh", "sinh", "cosh", "arctan")
REFERENCE = {name: getattr(np, name) for name in NAMES}

# x86-64's long double has 11 more significand bits than float64: a reference within
# ~0.001 ulp of the exact float64 result. float32 is checked against float64.
LONG = np.longdouble if np.finfo(np.longdouble).nmant >= 63 else None


def _all(x):
    return tuple(getattr(jnp, name)(x) for name in NAMES)


def _grid(dtype, rng):
    finfo = np.finfo(dtype)
    if dtype == np.float32:
        bits = rng.integers(0, 2 ** 32, 60_000, dtype=np.uint64).astype(np.uint32)
        anywhere = bits.view(np.float32)
    else:
        mag = 10.0 ** rng.uniform(-320, 308, 60_000)
        anywhere = mag * rng.choice([-1.0, 1.0], mag.size)
    # (8.9, 9.2) and (19, 21): around tanh's clamps, where it rounds to 1
    dense = [np.linspace(-2, 2, 40_001), np.linspace(-40, 40, 20_001),
             np.linspace(8.9, 9.2, 3_001), np.linspace(19, 21, 3_001),
             rng.uniform(-1e-4, 1e-4, 5_000), rng.uniform(-800, 800, 5_000),
             np.array([finfo.smallest_subnormal, finfo.tiny, finfo.max, finfo.eps])]
    x = np.concatenate([anywhere.astype(dtype)] + [d.astype(dtype) for d in dense])
    x = np.concatenate([x, -x])
    return x[np.isfinite(x)]


SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 30.0, -30.0, 100.0, -100.0, 1e300,
            -1e300]


def _specials(dtype):
    fi = np.finfo(dtype)
    with np.errstate(all="ignore"):
        return np.array(SPECIALS + [fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny,
                                    -fi.tiny, fi.max, -fi.max], dtype)


def _ulp_errors(got, x, name, dtype):
    with np.errstate(all="ignore"):
        if dtype == np.float32:
            exact = REFERENCE[name](x.astype(np.float64))
            wide = np.float64
        else:
            exact = REFERENCE[name](x.astype(LONG))
            wide = LONG
        rounded = exact.astype(dtype)
        ok = np.isfinite(rounded)
        # An overflowing result must overflow here too; elsewhere measure the error in
        # units of the float spacing at the correctly rounded result.
        assert np.array_equal(np.isfinite(got), ok), name
        ulp = np.spacing(np.abs(rounded[ok])).astype(wide)
        return np.abs(got[ok].astype(wide) - exact[ok]) / ulp


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_are_accurate_exact_on_specials_and_vectorised(dtype):
    if dtype == np.float64 and LONG is None:
        pytest.fail("this platform's long double is no wider than float64: no reference")
    absjit.config.update("enable_x64", dtype == np.float64)
    grid, specials = _grid(dtype, np.random.default_rng(0)), _specials(dtype)
    x = np.concatenate([grid, specials])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the kernels compile: no fallback warning
        # Serial loops: a prange kernel of the same code takes several times longer
        # to compile, and the kernels are what is tested here.
        compiled = absjit.jit(_all, backend="cpu",
                              compiler_options={"parallel": False}).lower(x).compile()
    outs = [np.asarray(o) for o in compiled(x)]
    limit = 2.0
    fi = np.finfo(dtype)
    for name, got in zip(NAMES, outs):
        assert got.dtype == dtype
        err = _ulp_errors(got[:grid.size], grid, name, dtype)
        assert err.max() <= limit, (name, float(err.max()), grid[np.argmax(err)])
        # Special values exactly as NumPy: NaN, ±inf, ±0 with their sign, subnormal
        # inputs (tiny results), and the limits ±1 (tanh) and ±pi/2 (atan at ±inf).
        s, xs = got[grid.size:], specials
        with np.errstate(all="ignore"):
            want = REFERENCE[name](xs)
        assert np.array_equal(np.isnan(s), np.isnan(want)), name
        exact = ~np.isnan(want) & (~np.isfinite(want) | (want == 0) | (np.abs(xs) <= fi.tiny)
                                   | ((np.abs(xs) >= 30) & (name == "tanh"))
                                   | (np.isinf(xs) & (name == "arctan")))
        np.testing.assert_array_equal(s[exact], want[exact], err_msg=name)
        np.testing.assert_array_equal(np.signbit(s[exact]), np.signbit(want[exact]),
                                      err_msg=name)
    # No libm call left for these functions, and vector instructions in the kernel.
    exe = compiled.executable
    assert isinstance(exe, NumbaExecutable)
    llvm = "\n".join(exe._fn.inspect_llvm().values())
    called = set(re.findall(r"call [^@]*@([\w.]+)", llvm))
    assert not {c for c in called if re.search(r"tanh|expm1|log1p|sinh|cosh|atan", c)}
    assert re.search(r"<\d+ x (float|double)>", llvm), "no vector instructions"
