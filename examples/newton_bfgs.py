"""Minimising the Rosenbrock function with absjit: Newton's method (``hessian`` and
``jnp.linalg.solve``) and BFGS (``grad``, a backtracking line search and the
inverse-Hessian update), in float64.

Run ``python examples/newton_bfgs.py`` (``--quick`` for the 2-D problem only). When JAX
is installed the same iterations run in JAX and must reach the same points.
"""
from __future__ import annotations

import argparse
import time
import warnings
from types import SimpleNamespace

import numpy as np

import absjit
import absjit.numpy as jnp

# lu and triangular_solve have no native cpu lowering yet: jit runs them on the NumPy
# interpret backend and says so once per primitive. Expected here, so kept quiet.
warnings.filterwarnings("ignore", message="absjit cpu backend: no lowering")


def rosenbrock(np_mod):
    def f(x):
        return np_mod.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return f


def newton(lib, x0, tol=1e-10, maxiter=50):
    """x <- x - H(x)^{-1} g(x) until the step is below ``tol``."""
    f = rosenbrock(lib.np)

    def step(x):
        return x - lib.np.linalg.solve(lib.hessian(f)(x), lib.grad(f)(x))
    step = lib.jit(step)
    x = lib.np.asarray(x0)
    for k in range(1, maxiter + 1):
        x_new = step(x)
        if float(lib.np.max(lib.np.abs(x_new - x))) < tol:
            return x_new, k
        x = x_new
    return x, maxiter


def bfgs(lib, x0, tol=1e-8, maxiter=200):
    """BFGS with an Armijo backtracking line search; returns (x, iterations)."""
    np_mod = lib.np
    f = lib.jit(rosenbrock(np_mod))
    grad = lib.jit(lib.grad(rosenbrock(np_mod)))

    def update(h, s, y):
        rho = 1.0 / np_mod.dot(y, s)
        eye = np_mod.eye(s.shape[0])
        left = eye - rho * np_mod.outer(s, y)
        return left @ h @ left.T + rho * np_mod.outer(s, s)
    update = lib.jit(update)

    x = np_mod.asarray(x0)
    g = grad(x)
    h = np_mod.eye(x.shape[0])
    for k in range(1, maxiter + 1):
        if float(np_mod.linalg.norm(g)) < tol:
            return x, k - 1
        p = -(h @ g)
        fx, slope, t = float(f(x)), float(np_mod.dot(g, p)), 1.0
        while float(f(x + t * p)) > fx + 1e-4 * t * slope and t > 1e-12:
            t *= 0.5
        s = t * p
        x_new = x + s
        g_new = grad(x_new)
        y = g_new - g
        if float(np_mod.dot(y, s)) > 1e-12:
            h = update(h, s, y)
        x, g = x_new, g_new
    return x, maxiter


def run(lib, problems):
    results = []
    for x0 in problems:
        t0 = time.perf_counter()
        xn, kn = newton(lib, x0)
        xb, kb = bfgs(lib, x0)
        results.append((np.asarray(xn), kn, np.asarray(xb), kb, time.perf_counter() - t0))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the 2-D problem only")
    args = parser.parse_args(argv)
    problems = [np.array([-1.2, 1.0])]
    if not args.quick:
        problems.append(np.array([1.3, 0.7, 0.8, 1.9, 1.2]))

    absjit.config.update("enable_x64", True)
    lib = SimpleNamespace(np=jnp, jit=absjit.jit, grad=absjit.grad, hessian=absjit.hessian)
    results = run(lib, problems)
    for x0, (xn, kn, xb, kb, secs) in zip(problems, results):
        print(f"Rosenbrock in {len(x0)} dimensions from {x0} ({secs:.2f} s)")
        print(f"  Newton: {kn:3d} iterations -> {np.round(xn, 8)}")
        print(f"  BFGS:   {kb:3d} iterations -> {np.round(xb, 8)}")
        assert np.allclose(xn, 1.0, atol=1e-6) and np.allclose(xb, 1.0, atol=1e-5), \
            "both methods should reach the minimum at (1, ..., 1)"

    try:
        import jax
        import jax.numpy as jax_np
    except ImportError:
        print("JAX is not installed: no comparison")
        return
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", True)
    try:
        j_lib = SimpleNamespace(np=jax_np, jit=jax.jit, grad=jax.grad, hessian=jax.hessian)
        j_results = run(j_lib, problems)
    finally:
        jax.config.update("jax_enable_x64", False)
    for (xn, kn, xb, kb, _), (jxn, jkn, jxb, jkb, _) in zip(results, j_results):
        assert kn == jkn and kb == jkb, f"iteration counts differ from JAX: {kn, kb} vs " \
            f"{jkn, jkb}"
        assert np.allclose(xn, jxn, atol=1e-9) and np.allclose(xb, jxb, atol=1e-7), \
            "absjit and JAX reach different points"
    print("  agrees with JAX (same iteration counts and end points)")


if __name__ == "__main__":
    main()
