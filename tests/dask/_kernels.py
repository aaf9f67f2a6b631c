"""Module-level chunk functions and task helpers for the Dask tests: importable by the
workers, so they pickle by reference."""
import numba
import numpy as np

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu.parallel import threads


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def selu_np(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def row_norm(x):
    return jnp.sqrt(jnp.sum(x * x, axis=1))


@absjit.jit
def doubled(x):
    """A module-level jitted function: pickles by reference."""
    return x * 2


doubled_ranked = absjit.jit(lambda x: x * 2 + 1, abstraction="ranked")


def make_scaled(scale):
    """A closure: pickles by value."""
    def scaled(x):
        return x * scale
    return scaled


def slow_copy(block, seconds=0.15):
    import time
    time.sleep(seconds)
    return block.copy()


_parallel_selu = absjit.jit(selu, abstraction="ranked")
_parallel_row_sum = absjit.jit(lambda x: jnp.sum(selu(x), axis=1), abstraction="ranked")


def threads_in_task(n):
    """Run parallel (ranked) kernels in a task, one on absjit's pool and one with a
    prange loop, and report the thread counts the policy chose for them."""
    import os

    from absjit.backends.numba_cpu.parallel import pool
    _parallel_selu(np.ones(n, np.float32)).block_until_ready()
    os.environ["ABSJIT_POOL_LOOPS"] = "0"  # a prange loop on Numba's threads
    try:
        _parallel_row_sum(np.ones((n // 100, 100), np.float32)).block_until_ready()
    finally:
        del os.environ["ABSJIT_POOL_LOOPS"]
    return (numba.get_num_threads(), pool.loop_threads() if pool.available() else 1,
            threads.info()["worker_threads"])
