"""Steady-state speed of workloads that used to fall off a cliff on the cpu backend
(the whole program sent to the NumPy interpreter) or call libm per element: a
``fori_loop`` of 20,000 steps sorting 16 values, a 3x3 64->64-channel convolution on
8x32x32, ``tanh`` on 1e6 float32, ``sin``/``cos`` on 1e6 float32 and float64 and
``selu`` on 1e6 float16, ``top_k``, a segment scatter-add, a 1-D ``convolve``, batched
``solve`` and ``solve`` inside a ``fori_loop``, at several sizes — absjit and ``jax.jit`` (and NumPy/Numba where they apply) in
one run. ``scripts/compare.py`` prints the ratios.
"""
from __future__ import annotations

import numpy as np

from . import _lowering_workloads as lw
from ._workloads import _ready


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
        _ready(self.fn())


class ForiSort(_Workload):
    make = staticmethod(lw.make_fori_sort)
    params = [["absjit", "jax"]]


class Conv2D(_Workload):
    make = staticmethod(lw.make_conv2d)
    params = [["absjit", "jax"]]


class Tanh(_Workload):
    make = staticmethod(lw.make_tanh)
    params = [["absjit", "jax", "numba", "numpy"]]


class Sin(_Workload):
    """sin on 1e6 normal values times 3, float32 and float64."""
    function = "sin"
    params = [["absjit", "jax", "numba", "numpy"], ["float32", "float64"]]
    param_names = ["impl", "dtype"]

    def setup(self, impl, dtype):
        impls = lw.make_unary(type(self).function, np.dtype(dtype), scale=3.0)
        if impl not in impls:
            raise NotImplementedError(f"{impl} is not installed")
        self.fn = impls[impl]

    def time_call(self, impl, dtype):
        _ready(self.fn())


class Cos(Sin):
    """cos on 1e6 normal values times 3, float32 and float64."""
    function = "cos"


class SeluF16(_Workload):
    make = staticmethod(lw.make_selu_f16)
    params = [["absjit", "jax", "numpy"]]


class _Sized(_Workload):
    """A workload at several sizes: ``sizes`` maps a label to ``make``'s keywords."""
    sizes = {}
    param_names = ["impl", "size"]

    def setup(self, impl, size):
        impls = type(self).make(**type(self).sizes[size])
        if impl not in impls:
            raise NotImplementedError(f"{impl} is not installed")
        self.fn = impls[impl]

    def time_call(self, impl, size):
        _ready(self.fn())


class TopK(_Sized):
    """lax.top_k over the rows of a float32 matrix."""
    make = staticmethod(lw.make_top_k)
    sizes = {"2000x1000 k=10": dict(rows=2000, n=1000, k=10),
             "100x100000 k=100": dict(rows=100, n=100_000, k=100),
             "20000x64 k=8": dict(rows=20_000, n=64, k=8)}
    params = [["absjit", "jax"], list(sizes)]


class SegmentScatterAdd(_Sized):
    """Embedding rows gathered then scatter-added into segments (``.at[seg].add``)."""
    make = staticmethod(lw.make_segment_sum)
    sizes = {"1e5x64 -> 1000": dict(n=100_000, width=64, segments=1000),
             "1e6x8 -> 100": dict(n=1_000_000, width=8, segments=100)}
    params = [["absjit", "jax"], list(sizes)]


class Convolve(_Sized):
    """jnp.convolve of float32 signals, mode 'same'."""
    make = staticmethod(lw.make_convolve)
    sizes = {"1e5 x 101": dict(n=100_000, taps=101), "1e6 x 7": dict(n=1_000_000, taps=7),
             "1e4 x 1001": dict(n=10_000, taps=1001)}
    params = [["absjit", "jax"], list(sizes)]


class Solve(_Sized):
    """jnp.linalg.solve of a stack of float32 systems."""
    make = staticmethod(lw.make_solve)
    sizes = {"64 x 32x32": dict(batch=64, n=32), "1024 x 8x8": dict(batch=1024, n=8),
             "1 x 512x512": dict(batch=1, n=512)}
    params = [["absjit", "jax"], list(sizes)]


class NewtonSolveInLoop(_Workload):
    make = staticmethod(lw.make_newton)
    params = [["absjit", "jax"]]
