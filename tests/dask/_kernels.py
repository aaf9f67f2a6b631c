"""Module-level chunk functions and task helpers for the Dask tests: importable by the
workers, so they pickle by reference."""
import numba
import numpy as np

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu import threads


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


def threads_in_task(n):
    """Run a parallel (ranked, prange) kernel in a task and report the thread count the
    policy chose for it."""
    _parallel_selu(np.ones(n, np.float32)).block_until_ready()
    return numba.get_num_threads(), threads.info()["worker_threads"]
