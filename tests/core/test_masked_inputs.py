"""A NumPy masked array is refused at every entry point (its mask would be silently
dropped; JAX raises too): eager ``lax``, ``grad``, ``vmap``, ``jvp``, ``device_put``,
``make_jaxpr``, closed-over constants under ``jit``, and ``absjit.numpy``."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.lax as lax
import absjit.numpy as jnp

M = np.ma.array([1.0, 1e9, 3.0], mask=[0, 1, 0], dtype=np.float32)
X = np.ones(3, np.float32)

ENTRY_POINTS = {
    "lax.add": lambda: lax.add(M, X),
    "lax.exp": lambda: lax.exp(M),
    "grad": lambda: absjit.grad(lambda v: jnp.sum(v * 2))(M),
    "grad closing over it": lambda: absjit.grad(lambda v: jnp.sum(v * M))(X),
    "vmap": lambda: absjit.vmap(lambda v: v * 2)(M),
    "vmap closing over it": lambda: absjit.vmap(lambda v: lax.add(v, M))(np.ones((2, 3),
                                                                                  np.float32)),
    "jvp": lambda: absjit.jvp(lambda v: v * 2, (M,), (X,)),
    "device_put": lambda: absjit.device_put(M),
    "make_jaxpr": lambda: absjit.make_jaxpr(lambda v: v + 1)(M),
    "jit closing over it": lambda: absjit.jit(lambda v: lax.mul(v, M))(X),
    "jit argument": lambda: absjit.jit(lambda v: v + 1)(M),
    "jnp.sum": lambda: jnp.sum(M),
    "Array operator": lambda: jnp.ones(3) + M,
}


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_masked_array_is_refused(name):
    with pytest.raises(ValueError, match="masked arrays are not supported"):
        ENTRY_POINTS[name]()


def test_filled_masked_array_is_accepted():
    # the fix the message suggests works, and the value is the one the user chose
    got = lax.add(M.filled(0), X)
    np.testing.assert_array_equal(np.asarray(got), np.float32([2, 1, 4]))


@pytest.mark.parametrize("name", ["lax.add", "vmap", "jit argument"])
def test_jax_refuses_the_same(name):
    from tests.checks import jax
    if jax is None:
        pytest.skip("JAX is not installed")
    calls = {"lax.add": lambda: jax.lax.add(M, X),
             "vmap": lambda: jax.vmap(lambda v: v * 2)(M),
             "jit argument": lambda: jax.jit(lambda v: v + 1)(M)}
    with pytest.raises(ValueError):
        calls[name]()
