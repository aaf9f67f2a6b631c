"""The decomposition primitives (``absjit.lax.linalg``): values against NumPy/SciPy,
derivatives against finite differences and ``jax.jvp``/``jax.vjp``, batching rules
against a loop, and bad input rejected before any kernel runs."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, strategies as hst

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads as _check_grads


def check_grads(f, args, jax_fn=None, **kw):
    """``tests.grad_checks.check_grads`` with the JAX reference jitted: JAX takes seconds
    to differentiate these functions op by op, a fraction of that compiled."""
    return _check_grads(f, args, jax_fn=None if jax_fn is None else jax.jit(jax_fn), **kw)

DTYPES = [np.float32, np.float64]
RTOL = {np.dtype(np.float32): 2e-4, np.dtype(np.float64): 1e-10,
        np.dtype(np.complex64): 2e-4, np.dtype(np.complex128): 1e-10}


def _x64(dtype):
    if np.dtype(dtype).itemsize == 8 and np.dtype(dtype).kind == "f" or \
            np.dtype(dtype) == np.complex128:
        absjit.config.update("enable_x64", True)


def _randn(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _spd(rng, shape, dtype):
    a = _randn(rng, shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _well_conditioned(rng, shape, dtype):
    n = shape[-1]
    return (_randn(rng, shape, dtype) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)


def _close(actual, expected, dtype, scale=1.0):
    tol = RTOL[np.dtype(dtype)] * scale
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=tol, atol=tol)


batch_shapes = hst.lists(hst.integers(1, 3), min_size=0, max_size=2).map(tuple)
sizes = hst.integers(1, 5)


@given(batch_shapes, sizes, hst.sampled_from(DTYPES), hst.integers(0, 2**16))
def test_cholesky_matches_numpy(batch, n, dtype, seed):
    _x64(dtype)
    a = _spd(np.random.default_rng(seed), batch + (n, n), dtype)
    out = lax.linalg.cholesky(a)
    assert out.dtype == dtype and out.shape == a.shape
    _close(out, np.linalg.cholesky(a), dtype, scale=n)


def test_cholesky_of_non_positive_definite_is_nan(rng):
    a = np.stack([_spd(rng, (3, 3), np.float32), -np.eye(3, dtype=np.float32)])
    out = np.asarray(lax.linalg.cholesky(a))
    assert np.isfinite(out[0]).all()
    assert np.isnan(out[1][np.tril_indices(3)]).all() and (np.triu(out[1], 1) == 0).all()
    if jax is not None:
        ref = np.asarray(jax.lax.linalg.cholesky(a[1]))
        np.testing.assert_array_equal(np.isnan(out[1]), np.isnan(ref))


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, False), (True, False),
                                                     (True, True), (False, True)])
@pytest.mark.parametrize("unit_diagonal", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_triangular_solve_matches_dense_solve(rng, left_side, lower, transpose_a,
                                              conjugate_a, unit_diagonal, dtype):
    a = _well_conditioned(rng, (2, 4, 4), dtype)
    b = _randn(rng, (2, 4, 3) if left_side else (2, 3, 4), dtype)
    out = lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t.copy()
        t[..., range(4), range(4)] = 1
    if conjugate_a and np.dtype(dtype).kind == "c":
        t = np.conj(t)
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    ref = np.linalg.solve(t, b) if left_side else \
        np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    _close(out, ref, dtype, scale=10)


def test_triangular_solve_vector_rhs_and_singular(rng):
    a = np.triu(_well_conditioned(rng, (3, 3), np.float32))
    b = _randn(rng, (3,), np.float32)
    out = lax.linalg.triangular_solve(a, b, left_side=True)
    _close(out, scipy.linalg.solve_triangular(a, b), np.float32, 10)
    a[1, 1] = 0   # singular: inf/nan, no exception (as XLA's and BLAS's trsm)
    assert not np.isfinite(np.asarray(lax.linalg.triangular_solve(a, b, left_side=True))).all()


@given(batch_shapes, sizes, sizes, hst.sampled_from(DTYPES), hst.integers(0, 2**16))
def test_lu_reconstructs_and_matches_scipy(batch, m, n, dtype, seed):
    _x64(dtype)
    a = _randn(np.random.default_rng(seed), batch + (m, n), dtype)
    lu, piv, perm = lax.linalg.lu(a)
    k = min(m, n)
    assert lu.dtype == dtype and piv.dtype == np.int32 and perm.dtype == np.int32
    assert piv.shape == batch + (k,) and perm.shape == batch + (m,)
    lu, piv, perm = np.asarray(lu), np.asarray(piv), np.asarray(perm)
    for idx in np.ndindex(*batch):
        ref_lu, ref_piv, _ = scipy.linalg.lapack.get_lapack_funcs(("getrf",), (a,))[0](a[idx])
        np.testing.assert_array_equal(piv[idx], ref_piv)
        _close(lu[idx], ref_lu, dtype)
        l_ = np.tril(lu[idx], -1)[:, :k] + np.eye(m, k)
        u = np.triu(lu[idx])[:k]
        _close(l_ @ u, a[idx][perm[idx]], dtype, scale=10)
        perm_ref = lax.linalg.lu_pivots_to_permutation(piv[idx], m)
        np.testing.assert_array_equal(np.asarray(perm_ref), perm[idx])


def test_lu_pivots_to_permutation_batched(mode):
    piv = np.array([[2, 2, 2], [0, 1, 2], [1, 2, 2]], np.int32)
    out = mode(lambda p: lax.linalg.lu_pivots_to_permutation(p, 4))(piv)
    ref = np.tile(np.arange(4, dtype=np.int32), (3, 1))
    for r in range(3):
        for i, p in enumerate(piv[r]):
            ref[r, [i, p]] = ref[r, [p, i]]
    np.testing.assert_array_equal(np.asarray(out), ref)
    vm = absjit.vmap(lambda p: lax.linalg.lu_pivots_to_permutation(p, 4))(piv)
    np.testing.assert_array_equal(np.asarray(vm), ref)


@given(batch_shapes, sizes, sizes, hst.booleans(), hst.sampled_from(DTYPES),
       hst.integers(0, 2**16))
def test_qr_matches_numpy(batch, m, n, full_matrices, dtype, seed):
    _x64(dtype)
    a = _randn(np.random.default_rng(seed), batch + (m, n), dtype)
    q, r = lax.linalg.qr(a, full_matrices=full_matrices)
    rq, rr = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    assert q.shape == rq.shape and r.shape == rr.shape and q.dtype == dtype
    _close(q, rq, dtype, 10)
    _close(r, rr, dtype, 10)


@given(batch_shapes, sizes, hst.sampled_from(DTYPES), hst.integers(0, 2**16))
def test_eigh_matches_numpy(batch, n, dtype, seed):
    _x64(dtype)
    a = _randn(np.random.default_rng(seed), batch + (n, n), dtype)
    v, w = lax.linalg.eigh(a)
    sym = (a + np.swapaxes(a, -1, -2)) / 2
    _close(w, np.linalg.eigvalsh(sym), dtype, 10)
    v = np.asarray(v)
    _close(v @ (np.asarray(w)[..., None] * np.swapaxes(v, -1, -2)), sym, dtype, 10)
    _close(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), v.shape), dtype, 10)


def test_eigh_reads_one_triangle(rng):
    a = _randn(rng, (4, 4), np.float32)
    for lower, uplo in ((True, "L"), (False, "U")):
        _, w = lax.linalg.eigh(a, lower=lower, symmetrize_input=False)
        _close(w, np.linalg.eigvalsh(a, UPLO=uplo), np.float32, 10)
    v, w = lax.linalg.eigh(_spd(rng, (4, 4), np.float32), subset_by_index=(1, 3))
    assert v.shape == (4, 2) and w.shape == (2,)


@given(batch_shapes, sizes, sizes, hst.booleans(), hst.sampled_from(DTYPES),
       hst.integers(0, 2**16))
def test_svd_matches_numpy(batch, m, n, full_matrices, dtype, seed):
    _x64(dtype)
    a = _randn(np.random.default_rng(seed), batch + (m, n), dtype)
    u, s, vt = lax.linalg.svd(a, full_matrices=full_matrices)
    ru, rs, rvt = np.linalg.svd(a, full_matrices=full_matrices)
    assert u.shape == ru.shape and vt.shape == rvt.shape and s.dtype == dtype
    _close(s, rs, dtype, 10)
    k = min(m, n)
    u, vt = np.asarray(u), np.asarray(vt)
    _close((u[..., :k] * np.asarray(s)[..., None, :]) @ vt[..., :k, :], a, dtype, 10)
    _close(lax.linalg.svd(a, compute_uv=False), rs, dtype, 10)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_decompositions(rng, dtype):
    _x64(dtype)
    a = _randn(rng, (2, 3, 3), dtype)
    spd = _spd(rng, (2, 3, 3), dtype)
    _close(lax.linalg.cholesky(spd), np.linalg.cholesky(spd), dtype, 10)
    v, w = lax.linalg.eigh(spd)
    assert w.dtype == np.dtype(dtype).type(0).real.dtype
    _close(w, np.linalg.eigvalsh(spd), dtype, 10)
    _close(lax.linalg.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False), dtype, 10)
    q, r = lax.linalg.qr(a)
    _close(np.asarray(q) @ np.asarray(r), a, dtype, 10)


def test_bad_input_raises_before_running():
    bad = [(lambda: lax.linalg.cholesky(np.ones((2, 3), np.float32)), ValueError,
            r"cholesky must have shape \[\.\.\., n, n\], got \(2, 3\)"),
           (lambda: lax.linalg.eigh(np.ones((2, 3), np.float32)), ValueError, r"\[\.\.\., n, n\]"),
           (lambda: lax.linalg.cholesky(np.eye(2, dtype=np.int32)), TypeError, "float32"),
           (lambda: lax.linalg.svd(np.ones(3, np.float32)), ValueError, "rank >= 2"),
           (lambda: lax.linalg.triangular_solve(np.eye(3, dtype=np.float32),
                                                np.ones((2, 3), np.float32), left_side=True),
            ValueError, "Incompatible shapes"),
           (lambda: lax.linalg.triangular_solve(np.eye(3, dtype=np.float32),
                                                np.ones((3, 3), np.int32)),
            TypeError, "same dtype"),
           (lambda: lax.linalg.qr(np.eye(3, dtype=np.float32), pivoting=True),
            NotImplementedError, "pivoting")]
    for fn, exc, msg in bad:
        with pytest.raises(exc, match=msg):
            fn()
    # The same checks run at trace time: nothing is staged or executed.
    with pytest.raises(ValueError, match="n, n"):
        absjit.make_jaxpr(lax.linalg.cholesky)(np.ones((2, 3), np.float32))


# ---------------------------------------------------------------------------
# Derivatives
# ---------------------------------------------------------------------------
def _jl():
    return None if jax is None else jax.lax.linalg


def _jnp():
    return None if jax is None else jax.numpy


def test_cholesky_grads(rng):
    a = _spd(rng, (2, 3, 3), np.float64)
    f = lambda x: lax.linalg.cholesky(x)  # noqa: E731
    check_grads(f, [a], order=2, jax_fn=_jl() and (lambda x: _jl().cholesky(x)))


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower,transpose_a,unit_diagonal",
                         [(True, False, False), (False, True, False), (True, True, True)])
def test_triangular_solve_grads(rng, left_side, lower, transpose_a, unit_diagonal):
    a = _well_conditioned(rng, (3, 3), np.float64)
    b = _randn(rng, (3, 2) if left_side else (2, 3), np.float64)
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
              unit_diagonal=unit_diagonal)
    check_grads(lambda a, b: lax.linalg.triangular_solve(a, b, **kw), [a, b], order=2,
                jax_fn=_jl() and (lambda a, b: _jl().triangular_solve(a, b, **kw)))


@pytest.mark.parametrize("shape", [(2, 4, 4), (4, 2), (2, 4)])
def test_lu_grads(rng, shape):
    a = _randn(rng, shape, np.float64)
    check_grads(lambda x: lax.linalg.lu(x)[0], [a], order=1,
                jax_fn=_jl() and (lambda x: _jl().lu(x)[0]))


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3, 2)])
def test_qr_grads(rng, shape):
    a = _randn(rng, shape, np.float64)
    check_grads(lambda x: lax.linalg.qr(x, full_matrices=False), [a], order=1,
                jax_fn=_jl() and (lambda x: _jl().qr(x, full_matrices=False)))
    with pytest.raises(NotImplementedError, match="m >= n"):
        absjit.jvp(lambda x: lax.linalg.qr(x)[1], (np.ones((2, 3)),), (np.ones((2, 3)),))


def _eig_invariants(v, w, jnp_mod):
    # The eigenvalues, and a matrix function V diag(sin w) V^T: independent of the
    # eigenvectors' signs.
    return w, (v * jnp_mod.sin(w)[..., None, :]) @ jnp_mod.swapaxes(v, -1, -2)


def test_eigh_grads(rng):
    a = _randn(rng, (2, 4, 4), np.float64)
    check_grads(lambda x: _eig_invariants(*lax.linalg.eigh(x), jnp), [a], order=1,
                jax_fn=_jl() and (lambda x: _eig_invariants(*_jl().eigh(x), _jnp())))


def _svd_invariants(u, s, vt, jnp_mod):
    return s, (u * (s ** 2 + 1)[..., None, :]) @ vt


@pytest.mark.parametrize("shape", [(2, 3, 3), (5, 3), (3, 5)])
def test_svd_grads(rng, shape):
    a = _randn(rng, shape, np.float64)
    check_grads(lambda x: _svd_invariants(*lax.linalg.svd(x, full_matrices=False), jnp),
                [a], order=1,
                jax_fn=_jl() and (lambda x: _svd_invariants(
                    *_jl().svd(x, full_matrices=False), _jnp())))
    check_grads(lambda x: lax.linalg.svd(x, compute_uv=False), [a], order=1)


# ---------------------------------------------------------------------------
# Batching and jit
# ---------------------------------------------------------------------------
def test_vmap_matches_loop(rng):
    a = np.moveaxis(_spd(rng, (3, 4, 4), np.float32), 0, 2)   # batch axis 2
    b = _randn(rng, (4, 2), np.float32)                       # unbatched
    vm = absjit.vmap(lambda a: (lax.linalg.cholesky(a), lax.linalg.lu(a),
                                lax.linalg.qr(a), lax.linalg.eigh(a),
                                lax.linalg.svd(a, compute_uv=False),
                                lax.linalg.triangular_solve(a, b, left_side=True,
                                                            lower=True)),
                     in_axes=2)(a)
    for i in range(3):
        ai = a[:, :, i]
        ref = (lax.linalg.cholesky(ai), lax.linalg.lu(ai), lax.linalg.qr(ai),
               lax.linalg.eigh(ai), lax.linalg.svd(ai, compute_uv=False),
               lax.linalg.triangular_solve(ai, b, left_side=True, lower=True))
        got = absjit.tree_util.tree_map(lambda x: x[i], vm)
        assert_close(got, ref, rtol=1e-5, atol=1e-5)
    tb = _randn(rng, (3, 4, 2), np.float32)
    out = absjit.vmap(lambda b: lax.linalg.triangular_solve(a[:, :, 0], b, left_side=True),
                      in_axes=0)(tb)
    assert_close(out, np.stack([np.asarray(lax.linalg.triangular_solve(
        a[:, :, 0], tb[i], left_side=True)) for i in range(3)]), rtol=1e-5, atol=1e-5)


def test_primitives_under_mode(mode, rng):
    a = _spd(rng, (2, 3, 3), np.float32)

    def f(a):
        L = lax.linalg.cholesky(a)
        x = lax.linalg.triangular_solve(L, a, left_side=True, lower=True)
        lu, piv, perm = lax.linalg.lu(a)
        q, r = lax.linalg.qr(a)
        v, w = lax.linalg.eigh(a)
        s = lax.linalg.svd(a, compute_uv=False)
        return L, x, lu, perm, r, w, s

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # cpu: interpret fallback
        out = mode(f)(a)
    L = np.linalg.cholesky(a)
    ref = (L, np.linalg.solve(L, a), np.asarray(lax.linalg.lu(a)[0]),
           np.asarray(lax.linalg.lu(a)[2]), np.linalg.qr(a)[1], np.linalg.eigvalsh(a),
           np.linalg.svd(a, compute_uv=False))
    assert_close(out, ref, rtol=1e-4, atol=1e-4)


def test_stacks_of_larger_matrices_use_one_call_per_matrix(rng):
    # Above 256 elements per matrix a stack is factored one matrix at a time with SciPy's
    # LAPACK; it must agree with NumPy's batched routines.
    a = _randn(rng, (2, 17, 16), np.float32)
    spd = _spd(rng, (2, 16, 16), np.float32)
    spd[1] = -spd[1]
    chol = np.asarray(lax.linalg.cholesky(spd))
    _close(chol[0], np.linalg.cholesky(spd[0]), np.float32, 50)
    assert np.isnan(chol[1][np.tril_indices(16)]).all()
    for full_matrices in (True, False):
        q, r = lax.linalg.qr(a, full_matrices=full_matrices)
        rq, rr = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
        _close(np.abs(r), np.abs(rr), np.float32, 50)
        _close(np.asarray(q) @ np.asarray(r), a, np.float32, 50)
        u, s, vt = lax.linalg.svd(a, full_matrices=full_matrices)
        assert u.shape == np.linalg.svd(a, full_matrices=full_matrices)[0].shape
        _close(s, np.linalg.svd(a, compute_uv=False), np.float32, 50)
    _close(lax.linalg.svd(a, compute_uv=False), np.linalg.svd(a, compute_uv=False),
           np.float32, 50)
    v, w = lax.linalg.eigh(-spd, lower=False, symmetrize_input=False)
    _close(w, np.linalg.eigvalsh(-spd, UPLO="U"), np.float32, 100)


@pytest.mark.skipif(jax is None, reason="compares with JAX")
def test_complex_derivatives_match_jax(rng):
    # check_grads perturbs real inputs only; complex JVPs and VJPs are compared with
    # JAX's directly (complex128, x64 on in both).
    absjit.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        def c(shape):
            return _randn(rng, shape, np.complex128)

        a = c((3, 3))
        spd = a @ np.conj(a.T) + 3 * np.eye(3)

        def eig_inv(v, w, m):
            return w, (v * m.sin(w)[None, :]) @ m.conj(v.T)

        def svd_inv(u, s, vt):
            return s, (u * (s ** 2 + 1)[None, :]) @ vt

        jl, jjnp = jax.lax.linalg, jax.numpy
        cases = [
            (lambda x: lax.linalg.cholesky(x), lambda x: jl.cholesky(x), [spd]),
            (lambda x, y: lax.linalg.triangular_solve(x, y, left_side=True, lower=True,
                                                      transpose_a=True, conjugate_a=True),
             lambda x, y: jl.triangular_solve(x, y, left_side=True, lower=True,
                                              transpose_a=True, conjugate_a=True),
             [a + 3 * np.eye(3), c((3, 2))]),
            (lambda x: lax.linalg.lu(x)[0], lambda x: jl.lu(x)[0], [a]),
            (lambda x: lax.linalg.qr(x, full_matrices=False),
             lambda x: jl.qr(x, full_matrices=False), [c((4, 3))]),
            (lambda x: eig_inv(*lax.linalg.eigh(x), jnp), lambda x: eig_inv(*jl.eigh(x), jjnp),
             [a]),
            (lambda x: svd_inv(*lax.linalg.svd(x, full_matrices=False)),
             lambda x: svd_inv(*jl.svd(x, full_matrices=False)), [c((4, 3))]),
            (jnp.linalg.slogdet, jjnp.linalg.slogdet, [a + 3 * np.eye(3)]),
        ]
        for f, jf, args in cases:
            jf = jax.jit(jf)
            tans = tuple(c(np.shape(x)) for x in args)
            _, out = absjit.jvp(f, tuple(args), tans)
            _, ref = jax.jvp(jf, tuple(args), tans)
            assert_close(list(jax.tree_util.tree_leaves(out)),
                         [np.asarray(r) for r in jax.tree_util.tree_leaves(ref)],
                         rtol=1e-9, atol=1e-9)
            j_out, j_pb = jax.vjp(jf, *args)
            ct = jax.tree_util.tree_map(
                lambda o: c(np.shape(o)) if np.iscomplexobj(o)
                else _randn(rng, np.shape(o), np.float64), j_out)
            _, pb = absjit.vjp(f, *args)
            ct_a = absjit.tree_util.tree_unflatten(
                absjit.tree_util.tree_structure(f(*args)),
                [np.asarray(x) for x in jax.tree_util.tree_leaves(ct)])
            assert_close(list(pb(ct_a)), [np.asarray(g) for g in j_pb(ct)], rtol=1e-9,
                         atol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3), (2, 17, 17)])
def test_nan_input_gives_nan_not_an_exception(shape):
    x = np.full(shape, np.nan, np.float32)
    for out in (lax.linalg.eigh(x), lax.linalg.svd(x), lax.linalg.qr(x)[:1],
                (lax.linalg.lu(x)[0],), (lax.linalg.cholesky(x),)):
        for o in out:
            assert np.isnan(np.asarray(o)).any()


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("bdim", [0, 1, 3])
def test_vmap_over_rhs_only_folds_into_one_solve(rng, left_side, bdim):
    a = _well_conditioned(rng, (2, 4, 4), np.float32)
    shape = [2, 4, 3] if left_side else [2, 3, 4]
    shape.insert(bdim, 5)
    b = _randn(rng, tuple(shape), np.float32)

    def f(rhs):
        return lax.linalg.triangular_solve(a, rhs, left_side=left_side, lower=True)
    out = absjit.vmap(f, in_axes=bdim)(b)
    ref = np.stack([np.asarray(f(np.take(b, i, axis=bdim))) for i in range(5)])
    assert_close(out, ref, rtol=1e-6, atol=1e-6)
    jaxpr = absjit.make_jaxpr(absjit.vmap(f, in_axes=bdim))(b)
    solves = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "triangular_solve"]
    assert len(solves) == 1 and solves[0].invars[0].aval.shape == (2, 4, 4)


def test_second_order_derivatives(rng):
    # The JVP rules are built from primitives with rules, so they differentiate again.
    a = _randn(rng, (3, 3), np.float64)
    check_grads(lambda x: lax.linalg.eigh(x)[1], [a], order=2)
    check_grads(lambda x: lax.linalg.svd(x, compute_uv=False), [_randn(rng, (4, 3), np.float64)],
                order=2)
    check_grads(lambda x: lax.linalg.qr(x, full_matrices=False)[1], [_randn(rng, (4, 3),
                                                                            np.float64)],
                order=2)
