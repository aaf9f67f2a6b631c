"""absjit.dask on a real distributed cluster: two worker processes on loopback."""
import time

import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster, wait

import absjit.dask as adask

from . import _kernels


@pytest.fixture(scope="module")
def client():
    # One cluster per test module (per pytest-xdist process): loopback, random ports,
    # no dashboard, so parallel test processes never collide.
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      host="127.0.0.1", dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as c:
        c.wait_for_workers(2, timeout=120)
        yield c


def _per_worker(client, label):
    """The entry-cache stats of kernel ``label`` on each worker that ran it."""
    stats = client.run(adask.stats)
    return {addr: s["functions"][label] for addr, s in stats.items()
            if label in s["functions"]}


def test_results_equal_numpy_and_each_worker_compiles_once(client):
    xn = np.random.default_rng(0).standard_normal(20_000).astype(np.float32)
    x = da.from_array(xn, chunks=3_000)  # six blocks of 3000, one of 2000
    for f, ref in ((_kernels.selu, _kernels.selu_np(xn)),               # by reference
                   (_kernels.make_scaled(1.5), xn * np.float32(1.5))):  # by value
        y = adask.map_blocks(f, x)
        np.testing.assert_allclose(client.compute(y).result(), ref, rtol=2e-6,
                                   atol=1e-6)
        per_worker = _per_worker(client, y.name[len("absjit-"):])
        assert per_worker, "no worker reported the kernel"
        assert sum(s["hits"] + s["misses"] for s in per_worker.values()) == 7
        for s in per_worker.values():  # one trace and compile per worker
            assert s["entries"] == 1 and s["misses"] == 1


def test_two_dimensional_blocks_and_reduction(client):
    xn = np.random.default_rng(1).standard_normal((500, 40)).astype(np.float32)
    x = da.from_array(xn, chunks=(120, 25))
    norms = adask.map_blocks(_kernels.row_norm, x)
    assert norms.chunks == ((120, 120, 120, 120, 20),)
    np.testing.assert_allclose(client.compute(norms).result(),
                               np.sqrt((xn * xn).sum(1)), rtol=1e-5)
    mean = adask.reduction(_kernels.selu, x, axis=0, op="mean")
    np.testing.assert_allclose(client.compute(mean).result(),
                               _kernels.selu_np(xn).mean(0), rtol=1e-5, atol=1e-6)


def test_a_worker_restart_mid_computation_loses_nothing(client):
    xn = np.random.default_rng(2).standard_normal(8_000).astype(np.float32)
    x = da.from_array(xn, chunks=1_000).map_blocks(_kernels.slow_copy, seconds=0.3)
    y = adask.map_blocks(_kernels.selu, x)
    future = client.compute(y)
    deadline = time.monotonic() + 30
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.4)  # some blocks done, others running
    assert future.status == "pending"
    victim = sorted(client.scheduler_info()["workers"])[0]
    client.restart_workers([victim])
    wait(future, timeout=120)
    np.testing.assert_allclose(future.result(), _kernels.selu_np(xn), rtol=2e-6,
                               atol=1e-6)
    client.wait_for_workers(2, timeout=120)


def test_kernels_in_a_worker_use_its_share_of_threads(client):
    # threads_per_worker=1: a parallel kernel in a task runs on one thread, not on
    # every core of the machine.
    got = client.gather([client.submit(_kernels.threads_in_task, 300_000, pure=False,
                                       workers=[w])
                         for w in client.scheduler_info()["workers"]])
    assert got == [(1, 1, 1), (1, 1, 1)]
