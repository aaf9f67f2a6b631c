"""Loops compiled natively: ``fori_loop`` and ``scan`` with 10^5 iterations of a small
body, for absjit's cpu backend, ``jax.jit`` and a hand-written ``numba.njit`` loop, in
one run so ratios compare like with like (aims: ≤ 0.5× jax, ≤ 1.5× numba).

The body is a damped recurrence ``c = c * 0.999 + sin(i * 1e-3)`` (fori_loop) and a
running sum that also stacks its carry (scan over 10^5 xs).
"""
import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import lax

try:
    import jax
    import jax.numpy as jax_numpy
    jax.config.update("jax_platforms", "cpu")
except ImportError:  # pragma: no cover - jax is a benchmark extra
    jax = None
try:
    import numba
except ImportError:  # pragma: no cover
    numba = None

N = 100_000
_IMPLS = ["absjit-cpu", "jax", "numba"]


def _absjit_fori(x):
    return lax.fori_loop(0, N, lambda i, c: c * np.float32(0.999)
                         + jnp.sin(i.astype(jnp.float32) * np.float32(1e-3)), x)


def _absjit_scan(xs):
    return lax.scan(lambda c, x: (c + x, c), np.float32(0.0), xs)


def _numba_fori(x):
    c = x
    for i in range(N):
        c = c * np.float32(0.999) + np.sin(np.float32(i) * np.float32(1e-3))
    return c


def _numba_scan(xs):
    c = np.float32(0.0)
    ys = np.empty_like(xs)
    for i in range(xs.shape[0]):
        ys[i] = c
        c = c + xs[i]
    return c, ys


class Loops:
    """One call of an already compiled loop."""

    params = (_IMPLS, ["fori_loop", "scan"])
    param_names = ["impl", "loop"]

    def setup(self, impl, loop):
        self.x = np.float32(1.0)
        self.xs = np.linspace(0, 1, N, dtype=np.float32)
        arg = self.x if loop == "fori_loop" else self.xs
        if impl == "absjit-cpu":
            fn = absjit.jit(_absjit_fori if loop == "fori_loop" else _absjit_scan,
                            backend="cpu")
            self.run = lambda: absjit.block_until_ready(fn(arg))
        elif impl == "jax":
            if jax is None:
                raise NotImplementedError("jax is not installed")
            if loop == "fori_loop":
                fn = jax.jit(lambda x: jax.lax.fori_loop(
                    0, N, lambda i, c: c * np.float32(0.999)
                    + jax_numpy.sin(i.astype(jax_numpy.float32) * np.float32(1e-3)), x))
            else:
                fn = jax.jit(lambda xs: jax.lax.scan(lambda c, x: (c + x, c),
                                                     np.float32(0.0), xs))
            self.run = lambda: jax.block_until_ready(fn(arg))
        else:
            if numba is None:
                raise NotImplementedError("numba is not installed")
            fn = numba.njit(_numba_fori if loop == "fori_loop" else _numba_scan)
            self.run = lambda: fn(arg)
        self.run()  # compile outside the timing

    def time_loop(self, impl, loop):
        self.run()
