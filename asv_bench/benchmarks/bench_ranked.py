"""The ``ranked`` level: one compile for every size, and its steady-state cost.

* ``SizeSweep`` — selu on 8 sizes from 10 to 10**6, end to end (trace, compile, run):
  absjit ``ranked`` (compiles once), absjit ``shaped`` (once per size) and ``jax.jit``
  (once per size). ``track_`` benchmarks record seconds and compile counts. Each runs
  in asv's fresh process, so it includes the library's first-compile set-up (Numba's
  ~0.3 s, jax's smaller one). A ranked kernel's serial tier is compiled before its
  first call returns; its parallel tier only once the kernel is hot
  (:mod:`absjit.backends.numba_cpu.tiers`), which one pass over 8 sizes is not.
* ``SizeSweepProcess`` — the same sweep as a whole new process (interpreter start,
  import, sweep, exit) with the disk cache off: what a user's script costs, where each
  library pays its set-up (jax at import, absjit at its first compile).
* ``SteadyState`` — ``time_`` benchmarks of compiled selu (1e6) and norm (10000x10)
  under ``ranked`` and ``shaped`` (target: ranked <= 1.1x shaped).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

import absjit

from . import _workloads as w

SIZES = [10, 100, 1_000, 10_000, 31_623, 100_000, 316_228, 1_000_000]


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(n).astype(np.float32) for n in SIZES]


def _sweep_absjit(level, xs, alpha, until_parallel=False):
    """Seconds for a fresh jitted selu over ``xs`` and its entry count; with
    ``until_parallel``, until the ranked kernel's parallel tier has compiled too."""
    from absjit.backends.numba_cpu import tiers
    f = absjit.jit(lambda x: w.selu_jnp(x, alpha=alpha), abstraction=level)
    t0 = time.perf_counter()
    for x in xs:
        f(x).block_until_ready()
    if until_parallel:
        tiers.promote_all()
        tiers.wait()
    seconds = time.perf_counter() - t0
    tiers.wait()  # nothing compiles behind the next measurement
    return seconds, f._cache_size()


def _warm_libraries():
    """Pay each library's one-time set-up (Numba's registries and parallel machinery,
    jax's backend) on an unrelated program."""
    from absjit.backends.numba_cpu import tiers
    absjit.jit(lambda x: x * 2.5 + 1, abstraction="ranked")(
        np.ones(3, np.float32)).block_until_ready()
    tiers.wait()
    if w.jax is not None:
        w.jax.jit(lambda x: x * 2.5 + 1)(np.ones(3, np.float32)).block_until_ready()


def _sweep_jax(xs, alpha):
    import jax
    jnp = w.jax_numpy
    f = jax.jit(lambda x: w.LMBDA * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha))
    t0 = time.perf_counter()
    for x in xs:
        f(x).block_until_ready()
    return time.perf_counter() - t0, f._cache_size()


class SizeSweep:
    """Selu over 8 sizes, end to end. A new constant per run makes a new program, so
    nothing comes from a cache; ``ABSJIT_DISABLE_DISK_CACHE`` keeps absjit cold."""

    timeout = 600
    number = 1
    repeat = 1

    def setup(self):
        self.xs = _inputs()
        self.n = 0
        os.environ["ABSJIT_DISABLE_DISK_CACHE"] = "1"

    def teardown(self):
        os.environ.pop("ABSJIT_DISABLE_DISK_CACHE", None)

    def _alpha(self):
        self.n += 1
        return 1.67 + self.n * 1e-4 + time.perf_counter() % 1e-6

    def track_sweep_seconds_ranked(self):
        return _sweep_absjit("ranked", self.xs, self._alpha())[0]
    track_sweep_seconds_ranked.unit = "seconds"

    def track_sweep_seconds_ranked_until_parallel(self):
        return _sweep_absjit("ranked", self.xs, self._alpha(), until_parallel=True)[0]
    track_sweep_seconds_ranked_until_parallel.unit = "seconds"

    def track_sweep_seconds_shaped(self):
        return _sweep_absjit("shaped", self.xs, self._alpha())[0]
    track_sweep_seconds_shaped.unit = "seconds"

    def track_sweep_seconds_jax(self):
        if w.jax is None:
            raise NotImplementedError("jax is not installed")
        return _sweep_jax(self.xs, self._alpha())[0]
    track_sweep_seconds_jax.unit = "seconds"

    def track_sweep_compiles_ranked(self):
        return _sweep_absjit("ranked", self.xs, self._alpha())[1]
    track_sweep_compiles_ranked.unit = "compiles"

    def track_sweep_compiles_shaped(self):
        return _sweep_absjit("shaped", self.xs, self._alpha())[1]
    track_sweep_compiles_shaped.unit = "compiles"

    def track_sweep_compiles_jax(self):
        if w.jax is None:
            raise NotImplementedError("jax is not installed")
        return _sweep_jax(self.xs, self._alpha())[1]
    track_sweep_compiles_jax.unit = "compiles"


