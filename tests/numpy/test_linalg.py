"""absjit.numpy products and absjit.numpy.linalg.norm against NumPy (values) and JAX
(dtypes and weak types)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as hst

import absjit
import absjit.numpy as jnp
from tests.checks import check_against_numpy, jax_numpy

DTYPES = [np.int32, np.float32, np.complex64]


def _rand(rng, shape, dtype):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-4, 5, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _jfn(name, **kw):
    if jax_numpy is None:
        return None
    fn = getattr(jax_numpy, name) if "." not in name else \
        getattr(getattr(jax_numpy, name.split(".")[0]), name.split(".")[1])
    return lambda *a: fn(*a, **kw)


def _with(fn, **kw):
    return lambda *a: fn(*a, **kw)


@pytest.mark.parametrize("sa,sb", [((), (3,)), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                   ((2, 3), (3, 4)), ((2, 2, 3), (4, 3, 5)), ((0,), (0,)),
                                   ((2, 0), (0, 3))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_dot(rng, sa, sb, dtype):
    a, b = _rand(rng, sa, dtype), _rand(rng, sb, dtype)
    check_against_numpy(jnp.dot, np.dot, a, b, jax_fn=_jfn("dot"), rtol=1e-4, atol=1e-4)


def test_products_under_mode(mode, rng):
    # One traced function (one compile per backend) exercising every product.
    a, b = _rand(rng, (2, 3), np.float32), _rand(rng, (3, 4), np.float32)
    v = _rand(rng, (3,), np.float32)

    def f(a, b, v):
        return (jnp.dot(a, b), jnp.dot(a, v), jnp.vdot(v, v), jnp.inner(a, a),
                jnp.outer(v, v), jnp.tensordot(a, b, 1), jnp.kron(a, v),
                jnp.cross(a, v), jnp.einsum("ij,jk,k->i", a, b, b[0]))

    def ref(a, b, v):
        return (np.dot(a, b), np.dot(a, v), np.vdot(v, v), np.inner(a, a), np.outer(v, v),
                np.tensordot(a, b, 1), np.kron(a, v), np.cross(a, v),
                np.einsum("ij,jk,k->i", a, b, b[0]))
    check_against_numpy(mode(f), ref, a, b, v, rtol=1e-4, atol=1e-4)


def test_dot_promotes_like_jax(rng):
    a, b = _rand(rng, (2, 3), np.int32), _rand(rng, (3,), np.float32)
    out = check_against_numpy(jnp.dot, np.dot, a, b, jax_fn=_jfn("dot"), rtol=1e-5)
    assert out.dtype == np.float32
    out = jnp.dot(np.ones(3, np.int32), 2.0)
    assert out.dtype == np.float32


@hst.composite
def matmul_shapes(draw):
    m, k, n = (draw(hst.integers(0, 3)) for _ in range(3))
    batch = [draw(hst.integers(1, 3)) for _ in range(draw(hst.integers(0, 2)))]
    ba = [b if draw(hst.booleans()) else 1 for b in batch]
    bb = [b if draw(hst.booleans()) else 1 for b in batch]
    ba = ba[draw(hst.integers(0, len(ba))):]
    bb = bb[draw(hst.integers(0, len(bb))):]
    # A 1-D operand (a vector) has no batch axes of its own.
    sa = tuple(ba) + (m, k) if draw(hst.booleans()) else (k,)
    sb = tuple(bb) + (k, n) if draw(hst.booleans()) else (k,)
    return sa, sb, draw(hst.sampled_from(DTYPES))


@given(matmul_shapes(), hst.integers(0, 2**31 - 1))
def test_matmul_matches_numpy(problem, seed):
    sa, sb, dtype = problem
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, sa, dtype), _rand(rng, sb, dtype)
    check_against_numpy(jnp.matmul, np.matmul, a, b, jax_fn=_jfn("matmul"), rtol=1e-4,
                        atol=1e-4)
    check_against_numpy(lambda x, y: x @ y, np.matmul, absjit.numpy.asarray(a), b,
                        rtol=1e-4, atol=1e-4)


def test_matmul_under_mode(mode, rng):
    a, b = _rand(rng, (2, 1, 3, 4), np.float32), _rand(rng, (5, 4, 2), np.float32)
    check_against_numpy(mode(jnp.matmul), np.matmul, a, b, rtol=1e-4, atol=1e-4)
    check_against_numpy(mode(jnp.linalg.matmul), np.matmul, a[0, 0], b[0], rtol=1e-4,
                        atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vdot_inner_outer(rng, dtype):
    a, b = _rand(rng, (2, 3), dtype), _rand(rng, (6,), dtype)
    check_against_numpy(jnp.vdot, np.vdot, a, b, jax_fn=_jfn("vdot"), rtol=1e-4,
                        atol=1e-4)
    c = _rand(rng, (4, 3), dtype)
    check_against_numpy(jnp.inner, np.inner, a, c, jax_fn=_jfn("inner"), rtol=1e-4,
                        atol=1e-4)
    check_against_numpy(jnp.inner, np.inner, a, np.asarray(2, dtype), rtol=1e-4)
    check_against_numpy(jnp.outer, np.outer, a, b, jax_fn=_jfn("outer"), rtol=1e-4)


@pytest.mark.parametrize("axes,sb", [(0, (2,)), (1, (4, 5)), (2, (3, 4, 5)),
                                     (((1,), (0,)), (3, 5)), (((0, 2), (1, 0)), (4, 2, 5)),
                                     (([-1], [0]), (4, 5)), ((2, 1), (5, 4))])
def test_tensordot(rng, axes, sb):
    a, b = _rand(rng, (2, 3, 4), np.float32), _rand(rng, sb, np.float32)
    check_against_numpy(_with(jnp.tensordot, axes=axes),
                        _with(np.tensordot, axes=axes), a, b,
                        jax_fn=_jfn("tensordot", axes=axes), rtol=1e-4, atol=1e-4)


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (1, 3, 4)]),
    ("...ij,jk", [(2, 2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,b->ad", [(2, 3, 4), (4, 5), (3,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
    ("i->", [(0,)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_einsum(rng, subscripts, shapes, dtype):
    ops = [_rand(rng, s, dtype) for s in shapes]
    check_against_numpy(lambda *a: jnp.einsum(subscripts, *a),
                        lambda *a: np.einsum(subscripts, *a), *ops,
                        jax_fn=(None if jax_numpy is None else
                                lambda *a: jax_numpy.einsum(subscripts, *a)),
                        rtol=1e-4, atol=1e-4)


def test_einsum_mixed_dtypes_promote(rng):
    out = jnp.einsum("i,i->", np.arange(3, dtype=np.int32), np.ones(3, np.float32))
    assert out.dtype == np.float32 and float(out) == 3.0


def test_einsum_is_one_dot_general_per_pair():
    text = str(absjit.make_jaxpr(lambda a, b, c: jnp.einsum("ab,bc,cd->ad", a, b, c))(
        np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)))
    assert text.count("dot_general[") == 2


@pytest.mark.parametrize("subscripts,shapes,exc,match", [
    ("ij,jk->ik", [(2, 3), (4, 5)], ValueError, "inconsistent sizes"),
    ("ij,jk->ik", [(2, 3)], ValueError, "name 2 operands"),
    ("ijk->i", [(2, 3)], ValueError, "rank 2"),
    ("ij->k", [(2, 3)], ValueError, "does not appear"),
    ("ij->ii", [(2, 2)], ValueError, "repeat"),
    ("i1->i", [(2, 2)], ValueError, "invalid subscript"),
    ("i->i->i", [(2,)], ValueError, "more than one"),
])
def test_einsum_bad_subscripts(subscripts, shapes, exc, match):
    with pytest.raises(exc, match=match):
        jnp.einsum(subscripts, *[np.ones(s, np.float32) for s in shapes])


@pytest.mark.parametrize("call,match", [
    (lambda: jnp.dot(np.ones((2, 3)), np.ones((4, 2))), r"not aligned"),
    (lambda: jnp.matmul(np.ones((2, 3)), np.ones((4, 2))), r"\(2, 3\).*\(4, 2\)"),
    (lambda: jnp.matmul(np.ones(3), 2.0), "0-d"),
    (lambda: jnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 4))), "broadcast"),
    (lambda: jnp.tensordot(np.ones((2, 3)), np.ones((2, 3)), 1), "shape mismatch"),
    (lambda: jnp.tensordot(np.ones((2, 3)), np.ones((2, 3)), 3), "axes=3"),
    (lambda: jnp.vdot(np.ones(3), np.ones(4)), "same size"),
    (lambda: jnp.inner(np.ones(3), np.ones(4)), "last dimensions"),
])
def test_product_bad_shapes(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_kron_and_cross(rng):
    a, b = _rand(rng, (2, 3), np.float32), _rand(rng, (3, 2), np.float32)
    check_against_numpy(jnp.kron, np.kron, a, b, rtol=1e-5)
    check_against_numpy(jnp.kron, np.kron, a[0], b, rtol=1e-5)
    u, v = _rand(rng, (4, 3), np.float32), _rand(rng, (3,), np.float32)
    check_against_numpy(jnp.cross, np.cross, u, v, rtol=1e-5, atol=1e-6)
    check_against_numpy(_with(jnp.cross, axisa=0, axisc=0),
                        _with(np.cross, axisa=0, axisc=0), u.T.copy(), v, rtol=1e-5, atol=1e-6)
    check_against_numpy(jnp.cross, _cross_ref, u[:, :2], v, rtol=1e-5, atol=1e-6)


def _cross_ref(a, b):
    """``np.cross`` for 3-vectors only: NumPy 2.0 deprecated 2-element vectors and later
    versions removed them (JAX keeps them), so 2-vectors get a zero z component here
    and a 2 x 2 product is the z component of the 3-vector one."""
    def pad(x):
        x = np.asarray(x)
        return np.concatenate([x, np.zeros(x.shape[:-1] + (1,), x.dtype)], -1) \
            if x.shape[-1] == 2 else x
    out = np.cross(pad(a), pad(b))
    return out[..., 2] if np.shape(a)[-1] == 2 and np.shape(b)[-1] == 2 else out


def test_cross_of_2_vectors(mode, rng):
    a, b = _rand(rng, (4, 2), np.float32), _rand(rng, (2,), np.float32)
    got = mode(jnp.cross)(a, b)
    ref = a[:, 0] * b[1] - a[:, 1] * b[0]
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(mode(jnp.cross)(a, b[None, :].repeat(4, 0))), ref,
                               rtol=1e-5, atol=1e-6)
    if jax_numpy is not None:
        np.testing.assert_allclose(np.asarray(got), np.asarray(jax_numpy.cross(a, b)),
                                   rtol=1e-5, atol=1e-6)


def test_vecdot(rng):
    a, b = _rand(rng, (2, 3), np.complex64), _rand(rng, (3,), np.complex64)
    check_against_numpy(jnp.vecdot, lambda x, y: np.sum(np.conj(x) * y, -1), a, b, rtol=1e-5)


# ---------------------------------------------------------------------------
# linalg.norm
# ---------------------------------------------------------------------------
VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 0, 3, 0.5, -1]
MATRIX_ORDS = [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_vector_norm(rng, ord, dtype):
    x = _rand(rng, (3, 4), dtype)
    for axis, keepdims in [(1, False), (0, True), (-1, True)]:
        check_against_numpy((_with(jnp.linalg.norm, ord=ord, axis=axis, keepdims=keepdims)),
                            _with(np.linalg.norm, ord=ord, axis=axis, keepdims=keepdims), x,
                            jax_fn=_jfn("linalg.norm", ord=ord, axis=axis, keepdims=keepdims),
                            rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm(rng, ord):
    x = _rand(rng, (2, 3, 4), np.float32)
    for axis in [(1, 2), (2, 0)]:
        check_against_numpy(_with(jnp.linalg.norm, ord=ord, axis=axis),
                            _with(np.linalg.norm, ord=ord, axis=axis), x,
                            jax_fn=_jfn("linalg.norm", ord=ord, axis=axis), rtol=1e-4)
    check_against_numpy(_with(jnp.linalg.norm, ord=ord), _with(np.linalg.norm, ord=ord), x[0],
                        rtol=1e-4)


def test_norms_under_mode(mode, rng):
    x = _rand(rng, (3, 4), np.float32)
    ords = [(None, None), (1, 1), (np.inf, 0), (3, 1), ("fro", None), (1, None),
            (-np.inf, (1, 0))]

    def f(x):
        return tuple(jnp.linalg.norm(x, o, ax) for o, ax in ords)

    def ref(x):
        return tuple(np.linalg.norm(x, o, ax) for o, ax in ords)
    check_against_numpy(mode(f), ref, x, rtol=1e-4)


def test_norm_defaults_and_errors():
    assert float(jnp.linalg.norm(jnp.array([3., 4.]))) == 5.0
    assert jnp.linalg.norm(np.ones((2, 3, 4)), keepdims=True).shape == (1, 1, 1)
    assert float(jnp.linalg.vector_norm(np.ones((2, 2)))) == 2.0
    assert float(jnp.linalg.matrix_norm(np.ones((2, 2)), ord=1)) == 2.0
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.linalg.norm(np.ones(3), axis=1)
    with pytest.raises(ValueError, match="invalid norm order"):
        jnp.linalg.norm(np.ones(3), ord="fro")
    with pytest.raises(ValueError, match="improper number of dimensions"):
        jnp.linalg.norm(np.ones((2, 2, 2)), ord=1)
    assert abs(float(jnp.linalg.norm(np.ones((2, 2)), ord="nuc")) - 2.0) < 1e-6
    with pytest.raises(ValueError, match="invalid norm order"):
        jnp.linalg.norm(np.ones((2, 2)), ord=3)


# ---------------------------------------------------------------------------
# cond, multi_dot, tensorinv, tensorsolve, trace, diagonal, matrix_transpose
# ---------------------------------------------------------------------------
def _extras(a, sq, chain0, chain1, chain2, t, b):
    la = jnp.linalg
    return (la.cond(sq), la.cond(sq, "fro"), la.cond(sq, 1), la.cond(sq, -2),
            la.cond(sq, np.inf), la.cond(a), la.multi_dot([chain0, chain1, chain2]),
            la.tensorinv(t, 1), la.tensorsolve(t, b), la.trace(sq),
            la.diagonal(a, offset=1), la.matrix_transpose(a))


def test_linalg_extras_every_mode(mode, rng):
    a = rng.normal(size=(2, 3, 4)).astype(np.float32)
    sq = (rng.normal(size=(2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    chain = [rng.normal(size=(5,)).astype(np.float32),
             rng.normal(size=(5, 2)).astype(np.float32),
             rng.normal(size=(2, 6)).astype(np.float32)]
    t = (rng.normal(size=(4, 2, 2)) + 3 * np.eye(4).reshape(4, 2, 2)).astype(np.float32)
    b = rng.normal(size=(4,)).astype(np.float32)
    got = mode(_extras)(a, sq, *chain, t, b)
    nl = np.linalg
    want = (nl.cond(sq), nl.cond(sq, "fro"), nl.cond(sq, 1), nl.cond(sq, -2),
            nl.cond(sq, np.inf), nl.cond(a), nl.multi_dot(chain), nl.tensorinv(t, 1),
            nl.tensorsolve(t, b), np.trace(sq, axis1=-2, axis2=-1),
            np.diagonal(a, 1, -2, -1), np.swapaxes(a, -1, -2))
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == np.float32
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-5, err_msg=str(k))
    if jax_numpy is not None:
        jl = jax_numpy.linalg
        want = (jl.cond(sq), jl.multi_dot(chain), jl.tensorsolve(t, b), jl.trace(sq))
        for g, w in zip(got[:1] + got[6:7] + got[8:10], want):
            assert g.dtype == w.dtype and bool(g.weak_type) == bool(w.weak_type)


def test_linalg_extras_edge_cases():
    singular = np.array([[1., 1.], [1., 1.]], np.float32)
    # Whether an SVD finds this matrix's small singular value exactly zero depends on
    # the LAPACK build and the CPU (some give 1.3e-8): a zero row is exactly singular in
    # every build; the LU of ``singular`` meets an exact zero pivot in every build.
    assert np.isinf(float(jnp.linalg.cond(np.array([[1., 0.], [0., 0.]], np.float32))))
    assert np.isinf(float(jnp.linalg.cond(singular, 1)))
    assert np.isnan(float(jnp.linalg.cond(np.array([[np.nan, 1.], [1., 1.]]))))
    assert jnp.linalg.cond(np.array([[1, 2], [3, 4]])).dtype == np.float32
    assert jnp.linalg.trace(np.ones((3, 3), np.int8)).dtype == np.int32
    # the chain order is chosen by cost, the value is the plain product
    r = np.random.default_rng(1)
    mats = [r.normal(size=s).astype(np.float32) for s in [(10, 3), (3, 20), (20, 2), (2,)]]
    np.testing.assert_allclose(np.asarray(jnp.linalg.multi_dot(mats)),
                               np.linalg.multi_dot(mats), rtol=1e-4)
    x = r.normal(size=(6, 2, 3)).astype(np.float32)
    b = r.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorsolve(x, b, axes=(0,))),
                               np.linalg.tensorsolve(x, b, axes=(0,)), rtol=1e-3, atol=1e-4)
    g = absjit.grad(lambda m: jnp.linalg.trace(jnp.linalg.multi_dot([m, m, m])))(
        np.eye(2, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(g), 3 * np.eye(2), rtol=1e-6)
    with pytest.raises(ValueError, match="at least two"):
        jnp.linalg.multi_dot([np.ones(2)])
    with pytest.raises(ValueError):
        jnp.linalg.multi_dot([np.ones((2, 2, 2)), np.ones((2, 2))])
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.tensorinv(np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.cond(np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match="rank"):
        jnp.linalg.trace(np.ones(3))


# ---------------------------------------------------------------------------
# eig, eigvals
# ---------------------------------------------------------------------------
def test_eig_every_mode(mode, rng):
    a = rng.normal(size=(3, 4, 4)).astype(np.float32)
    w, v, w2 = mode(lambda x: (*jnp.linalg.eig(x), jnp.linalg.eigvals(x[0])))(a)
    assert w.dtype == v.dtype == w2.dtype == np.complex64
    # eigenvectors are defined up to phase: check a v = v diag(w) and unit norms
    np.testing.assert_allclose(np.asarray(a @ v), np.asarray(v * w[:, None, :]),
                               atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(v), axis=-2), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)),
                               np.sort_complex(np.linalg.eigvals(a)), atol=1e-4)
    np.testing.assert_allclose(np.asarray(w2), np.asarray(w[0]), atol=1e-5)


def test_eigvals_gradient_vmap_and_errors():
    c = np.array([[0., -2.], [1., 0.5]], np.float32)
    if jax_numpy is not None:
        import jax
        for part in (jnp.real, jnp.imag):
            jpart = getattr(jax_numpy, part.__name__)
            g = absjit.grad(lambda x: part(jnp.linalg.eigvals(x))[0])(c)
            gj = jax.grad(lambda x: jpart(jax_numpy.linalg.eigvals(x))[0])(c)
            np.testing.assert_allclose(np.asarray(g), np.asarray(gj), atol=1e-5)
        r = jnp.linalg.eig(np.array([[1, 2], [3, 4]]))
        rj = jax_numpy.linalg.eig(np.array([[1, 2], [3, 4]]))
        assert r.eigenvalues.dtype == rj.eigenvalues.dtype
        assert r.eigenvalues.weak_type == rj.eigenvalues.weak_type
    # d(trace)/dA = I: the eigenvalues sum to the trace
    g = absjit.grad(lambda x: jnp.real(jnp.sum(jnp.linalg.eigvals(x))))(c)
    np.testing.assert_allclose(np.asarray(g), np.eye(2), atol=1e-5)
    b = np.random.default_rng(2).normal(size=(3, 3, 3)).astype(np.float32)
    got = absjit.vmap(jnp.linalg.eigvals)(b)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jnp.linalg.eigvals(b)), atol=1e-5)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        absjit.grad(lambda x: jnp.real(jnp.linalg.eig(x)[0]).sum())(c)
    with pytest.raises(ValueError, match="n, n"):
        jnp.linalg.eigvals(np.ones((2, 3)))
    assert np.isnan(np.asarray(jnp.linalg.eigvals(np.array([[np.nan, 1.], [1., 1.]])))).all()
    assert jnp.linalg.eig(np.zeros((0, 0), np.float32)).eigenvectors.shape == (0, 0)
