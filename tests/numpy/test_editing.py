"""``absjit.numpy._editing``: append, delete, insert, copy, put_along_axis, place,
choose, rollaxis, diagflat, fromfunction, trim_zeros, sort_complex, partition,
argpartition and mask_indices against NumPy and (where installed) JAX, eagerly and under
every backend (several functions per jitted program), with vmap/grad and bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hst
from hypothesis.extra import numpy as hnp

import absjit
import absjit.numpy as jnp
from absjit import errors
from tests.checks import assert_close, jax_numpy


def _like_jax(got, fn, *args, **kwargs):
    """Values, dtypes and weak types equal to JAX's (skipped without JAX)."""
    if jax_numpy is None:
        return
    want = fn(jax_numpy)(*args, **kwargs) if callable(fn) else \
        getattr(jax_numpy, fn)(*args, **kwargs)
    got_l = got if isinstance(got, (tuple, list)) else [got]
    want_l = want if isinstance(want, (tuple, list)) else [want]
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert np.dtype(g.dtype) == np.dtype(w.dtype), (g.dtype, w.dtype)
        assert bool(g.weak_type) == bool(w.weak_type)
        assert_close(g, np.asarray(w))


X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _static_cases(x):
    return (jnp.append(x, 1.0), jnp.append(x, x[:1], axis=0),
            jnp.delete(x, 1, axis=1), jnp.delete(x, np.array([0, -1]), axis=1),
            jnp.delete(x, slice(None, None, 2)), jnp.insert(x, 1, 5, axis=1),
            jnp.insert(x, np.array([1, 3, 1]), np.array([7., 8., 9.]), axis=1),
            jnp.insert(x, 1, np.array([[7., 8., 9., 10.]]), axis=0),
            jnp.insert(x, slice(0, 2), 0.5), jnp.insert(np.arange(3), -1, 2.7))


def test_append_delete_insert_static_indices():
    # eagerly and on the interpreter: the indices are constants of the program
    want = (np.append(X, 1.0), np.append(X, X[:1], axis=0), np.delete(X, 1, axis=1),
            np.delete(X, [0, -1], axis=1), np.delete(X, slice(None, None, 2)),
            np.insert(X, 1, 5, axis=1), np.insert(X, [1, 3, 1], [7., 8., 9.], axis=1),
            np.insert(X, 1, [[7., 8., 9., 10.]], axis=0), np.insert(X, slice(0, 2), 0.5),
            np.insert(np.arange(3, dtype=np.int32), -1, 2.7))
    for got in (_static_cases(X), absjit.jit(_static_cases, backend="interpret")(X)):
        for g, w in zip(got, want):
            assert_close(g, w.astype(g.dtype))
        _like_jax(got, lambda m: _static_cases, X)


def test_delete_boolean_mask_and_concrete_errors():
    x = np.arange(5, dtype=np.int32)
    mask = np.array([True, False, True, False, False])
    assert_close(jnp.delete(x, mask), np.delete(x, mask))
    with pytest.raises(errors.ConcretizationTypeError, match="assume_unique_indices"):
        absjit.jit(lambda a, i: jnp.delete(a, i))(x, np.array([1]))
    with pytest.raises(IndexError):
        jnp.delete(x, 7)
    with pytest.raises(ValueError, match="integer"):
        jnp.delete(x, np.array([1.5]))
    with pytest.raises(TypeError):
        jnp.delete(x, [1, 2])
    assert_close(jnp.insert(x, np.array([]), 5), x)
    with pytest.raises(TypeError):
        jnp.insert(x, np.array([1.0]), 3)
    with pytest.raises(TypeError):
        jnp.append([1, 2], 3)


@settings(max_examples=15)
@given(hst.data())
def test_insert_matches_numpy(data):
    n = data.draw(hst.integers(0, 5))
    x = np.arange(n, dtype=np.int32)
    idx = data.draw(hnp.arrays(np.int32, hst.integers(0, 4), elements=hst.integers(-n, n)))
    vals = np.arange(100, 100 + idx.size, dtype=np.int32)
    assert_close(jnp.insert(x, idx, vals), np.insert(x, idx, vals))


