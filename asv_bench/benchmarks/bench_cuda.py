"""The cuda backend on a GPU against ``jax.jit`` on the same GPU (docs/performance.md,
"GPU").

Workloads: a device-to-device copy of 1e8 float32 (the bandwidth floor), ``selu`` on 1e8
float32, ``norm`` on 1e6x100 and 10000x10, ``dot`` 100x1000 @ 1000x2000 + relu, and a
cache-hit call of a 10-element ``x + 1``. References: ``jax.jit`` on the GPU, a
hand-written numba-cuda grid-stride kernel (selu; a bare launch + sync for dispatch) and
CuPy (selu's ElementwiseKernel, the product) when installed. Every timing includes a
device synchronisation; inputs are on the device before timing.

Every benchmark raises ``NotImplementedError`` in ``setup`` (asv skips it) when there is
no GPU: no numba-cuda, no driver, or Numba's CUDA simulator switched on. Run this module
in a process of its own: ``_workloads.py`` pins JAX to the CPU when imported.

Record figures by calling the classes directly, e.g.::

    from asv_bench.benchmarks import bench_cuda as b
    s = b.Selu(); s.setup("absjit"); s.time_call("absjit")
"""
from __future__ import annotations

import math

import numpy as np

ALPHA, LMBDA = 1.67, 1.05
IMPLS = ["absjit", "jax", "numba-cuda", "cupy", "copy"]


def _gpu():
    """``numba.cuda`` when a real GPU runs the cuda backend, else NotImplementedError."""
    import absjit
    from absjit.backends.numba_cuda import runtime
    if "cuda" not in absjit.backends() or runtime.simulator():
        raise NotImplementedError("no CUDA GPU (or the simulator is on)")
    return runtime.cuda_module()


def _jax():
    try:
        import jax
        jax.devices("gpu")
    except Exception as e:  # noqa: BLE001 - jax with CUDA is optional
        raise NotImplementedError("jax has no GPU here") from e
    return jax


def _cupy():
    try:
        import cupy
    except Exception as e:  # noqa: BLE001
        raise NotImplementedError("CuPy is not installed") from e
    return cupy


def _sync(out):
    import absjit
    absjit.block_until_ready(out)
    return out


class _GpuWorkload:
    params = [IMPLS]
    param_names = ["impl"]
    timeout = 600
    number = 20

    def setup(self, impl):
        self.cuda = _gpu()
        self.fn = self.make(impl)
        self.fn()  # compile and warm up
        self.cuda.synchronize()

    def make(self, impl):
        raise NotImplementedError(impl)

    def time_call(self, impl):
        self.fn()
        self.cuda.synchronize()


def _selu_jnp(x):
    import absjit.numpy as jnp
    return LMBDA * jnp.where(x > 0, x, ALPHA * jnp.exp(x) - ALPHA)


def _selu_kernel(cuda):
    @cuda.jit
    def selu(x, out):
        a = np.float32(ALPHA)
        lm = np.float32(LMBDA)
        for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
            v = x[i]
            out[i] = lm * (v if v > 0 else a * math.exp(v) - a)
    return selu


class Selu(_GpuWorkload):
    """``selu`` on 1e8 float32 (target: absjit <= 0.85x jax, >= 70% of copy bandwidth)."""

    n = 100_000_000

    def make(self, impl):
        import absjit
        cuda = self.cuda
        host = np.random.default_rng(0).standard_normal(self.n).astype(np.float32)
        if impl == "absjit":
            x = absjit.device_put(host, "gpu")
            f = absjit.jit(_selu_jnp, backend="cuda")
            return lambda: f(x)
        if impl == "jax":
            jax = _jax()
            jf = jax.jit(lambda v: LMBDA * jax.numpy.where(v > 0, v, ALPHA * jax.numpy.exp(v)
                                                           - ALPHA))
            xj = jax.device_put(host, jax.devices("gpu")[0])
            return lambda: jf(xj).block_until_ready()
        if impl == "numba-cuda":
            x, out = cuda.to_device(host), cuda.device_array_like(host)
            k = _selu_kernel(cuda)
            blocks = cuda.get_current_device().MULTIPROCESSOR_COUNT * 32
            return lambda: k[blocks, 256](x, out)
        if impl == "cupy":
            cp = _cupy()
            kern = cp.ElementwiseKernel(
                "float32 x", "float32 y",
                f"y = {LMBDA}f * (x > 0 ? x : {ALPHA}f * expf(x) - {ALPHA}f)", "selu")
            xc = cp.asarray(host)
            return lambda: kern(xc)
        if impl == "copy":
            x, out = cuda.to_device(host), cuda.device_array_like(host)
            return lambda: out.copy_to_device(x)
        raise NotImplementedError(impl)


