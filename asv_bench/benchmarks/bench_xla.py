"""The xla backend on the programs it exists for: ``sort`` of 10^6 float32 and a 2-D
convolution (a 3x3 kernel, 64 -> 64 channels of 128x128, ``SAME`` padding), compiled by
absjit's ``xla`` backend, run by the ``interpret`` backend (the NumPy fallback these
programs used before), and compiled by ``jax.jit`` itself, in one run so ratios compare
like with like (aims: within 1.1x of ``jax.jit``, the same compiler; the rest
is absjit's dispatch and hand-over of buffers).

absjit's argument is an ``absjit.Array`` (a NumPy buffer), jax's a ``jax.Array`` already
on its device; outputs come back as an ``absjit.Array`` viewing XLA's buffer.
"""
from __future__ import annotations

import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import lax

from ._workloads import jax

IMPLS = ["absjit-xla", "absjit-interpret", "jax"]
WORKLOADS = ["sort", "conv2d"]


def _sort(x):
    return jnp.sort(x)


def _conv(x, k):
    return lax.conv_general_dilated(x, k, (1, 1), "SAME")


def _inputs(workload):
    rng = np.random.default_rng(0)
    if workload == "sort":
        return (rng.standard_normal(1_000_000).astype(np.float32),)
    return (rng.standard_normal((1, 64, 128, 128)).astype(np.float32),
            (rng.standard_normal((64, 64, 3, 3)) / 24).astype(np.float32))


def make(impl, workload):
    """A zero-argument callable running ``workload`` with ``impl``, already compiled."""
    args = _inputs(workload)
    if impl == "jax":
        if jax is None:
            raise NotImplementedError("jax is not installed")
        if workload == "sort":
            fn = jax.jit(jax.numpy.sort)
        else:
            fn = jax.jit(lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME"))
        dev = [jax.device_put(a) for a in args]

        def run():
            return fn(*dev).block_until_ready()
    else:
        backend = impl.split("-", 1)[1]
        fn = absjit.jit(_sort if workload == "sort" else _conv, backend=backend)
        arrays = [jnp.asarray(a) for a in args]

        def run():
            return fn(*arrays).block_until_ready()
    run()
    return run


class XlaFallbackWorkloads:
    """One steady-state call."""

    params = (IMPLS, WORKLOADS)
    param_names = ["impl", "workload"]
    timeout = 300

    def setup(self, impl, workload):
        self.run = make(impl, workload)

    def time_call(self, impl, workload):
        self.run()


def record(repeats=15):
    """Medians in ms for every (impl, workload), measured in this process, interleaved
    (``python -m asv_bench.benchmarks.bench_xla``)."""
    import time
    out = {}
    for workload in WORKLOADS:
        runs = {impl: make(impl, workload) for impl in IMPLS}
        times = {impl: [] for impl in IMPLS}
        for r in range(repeats):
            for impl, run in runs.items():
                if impl == "absjit-interpret" and r >= 3:
                    continue  # seconds a call: three are enough
                t0 = time.perf_counter()
                run()
                times[impl].append(time.perf_counter() - t0)
        out[workload] = {impl: 1e3 * float(np.median(t)) for impl, t in times.items()}
    return out


if __name__ == "__main__":
    for workload, row in record().items():
        ratio = row["absjit-xla"] / row["jax"]
        print(f"{workload}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in row.items())
              + f"; xla/jax {ratio:.3f}, interpret/xla "
              f"{row['absjit-interpret'] / row['absjit-xla']:.1f}")
