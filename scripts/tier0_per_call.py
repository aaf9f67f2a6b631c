"""Tier 0's speed per call on an idle machine: each first-call program run by the
cpu backend's tier 0 (the NumPy interpreter with its block evaluator loaded), by the
``interpret`` backend (NumPy alone) and compiled, medians.

    python scripts/tier0_per_call.py                  # every program
    python scripts/tier0_per_call.py mlp selu -n 100  # some, 100 calls each

``scripts/first_call.py`` measures tier 0 while the compile runs beside it (a core
and, for an in-process compile, the GIL taken); this measures it alone.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("ABSJIT_TIERING", "0")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def per_call(fn, args, n) -> float:
    import absjit
    from absjit.backends import background
    from absjit.backends.numba_cpu import tiers
    absjit.block_until_ready(fn(*args))
    tiers.wait()  # no compile of an earlier program left running beside the timing
    background.wait_idle()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        absjit.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("programs", nargs="*")
    p.add_argument("-n", type=int, default=60, help="calls per program and tier")
    a = p.parse_args(argv)
    sys.path.insert(0, os.path.join(ROOT, "asv_bench"))
    import absjit
    from benchmarks._first_call_programs import PROGRAMS, namespace
    lib = namespace("absjit")
    print(f"{'program':12} {'tier 0 (ms)':>12} {'NumPy (ms)':>11} {'compiled (ms)':>14} "
          f"{'ratio':>7}")
    for name in a.programs or list(PROGRAMS):
        jitted, args = PROGRAMS[name](lib)
        fun = jitted.__wrapped__
        tier0 = per_call(tier0_of(fun, args), args, a.n)
        numpy_only = per_call(absjit.jit(fun, backend="interpret"), args, a.n)
        compiled = per_call(jitted, args, a.n)
        print(f"{name:12} {tier0 * 1e3:12.3f} {numpy_only * 1e3:11.3f} "
              f"{compiled * 1e3:14.3f} {tier0 / compiled:6.1f}x")


def tier0_of(fun, args):
    """``fun``'s tier 0 on the cpu backend, with the block evaluators it uses loaded
    (compiled first if this machine has none on disk)."""
    import absjit
    from absjit.backends.base import CompileOptions, get_backend
    from absjit.backends.numba_cpu.evaluator import block_plan, block_vm
    closed = absjit.make_jaxpr(fun)(*args)
    for dt in block_plan.fusable_dtypes(closed.jaxpr):
        block_vm.obtain(dt)
    run = get_backend("cpu").interpreted(closed, CompileOptions())
    consts = [absjit.numpy.asarray(c) for c in closed.consts]

    def call(*xs):
        import numpy as np
        leaves = absjit.tree_util.tree_leaves(xs)
        return run(*[np.asarray(c) for c in consts], *[np.asarray(x) for x in leaves])
    return call


if __name__ == "__main__":
    main()
