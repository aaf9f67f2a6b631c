"""Seed 002, "Tracer in action": traced prints, entries that are kept, globals closed
over at trace time, iterators, static arguments.

Run with ``python examples/seed_002_tracer.py``.
"""
from functools import partial

import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import jit, lax

rng = np.random.default_rng()
key = absjit.random.PRNGKey(0)


@jit
def dotproduct(x, y):
    print("Inside dotproduct")
    print(f"x={x}")
    print(f"y={y}")
    z = jnp.dot(x, y)
    print(f"z={z}")
    return z


# First invocation: traced with ShapedArray tracers.
npx = rng.random(100)
jnpx = jnp.asarray(npx)
print(np.dot(npx, npx.T))
print(repr(dotproduct(jnpx, jnpx.T)))

# Second invocation: compiled, no prints.
npx = rng.random(100)
jnpx = jnp.asarray(npx)
print(np.dot(npx, npx.T))
print(repr(dotproduct(jnpx, jnpx.T)))

# With different dims: another entry.
npx = rng.random(50)
jnpx = jnp.asarray(npx)
print(np.dot(npx, npx.T))
print(repr(dotproduct(jnpx, jnpx.T)))

# The old entry is still there.
npx = rng.random(100)
jnpx = jnp.asarray(npx)
print(np.dot(npx, npx.T))
print(repr(dotproduct(jnpx, jnpx.T)))

# -- Global state ----------------------------------------------------------------------
power = 5


def powerof(x):
    return x ** power


print(powerof(2))
power = 10
print(powerof(2))

power = 5
print(repr(jit(powerof)(2)))
power = 10
print(repr(jit(powerof)(2)))  # still 32: power was closed over when traced
power = 10
print(repr(jit(powerof)(jnp.array([2., 2.]))))  # a new entry sees power = 10


# -- Iterators ---------------------------------------------------------------------------
@jit
def sum_of_sqs(xs):
    return jnp.sum(jnp.array([x**2 for x in xs]))


print(repr(sum_of_sqs([0., 1., 2.])))

try:
    sum_of_sqs(iter([0., 1., 2.]))
except Exception as err:
    print(f"{type(err)}\n{err}")

ary = jnp.array([0., 1., 2.])
print(repr(lax.fori_loop(0, 3, lambda idx, acc: acc + ary[idx]**2, 0)))

ary = jnp.array([0., 1., 2.])
it = iter(ary)
try:
    print(repr(lax.fori_loop(0, 3, lambda idx, acc: acc + next(it)**2, 0)))
except Exception as err:
    print(f"{type(err)}\n{err}")


@jit
def sum_of_sqs_2(xs):
    answer = 0
    for x in xs:
        answer += x**2
    return answer


print(repr(sum_of_sqs_2([0., 1., 2.])))
print(repr(sum_of_sqs_2([0., 1., 2., 3., 4.])))


# -- JAXPR -------------------------------------------------------------------------------
def myrelu(x):
    return jnp.maximum(0., x)


print(absjit.make_jaxpr(myrelu)(5.))


# -- Control flow ----------------------------------------------------------------------------
def f(x, n):
    if n > 0:
        return 3 * x**3 + 2 * x**2 + n
    else:
        return 2 * x - n


try:
    jf = jit(f)(2., 5.)
except Exception as err:
    print(f"{type(err)}\n{err}")


@jit
def g(x):
    return 3 * x**3 + 2 * x**2


def f(x, n):  # noqa: F811 - the seed redefines f: a pure Python function now
    if n > 0:
        return g(x) + n
    else:
        return 2 * x - n


print(repr(f(2., 5.)))


def f2(x, n):
    print(f"x={x} n={n}")
    if n > 0:
        return 3 * x**3 + 2 * x**2 + n
    else:
        return 2 * x - n


jitf = jit(f2, static_argnames=["n"])
print(repr(jitf(2., 5.)))
print(repr(jitf(3., 5.)))
print(repr(jitf(2., 3.)))


@partial(jit, static_argnames=["n"])
def f3(x, n):
    print(f"x={x} n={n}")
    if n > 0:
        return 3 * x**3 + 2 * x**2 + n
    else:
        return 2 * x - n


print(repr(f3(2., 5.)))
print(repr(f3(3., 5.)))
print(repr(f3(2., 4.)))