def _norm_jnp(X):
    import absjit.numpy as jnp
    X = X - X.mean(0)
    return X / jnp.sqrt(jnp.mean(X * X, 0))


class Norm(_GpuWorkload):
    """``norm`` (seed 003) on 1e6x100 and 10000x10 (target: <= 1.0x jax on both)."""

    params = [["absjit", "jax"], ["1e6x100", "10000x10"]]
    param_names = ["impl", "shape"]

    def setup(self, impl, shape):
        self.shape = (1_000_000, 100) if shape == "1e6x100" else (10_000, 10)
        super().setup(impl)

    def make(self, impl):
        import absjit
        host = np.random.default_rng(3).standard_normal(self.shape).astype(np.float32)
        if impl == "absjit":
            X = absjit.device_put(host, "gpu")
            f = absjit.jit(_norm_jnp, backend="cuda")
            return lambda: f(X)
        jax = _jax()
        jnp = jax.numpy

        def jnorm(X):
            X = X - X.mean(0)
            return X / jnp.sqrt(jnp.mean(X * X, 0))
        jf, Xj = jax.jit(jnorm), jax.device_put(host, jax.devices("gpu")[0])
        return lambda: jf(Xj).block_until_ready()

    def time_call(self, impl, shape):
        super().time_call(impl)


class DotRelu(_GpuWorkload):
    """``dot`` 100x1000 @ 1000x2000 then relu (target: <= 1.0x jax)."""

    params = [["absjit", "jax", "cupy"]]

    def make(self, impl):
        import absjit
        rng = np.random.default_rng(4)
        a = rng.standard_normal((100, 1000)).astype(np.float32)
        b = rng.standard_normal((1000, 2000)).astype(np.float32)
        if impl == "absjit":
            import absjit.numpy as jnp
            ad, bd = absjit.device_put(a, "gpu"), absjit.device_put(b, "gpu")
            f = absjit.jit(lambda x, y: jnp.maximum(x @ y, 0), backend="cuda")
            return lambda: f(ad, bd)
        if impl == "jax":
            jax = _jax()
            gpu = jax.devices("gpu")[0]
            jf = jax.jit(lambda x, y: jax.numpy.maximum(x @ y, 0))
            aj, bj = jax.device_put(a, gpu), jax.device_put(b, gpu)
            return lambda: jf(aj, bj).block_until_ready()
        cp = _cupy()
        ac, bc = cp.asarray(a), cp.asarray(b)
        return lambda: cp.maximum(ac @ bc, 0)


class Dispatch(_GpuWorkload):
    """A cache-hit call of a 10-element ``x + 1``, synchronised (target: <= 1.0x jax)."""

    params = [["absjit", "jax", "numba-cuda"]]
    number = 200

    def make(self, impl):
        import absjit
        host = np.arange(10, dtype=np.float32)
        if impl == "absjit":
            x = absjit.device_put(host, "gpu")
            f = absjit.jit(lambda v: v + 1, backend="cuda")
            return lambda: f(x)
        if impl == "jax":
            jax = _jax()
            jf = jax.jit(lambda v: v + 1)
            xj = jax.device_put(host, jax.devices("gpu")[0])
            return lambda: jf(xj).block_until_ready()
        cuda = self.cuda

        @cuda.jit
        def add1(x, out):
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = x[i] + np.float32(1)
        x, out = cuda.to_device(host), cuda.device_array_like(host)
        return lambda: add1[1, 32](x, out)


def track_compiles_per_new_kernel():
    """Kernels compiled for two programs sharing one loop nest (expected: 2, not 3)."""
    import absjit
    import absjit.numpy as jnp
    from absjit.backends.numba_cuda import BACKEND
    _gpu()
    x = absjit.device_put(np.ones(1000, np.float32), "gpu")
    before = BACKEND.stats["compiles"]
    absjit.jit(lambda v: jnp.tanh(v) * 0.37, backend="cuda")(x)
    absjit.jit(lambda v: (jnp.tanh(v) * 0.37, jnp.argmax(v)), backend="cuda")(x)
    return BACKEND.stats["compiles"] - before
