"""absjit.scipy.optimize.minimize (BFGS) against scipy.optimize and JAX on standard test
functions, eagerly, under jit on every backend and under vmap, and on bad input."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as so

import absjit
import absjit.numpy as jnp
from absjit.scipy.optimize import OptimizeResults, minimize
from tests.checks import assert_close, jax

jso = None
if jax is not None:
    import jax.numpy as jax_np
    import jax.scipy.optimize as jso


def rosenbrock(x, np=jnp):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quadratic(x, np=jnp):
    """A positive-definite quadratic with minimum away from the origin."""
    weights = np.arange(x.shape[0]) + 1.0
    return np.sum(weights * (x - 0.5) ** 2) + 0.1 * np.sum(x) ** 2


def shifted(x, a, b, np=jnp):
    return np.sum((x - a) ** 2 * b) + 1.0


CASES = [(rosenbrock, [-1.2, 1.0]), (rosenbrock, [0.0, 0.0]), (quadratic, [0.0] * 5),
         (quadratic, [3.0, -2.0, 1.0])]


@pytest.mark.parametrize("fun,x0", CASES)
def test_against_scipy_and_jax_x64(fun, x0):
    absjit.config.update("enable_x64", True)
    x0 = np.array(x0)
    r = minimize(fun, x0, method="BFGS")
    ref = so.minimize(lambda x: fun(x, np), x0, method="BFGS")
    assert bool(r.success) and int(r.status) == 0
    assert_close(r.x, ref.x, rtol=1e-4, atol=1e-4)
    assert_close(r.fun, np.float64(ref.fun), rtol=1e-6, atol=1e-8)
    assert float(jnp.max(jnp.abs(r.jac))) < 1e-5
    assert r.hess_inv.shape == (x0.size, x0.size)
    assert int(r.nit) > 0 and int(r.nfev) == int(r.njev) >= int(r.nit)
    if jso is not None:
        with jax.enable_x64(True):
            ref_j = jax.jit(lambda x: jso.minimize(lambda y: fun(y, jax_np), x,
                                                   method="BFGS"))(x0)
        if bool(ref_j.success):  # JAX's line search gives up on Rosenbrock from 0
            assert_close(r.x, ref_j.x, rtol=1e-4, atol=1e-4)
            assert_close(r.fun, ref_j.fun, rtol=1e-6, atol=1e-8)
        for field in OptimizeResults._fields:
            ours, theirs = getattr(r, field), getattr(ref_j, field)
            assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), field


def test_float32_every_mode(mode):
    """One minimisation with traced ``args`` (one compile per backend: the BFGS program
    takes seconds to compile on the cpu backend)."""
    def program(a, b):
        r2 = minimize(shifted, jnp.zeros(3), args=(a, b), method="bfgs",
                      options={"maxiter": 50, "gtol": 1e-4})
        return r2.x, r2.fun, r2.success, r2.nit

    a = np.array([1.0, -2.0, 0.5], np.float32)
    b = np.array([1.0, 2.0, 3.0], np.float32)
    x2, f2, ok, nit = mode(program)(a, b)
    assert_close(x2, a, rtol=1e-4, atol=1e-4)
    assert_close(f2, np.float32(1.0), rtol=1e-6, atol=1e-6)
    assert bool(ok) and 0 < int(nit) <= 50


def test_vmap_and_jit_agree():
    starts = np.array([[-1.2, 1.0], [0.0, 0.0], [2.0, 2.0]], np.float32)
    run = lambda x0: minimize(rosenbrock, x0, method="BFGS")  # noqa: E731
    batched = absjit.vmap(run)(starts)
    for i, x0 in enumerate(starts):
        one = absjit.jit(run, backend="interpret")(x0)
        assert_close(batched.x[i], one.x, rtol=1e-5, atol=1e-5)
        assert int(batched.nit[i]) == int(one.nit)
    assert_close(batched.x, np.ones((3, 2), np.float32), rtol=1e-3, atol=1e-3)


def test_maxiter_and_status():
    r = minimize(rosenbrock, np.array([-1.2, 1.0], np.float32), method="BFGS",
                 options={"maxiter": 3})
    assert int(r.nit) == 3 and int(r.status) == 1 and not bool(r.success)
    # Starting at the minimum: converged before any iteration.
    r = minimize(quadratic, np.full(2, 0.5, np.float32) / 1.2, method="BFGS",
                 options={"gtol": 10.0})
    assert int(r.nit) == 0 and bool(r.success)


def test_bad_input():
    x0 = jnp.zeros(2)
    with pytest.raises(TypeError, match="tuple"):
        minimize(shifted, x0, args=[1.0, 2.0], method="BFGS")
    with pytest.raises(ValueError, match="not recognized"):
        minimize(rosenbrock, x0, method="CG")
    with pytest.raises(TypeError):
        minimize(rosenbrock, x0)  # method is required, as in JAX
    with pytest.raises(TypeError, match="1-dimensional"):
        minimize(rosenbrock, jnp.zeros((2, 1)), method="BFGS")
    with pytest.raises(TypeError, match="floating point"):
        minimize(rosenbrock, jnp.zeros(2, jnp.int32), method="BFGS")
    with pytest.raises(TypeError, match="scalar"):
        minimize(lambda x: x ** 2, x0, method="BFGS")
    with pytest.raises(TypeError, match="options"):
        minimize(rosenbrock, x0, method="BFGS", options={"maxfun": 3})