def test_copy_rollaxis_diagflat_fromfunction():
    def f(x, v):
        return (jnp.copy(x), jnp.rollaxis(jnp.ones((2, 3, 4, 5)), 3, 1),
                jnp.rollaxis(jnp.ones((2, 3, 4, 5)), 1, 4),
                jnp.rollaxis(jnp.ones((2, 3, 4, 5)), -1, -2),
                jnp.diagflat(v), jnp.diagflat(v, -1),
                jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
                jnp.fromfunction(lambda i: jnp.sum(v) * i, (3,), dtype=int))
    v = np.array([[1, 2], [3, 4]], np.int32)
    got = absjit.jit(f, backend="interpret")(X, v)
    ones = np.ones((2, 3, 4, 5))
    want = (X, np.rollaxis(ones, 3, 1), np.rollaxis(ones, 1, 4), np.rollaxis(ones, -1, -2),
            np.diagflat(v), np.diagflat(v, -1),
            np.fromfunction(lambda i, j: i * 10 + j, (2, 3)), 10 * np.arange(3))
    for g, w in zip(got, want):
        assert_close(g, np.asarray(w).astype(g.dtype))
    _like_jax(got, lambda m: f, X, v)
    with pytest.raises(ValueError):
        jnp.rollaxis(X, 0, 5)


P = np.array([[5., 1., 4.], [2., 3., 3.], [1., 0., 9.]], np.float32)


def test_traced_index_functions(mode):
    # One program for every function whose indices are traced values.
    def f(x, i, m, idx, p):
        return (jnp.delete(x, idx, axis=0, assume_unique_indices=True),
                jnp.insert(x, idx, 7.0, axis=0),
                jnp.put_along_axis(x, i, 9.0, axis=1, inplace=False),
                jnp.put_along_axis(x, np.array([1, 5]), 9.0, axis=None, inplace=False),
                jnp.place(x, m, np.array([1., 2., 3.]), inplace=False),
                jnp.choose(np.array([0, 1, 2, 1]), [x[0], x[1], 2.0], mode="wrap"),
                jnp.choose(i[:, 0] - 1, [x[0, :3], x[1, :3]], mode="clip"),
                jnp.choose(i[:, 0] + 3, [x[0, :3], x[1, :3]], mode="wrap"),
                jnp.partition(p, 1, axis=0), jnp.argpartition(p, 1, axis=0))
    i = np.array([[1], [0], [3]], np.int32)
    m = X > 4
    idx = np.array([2, 0], np.int32)
    got = mode(f)(X, i, m, idx, P)
    e1 = X.copy()
    np.put_along_axis(e1, i, 9.0, axis=1)
    e2 = X.copy().ravel()
    e2[[1, 5]] = 9.0
    e3 = X.copy()
    np.place(e3, m, [1., 2., 3.])
    want = (np.delete(X, idx, axis=0), np.insert(X, idx, 7.0, axis=0),
            e1, e2.reshape(X.shape), e3,
            np.choose([0, 1, 2, 1], [X[0], X[1], 2.0]),
            np.choose(i[:, 0] - 1, [X[0, :3], X[1, :3]], mode="clip"),
            np.choose(i[:, 0] + 3, [X[0, :3], X[1, :3]], mode="wrap"))
    for g, w in zip(got, want):
        assert_close(g, np.asarray(w, np.float32))
    assert_close(got[8][1], np.sort(P, axis=0)[1])
    _like_jax(got, lambda mod: f, X, i, m, idx, P)


