"""Steady-state speed of workloads that used to fall off a cliff on the cpu backend
(the whole program sent to the NumPy interpreter) or call libm per element: a
``fori_loop`` of 20,000 steps sorting 16 values, a 3x3 64->64-channel convolution on
8x32x32, ``tanh`` on 1e6 float32, ``sin``/``cos`` on 1e6 float32 and float64 and
``selu`` on 1e6 float16 — absjit and ``jax.jit`` (and NumPy/Numba where they apply) in
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
