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

from . import _workloads as w

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
    return importlib.import_module("absjit.backends.numba_cpu.backend").stats


def _fresh_process_seconds(lib, env):
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
        from absjit.backends.numba_cpu import backend as be_mod
        with be_mod._lock:
            be_mod._kernels.clear()
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
        _fresh_process_seconds("absjit", self.env)  # warms the disk cache

    def track_absjit_warm_cache_seconds(self):
        return min(_fresh_process_seconds("absjit", self.env) for _ in range(3))
    track_absjit_warm_cache_seconds.unit = "seconds"

    def track_jax_seconds(self):
        return min(_fresh_process_seconds("jax", self.env) for _ in range(3))
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
