"""Regenerate ``tests/data/random_reference.npz`` with JAX (run once; committed).

Every entry is ``jax.random`` under ``jax.jit`` on the CPU with JAX's defaults
(threefry2x32, ``jax_threefry_partitionable=True``); ``tests/random/test_random.py`` compares
absjit against these stored values, so those tests run without JAX installed.
"""
import os

import jax
import numpy as np
from jax import random as jr

CASES = {
    "prngkey": lambda: jr.PRNGKey(7),
    "prngkey_neg": lambda: jr.PRNGKey(-3),
    "split": lambda: jr.split(jr.PRNGKey(1), 5),
    "split_2d": lambda: jr.split(jr.PRNGKey(1), (2, 3)),
    "fold_in": lambda: jr.fold_in(jr.PRNGKey(1), 123),
    "bits": lambda: jr.bits(jr.PRNGKey(3), (257,)),
    "bits_u8": lambda: jr.bits(jr.PRNGKey(3), (33,), dtype=np.uint8),
    "bits_u16": lambda: jr.bits(jr.PRNGKey(3), (4, 5), dtype=np.uint16),
    "uniform": lambda: jr.uniform(jr.PRNGKey(3), (1000,)),
    "uniform_range": lambda: jr.uniform(jr.PRNGKey(4), (1000,), minval=-2.3, maxval=3.7),
    "uniform_f16": lambda: jr.uniform(jr.PRNGKey(3), (100,), dtype=np.float16),
    "normal": lambda: jr.normal(jr.PRNGKey(3), (4000,)),
    "randint": lambda: jr.randint(jr.PRNGKey(3), (1000,), 0, 7),
    "randint_full": lambda: jr.randint(jr.PRNGKey(3), (100,), -2 ** 31, 2 ** 31 - 1),
    "randint_u8": lambda: jr.randint(jr.PRNGKey(3), (100,), 0, 256, dtype=np.uint8),
    "randint_empty_range": lambda: jr.randint(jr.PRNGKey(3), (10,), 5, 5),
    "bernoulli": lambda: jr.bernoulli(jr.PRNGKey(4), 0.3, (500,)),
    "categorical": lambda: jr.categorical(
        jr.PRNGKey(4), np.log(np.array([0.1, 0.2, 0.7], np.float32)), shape=(200,)),
    "choice": lambda: jr.choice(jr.PRNGKey(5), 10, (20,)),
    "choice_noreplace": lambda: jr.choice(jr.PRNGKey(5), 10, (6,), replace=False),
    "choice_p": lambda: jr.choice(jr.PRNGKey(5), 4, (50,),
                                  p=np.array([0.1, 0.2, 0.3, 0.4], np.float32)),
    "permutation": lambda: jr.permutation(jr.PRNGKey(6), 10),
    "permutation_2d": lambda: jr.permutation(jr.PRNGKey(6), np.arange(12).reshape(4, 3)),
    "rademacher": lambda: jr.rademacher(jr.PRNGKey(8), (100,)),
    "exponential": lambda: jr.exponential(jr.PRNGKey(8), (1000,)),
    "truncated_normal": lambda: jr.truncated_normal(jr.PRNGKey(7), -1.0, 2.0, (1000,)),
}


def main():
    out = {name: np.asarray(jax.jit(fn)()) for name, fn in CASES.items()}
    with jax.enable_x64(True):  # 64-bit words need x64 in JAX (as in absjit)
        out["bits_u64"] = np.asarray(jax.random.bits(jr.PRNGKey(3), (64,), dtype=np.uint64))
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                        "random_reference.npz")
    np.savez_compressed(path, jax_version=np.array(jax.__version__), **out)


if __name__ == "__main__":
    main()
