"""The ``ranked`` level end to end: one entry for every size, run on ``interpret`` and
``cpu``, checked against NumPy; assumed equalities checked before any kernel runs."""
from __future__ import annotations

import logging

import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close

BACKENDS = ["interpret", "cpu"]


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def selu_np(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.expm1(x.astype(np.float64)) + 0 * alpha)


def norm(X):
    X = X - X.mean(0)
    return X / X.std(0)


def ranked(f, backend, **kw):
    return absjit.jit(f, abstraction="ranked", backend=backend, **kw)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_entry_serves_every_size(backend, rng):
    f, g = ranked(selu, backend), ranked(norm, backend)
    for n in (10, 1000, 100_000, 7, 2):
        x = rng.standard_normal(n).astype(np.float32)
        assert_close(f(x), selu_np(x), rtol=1e-5, atol=1e-6, check_dtype=False)
        X = rng.standard_normal((n, 3)).astype(np.float32)
        Xd = X.astype(np.float64)
        assert_close(g(X), (Xd - Xd.mean(0)) / Xd.std(0), rtol=1e-4, atol=1e-4,
                     check_dtype=False)
    assert f._cache_size() == 1 and g._cache_size() == 1
    f(np.ones((3, 4), np.float32))  # a new rank: a new entry, not an error
    f(np.ones(1, np.float32))  # a size-1 axis broadcasts differently: a new entry
    assert f._cache_size() == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_mismatched_sizes_raise_naming_both_arguments(backend):
    f = ranked(lambda x, y: x * y + 1.0, backend)
    assert_close(f(np.ones(5, np.float32), np.full(5, 2, np.float32)), np.full(5, 3.0, np.float32))
    with pytest.raises(ValueError, match=r"y\.shape\[0\].*x\.shape\[0\]") as info:
        f(np.ones(5, np.float32), np.ones(7, np.float32))
    assert "5" in str(info.value) and "7" in str(info.value)
    g = absjit.jit(lambda x, w: x @ w, abstraction={"x": "ranked"}, backend=backend)
    w = np.ones((3, 2), np.float32)
    assert_close(g(np.ones((4, 3), np.float32), w), np.full((4, 2), 3.0, np.float32))
    with pytest.raises(ValueError, match=r"x\.shape\[1\].*3"):
        g(np.ones((4, 5), np.float32), w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_assumed_bounds_are_checked_at_entry(backend):
    f = ranked(lambda x: x[2:4] * 2.0, backend)
    assert_close(f(np.arange(6, dtype=np.float32)), np.array([4.0, 6.0], np.float32))
    with pytest.raises(ValueError, match=r"x\.shape\[0\].*>= 4"):
        f(np.arange(3, dtype=np.float32))
    m = ranked(lambda x: jnp.max(x), backend)
    assert float(m(np.arange(5, dtype=np.float32))) == 4.0
    with pytest.raises(ValueError, match="empty"):
        m(np.zeros(0, np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_code(backend, rng):
    def f(x, y):
        n = x.shape[0]
        a = jnp.zeros((n, 3)) + x[:, None]
        b = x * jnp.arange(n) / (n - 1)
        c = (x[1:] - x[:-1]).sum() + x[::-1][0] + x[::2].sum()
        d = jnp.concatenate([x, x * y]).reshape(2, -1).sum(0) / y.shape[0]
        return a, b, c, d, jnp.cumsum(x)

    def f_np(x, y):
        n = x.shape[0]
        return (np.zeros((n, 3)) + x[:, None], x * np.arange(n) / (n - 1),
                (x[1:] - x[:-1]).sum() + x[::-1][0] + x[::2].sum(),
                np.concatenate([x, x * y]).reshape(2, -1).sum(0) / n, np.cumsum(x))

    g = ranked(f, backend)
    for n in (5, 8):
        x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        for got, want in zip(g(x, y), f_np(x, y)):
            assert_close(got, want, rtol=1e-5, atol=1e-5, check_dtype=False)
    assert g._cache_size() == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_transforms_and_control_flow_over_ranked_sizes(backend, rng):
    def vec(n):
        return (rng.standard_normal(n).astype(np.float32),)

    def mat(n):
        return (rng.standard_normal((n, 4)).astype(np.float32),)

    def mat_vec(n):
        X = rng.standard_normal((n, 4)).astype(np.float32)
        return X, X[0]

    cases = [
        (absjit.grad(lambda x: jnp.sum(jnp.sin(x) ** 2)), vec,
         lambda x: 2 * np.sin(x) * np.cos(x)),
        (absjit.grad(lambda X: jnp.mean((X - X.mean(0)) ** 2)), mat,
         lambda X: 2 * (X - X.mean(0)) / X.size),
        (absjit.vmap(lambda r: jnp.dot(r, r)), mat, lambda X: (X * X).sum(1)),
        (lambda x: lax.scan(lambda c, a: (c + a, c * a), 0.0, x)[1], vec,
         lambda x: np.concatenate([[0.0], np.cumsum(x)[:-1]]) * x),
        (lambda x: lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i] * i, 0.0), vec,
         lambda x: (x * np.arange(len(x))).sum()),
        (lambda x: lax.cond(x.sum() > 0, lambda: x + 1, lambda: x - 1), vec,
         lambda x: x + 1 if x.sum() > 0 else x - 1),
        (lambda X, v: X @ v + absjit.jit(lambda y: y * 2)(v).sum(), mat_vec,
         lambda X, v: X @ v + 2 * v.sum()),
    ]
    if backend == "cpu":  # every new kernel costs a Numba compile: a representative few
        cases = [cases[i] for i in (1, 3, 4)]
    for f, make, ref in cases:
        g = ranked(f, backend)
        for n in (6, 3):
            args = make(n)
            assert_close(g(*args), ref(*args), rtol=1e-4, atol=1e-5, check_dtype=False)
        assert g._cache_size() == 1


def test_ranked_jit_under_eager_transforms_and_per_argument_levels():
    f = absjit.jit(lambda x, n: jnp.sum(x ** n), abstraction={"x": "ranked", "n": "static"})
    x = np.arange(4, dtype=np.float32)
    assert float(f(x, 2)) == 14.0 and float(f(x[:3], 2)) == 5.0 and f._cache_size() == 1
    assert float(f(x, 3)) == 36.0 and f._cache_size() == 2
    assert_close(absjit.grad(lambda x: f(x, 2))(x), 2 * x)
    assert_close(absjit.vmap(lambda r: f(r, 2))(np.ones((3, 2), np.float32)), np.full(3, 2.0, np.float32))


def test_explain_cache_misses_shows_the_ranked_key(caplog):
    f = absjit.jit(lambda x: x + 1, abstraction="ranked", backend="interpret")
    absjit.config.update("explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="absjit"):
            f(np.ones(3, np.float32))
            f(np.ones(9, np.float32))  # a hit: nothing logged
            f(np.ones((2, 2), np.float32))
    finally:
        absjit.config.update("explain_cache_misses", False)
    assert "x: f32[?] -> f32[?,?]" in caplog.text
    assert caplog.text.count("x: ") == 2


def test_a_program_cut_into_pieces_passes_sizes_to_them(rng):
    def chain(x):
        for k in range(30):
            x = x - x.mean() * (k % 3) + jnp.sin(x)
        return x

    g = ranked(chain, "cpu")
    ref = absjit.jit(chain, backend="interpret")
    for n in (4, 9):
        x = rng.standard_normal(n).astype(np.float32)
        assert_close(g(x), ref(x), rtol=1e-4, atol=1e-4)
    exe = g.lower(x).compile()
    assert exe.executable.n_pieces > 1
    assert g._cache_size() == 1


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_sizes_the_program_fixes_are_checked_at_entry(backend):
    # every size of x is fixed by the program: by a product with a constant matrix, by
    # an explicit broadcast_to; the function still compiles, and checks the size
    w = np.ones((3, 4), np.float32)
    f = absjit.jit(lambda x: x @ w, abstraction="ranked", backend=backend)
    np.testing.assert_allclose(np.asarray(f(np.ones(3, np.float32))), np.full(4, 3.0))
    with pytest.raises(ValueError, match=r"x.shape\[0\]"):
        f(np.ones(5, np.float32))
    g = absjit.jit(lambda x: jnp.broadcast_to(x, (3, 4)) * 2, abstraction="ranked",
                   backend=backend)
    np.testing.assert_allclose(np.asarray(g(np.arange(4.0, dtype=np.float32))),
                               np.broadcast_to(np.arange(4.0) * 2, (3, 4)))
    with pytest.raises(ValueError, match=r"x.shape\[0\]"):
        g(np.arange(5.0, dtype=np.float32))
    # broadcast_to a shape read from another argument unifies the two sizes
    h = absjit.jit(lambda x, y: jnp.broadcast_to(x, y.shape) + y, abstraction="ranked",
                   backend=backend)
    np.testing.assert_allclose(np.asarray(h(np.ones(3, np.float32),
                                            np.ones((2, 3), np.float32))), 2.0)
    with pytest.raises(ValueError, match="ranked"):
        h(np.ones(4, np.float32), np.ones((2, 3), np.float32))


def test_operations_unify_sizes_fixed_or_scaled(rng):
    # concatenate requires the other axes equal: it unifies them
    f = absjit.jit(lambda x, y: jnp.concatenate([x, y[:1]], 0), abstraction="ranked",
                   backend="cpu")
    x, y = rng.standard_normal((3, 5)), rng.standard_normal((2, 5))
    np.testing.assert_allclose(np.asarray(f(x, y)), np.concatenate([x, y[:1]]))
    with pytest.raises(ValueError, match=r"y.shape\[1\] must equal x.shape\[1\]"):
        f(x, rng.standard_normal((2, 4)))
    # a size fixed to a number by one operation meets another symbolic size
    g = absjit.jit(lambda x, y: jnp.where(jnp.broadcast_to(x, (2, 4)) > 0, y, -y),
                   abstraction="ranked", backend="cpu")
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    np.testing.assert_allclose(np.asarray(g(a, b)), np.where(np.broadcast_to(a, (2, 4)) > 0,
                                                             b, -b))
    with pytest.raises(ValueError, match=r"y.shape\[0\] must be 4"):
        g(a, rng.standard_normal(5))
    # a multiple of a size equal to a number: 2*x0 == 8 makes x0 4
    h = absjit.jit(lambda x: jnp.broadcast_to(jnp.concatenate([x, x]), (2, 8)),
                   abstraction="ranked", backend="cpu")
    np.testing.assert_allclose(np.asarray(h(np.arange(4.0))),
                               np.broadcast_to(np.arange(4.0).repeat(1).tolist() * 2, (2, 8)))
    with pytest.raises(ValueError, match=r"x.shape\[0\] must be 4"):
        h(np.arange(5.0))
    with pytest.raises(ValueError, match="broadcast"):  # 2*x0 == 7 has no solution
        absjit.jit(lambda x: jnp.broadcast_to(jnp.concatenate([x, x]), (2, 7)),
                   abstraction="ranked")(np.arange(4.0))


def test_broadcasting_a_product_of_sizes_to_a_number_is_inconclusive():
    from absjit.errors import InconclusiveDimensionError
    f = absjit.jit(lambda x: jnp.broadcast_to(x.reshape(-1), (3, 48)), abstraction="ranked")
    with pytest.raises(InconclusiveDimensionError, match=r"x.shape\[0\], x.shape\[1\]"):
        f(np.ones((4, 12), np.float32))
    g = absjit.jit(lambda x: jnp.broadcast_to(x.reshape(-1), (3, 48)),
                   abstraction={"x": "shaped"})
    assert g(np.ones((4, 12), np.float32)).shape == (3, 48)


# Wrappers that broadcast an argument to a shape they compute (not ``x + y``): each
# fixes the symbolic size to the target's, and the compiled code checks it at entry.
_FIXED_TARGET = {
    "full": (lambda v: jnp.full((3, 5), v), lambda v: np.full((3, 5), v),
             [np.arange(5.0)], [np.arange(4.0)]),
    "at_set": (lambda x, v: x.at[:3].set(v), lambda x, v: np.concatenate([v, x[3:]]),
               [np.zeros(6), np.ones(3)], [np.zeros(6), np.ones(4)]),
    "sum_where": (lambda x: jnp.sum(x, where=np.array([True, False, True, True])),
                  lambda x: np.sum(x, where=np.array([True, False, True, True])),
                  [np.arange(4.0)], [np.arange(5.0)]),
    "broadcast_arrays": (lambda x: jnp.broadcast_arrays(x, np.ones((2, 4)))[0],
                         lambda x: np.broadcast_arrays(x, np.ones((2, 4)))[0],
                         [np.arange(4.0)], [np.arange(3.0)]),
    "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1),
                        lambda x, i: np.take_along_axis(x, i, axis=1),
                        [np.arange(12.0).reshape(3, 4), np.array([[0, 3]] * 3)],
                        [np.arange(12.0).reshape(3, 4), np.array([[0, 3]] * 2)]),
    "empty_broadcast": (lambda x: x + jnp.ones(0), lambda x: x + np.ones(0),
                        [np.ones(0)], [np.ones(3)]),
    "broadcast_to_empty": (lambda x: jnp.broadcast_to(x, (3, 0)),
                           lambda x: np.broadcast_to(x, (3, 0)), [np.ones(0)], [np.ones(2)]),
}


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("name", sorted(_FIXED_TARGET))
def test_broadcast_to_a_computed_shape_fixes_the_size(backend, name):
    fn, ref, good, bad = _FIXED_TARGET[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = absjit.jit(fn, abstraction="ranked", backend=backend)
        np.testing.assert_allclose(np.asarray(f(*good)), ref(*good))
        with pytest.raises(ValueError, match=r"shape\[\d\] (must|= \d+)"):
            f(*bad)
    assert f._cache_size() == 1


def test_broadcast_shape_comparisons_record_nothing():
    # comparing shapes inside the library must not assume an array non-empty (a user's
    # ``x.shape[0] == 0`` does): x + ones(0) on an empty x traces and makes x0 zero
    f = absjit.jit(lambda x: x * 2 + jnp.zeros(0), abstraction="ranked")
    assert "f32[0]" in str(absjit.make_jaxpr(lambda x: x + jnp.zeros(0),
                                             abstraction="ranked")(np.ones(0)))
    assert f(np.ones(0, np.float32)).shape == (0,)
    # a product of sizes broadcast against a number has many answers
    from absjit.errors import InconclusiveDimensionError
    with pytest.raises(InconclusiveDimensionError, match=r"x.shape\[0\], x.shape\[1\]"):
        absjit.jit(lambda x: x.reshape(-1) + jnp.ones(12), abstraction="ranked")(
            np.ones((3, 4), np.float32))
    # which cross product formula applies depends on a size Python must know
    with pytest.raises(InconclusiveDimensionError, match="jnp.cross"):
        absjit.jit(lambda x: jnp.cross(x, np.ones(3)), abstraction="ranked")(np.ones(3))


def test_strided_slice_size_meets_itself(rng):
    # ``x[:, ::2]`` twice: its size, ceil(x1 / 2), reaches broadcasting as two different
    # expressions (one with a negated floordiv), which must still be a known size >= 0
    f = absjit.jit(lambda X: X[:, ::2] * 2 - X[:, ::2].mean(0), abstraction="ranked")
    for shape in ((7, 3), (5, 8), (40, 9)):
        x = rng.standard_normal(shape).astype(np.float32)
        assert_close(f(x), x[:, ::2] * 2 - x[:, ::2].mean(0), rtol=1e-5, atol=1e-5)
    assert f._cache_size() == 1


def test_size_plus_a_number_equal_to_a_number_fixes_the_size():
    f = absjit.jit(lambda a: jnp.concatenate([a, jnp.ones(1)]) + jnp.ones(4),
                   abstraction="ranked")
    assert f(np.ones(3)).shape == (4,)
    g = absjit.jit(lambda a: a[1:] + jnp.arange(3.0), abstraction="ranked")
    np.testing.assert_allclose(np.asarray(g(np.ones(4))), 1 + np.arange(3.0))
    with pytest.raises(ValueError, match=r"a.shape\[0\] must be 4, got 5"):
        g(np.ones(5))
