"""lax.custom_linear_solve against jax.lax.custom_linear_solve: values, jvp, grad with
respect to b and to the matrix matvec closes over, vmap, has_aux and pytrees, eagerly and
under jit (cpu and xla). Reverse mode transposes the primitive, never the solver's
while_loop; compiled code runs the solve inlined. Bad input raises JAX's exception types
while tracing, before anything runs."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.core.passes import inline_calls
from tests.checks import assert_close, jax

pytestmark = pytest.mark.skipif(jax is None, reason="compares against jax")

N = 4


def _libs():
    """(absjit, jax) as (api, numpy, lax) triples."""
    return [(absjit, jnp, lax), (jax, jax.numpy, jax.lax)]


def _cg(np_, lax_):
    """A conjugate-gradient solver in a while_loop (N steps solve an N x N system)."""
    def solve(matvec, b):
        def going(s):
            return (s[3] < b.shape[0]) & (np_.vdot(s[1], s[1]) > 1e-30)

        def step(s):
            x, r, p, k = s
            ap = matvec(p)
            rr = np_.vdot(r, r)
            alpha = rr / np_.vdot(p, ap)
            r2 = r - alpha * ap
            return x + alpha * p, r2, r2 + (np_.vdot(r2, r2) / rr) * p, k + 1
        return lax_.while_loop(going, step, (np_.zeros_like(b), b, b, 0))[0]
    return solve


def _dense(api, np_):
    """A solver that materialises the operator it is given (matvec or vecmat) with vmap
    and solves densely: the transposed solve checks that vecmat is A's transpose."""
    def solve(op, b):
        m = api.vmap(op)(np_.eye(b.shape[0], dtype=b.dtype)).T
        return np_.linalg.solve(m, b)
    return solve


def _problem(dtype, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(N, N))
    spd = (q @ q.T + N * np.eye(N)).astype(dtype)
    nonsym = (4 * np.eye(N) + 0.5 * rng.normal(size=(N, N))).astype(dtype)
    return spd, nonsym, rng.normal(size=N).astype(dtype), rng.normal(size=N).astype(dtype)


def _both(fn, *args):
    """``fn(lib, *args)`` for absjit and for jax."""
    return [fn(lib, *args) for lib in _libs()]


@pytest.fixture
def dtype(float_dtype):
    return float_dtype


def test_values_and_derivatives_match_jax(dtype):
    """Eagerly: a symmetric solve (cg in a while_loop) and a nonsymmetric one with a
    transpose solve that uses vecmat; jvp and grad with respect to b and to the matrix."""
    spd, nonsym, b, w = _problem(dtype)
    tol = 2e-4 if dtype == np.float32 else 1e-10

    def sym(lib, a, b):
        api, np_, lax_ = lib
        return lax_.custom_linear_solve(lambda x: a @ x, b, _cg(np_, lax_), symmetric=True)

    def nonsymmetric(lib, a, b):
        api, np_, lax_ = lib
        dense = _dense(api, np_)
        return lax_.custom_linear_solve(lambda x: a @ x, b, dense, transpose_solve=dense)

    for f, a in [(sym, spd), (nonsymmetric, nonsym)]:
        ours, theirs = _both(lambda lib: f(lib, a, b))
        assert_close(ours, np.asarray(theirs), rtol=tol, atol=tol)
        assert_close(ours, np.linalg.solve(a.astype(np.float64), b).astype(dtype), rtol=tol,
                     atol=tol)
        da, db = np.ones_like(a) * 0.1, w
        ours, theirs = _both(lambda lib: lib[0].jvp(lambda a, b: f(lib, a, b), (a, b), (da, db)))
        assert_close(ours, tuple(np.asarray(t) for t in theirs), rtol=tol, atol=tol)
        ours, theirs = _both(lambda lib: lib[0].grad(
            lambda a, b: lib[1].vdot(w, f(lib, a, b)), argnums=(0, 1))(a, b))
        assert_close(ours, tuple(np.asarray(t) for t in theirs), rtol=tol, atol=tol)


