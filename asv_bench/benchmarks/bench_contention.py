"""Speed under contention: selu on 1e6 float32 and dot 100x1000 @ 1000x2000 + relu while
0, 1 or 2 other processes keep cores busy (``while True: pass``), for absjit's cpu
backend and ``jax.jit``.

On a machine whose cores are taken, a kernel that splits its work over every core waits
for the slowest thread; absjit's thread policy (``absjit/backends/numba_cpu/parallel/threads.py``)
uses the cores left free. ``python -m asv_bench.benchmarks.bench_contention`` (from the
repository root) prints the table of medians and slowdowns, absjit and JAX interleaved.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time

from . import _workloads as w

BUSY_CODE = "while True: pass"


class Busy:
    """``n`` busy-looping Python processes while the context is open."""

    def __init__(self, n: int):
        self.n = n
        self.procs = []

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", BUSY_CODE])
                      for _ in range(self.n)]
        time.sleep(0.3 if self.n else 0.0)  # let them start spinning
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []


class _Contended:
    make = None
    params = [["absjit", "jax"], [0, 1, 2]]
    param_names = ["impl", "busy"]
    timeout = 300

    def setup(self, impl, busy):
        impls = type(self).make()
        if impl not in impls:
            raise NotImplementedError(f"{impl} is not installed")  # asv skips it
        self.fn = impls[impl]
        self.busy = Busy(busy).__enter__()
        w._ready(self.fn())

    def teardown(self, impl, busy):
        self.busy.__exit__(None, None, None)

    def time_call(self, impl, busy):
        w._ready(self.fn())


class SeluContended(_Contended):
    make = staticmethod(w.make_selu)


class DotReluContended(_Contended):
    make = staticmethod(w.make_dot_relu)


def _median_ms(fn, calls):
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        w._ready(fn())
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def table(rounds=7, calls={"selu": 40, "dot_relu": 12}):
    """``{(workload, busy): {impl: median ms}}``: absjit and JAX interleaved, ``rounds``
    blocks of ``calls`` calls each, the median of the block medians."""
    out = {}
    for name in ("selu", "dot_relu"):
        impls = w.WORKLOADS[name]()
        impls = {k: v for k, v in impls.items() if k in ("absjit", "jax")}
        for busy in (0, 1, 2):
            with Busy(busy):
                got = {k: [] for k in impls}
                for _ in range(rounds):
                    for k, fn in impls.items():
                        got[k].append(_median_ms(fn, calls[name]))
            out[name, busy] = {k: statistics.median(v) for k, v in got.items()}
    return out


def main():  # pragma: no cover - a measuring script
    import os
    res = table()
    print(f"load average before: {os.getloadavg()}")
    impls = sorted({k for v in res.values() for k in v})
    print("| workload | busy | " + " | ".join(f"{k} ms | {k} slowdown" for k in impls)
          + " |")
    print("|---|---|" + "---|---|" * len(impls))
    for (name, busy), v in res.items():
        cells = []
        for k in impls:
            base = res[name, 0].get(k)
            cells.append(f"{v[k]:.3g} | {v[k] / base:.2f}x" if k in v else "- | -")
        print(f"| {name} | {busy} | " + " | ".join(cells) + " |")


if __name__ == "__main__":  # pragma: no cover
    main()
