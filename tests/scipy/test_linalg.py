"""absjit.scipy.linalg against scipy.linalg (values), JAX (dtypes, derivatives), under
vmap and jit, and on bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, strategies as hst

import absjit
import absjit.numpy as jnp
import absjit.scipy.linalg as asl
from tests.checks import assert_close, check_against_numpy, jax
from tests.grad_checks import check_grads as _check_grads


def check_grads(f, args, jax_fn=None, **kw):
    """``tests.grad_checks.check_grads`` with the JAX reference jitted: JAX takes seconds
    to differentiate these functions op by op, a fraction of that compiled."""
    return _check_grads(f, args, jax_fn=None if jax_fn is None else jax.jit(jax_fn), **kw)

jsl = None
if jax is not None:
    import jax.scipy.linalg as jsl


def _randn(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _spd(rng, shape, dtype=np.float32):
    a = rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _well(rng, shape, dtype=np.float32):
    n = shape[-1]
    return (rng.standard_normal(shape) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)


def _with(fn, **kw):
    return lambda *a: fn(*a, **kw)


def _j(name, **kw):
    return None if jsl is None else _with(getattr(jsl, name), **kw)


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_cho_factor_cho_solve(rng, lower):
    a = _spd(rng, (4, 4))
    b = _randn(rng, (4, 2))
    check_against_numpy(_with(asl.cholesky, lower=lower), _with(sl.cholesky, lower=lower), a,
                        jax_fn=_j("cholesky", lower=lower), rtol=1e-4, atol=1e-5)
    c, low = asl.cho_factor(a, lower=lower)
    assert low is lower
    for rhs in (b, b[:, 0]):
        assert_close(asl.cho_solve((c, low), rhs), sl.cho_solve(sl.cho_factor(a, lower), rhs),
                     rtol=1e-4, atol=1e-5)
    # Only the named triangle is read.
    junk = np.triu(np.full((4, 4), 7.0, np.float32), 1) if lower else \
        np.tril(np.full((4, 4), 7.0, np.float32), -1)
    assert_close(asl.cholesky(a + junk, lower=lower), sl.cholesky(a, lower=lower), rtol=1e-4,
                 atol=1e-5)


@given(hst.lists(hst.integers(1, 3), max_size=2).map(tuple), hst.integers(1, 5),
       hst.integers(1, 3), hst.sampled_from([0, 1, 2, "N", "T", "C"]), hst.booleans(),
       hst.booleans(), hst.sampled_from([np.float32, np.float64]), hst.integers(0, 2**16))
def test_solve_triangular(batch, n, k, trans, lower, unit, dtype, seed):
    if dtype == np.float64:
        absjit.config.update("enable_x64", True)
    rng = np.random.default_rng(seed)
    a = _well(rng, batch + (n, n), dtype)
    b = _randn(rng, batch + (n, k), dtype)
    out = np.asarray(asl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for idx in np.ndindex(*batch):
        ref = sl.solve_triangular(a[idx], b[idx], trans=trans, lower=lower,
                                  unit_diagonal=unit)
        np.testing.assert_allclose(out[idx], ref, rtol=tol, atol=tol)
    vec = asl.solve_triangular(a[(0,) * len(batch)], b[(0,) * len(batch)][:, 0], trans=trans,
                               lower=lower)
    assert vec.shape == (n,)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
def test_lu(rng, shape):
    a = _randn(rng, shape)
    p, l_, u = asl.lu(a)
    for idx in np.ndindex(*shape[:-2]):
        rp, rl, ru = sl.lu(a[idx])
        assert_close((p[idx], l_[idx], u[idx]), (rp.astype(np.float32), rl, ru), rtol=1e-4,
                     atol=1e-5)
    pl, u2 = asl.lu(a, permute_l=True)
    assert_close(jnp.matmul(pl, u2), a, rtol=1e-4, atol=1e-5)
    if jsl is not None and len(shape) == 2:
        assert [x.dtype for x in jsl.lu(a)] == [x.dtype for x in (p, l_, u)]


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_factor_lu_solve(rng, trans):
    a, b = _well(rng, (4, 4)), _randn(rng, (4, 3))
    lu, piv = asl.lu_factor(a)
    rlu, rpiv = sl.lu_factor(a)
    assert piv.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(piv), rpiv)
    assert_close(lu, rlu, rtol=1e-5, atol=1e-6)
    for rhs in (b, b[:, 0]):
        assert_close(asl.lu_solve((lu, piv), rhs, trans=trans),
                     sl.lu_solve((rlu, rpiv), rhs, trans=trans), rtol=1e-4, atol=1e-5)


def test_eigh_svd_qr_inv_det(rng):
    a = _randn(rng, (5, 3))
    s = _spd(rng, (4, 4))
    w, v = asl.eigh(s)
    assert_close(w, sl.eigh(s, eigvals_only=True), rtol=1e-4, atol=1e-5)
    assert_close(asl.eigh(np.triu(s), lower=False, eigvals_only=True),
                 sl.eigh(s, eigvals_only=True), rtol=1e-4, atol=1e-5)
    u, sv, vh = asl.svd(a)
    assert u.shape == (5, 5) and vh.shape == (3, 3)
    assert_close(asl.svd(a, compute_uv=False), sl.svdvals(a), rtol=1e-4, atol=1e-5)
    q, r = asl.qr(a)
    assert q.shape == (5, 5) and r.shape == (5, 3)
    q, r = asl.qr(a, mode="economic")
    rq, rr = sl.qr(a, mode="economic")
    assert_close((q, r), (rq, rr), rtol=1e-4, atol=1e-5)
    (r_only,) = asl.qr(a, mode="r")
    assert_close(r_only, sl.qr(a, mode="r")[0], rtol=1e-4, atol=1e-5)
    w4 = _well(rng, (4, 4))
    assert_close(asl.inv(w4), sl.inv(w4), rtol=1e-4, atol=1e-5)
    assert_close(asl.det(w4), np.float32(sl.det(w4)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("scale", [0.01, 0.3, 1.0, 4.0, 30.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expm_matches_scipy(rng, scale, dtype):
    if dtype == np.float64:
        absjit.config.update("enable_x64", True)
    a = (scale * _randn(rng, (4, 4), np.float64) / 2).astype(dtype)
    ref = sl.expm(a.astype(np.float64))
    out = np.asarray(asl.expm(a))
    assert out.dtype == dtype
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, ref, rtol=tol * 10, atol=tol * np.abs(ref).max())
    if jsl is not None and dtype == np.float32:
        np.testing.assert_allclose(out, np.asarray(jsl.expm(a)), rtol=1e-4,
                                   atol=1e-5 * np.abs(ref).max())


def test_expm_batched_triangular_and_overflowing(rng):
    a = _randn(rng, (2, 3, 3))
    out = asl.expm(a)
    assert_close(out, np.stack([sl.expm(x) for x in a]).astype(np.float32), rtol=1e-4,
                 atol=1e-5)
    t = np.triu(_randn(rng, (3, 3)))
    assert_close(asl.expm(t, upper_triangular=True), sl.expm(t).astype(np.float32),
                 rtol=1e-4, atol=1e-5)
    big = np.eye(2, dtype=np.float32) * 1e6
    assert np.isnan(np.asarray(asl.expm(big, max_squarings=4))).all()


def test_grads_against_jax(rng):
    a = _spd(rng, (3, 3), np.float64)
    b = _randn(rng, (3, 2), np.float64)
    # cho_factor reads one triangle; its derivative (as JAX's) assumes a symmetric
    # perturbation, so the input is symmetrized first.
    check_grads(lambda a, b: asl.cho_solve(asl.cho_factor((a + a.T) / 2), b), [a, b],
                order=1, jax_fn=jsl and (lambda a, b: jsl.cho_solve(
                    jsl.cho_factor((a + a.T) / 2), b)))
    check_grads(lambda a, b: asl.lu_solve(asl.lu_factor(a), b), [a, b], order=1,
                jax_fn=jsl and (lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b)))
    check_grads(lambda a, b: asl.solve_triangular(a, b, lower=True), [a, b], order=1,
                jax_fn=jsl and (lambda a, b: jsl.solve_triangular(a, b, lower=True)))
    # expm against finite differences only: JAX needs ~5 s here to differentiate its
    # switch and scan op by op, and the values already match JAX's.
    m = _randn(rng, (3, 3), np.float64) * 0.7
    check_grads(asl.expm, [m], order=1, atol=1e-5, rtol=1e-4)


def test_vmap_and_mode(mode, rng):
    a, b = _spd(rng, (3, 3)), _randn(rng, (3, 2))
    vm = absjit.vmap(lambda b: asl.cho_solve(asl.cho_factor(a, lower=True), b),
                     in_axes=1, out_axes=1)(b)
    assert_close(vm, sl.cho_solve(sl.cho_factor(a, lower=True), b), rtol=1e-4, atol=1e-5)

    def f(a, b):
        c = asl.cho_factor(a, lower=True)
        return asl.cho_solve(c, b), asl.lu_solve(asl.lu_factor(a), b), asl.expm(a / 10)

    def ref(a, b):
        return (sl.cho_solve(sl.cho_factor(a, lower=True), b),
                sl.lu_solve(sl.lu_factor(a), b), sl.expm(a / 10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # cpu: interpret fallback
        check_against_numpy(mode(f), ref, a, b, rtol=1e-4, atol=1e-4)


def test_bad_input():
    sq = np.eye(3, dtype=np.float32)
    cases = [(lambda: asl.cholesky(np.ones((2, 3))), ValueError, r"n, n"),
             (lambda: asl.solve_triangular(sq, np.ones(2)), ValueError, r"\(3,\)"),
             (lambda: asl.solve_triangular(sq, np.ones(3), trans=3), ValueError, "trans"),
             (lambda: asl.lu_solve(asl.lu_factor(sq), np.ones(3), trans=5), ValueError,
              "trans"),
             (lambda: asl.expm(np.ones((2, 3))), ValueError, "square"),
             (lambda: asl.eigh(sq, sq), NotImplementedError, "b=None"),
             (lambda: asl.qr(sq, mode="raw"), ValueError, "Unsupported"),
             (lambda: asl.cho_solve((sq, True), np.ones((4, 1))), ValueError, "b must")]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()
