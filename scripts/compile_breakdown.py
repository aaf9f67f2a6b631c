"""Where a cold first call's compile goes: trace, plan, render, Numba's set-up, typing,
lowering, LLVM, in a fresh process with every cache off and tiering off.

    python scripts/compile_breakdown.py mlp rk45     # programs of _first_call_programs

Each program runs in its own process under cProfile; the table gives the cumulative
seconds of the functions that own each stage (stages nest only where noted).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# stage -> (file suffix, function name) whose cumulative time is the stage's
STAGES = {
    "total first call": ("absjit/jit/api.py", "jitted"),
    "trace": ("absjit/jit/api.py", "_trace"),
    "simplify": ("absjit/core/passes.py", "simplify"),
    "plan + loop IR": ("absjit/compiler/lower.py", "compile_to_ir"),
    "numba set-up (first compile)": ("numba/core/typing/context.py", "refresh"),
    "numba typing": ("numba/core/typed_passes.py", "run_pass"),
    "numba lowering (to LLVM IR)": ("numba/core/lowering.py", "lower"),
    "LLVM optimise + machine code": ("numba/core/codegen.py", "_finalize_specific"),
    "numba compile, all": ("numba/core/compiler.py", "compile_extra"),
}


def child(program):
    import cProfile
    import pstats
    import time
    sys.path.insert(0, os.path.join(ROOT, "asv_bench"))
    from benchmarks._first_call_programs import PROGRAMS, namespace
    lib = namespace("absjit")
    fn, args = PROGRAMS[program](lib)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.runcall(fn, *args)
    wall = time.perf_counter() - t0
    stats = pstats.Stats(prof).stats
    out = {"wall": wall}
    for stage, (suffix, name) in STAGES.items():
        out[stage] = max((v[3] for (f, _, n), v in stats.items()
                          if f.endswith(suffix) and n == name), default=0.0)
    from absjit.backends.base import get_backend
    out["numba functions compiled"] = get_backend("cpu").stats["compiles"]
    return out


def main(argv):
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1])))
        return
    env = dict(os.environ, ABSJIT_DISABLE_DISK_CACHE="1", ABSJIT_TIERING="0",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rows = {}
    for prog in argv:
        res = subprocess.run([sys.executable, __file__, "--child", prog], env=env,
                             capture_output=True, text=True, timeout=1200)
        if res.returncode:
            raise RuntimeError(res.stderr[-2000:])
        rows[prog] = json.loads(res.stdout.strip().splitlines()[-1])
    stages = ["wall"] + list(STAGES) + ["numba functions compiled"]
    print("stage".ljust(32) + "".join(p.rjust(12) for p in rows))
    for st in stages:
        print(st.ljust(32) + "".join(f"{rows[p][st]:12.2f}" for p in rows))


if __name__ == "__main__":
    main(sys.argv[1:])
