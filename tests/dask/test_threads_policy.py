"""The thread policy's Dask-worker share (absjit.backends.numba_cpu.parallel.threads)."""
import pytest

from absjit.backends.numba_cpu.parallel import threads


@pytest.mark.parametrize("nthreads, executing, want", [
    (1, 1, 1), (1, 0, 1), (4, 1, 4), (4, 2, 2), (4, 3, 1), (4, 8, 1), (16, 4, 4)])
def test_a_worker_share_of_its_nthreads(nthreads, executing, want):
    assert threads.worker_threads(nthreads, executing) == want


def test_outside_a_worker_there_is_no_cap():
    import distributed  # noqa: F401 - loaded, but this process is no worker
    assert threads._dask_worker_cap() is None
    assert threads.info()["worker_threads"] is None


def test_the_cap_limits_the_threads_a_kernel_may_use(monkeypatch):
    monkeypatch.setattr(threads, "_dask_worker_cap", lambda: 1)
    policy = threads._Policy()
    assert policy._available() == 1 and policy.worker_cap == 1
    monkeypatch.setattr(threads, "_dask_worker_cap", lambda: None)
    assert policy._available() >= 1 and policy.worker_cap is None
