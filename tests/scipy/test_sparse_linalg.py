"""absjit.scipy.sparse.linalg (cg, bicgstab, gmres) against scipy.sparse.linalg and
jax.scipy.sparse.linalg: SPD and nonsymmetric systems in float32 and float64, matrices
and functions, preconditioners, pytrees, gradients with respect to b and to the matrix
the operator closes over, jvp and vmap; compiled on the cpu backend; bad input.

Most checks run under ``jit(..., backend="interpret")`` (the NumPy interpreter: no
compile), the executable spec the cpu backend is held to; each solver also runs
compiled once."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse.linalg as ssl

import absjit
import absjit.numpy as jnp
from absjit.scipy.sparse import linalg as asl
from tests.checks import assert_close, jax

pytestmark = pytest.mark.skipif(jax is None, reason="compares against jax")
if jax is not None:
    import jax.scipy.sparse.linalg as jsl

N = 6
SOLVERS = {
    "cg": (asl.cg, "cg", {}),
    "bicgstab": (asl.bicgstab, "bicgstab", {}),
    "gmres-batched": (asl.gmres, "gmres", {"solve_method": "batched", "restart": 4}),
    "gmres-incremental": (asl.gmres, "gmres", {"solve_method": "incremental"}),
}


def _system(name, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if name == "cg":
        q = rng.normal(size=(N, N))
        a = q @ q.T + N * np.eye(N)
    else:
        a = 4 * np.eye(N) + rng.normal(size=(N, N))
    return a.astype(dtype), rng.normal(size=N).astype(dtype), rng.normal(size=N).astype(dtype)


def _jax_solver(name):
    fn_name, kw = SOLVERS[name][1:]
    return functools.partial(getattr(jsl, fn_name), **kw)


def _ours(name):
    fn, _, kw = SOLVERS[name]
    return functools.partial(fn, **kw)


def _interpret(f):
    return absjit.jit(f, backend="interpret")


@pytest.fixture
def dtype(float_dtype):
    return float_dtype


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_solution_matches_scipy_and_jax(name, dtype):
    a, b, _ = _system(name, dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-11
    close = 2e-4 if dtype == np.float32 else 1e-8
    ours, info = _interpret(lambda a, b: _ours(name)(a, b, tol=tol))(a, b)
    theirs, _ = jax.jit(lambda a, b: _jax_solver(name)(a, b, tol=tol))(a, b)
    kw = {k: v for k, v in SOLVERS[name][2].items() if k == "restart"}
    ref, ref_info = getattr(ssl, SOLVERS[name][1])(a.astype(np.float64), b.astype(np.float64),
                                                 rtol=tol, **kw)
    assert ref_info == 0
    assert ours.dtype == dtype
    assert_close(ours, np.asarray(theirs), rtol=close, atol=close)
    assert_close(ours, ref.astype(dtype), rtol=close, atol=close)
    if name.startswith("gmres"):
        assert int(info) == 0
    else:
        assert info is None


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_pytree_function_and_preconditioner_match_jax(name):
    """b and x0 a tuple of arrays, A a function on tuples, M a diagonal (Jacobi)
    preconditioner given as a matrix; and A given as a matrix with M as a function."""
    a, b, w = _system(name, np.float32)
    a2 = a[:3, :3]

    def run(np_, sol):
        def op(x):
            return (np_.asarray(a) @ x[0] + 0.1 * np_.concatenate([x[1], x[1]]),
                    np_.asarray(a2) @ x[1] + 0.1 * x[0][:3])
        if name == "cg":  # keep the block operator symmetric
            def op(x):  # noqa: F811
                return (np_.asarray(a) @ x[0] + 0.1 * np_.concatenate([x[1], x[1]]),
                        np_.asarray(a2 @ a2.T + 3 * np.eye(3, dtype=np.float32)) @ x[1]
                        + 0.1 * (x[0][:3] + x[0][3:]))
        m = np.diag(1 / np.diag(a)).astype(np.float32)
        tree, _ = sol(op, (b, w[:3]), x0=(w, b[:3]))
        plain, _ = sol(a, b, M=lambda x: np_.asarray(m) @ x)
        return tree, plain

    ours = _interpret(lambda: run(jnp, _ours(name)))()
    theirs = jax.jit(lambda: run(jax.numpy, _jax_solver(name)))()
    for o, t in zip(absjit.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert_close(o, np.asarray(t), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_gradients_match_jax(name):
    """grad with respect to b and to the matrix the operator closes over, and jvp."""
    a, b, w = _system(name, np.float32)
    tangents = (np.full_like(a, 0.1), w)

    def program(api, np_, sol, a, b):
        def loss(a, b):
            x, _ = sol(lambda x: a @ x, b)
            return np_.vdot(w, x) + 0.5 * np_.sum(x ** 2)
        grads = api.grad(loss, argnums=(0, 1))(a, b)
        return grads, api.jvp(lambda a, b: sol(lambda x: a @ x, b)[0], (a, b), tangents)

    ours = _interpret(lambda a, b: program(absjit, jnp, _ours(name), a, b))(a, b)
    theirs = jax.jit(lambda a, b: program(jax, jax.numpy, _jax_solver(name), a, b))(a, b)
    for o, t in zip(absjit.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert_close(o, np.asarray(t), rtol=5e-4, atol=5e-4)


def test_vmap_and_eager():
    a, b, w = _system("cg", np.float32)
    bs = np.stack([b, w, b - w])
    ours = absjit.vmap(lambda b: asl.cg(a, b)[0])(bs)
    theirs = jax.jit(jax.vmap(lambda b: jsl.cg(a, b)[0]))(bs)
    assert_close(ours, np.asarray(theirs), rtol=2e-4, atol=2e-4)
    a, b, _ = _system("gmres-batched", np.float32)
    ours = absjit.vmap(lambda a: asl.bicgstab(a, b)[0])(np.stack([a, a.T]))
    theirs = jax.jit(jax.vmap(lambda a: jsl.bicgstab(a, b)[0]))(np.stack([a, a.T]))
    assert_close(ours, np.asarray(theirs), rtol=2e-4, atol=2e-4)


def test_compiled_on_cpu():
    """One compiled program: cg's value and gradient, bicgstab and gmres, against the
    interpreter and JAX (the incremental gmres shares all but its Givens rotations with
    the batched one and costs another ~5 s of compile: it runs interpreted here)."""
    a, b, w = _system("gmres-batched", np.float32)
    spd, _, _ = _system("cg", np.float32)

    def program(a, spd, b):
        def loss(spd, b):
            return jnp.vdot(w, asl.cg(lambda x: spd @ x, b)[0])
        value, grads = absjit.value_and_grad(loss, argnums=(0, 1))(spd, b)
        return value, grads, asl.bicgstab(a, b)[0], asl.gmres(a, b, restart=3)[0]

    ours = absjit.jit(program)(a, spd, b)
    spec = _interpret(program)(a, spd, b)
    for o, s in zip(absjit.tree_util.tree_leaves(ours), absjit.tree_util.tree_leaves(spec)):
        assert_close(o, s, rtol=1e-4, atol=1e-4)
    def reference(a, spd, b):
        value, grads = jax.value_and_grad(
            lambda spd, b: jax.numpy.vdot(w, jsl.cg(lambda x: spd @ x, b)[0]),
            argnums=(0, 1))(spd, b)
        return value, grads, jsl.bicgstab(a, b)[0], jsl.gmres(a, b, restart=3)[0]

    theirs = jax.jit(reference)(a, spd, b)
    for o, t in zip(absjit.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert_close(o, np.asarray(t), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("call,error", [
    (lambda: asl.cg(np.ones((2, 3)), np.ones(2)), ValueError),
    (lambda: asl.cg("A", np.ones(2)), TypeError),
    (lambda: asl.gmres(np.eye(2), np.ones(2), solve_method="lu"), ValueError),
    (lambda: asl.bicgstab(np.eye(2), np.ones(2), x0=(np.ones(2),)), ValueError),
    (lambda: asl.cg(np.eye(2), np.ones(2), x0=np.ones(3)), ValueError),
    (lambda: asl.cg(lambda x: x[:1], np.ones(2)), ValueError),
])
def test_bad_input(call, error):
    with pytest.raises(error):
        call()


def test_importable_as_jax_names():
    import absjit.scipy
    assert absjit.scipy.sparse.linalg is asl
    assert sorted(asl.__all__) == ["bicgstab", "cg", "gmres"]
