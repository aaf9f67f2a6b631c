"""Steady-state speed of the decompositions: ``cholesky`` then ``solve_triangular`` on a
256x256 float32 SPD matrix (256 right-hand sides), and the reduced ``svd`` of a 512x128
float32 matrix, for absjit (eagerly and under ``jit``), NumPy, SciPy and ``jax.jit``.

absjit's primitives call NumPy's LAPACK (``?potrf``, ``?gesdd``) and SciPy's BLAS
(``?trsm``); under ``jit`` on the cpu backend they run on the interpret backend for now,
so ``absjit-jit`` measures that path.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

import absjit
import absjit.scipy.linalg as asl

from . import _workloads as w
from ._workloads import jax
from .bench_cpu_workloads import _Workload

if jax is not None:
    import jax.numpy as jax_numpy
    import jax.scipy.linalg as jax_sla


def _quiet_jit(fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the interpret fallback notice
        jf = absjit.jit(fn)
    return jf


def make_cho_solve(n=256, k=256):
    rng = np.random.default_rng(7)
    m = rng.standard_normal((n, n))
    a = (m @ m.T / n + np.eye(n)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)

    def ab(a, b):
        return asl.solve_triangular(asl.cholesky(a, lower=True), b, lower=True)
    jf = _quiet_jit(ab)

    def np_ref():
        return scipy.linalg.solve_triangular(np.linalg.cholesky(a), b, lower=True,
                                             check_finite=False)

    def sp_ref():
        c = scipy.linalg.cholesky(a, lower=True, check_finite=False)
        return scipy.linalg.solve_triangular(c, b, lower=True, check_finite=False)
    impls = {"absjit": lambda: ab(a, b), "absjit-jit": lambda: jf(a, b),
             "numpy": np_ref, "scipy": sp_ref}
    if jax is not None:
        jj = jax.jit(lambda a, b: jax_sla.solve_triangular(
            jax_sla.cholesky(a, lower=True), b, lower=True))
        aj, bj = jax.device_put(a), jax.device_put(b)
        impls["jax"] = lambda: jj(aj, bj)
    return w._warm(impls)


def make_svd(m=512, n=128):
    x = np.random.default_rng(8).standard_normal((m, n)).astype(np.float32)

    def f(x):
        return absjit.numpy.linalg.svd(x, full_matrices=False)
    jf = _quiet_jit(f)
    impls = {"absjit": lambda: f(x)[1], "absjit-jit": lambda: jf(x)[1],
             "numpy": lambda: np.linalg.svd(x, full_matrices=False)[1],
             "scipy": lambda: scipy.linalg.svd(x, full_matrices=False, check_finite=False)[1]}
    if jax is not None:
        jj = jax.jit(lambda x: jax_numpy.linalg.svd(x, full_matrices=False))
        xj = jax.device_put(x)
        impls["jax"] = lambda: jj(xj)[1]
    return w._warm(impls)


WORKLOADS = {"cholesky+solve_triangular 256": make_cho_solve, "svd 512x128": make_svd}


class _Linalg(_Workload):
    params = [["absjit", "absjit-jit", "numpy", "scipy", "jax"]]


class ChoSolve(_Linalg):
    make = staticmethod(make_cho_solve)


class SVD(_Linalg):
    make = staticmethod(make_svd)


if __name__ == "__main__":
    # ``python -m asv_bench.benchmarks.bench_linalg``: medians in ms of single calls, the
    # implementations interleaved round-robin so that a changing machine load affects
    # them alike.
    import time
    for name, make in WORKLOADS.items():
        impls = make()
        times = {impl: [] for impl in impls}
        for _ in range(150):
            for impl, fn in impls.items():
                t0 = time.perf_counter()
                w._ready(fn())
                times[impl].append(time.perf_counter() - t0)
        med = {impl: 1e3 * float(np.median(ts)) for impl, ts in times.items()}
        print(f"{name}: " + ", ".join(f"{impl} {t:.3f}" for impl, t in med.items()))
