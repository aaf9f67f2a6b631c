"""Run the benchmark workloads outside asv and print one table of ratios.

Usage: ``env -u OPENBLAS_CORETYPE python scripts/compare.py [--quick] [--json PATH]``.
Each time is the median of several repeats of a steady-state call (compiled
beforehand), absjit and the others measured in the same process, their repeats taken
in turn. Ratios below 1 mean
absjit is faster. ``--json`` also writes the figures with a description of the machine
(CPU, cores, load average), which ``scripts/plot_bench.py`` draws.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "asv_bench", "benchmarks"))
sys.path.insert(0, os.path.join(HERE, ".."))

# Steady state: every miss compiles before it returns (no tier 0 while timing).
os.environ.setdefault("ABSJIT_TIERING", "0")

import numpy as np  # noqa: E402

import _workloads as w  # noqa: E402
import absjit  # noqa: E402
from asv_bench.benchmarks import _lowering_workloads as lw  # noqa: E402
from asv_bench.benchmarks.bench_cpu_compile import fresh_process_seconds  # noqa: E402


def median_seconds(fn, repeat):
    """The median over ``repeat`` runs of the mean time of one call (seconds)."""
    return interleaved_medians({"fn": fn}, repeat)["fn"]


def interleaved_medians(impls, repeat):
    """``{name: seconds}``: for each implementation the median over ``repeat`` runs of
    the mean time of one call, the runs of all of them taken in turn (a machine whose
    speed drifts, as a shared one does, then moves every column alike)."""
    timers = {k: timeit.Timer(lambda fn=fn: w._ready(fn())) for k, fn in impls.items()}
    numbers = {k: max(t.autorange()[0] // 4, 1) for k, t in timers.items()}
    runs = {k: [] for k in timers}
    for _ in range(repeat):
        for k, t in timers.items():
            runs[k].append(t.timeit(numbers[k]) / numbers[k])
    return {k: statistics.median(v) for k, v in runs.items()}


def machine() -> dict:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "load_average": os.getloadavg()[0],
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
            "python": platform.python_version(), "absjit": absjit.__version__}


def dispatch_times(repeat):
    x10 = np.ones(10, np.float32)
    out = {}
    f = absjit.jit(lambda x: x + 1)
    f(x10)
    out["absjit"] = median_seconds(lambda: f(x10), repeat)
    if w.jax is not None:
        jf = w.jax.jit(lambda x: x + 1)
        xj = w.jax.device_put(x10)
        jf(xj)
        out["jax"] = median_seconds(lambda: jf(xj), repeat)
    if w.numba is not None:
        nf = w.numba.njit(lambda x: x + np.float32(1))
        nf(x10)
        out["numba"] = median_seconds(lambda: nf(x10), repeat)
    return out


def loop_ratio(lib, jnp_mod, n=20):
    """Seed 000's loop: a fresh lambda around jit each iteration vs a plain function."""
    x = np.float32(1.0)

    def g(v):
        return v * 2.0 + 1.0

    def fresh():
        for _ in range(n):
            lib.jit(lambda v: v * 2.0 + 1.0)(x)

    gj = lib.jit(g)

    def plain():
        for _ in range(n):
            gj(x)
    fresh(), plain()
    return median_seconds(fresh, 3) / median_seconds(plain, 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--only", nargs="*", help="workload names")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if os.environ.get("OPENBLAS_CORETYPE"):
        print("warning: OPENBLAS_CORETYPE is set; BLAS runs slower than on a user's machine "
              "(run with env -u OPENBLAS_CORETYPE)", file=sys.stderr)
    load_before = os.getloadavg()[0]
    repeat = 5 if args.quick else 9
    rows = []
    for name, make in {**w.WORKLOADS, **lw.WORKLOADS}.items():
        if args.only and name not in args.only:
            continue
        times = interleaved_medians(make(), repeat)
        rows.append((name, times))
    rows.append(("dispatch x+1 (10)", dispatch_times(repeat)))

    print(f"{'workload':<20}{'absjit':>12}{'jax':>12}{'numba':>12}{'prange':>12}"
          f"{'numpy':>12}{'/jax':>8}{'/numba':>8}{'/prange':>8}{'/numpy':>8}")
    for name, t in rows:
        a = t["absjit"]

        def cell(k):
            return f"{t[k] * 1e3:12.4f}" if k in t else f"{'-':>12}"

        def ratio(k):
            return f"{a / t[k]:8.2f}" if k in t else f"{'-':>8}"
        print(f"{name:<20}{cell('absjit')}{cell('jax')}{cell('numba')}{cell('numba-prange')}"
              f"{cell('numpy')}{ratio('jax')}{ratio('numba')}{ratio('numba-prange')}"
              f"{ratio('numpy')}")
    print(f"(times in ms, medians; load average {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after)")
    if args.json:
        info = machine()
        info["load_average"] = max(load_before, info["load_average"])
        with open(args.json, "w") as f:
            json.dump({"machine": info, "times_s": dict(rows)}, f, indent=1)

    import absjit.numpy as jnp
    print(f"jit-in-a-loop, fresh lambda / plain, 20 iterations: absjit "
          f"{loop_ratio(absjit, jnp):.2f}x", end="")
    if w.jax is not None:
        print(f", jax {loop_ratio(w.jax, w.jax_numpy):.2f}x")
    else:
        print()
    env = dict(os.environ, ABSJIT_CACHE_DIR=tempfile.mkdtemp(prefix="absjit-compare-"))
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    cold = fresh_process_seconds("absjit", env)
    warm = statistics.median(fresh_process_seconds("absjit", env) for _ in range(3))
    line = f"fresh process to first selu result: absjit cold {cold:.2f}s, warm disk {warm:.2f}s"
    if w.jax is not None:
        jx = statistics.median(fresh_process_seconds("jax", env) for _ in range(3))
        line += f", jax {jx:.2f}s (ratio {warm / jx:.2f})"
    print(line)


if __name__ == "__main__":
    main()
