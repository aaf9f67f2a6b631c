"""A long differential-fuzzing campaign: many random programs, every divergence logged.

Runs the generator and checker of ``tests/test_fuzz_programs.py`` (eager ==
jit(interpret) == jit(cpu), and == jax.jit where JAX is installed) for ``--programs``
programs, in chunks of ``--chunk`` programs per fresh subprocess (each program is a new
Numba compile and compiled code is never freed, so a chunk bounds the memory). Unlike the
test, a divergence does not stop the run: it is appended to ``--log`` (JSON lines, with
the program as readable Python and its seed) and the run goes on. The summary line at the
end gives the number of programs checked and of divergences.

    PYTHONPATH=$PWD python scripts/fuzz_long.py --programs 10000 --log fuzz.jsonl

``--parallel`` lowers the cpu backend's parallel threshold to 4 elements so the small
programs run through ``prange`` loops too.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_chunk(n: int, seed: int, log: str, parallel: bool) -> int:
    """Check ``n`` programs drawn with hypothesis seed ``seed``; return how many ran."""
    sys.path.insert(0, ROOT)
    import warnings

    from hypothesis import HealthCheck, given, settings, strategies as hst
    from hypothesis import seed as hseed

    from tests import test_fuzz_programs as fz

    if parallel:
        import absjit.compiler.lower as lower
        lower.PARALLEL_MIN_SIZE = 4
    warnings.simplefilter("ignore")
    count = [0]

    @hseed(seed)
    @settings(max_examples=n, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(fz.programs(), hst.integers(0, 2**16))
    def campaign(prog, data_seed):
        count[0] += 1
        try:
            fz.check_program(prog, data_seed)
        except Exception as e:  # noqa: BLE001 - every divergence is recorded, none stops us
            kind = "mismatch" if isinstance(e, AssertionError) else type(e).__name__
            with open(log, "a") as f:
                f.write(json.dumps({"chunk_seed": seed, "data_seed": data_seed,
                                    "kind": kind, "program": fz.describe(prog),
                                    "error": "".join(traceback.format_exception_only(e))
                                    [-3000:]}) + "\n")
    campaign()
    return count[0]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--programs", type=int, default=10_000)
    p.add_argument("--chunk", type=int, default=500)
    p.add_argument("--seed", type=int, default=0, help="first chunk's hypothesis seed")
    p.add_argument("--log", default="fuzz_divergences.jsonl")
    p.add_argument("--parallel", action="store_true")
    p.add_argument("--one-chunk", type=int, help=argparse.SUPPRESS)  # the worker side
    a = p.parse_args(argv)
    if a.one_chunk is not None:
        ran = run_chunk(a.chunk, a.one_chunk, a.log, a.parallel)
        print(f"RAN {ran}", flush=True)
        return 0
    env = dict(os.environ, ABSJIT_DISABLE_DISK_CACHE="1", PYTHONPATH=ROOT)
    total, t0, chunk_seed = 0, time.time(), a.seed
    while total < a.programs:
        n = min(a.chunk, a.programs - total)
        cmd = [sys.executable, __file__, "--chunk", str(n), "--one-chunk", str(chunk_seed),
               "--log", a.log] + (["--parallel"] if a.parallel else [])
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        ran = [int(line.split()[1]) for line in out.stdout.splitlines()
               if line.startswith("RAN ")]
        if out.returncode or not ran:  # a crash of the worker is a divergence too
            with open(a.log, "a") as f:
                f.write(json.dumps({"chunk_seed": chunk_seed, "kind": "worker crash",
                                    "returncode": out.returncode,
                                    "error": out.stderr[-3000:]}) + "\n")
            ran = [n]
        total += ran[0]
        chunk_seed += 1
        bad = sum(1 for _ in open(a.log)) if os.path.exists(a.log) else 0
        print(f"{time.strftime('%H:%M:%S')} programs {total} divergences {bad} "
              f"({time.time() - t0:.0f} s)", flush=True)
    bad = sum(1 for _ in open(a.log)) if os.path.exists(a.log) else 0
    print(f"checked {total} programs, {bad} divergences (log: {a.log})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
