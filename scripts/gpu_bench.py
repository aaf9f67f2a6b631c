"""Time the cuda backend's benchmark workloads on a real GPU and write the figures as JSON.

Runs every workload of ``asv_bench/benchmarks/bench_cuda.py`` (``selu`` on 1e8 float32
with the device-to-device copy as the bandwidth floor, ``norm`` on 1e6x100 and
10000x10, ``dot`` 100x1000 @ 1000x2000 + relu, a cache-hit call of a 10-element
``x + 1``) for absjit and each reference it has (``jax.jit`` on the GPU, a hand-written
numba-cuda kernel, CuPy), in one process: all implementations are set up first, then
timed in interleaved rounds; each figure is the median over rounds of one synchronised
call (microseconds). A reference that cannot run here (no CUDA jax, no CuPy) is
recorded with the reason.

Usage: ``python scripts/gpu_bench.py [--rounds 15] [--json gpu_bench.json]``.
``scripts/gpu_check.sh`` runs it after the tests.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from asv_bench.benchmarks import bench_cuda as B  # noqa: E402

# (workload, class, extra parameters, target: absjit time / jax time at most)
WORKLOADS = [
    ("selu 1e8 float32", B.Selu, (), 0.85),
    ("norm 1e6x100", B.Norm, ("1e6x100",), 1.0),
    ("norm 10000x10", B.Norm, ("10000x10",), 1.0),
    ("dot 100x1000 @ 1000x2000 + relu", B.DotRelu, (), 1.0),
    ("cache-hit x + 1 (10 elements)", B.Dispatch, (), 1.0),
]


def _impls(cls):
    return cls.params[0]


def _setup(cls, impl, extra):
    bench = cls()
    bench.setup(impl, *extra)
    return bench


def _one_call_us(bench, impl, extra, number) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        bench.time_call(impl, *extra)
    return (time.perf_counter() - t0) / number * 1e6


def run(rounds: int) -> dict:
    import absjit
    from absjit.backends.numba_cuda import runtime
    from absjit.backends.numba_cuda.compat import numba_cuda_version
    import numpy as np
    B._gpu()  # NotImplementedError without a GPU
    result = {"device": runtime.device_info(), "numba_cuda": numba_cuda_version(),
              "numpy": np.__version__, "absjit": absjit.__version__,
              "python": platform.python_version(), "load": os.getloadavg(),
              "rounds": rounds, "unit": "microseconds, median of synchronised calls",
              "workloads": {}}
    for name, cls, extra, target in WORKLOADS:
        benches, skipped = {}, {}
        for impl in _impls(cls):
            try:
                benches[impl] = _setup(cls, impl, extra)
            except NotImplementedError as e:
                skipped[impl] = f"skipped: {e}"
        times = {impl: [] for impl in benches}
        for _ in range(rounds):  # interleaved: every implementation once per round
            for impl, bench in benches.items():
                times[impl].append(_one_call_us(bench, impl, extra, cls.number))
        figures = {impl: statistics.median(ts) for impl, ts in times.items()}
        entry = {"us": figures, "skipped": skipped, "target_vs_jax": target}
        if "absjit" in figures and "jax" in figures:
            entry["absjit_over_jax"] = figures["absjit"] / figures["jax"]
            entry["meets_target"] = entry["absjit_over_jax"] <= target
        if "copy" in figures and "absjit" in figures:
            entry["absjit_over_copy"] = figures["absjit"] / figures["copy"]
        result["workloads"][name] = entry
        for bench in benches.values():
            del bench
    result["compiles_for_two_programs_sharing_a_nest"] = B.track_compiles_per_new_kernel()
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", default="gpu_bench.json")
    args = ap.parse_args(argv)
    try:
        result = run(args.rounds)
    except NotImplementedError as e:
        print(f"no GPU benchmark: {e}")
        return 2
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2, default=str)
    print(f"{result['device']['name']}  (load {result['load'][0]:.2f})")
    for name, entry in result["workloads"].items():
        parts = [f"{k} {v:.1f}" for k, v in entry["us"].items()]
        ratio = entry.get("absjit_over_jax")
        tail = f"  absjit/jax {ratio:.2f} (target <= {entry['target_vs_jax']})" \
            if ratio is not None else ""
        print(f"{name}: " + ", ".join(parts) + " us" + tail)
    print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
