"""absjit.dask on Dask's synchronous scheduler: chunks and dtypes found by tracing,
results equal to NumPy's, and clear errors for what cannot be blocked."""
import os
import subprocess
import sys

import dask
import dask.array as da
import numpy as np
import pytest

import absjit
import absjit.dask as adask
import absjit.numpy as jnp

from . import _kernels


@pytest.fixture(autouse=True)
def _synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture
def data():
    xn = np.random.default_rng(0).standard_normal((103, 30)).astype(np.float32)
    return xn, da.from_array(xn, chunks=(40, 16))  # edge blocks of 23 and 14


def _close(a, b, rtol=2e-6, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def test_elementwise_keeps_chunks_and_equals_numpy(data):
    xn, x = data
    y = adask.map_blocks(_kernels.selu, x)
    assert y.chunks == x.chunks and y.dtype == np.float32
    _close(y.compute(), _kernels.selu_np(xn))


@pytest.mark.parametrize("f, ref, chunks", [
    (lambda b: b.sum(axis=1), lambda a: a.sum(1), ((40, 40, 23),)),
    (lambda b: b.sum(axis=0), lambda a: a.sum(0), ((16, 14),)),   # axis 0 concatenated
    (lambda b: b.max(axis=1, keepdims=True), lambda a: a.max(1, keepdims=True),
     ((40, 40, 23), (1,))),
    (lambda b: b[1:], None, ((39, 39, 22), (16, 14))),            # per block
    (lambda b: b[:, :, None] * 2, lambda a: a[:, :, None] * 2,
     ((40, 40, 23), (16, 14), (1,))),
    (lambda b: b.T, lambda a: a.T, ((16, 14), (40, 40, 23))),
])
def test_shape_changes_follow_the_trace(data, f, ref, chunks):
    xn, x = data
    y = adask.map_blocks(f, x)
    assert y.chunks == chunks
    if ref is not None:
        _close(y.compute(), ref(xn), atol=1e-4)
    else:  # per-block slicing: each block loses its first row
        blocks = [xn[s:s + 40][1:] for s in range(0, 103, 40)]
        _close(y.compute(), np.concatenate(blocks))


def test_broadcast_arguments_scalars_and_keywords(data):
    xn, x = data
    v = da.from_array(xn[0], chunks=16)
    y = adask.map_blocks(lambda a, b, c, scale=1.0: (a * b + c) * scale, x, v, 2.0,
                         scale=0.5)
    _close(y.compute(), (xn * xn[0] + 2.0) * 0.5)
    c = np.array([2.0, -1.0], np.float32)  # a NumPy argument is passed whole
    _close(adask.map_blocks(lambda a, k: a * k[0] + k[1], x, c).compute(), xn * 2 - 1)
    # A whole argument that fixes an axis's size: that axis is concatenated.
    w = np.linspace(0, 1, 30, dtype=np.float32)
    y = adask.map_blocks(lambda a, b: a - b, x, w)
    assert y.chunks == ((40, 40, 23), (30,))
    _close(y.compute(), xn - w)


def test_dtype_follows_absjit_rules():
    x = da.from_array(np.arange(10, dtype=np.float64), chunks=4)
    y = adask.map_blocks(lambda b: b * 2, x)  # 64-bit off: float32, like absjit.jit
    assert y.dtype == np.float32 and y.compute().dtype == np.float32
    z = adask.map_blocks(lambda b: b > 3, x)
    assert z.dtype == np.bool_
    np.testing.assert_array_equal(z.compute(), np.arange(10) > 3)


def test_blockwise_with_explicit_indices(data):
    xn, x = data
    y = adask.blockwise(lambda b: b.T * 2, "ji", x, "ij")
    assert y.chunks == ((16, 14), (40, 40, 23))
    _close(y.compute(), xn.T * 2)
    wn = np.random.default_rng(1).standard_normal((30, 5)).astype(np.float32)
    w = da.from_array(wn, chunks=(16, 5))
    p = adask.blockwise(lambda a, b: a @ b, "ik", x, "ij", w, "jk")  # j concatenated
    assert p.chunks == ((40, 40, 23), (5,))
    _close(p.compute(), xn @ wn, atol=1e-4)


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_of_a_chunk_function(data, op, axis, keepdims):
    xn, x = data
    r = adask.reduction(_kernels.selu, x, axis=axis, op=op, keepdims=keepdims,
                        split_every=2)
    ref = getattr(_kernels.selu_np(xn).astype(np.float64), op)(axis=axis,
                                                               keepdims=keepdims)
    assert r.dtype == np.float32 and r.shape == ref.shape
    _close(r.compute(), ref, rtol=1e-5, atol=1e-4)


def test_a_jitted_function_is_reused_with_its_options(data):
    xn, x = data
    y = adask.map_blocks(absjit.jit(lambda b: b + 1), x)  # shaped by default: ranked
    _close(y.compute(), xn + 1)
    z = adask.map_blocks(lambda b: b + 1, x, abstraction="shaped")
    _close(z.compute(), xn + 1)


@pytest.mark.parametrize("f, match", [
    (lambda b: b.reshape(-1), "depends on input axes"),
    (lambda b: (b, b), "must return one array"),
    (lambda b: jnp.zeros(3) if b.shape[0] > 2 else b, "needs concrete sizes"),
])
def test_what_cannot_be_blocked_is_a_clear_error(data, f, match):
    _, x = data
    with pytest.raises(ValueError, match=match):
        adask.map_blocks(f, x)


def test_repeated_axis_and_unequal_blocks_are_errors():
    v = da.from_array(np.arange(10.0), chunks=4)
    with pytest.raises(ValueError, match="both follow input axis"):
        adask.map_blocks(lambda a: a[:, None] * a[None, :], v)
    a = da.from_array(np.ones((8, 6)), chunks=(4, 3))
    b = da.from_array(np.ones((6, 8)), chunks=(3, 4))
    with pytest.raises(ValueError, match="cannot run on blocks"):
        adask.blockwise(lambda p, q: p + q.T, "ij", a, "ij", b, "kl")
    with pytest.raises(TypeError, match="dask array"):
        adask.map_blocks(lambda a: a, np.ones(3))
    unknown = v[v > 3]  # chunk sizes known only after computing
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        adask.map_blocks(lambda a: a, unknown)
    with pytest.raises(TypeError, match="scalars"):
        adask.map_blocks(lambda a, s: a, v, "text")
    with pytest.raises(ValueError, match="op must be"):
        adask.reduction(lambda a: a, v, op="max")
    with pytest.raises(ValueError, match="keep the block structure"):
        adask.reduction(lambda a: a.sum(0), da.from_array(np.ones((4, 4)), chunks=2))


def test_stats_count_entries_per_kernel():
    x = da.from_array(np.ones(25, np.float32), chunks=10)  # blocks of 10, 10, 5
    y = adask.map_blocks(lambda b: b * 7, x)
    y.compute()
    label = y.name[len("absjit-"):]
    got = adask.stats()["functions"][label]
    assert got["entries"] == 1 and got["misses"] == 1 and got["hits"] == 2


def test_import_absjit_does_not_import_dask_and_missing_dask_is_explained():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (
        "import sys\n"
        "import absjit, absjit.numpy\n"
        "assert 'dask' not in sys.modules and 'distributed' not in sys.modules\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'dask' or name.startswith('dask.'):\n"
        "            raise ImportError('no dask here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "try:\n"
        "    import absjit.dask\n"
        "except ImportError as err:\n"
        "    print(err)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=root), timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install absjit[dask]" in out.stdout


def test_cuda_backend_passes_through_under_the_simulator():
    """``backend="cuda"`` runs each block through the cuda backend (here Numba's CUDA
    simulator, which must be on before numba.cuda is imported: a subprocess); blocks
    come back as NumPy arrays; one ranked entry serves both block sizes (the cuda
    backend makes its kernels per concrete shape inside it)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (
        "import dask, dask.array as da, numpy as np\n"
        "import absjit.dask as ad\n"
        "from tests.dask import _kernels\n"
        "xn = np.random.default_rng(0).standard_normal(50).astype(np.float32)\n"
        "x = da.from_array(xn, chunks=20)\n"
        "y = ad.map_blocks(_kernels.selu, x, backend='cuda')\n"
        "r = ad.reduction(_kernels.selu, x, backend='cuda', op='mean')\n"
        "with dask.config.set(scheduler='synchronous'):\n"
        "    out, mean = dask.compute(y, r)\n"
        "assert type(out) is np.ndarray and out.dtype == np.float32\n"
        "np.testing.assert_allclose(out, _kernels.selu_np(xn), rtol=2e-6, atol=1e-6)\n"
        "np.testing.assert_allclose(mean, _kernels.selu_np(xn).mean(), rtol=1e-5)\n"
        "(s,) = [v for k, v in ad.stats()['functions'].items() if k == y.name[7:]]\n"
        "assert s['entries'] == 1 and s['misses'] == 1, s  # blocks of 20 and 10\n"
        "print('ok')\n")
    env = dict(os.environ, PYTHONPATH=root, NUMBA_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", "-c", code],
                         capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
