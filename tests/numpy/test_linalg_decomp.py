"""absjit.numpy.linalg decompositions and solvers: values against NumPy, dtypes against
JAX, derivatives against ``jax.jvp``/``jax.vjp``, vmap, jit, and bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as hst

import absjit
import absjit.numpy as jnp
from tests.checks import assert_close, check_against_numpy, jax, jax_numpy
from tests.grad_checks import check_grads as _check_grads


def check_grads(f, args, jax_fn=None, **kw):
    """``tests.grad_checks.check_grads`` with the JAX reference jitted: JAX takes seconds
    to differentiate these functions op by op, a fraction of that compiled."""
    return _check_grads(f, args, jax_fn=None if jax_fn is None else jax.jit(jax_fn), **kw)

DTYPES = [np.float32, np.float64]
TOL = {np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-9}


def _randn(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _well(rng, shape, dtype=np.float32):
    n = shape[-1]
    return (rng.standard_normal(shape) + 2 * np.sqrt(n) * np.eye(n)).astype(dtype)


def _spd(rng, shape, dtype=np.float32):
    a = rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _jl(name, **kw):
    if jax_numpy is None:
        return None
    fn = getattr(jax_numpy.linalg, name)
    return lambda *a: fn(*a, **kw)


def _with(fn, **kw):
    return lambda *a: fn(*a, **kw)


def _setup(dtype):
    if np.dtype(dtype) == np.float64:
        absjit.config.update("enable_x64", True)


batch_shapes = hst.lists(hst.integers(1, 3), min_size=0, max_size=2).map(tuple)


@given(batch_shapes, hst.integers(1, 5), hst.integers(1, 3), hst.booleans(),
       hst.sampled_from(DTYPES), hst.integers(0, 2**16))
def test_solve_inv_det_slogdet(batch, n, k, vector, dtype, seed):
    _setup(dtype)
    rng = np.random.default_rng(seed)
    a = _well(rng, batch + (n, n), dtype)
    b = _randn(rng, (n,) if vector else batch + (n, k), dtype)
    tol = TOL[np.dtype(dtype)]
    assert_close(jnp.linalg.solve(a, b), np.linalg.solve(a, b), rtol=tol, atol=tol)
    assert_close(jnp.linalg.inv(a), np.linalg.inv(a), rtol=tol, atol=tol)
    assert_close(jnp.linalg.det(a), np.linalg.det(a).astype(dtype), rtol=tol, atol=tol)
    sign, logdet = jnp.linalg.slogdet(a)
    rs, rl = np.linalg.slogdet(a)
    assert_close((sign, logdet), (rs.astype(dtype), rl.astype(dtype)), rtol=tol, atol=tol)


def test_solve_broadcasts_batch_axes(rng):
    a = _well(rng, (2, 1, 3, 3))
    b = _randn(rng, (4, 3, 2))
    check_against_numpy(jnp.linalg.solve, np.linalg.solve, a, b, rtol=1e-4, atol=1e-5,
                        jax_fn=_jl("solve"))
    # One matrix against a batch of right-hand sides (solved as one block of columns).
    check_against_numpy(jnp.linalg.solve, np.linalg.solve, a[0, 0], b, rtol=1e-4,
                        atol=1e-5, jax_fn=_jl("solve"))
    check_grads(jnp.linalg.solve, [a[0, 0], b], order=1,
                jax_fn=jax_numpy and (lambda a, b: jax_numpy.linalg.solve(a, b)))


FUNCS = [  # name, kwargs, input maker
    ("cholesky", {}, _spd), ("cholesky", {"upper": True}, _spd),
    ("inv", {}, _well), ("det", {}, _well), ("slogdet", {}, _well),
    ("eigvalsh", {}, _spd), ("pinv", {}, _randn), ("matrix_rank", {}, _randn),
    ("svd", {"compute_uv": False}, _randn), ("svdvals", {}, _randn),
    ("qr", {"mode": "r"}, _randn), ("eigh", {}, _spd),
]


@pytest.mark.parametrize("name,kw,make", FUNCS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_values_and_dtypes_like_numpy_and_jax(rng, name, kw, make, dtype):
    x = make(rng, (2, 4, 4))
    if np.dtype(dtype).kind == "i":
        x = np.round(x * 3).astype(dtype)
        if name in ("cholesky", "eigh", "eigvalsh"):
            x = (x + np.swapaxes(x, -1, -2) + 40 * np.eye(4)).astype(dtype)
        if name in ("inv", "det", "slogdet"):
            x = (x + 40 * np.eye(4)).astype(dtype)
    np_fn = getattr(np.linalg, name)
    ref = _with(np_fn, **kw)
    if name == "eigh":
        ref = lambda a: np.linalg.eigh(a)[0]  # noqa: E731
        fn = lambda a: jnp.linalg.eigh(a).eigenvalues  # noqa: E731
        jfn = jax_numpy and (lambda a: jax_numpy.linalg.eigh(a).eigenvalues)
    elif name == "cholesky" and kw.get("upper"):
        ref = lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2)  # noqa: E731
        fn, jfn = _with(jnp.linalg.cholesky, **kw), _jl("cholesky", **kw)
    elif name == "qr":
        ref = lambda a: np.abs(np.linalg.qr(a, mode="r"))  # noqa: E731
        fn = lambda a: jnp.abs(jnp.linalg.qr(a, mode="r"))  # noqa: E731
        jfn = jax_numpy and (lambda a: jax_numpy.abs(jax_numpy.linalg.qr(a, mode="r")))
    else:
        fn, jfn = _with(getattr(jnp.linalg, name), **kw), _jl(name, **kw)
    check_against_numpy(fn, ref, x, jax_fn=jfn, rtol=1e-3, atol=1e-4)


def test_float64_with_x64(rng):
    absjit.config.update("enable_x64", True)
    a = _well(rng, (3, 3), np.float64)
    for fn in (jnp.linalg.inv, jnp.linalg.det, lambda x: jnp.linalg.slogdet(x)[1],
               lambda x: jnp.linalg.svd(x)[1], lambda x: jnp.linalg.matrix_rank(x)):
        out = fn(a)
        assert out.dtype in (np.float64, np.int64)
    assert jnp.linalg.lstsq(a, a[0])[2].dtype == np.int64


def test_decompositions_reconstruct(rng):
    a = _randn(rng, (2, 5, 3))
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    assert_close(jnp.matmul(u * s[..., None, :], vh), a, rtol=1e-4, atol=1e-5)
    assert jnp.linalg.svd(a).U.shape == (2, 5, 5)
    q, r = jnp.linalg.qr(a)
    assert q.shape == (2, 5, 3) and r.shape == (2, 3, 3)
    assert_close(jnp.matmul(q, r), a, rtol=1e-4, atol=1e-5)
    q, r = jnp.linalg.qr(a, mode="complete")
    assert q.shape == (2, 5, 5) and r.shape == (2, 5, 3)
    h = _spd(rng, (4, 4)) - 6 * np.eye(4, dtype=np.float32)   # indefinite
    u, s, vh = jnp.linalg.svd(h, hermitian=True)
    assert_close(s, np.linalg.svd(h, compute_uv=False), rtol=1e-4, atol=1e-5)
    assert_close(jnp.matmul(u * s[None, :], vh), h, rtol=1e-4, atol=1e-4)
    w, v = jnp.linalg.eigh(h)
    assert_close(jnp.matmul(v * w[None, :], v.T), h, rtol=1e-4, atol=1e-4)


def test_eigh_uplo_and_symmetrize(rng):
    a = _randn(rng, (4, 4))
    for uplo in ("L", "U"):
        w = jnp.linalg.eigvalsh(a, uplo, symmetrize_input=False)
        assert_close(w, np.linalg.eigvalsh(a, UPLO=uplo), rtol=1e-4, atol=1e-5)
    assert_close(jnp.linalg.eigvalsh(a), np.linalg.eigvalsh((a + a.T) / 2), rtol=1e-4,
                 atol=1e-5)
    with pytest.raises(ValueError, match="UPLO"):
        jnp.linalg.eigh(a, UPLO="X")


def test_determinant_edge_cases():
    singular = np.array([[1., 2.], [2., 4.]], np.float32)
    assert abs(float(jnp.linalg.det(singular))) < 1e-6
    sign, logdet = jnp.linalg.slogdet(singular)
    assert float(sign) == 0 and float(logdet) == -np.inf
    perm = np.array([[0., 1., 0.], [1., 0., 0.], [0., 0., -2.]], np.float32)
    sign, logdet = jnp.linalg.slogdet(perm)   # det = 2: two sign flips
    assert float(sign) == 1 and abs(float(logdet) - np.log(2)) < 1e-6
    sign, logdet = jnp.linalg.slogdet(perm[:, [1, 0, 2]])   # det = -2
    assert float(sign) == -1 and abs(float(logdet) - np.log(2)) < 1e-6
    assert float(jnp.linalg.det(np.zeros((0, 0), np.float32))) == 1.0
    out = np.asarray(jnp.linalg.cholesky(np.array([[1., 2.], [2., 1.]], np.float32)))
    assert np.isnan(out[np.tril_indices(2)]).all()


@pytest.mark.parametrize("shape,bshape", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,)),
                                          ((4, 4), (4, 2))])
@pytest.mark.parametrize("rcond", [None, 1e-3, -1.0])
def test_lstsq(rng, shape, bshape, rcond):
    a, b = _randn(rng, shape), _randn(rng, bshape)
    x, resid, rank, s = jnp.linalg.lstsq(a, b, rcond)
    rx, rresid, rrank, rs = np.linalg.lstsq(a, b, rcond=rcond)
    assert_close(x, rx, rtol=1e-4, atol=1e-5)
    assert int(rank) == rrank and rank.dtype == np.int32
    assert_close(s, rs, rtol=1e-4, atol=1e-5)
    full_resid = np.sum((b - a @ rx).reshape(shape[0], -1) ** 2, axis=0)   # (1,) for 1-D b
    assert_close(resid, full_resid.astype(np.float32), rtol=1e-3, atol=1e-4)
    if jax_numpy is not None:
        jx = jax_numpy.linalg.lstsq(a, b, rcond)
        for o, j in zip((x, resid, rank, s), jx):
            assert o.dtype == j.dtype
    nx, nres, _, _ = jnp.linalg.lstsq(a, b, rcond, numpy_resid=True)
    assert nres.shape == np.asarray(rresid).shape


def test_lstsq_rank_deficient(rng):
    a = _randn(rng, (6, 2)) @ _randn(rng, (2, 4))   # rank 2
    b = _randn(rng, (6,))
    x, _, rank, _ = jnp.linalg.lstsq(a, b)
    assert int(rank) == 2
    # The minimum-norm solution (float32 round-off singular values are cut off).
    ref = np.linalg.pinv(a.astype(np.float64), rcond=1e-5) @ b
    assert_close(x, ref.astype(np.float32), rtol=1e-3, atol=1e-4)


def test_pinv_matrix_rank_matrix_power(rng):
    a = _randn(rng, (6, 2)) @ _randn(rng, (2, 4))   # rank 2
    ref = np.linalg.pinv(a.astype(np.float64), rcond=1e-5).astype(np.float32)
    assert_close(jnp.linalg.pinv(a), ref, rtol=1e-3, atol=1e-4)
    assert_close(jnp.linalg.pinv(a, rtol=0.5), np.linalg.pinv(a, rcond=0.5), rtol=1e-3,
                 atol=1e-4)
    assert int(jnp.linalg.matrix_rank(a)) == 2
    assert int(jnp.linalg.matrix_rank(a, rtol=1e6)) == 0
    assert int(jnp.linalg.matrix_rank(np.array([0., 1.]))) == 1
    m = _well(rng, (2, 3, 3))
    for n in (0, 1, 2, 3, 5, -1, -2):
        assert_close(jnp.linalg.matrix_power(m, n), np.linalg.matrix_power(m, n),
                     rtol=1e-3, atol=1e-4)
    ints = np.array([[1, 1], [0, 1]], np.int32)
    out = jnp.linalg.matrix_power(ints, 4)
    assert out.dtype == np.int32 and int(out[0, 1]) == 4


def test_bad_input():
    sq = np.eye(3, dtype=np.float32)
    cases = [(jnp.linalg.inv, (np.ones((2, 3)),), ValueError,
              r"Argument to inv must have shape \[\.\.\., n, n\], got \(2, 3\)"),
             (jnp.linalg.cholesky, (np.ones((2, 3)),), ValueError, r"cholesky .*n, n"),
             (jnp.linalg.det, (np.ones((2, 3)),), ValueError, r"det must have shape"),
             (jnp.linalg.slogdet, (np.ones(3),), ValueError, r"slogdet must have shape"),
             (jnp.linalg.eigh, (np.ones((2, 3)),), ValueError, r"eigh must have shape"),
             (jnp.linalg.solve, (sq, np.ones(())), ValueError, r"b must have shape"),
             (jnp.linalg.solve, (sq, np.ones(2)), ValueError, r"b must have shape \(3,\)"),
             (jnp.linalg.solve, (sq, np.ones((2, 4))), ValueError, r"\[\.\.\., 3, k\]"),
             (jnp.linalg.solve, (np.ones(3), np.ones(3)), ValueError, "two dimensional"),
             (jnp.linalg.solve, (np.ones((2, 3, 3)), np.ones((2, 3))), ValueError,
              "Invalid shapes for solve"),
             (jnp.linalg.matrix_power, (np.ones((2, 3)), 2), TypeError, "square"),
             (jnp.linalg.matrix_power, (sq, 1.5), TypeError, "integer"),
             (jnp.linalg.lstsq, (np.ones((2, 2, 2)), np.ones(2)), TypeError,
              "two-dimensional"),
             (jnp.linalg.lstsq, (np.ones((3, 2)), np.ones(2)), ValueError, "Leading"),
             (jnp.linalg.qr, (sq, "bogus"), ValueError, "Unsupported QR"),
             (jnp.linalg.inv, ([[1., 0.], [0., 1.]],), TypeError, "jnp.array")]
    for fn, args, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn(*args)
        # Under jit the same error comes from tracing, before anything runs.
        if all(isinstance(a, np.ndarray) for a in args):
            with pytest.raises(exc, match=msg):
                absjit.jit(fn)(*args)


# ---------------------------------------------------------------------------
# Derivatives of the composites, against JAX
# ---------------------------------------------------------------------------
def _jax_or_none(fn):
    return None if jax is None else fn


def test_solve_inv_det_grads(rng):
    a, b = _well(rng, (2, 3, 3), np.float64), _randn(rng, (2, 3, 2), np.float64)
    check_grads(jnp.linalg.solve, [a, b], order=2,
                jax_fn=_jax_or_none(lambda a, b: jax_numpy.linalg.solve(a, b)))
    check_grads(jnp.linalg.inv, [a], order=1, jax_fn=_jax_or_none(jax_numpy and
                                                                 jax_numpy.linalg.inv))
    check_grads(jnp.linalg.det, [a], order=2, jax_fn=_jax_or_none(jax_numpy and
                                                                 jax_numpy.linalg.det))
    big = _well(rng, (4, 4), np.float64)   # LU path (2x2 and 3x3 use cofactors)
    check_grads(jnp.linalg.det, [big], order=1, jax_fn=_jax_or_none(jax_numpy and
                                                                   jax_numpy.linalg.det))
    singular = np.array([[1., 2.], [2., 4.]])
    assert_close(absjit.grad(jnp.linalg.det)(singular), np.array([[4., -2.], [-2., 1.]]),
                 check_dtype=False)
    check_grads(lambda a: jnp.linalg.slogdet(a)[1], [a], order=1,
                jax_fn=_jax_or_none(lambda a: jax_numpy.linalg.slogdet(a)[1]))


def test_solve_gradient_reuses_the_factorization(rng):
    """The reverse-mode gradient of ``solve`` factors the matrix once and then solves
    with the factors (vector right-hand sides), as JAX's does: no factorization is
    differentiated (that would add triangular solves with n right-hand sides and n x n
    products, O(n^3))."""
    n = 6
    a, b = _well(rng, (n, n), np.float64), _randn(rng, (n,), np.float64)
    jaxpr = absjit.make_jaxpr(absjit.grad(lambda a, b: jnp.sum(jnp.linalg.solve(a, b) ** 2),
                                          argnums=(0, 1)))(a, b)
    eqns = []

    def walk(jx):
        for e in jx.eqns:
            eqns.append(e)
            for p in e.params.values():
                for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner)
    walk(jaxpr.jaxpr)
    names = [e.primitive.name for e in eqns]
    assert names.count("lu") == 1, names
    solves = [e for e in eqns if e.primitive.name == "triangular_solve"]
    assert solves and all(e.outvars[0].aval.shape[-1] == 1 for e in solves), \
        [e.outvars[0].aval.shape for e in solves]
    products = [e for e in eqns if e.primitive.name == "dot_general"]
    assert not any(len(e.invars[0].aval.shape) == 2 and e.invars[0].aval.shape[-1] == n
                   and len(e.invars[1].aval.shape) == 2 and e.invars[1].aval.shape[-1] == n
                   and e.outvars[0].aval.shape == (n, n) for e in products)


def test_spectral_composite_grads(rng):
    a = _randn(rng, (4, 3), np.float64)
    spd = _spd(rng, (3, 3), np.float64)
    b = _randn(rng, (4,), np.float64)
    check_grads(lambda a, b: jnp.linalg.lstsq(a, b)[0], [a, b], order=1,
                jax_fn=_jax_or_none(lambda a, b: jax_numpy.linalg.lstsq(a, b)[0]))
    check_grads(jnp.linalg.pinv, [a], order=1,
                jax_fn=_jax_or_none(jax_numpy and jax_numpy.linalg.pinv))
    check_grads(lambda a: jnp.linalg.norm(a, "nuc"), [a], order=1,
                jax_fn=_jax_or_none(lambda a: jax_numpy.linalg.norm(a, "nuc")))
    check_grads(lambda a: jnp.linalg.norm(a, 2), [a], order=1,
                jax_fn=_jax_or_none(lambda a: jax_numpy.linalg.norm(a, 2)))
    check_grads(jnp.linalg.eigvalsh, [spd], order=1,
                jax_fn=_jax_or_none(jax_numpy and jax_numpy.linalg.eigvalsh))
    check_grads(jnp.linalg.cholesky, [spd], order=1,
                jax_fn=_jax_or_none(jax_numpy and jax_numpy.linalg.cholesky))
    check_grads(lambda a: jnp.linalg.matrix_power(a, -2), [spd], order=1,
                jax_fn=_jax_or_none(lambda a: jax_numpy.linalg.matrix_power(a, -2)))


def test_grad_of_log_det_is_inverse_transpose(rng):
    a = _well(rng, (3, 3), np.float32)
    g = absjit.grad(lambda a: jnp.linalg.slogdet(a)[1])(a)
    assert_close(g, np.linalg.inv(a).T, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# vmap and jit
# ---------------------------------------------------------------------------
def test_vmap(rng):
    a, b = _well(rng, (4, 3, 3)), _randn(rng, (3,))
    out = absjit.vmap(lambda a: (jnp.linalg.solve(a, b), jnp.linalg.det(a),
                                 jnp.linalg.slogdet(a), jnp.linalg.inv(a)))(a)
    ref = (np.linalg.solve(a, b), np.linalg.det(a), tuple(np.linalg.slogdet(a)),
           np.linalg.inv(a))
    assert_close(out, ref, rtol=1e-4, atol=1e-5, check_dtype=False)


def test_composites_under_mode(mode, rng):
    a, b = _well(rng, (3, 3)), _randn(rng, (3, 2))

    def f(a, b):
        return (jnp.linalg.solve(a, b), jnp.linalg.inv(a), jnp.linalg.det(a),
                jnp.linalg.slogdet(a).logabsdet, jnp.linalg.lstsq(a, b)[0],
                jnp.linalg.pinv(a), jnp.linalg.norm(a, 2), jnp.linalg.matrix_rank(a),
                jnp.linalg.eigvalsh(a @ a.T))

    def ref(a, b):
        return (np.linalg.solve(a, b), np.linalg.inv(a), np.linalg.det(a),
                np.linalg.slogdet(a)[1], np.linalg.lstsq(a, b, rcond=None)[0],
                np.linalg.pinv(a), np.linalg.norm(a, 2), np.linalg.matrix_rank(a),
                np.linalg.eigvalsh(a @ a.T))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # cpu: interpret fallback
        check_against_numpy(mode(f), ref, a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_empty_matrices(shape):
    x = np.zeros(shape, np.float32)
    batch = shape[:-2]
    assert jnp.linalg.inv(x).shape == shape and jnp.linalg.solve(x, x).shape == shape
    assert_close(jnp.linalg.det(x), np.linalg.det(x).astype(np.float32))
    sign, logdet = jnp.linalg.slogdet(x)
    assert_close((sign, logdet), tuple(r.astype(np.float32) for r in np.linalg.slogdet(x)))
    assert jnp.linalg.cholesky(x).shape == shape
    assert jnp.linalg.eigh(x).eigenvalues.shape == batch + (shape[-1],)
    u, s, vh = jnp.linalg.svd(x)
    assert (u.shape, s.shape, vh.shape) == tuple(a.shape for a in np.linalg.svd(x))
    assert jnp.linalg.qr(x).R.shape == np.linalg.qr(x).R.shape
    assert jnp.linalg.pinv(np.zeros(batch + (3, 0), np.float32)).shape == batch + (0, 3)
