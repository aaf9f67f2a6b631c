"""absjit.scipy.linalg's solve, special matrices, polar and expm_frechet against
scipy.linalg (values) and JAX (dtypes, weak types, derivatives), under vmap and jit, and
on bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, strategies as hst

import absjit
import absjit.scipy.linalg as asl
from absjit.errors import ConcretizationTypeError
from tests.checks import assert_close, check_against_numpy, jax
from tests.grad_checks import check_grads

jsl = jnpj = None
if jax is not None:
    import jax.numpy as jnpj
    import jax.scipy.linalg as jsl


def _j(name, **kw):
    return None if jsl is None else (lambda *a: getattr(jsl, name)(*a, **kw))


def _randn(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _spd(rng, shape, dtype=np.float32):
    a = rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


_I = np.array([3, -1, 4, 2], np.int32)
_F = np.array([2.0, -1.5, 0.5, 3.0], np.float32)
_G = np.array([1.0, 7.0, -2.0], np.float32)

ARRAY_CASES = [
    ("toeplitz", (_I,)), ("toeplitz", (_F, _G)), ("toeplitz", (_I, _G)),
    ("hankel", (_I,)), ("hankel", (_F, _G)), ("hankel", (_G, _I)),
    ("circulant", (_I,)), ("circulant", (_F,)),
    ("companion", (_I,)), ("companion", (_F,)),
    ("fiedler", (_I,)), ("fiedler", (_F,)),
    ("fiedler_companion", (_I,)), ("fiedler_companion", (_F,)),
    ("fiedler_companion", (_F[:2],)),
    ("leslie", (_F, _G)), ("leslie", (_I, _I[:3])), ("leslie", (_F[:2], _F[:1])),
    ("block_diag", (_F, np.ones((2, 3), np.float32), np.float32(5))),
    ("block_diag", (np.ones((2, 2), np.int32), _I[:1])),
]


@pytest.mark.parametrize("name,args", ARRAY_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(ARRAY_CASES)])
def test_array_matrices_match_scipy_and_jax(name, args):
    check_against_numpy(getattr(asl, name), getattr(sl, name), *args, jax_fn=_j(name),
                        rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("m", [1, 2, 5])
@pytest.mark.parametrize("n", [1, 3, 6])
@pytest.mark.parametrize("mode_", ["full", "valid", "same"])
def test_convolution_matrix(m, n, mode_):
    a = _I[:m] if m < 5 else np.arange(1, 6, dtype=np.int32)
    check_against_numpy(lambda a: asl.convolution_matrix(a, n, mode_),
                        lambda a: sl.convolution_matrix(a, n, mode_), a,
                        jax_fn=_j("convolution_matrix", n=n, mode=mode_))


def test_matrices_map_over_batch_axes(rng):
    c, r = _randn(rng, (2, 3, 4)), _randn(rng, (3, 5))
    for name, args in [("toeplitz", (c, r)), ("hankel", (c, r)), ("circulant", (c,)),
                       ("companion", (c,)), ("fiedler", (c,)), ("fiedler_companion", (c,)),
                       ("leslie", (c, r[:, :3]))]:
        out = np.asarray(getattr(asl, name)(*args))
        for idx in np.ndindex(2, 3):
            ref = getattr(sl, name)(*[x[idx[len(idx) - (x.ndim - 1):]] for x in args])
            np.testing.assert_allclose(out[idx], ref, rtol=1e-6, atol=1e-6, err_msg=name)
        if jsl is not None:
            assert out.shape == getattr(jsl, name)(*args).shape, name
    assert asl.fiedler_companion(c[..., :1]).shape == (2, 3, 0, 0)
    out = asl.convolution_matrix(c, 3, "same")
    assert_close(out[1, 2], sl.convolution_matrix(c[1, 2], 3, "same"), rtol=1e-6)


@pytest.mark.parametrize("x64", [False, True])
def test_size_matrices(x64):
    absjit.config.update("enable_x64", x64)
    if jax is not None:
        jax.config.update("jax_enable_x64", x64)
    try:
        for n in (0, 1, 2, 5):
            cases = [("hilbert", (n,), {}), ("dft", (n,), {}), ("dft", (n, "sqrtn"), {}),
                     ("dft", (n, "n"), {})]
            for kind in ("symmetric", "lower", "upper"):
                cases.append(("pascal", (n, kind), {}))
                if n:
                    cases.append(("invpascal", (n, kind), {}))
            if n:
                cases += [("invhilbert", (n,), {}), ("helmert", (n,), {}),
                          ("helmert", (n, True), {})]
            if n in (1, 2):
                cases += [("hadamard", (n,), {}), ("hadamard", (2 * n, np.float32), {})]
            for name, args, kw in cases:
                out = getattr(asl, name)(*args, **kw)
                ref = getattr(sl, name)(*args, **kw)
                tol = 1e-6 if out.dtype in (np.float32, np.complex64) else 1e-12
                assert_close(out, np.asarray(ref).astype(out.dtype), rtol=tol, atol=tol,
                             err_msg=f"{name}{args}")
                if jsl is not None and name != "pascal" and n in (1, 5):
                    # JAX's pascal is float32 even with x64 on; ours follows x64.
                    j = getattr(jsl, name)(*args, **kw)
                    assert out.dtype == j.dtype and not out.weak_type, (name, args)
                    assert_close(out, np.asarray(j), rtol=1e-4, atol=1e-4,
                                 err_msg=f"{name}{args}")
        assert asl.dft(3, dtype=np.complex64).dtype == np.complex64
        assert_close(asl.pascal(4), asl.pascal(4, "symmetric"))
        assert_close(asl.invpascal(4), asl.invpascal(4, "symmetric"))
    finally:
        if jax is not None:
            jax.config.update("jax_enable_x64", False)


@given(hst.sampled_from([(), (2,), (1, 3)]), hst.sampled_from([(), (2,), (3, 1)]),
       hst.integers(1, 4), hst.sampled_from(["gen", "sym", "her", "pos"]), hst.booleans(),
       hst.sampled_from([None, 1, 2]), hst.integers(0, 2**16))
def test_solve_matches_scipy(abatch, bbatch, n, assume_a, lower, k, seed):
    rng = np.random.default_rng(seed)
    a = _spd(rng, abatch + (n, n))
    if k is None:
        b, bbatch = _randn(rng, (n,)), ()
    else:
        b = _randn(rng, bbatch + (n, k))
    try:
        batch = np.broadcast_shapes(abatch, bbatch)
    except ValueError:
        with pytest.raises(ValueError):
            asl.solve(a, b, assume_a=assume_a, lower=lower)
        return
    # Only the named triangle is read for 'pos': garbage in the other one is ignored.
    junk = (np.triu if lower else np.tril)(np.full((n, n), 9.0, np.float32),
                                         1 if lower else -1)
    out = np.asarray(asl.solve(a + junk if assume_a == "pos" else a, b, assume_a=assume_a,
                               lower=lower))
    ab = np.broadcast_to(a, batch + (n, n))
    bb = b if k is None else np.broadcast_to(b, batch + (n, k))
    assert out.shape == (batch + (n,) if k is None else batch + (n, k))
    for idx in np.ndindex(*batch):
        ref = sl.solve(ab[idx], bb if k is None else bb[idx], assume_a=assume_a)
        np.testing.assert_allclose(out[idx], ref, rtol=1e-4, atol=1e-4)


def test_solve_dtypes_against_jax(rng):
    a, b = _spd(rng, (3, 3)), _randn(rng, (3,))
    for assume_a in ("gen", "pos"):
        check_against_numpy(lambda a, b: asl.solve(a, b, assume_a=assume_a),
                            lambda a, b: sl.solve(a, b, assume_a=assume_a), a, b,
                            jax_fn=_j("solve", assume_a=assume_a), rtol=1e-4, atol=1e-5)
    ai = np.array([[2, 1], [1, 3]], np.int32)
    check_against_numpy(asl.solve, sl.solve, ai, np.array([1, 2], np.int32),
                        jax_fn=_j("solve"), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 3, 3)])
@pytest.mark.parametrize("side", ["right", "left"])
def test_polar(rng, shape, side):
    if shape == (5, 3) and side == "left":
        shape = (3, 5)
    for a in (_randn(rng, shape),
              (_randn(rng, shape) + 1j * _randn(rng, shape)).astype(np.complex64)):
        u, p = asl.polar(a, side)
        assert u.dtype == p.dtype == a.dtype
        for idx in np.ndindex(*shape[:-2]):
            ru, rp = sl.polar(a[idx], side)
            assert_close((u[idx], p[idx]), (ru.astype(a.dtype), rp.astype(a.dtype)),
                         rtol=1e-4, atol=1e-4)
        if jsl is not None:
            # JAX's default 'qdwh' rejects square matrices with side='left'.
            ju, jp = jsl.polar(a, side, method="svd" if side == "left" else "qdwh")
            assert_close((u, p), (ju, jp), rtol=1e-3, atol=1e-4)
        u2, p2 = asl.polar(a, side, method="svd")
        assert_close((u2, p2), (u, p))


def test_expm_frechet(rng):
    a, e = _randn(rng, (2, 4, 4)) * 0.7, _randn(rng, (2, 4, 4))
    ex, L = asl.expm_frechet(a, e)
    for i in range(2):
        rex, rl = sl.expm_frechet(a[i], e[i])
        assert_close((ex[i], L[i]), (rex.astype(np.float32), rl.astype(np.float32)),
                     rtol=1e-4, atol=1e-4)
    assert_close(asl.expm_frechet(a, e, compute_expm=False), L)
    if jsl is not None:
        jex, jl = jsl.expm_frechet(a, e)
        assert_close((ex, L), (jex, jl), rtol=1e-4, atol=1e-4)
        assert L.dtype == jl.dtype


def test_grads_against_jax(rng):
    a, b = _spd(rng, (3, 3), np.float64), _randn(rng, (3, 2), np.float64)
    jit = (lambda f: jax.jit(f)) if jax is not None else (lambda f: None)
    check_grads(lambda a, b: asl.solve(a, b), [a, b],
                jax_fn=jsl and jit(lambda a, b: jsl.solve(a, b)))
    # 'pos' reads one triangle; its derivative (as JAX's) assumes a symmetric
    # perturbation, so the input is symmetrized first.
    check_grads(lambda a, b: asl.solve((a + a.T) / 2, b, assume_a="pos"), [a, b],
                jax_fn=jsl and jit(lambda a, b: jsl.solve((a + a.T) / 2, b, assume_a="pos")))
    m = _randn(rng, (3, 3), np.float64)
    check_grads(lambda m: asl.polar(m)[0], [m], jax_fn=jsl and jit(
        lambda m: jsl.polar(m, method="svd")[0]))
    check_grads(lambda m: asl.polar(m, "left")[1], [m], jax_fn=jsl and jit(
        lambda m: jsl.polar(m, "left", method="svd")[1]))
    # JAX's qr_multiply has no derivative (geqrf); ours differentiates through qr.
    check_grads(lambda m, c: asl.qr_multiply(m, c)[0], [m, b.T])
    e = _randn(rng, (3, 3), np.float64)
    check_grads(lambda m, e: asl.expm_frechet(0.5 * m, e, compute_expm=False), [m, e])
    check_grads(lambda c, r: asl.toeplitz(c, r)[1:, 1:] @ asl.companion(c),
                [b[:, 0], b[:, 1]], jax_fn=jsl and jit(
                    lambda c, r: jsl.toeplitz(c, r)[1:, 1:] @ jsl.companion(c)))


def test_vmap_and_mode(mode, rng):
    a, b = _spd(rng, (3, 3)), _randn(rng, (3, 2))
    vm = absjit.vmap(lambda b: asl.solve(a, b, assume_a="pos"), in_axes=1, out_axes=1)(b)
    assert_close(vm, sl.solve(a, b), rtol=1e-4, atol=1e-5)
    vt = absjit.vmap(asl.toeplitz)(b.T, b.T)
    assert_close(vt, np.stack([sl.toeplitz(x, x) for x in b.T]))

    def f(a, b, c):
        return (asl.solve(a, b), asl.solve(a, b, assume_a="pos"), asl.polar(a),
                asl.expm_frechet(a / 10, a), asl.toeplitz(c, c[::-1]), asl.hankel(c),
                asl.circulant(c), asl.companion(c), asl.fiedler_companion(c),
                asl.leslie(c, c[1:]), asl.convolution_matrix(c, 2, "same"),
                asl.block_diag(a, c), asl.hilbert(3) @ a, asl.dft(3), asl.qr_multiply(a, b.T),
                asl.eigh_tridiagonal(c, c[1:], eigvals_only=True))

    def ref(a, b, c):
        return (sl.solve(a, b), sl.solve(a, b, assume_a="pos"), sl.polar(a),
                sl.expm_frechet(a / 10, a), sl.toeplitz(c, c[::-1]), sl.hankel(c),
                sl.circulant(c), sl.companion(c), sl.fiedler_companion(c),
                sl.leslie(c, c[1:]), sl.convolution_matrix(c, 2, "same"),
                sl.block_diag(a, c), sl.hilbert(3) @ a, sl.dft(3), sl.qr_multiply(a, b.T),
                sl.eigh_tridiagonal(c, c[1:], eigvals_only=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # cpu: interpret fallback
        check_against_numpy(mode(f), ref, a, b, _G, rtol=1e-4, atol=1e-4)


def test_bad_input():
    sq = np.eye(3, dtype=np.float32)
    cases = [(lambda: asl.solve(sq, np.ones(2)), ValueError, r"\(2,\)"),
             (lambda: asl.solve(sq, np.ones(3), assume_a="diagonal"), ValueError,
              "assume_a"),
             (lambda: asl.solve(np.ones((4, 3, 3)), np.ones((4, 3))), ValueError,
              "Invalid shapes"),
             (lambda: asl.solve([[1.0]], [1.0]), TypeError, "solve"),
             (lambda: asl.toeplitz([1, 2]), TypeError, "toeplitz"),
             (lambda: asl.companion(np.ones(1)), ValueError, "at least 2"),
             (lambda: asl.leslie(np.ones(3), np.ones(3)), ValueError, "one less"),
             (lambda: asl.leslie(np.ones(1), np.ones(0)), ValueError, "at least 2"),
             (lambda: asl.convolution_matrix(np.ones(3), 4, "foo"), ValueError, "mode"),
             (lambda: asl.convolution_matrix(np.ones(3), 0), ValueError, "positive"),
             (lambda: asl.block_diag(np.ones((2, 2, 2))), ValueError, "at most 2"),
             (lambda: asl.hadamard(3), ValueError, "power of 2"),
             (lambda: asl.helmert(0), ValueError, "positive"),
             (lambda: asl.dft(3, "foo"), ValueError, "scale"),
             (lambda: asl.pascal(3, "foo"), ValueError, "kind"),
             (lambda: asl.invpascal(3, "foo"), ValueError, "kind"),
             (lambda: asl.hilbert(2.5), TypeError, "integer"),
             (lambda: asl.polar(sq, "up"), ValueError, "side"),
             (lambda: asl.polar(sq, method="newton"), ValueError, "method"),
             (lambda: asl.polar(np.ones(3)), ValueError, "rank"),
             (lambda: asl.expm_frechet(sq, np.eye(2)), ValueError, "same shape"),
             (lambda: asl.expm_frechet(np.ones((2, 3)), np.ones((2, 3))), ValueError,
              "square")]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()
    # Sizes must be concrete under jit.
    for name in ("hilbert", "dft", "pascal", "hadamard"):
        with pytest.raises(ConcretizationTypeError):
            absjit.jit(getattr(asl, name))(4)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_schur_and_sqrtm(mode, rng, dtype):
    a = _randn(rng, (2, 4, 4)).astype(dtype)
    if dtype == np.complex64:
        a = a + 1j * _randn(rng, (2, 4, 4))
    neg = -np.eye(3, dtype=dtype) + np.triu(np.ones((3, 3), dtype), 1)  # eigenvalues -1

    def f(a, neg):
        return (asl.schur(a), asl.schur(a, "complex"), asl.sqrtm(a), asl.sqrtm(neg),
                asl.funm(a[0], absjit.numpy.sin), asl.funm(neg, absjit.numpy.exp, disp=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # cpu: host fallback
        (t, z), (tc, zc), s, sn, fs, (fe, err) = mode(f)(a, neg)
    big = np.promote_types(dtype, np.float64)
    assert fs.dtype == fe.dtype == np.result_type(dtype, np.complex64)
    # A repeated eigenvalue of a non-diagonalisable matrix: wrong as in SciPy and JAX,
    # and flagged so.
    assert err.dtype == np.float32 and float(err) == 1
    np.testing.assert_allclose(np.asarray(fs), sl.funm(a[0].astype(big), np.sin), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(np.asarray(fe), sl.funm(neg.astype(big), np.exp), rtol=1e-5,
                               atol=1e-5)
    ct = np.result_type(dtype, np.complex64)
    assert t.dtype == z.dtype == dtype and tc.dtype == zc.dtype == s.dtype == ct
    for i in range(2):
        for tt, zz in ((t[i], z[i]), (tc[i], zc[i])):
            tt, zz = np.asarray(tt), np.asarray(zz)
            np.testing.assert_allclose(zz @ tt @ zz.conj().T, a[i], atol=1e-5)
            np.testing.assert_allclose(zz @ zz.conj().T, np.eye(4), atol=1e-5)
        assert np.abs(np.tril(np.asarray(tc[i]), -1)).max() == 0
        assert np.abs(np.tril(np.asarray(t[i]), -2)).max() == 0
        # Real input keeps real eigenvalues exactly real (the principal branch of a
        # negative one is +i), as SciPy on real input.
        np.testing.assert_allclose(np.asarray(s[i]), sl.sqrtm(a[i].astype(np.promote_types(
            dtype, np.float64))), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(sn), sl.sqrtm(neg.astype(np.promote_types(
        dtype, np.float64))), rtol=1e-5, atol=1e-5)
    if jsl is not None and dtype == np.float32:
        assert_close(s[0], jsl.sqrtm(a[0]), rtol=1e-4, atol=1e-4)
        assert jsl.schur(a[0])[0].dtype == t.dtype
        assert_close(fs, jsl.funm(a[0], jnpj.sin), rtol=1e-4, atol=1e-4)


def test_schur_sqrtm_bad_input():
    with pytest.raises(ValueError, match="output"):
        asl.schur(np.eye(2), "foo")
    with pytest.raises(ValueError, match="n, n"):
        asl.sqrtm(np.ones((2, 3)))
    with pytest.raises(ValueError, match="square"):
        asl.funm(np.ones((2, 3)), np.exp)
    with pytest.raises(NotImplementedError, match="Blocked"):
        asl.sqrtm(np.eye(2), blocksize=2)
    with pytest.raises(Exception, match="schur"):   # no derivative, as in JAX
        absjit.grad(lambda a: asl.sqrtm(a).real.sum())(np.eye(2, dtype=np.float32))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_qr_multiply(rng, shape):
    a = _randn(rng, shape)
    m, n = shape[-2:]
    k = min(m, n)
    for mode_, c in (("right", _randn(rng, (2, m))), ("right", _randn(rng, (m,))),
                     ("left", _randn(rng, (k, 2))), ("left", _randn(rng, (k,)))):
        out, r = asl.qr_multiply(a, c, mode_)
        if c.ndim == 1:
            out = out.reshape(shape[:-2] + (-1,))
        for idx in np.ndindex(*shape[:-2]):
            ro, rr = sl.qr_multiply(a[idx], c, mode_)
            # SciPy's 'left' returns the full-width product for k < p; compare what
            # JAX returns: Q @ c with the economic Q.
            q, _ = np.linalg.qr(a[idx])
            ref = c @ q if mode_ == "right" else q @ c
            sign_ok = np.allclose(np.abs(np.asarray(r[idx])), np.abs(rr[:k]), atol=1e-4)
            assert sign_ok
            assert_close(np.abs(out[idx]), np.abs(ref).astype(np.float32), rtol=1e-4,
                         atol=1e-4)
        if jsl is not None:
            jo, jr = jsl.qr_multiply(a, c, mode_)
            assert_close((out, r), (jo.reshape(out.shape), jr), rtol=1e-4, atol=1e-4)
        if len(shape) == 2:
            cc = asl.qr_multiply(a.astype(np.complex64), c, mode_, conjugate=True)[0]
            assert cc.dtype == np.complex64


def test_eigh_tridiagonal(rng):
    d, e = _randn(rng, (5,)), _randn(rng, (4,))
    w, v = asl.eigh_tridiagonal(d, e)
    rw, rv = sl.eigh_tridiagonal(d, e)
    assert_close(w, rw.astype(np.float32), rtol=1e-5, atol=1e-5)
    assert_close(np.abs(v), np.abs(rv).astype(np.float32), rtol=1e-4, atol=1e-4)
    wi = asl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3))
    assert_close(wi, rw[1:4].astype(np.float32), rtol=1e-5, atol=1e-5)
    if jsl is not None:
        jw = jsl.eigh_tridiagonal(d, e, eigvals_only=True)
        assert_close(w, jw, rtol=1e-4, atol=1e-4)
    jitted = absjit.jit(lambda d, e: asl.eigh_tridiagonal(d, e, eigvals_only=True),
                        backend="interpret")
    assert_close(jitted(d, e), w)
    check_grads(lambda d, e: asl.eigh_tridiagonal(d, e, eigvals_only=True),
                [d.astype(np.float64), e.astype(np.float64)])
    for fn, exc in [(lambda: asl.eigh_tridiagonal(d.astype(np.int32), e.astype(np.int32)),
                     TypeError),
                    (lambda: asl.eigh_tridiagonal(d, e, select="v", select_range=(0, 1)),
                     NotImplementedError),
                    (lambda: asl.eigh_tridiagonal(d, e[:2]), ValueError),
                    (lambda: asl.eigh_tridiagonal(d, e, select="i", select_range=(2, 9)),
                     ValueError),
                    (lambda: asl.qr_multiply(np.ones((3, 2)), np.ones((3, 3)), "left"),
                     ValueError),
                    (lambda: asl.qr_multiply(np.ones((3, 2)), np.ones((2, 2))), ValueError),
                    (lambda: asl.qr_multiply(np.ones((3, 2)), np.ones(3), pivoting=True),
                     NotImplementedError),
                    (lambda: asl.qr_multiply(np.ones((3, 2)), np.ones(3), "up"),
                     ValueError)]:
        with pytest.raises(exc):
            fn()


def test_solve_sylvester(mode, rng):
    a, b, c = _randn(rng, (2, 4, 4)), _randn(rng, (3, 3)), _randn(rng, (4, 3))
    ac = (a[0] + 1j * _randn(rng, (4, 4))).astype(np.complex64)

    def f(a, b, c, ac):
        return (asl.solve_sylvester(a, b, c), asl.solve_sylvester(ac, b, c),
                asl.solve_sylvester(a[0], -a[0], a[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # cpu: host fallback
        x, xc, singular = mode(f)(a, b, c, ac)
    assert x.dtype == np.float32 and xc.dtype == np.complex64 and x.shape == (2, 4, 3)
    for i in range(2):
        assert_close(x[i], sl.solve_sylvester(a[i], b, c).astype(np.float32), rtol=1e-4,
                     atol=1e-4)
    xc = np.asarray(xc)
    np.testing.assert_allclose(ac @ xc + xc @ b, c, atol=1e-4)
    assert np.isnan(np.asarray(singular)).all()   # A + (-A): no unique solution
    if jsl is not None:
        assert_close(x[0], jsl.solve_sylvester(a[0], b, c), rtol=1e-4, atol=1e-4)
    for args, kw, exc in [((a[0], b, c.T), {}, ValueError), ((a[0], c, c), {}, ValueError),
                          ((a[0], b, c), {"method": "bartels"}, ValueError)]:
        with pytest.raises(exc):
            asl.solve_sylvester(*args, **kw)


def test_hessenberg(mode, rng):
    a = _randn(rng, (2, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # cpu: host fallback
        h, q = mode(lambda a: asl.hessenberg(a, calc_q=True))(a)
    assert h.dtype == q.dtype == np.float32
    for i in range(2):
        rh, rq = sl.hessenberg(a[i], calc_q=True)
        assert_close((h[i], q[i]), (rh, rq), rtol=1e-4, atol=1e-4)
    assert_close(asl.hessenberg(a[0]), h[0])
    if jsl is not None:
        assert_close(h, jsl.hessenberg(a), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="n, n"):
        asl.hessenberg(np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="hessenberg"):
        absjit.grad(lambda a: asl.hessenberg(a).sum())(a[0])


def test_rsf2csf(mode, rng):
    a = _randn(rng, (2, 5, 5))
    tz = [sl.schur(x) for x in a]
    t = np.stack([p[0] for p in tz]).astype(np.float32)
    z = np.stack([p[1] for p in tz]).astype(np.float32)
    tc, zc = mode(asl.rsf2csf)(t, z)
    assert tc.dtype == zc.dtype == np.complex64
    for i in range(2):
        rt, rz = sl.rsf2csf(t[i], z[i])
        assert_close((tc[i], zc[i]), (rt.astype(np.complex64), rz.astype(np.complex64)),
                     rtol=1e-4, atol=1e-4)
    assert np.abs(np.tril(np.asarray(tc), -1)).max() == 0
    if jsl is not None:
        assert_close(tc[0], jsl.rsf2csf(t[0], z[0])[0], rtol=1e-4, atol=1e-4)
    assert_close(asl.rsf2csf(t[0, :1, :1], z[0, :1, :1]),
                 (t[0, :1, :1].astype(np.complex64), z[0, :1, :1].astype(np.complex64)))
    with pytest.raises(ValueError, match="same shape"):
        asl.rsf2csf(t[0], z[0, :4, :4])
