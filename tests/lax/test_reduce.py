"""``lax.reduce``: known monoids become reduction primitives, anything else is a left
fold; both compared with a NumPy loop and with JAX where installed."""
import functools

import numpy as np
import pytest
from hypothesis import given, strategies as st

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax


def _np_fold(x, init, op, dims):
    """The elements over ``dims`` (row-major) folded into ``init`` one at a time."""
    kept = [d for d in range(x.ndim) if d not in dims]
    moved = np.transpose(x, sorted(dims) + kept)
    n = int(np.prod([x.shape[d] for d in dims]))
    flat = moved.reshape((n,) + tuple(x.shape[d] for d in kept))
    acc = np.full(flat.shape[1:], init, x.dtype)
    for item in flat:
        acc = op(acc, item).astype(x.dtype)
    return acc


def _prims(f, *args):
    return {e.primitive.name for e in absjit.make_jaxpr(f)(*args).jaxpr.eqns}


MONOIDS = [
    ("add", lax.add, np.add, 0.0, "reduce_sum"),
    ("mul", lax.mul, np.multiply, 1.0, "reduce_prod"),
    ("max", lax.max, np.maximum, -np.inf, "reduce_max"),
    ("min", lax.min, np.minimum, np.inf, "reduce_min"),
]


@pytest.mark.parametrize("name,op,np_op,init,prim", MONOIDS, ids=[m[0] for m in MONOIDS])
def test_monoids_lower_to_reductions(name, op, np_op, init, prim, mode):
    x = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 7) / 3 + 0.5
    f = lambda a: lax.reduce(a, np.float32(init), op, (0, 2))  # noqa: E731
    assert_close(mode(f)(x), _np_fold(x, init, np_op, (0, 2)), rtol=1e-5)
    assert prim in _prims(f, x) and "scan" not in _prims(f, x)
    if jax is not None:
        out = f(x)
        ref = jax.lax.reduce(x, np.float32(init), getattr(jax.lax, name), (0, 2))
        assert out.dtype == ref.dtype and out.weak_type == ref.weak_type


def test_integer_and_bool_monoids(mode):
    i = np.array([[3, 5, 6], [1, 12, 7]], np.int32)
    b = np.array([[True, False], [True, True]])
    out = mode(lambda a, c: (lax.reduce(a, np.int32(-1), lax.bitwise_and, (1,)),
                             lax.reduce(a, np.int32(0), lax.bitwise_or, (0,)),
                             lax.reduce(c, True, lax.bitwise_and, (0,)),
                             lax.reduce(c, False, jnp.add, (1,)),
                             lax.reduce(a, np.int32(0), lax.bitwise_xor, (1,))))(i, b)
    expected = (np.bitwise_and.reduce(i, axis=1), np.bitwise_or.reduce(i, axis=0),
                b.all(0), b.any(1), np.bitwise_xor.reduce(i, axis=1))
    assert_close(list(out), list(expected))


def test_non_identity_init_is_folded_in_once(mode):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = mode(lambda a: (lax.reduce(a, np.float32(5), lax.add, (1,)),
                          lax.reduce(a, np.float32(5), lax.add, (0, 1)),
                          lax.reduce(a, np.float32(4), lax.max, (1,))))(x)
    assert_close(list(out), [x.sum(1) + 5, np.float32(x.sum() + 5), np.maximum(x.max(1), 4)])
    # a traced init value
    traced = mode(lambda a, i: lax.reduce(a, i, lax.min, (0,)))(x, np.float32(1))
    assert_close(traced, np.minimum(x.min(0), 1))


def test_general_computation_is_a_left_fold(mode):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def comp(a, b):
        return a * b + 1
    f = lambda a: lax.reduce(a, np.float32(1), comp, (1,))  # noqa: E731
    assert_close(mode(f)(x), _np_fold(x, 1.0, comp, (1,)))
    assert "scan" in _prims(f, x)
    if jax is not None:
        assert_close(f(x), np.asarray(jax.lax.reduce(x, np.float32(1), comp, (1,))))
    g = lambda a: lax.reduce(a, np.float32(0), lambda p, q: p - q, (0, 1))  # noqa: E731
    assert_close(mode(g)(x), _np_fold(x, 0.0, np.subtract, (0, 1)))


