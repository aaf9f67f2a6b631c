"""Seed 003, "How to think in JAX" (its jit sections): jit of a normalisation, the
shape that depends on values, tracer prints, static arguments, static vs traced
operations.

Run with ``python examples/seed_003_think.py``.
"""
import time
from functools import partial

import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import jit, make_jaxpr


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


norm_compiled = jit(norm)
np.random.seed(1701)
X = jnp.array(np.random.rand(10000, 10))
print(np.allclose(norm(X), norm_compiled(X), atol=1E-6))

for label, fn in (("norm", norm), ("norm_compiled", norm_compiled)):
    fn(X).block_until_ready()
    t0 = time.perf_counter()
    for _ in range(10):
        fn(X).block_until_ready()
    print(f"{label}: {(time.perf_counter() - t0) / 10 * 1e3:.3f} ms per loop")


def get_negatives(x):
    return x[x < 0]


x = jnp.array(np.random.randn(10))
print(repr(get_negatives(x)))
try:
    jit(get_negatives)(x)
except IndexError as err:
    print(f"{type(err).__name__}: {str(err).splitlines()[0]}")


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
    print(f"{type(err).__name__}: {str(err).splitlines()[0]}")


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
    print(f"{type(err).__name__}: {str(err).splitlines()[0]}")


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