class SizeSweepWarmLibraries(SizeSweep):
    """The same sweeps after each library has compiled one unrelated program in this
    process: what a new program costs once absjit, Numba and jax are set up."""

    def setup(self):
        super().setup()
        _warm_libraries()


_SWEEP_SCRIPT = r"""
import time
import numpy as np
import {lib} as lib
import {lib}.numpy as jnp
rng = np.random.default_rng(0)
alpha = 1.67 + time.perf_counter() % 1e-6
f = lib.jit(lambda x: 1.05 * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha){opts})
for n in {sizes}:
    f(rng.standard_normal(n).astype(np.float32)).block_until_ready()
"""


def sweep_process_seconds(lib):
    """Wall seconds of a new interpreter that imports ``lib``, jits selu (``ranked``
    for absjit) and runs it once on each of :data:`SIZES`, then exits. The disk cache
    is off; ``PYTHONDONTWRITEBYTECODE`` is dropped (see
    :func:`.bench_cpu_compile.fresh_process_seconds`)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["ABSJIT_DISABLE_DISK_CACHE"] = "1"
    opts = ', abstraction="ranked"' if lib == "absjit" else ""
    script = _SWEEP_SCRIPT.format(lib=lib, opts=opts, sizes=SIZES)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    seconds = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(proc.stderr)
    return seconds


class SizeSweepProcess:
    """The size sweep as a whole process, absjit ``ranked`` against ``jax.jit``
    (median of 5, the two alternating)."""

    timeout = 600
    number = 1
    repeat = 1

    def setup(self):
        self.times = {"absjit": [], "jax": []}
        libs = ["absjit"] + (["jax"] if w.jax is not None else [])
        for _ in range(5):
            for lib in libs:
                self.times[lib].append(sweep_process_seconds(lib))

    def track_ranked_seconds(self):
        return float(np.median(self.times["absjit"]))
    track_ranked_seconds.unit = "seconds"

    def track_jax_seconds(self):
        if not self.times["jax"]:
            raise NotImplementedError("jax is not installed")
        return float(np.median(self.times["jax"]))
    track_jax_seconds.unit = "seconds"


class SteadyState:
    """Compiled selu (1e6) and norm (10000x10): ranked against shaped, same process."""

    def setup(self):
        rng = np.random.default_rng(1)
        self.x = absjit.numpy.asarray(rng.standard_normal(1_000_000).astype(np.float32))
        self.X = absjit.numpy.asarray(rng.standard_normal((10_000, 10)).astype(np.float32))
        self.fns = {}
        for level in ("ranked", "shaped"):
            self.fns["selu", level] = absjit.jit(w.selu_jnp, abstraction=level)
            self.fns["norm", level] = absjit.jit(w.norm_jnp, abstraction=level)
        for (name, _), f in self.fns.items():
            f(self.x if name == "selu" else self.X).block_until_ready()
        # ranked kernels run a serial tier until they are hot and their parallel one
        # has compiled in the background: time the steady state, the parallel tier
        from absjit.backends.numba_cpu import tiers
        tiers.promote_all()
        tiers.wait()

    def time_selu_ranked(self):
        self.fns["selu", "ranked"](self.x).block_until_ready()

    def time_selu_shaped(self):
        self.fns["selu", "shaped"](self.x).block_until_ready()

    def time_norm_ranked(self):
        self.fns["norm", "ranked"](self.X).block_until_ready()

    def time_norm_shaped(self):
        self.fns["norm", "shaped"](self.X).block_until_ready()
