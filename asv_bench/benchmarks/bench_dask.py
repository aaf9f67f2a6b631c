"""absjit as a Dask array kernel: selu and norm over 2e7 float32 elements in blocks.

On a ``LocalCluster`` of two worker processes (one thread each, loopback), the same
blocked array is mapped with

* ``absjit`` — ``absjit.dask.map_blocks`` (ranked: one compile per worker for every
  block size; the edge block differs),
* ``numpy`` — ``dask.array.map_blocks`` of the NumPy expression,
* ``jax`` — ``dask.array.map_blocks`` of a ``jax.jit`` function per block (compiled on
  each worker once per block shape).

Inputs are generated and kept on the workers (``persist``), and each timing persists
the result there too, so it measures the blocks' computation and scheduling, not the
transfer of 80 MB to the client. Workloads: ``selu`` on a vector of 2e7 in blocks of
3e6 (6 blocks and an edge block of 2e6) and ``norm`` (each column scaled to zero mean and
unit variance, seed 003's function) on a 1e6x20 matrix in blocks of 3 columns (whole
columns per block, so per-block normalisation is the global one; 6 blocks and an edge
block of 2 columns).

``python -m asv_bench.benchmarks.bench_dask`` prints medians of interleaved repeats.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

from . import _workloads as w

N = 20_000_000
SELU_CHUNK = 3_000_000
NORM_SHAPE, NORM_CHUNK = (1_000_000, 20), (1_000_000, 3)
IMPLS = ["absjit", "numpy", "jax"]
WORKLOADS = ["selu", "norm"]


def _np_selu(x):
    a, lm = np.float32(w.ALPHA), np.float32(w.LMBDA)
    return lm * np.where(x > 0, x, a * np.exp(x) - a)


def _np_norm(X):
    X = X - X.mean(0)
    return X / np.sqrt(np.mean(X * X, 0))


_JAX: dict = {}


def _jax_block(name):
    """A module-level block function (pickled by reference) running ``jax.jit`` on the
    worker; the jitted function is made once per worker process."""
    def run(block):
        f = _JAX.get(name)
        if f is None:
            import jax
            import jax.numpy as jnp
            jax.config.update("jax_platforms", "cpu")
            if name == "selu":
                def f(x):
                    return w.LMBDA * jnp.where(x > 0, x, w.ALPHA * jnp.exp(x) - w.ALPHA)
            else:
                def f(X):
                    X = X - X.mean(0)
                    return X / jnp.sqrt(jnp.mean(X * X, 0))
            f = _JAX[name] = jax.jit(f)
        return np.asarray(f(block))
    return run


def jax_selu_block(block):
    return _jax_block("selu")(block)


def jax_norm_block(block):
    return _jax_block("norm")(block)


def start_cluster(n_workers=2):
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1,
                           host="127.0.0.1", dashboard_address=None, silence_logs=40)
    return cluster, Client(cluster)


def inputs(client):
    import dask.array as da
    rng = da.random.default_rng(0)
    x = rng.standard_normal(N, chunks=SELU_CHUNK, dtype=np.float32)
    X = rng.standard_normal(NORM_SHAPE, chunks=NORM_CHUNK, dtype=np.float32)
    x, X = client.persist([x, X])
    client.wait_for_workers(1)
    from distributed import wait
    wait([x, X])
    return {"selu": x, "norm": X}


def graph(impl, workload, data):
    import absjit.dask
    x = data[workload]
    if impl == "absjit":
        f = w.selu_jnp if workload == "selu" else w.norm_jnp
        return absjit.dask.map_blocks(f, x)
    if impl == "numpy":
        return x.map_blocks(_np_selu if workload == "selu" else _np_norm,
                            dtype=np.float32)
    return x.map_blocks(jax_selu_block if workload == "selu" else jax_norm_block,
                        dtype=np.float32)


def run_once(client, impl, workload, data) -> float:
    """Seconds to compute every block on the workers (results stay there)."""
    from distributed import wait
    t0 = time.perf_counter()
    y = client.persist(graph(impl, workload, data))
    wait(y)
    elapsed = time.perf_counter() - t0
    del y
    return elapsed


class DaskMapBlocks:
    """Steady state (every worker has compiled): one blocked selu or norm."""

    params = (IMPLS, WORKLOADS)
    param_names = ["impl", "workload"]
    timeout = 600
    number = 1
    repeat = 5

    def setup(self, impl, workload):
        if impl == "jax" and w.jax is None:
            raise NotImplementedError("jax is not installed")
        self.cluster, self.client = start_cluster()
        self.data = inputs(self.client)
        run_once(self.client, impl, workload, self.data)  # compile on the workers

    def teardown(self, impl, workload):
        self.client.close()
        self.cluster.close()

    def time_map_blocks(self, impl, workload):
        run_once(self.client, impl, workload, self.data)


def compare(repeats=7):
    """Medians of interleaved runs, and the first (compiling) run, per impl/workload."""
    cluster, client = start_cluster()
    try:
        data = inputs(client)
        impls = [i for i in IMPLS if i != "jax" or w.jax is not None]
        first = {(i, k): run_once(client, i, k, data) for k in WORKLOADS for i in impls}
        times = {key: [] for key in first}
        for _ in range(repeats):
            for k in WORKLOADS:
                for i in impls:
                    times[(i, k)].append(run_once(client, i, k, data))
        return first, {key: statistics.median(v) for key, v in times.items()}
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    print(f"load average before: {os.getloadavg()}")
    first, med = compare()
    for k in WORKLOADS:
        base = med[("numpy", k)]
        for i in IMPLS:
            if (i, k) in med:
                print(f"{k:5s} {i:7s} first {first[(i, k)] * 1e3:8.1f} ms   median "
                      f"{med[(i, k)] * 1e3:8.1f} ms   x numpy {med[(i, k)] / base:5.2f}")
    print(f"load average after: {os.getloadavg()}")
