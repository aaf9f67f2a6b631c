"""How long ``import absjit`` takes in a fresh process, and what it imports.

Runs ``python -X importtime -c "import absjit"`` ``--runs`` times (each a new
process), prints the median of absjit's cumulative import time and, with ``--top N``,
the N largest cumulative entries of the median run.

    python3 scripts/import_time.py --runs 5 --top 15

The first run also writes bytecode (``__pycache__``) unless ``PYTHONDONTWRITEBYTECODE``
is set; a user's installed package has it, so the runs after the first are what a user
meets. The figure is noisy on a busy machine: quote it with ``uptime``'s load.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys


def import_profile(module="absjit", env=None):
    """``[(cumulative_us, self_us, depth, name), ...]`` of one fresh import."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, env=env, check=True).stderr
    rows = []
    for line in out.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cum_us, name = line[len("import time:"):].split("|")
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append((int(cum_us), int(self_us), depth, name.strip()))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--module", default="absjit")
    args = ap.parse_args()
    env = dict(os.environ)
    import_profile(args.module, env)  # warm the bytecode and the OS file cache
    runs = []
    for _ in range(args.runs):
        rows = import_profile(args.module, env)
        total = next(cum for cum, _, depth, name in rows if name == args.module and depth == 0)
        runs.append((total, rows))
    runs.sort(key=lambda r: r[0])
    total, rows = runs[len(runs) // 2]
    print(f"import {args.module}: median {statistics.median(r[0] for r in runs) / 1e6:.3f} s "
          f"over {args.runs} fresh processes (min {runs[0][0] / 1e6:.3f} s, "
          f"max {runs[-1][0] / 1e6:.3f} s), {len(rows)} modules imported")
    for cum, self_us, depth, name in sorted(rows, reverse=True)[:args.top]:
        print(f"{cum / 1e3:9.1f} ms  {'  ' * depth}{name}")


if __name__ == "__main__":
    main()
