"""Products on the cpu backend: transposed products computed without transposed copies,
checked against NumPy and the interpret backend."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.numba_cpu.lowering.dot_fold import fold_dot_transposes

from tests.checks import assert_close


def _prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def _closed(fn, *args):
    return absjit.make_jaxpr(fn)(*args)


def test_transposed_product_becomes_a_swapped_product():
    a = np.ones((3, 4), np.float32)
    b = np.ones((3, 5), np.float32)
    closed = _closed(lambda x, y: jnp.transpose(lax.dot_general(x, y, (((0,), (0,)), ((), ())))),
                     a, b)
    folded = fold_dot_transposes(closed)
    assert _prims(closed) == ["dot_general", "transpose"]
    assert _prims(folded) == ["dot_general"]
    (eqn,) = folded.jaxpr.eqns
    assert eqn.invars == closed.jaxpr.eqns[0].invars[::-1]
    assert eqn.params["dimension_numbers"] == (((0,), (0,)), ((), ()))
    assert tuple(eqn.outvars[0].aval.shape) == (5, 4)


def test_product_used_twice_or_returned_is_kept():
    a = np.ones((3, 4), np.float32)
    b = np.ones((4, 5), np.float32)
    both = _closed(lambda x, y: (lambda p: (p, p.T))(x @ y), a, b)
    assert "transpose" in _prims(fold_dot_transposes(both))
    twice = _closed(lambda x, y: (lambda p: p.T + 1.0 + p.T.sum())(x @ y), a, b)
    assert "transpose" in _prims(fold_dot_transposes(twice))


def test_permutations_that_are_not_a_swap_are_kept():
    a = np.ones((2, 3, 4), np.float32)
    b = np.ones((4, 5), np.float32)
    # (2, 3, 5) -> (3, 2, 5) is not "rhs free dims, then lhs free dims"
    closed = _closed(lambda x, y: jnp.transpose(x @ y, (1, 0, 2)), a, b)
    assert "transpose" in _prims(fold_dot_transposes(closed))
    # batch dimensions are never folded
    bb = np.ones((2, 4, 5), np.float32)
    batched = _closed(lambda x, y: jnp.swapaxes(x @ y, 1, 2), a, bb)
    assert "transpose" in _prims(fold_dot_transposes(batched))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shapes,dn,perm", [
    (((6, 4), (6, 5)), (((0,), (0,)), ((), ())), (1, 0)),
    (((4, 6), (5, 6)), (((1,), (1,)), ((), ())), (1, 0)),
    (((2, 3, 6), (6, 5)), (((2,), (0,)), ((), ())), (2, 0, 1)),
    (((6, 4), (6, 2, 5)), (((0,), (0,)), ((), ())), (1, 2, 0)),
])
def test_folded_products_match_numpy_and_interpret(dtype, shapes, dn, perm):
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-3, 4, s).astype(dtype) for s in shapes)

    def f(x, y):
        return jnp.transpose(lax.dot_general(x, y, dn), perm) * 2

    closed = _closed(f, a, b)
    assert "transpose" not in _prims(fold_dot_transposes(closed))
    want = np.transpose(np.tensordot(a, b, dn[0]), perm) * 2
    got = absjit.jit(f, backend="cpu")(a, b)
    ref = absjit.jit(f, backend="interpret")(a, b)
    assert got.dtype == want.dtype
    assert_close(got, want)
    assert_close(got, ref)


def test_mlp_weight_gradients_are_not_transposed_copies():
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 3)).astype(np.float32)
    x = rng.standard_normal((5, 8)).astype(np.float32)

    def loss(ws, x):
        h = jnp.maximum(x @ ws[0], 0)
        return jnp.sum((h @ ws[1]) ** 2)

    g = absjit.jit(absjit.grad(loss))
    closed = _closed(absjit.grad(loss), (w1, w2), x)
    assert "transpose" in _prims(closed)
    assert "transpose" not in _prims(fold_dot_transposes(closed))
    text = g.lower((w1, w2), x).compile().as_text()
    assert "transpose" not in text.split("def kernel")[1]
    got = g((w1, w2), x)
    want = absjit.jit(absjit.grad(loss), backend="interpret")((w1, w2), x)
    for a, b in zip(got, want):
        assert_close(a, b, rtol=1e-5)
