"""Programs whose first call is dominated by compiling, written once for every library.

Each ``*_fn(np_like)`` takes the ``numpy`` module of a library (``absjit.numpy`` or
``jax.numpy``) and returns a function of NumPy-compatible arrays, so absjit and JAX
compile exactly the same program. ``*_args()`` gives its inputs.
"""
from __future__ import annotations

import numpy as np


# -- a 2-D Jacobi stencil: 17 equations per sweep ----------------------------------------
def stencil_fn(jnp, sweeps, omega=0.8, h2=1e-3):
    def jacobi(u, f):
        for _ in range(sweeps):
            avg = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                          - h2 * f[1:-1, 1:-1])
            u = u.at[1:-1, 1:-1].set((1 - omega) * u[1:-1, 1:-1] + omega * avg)
        return u
    return jacobi


def stencil_args(n=32):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, n)).astype(np.float32),
            rng.standard_normal((n, n)).astype(np.float32))


# -- one SGD step of a 3-layer MLP: value_and_grad of a softmax cross-entropy -------------
def mlp_step_fn(jnp, value_and_grad, lr=0.1):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.maximum(h @ w + b, 0.0)
        w, b = params[-1]
        logits = h @ w + b
        logits = logits - jnp.max(logits, axis=1, keepdims=True)
        logp = logits - jnp.log(jnp.sum(jnp.exp(logits), axis=1, keepdims=True))
        return -jnp.mean(jnp.sum(logp * y, axis=1))

    def step(params, x, y):
        value, grads = value_and_grad(loss)(params, x, y)
        new = [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return value, new
    return step


def mlp_step_args(rows=128, sizes=(64, 128, 64, 10)):
    rng = np.random.default_rng(5)
    params = [((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32),
               np.zeros(o, np.float32)) for i, o in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((rows, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], rows)]
    return params, x, y


# -- value_and_grad of a small advection-diffusion simulation (~1,000 equations) ---------
def fluid_fn(jnp, value_and_grad, steps=6, dt=0.05, nu=0.1):
    def lap(u):
        return (jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1)
                + jnp.roll(u, -1, 1) - 4.0 * u)

    def grad_x(u):
        return 0.5 * (jnp.roll(u, -1, 1) - jnp.roll(u, 1, 1))

    def grad_y(u):
        return 0.5 * (jnp.roll(u, -1, 0) - jnp.roll(u, 1, 0))

    def simulate(u, v, c):
        for _ in range(steps):
            c = c + dt * (nu * lap(c) - u * grad_x(c) - v * grad_y(c))
            u = u + dt * (nu * lap(u) - u * grad_x(u) - v * grad_y(u))
            v = v + dt * (nu * lap(v) - u * grad_x(v) - v * grad_y(v))
            c = jnp.clip(c, 0.0, 10.0)
        return c

    def loss(u, v, c, target):
        return jnp.mean((simulate(u, v, c) - target) ** 2)

    return value_and_grad(loss, argnums=(0, 1))


def fluid_args(n=24):
    rng = np.random.default_rng(7)
    return tuple(rng.standard_normal((n, n)).astype(np.float32) * s
                 for s in (0.5, 0.5, 1.0, 1.0))


# -- a long straight-line chain: code generation must not recurse per equation ------------
def chain_fn(jnp, length):
    def chain(x):
        for k in range(length):
            x = x * 0.999 + (k % 7) * 1e-3
        return x
    return chain
