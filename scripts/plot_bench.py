"""Draw the benchmark figures of ``scripts/compare.py --json`` as a PNG.

Usage::

    env -u OPENBLAS_CORETYPE python scripts/compare.py --json build/bench-cpu.json
    python scripts/plot_bench.py build/bench-cpu.json [more.json ...] -o docs/bench.png

One panel per JSON file (a CPU run, and a GPU run where one was measured): for each
workload, the time of absjit, ``jax.jit``, hand-written Numba and NumPy relative to
``jax.jit`` (below 1: faster than JAX), on a log scale, titled with the machine the
figures came from. Needs matplotlib (the ``bench`` extra).
"""
from __future__ import annotations

import argparse
import json
import math

IMPLS = (("absjit", "absjit"), ("jax", "jax.jit"), ("numba", "Numba loop"),
         ("numba-prange", "Numba prange"), ("numpy", "NumPy"))
COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#98df8a", "#7f7f7f")


def relative_times(times: dict) -> dict:
    """``{workload: {impl: time / jax time}}`` for the workloads JAX ran."""
    out = {}
    for name, row in times.items():
        if "jax" in row and row["jax"] > 0:
            out[name] = {k: row[k] / row["jax"] for k, _ in IMPLS if k in row}
    return out


def title(machine: dict) -> str:
    load = machine.get("load_average")
    load = f", load {load:.1f}" if load is not None else ""
    return f"{machine.get('cpu', '?')} ({machine.get('cores', '?')} cores{load})"


def plot(runs: list, out: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(runs), 1, figsize=(10, 4.6 * len(runs)), squeeze=False)
    for ax, run in zip(axes[:, 0], runs):
        rel = relative_times(run["times_s"])
        names = list(rel)
        width = 0.8 / len(IMPLS)
        for i, ((key, label), colour) in enumerate(zip(IMPLS, COLOURS)):
            xs = [j + (i - len(IMPLS) / 2 + 0.5) * width for j, n in enumerate(names)
                  if key in rel[n]]
            ys = [rel[n][key] for n in names if key in rel[n]]
            if ys:
                ax.bar(xs, ys, width, label=label, color=colour)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        lo = min(min(r.values()) for r in rel.values()) if rel else 0.1
        hi = max(max(r.values()) for r in rel.values()) if rel else 10
        ax.set_ylim(10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi)))
        ax.set_xticks(range(len(names)), names, rotation=40, ha="right", rotation_mode="anchor")
        ax.set_ylabel("time / jax.jit time")
        ax.set_title(title(run.get("machine", {})), fontsize=10)
        ax.legend(fontsize=8, ncol=len(IMPLS), loc="upper left")
    fig.suptitle("Steady-state time relative to jax.jit (median; lower is faster)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="JSON files written by compare.py --json")
    ap.add_argument("-o", "--output", default="docs/bench.png")
    args = ap.parse_args(argv)
    runs = []
    for path in args.runs:
        with open(path) as f:
            runs.append(json.load(f))
    plot(runs, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
