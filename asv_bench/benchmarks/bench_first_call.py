"""Cold first calls of realistic programs, absjit against ``jax.jit``, as a new user
meets them: every sample is a fresh process with an empty absjit cache and JAX's
persistent cache off (``scripts/first_call.py``), absjit and JAX processes alternating,
medians of three each. The programs are ``_first_call_programs.PROGRAMS``.

``track_first_call_ratio``: absjit's first call (trace + tier 0 or compile + run, until
the result is ready) over JAX's; ``track_process_ratio``: import to first result;
``track_compiled_after_seconds``: when calls switched to the compiled tier (the
background compile's end, seconds after the first call began); ``track_tier0_over_
compiled``: one call on tier 0 over one on the compiled tier.
"""
from __future__ import annotations

import importlib.util
import os
import statistics
import sys

from ._first_call_programs import PROGRAMS

_HERE = os.path.dirname(os.path.abspath(__file__))
_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "scripts", "first_call.py")


def _first_call_module():
    spec = importlib.util.spec_from_file_location("_absjit_first_call", _SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class FirstCall:
    params = list(PROGRAMS)
    param_names = ["program"]
    timeout = 1800
    number = 1
    repeat = 1
    samples = 3

    def setup(self, program):
        if importlib.util.find_spec("jax") is None:
            raise NotImplementedError("compares with jax.jit")
        fc = _first_call_module()
        root = os.path.dirname(os.path.dirname(_HERE))
        env = dict(os.environ, ABSJIT_DISABLE_DISK_CACHE="1",
                   JAX_ENABLE_COMPILATION_CACHE="0", JAX_PLATFORMS="cpu",
                   PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
        env["ABSJIT_TIERING"] = "1"  # the default a user gets
        runs = {"absjit": [], "jax": []}
        for _ in range(self.samples):
            for lib in runs:
                runs[lib].append(fc._run_child(lib, program, env))
        self.runs = runs

    def _median(self, lib, field):
        vals = [r[field] for r in self.runs[lib] if r.get(field) is not None]
        return statistics.median(vals) if vals else float("nan")

    def track_first_call_ratio(self, program):
        return self._median("absjit", "first") / self._median("jax", "first")
    track_first_call_ratio.unit = "ratio"

    def track_process_ratio(self, program):
        return self._median("absjit", "process") / self._median("jax", "process")
    track_process_ratio.unit = "ratio"

    def track_absjit_first_call_seconds(self, program):
        return self._median("absjit", "first")
    track_absjit_first_call_seconds.unit = "seconds"

    def track_jax_first_call_seconds(self, program):
        return self._median("jax", "first")
    track_jax_first_call_seconds.unit = "seconds"

    def track_compiled_after_seconds(self, program):
        return self._median("absjit", "compiled_after")
    track_compiled_after_seconds.unit = "seconds"

    def track_tier0_over_compiled(self, program):
        return self._median("absjit", "tier0_call") / self._median("absjit", "steady_call")
    track_tier0_over_compiled.unit = "ratio"


if __name__ == "__main__":  # a quick look without asv: python -m benchmarks.bench_first_call
    fc = _first_call_module()
    fc.main(sys.argv[1:])
