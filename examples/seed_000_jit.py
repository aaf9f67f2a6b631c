"""Seed 000, "Just In Time Compilation": jaxprs, jit, static arguments and caching.

Run with ``python examples/seed_000_jit.py`` (``--quick``: one timing run per cell).
The notebook's ``%timeit`` cells are timed loops with small counts here.
"""
import sys
import timeit
from functools import partial

import absjit
import absjit.numpy as jnp


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


# -- How JAX transforms work ------------------------------------------------------
global_list = []


def log2(x):
    global_list.append(x)
    ln_x = jnp.log(x)
    ln_2 = jnp.log(2.0)
    return ln_x / ln_2


print(absjit.make_jaxpr(log2)(3.0))


def log2_with_print(x):
    print("printed x:", x)
    ln_x = jnp.log(x)
    ln_2 = jnp.log(2.0)
    return ln_x / ln_2


print(absjit.make_jaxpr(log2_with_print)(3.))


def log2_if_rank_2(x):
    if x.ndim == 2:
        ln_x = jnp.log(x)
        ln_2 = jnp.log(2.0)
        return ln_x / ln_2
    else:
        return x


print(absjit.make_jaxpr(log2_if_rank_2)(absjit.numpy.array([1, 2, 3])))


# -- JIT compiling a function ------------------------------------------------------
def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


x = jnp.arange(1000000)
timed("selu (op by op)", lambda: selu(x).block_until_ready(), number=2)

selu_jit = absjit.jit(selu)
selu_jit(x).block_until_ready()  # warm up
timed("selu_jit", lambda: selu_jit(x).block_until_ready(), number=5)


# -- Why can't we just JIT everything? ----------------------------------------------
def f(x):
    if x > 0:
        return x
    else:
        return 2 * x


f_jit = absjit.jit(f)
try:
    f_jit(10)  # Should raise an error.
except absjit.errors.ConcretizationTypeError as err:
    print(f"{type(err).__name__}: {err}")


def g(x, n):
    i = 0
    while i < n:
        i += 1
    return x + i


g_jit = absjit.jit(g)
try:
    g_jit(10, 20)  # Should raise an error.
except absjit.errors.ConcretizationTypeError as err:
    print(f"{type(err).__name__}: {err}")


@absjit.jit
def loop_body(prev_i):
    return prev_i + 1


def g_inner_jitted(x, n):
    i = 0
    while i < n:
        i = loop_body(i)
    return x + i


print(repr(g_inner_jitted(10, 20)))

f_jit_correct = absjit.jit(f, static_argnums=0)
print(f_jit_correct(10))

g_jit_correct = absjit.jit(g, static_argnames=['n'])
print(g_jit_correct(10, 20))


@partial(absjit.jit, static_argnames=['n'])
def g_jit_decorated(x, n):
    i = 0
    while i < n:
        i += 1
    return x + i


print(g_jit_decorated(10, 20))

# -- When to use JIT ----------------------------------------------------------------
print("g jitted:")
timed("g_jit_correct", lambda: g_jit_correct(10, 20).block_until_ready(), number=20)
print("g:")
timed("g", lambda: g(10, 20), number=20)


# -- Caching ------------------------------------------------------------------------
def unjitted_loop_body(prev_i):
    return prev_i + 1


def g_inner_jitted_partial(x, n):
    i = 0
    while i < n:
        # Don't do this! each time the partial returns
        # a function with different hash
        i = absjit.jit(partial(unjitted_loop_body))(i)
    return x + i


def g_inner_jitted_lambda(x, n):
    i = 0
    while i < n:
        # Don't do this!, lambda will also return
        # a function with a different hash
        i = absjit.jit(lambda x: unjitted_loop_body(x))(i)
    return x + i


def g_inner_jitted_normal(x, n):
    i = 0
    while i < n:
        # this is OK, since absjit can find the
        # cached, compiled function
        i = absjit.jit(unjitted_loop_body)(i)
    return x + i


print("jit called in a loop with partials:")
timed("partials", lambda: g_inner_jitted_partial(10, 20).block_until_ready(), number=2)
print("jit called in a loop with lambdas:")
timed("lambdas", lambda: g_inner_jitted_lambda(10, 20).block_until_ready(), number=2)
print("jit called in a loop with caching:")
timed("caching", lambda: g_inner_jitted_normal(10, 20).block_until_ready(), number=3)
