"""``ranked`` programs on the xla backend: one absjit entry for every size, an XLA
executable compiled per concrete shape inside it, results equal to ``interpret``."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax

pytestmark = pytest.mark.skipif(jax is None, reason="the xla extra (jax) is not installed")


def norm(X):
    X = X - X.mean(0)  # the count is a dim_value equation
    return X / X.std(0)


def cumulative(x):
    return lax.scan(lambda c, v: (c + v, c * v), 0.0 * x[0], x)


PROGRAMS = {
    "norm": (norm, lambda n: (n, 3)),
    "selu": (lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67), lambda n: (n,)),
    "scan": (cumulative, lambda n: (n, 2)),
    "slices": (lambda x: x[1:] - x[:-1] + x[: x.shape[0] // 2].sum(), lambda n: (n,)),
    "matmul": (lambda x: x @ x.T, lambda n: (n, 4)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_xla_specialises_per_shape_and_matches_interpret(name, rng):
    fn, shape = PROGRAMS[name]
    f = absjit.jit(fn, abstraction="ranked", backend="xla")
    ref = absjit.jit(fn, abstraction="ranked", backend="interpret")
    from absjit.backends.xla import BACKEND
    before = BACKEND.stats["compiles"]
    sizes = (4, 9, 4, 17)
    for n in sizes:
        x = rng.standard_normal(shape(n)).astype(np.float32)
        assert_close(f(x), ref(x), rtol=1e-5, atol=1e-5)
    assert f._cache_size() == 1  # one entry; XLA compiled once per distinct shape
    assert BACKEND.stats["compiles"] - before == len(set(sizes))


def test_xla_checks_assumed_equalities_before_running():
    f = absjit.jit(lambda x, y: x * y, abstraction="ranked", backend="xla")
    assert_close(f(np.ones(5, np.float32), np.full(5, 2.0, np.float32)),
                 np.full(5, 2.0, np.float32))
    with pytest.raises(ValueError, match=r"x\.shape\[0\] = 5"):
        f(np.ones(5, np.float32), np.ones(7, np.float32))


def test_xla_ranked_grad_and_vmap(rng):
    loss = lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)  # noqa: E731
    g = absjit.jit(absjit.grad(loss), abstraction="ranked", backend="xla")
    r = absjit.jit(absjit.grad(loss), abstraction="ranked", backend="interpret")
    v = absjit.jit(absjit.vmap(lambda x: x / x.sum()), abstraction="ranked", backend="xla")
    for n in (3, 8):
        w = rng.standard_normal((4, 2)).astype(np.float32)
        x = rng.standard_normal((n, 4)).astype(np.float32)
        assert_close(g(w, x), r(w, x), rtol=1e-5, atol=1e-5)
        assert_close(v(x), x / x.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