def test_pytree_has_aux_under_jit_on_cpu():
    """One compiled program: value and gradient (b and the matrix) of a solve of a dict
    right-hand side whose solver reports its iteration count as aux."""
    spd, _, b, w = _problem(np.float32)

    def f(lib, a, bs):
        api, np_, lax_ = lib
        cg = _cg(np_, lax_)

        def matvec(x):
            return {"u": a @ x["u"] + 0.5 * x["v"], "v": 0.5 * x["u"] + 2.0 * x["v"]}

        def solve(mv, rhs):  # block Jacobi sweeps, counted
            def step(s):
                x, k = s
                u = cg(lambda y: a @ y, rhs["u"] - 0.5 * x["v"])
                return {"u": u, "v": (rhs["v"] - 0.5 * u) / 2.0}, k + 1
            x0 = {"u": np_.zeros_like(rhs["u"]), "v": np_.zeros_like(rhs["v"])}
            return lax_.while_loop(lambda s: s[1] < 30, step, (x0, 0))

        x, count = lax_.custom_linear_solve(matvec, bs, solve, symmetric=True, has_aux=True)
        return np_.vdot(w, x["u"]) + np_.sum(x["v"]), count

    bs = {"u": b, "v": w}
    ours = absjit.jit(absjit.value_and_grad(lambda a, bs: f(_libs()[0], a, bs), argnums=(0, 1),
                                            has_aux=True))(spd, bs)
    theirs = jax.value_and_grad(lambda a, bs: f(_libs()[1], a, bs), argnums=(0, 1),
                                has_aux=True)(spd, bs)
    assert int(ours[0][1]) == int(theirs[0][1]) == 30
    assert_close(ours[0][0], np.asarray(theirs[0][0]), rtol=1e-4, atol=1e-4)
    for o, t in zip(absjit.tree_util.tree_leaves(ours[1]), jax.tree_util.tree_leaves(theirs[1])):
        assert_close(o, np.asarray(t), rtol=1e-4, atol=1e-4)


def test_reverse_mode_transposes_the_primitive_not_the_loop():
    """The gradient's jaxpr holds a second custom_linear_solve (the transposed system)
    and no transposed while; inlining leaves plain while loops for the backends."""
    spd, _, b, _ = _problem(np.float32)

    def loss(a, b):
        x = lax.custom_linear_solve(lambda x: a @ x, b, _cg(jnp, lax), symmetric=True)
        return jnp.sum(x ** 2)

    closed = absjit.make_jaxpr(absjit.grad(loss, argnums=(0, 1)))(spd, b)
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    # x, and the transpose of dx's solve: the transposed system giving b's cotangent
    assert names.count("custom_linear_solve") == 2 and "while" not in names
    inlined = inline_calls(closed)
    names = [e.primitive.name for e in inlined.jaxpr.eqns]
    assert "custom_linear_solve" not in names and names.count("while") == 2


def test_vmap_over_b_and_over_the_matrix():
    spd, nonsym, b, w = _problem(np.float32)
    a_batch = np.stack([spd, spd + np.eye(N, dtype=np.float32)])
    b_batch = np.stack([b, w, b + w])

    def f(lib, a, b):
        api, np_, lax_ = lib
        return lax_.custom_linear_solve(lambda x: a @ x, b, _cg(np_, lax_), symmetric=True)

    for axes, args in [((None, 0), (spd, b_batch)), ((0, None), (a_batch, b)),
                       ((0, 0), (a_batch, b_batch[:2]))]:
        ours, theirs = _both(lambda lib: lib[0].vmap(lambda a, b: f(lib, a, b),
                                                     in_axes=axes)(*args))
        assert_close(ours, np.asarray(theirs), rtol=2e-4, atol=2e-4)
    # the gradient of a batched solve
    ours, theirs = _both(lambda lib: lib[0].vmap(lib[0].grad(
        lambda a, b: lib[1].sum(f(lib, a, b))), in_axes=(0, None))(a_batch, b))
    assert_close(ours, np.asarray(theirs), rtol=2e-4, atol=2e-4)


def test_xla_backend_runs_the_solve():
    spd, _, b, _ = _problem(np.float32)
    f = absjit.jit(lambda a, b: lax.custom_linear_solve(lambda x: a @ x, b, _cg(jnp, lax),
                                                        symmetric=True), backend="xla")
    assert_close(f(spd, b), np.linalg.solve(spd.astype(np.float64), b).astype(np.float32),
                 rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("case", ["shape", "structure", "aux", "no_transpose"])
def test_bad_input_raises_before_running(case):
    spd, _, b, _ = _problem(np.float32)

    def run(lib, a, b):
        api, np_, lax_ = lib

        def solve(mv, r):
            if case == "shape":
                return np_.concatenate([r, r])
            if case == "structure":
                return (r,)
            if case == "aux":
                return r  # has_aux=True wants a pair
            return np_.linalg.solve(a, r)
        kw = {"has_aux": True} if case == "aux" else {}
        f = lambda a, b: lax_.custom_linear_solve(lambda x: a @ x, b, solve, **kw)  # noqa
        if case == "no_transpose":
            return api.jit(api.grad(lambda a, b: np_.sum(f(a, b))))(a, b)
        return api.jit(f)(a, b)

    errors = []
    for lib in _libs():
        with pytest.raises((TypeError, ValueError)) as info:
            run(lib, spd, b)
        errors.append(info.type)
    assert errors[0] is errors[1], errors
    if case == "no_transpose":
        assert errors[0] is TypeError
