"""The small-matrix paths of the LAPACK kernels (``_small_lu``, ``_small_trsm``) against
SciPy's LAPACK: the same pivots, the same solutions, for every flag combination and
element type, on either side of :data:`SMALL_ORDER`."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg

from absjit.backends.numba_cpu.kernels import lapack_kernels as lk
from absjit.backends.numba_cpu.kernels.lapack_symbols import ensure_symbols
from tests.checks import assert_close

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _tol(dtype):
    single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
    return dict(rtol=2e-4, atol=2e-4) if single else dict(rtol=1e-10, atol=1e-10)


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.fixture(autouse=True)
def _symbols():
    ensure_symbols()


@pytest.mark.parametrize("dtype", DTYPES)
def test_small_lu_pivots_and_factors_as_getrf(dtype):
    """``perm`` rows of ``x`` equal ``L U`` with every multiplier bounded, on
    either side of :data:`SMALL_ORDER`; in double precision the pivots are LAPACK's
    (in single precision, or among a singular matrix's rounding residues, a near tie
    may go either way, as between LAPACK builds)."""
    rng = np.random.default_rng(0)
    shapes = [(1, 1), (3, 5), (5, 3), (8, 8), (lk.SMALL_ORDER, lk.SMALL_ORDER),
              (lk.SMALL_ORDER + 1, lk.SMALL_ORDER + 1)]
    double = np.dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128))
    for shape in shapes:
        x = _random(rng, (3,) + shape, dtype)
        x[1, :, 0] = 0                           # a zero pivot column: singular
        x[2, :2, 0] = 10                         # equal pivot sizes: the first row wins
        m, n = shape
        k = min(shape)
        lu = np.empty_like(x)
        piv = np.empty((3, k), np.int32)
        perm = np.empty((3, m), np.int32)
        lk._lapack_lu(x, lu, piv, perm)
        for b in range(3):
            lower = np.tril(lu[b], -1)[:, :k] + np.eye(m, k, dtype=dtype)
            upper = np.triu(lu[b])[:k, :]
            assert_close(lower @ upper, x[b][perm[b]], **_tol(dtype))
            # pivots are compared by |re| + |im|: a complex multiplier's modulus is
            # at most sqrt(2)
            bound = np.sqrt(2) if np.dtype(dtype).kind == "c" else 1
            assert (np.abs(lower) <= bound * (1 + 1e-6)).all()
            order = np.arange(m)
            for i, p in enumerate(piv[b]):
                order[[i, p]] = order[[p, i]]
            np.testing.assert_array_equal(perm[b], order)
            if double and b != 1:  # (the singular one's zeros are rounding residues)
                want_lu, want_piv = _getrf(x[b])
                np.testing.assert_array_equal(piv[b], want_piv[:k])
                assert_close(lu[b], want_lu, **_tol(dtype))


def _getrf(a):
    """SciPy's ``?getrf`` of a non-square matrix: ``(lu, 0-based pivots)``."""
    getrf, = scipy.linalg.get_lapack_funcs(("getrf",), (a,))
    lu, piv, _ = getrf(a)
    return lu, piv


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k,nrhs", [(5, 3), (lk.SMALL_ORDER + 2, 3), (5, 300)])
def test_small_trsm_solves_every_case_as_trsm(dtype, k, nrhs):
    rng = np.random.default_rng(1)
    a = _random(rng, (2, k, k), dtype) + 4 * np.eye(k, dtype=dtype)
    complex_ = np.dtype(dtype).kind == "c"
    for left, lower, trans, conj, unit in itertools.product([True, False], repeat=5):
        if conj and not (trans and complex_):
            continue  # ?trsm conjugates only with the transpose (and reals ignore it)
        rhs = _random(rng, (2, k, nrhs) if left else (2, nrhs, k), dtype)
        out = np.empty_like(rhs)
        lk._blas_trsm(a, rhs, out, np.bool_(left), np.bool_(lower), np.bool_(trans),
                      np.bool_(conj), np.bool_(unit))
        for b in range(2):
            t = np.tril(a[b]) if lower else np.triu(a[b])
            if unit:
                np.fill_diagonal(t, 1)
            op = t.T if trans else t
            op = np.conj(op) if conj else op
            want = np.linalg.solve(op, rhs[b]) if left else \
                np.linalg.solve(op.T, rhs[b].T).T
            assert_close(out[b], want.astype(dtype), err_msg=str((left, lower, trans,
                                                                  conj, unit)),
                         **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_small_trsm_zero_diagonal_gives_inf_not_an_error(dtype):
    a = np.array([[[0.0, 0.0], [1.0, 2.0]]], dtype)
    rhs = np.array([[[1.0], [1.0]]], dtype)
    out = np.empty_like(rhs)
    with np.errstate(all="ignore"):
        lk._blas_trsm(a, rhs, out, np.bool_(True), np.bool_(True), np.bool_(False),
                      np.bool_(False), np.bool_(False))
    assert not np.isfinite(out).all()
