"""Gaussian-process regression with absjit: an RBF kernel, its Cholesky factor, the log
marginal likelihood and its gradient with respect to the kernel's hyper-parameters,
a few gradient steps, and the posterior mean and variance at new points.

Run ``python examples/gp_regression.py`` (``--quick`` for a smaller problem). When JAX
is installed the same computation runs in JAX and the two must agree.
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

import absjit
import absjit.numpy as jnp
import absjit.scipy.linalg as asl

# The decompositions have no native cpu lowering yet: jit runs them on the NumPy
# interpret backend and says so once per primitive. Expected here, so kept quiet.
warnings.filterwarnings("ignore", message="absjit cpu backend: no lowering")


def make_model(np_mod, sla):
    """The GP written once against a NumPy-like module (absjit.numpy or jax.numpy)."""

    def kernel(params, xa, xb):
        log_ls, log_var, _ = params[0], params[1], params[2]
        d = (xa[:, None] - xb[None, :]) / np_mod.exp(log_ls)
        return np_mod.exp(log_var) * np_mod.exp(-0.5 * d * d)

    def neg_log_marginal_likelihood(params, x, y):
        n = x.shape[0]
        k = kernel(params, x, x) + (np_mod.exp(params[2]) + 1e-5) * np_mod.eye(n)
        c, lower = sla.cho_factor(k, lower=True)
        alpha = sla.cho_solve((c, lower), y)
        log_det = 2.0 * np_mod.sum(np_mod.log(np_mod.diagonal(c)))
        return 0.5 * np_mod.dot(y, alpha) + 0.5 * log_det + 0.5 * n * math.log(2 * math.pi)

    def predict(params, x, y, x_new):
        n = x.shape[0]
        k = kernel(params, x, x) + (np_mod.exp(params[2]) + 1e-5) * np_mod.eye(n)
        c = sla.cholesky(k, lower=True)
        k_star = kernel(params, x_new, x)
        alpha = sla.cho_solve((c, True), y)
        v = sla.solve_triangular(c, k_star.T, lower=True)
        mean = k_star @ alpha
        var = np_mod.exp(params[1]) - np_mod.sum(v * v, axis=0)
        return mean, var

    return neg_log_marginal_likelihood, predict


def fit(value_and_grad, params, x, y, steps, lr):
    history = []
    for _ in range(steps):
        value, g = value_and_grad(params, x, y)
        history.append(float(value))
        params = params - lr * g
    return params, history


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small, fast problem")
    args = parser.parse_args(argv)
    n, steps = (24, 15) if args.quick else (80, 60)

    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 6, n)).astype(np.float32)
    y = (np.sin(x) + 0.1 * rng.standard_normal(n)).astype(np.float32)
    x_new = np.linspace(0, 6, 7, dtype=np.float32)
    params0 = np.array([0.5, 0.0, -1.0], np.float32)   # log lengthscale, variance, noise

    nll, predict = make_model(jnp, asl)
    vg = absjit.jit(absjit.value_and_grad(nll))
    t0 = time.perf_counter()
    params, history = fit(vg, jnp.asarray(params0), x, y, steps, lr=0.01)
    mean, var = absjit.jit(predict)(params, x, y, x_new)
    elapsed = time.perf_counter() - t0
    print(f"GP regression on {n} points, {steps} gradient steps ({elapsed:.2f} s)")
    print(f"  -log marginal likelihood: {history[0]:.4f} -> {history[-1]:.4f}")
    print(f"  hyper-parameters (log ls, log var, log noise): {np.round(np.asarray(params), 4)}")
    for xi, m, v in zip(x_new, np.asarray(mean), np.asarray(var)):
        print(f"  f({xi:.1f}) = {m:+.3f} +- {2 * math.sqrt(max(v, 0.0)):.3f}"
              f"   (sin: {math.sin(xi):+.3f})")
    assert history[-1] < history[0], "the gradient steps should lower the objective"

    try:
        import jax
        import jax.numpy as jax_np
        import jax.scipy.linalg as jax_sla
    except ImportError:
        print("JAX is not installed: no comparison")
        return
    jax.config.update("jax_platforms", "cpu")
    j_nll, j_predict = make_model(jax_np, jax_sla)
    j_params, j_history = fit(jax.jit(jax.value_and_grad(j_nll)), jax_np.asarray(params0),
                              x, y, steps, lr=0.01)
    j_mean, _ = jax.jit(j_predict)(j_params, x, y, x_new)
    d_params = float(np.max(np.abs(np.asarray(params) - np.asarray(j_params))))
    d_nll = abs(history[-1] - j_history[-1])
    d_mean = float(np.max(np.abs(np.asarray(mean) - np.asarray(j_mean))))
    print(f"  vs JAX: |params| diff {d_params:.2e}, |nll| diff {d_nll:.2e}, "
          f"|mean| diff {d_mean:.2e}")
    assert d_params < 1e-3 and d_nll < 1e-2 * max(1.0, abs(j_history[-1])) and d_mean < 1e-3, \
        "absjit and JAX disagree"
    print("  agrees with JAX")


if __name__ == "__main__":
    main()
