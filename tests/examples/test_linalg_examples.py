"""The linear-algebra examples run end to end with ``--quick``; each asserts its own
results (the objective decreases, the minimum is reached) and, with JAX installed,
that JAX computes the same. Those runs are the slow tier (tests/slow_variants.txt); the
default run takes each example's own functions through a few steps eagerly."""
from __future__ import annotations

import contextlib
import io
import os
import runpy
from types import SimpleNamespace

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
import absjit.scipy.linalg as asl

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                        "examples")


def _run_quick(name):
    ns = runpy.run_path(os.path.join(EXAMPLES, name), run_name="example")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ns["main"](["--quick"])
    return out.getvalue()


@pytest.mark.parametrize("name,expect", [("gp_regression.py", "-log marginal likelihood"),
                                         ("newton_bfgs.py", "Newton:")])
def test_example_runs_quick(name, expect):
    text = _run_quick(name)
    assert expect in text
    from tests.checks import jax
    if jax is not None:
        assert "agrees with JAX" in text


def test_gp_model_steps_run_eagerly():
    ns = runpy.run_path(os.path.join(EXAMPLES, "gp_regression.py"), run_name="example")
    nll, predict = ns["make_model"](jnp, asl)
    x = np.linspace(0, 6, 8, dtype=np.float32)
    y = np.sin(x).astype(np.float32)
    params, history = ns["fit"](absjit.value_and_grad(nll),
                                jnp.asarray(np.array([0.5, 0.0, -1.0], np.float32)), x, y,
                                3, 0.01)
    assert history[-1] < history[0]
    mean, var = predict(params, x, y, x[:3])
    assert mean.shape == var.shape == (3,) and np.all(np.asarray(var) > -1e-4)


def test_newton_and_bfgs_steps_run_eagerly():
    ns = runpy.run_path(os.path.join(EXAMPLES, "newton_bfgs.py"), run_name="example")
    absjit.config.update("enable_x64", True)  # (reset after each test)
    lib = SimpleNamespace(np=jnp, jit=lambda f: f, grad=absjit.grad, hessian=absjit.hessian)
    x0 = np.array([-1.2, 1.0])
    x, k = ns["newton"](lib, x0)
    assert k < 20 and np.allclose(np.asarray(x), 1.0, atol=1e-6)
    x, k = ns["bfgs"](lib, x0, maxiter=5)
    f = ns["rosenbrock"](np)
    assert k == 5 and f(np.asarray(x)) < f(x0)
