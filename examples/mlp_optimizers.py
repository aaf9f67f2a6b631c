"""Train a small MLP classifier with ``absjit.example_libraries`` (stax + adam).

The data set is synthetic (three Gaussian blobs in 8 dimensions, made with NumPy), so
nothing is downloaded. When JAX is installed, the same network is trained from the
same initial parameters with ``jax.example_libraries`` and the two runs are compared
step by step: the script is also a check that the import change is all a JAX program
needs.

Run with ``python examples/mlp_optimizers.py`` (``--quick`` for a few steps only).
"""
from __future__ import annotations

import argparse
import functools
import sys
import time

import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import random, tree_util
import absjit.example_libraries  # noqa: F401  (train() reaches it as absjit.example_libraries)
from absjit.example_libraries import stax

N_CLASSES, N_FEATURES = 3, 8


def make_data(n, seed=0):
    """``n`` points in three Gaussian blobs, with one-hot labels."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((N_CLASSES, N_FEATURES)) * 2.0
    labels = rng.integers(0, N_CLASSES, n)
    x = centers[labels] + rng.standard_normal((n, N_FEATURES))
    return x.astype(np.float32), np.eye(N_CLASSES, dtype=np.float32)[labels]


def network(stax_module):
    s = stax_module
    return s.serial(s.Dense(32), s.Relu, s.Dense(32), s.Relu, s.Dense(N_CLASSES),
                    s.LogSoftmax)


def train(lib, np_mod, jit, grad, params, batches, steps, step_size):
    """Train with ``lib``'s stax/optimizers; returns the losses and final parameters."""
    _, apply_fun = network(lib.stax)
    opt_init, opt_update, get_params = lib.optimizers.adam(step_size)

    def loss(p, x, y):
        return -np_mod.mean(np_mod.sum(apply_fun(p, x) * y, axis=1))

    @jit
    def update(i, opt_state, x, y):
        p = get_params(opt_state)
        return opt_update(i, grad(loss)(p, x, y), opt_state), loss(p, x, y)

    opt_state = opt_init(params)
    losses = []
    for i in range(steps):
        x, y = batches[i % len(batches)]
        opt_state, value = update(i, opt_state, x, y)
        losses.append(float(value))
    return np.array(losses), get_params(opt_state), apply_fun


def accuracy(apply_fun, params, x, y):
    return float(np.mean(np.argmax(np.asarray(apply_fun(params, x)), 1) == np.argmax(y, 1)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps only")
    parser.add_argument("--no-jax", action="store_true", help="skip the JAX comparison")
    parser.add_argument("--backend", default=None,
                        help="absjit backend for jit (default: the configured one, 'cpu')")
    args = parser.parse_args(argv)
    steps, batch = (30, 32) if args.quick else (300, 64)
    x, y = make_data(20 * batch)
    batches = [(x[i:i + batch], y[i:i + batch]) for i in range(0, len(x), batch)]

    init_fun, _ = network(stax)
    _, params = init_fun(random.PRNGKey(0), (-1, N_FEATURES))
    start = time.perf_counter()
    jit = functools.partial(absjit.jit, backend=args.backend)
    losses, final, apply_fun = train(absjit.example_libraries, jnp, jit, absjit.grad,
                                     params, batches, steps, 1e-2)
    elapsed = time.perf_counter() - start
    print(f"absjit ({args.backend or absjit.config.default_backend or 'cpu'} backend): {steps} "
          f"adam steps in {elapsed:.2f} s (compile included)")
    for i in range(0, steps, max(1, steps // 6)):
        print(f"  step {i:4d}  loss {losses[i]:.4f}")
    print(f"  final loss {losses[-1]:.4f}, training accuracy "
          f"{accuracy(apply_fun, final, x, y):.3f}")
    result = {"losses": losses, "params": final, "jax_max_diff": None}

    if not args.no_jax:
        try:
            import jax
            import jax.example_libraries
            import jax.example_libraries.optimizers  # noqa: F401
            import jax.example_libraries.stax  # noqa: F401
        except ImportError:
            print("JAX is not installed: no comparison")
            return result
        jax.config.update("jax_platforms", "cpu")
        j_params = tree_util.tree_map(lambda a: jax.numpy.asarray(np.asarray(a)), params)
        j_losses, j_final, _ = train(jax.example_libraries, jax.numpy, jax.jit, jax.grad,
                                     j_params, batches, steps, 1e-2)
        diff = max(np.max(np.abs(np.asarray(a) - np.asarray(b))) for a, b in
                   zip(tree_util.tree_leaves(final), jax.tree_util.tree_leaves(j_final)))
        loss_diff = float(np.max(np.abs(losses - j_losses)))
        print(f"JAX: final loss {j_losses[-1]:.4f}; largest difference from absjit: "
              f"parameters {diff:.2e}, losses {loss_diff:.2e}")
        result["jax_max_diff"] = max(float(diff), loss_diff)
    return result


if __name__ == "__main__":
    res = main()
    sys.exit(0 if res["losses"][-1] < res["losses"][0] else 1)