def test_pytree_operands(mode):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    k = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    out = mode(lambda a, b: lax.reduce((a, b), (np.float32(0), np.int32(1)),
                                       lambda p, q: (p[0] + q[0], p[1] * q[1]), (1,)))(x, k)
    assert_close(list(out), [x.sum(1), k.prod(1).astype(np.int32)])

    def argmax(p, q):  # a two-operand computation that is no single monoid
        take = q[0] > p[0]
        return jnp.where(take, q[0], p[0]), jnp.where(take, q[1], p[1])
    idx = np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3))
    vals = np.array([[1.0, 3.0, 2.0], [5.0, 0.0, 5.0]], np.float32)
    m, i = mode(lambda v, j: lax.reduce((v, j), (np.float32(-np.inf), np.int32(-1)), argmax,
                                        (1,)))(vals, idx)
    assert_close(m, vals.max(1))
    assert_close(i, np.array([1, 0], np.int32))
    d = lax.reduce({"a": x, "b": x}, {"a": 0.0, "b": -np.inf},
                   lambda p, q: {"a": p["a"] + q["a"], "b": lax.max(p["b"], q["b"])}, (0,))
    assert_close(d["a"], x.sum(0))
    assert_close(d["b"], x.max(0))


def test_edge_cases():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_close(lax.reduce(x, np.float32(5), lax.add, ()), x)
    assert_close(lax.reduce(np.zeros((0, 3), np.float32), np.float32(7), lax.add, (0,)),
                 np.full(3, 7, np.float32))
    assert_close(lax.reduce(np.zeros((0, 3), np.float32), np.float32(7),
                            lambda a, b: a * b - 1, (0,)), np.full(3, 7, np.float32))
    scalar = lax.reduce(3.0, 0.0, lax.add, ())
    assert scalar.weak_type
    if jax is not None:
        assert scalar.dtype == jax.lax.reduce(3.0, 0.0, jax.lax.add, ()).dtype


def test_grad():
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    g_sum = absjit.grad(lambda a: lax.reduce(a, np.float32(0), lax.add, (0, 1)))(x)
    g_prod = absjit.grad(lambda a: lax.reduce(a, np.float32(2), lax.mul, (0, 1)))(x)
    g_fold = absjit.grad(lambda a: jnp.sum(lax.reduce(a, np.float32(1),
                                                      lambda p, q: p * q + 1, (1,))))(x)
    assert_close(g_sum, np.ones_like(x))
    assert_close(g_prod, 2 * np.prod(x) / x)
    # The derivative of the left fold itself (JAX's JVP re-associates the fold, so its
    # gradient of a non-associative computation differs from this one).
    f = lambda r: ((1 * r[0] + 1) * r[1] + 1) * r[2] + 1  # noqa: E731
    ref = [[(f([*r[:i], r[i] + 1e-3, *r[i + 1:]]) - f([*r[:i], r[i] - 1e-3, *r[i + 1:]])) / 2e-3
            for i in range(3)] for r in x.astype(np.float64)]
    assert_close(g_fold, np.array(ref, np.float32), rtol=1e-4)


def test_bad_input():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.reduce(x, 0.0, lax.add, (2,))
    with pytest.raises(ValueError, match="duplicates"):
        lax.reduce(x, 0.0, lax.add, (0, 0))
    with pytest.raises(ValueError, match="structure"):
        lax.reduce(x, (0.0,), lax.add, (0,))
    with pytest.raises(ValueError, match="structure"):
        lax.reduce(x, 0.0, lambda a, b: (a + b, a), (0,))
    with pytest.raises(ValueError, match="equal shapes"):
        lax.reduce((x, np.ones(3, np.float32)), (0.0, 0.0),
                   lambda a, b: (a[0] + b[0], a[1] + b[1]), (0,))
    with pytest.raises(ValueError, match="scalars"):
        lax.reduce(x, np.zeros(3, np.float32), lax.add, (0,))


@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_reduce_hypothesis(shape, data):
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1)))))
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 5 - 2
    fold = functools.partial(_np_fold, x, 0.5)
    assert_close(lax.reduce(x, np.float32(0.5), lambda a, b: a * 0.5 + b, dims),
                 fold(lambda a, b: a * np.float32(0.5) + b, dims) if dims else x, rtol=1e-5)
    assert_close(lax.reduce(x, np.float32(0), lax.add, dims), x.sum(dims) if dims else x,
                 rtol=1e-5)
