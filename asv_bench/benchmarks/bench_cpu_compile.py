"""Compile costs of the cpu backend: cold compile, a second cached function, a fresh
process with a warm disk cache (against the same script under JAX), compile counts."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import absjit

from . import _compile_workloads as cw, _workloads as w

_FRESH = r"""
import time
t0 = time.perf_counter()
import numpy as np
import {lib} as lib
import {lib}.numpy as jnp
f = lib.jit(lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67))
f(np.ones(1000, np.float32)).block_until_ready()
print(time.perf_counter() - t0)
"""


def _stats():
    import importlib
    return importlib.import_module("absjit.backends.numba_cpu").stats


def fresh_process_seconds(lib, env):
    """Seconds from a new interpreter's start to ``lib``'s first selu result.

    ``PYTHONDONTWRITEBYTECODE`` is removed from the child's environment: an installed
    package has its bytecode compiled at install time, and without it every import of
    an editable checkout compiles absjit's sources again (0.2 s), which a user never pays.
    """
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run([sys.executable, "-c", _FRESH.format(lib=lib)], env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode:
        raise RuntimeError(proc.stderr)
    return float(proc.stdout.strip().splitlines()[-1])


class ColdCompile:
    """Trace + generate + Numba compile of selu with every cache off."""

    timeout = 300
    number = 1
    repeat = 3

    def setup(self):
        self.x = np.ones(1_000_000, np.float32)
        os.environ["ABSJIT_DISABLE_DISK_CACHE"] = "1"
        self.n = 0

    def teardown(self):
        os.environ.pop("ABSJIT_DISABLE_DISK_CACHE", None)

    def time_cold_compile_selu(self):
        import absjit.cache as c
        c.clear()
        self.n += 1
        # A new literal each run: a new kernel, not a hit in any cache.
        alpha = 1.67 + self.n * 1e-3
        absjit.jit(lambda x: w.selu_jnp(x, alpha=alpha))(self.x)

    def track_compile_seconds_selu(self):
        import absjit.cache as c
        c.clear()
        before = _stats()["compile_seconds"]
        absjit.jit(lambda x: w.selu_jnp(x, alpha=1.7))(self.x)
        return _stats()["compile_seconds"] - before
    track_compile_seconds_selu.unit = "seconds"


class CachedSecondFunction:
    """A second, different function whose kernel is on disk: load time vs compile."""

    timeout = 300

    def setup(self):
        self.dir = tempfile.mkdtemp(prefix="absjit-bench-")
        os.environ["ABSJIT_CACHE_DIR"] = self.dir
        os.environ.pop("ABSJIT_DISABLE_DISK_CACHE", None)
        self.x = np.ones(1000, np.float32)
        import absjit.cache as c
        c.clear()
        absjit.jit(lambda x: w.selu_jnp(x, alpha=1.5))(self.x)  # now on disk

    def teardown(self):
        os.environ.pop("ABSJIT_CACHE_DIR", None)

    def track_load_over_compile_ratio(self):
        import absjit.cache as c
        from absjit.backends.numba_cpu import BACKEND
        BACKEND.clear_memory()
        from absjit.jit import compile_cache
        compile_cache.clear()
        t0 = time.perf_counter()
        absjit.jit(lambda x: w.selu_jnp(x, alpha=1.5))(self.x)
        load = time.perf_counter() - t0
        c.clear()
        t0 = time.perf_counter()
        absjit.jit(lambda x: w.selu_jnp(x, alpha=1.25))(self.x)
        cold = time.perf_counter() - t0
        return load / cold
    track_load_over_compile_ratio.unit = "ratio"


class FreshProcess:
    """Import to first result in a new process: absjit with a warm disk cache, and JAX."""

    timeout = 600
    repeat = 1
    number = 1

    def setup(self):
        self.dir = tempfile.mkdtemp(prefix="absjit-fresh-")
        self.env = dict(os.environ, ABSJIT_CACHE_DIR=self.dir)
        self.env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
        fresh_process_seconds("absjit", self.env)  # warms the disk cache

    def track_absjit_warm_cache_seconds(self):
        return min(fresh_process_seconds("absjit", self.env) for _ in range(3))
    track_absjit_warm_cache_seconds.unit = "seconds"

    def track_jax_seconds(self):
        return min(fresh_process_seconds("jax", self.env) for _ in range(3))
    track_jax_seconds.unit = "seconds"


class CompileCounts:
    """Numba compiles caused by the benchmark workloads and by 20 fresh lambdas."""

    def setup(self):
        os.environ["ABSJIT_DISABLE_DISK_CACHE"] = "1"

    def teardown(self):
        os.environ.pop("ABSJIT_DISABLE_DISK_CACHE", None)

    def track_compiles_fresh_lambda_loop(self):
        x = np.ones(10, np.float32)
        before = _stats()["compiles"] + _stats()["disk_hits"]
        for _ in range(20):
            absjit.jit(lambda v: v * 2.5 + 0.5)(x)
        return _stats()["compiles"] + _stats()["disk_hits"] - before
    track_compiles_fresh_lambda_loop.unit = "compiles"

    def track_compiles_workloads(self):
        before = _stats()["compiles"] + _stats()["disk_hits"]
        for make in w.WORKLOADS.values():
            make()
        return _stats()["compiles"] + _stats()["disk_hits"] - before
    track_compiles_workloads.unit = "compiles"


# -- compile time of real programs against jax.jit (cold caches, one run) --------------
def _cold_absjit_seconds(fn, args):
    """First call of a fresh ``absjit.jit(fn)`` with every compile cache empty."""
    from absjit.backends.numba_cpu import BACKEND
    from absjit.jit import compile_cache
    BACKEND.clear_memory()
    compile_cache.clear()
    fresh = absjit.jit(lambda *a: fn(*a))  # a new function: its entry cache is empty
    t0 = time.perf_counter()
    absjit.block_until_ready(fresh(*args))
    return time.perf_counter() - t0


def _cold_jax_seconds(fn, args):
    import jax
    jax.clear_caches()
    fresh = jax.jit(lambda *a: fn(*a))
    t0 = time.perf_counter()
    jax.block_until_ready(fresh(*args))
    return time.perf_counter() - t0


class _CompileVsJax:
    """``track_`` the cold first-call seconds of absjit and JAX and their ratio."""

    timeout = 600
    number = 1
    repeat = 1

    def setup(self, *params):
        os.environ["ABSJIT_DISABLE_DISK_CACHE"] = "1"
        try:
            import jax
            import jax.numpy as jax_numpy
            jax.config.update("jax_platforms", "cpu")
        except ImportError:  # pragma: no cover - a benchmark extra
            raise NotImplementedError("jax is not installed")
        self.jax, self.jnp = jax, jax_numpy
        # Warm both libraries (their first compile pays one-off initialisation).
        absjit.jit(lambda v: v + 1)(np.ones(3, np.float32))
        jax.jit(lambda v: v + 1)(np.ones(3, np.float32))
        self.fns = self.make(*params)
        self.times = {}

    def teardown(self, *params):
        os.environ.pop("ABSJIT_DISABLE_DISK_CACHE", None)

    def _measure(self):
        if not self.times:
            a_fn, j_fn, args = self.fns
            self.times["absjit"] = min(_cold_absjit_seconds(a_fn, args) for _ in range(2))
            self.times["jax"] = min(_cold_jax_seconds(j_fn, args) for _ in range(2))
        return self.times

    def track_absjit_seconds(self, *params):
        return self._measure()["absjit"]
    track_absjit_seconds.unit = "seconds"

    def track_jax_seconds(self, *params):
        return self._measure()["jax"]
    track_jax_seconds.unit = "seconds"

    def track_ratio_vs_jax(self, *params):
        t = self._measure()
        return t["absjit"] / t["jax"]
    track_ratio_vs_jax.unit = "ratio"


class CompileStencil(_CompileVsJax):
    """A 32x32 Jacobi stencil, 17 equations per sweep (target: 10 sweeps <= 1.0 s and
    <= 6x JAX; growth from 1 to 10 sweeps at most linear)."""

    params = [1, 5, 10]
    param_names = ["sweeps"]

    def make(self, sweeps):
        return (cw.stencil_fn(absjit.numpy, sweeps), cw.stencil_fn(self.jnp, sweeps),
                cw.stencil_args())


class CompileMLPStep(_CompileVsJax):
    """value_and_grad + SGD of a 3-layer MLP (target <= 5x JAX)."""

    def make(self):
        return (cw.mlp_step_fn(absjit.numpy, absjit.value_and_grad),
                cw.mlp_step_fn(self.jnp, self.jax.value_and_grad), cw.mlp_step_args())


class CompileFluid(_CompileVsJax):
    """value_and_grad of an advection-diffusion simulation, ~2,000 equations (target
    <= 5x JAX)."""

    def make(self):
        return (cw.fluid_fn(absjit.numpy, absjit.value_and_grad),
                cw.fluid_fn(self.jnp, self.jax.value_and_grad), cw.fluid_args())


_PEAK = r"""
import resource, sys
sys.path.insert(0, {bench!r})
import numpy as np, absjit, absjit.numpy as anp
import _compile_workloads as cw
absjit.jit(lambda v: v + 1)(np.ones(3, np.float32))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
absjit.block_until_ready(absjit.jit(cw.fluid_fn(anp, absjit.value_and_grad))(*cw.fluid_args()))
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""


class CompileMemory:
    """Peak resident memory added by compiling the ~2,000-equation program (target
    < 500 MB), measured in a fresh process."""

    timeout = 600
    number = 1
    repeat = 1

    def track_fluid_compile_peak_mb(self):
        env = dict(os.environ, ABSJIT_DISABLE_DISK_CACHE="1")
        code = _PEAK.format(bench=os.path.dirname(os.path.abspath(__file__)))
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode:
            raise RuntimeError(proc.stderr)
        return float(proc.stdout.strip().splitlines()[-1])
    track_fluid_compile_peak_mb.unit = "MB"
