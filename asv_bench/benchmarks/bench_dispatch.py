"""Cache-hit dispatch: the cost of calling an already compiled function.

``x + 1`` on a 10-element float32 array and on a Python scalar, for absjit on every
available backend, ``jax.jit`` and a raw ``numba.njit`` kernel, in one run so ratios
compare like with like (the target, docs/performance.md: ≤ 2 µs and ≤ 0.5× jax with
the cpu backend).
Also the loop of seed 000 that re-creates a lambda/partial around ``jit`` 20 times,
against the same loop with a plain function, and the compile count it causes.
"""
from functools import partial

import numpy as np

import absjit
import absjit.numpy as jnp

try:
    import jax
    import jax.numpy as jax_numpy
except ImportError:  # pragma: no cover - jax is a benchmark extra
    jax = None
try:
    import numba
except ImportError:  # pragma: no cover
    numba = None

_IMPLS = ["absjit-" + b for b in absjit.backends()] + ["jax", "numba"]


def _add_one(x):
    return x + 1


class CacheHitDispatch:
    """One call of a jitted ``x + 1`` whose entry is already compiled."""

    params = (_IMPLS, ["vector10", "scalar"])
    param_names = ["impl", "arg"]

    def setup(self, impl, arg):
        data = np.arange(10, dtype=np.float32)
        if impl.startswith("absjit-"):
            self.x = jnp.asarray(data) if arg == "vector10" else 1.0
            self.f = absjit.jit(_add_one, backend=impl[len("absjit-"):])
        elif impl == "jax":
            if jax is None:
                raise NotImplementedError("jax is not installed")
            self.x = jax_numpy.asarray(data) if arg == "vector10" else 1.0
            jitted = jax.jit(_add_one)
            self.f = jitted
        else:
            if numba is None:
                raise NotImplementedError("numba is not installed")
            self.x = data if arg == "vector10" else np.float32(1.0)
            self.f = numba.njit(lambda x: x + np.float32(1))
        self.f(self.x)
        self.f(self.x)

    def time_hit(self, impl, arg):
        self.f(self.x)


def _body(i):
    return i + 1


def _loop_plain():
    i = 0
    for _ in range(20):
        i = absjit.jit(_body)(i)
    return i


def _loop_lambda():
    i = 0
    for _ in range(20):
        i = absjit.jit(lambda x: _body(x))(i)
    return i


def _loop_partial():
    i = 0
    for _ in range(20):
        i = absjit.jit(partial(_body))(i)
    return i


class JitInALoop:
    """Seed 000's loops: ``jit`` of a fresh lambda/partial retraces but never recompiles."""

    params = ["plain", "lambda", "partial"]
    param_names = ["wrapper"]

    def setup(self, wrapper):
        self.loop = {"plain": _loop_plain, "lambda": _loop_lambda,
                     "partial": _loop_partial}[wrapper]
        self.loop()

    def time_loop(self, wrapper):
        self.loop()

    def track_compiles_per_loop(self, wrapper):
        before = absjit.jit.compile_cache.stats()["compiles"]
        self.loop()
        return absjit.jit.compile_cache.stats()["compiles"] - before

    track_compiles_per_loop.unit = "compiles"
