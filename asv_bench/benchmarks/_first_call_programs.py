"""Realistic programs whose first call a new user meets, written once for both libraries.

Each ``PROGRAMS[name](lib)`` takes a namespace with the library's ``jit``, ``numpy``,
``lax``, ``random``, ``grad`` and ``value_and_grad`` (absjit's or JAX's) and returns
``(jitted function, arguments)``: the same program, the same inputs, for both.
``scripts/first_call.py`` runs one of them in a fresh process and reports its times.
"""
from __future__ import annotations

import types

import numpy as np

from . import _compile_workloads as cw


def namespace(name: str) -> types.SimpleNamespace:
    """``absjit`` or ``jax`` as the namespace the programs use."""
    if name == "absjit":
        import absjit as lib
        from absjit import lax, random
        import absjit.numpy as jnp
    else:
        import jax as lib
        from jax import lax, random
        import jax.numpy as jnp
    return types.SimpleNamespace(jit=lib.jit, numpy=jnp, lax=lax, random=random,
                                 grad=lib.grad, value_and_grad=lib.value_and_grad,
                                 name=name)


def _rng(seed=0):
    return np.random.default_rng(seed)


def mlp(lib, sizes=(784, 256, 256, 10), batch=128):
    """One SGD step of an MLP: ``value_and_grad`` of a softmax cross-entropy."""
    step = cw.mlp_step_fn(lib.numpy, lib.value_and_grad)
    return lib.jit(step), cw.mlp_step_args(rows=batch, sizes=sizes)


