"""Which BLAS runs the blocks of a product on the pool
(absjit/backends/numba_cpu/parallel/block_blas.py): both routes give the product."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu.parallel import block_blas, pool, threads

pytestmark = pytest.mark.skipif(not pool.available(),
                                reason="the native pool runs on Linux x86-64/AArch64")

SLOTS = range(8)  # kind s d c z, times two, plus one when the first operand is transposed


@pytest.fixture
def rechoose(monkeypatch):
    """Forget the route before and after a test: the next blocked product chooses
    again, from ``ABSJIT_BLOCK_BLAS`` as the environment has it then."""
    block_blas.reset()
    yield monkeypatch
    monkeypatch.delenv(block_blas.ENV, raising=False)
    block_blas.reset()
    if pool.built():
        for slot in SLOTS:
            pool.set_gemm64(slot, 0)


# Products of >= 1M multiply-adds run as blocks on the pool. The first BLAS operand is
# the right-hand side: "ik,jk->ij" and "bik,bjk->bij" read it transposed (the "t"
# slots); x @ y.T copies y.T first, so it takes the "n" slots like the others.
PRODUCTS = {
    "x @ y": (lambda x, y: x @ y, (96, 128), (128, 160)),
    "x @ y.T": (lambda x, y: x @ y.T, (96, 128), (160, 128)),
    "x.T @ y": (lambda x, y: x.T @ y, (128, 96), (128, 160)),
    "ik,jk->ij": (lambda x, y: jnp.einsum("ik,jk->ij", x, y), (96, 128), (160, 128)),
    "ki,jk->ij": (lambda x, y: jnp.einsum("ki,jk->ij", x, y), (128, 96), (160, 128)),
    "bij,bjk->bik": (lambda x, y: jnp.einsum("bij,bjk->bik", x, y), (3, 96, 128),
                     (3, 128, 160)),
    "bik,bjk->bij": (lambda x, y: jnp.einsum("bik,bjk->bij", x, y), (3, 96, 128),
                     (3, 160, 128)),
}
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _operands(dt, xs, ys, seed=0):
    rng = np.random.default_rng(seed)

    def draw(shape):
        v = rng.standard_normal(shape)
        if np.dtype(dt).kind == "c":
            v = v + 1j * rng.standard_normal(shape)
        return v.astype(dt)
    return draw(xs), draw(ys)


def _reference(fn, x, y):
    wide = np.complex128 if np.dtype(x.dtype).kind == "c" else np.float64
    return np.asarray(absjit.jit(fn, backend="interpret")(x.astype(wide), y.astype(wide)))


def _route_cases():
    """Every route, dtype and product; complex products through a forced route are the
    slow tier (the default run keeps every dtype on the automatic route)."""
    for route in ("numpy", "scipy", "auto"):
        for dt in DTYPES:
            slow = route != "auto" and np.dtype(dt).kind == "c"
            yield pytest.param(route, dt, id=f"{np.dtype(dt).name}-{route}",
                               marks=pytest.mark.slow if slow else ())


@pytest.mark.parametrize("route,dtype", list(_route_cases()))
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_every_route_gives_the_product(rechoose, route, dtype, name):
    if route == "numpy" and not block_blas.numpy_gemms():
        pytest.skip("NumPy's BLAS here has no 64-bit integer OpenBLAS symbols")
    rechoose.setenv(block_blas.ENV, route)
    absjit.config.update("enable_x64", True)  # (reset after each test)
    fn, xs, ys = PRODUCTS[name]
    x, y = _operands(dtype, xs, ys)
    f = absjit.jit(fn)
    assert "_pgemm_pool(" in f.lower(x, y).compile().as_text()
    got = np.asarray(f(x, y))
    assert got.dtype == dtype
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, _reference(fn, x, y), rtol=tol, atol=tol * 128)
    chosen = threads.info()["pool"]["block_blas"]
    assert set(chosen) == {f"{k} {t}" for k in "sdcz" for t in "nt"}
    if route == "scipy" or not block_blas.numpy_gemms():
        assert set(chosen.values()) == {"scipy"}
    elif route == "numpy":
        assert set(chosen.values()) == {"numpy"}
    else:  # measured for real kinds; complex blocks stay with SciPy's
        assert set(chosen.values()) <= {"numpy", "scipy"}
        assert {chosen[f"{k} {t}"] for k in "cz" for t in "nt"} == {"scipy"}


def test_numpy_blas_is_found_in_numpy_wheels():
    import glob
    import os
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    if not glob.glob(os.path.join(libs, "*openblas64*")):
        pytest.skip("this NumPy does not bundle an ILP64 OpenBLAS (not a PyPI wheel)")
    gemms = block_blas.numpy_gemms()
    assert sorted(gemms) == ["c", "d", "s", "z"] and all(gemms.values())


@pytest.mark.parametrize("name,slot", [("x @ y", 2), ("ik,jk->ij", 3),
                                       ("bik,bjk->bij", 3)])
def test_a_product_takes_its_kind_and_layout_slot(rechoose, name, slot):
    # float64 blocks (slots 2: "d n", 3: "d t") pointed at NumPy's float32 gemm: that
    # reads and writes only half of each buffer, and the product comes out wrong, which
    # shows the block took that slot
    gemms = block_blas.numpy_gemms()
    if not gemms:
        pytest.skip("NumPy's BLAS here has no 64-bit integer OpenBLAS symbols")
    rechoose.setenv(block_blas.ENV, "scipy")
    absjit.config.update("enable_x64", True)
    fn, xs, ys = PRODUCTS[name]
    x, y = _operands(np.float64, xs, ys)
    f = absjit.jit(fn)
    want = _reference(fn, x, y)
    np.testing.assert_allclose(np.asarray(f(x, y)), want, rtol=1e-12, atol=1e-10)
    other = 5 - slot  # the other layout of float64
    pool.set_gemm64(other, gemms["s"])
    np.testing.assert_allclose(np.asarray(f(x, y)), want, rtol=1e-12, atol=1e-10)
    pool.set_gemm64(other, 0)
    pool.set_gemm64(slot, gemms["s"])
    assert not np.allclose(np.asarray(f(x, y)), want)


def test_slots_are_checked():
    with pytest.raises(ValueError, match="expected 0 to 7"):
        pool.set_gemm64(8, 0)


def test_a_bad_setting_is_a_clear_error(rechoose):
    rechoose.setenv(block_blas.ENV, "mkl")
    f = absjit.jit(lambda x, y: x @ y)
    x, y = _operands(np.float32, (96, 128), (128, 160))
    with pytest.raises(ValueError, match="ABSJIT_BLOCK_BLAS='mkl'"):
        f(x, y)
    rechoose.setenv(block_blas.ENV, "scipy")
    np.testing.assert_allclose(np.asarray(f(x, y)), x @ y, rtol=1e-4, atol=1e-3)


def test_the_default_route_is_scipys(rechoose):
    # Timing both libraries is opt-in (ABSJIT_BLOCK_BLAS=auto): which wins is the
    # machine's, and the measurement costs 10-15 ms of a process's first product.
    rechoose.delenv(block_blas.ENV, raising=False)
    fn, xs, ys = PRODUCTS["x @ y"]
    x, y = _operands(np.float32, xs, ys)
    np.testing.assert_allclose(np.asarray(absjit.jit(fn)(x, y)), _reference(fn, x, y),
                               rtol=1e-4, atol=1e-2)
    assert set(threads.info()["pool"]["block_blas"].values()) == {"scipy"}
