"""Steady-state speed of the workloads docs/performance.md sets targets for, every
implementation in one run.

``selu`` on 1e6 float32 (seed 000), ``norm`` on 10000x10 (seed 003), ``softmax`` over the
last axis of 1000x1000, ``sum`` and sum of squares of 1e6, ``dot`` 100x1000 @
1000x2000 then relu (seed 004), a 3-layer MLP forward on 256 rows and its training
step on 128 rows, batched products (``einsum('bij,bjk->bik')`` at three shapes and
attention scores), for absjit's cpu
backend, ``jax.jit``, hand-written Numba loops (serial and ``prange``), NumPy and
numexpr where they apply. ``scripts/compare.py`` prints the ratios.
"""
from __future__ import annotations

import numpy as np

from . import _workloads as w


class _Workload:
    make = None
    params = []
    param_names = ["impl"]
    timeout = 300

    def setup(self, impl):
        impls = type(self).make()
        if impl not in impls:
            raise NotImplementedError(f"{impl} is not installed")  # asv skips it
        self.fn = impls[impl]

    def time_call(self, impl):
        w._ready(self.fn())


class Selu(_Workload):
    make = staticmethod(w.make_selu)
    params = [["absjit", "jax", "numba", "numba-prange", "numpy", "numexpr"]]

    def peakmem_call(self, impl):
        for _ in range(3):
            w._ready(self.fn())


class Norm(_Workload):
    make = staticmethod(w.make_norm)
    params = [["absjit", "jax", "numba", "numpy"]]


class Softmax(_Workload):
    """Softmax over the last axis of 1000x1000 float32: a row max, exp, a row sum and
    a division (one loop over rows in absjit)."""
    make = staticmethod(w.make_softmax)
    params = [["absjit", "jax", "numpy"]]


class SumSumsq(_Workload):
    """``x.sum()`` and ``(x * x).sum()`` of 1e6 float32: sibling reductions."""
    make = staticmethod(w.make_sum_sumsq)
    params = [["absjit", "jax", "numpy"]]


class DotRelu(_Workload):
    make = staticmethod(w.make_dot_relu)
    params = [["absjit", "jax", "numpy"]]


class MLP(_Workload):
    make = staticmethod(w.make_mlp)
    params = [["absjit", "jax", "numpy"]]


class MLPTrain(_Workload):
    """One jitted training step of the 3-layer MLP: ``value_and_grad`` of a softmax
    cross-entropy on 128 rows, then an SGD update of every weight and bias."""
    make = staticmethod(w.make_mlp_train)
    params = [["absjit", "jax"]]


class BatchedMatmul:
    """``einsum('bij,bjk->bik')`` on float32 batches (matrices per batch x size)."""
    params = [list(w.BMM_SHAPES), ["absjit", "jax", "numpy"]]
    param_names = ["shape", "impl"]
    timeout = 300

    def setup(self, shape, impl):
        impls = w.make_bmm(*w.BMM_SHAPES[shape])
        if impl not in impls:
            raise NotImplementedError(f"{impl} is not installed")
        self.fn = impls[impl]

    def time_call(self, shape, impl):
        w._ready(self.fn())


class AttentionScores(_Workload):
    """``einsum('bhqd,bhkd->bhqk')`` on (8, 8, 64, 32) float32: a batched product with
    the second operand read transposed."""
    make = staticmethod(w.make_attention_scores)
    params = [["absjit", "jax", "numpy"]]


class SeluMemory:
    """Bytes allocated by one jitted selu call beyond its output (no temporaries)."""

    def setup(self):
        import absjit
        self.x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
        self.f = absjit.jit(w.selu_jnp)
        self.f(self.x)

    def track_extra_bytes_allocated(self):
        import tracemalloc
        tracemalloc.start()
        out = self.f(self.x)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return max(peak - np.asarray(out).nbytes, 0)
    track_extra_bytes_allocated.unit = "bytes"