def transformer(lib, seq=128, d=256, heads=4):
    """``jit(value_and_grad)`` of one transformer encoder block (attention + MLP, two
    layer norms)."""
    jnp = lib.numpy

    def layer_norm(x, g, b):
        m = jnp.mean(x, axis=-1, keepdims=True)
        v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
        return (x - m) / jnp.sqrt(v + 1e-5) * g + b

    def block(p, x):
        q, k, v = (jnp.reshape(x @ p[n], (seq, heads, d // heads)) for n in ("wq", "wk", "wv"))
        s = jnp.einsum("qhd,khd->hqk", q, k) / np.sqrt(d // heads)
        s = s - jnp.max(s, axis=-1, keepdims=True)
        a = jnp.exp(s)
        a = a / jnp.sum(a, axis=-1, keepdims=True)
        o = jnp.reshape(jnp.einsum("hqk,khd->qhd", a, v), (seq, d)) @ p["wo"]
        x = layer_norm(x + o, p["g1"], p["b1"])
        h = jnp.maximum(x @ p["w1"] + p["c1"], 0.0) @ p["w2"] + p["c2"]
        return layer_norm(x + h, p["g2"], p["b2"])

    def loss(p, x):
        return jnp.mean(block(p, x) ** 2)

    r = _rng(2)

    def w(*shape):
        return (r.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    p = {"wq": w(d, d), "wk": w(d, d), "wv": w(d, d), "wo": w(d, d), "w1": w(d, 4 * d),
         "w2": w(4 * d, d), "c1": np.zeros(4 * d, np.float32), "c2": np.zeros(d, np.float32),
         "g1": np.ones(d, np.float32), "b1": np.zeros(d, np.float32),
         "g2": np.ones(d, np.float32), "b2": np.zeros(d, np.float32)}
    x = r.standard_normal((seq, d)).astype(np.float32)
    return lib.jit(lib.value_and_grad(loss)), (p, x)


def rnn(lib, steps=100, batch=16, hidden=64, inputs=32):
    """An Elman RNN over ``steps`` steps with ``lax.scan``, and its gradient."""
    jnp, lax = lib.numpy, lib.lax

    def loss(p, xs):
        def cell(h, x):
            h = jnp.tanh(h @ p["wh"] + x @ p["wx"] + p["b"])
            return h, jnp.sum(h * h)
        _, ys = lax.scan(cell, jnp.zeros((batch, hidden), jnp.float32), xs)
        return jnp.mean(ys)

    r = _rng(3)
    p = {"wh": (r.standard_normal((hidden, hidden)) * 0.1).astype(np.float32),
         "wx": (r.standard_normal((inputs, hidden)) * 0.1).astype(np.float32),
         "b": np.zeros(hidden, np.float32)}
    xs = r.standard_normal((steps, batch, inputs)).astype(np.float32)
    return lib.jit(lib.value_and_grad(loss)), (p, xs)


def sampling(lib, n=10_000):
    """``random.gamma`` and ``random.dirichlet`` draws."""
    jnp, random = lib.numpy, lib.random

    @lib.jit
    def draw(key, a):
        k1, k2 = random.split(key)
        g = random.gamma(k1, a, (n,))
        d = random.dirichlet(k2, jnp.array([0.5, 1.0, 2.0, 4.0]), (n,))
        return jnp.mean(g), jnp.mean(d, axis=0)

    return draw, (random.PRNGKey(0), np.float32(1.5))


def rk45(lib, states=8, t_end=10.0):
    """An adaptive-step Runge-Kutta-Fehlberg 4(5) ODE integrator in a ``while_loop``."""
    jnp, lax = lib.numpy, lib.lax
    r = _rng(4)
    a = (r.standard_normal((states, states)) * 0.3 - np.eye(states)).astype(np.float32)

    def f(y):
        return jnp.tanh(a @ y) - 0.1 * y

    def rkf_step(y, h):
        k1 = f(y)
        k2 = f(y + h * k1 / 4)
        k3 = f(y + h * (3 * k1 + 9 * k2) / 32)
        k4 = f(y + h * (1932 * k1 - 7200 * k2 + 7296 * k3) / 2197)
        k5 = f(y + h * (439 / 216 * k1 - 8 * k2 + 3680 / 513 * k3 - 845 / 4104 * k4))
        k6 = f(y + h * (-8 / 27 * k1 + 2 * k2 - 3544 / 2565 * k3 + 1859 / 4104 * k4
                        - 11 / 40 * k5))
        y4 = y + h * (25 / 216 * k1 + 1408 / 2565 * k3 + 2197 / 4104 * k4 - k5 / 5)
        y5 = y + h * (16 / 135 * k1 + 6656 / 12825 * k3 + 28561 / 56430 * k4
                      - 9 / 50 * k5 + 2 / 55 * k6)
        return y4, jnp.max(jnp.abs(y5 - y4))

    @lib.jit
    def solve(y0):
        def cond(c):
            return c[0] < t_end

        def body(c):
            t, y, h, n = c
            h = jnp.minimum(h, t_end - t)
            y_new, err = rkf_step(y, h)
            ok = err <= 1e-5
            factor = jnp.clip(0.9 * (1e-5 / jnp.maximum(err, 1e-12)) ** 0.2, 0.2, 5.0)
            return (jnp.where(ok, t + h, t), jnp.where(ok, y_new, y), h * factor, n + 1)
        return lax.while_loop(cond, body, (jnp.float32(0.0), y0, jnp.float32(0.1),
                                           jnp.int32(0)))

    return solve, (np.ones(states, np.float32),)


def gp(lib, n=500):
    """A Gaussian process's log marginal likelihood (``cholesky``) and its gradient in the
    kernel's two hyperparameters."""
    jnp = lib.numpy
    r = _rng(5)
    x = np.sort(r.uniform(0, 10, n)).astype(np.float32)
    y = (np.sin(x) + 0.1 * r.standard_normal(n)).astype(np.float32)

    def nll(theta, x, y):
        ls, noise = jnp.exp(theta[0]), jnp.exp(theta[1])
        k = jnp.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ls ** 2) + \
            (noise + 1e-3) * jnp.eye(n, dtype=jnp.float32)
        c = jnp.linalg.cholesky(k)
        alpha = jnp.linalg.solve(k, y)
        return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diagonal(c)))

    return lib.jit(lib.value_and_grad(nll)), (np.float32([0.0, -2.0]), x, y)


def stencil(lib, n=32, sweeps=10):
    """A 2-D Jacobi stencil, ``sweeps`` sweeps unrolled (17 equations each)."""
    return lib.jit(cw.stencil_fn(lib.numpy, sweeps)), cw.stencil_args(n)


def scalar_loop(lib, steps=20_000):
    """A ``fori_loop`` of ``steps`` scalar steps (a logistic map): short to compile,
    slow to interpret."""
    lax = lib.lax

    @lib.jit
    def logistic(x0, r):
        return lax.fori_loop(0, steps, lambda i, x: r * x * (1 - x), x0)
    return logistic, (np.float32(0.3), np.float32(3.7))


def selu(lib, n=1_000_000):
    """The README's first example (seed 000), on normally distributed values as there
    (a sorted input would make the ``where`` mask two runs, which flatters tier 0)."""
    jnp = lib.numpy

    @lib.jit
    def f(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
    return f, (np.random.default_rng(0).standard_normal(n).astype(np.float32),)


PROGRAMS = {f.__name__: f for f in (mlp, transformer, rnn, sampling, rk45, gp, stencil,
                                    scalar_loop, selu)}
