"""Seed 003, "How to think in JAX" (its jit sections): jit of a normalisation, the
shape that depends on values, tracer prints, static arguments, static vs traced
operations.

Run with ``python examples/seed_003_think.py`` (``--quick``: one timing run per cell).
"""
import sys
import timeit
from functools import partial

import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import jit, make_jaxpr

QUICK = "--quick" in sys.argv  # fewer timing repeats (the test suite runs this)


def _readable(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def timed(label, fn, number=10, repeat=5):
    """What ``%timeit`` reports: the best of ``repeat`` runs of ``number`` calls, after
    one warm-up call (tracing and compiling happen there). The best run is the one least
    disturbed by other work on the machine."""
    fn()
    repeat = 1 if QUICK else repeat
    best = min(timeit.repeat(fn, number=number, repeat=repeat)) / number
    print(f"{label}: {_readable(best)} per loop (best of {repeat} runs of {number} loops)")


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


norm_compiled = jit(norm)
np.random.seed(1701)
X = jnp.array(np.random.rand(10000, 10))
print(np.allclose(norm(X), norm_compiled(X), atol=1E-6))

for label, fn in (("norm", norm), ("norm_compiled", norm_compiled)):
    timed(label, lambda: fn(X).block_until_ready())


def get_negatives(x):
    return x[x < 0]


x = jnp.array(np.random.randn(10))
print(repr(get_negatives(x)))
try:
    jit(get_negatives)(x)
except IndexError as err:
    print(f"{type(err).__name__}: {err}")


# -- JIT mechanics: tracing and static variables --------------------------------------
@jit
def f(x, y):
    print("Running f():")
    print(f"  x = {x}")
    print(f"  y = {y}")
    result = jnp.dot(x + 1, y + 1)
    print(f"  result = {result}")
    return result


x = np.random.randn(3, 4)
y = np.random.randn(4)
print(repr(f(x, y)))

x2 = np.random.randn(3, 4)
y2 = np.random.randn(4)
print(repr(f(x2, y2)))


def f(x, y):  # noqa: F811 - the seed redefines f
    return jnp.dot(x + 1, y + 1)


print(make_jaxpr(f)(x, y))


@jit
def f(x, neg):  # noqa: F811
    return -x if neg else x


try:
    f(1, True)
except absjit.errors.ConcretizationTypeError as err:
    print(f"{type(err).__name__}: {err}")


@partial(jit, static_argnums=(1,))
def f(x, neg):  # noqa: F811
    return -x if neg else x


print(repr(f(1, True)))
print(repr(f(1, False)))


# -- Static vs traced operations ----------------------------------------------------------
@jit
def f(x):  # noqa: F811
    return x.reshape(jnp.array(x.shape).prod())


x = jnp.ones((2, 3))
try:
    f(x)
except absjit.errors.ConcretizationTypeError as err:
    print(f"{type(err).__name__}: {err}")


@jit
def f(x):  # noqa: F811
    print(f"x = {x}")
    print(f"x.shape = {x.shape}")
    print(f"jnp.array(x.shape).prod() = {jnp.array(x.shape).prod()}")
    # comment this out to avoid the error:
    # return x.reshape(jnp.array(x.shape).prod())


f(x)


@jit
def f(x):  # noqa: F811
    return x.reshape((np.prod(x.shape),))


print(repr(f(x)))
