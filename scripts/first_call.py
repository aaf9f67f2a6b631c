"""Cold first calls as a new user meets them: each sample is a fresh process.

    python scripts/first_call.py                      # every program, absjit and jax
    python scripts/first_call.py mlp rk45 -n 5        # some programs, 5 processes each
    python scripts/first_call.py --child absjit mlp   # one sample (what the driver runs)

A sample imports the library, builds the program and its inputs, then times the first
call (trace + compile or tier 0 + run, until the result is ready) and the second one.
absjit runs with ``ABSJIT_DISABLE_DISK_CACHE=1`` and JAX with its persistent cache off.
For absjit it also reports when the compiled tier took over (``compiled_after``, seconds
after the first call began; absent with tiering off) and the per-call time on each tier.
Processes of the two libraries alternate, so both see the same machine load; medians
are printed. The table's ``process`` column is import + first result.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _ready(out):
    import numpy as np
    for leaf in _leaves(out):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
        else:
            np.asarray(leaf)


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _leaves(y)
    elif isinstance(x, dict):
        for y in x.values():
            yield from _leaves(y)
    else:
        yield x


def _per_call(fn, args, budget=1.0, most=50):
    times, start = [], time.perf_counter()
    while len(times) < most and time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        _ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def child(lib_name: str, program: str) -> dict:
    t_start = time.perf_counter()
    sys.path.insert(0, os.path.join(ROOT, "asv_bench"))
    from benchmarks._first_call_programs import PROGRAMS, namespace
    lib = namespace(lib_name)
    t_import = time.perf_counter() - t_start
    fn, args = PROGRAMS[program](lib)
    t0 = time.perf_counter()
    _ready(fn(*args))
    first = time.perf_counter() - t0
    t1 = time.perf_counter()
    _ready(fn(*args))
    second = time.perf_counter() - t1
    out = {"lib": lib_name, "program": program, "import": t_import, "first": first,
           "second": second, "process": t_import + first}
    if lib_name == "absjit":
        from absjit.jit import tiering
        out["tier0_call"] = None
        if tiering.pending():
            out["tier0_call"] = _per_call(fn, args, budget=0.5, most=5)
        tiering.wait_all()
        out["compiled_after"] = tiering.last_switch_time(t0)
        _ready(fn(*args))
    out["steady_call"] = _per_call(fn, args)
    return out


def _run_child(lib, program, env):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", lib, program]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if res.returncode:
        raise RuntimeError(f"{lib} {program} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("programs", nargs="*")
    p.add_argument("-n", type=int, default=3, help="processes per library and program")
    p.add_argument("--child", nargs=2, metavar=("LIB", "PROGRAM"))
    p.add_argument("--libs", default="absjit,jax")
    p.add_argument("--json", help="write every sample here")
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(child(*a.child)))
        return
    # the user's default unless asked otherwise (the benchmarks package turns it off
    # for the steady-state benchmarks when imported, below)
    tiering = os.environ.get("ABSJIT_TIERING", "1")
    sys.path.insert(0, os.path.join(ROOT, "asv_bench"))
    from benchmarks._first_call_programs import PROGRAMS
    programs = a.programs or list(PROGRAMS)
    env = dict(os.environ, ABSJIT_DISABLE_DISK_CACHE="1", JAX_ENABLE_COMPILATION_CACHE="0",
               JAX_PLATFORMS="cpu", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # An installed package has its bytecode; without it every process would compile
    # absjit's sources again (~0.5 s), which a user never pays.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["ABSJIT_TIERING"] = tiering
    libs = a.libs.split(",")
    samples = []
    for prog in programs:
        for _ in range(a.n):
            for lib in libs:
                samples.append(_run_child(lib, prog, env))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(samples, fh, indent=1)

    def med(lib, prog, field):
        vals = [s[field] for s in samples if s["lib"] == lib and s["program"] == prog
                and s.get(field) is not None]
        return statistics.median(vals) if vals else float("nan")

    print(f"{'program':12} {'absjit first':>12} {'jax first':>10} {'ratio':>6} "
          f"{'process ratio':>13} {'compiled after':>14} {'tier0/call':>10} "
          f"{'steady/call':>11} {'jax/call':>9}")
    ratios = []
    for prog in programs:
        af, jf = med("absjit", prog, "first"), med("jax", prog, "first")
        ap, jp = med("absjit", prog, "process"), med("jax", prog, "process")
        ratios.append(af / jf)
        print(f"{prog:12} {af:12.3f} {jf:10.3f} {af / jf:6.2f} {ap / jp:13.2f} "
              f"{med('absjit', prog, 'compiled_after'):14.2f} "
              f"{med('absjit', prog, 'tier0_call') * 1e3:8.2f}ms "
              f"{med('absjit', prog, 'steady_call') * 1e3:9.2f}ms "
              f"{med('jax', prog, 'steady_call') * 1e3:7.2f}ms")
    ratios = [r for r in ratios if r == r]
    if ratios:
        print(f"geometric mean of first-call ratios: "
              f"{statistics.geometric_mean(ratios):.2f}")


if __name__ == "__main__":
    main()
