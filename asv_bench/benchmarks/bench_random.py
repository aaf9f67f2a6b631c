"""Random number generation: 1e7 float32 normals and 1e7 float32 uniforms.

absjit's ``random`` under ``jit`` (cpu backend: the threefry hash, the bits-to-float
conversion and, for normals, ``erf_inv`` fuse into one parallel loop), with a raw
``PRNGKey`` and with a typed ``random.key`` (the same program: a typed key is a
pytree over its ``uint32`` words), against
``jax.random`` under ``jax.jit`` on the CPU (the same algorithm; equal numbers) and
NumPy's ``Generator.standard_normal`` / ``Generator.random`` (PCG64 and ziggurat:
different numbers, a reference for speed only).
"""
from __future__ import annotations

import numpy as np

import absjit
from absjit import random as arandom

from . import _workloads as w

N = 10_000_000


def make_random(kind, n=N):
    """``{implementation: zero-argument callable}`` for ``kind`` in normal/uniform."""
    key = arandom.PRNGKey(0)
    sampler = {"normal": arandom.normal, "uniform": arandom.uniform}[kind]
    f = absjit.jit(lambda k: sampler(k, (n,)))
    gen = np.random.default_rng(0)
    np_fn = {"normal": lambda: gen.standard_normal(n, dtype=np.float32),
             "uniform": lambda: gen.random(n, dtype=np.float32)}[kind]
    tkey = arandom.key(0)
    impls = {"absjit": lambda: f(key), "absjit-key": lambda: f(tkey), "numpy": np_fn}
    if w.jax is not None:
        jkey = w.jax.random.PRNGKey(0)
        jsampler = {"normal": w.jax.random.normal, "uniform": w.jax.random.uniform}[kind]
        jf = w.jax.jit(lambda k: jsampler(k, (n,)))
        impls["jax"] = lambda: jf(jkey)
    return w._warm(impls)


class _Random:
    kind = None
    params = [["absjit", "absjit-key", "jax", "numpy"]]
    param_names = ["impl"]
    timeout = 600

    def setup(self, impl):
        impls = make_random(self.kind)
        if impl not in impls:
            raise NotImplementedError(f"{impl} is not installed")  # asv skips it
        self.fn = impls[impl]

    def time_call(self, impl):
        w._ready(self.fn())


class Normal(_Random):
    kind = "normal"


class Uniform(_Random):
    kind = "uniform"