def test_editing_bad_input():
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put_along_axis(X, np.zeros((3, 1), np.int32), 1.0, axis=1)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.place(X, X > 1, 1.0)
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.choose(np.array([0, 2]), [np.zeros(2), np.ones(2)])
    with pytest.raises(errors.ConcretizationTypeError, match="mode='wrap'"):
        absjit.jit(lambda i: jnp.choose(i, [np.zeros(2), np.ones(2)]))(np.array([0, 1]))
    with pytest.raises(ValueError):
        jnp.choose(np.array([0]), [np.zeros(1)], mode="bogus")
    with pytest.raises(errors.ConcretizationTypeError):
        absjit.jit(jnp.trim_zeros)(np.array([0, 1, 0]))
    with pytest.raises(NotImplementedError):
        jnp.partition(np.array([1j, 2]), 0)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.argpartition(np.arange(3), 3)
    with pytest.raises(ValueError, match="cannot place from empty"):
        jnp.place(X, X > 1, np.zeros(0, np.float32), inplace=False)


def test_trim_zeros_sort_complex_mask_indices():
    for x, trim in [(np.array([0, 0, 1, 0, 2, 0, 0]), "fb"), (np.array([0, 0, 1, 0]), "b"),
                    (np.array([0, 0, 1, 0]), "f"), (np.zeros(3, np.int32), "fb")]:
        assert_close(jnp.trim_zeros(x, trim), np.trim_zeros(x.astype(np.int32), trim))
    two_d = np.array([[0, 0, 0], [0, 1, 0]], np.int32)
    assert_close(jnp.trim_zeros(two_d), np.trim_zeros(two_d))
    for a in (np.array([3, 1, 2.]), np.array([3, 1, 2], np.int8),
              np.array([1 + 2j, 1 + 1j, 5j], np.complex64)):
        got = jnp.sort_complex(a)
        assert_close(got, np.sort_complex(a).astype(got.dtype))
        _like_jax(got, "sort_complex", a)
    got = jnp.mask_indices(3, jnp.triu, 1)
    assert_close(got, tuple(i.astype(np.int32) for i in np.mask_indices(3, np.triu, 1)))
    if jax_numpy is not None:
        _like_jax(got, "mask_indices", 3, jax_numpy.triu, 1)


@settings(max_examples=10)
@given(hnp.arrays(np.float32, hst.sampled_from([(1,), (5,), (7,), (2, 6)]),
                  elements=hst.sampled_from([-1.0, 0.0, 2.0, 3.0, 3.5])), hst.data())
def test_partition_matches_jax_and_numpy(a, data):
    n = a.shape[-1]
    kth = data.draw(hst.integers(-n, n - 1))
    part, arg = jnp.partition(a, kth), jnp.argpartition(a, kth)
    k = kth % n
    s = np.sort(a, axis=-1)
    # NumPy's guarantees: the kth entry in place, smaller before, larger after
    assert_close(part[..., k], s[..., k])
    assert np.all(np.asarray(part[..., :k]) <= s[..., k:k + 1])
    assert np.all(np.asarray(part[..., k + 1:]) >= s[..., k:k + 1])
    assert_close(np.take_along_axis(a, np.asarray(arg), -1)[..., k], s[..., k])
    _like_jax(part, "partition", a, kth)
    _like_jax(arg, "argpartition", a, kth)


def test_editing_under_vmap_and_grad():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = absjit.vmap(lambda r: jnp.insert(r, 1, r[0]))(x)
    assert_close(got, np.stack([np.insert(r, 1, r[0]) for r in x]))
    got = absjit.vmap(lambda r, i: jnp.delete(r, i, assume_unique_indices=True))(
        x, np.array([[0], [2]], np.int32))
    assert_close(got, np.array([[1., 2.], [3., 4.]], np.float32))
    g = absjit.grad(lambda v: jnp.sum(jnp.insert(v, 1, 10.0) ** 2))(np.ones(3, np.float32))
    assert_close(g, np.full(3, 2.0, np.float32))
    g = absjit.grad(lambda v: jnp.sum(jnp.partition(v, 1)[:2]))(
        np.array([3., 1., 2.], np.float32))
    assert_close(g, np.array([0., 1., 1.], np.float32))
    g = absjit.grad(lambda v: jnp.sum(jnp.choose(np.array([1, 0]), [v, 2 * v],
                                                 mode="clip")))(np.ones(2, np.float32))
    assert_close(g, np.array([2., 1.], np.float32))
