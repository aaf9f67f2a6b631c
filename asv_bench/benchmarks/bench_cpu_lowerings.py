"""Steady-state speed of workloads that used to fall off a cliff on the cpu backend
(the whole program sent to the NumPy interpreter) or call libm per element: a
``fori_loop`` of 20,000 steps sorting 16 values, a 3x3 64->64-channel convolution on
8x32x32, ``tanh`` on 1e6 float32, ``sin``/``cos`` on 1e6 float32 and float64 and
``selu`` on 1e6 float16, ``top_k``, a segment scatter-add, a 1-D ``convolve``, batched
``solve`` and ``solve`` inside a ``fori_loop``, ``rfft``, a float64 Horner polynomial, a
cross-entropy by ``take_along_axis`` and an RNN ``scan``, at several sizes — absjit and
``jax.jit`` (and NumPy/Numba where they apply) in one run. ``scripts/compare.py`` prints the ratios.
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


class Rfft(_Sized):
    """jnp.fft.rfft of float32 signals over the last axis."""
    make = staticmethod(lw.make_rfft)
    sizes = {"2^20": dict(n=1 << 20), "64 x 2^14": dict(n=1 << 14, batch=64),
             "4096 x 256": dict(n=256, batch=4096)}
    params = [["absjit", "jax"], list(sizes)]


class Horner64(_Sized):
    """A degree-12 float64 polynomial by Horner's rule (64-bit types on)."""
    make = staticmethod(lw.make_horner64)
    sizes = {"1e6 deg 12": dict(n=1_000_000), "1e5 deg 12": dict(n=100_000),
             "1e6 deg 4": dict(n=1_000_000, coeffs=lw.HORNER_COEFFS[:5])}
    params = [["absjit", "jax", "numpy"], list(sizes)]


class CrossEntropy(_Sized):
    """Softmax cross-entropy of float32 logits, labels picked by take_along_axis."""
    make = staticmethod(lw.make_cross_entropy)
    sizes = {"1024x1000": dict(rows=1024, classes=1000),
             "8192x100": dict(rows=8192, classes=100),
             "128x32000": dict(rows=128, classes=32_000)}
    params = [["absjit", "jax"], list(sizes)]


class RnnScan(_Sized):
    """A tanh RNN by lax.scan: two small products in every step."""
    make = staticmethod(lw.make_rnn_scan)
    sizes = {"200 x 32x128": dict(steps=200, batch=32, hidden=128),
             "1000 x 8x32": dict(steps=1000, batch=8, hidden=32),
             "50 x 128x256": dict(steps=50, batch=128, hidden=256)}
    params = [["absjit", "jax"], list(sizes)]
