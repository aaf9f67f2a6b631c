"""A short tour of absjit: tracing, abstraction levels, eager arrays, jit and errors.

Run with ``python examples/quickstart.py`` after ``pip install -e .``.
"""
import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import errors, lax


def section(title):
    print(f"\n== {title} ==")


def show_error(what, e):
    """Print an error as a user meets it: its type and first line, then its fixes."""
    lines = str(e).splitlines()
    print(f"{what} raises {type(e).__name__}: {lines[0]}")
    fixes = [line for line in lines[1:]
             if line.startswith(("The error occurred", "Possible fix"))]
    for line in fixes or lines[1:2]:
        print("    " + line)


section("Tracing a function into a jaxpr")


def log2(x):
    return jnp.log(x) / jnp.log(2.0)


print(absjit.make_jaxpr(log2)(3.0))

section("Eager arrays follow JAX's dtype rules")
x = jnp.arange(5)
print(repr(x))
print(repr(x * 2.5))                      # int32 * weak float -> float32
print(repr(jnp.add(1, 1.0)))              # Python scalars stay weakly typed
try:
    lax.add(1, 1.0)                       # lax does no implicit promotion
except TypeError as e:
    show_error("lax.add(1, 1.0)", e)
try:
    x[0] = 10
except TypeError as e:
    show_error("x[0] = 10", e)

section("Abstraction levels decide what Python may do with traced values")


def relu_or_neg(x):
    if x.sum() > 0:                       # branches on a value
        return jnp.maximum(x, 0.0)
    return -x


print(absjit.make_jaxpr(relu_or_neg, abstraction="concrete")(np.ones(3, np.float32)))
try:
    absjit.make_jaxpr(relu_or_neg)(np.ones(3, np.float32))  # default: shaped
except errors.ConcretizationTypeError as e:
    show_error("make_jaxpr(relu_or_neg)", e)

section("jit: trace once per shape and dtype, then run compiled code")


@absjit.jit
def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


data = jnp.asarray(np.linspace(-2, 2, 5, dtype=np.float32))
print(selu(data))
print("entries in the cache:", selu._cache_size(), "| backend:", absjit.backends())
try:
    absjit.jit(relu_or_neg)(data)
except errors.TracerBoolConversionError as e:
    show_error("jit(relu_or_neg)", e)

section("grad traces at the concrete level: Python control flow works")


def f(x):
    return x ** 2 if x > 0 else -x


print("grad(f)(3.0) =", absjit.grad(f)(3.0), " grad(f)(-3.0) =", absjit.grad(f)(-3.0))

section("vmap and structured control flow compose with jit and grad")


def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


w = jnp.ones((3, 2))
xs = jnp.asarray(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
per_example = absjit.jit(absjit.vmap(absjit.grad(loss), in_axes=(None, 0)))(w, xs)
print("per-example gradients:", per_example.shape)
total = lax.fori_loop(0, 10, lambda i, acc: acc + i * 2.0, 0.0)
print("fori_loop sum:", total)
