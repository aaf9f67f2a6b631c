"""Batched products on the cpu backend: BLAS writing each matrix in place, the loop for
batches of tiny matrices (serial and parallel), operands read where they lie or
regrouped, against NumPy and the interpret backend."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.numba_cpu.lowering import lower_arrays as la_
from absjit.backends.numba_cpu.kernels.blas_kernels import _bgemm
from absjit.core.avals import ShapedArray

from tests.checks import assert_close

pytestmark = pytest.mark.usefixtures("module_cache_dir")

BMM = (((2,), (1,)), ((0,), (0,)))  # 'bij,bjk->bik'


def _plan(lshape, rshape, dn=BMM, dtype=np.float32):
    lhs, rhs = ShapedArray(lshape, np.dtype(dtype)), ShapedArray(rshape, np.dtype(dtype))
    (eqn,) = absjit.make_jaxpr(lambda x, y: lax.dot_general(x, y, dn))(
        np.zeros(lshape, dtype), np.zeros(rshape, dtype)).jaxpr.eqns
    return la_.dot_plan([lhs, rhs], eqn.outvars[0].aval, dn)


def _data(shape, dtype, rng):
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind in "iu":
        return rng.integers(-4, 5, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _check(f, *args, want=None):
    got = absjit.jit(f, backend="cpu")(*args)
    ref = absjit.jit(f, backend="interpret")(*args)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert_close(got, ref)
    if want is not None:
        assert_close(got, np.asarray(want).astype(got.dtype))
    return got


def test_plan_thresholds():
    m = la_.LOOP_MAX_PRODUCT
    assert _plan((3, 4, 4), (3, 4, 8)) == "loop"            # 4*8*4 = 128 multiply-adds
    assert _plan((3, 4, 5), (3, 5, 8)) == "blas"            # 160 > 128
    assert 4 * 8 * 4 <= m < 4 * 8 * 5
    big = la_.PARALLEL_MIN_PRODUCT // 64
    assert _plan((big, 4, 4), (big, 4, 4)) == "parallel loop"
    assert _plan((big - 1, 4, 4), (big - 1, 4, 4)) == "loop"
    assert _plan((4, 16, 16), (4, 16, 16)) == "blas"
    assert _plan((4, 16, 16), (4, 16, 16), dtype=np.int32) == "loop"
    assert _plan((4, 16, 16), (4, 16, 16), dtype=np.complex64) == "blas"
    assert _plan((0, 16, 16), (0, 16, 16)) == "loop"        # nothing to compute
    assert _plan((16, 16), (16, 16), (((1,), (0,)), ((), ()))) == "blas"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128,
                                   np.int32])
@pytest.mark.parametrize("b,m,k,n", [
    (3, 4, 4, 8), (3, 4, 5, 8),            # either side of the loop threshold
    (2048, 4, 4, 4),                       # the parallel loop
    (5, 16, 16, 16), (2, 33, 17, 9),       # BLAS, odd sizes
    (0, 5, 6, 7), (4, 0, 6, 7), (4, 5, 0, 7), (4, 5, 6, 0),   # empty batch / dims
    (1, 1, 1, 1), (4, 1, 7, 1), (1, 9, 1, 9),                 # size-1 dims
])
def test_bmm_matches_numpy(dtype, b, m, k, n):
    absjit.config.update("enable_x64", np.dtype(dtype).itemsize == 8 or
                         np.dtype(dtype) == np.complex128)
    rng = np.random.default_rng(b * 1000 + m * 100 + k * 10 + n)
    x, y = _data((b, m, k), dtype, rng), _data((b, k, n), dtype, rng)
    _check(lambda u, v: jnp.einsum("bij,bjk->bik", u, v), x, y, want=x @ y)


@pytest.mark.parametrize("spec", [
    "bki,bkj->bij",        # lhs read transposed
    "bik,bjk->bij",        # rhs read transposed (attention scores)
    "bki,bjk->bij",        # both transposed
    "ibk,bkj->bij",        # batch not leading: regrouped by a copy
    "bhqd,bhkd->bhqk",     # two batch dims
    "bijk,bjkl->bil",      # two contracting dims
    "bi,bi->b",            # matrix-vector-like, M = N = 1
    "bij,bj->bi",
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layouts_match_numpy(spec, dtype):
    rng = np.random.default_rng(len(spec))
    sizes = dict(b=3, h=2, i=5, j=6, k=7, l=4, q=9, d=8)
    lhs, rhs = spec.split("->")[0].split(",")
    x = _data(tuple(sizes[c] for c in lhs), dtype, rng)
    y = _data(tuple(sizes[c] for c in rhs), dtype, rng)
    absjit.config.update("enable_x64", dtype == np.float64)
    _check(lambda u, v: jnp.einsum(spec, u, v), x, y, want=np.einsum(spec, x, y))


def test_operands_made_in_the_program_and_non_contiguous_inputs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 10, 8)).astype(np.float32)[:, ::2, :]   # (6, 5, 8) strided
    y = rng.standard_normal((8, 6, 7)).astype(np.float32)               # (k, b, n)

    def f(u, v):
        w = jnp.transpose(v, (1, 0, 2)) * 2.0             # (b, k, n), a transposed copy
        return jnp.maximum(jnp.matmul(u, w), 0.0) + 1.0   # with an epilogue
    want = np.maximum(x @ (np.transpose(y, (1, 0, 2)) * 2), 0) + 1
    _check(f, x, y, want=want)


def test_vmap_of_matmul_and_broadcast_batch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((7, 5, 6)).astype(np.float32)
    y = rng.standard_normal((7, 6, 4)).astype(np.float32)
    _check(absjit.vmap(jnp.matmul), x, y, want=x @ y)
    _check(absjit.vmap(jnp.matmul, in_axes=(0, None)), x, y[0], want=x @ y[0])
    _check(absjit.vmap(absjit.vmap(jnp.dot)), x[:, :, None, :].repeat(2, 2),
           y[:, None].repeat(5, 1), want=np.einsum("bicj,bijk->bick",
                                                  x[:, :, None, :].repeat(2, 2),
                                                  y[:, None].repeat(5, 1)))


@pytest.mark.parametrize("shape", [(3, 4, 4), (3, 12, 9)])
def test_grads_through_batched_matmul(shape):
    rng = np.random.default_rng(3)
    b, m, k = shape
    x = rng.standard_normal((b, m, k)).astype(np.float32)
    y = rng.standard_normal((b, k, m + 1)).astype(np.float32)
    w = rng.standard_normal((b, m, m + 1)).astype(np.float32)

    def loss(u, v):
        return jnp.sum(jnp.tanh(jnp.einsum("bij,bjk->bik", u, v)) * w)
    g = absjit.grad(loss, argnums=(0, 1))
    got = absjit.jit(g, backend="cpu")(x, y)
    ref = absjit.jit(g, backend="interpret")(x, y)
    dz = (1 - np.tanh(x @ y) ** 2) * w
    for a, r, want in zip(got, ref, (dz @ np.swapaxes(y, 1, 2), np.swapaxes(x, 1, 2) @ dz)):
        assert_close(a, r)
        assert_close(a, want.astype(np.float32), rtol=1e-4, atol=1e-4)


def test_ranked_sizes_use_blas_at_every_size():
    f = absjit.jit(lambda u, v: lax.dot_general(u, v, BMM), backend="cpu",
                   abstraction="ranked")
    rng = np.random.default_rng(4)
    for b, m, k, n in [(2, 3, 4, 5), (9, 16, 8, 2), (3, 2, 0, 4), (0, 2, 3, 4)]:
        x, y = _data((b, m, k), np.float32, rng), _data((b, k, n), np.float32, rng)
        assert_close(f(x, y), x @ y)
    assert f._cache_size() <= 2  # the rank-only key (k == 0 may not add one)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_bgemm_writes_each_product_in_place(dtype):
    rng = np.random.default_rng(5)
    a = _data((4, 3, 5), dtype, rng)
    b = _data((4, 5, 2), dtype, rng)
    for ta in (False, True):
        for tb in (False, True):
            aa = np.ascontiguousarray(np.swapaxes(a, 1, 2)) if ta else a
            bb = np.ascontiguousarray(np.swapaxes(b, 1, 2)) if tb else b
            out = np.full((4, 3, 2), np.nan, dtype)
            assert _bgemm(aa, bb, out, ta, tb) is out
            assert_close(out, a @ b)
    out = np.full((2, 3, 2), np.nan, dtype)
    _bgemm(np.empty((2, 3, 0), dtype), np.empty((2, 0, 2), dtype), out, False, False)
    assert (out == 0).all()


# -- large products: blocks of the result in Numba's threads, BLAS at one thread -------
def test_large_products_plan_blocks():
    assert _plan((100, 1000), (1000, 2000), (((1,), (0,)), ((), ()))) == "parallel blas"
    assert _plan((64, 64), (64, 64), (((1,), (0,)), ((), ()))) == "blas"
    assert _plan((64, 64, 64), (64, 64, 64)) == "blas"              # 2**18 per matrix
    assert _plan((2, 128, 64), (2, 64, 127)) == "blas"
    assert _plan((2, 128, 64), (2, 64, 128)) == "parallel blas"     # 2**20 each
    assert _plan((1024,), (1024,), (((0,), (0,)), ((), ()))) == "blas"  # a scalar
    assert la_.gemm_blocks(1, 2000) == 15 and la_.gemm_blocks(64, 64) == 1
    assert la_.gemm_blocks(1, 300) == 2 and la_.gemm_blocks(3, 4096) == 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("lshape,rshape,dn", [
    ((96, 700), (700, 1100), (((1,), (0,)), ((), ()))),     # a @ b
    ((700, 96), (700, 1100), (((0,), (0,)), ((), ()))),     # a.T @ b
    ((96, 700), (1100, 700), (((1,), (1,)), ((), ()))),     # a @ b.T
    ((2100,), (2100, 500), (((0,), (0,)), ((), ()))),       # vector @ matrix
    ((500, 2100), (2100,), (((1,), (0,)), ((), ()))),       # matrix @ vector
    ((5, 40, 90), (5, 90, 600), (((2,), (1,)), ((0,), (0,)))),  # batched, blocks
])
def test_large_products_match_numpy(dtype, lshape, rshape, dn):
    absjit.config.update("enable_x64", dtype == np.float64)
    rng = np.random.default_rng(6)
    x, y = _data(lshape, dtype, rng), _data(rshape, dtype, rng)
    assert _plan(lshape, rshape, dn, dtype) == "parallel blas"

    def f(u, v):
        p = lax.dot_general(u, v, dn)
        return p * 2 if np.dtype(dtype).kind == "c" else jnp.maximum(p, 0.5)
    want = np.tensordot(x, y, dn[0]) if not dn[1][0] else x @ y
    want = want * 2 if np.dtype(dtype).kind == "c" else np.maximum(want, 0.5)
    got = absjit.jit(f, backend="cpu")(x, y)
    assert_close(got, want.astype(dtype), rtol=1e-4 if dtype != np.float64 else 1e-10,
                 atol=1e-3 if dtype != np.float64 else 1e-9)


@pytest.mark.parametrize("impl", ["_pgemm_pool", "_pgemm_prange"])
@pytest.mark.parametrize("nblk", [1, 3, 7, 64])
def test_pgemm_blocks_cover_every_column(impl, nblk):
    from absjit.backends.numba_cpu.kernels import blas_kernels
    from absjit.backends.numba_cpu.parallel import pool, threads
    threads.configure_layer()
    if impl == "_pgemm_pool" and not pool.ensure():
        pytest.skip("the native pool runs on Linux x86-64/AArch64 only")
    pgemm = getattr(blas_kernels, impl)
    rng = np.random.default_rng(nblk)
    for dtype in (np.float64, np.float32, np.complex128):
        a = _data((3, 5, 9), dtype, rng)
        b = _data((3, 9, 37), dtype, rng)
        for ta in (False, True):
            for tb in (False, True):
                aa = np.ascontiguousarray(np.swapaxes(a, 1, 2)) if ta else a
                bb = np.ascontiguousarray(np.swapaxes(b, 1, 2)) if tb else b
                out = np.full((3, 5, 37), np.nan, dtype)
                pgemm(aa, bb, out, ta, tb, nblk)
                assert_close(out, a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_fork_after_a_blocked_product():
    from ..parallel.test_threads import _run_script
    out = _run_script("""
        import multiprocessing as mp, os, numpy as np, absjit, absjit.numpy as jnp
        from absjit.backends.numba_cpu.parallel import threads
        f = absjit.jit(lambda a, b: jnp.maximum(a @ b, 0))
        rng = np.random.default_rng(0)
        a = rng.standard_normal((64, 512)).astype(np.float32)
        b = rng.standard_normal((512, 1024)).astype(np.float32)
        want = np.maximum(a @ b, 0)
        assert np.allclose(np.asarray(f(a, b)), want, rtol=1e-4, atol=1e-3)
        assert threads.info()["blas_threads"] == 1
        pid = os.fork()
        if pid == 0:  # the child runs the kernel the parent ran
            ok = np.allclose(np.asarray(f(a, b)), want, rtol=1e-4, atol=1e-3)
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print("child status", status)

        def work(k):
            return float(np.asarray(f(a + k, b)).sum())

        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map(work, range(3))
        assert np.allclose(got, [float(np.maximum((a + k) @ b, 0).sum()) for k in range(3)],
                           rtol=1e-3)
        print("pool ok")
    """)
    assert "child status 0" in out and "pool ok" in out, out


def test_without_adaptive_threads_blas_keeps_its_setting():
    from ..parallel.test_threads import _run_script
    out = _run_script("""
        import numpy as np, absjit, absjit.numpy as jnp
        from absjit.backends.numba_cpu.parallel import threads
        f = absjit.jit(lambda a, b: jnp.maximum(a @ b, 0))
        rng = np.random.default_rng(0)
        a = rng.standard_normal((64, 512)).astype(np.float32)
        b = rng.standard_normal((512, 1024)).astype(np.float32)
        assert np.allclose(np.asarray(f(a, b)), np.maximum(a @ b, 0), rtol=1e-4, atol=1e-3)
        print("blas threads", threads.info()["blas_threads"])
    """, env={"ABSJIT_ADAPTIVE_THREADS": "0"})
    assert "blas threads None" in out, out
