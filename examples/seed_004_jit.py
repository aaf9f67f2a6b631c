"""Seed 004, "JIT in JAX": first calls trace and compile, later calls reuse the code;
the jaxpr of a jitted function; impure prints; Python control flow.

Run with ``python examples/seed_004_jit.py``. The notebook's ``%time`` lines are plain
timed calls here.
"""
import time

import absjit
import absjit.numpy as jnp
from absjit import jit, random


def timed(label, fn):
    t0 = time.perf_counter()
    out = fn()
    print(f"{label}: wall time {(time.perf_counter() - t0) * 1e3:.2f} ms")
    return out


def apply_activation(x):
    print("Compile")
    return jnp.maximum(0.0, x)


def get_dot_product(W, X):
    print("Compile")
    return jnp.dot(W, X)


# Always use a seed
key = random.PRNGKey(1234)
W = random.normal(key=key, shape=[100, 1000], dtype=jnp.float32)

# Never reuse the key
key, subkey = random.split(key)
X = random.normal(key=subkey, shape=[1000, 2000], dtype=jnp.float32)

# JIT the functions we have
dot_product_jit = jit(get_dot_product)
activation_jit = jit(apply_activation)

Z = timed("dot_product_jit (first call)", lambda: dot_product_jit(W, X).block_until_ready())
A = timed("activation_jit (first call)", lambda: activation_jit(Z).block_until_ready())

Z = timed("dot_product_jit", lambda: dot_product_jit(W, X).block_until_ready())
A = timed("activation_jit", lambda: activation_jit(Z).block_until_ready())

# Make jaxpr for the activation function
print(absjit.make_jaxpr(activation_jit)(Z))


def number_squared(num):
    print("Received: ", num)
    return num ** 2


# Compiled version
number_squared_jit = jit(number_squared)

# Make jaxprs
print(absjit.make_jaxpr(number_squared_jit)(2))

for i, num in enumerate([2, 4, 8]):
    print("Iteration: ", i + 1)
    print("Result: ", number_squared_jit(num))
    print("=" * 50)


def square_or_cube(x):
    if x % 2 == 0:
        return x ** 2
    else:
        return x * x * x


# JIT transformation
square_or_cube_jit = jit(square_or_cube)  # no error here

# Run the jitted function
try:
    val = square_or_cube_jit(2)
except Exception as ex:
    print(type(ex).__name__, ex)
