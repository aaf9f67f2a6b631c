"""``x[idx]`` and ``x.at[idx]`` against NumPy, eager and under every jit backend."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as hs

import absjit
import absjit.numpy as jnp
from absjit.core.jaxpr import jaxpr_as_fun
from absjit.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from tests.checks import assert_close, jax_numpy


@hs.composite
def index_exprs(draw, allow_adv=True, allow_none=True):
    """A shape and a NumPy index expression valid for it (arrays in range)."""
    shape = tuple(draw(hs.lists(hs.integers(0, 4), min_size=0, max_size=3)))
    comps, axis, used_ellipsis = [], 0, False
    bshape = draw(hs.sampled_from([(2,), (2, 1), (1, 3), ()]))
    while axis < len(shape) and (used_ellipsis or draw(hs.booleans())):
        n = shape[axis]
        kind = draw(hs.sampled_from(["int", "slice", "none", "ellipsis", "array", "mask"]))
        if (kind == "none" and (used_ellipsis or not allow_none)) or \
                (kind in ("array", "mask") and not allow_adv) or (kind == "int" and not n):
            kind = "slice"
        if kind == "ellipsis" and used_ellipsis:
            kind = "slice"
        if kind == "int":
            comps.append(draw(hs.integers(-n, n - 1)))
            axis += 1
        elif kind == "slice":
            start = draw(hs.one_of(hs.none(), hs.integers(-5, 5)))
            stop = draw(hs.one_of(hs.none(), hs.integers(-5, 5)))
            step = draw(hs.one_of(hs.none(), hs.sampled_from([1, 2, -1, -2, 3])))
            comps.append(slice(start, stop, step))
            axis += 1
        elif kind == "none":
            comps.append(None)
        elif kind == "ellipsis":
            # The ellipsis stands for the next ``k`` axes; the index then continues to
            # the last axis, so ``...`` expands to exactly those ``k``.
            comps.append(Ellipsis)
            used_ellipsis = True
            axis += draw(hs.integers(0, len(shape) - axis))
        elif kind == "array":
            size = int(np.prod(bshape))
            vals = draw(hs.lists(hs.integers(-n, n - 1), min_size=size, max_size=size)) \
                if n else []
            comps.append(np.array(vals, np.int32).reshape(bshape) if n
                         else np.zeros((0,), np.int32))
            axis += 1
        elif kind == "mask":
            comps.append(np.array(draw(hs.lists(hs.booleans(), min_size=n, max_size=n)),
                                  dtype=bool).reshape((n,)))
            axis += 1
    return shape, tuple(comps)


def _np_getitem(x, idx):
    try:
        return x[idx], None
    except (IndexError, ValueError) as e:
        return None, e


@given(index_exprs())
def test_getitem_matches_numpy(case):
    shape, idx = case
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    expected, err = _np_getitem(x, idx)
    if err is not None:  # e.g. index arrays that do not broadcast
        with pytest.raises(type(err)):
            jnp.asarray(x)[idx]
        return
    assert_close(jnp.asarray(x)[idx], expected)
    # The staged path (x a tracer) gives the same answer.
    assert_close(_staged(lambda v: v[idx], x), expected)


def _staged(fn, *args):
    """Trace ``fn`` to a jaxpr, then evaluate the jaxpr with the reference interpreter."""
    closed = absjit.make_jaxpr(fn)(*args)
    return jaxpr_as_fun(closed)(*args)[0]


def test_getitem_cases_under_mode(mode):
    x = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    cases = [(0,), (-1, slice(None, None, -2)), (Ellipsis, 1), (None, 0, None),
             ([0, 2],), (slice(None), [0, 2], [1, 3]), ([1, 0], slice(None), [3, 0]),
             (slice(None), None, [0, 2], 1), (x % 7 == 0,), ([[0], [1]], [0, 1, 2]),
             (1, None, [0, 1]), (slice(None, None, -2), Ellipsis, slice(4, 0, -2)),
             ([],), (np.array([[0, 1]]), None, slice(None), 2), (True,), (False, 0)]
    for idx in cases:
        assert_close(mode(lambda v: v[idx])(jnp.asarray(x)), x[idx], err_msg=repr(idx))


def test_traced_integer_index_is_dynamic_slice(mode):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = mode(lambda x, i: jnp.asarray(x)[i, 1:])
    for i in [0, 2, -1, -3]:
        assert_close(f(x, np.int32(i)), x[i, 1:])
    text = str(absjit.make_jaxpr(lambda x, i: x[i])(x, 1))
    assert "dynamic_slice[slice_sizes=(1, 4)]" in text and "gather" not in text
    # Out of range integer scalars clamp, as in JAX, Python ints included.
    assert_close(f(x, np.int32(7)), x[2, 1:])
    assert_close(f(x, jnp.asarray(np.int32(-9))), x[0, 1:])
    assert_close(mode(lambda x: jnp.asarray(x)[7])(x), x[2])
    assert_close(mode(lambda x: jnp.asarray(x)[-9, 1])(x), x[0, 1])
    with pytest.raises(IndexError, match="out of bounds"):
        mode(lambda x: jnp.asarray(x)[0])(np.zeros((0, 2), np.float32))


def test_traced_index_arrays(mode):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = mode(lambda x, i: jnp.asarray(x)[:, i])
    idx = np.array([[3, -1], [0, 2]], np.int32)
    assert_close(f(x, idx), x[:, idx])
    # Out of range array indices clamp when reading.
    assert_close(f(x, np.array([9, -9], np.int32)), x[:, [3, 0]])


def test_boolean_mask_needs_concrete_value():
    x = np.arange(6, dtype=np.float32)
    mask = x > 2
    assert_close(jnp.asarray(x)[jnp.asarray(mask)], x[mask])
    with pytest.raises(NonConcreteBooleanIndexError, match="jnp.where"):
        absjit.make_jaxpr(lambda x: x[x > 2])(x)
    with pytest.raises(IndexError):
        absjit.jit(lambda x: x[x > 2])(x)
    # At the concrete level the mask's value is known.
    closed = absjit.make_jaxpr(lambda x: x[x > 2], abstraction="concrete")(x)
    assert "f32[3]" in str(closed)


@pytest.mark.parametrize("idx,exc,match", [
    ((0, 0, 0), IndexError, "too many indices"),
    (1.5, IndexError, "valid indices"),
    ((np.array([0.5]),), IndexError, "integer"),
    ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
    (np.ones((2, 2), bool), IndexError, "boolean index"),
    ((slice(0, 1.5),), IndexError, "slice indices"),
    ("a", IndexError, "valid indices"),
    ((slice(None, None, 0),), ValueError, "step"),
])
def test_bad_indices(idx, exc, match):
    x = jnp.zeros((3, 4))
    with pytest.raises(exc, match=match):
        x[idx]
    with pytest.raises(exc, match=match):
        absjit.make_jaxpr(lambda v: v[idx])(x)


def test_traced_slice_bound_is_concretization_error():
    with pytest.raises(ConcretizationTypeError):
        absjit.make_jaxpr(lambda x, n: x[:n])(jnp.zeros(3), 2)


def test_iter_and_weak_type():
    x = jnp.array([1.0, 2.0])
    assert [float(v) for v in x] == [1.0, 2.0]
    w = jnp.asarray(jnp.add(jnp.zeros(2), 1.0))
    assert w[0].dtype == np.float32
    assert jnp.array(3.0)[()].weak_type
    with pytest.raises(TypeError, match="0-d"):
        iter(jnp.array(1.0))
    rows = list(absjit.make_jaxpr(lambda v: list(v))(np.zeros((2, 3), np.float32)).jaxpr.outvars)
    assert len(rows) == 2


# ---------------------------------------------------------------------------
# .at[] updates
# ---------------------------------------------------------------------------
def _np_update(x, idx, vals, mode):
    out = x.copy()
    if mode == "set":
        out[idx] = vals
        return out
    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}[mode]
    ufunc.at(out, idx, vals)
    return out


@given(index_exprs(allow_none=True), hs.sampled_from(["set", "add", "multiply", "min", "max"]))
def test_at_update_matches_numpy(case, op):
    shape, idx = case
    x = np.asarray(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 3)
    target, err = _np_getitem(x, idx)
    if err is not None:
        return
    vals = (np.arange(target.size, dtype=np.float32).reshape(target.shape) * 0.5 + 1)
    if op == "set" and any(isinstance(c, np.ndarray) and c.dtype != bool for c in idx):
        # Duplicate indices make "set" order-dependent: update with equal values.
        vals = np.full(target.shape, 7.0, np.float32)
    expected = _np_update(x, idx, vals, op)
    got = getattr(jnp.asarray(x).at[idx], op)(vals)
    assert_close(got, expected)
    assert_close(_staged(lambda v: getattr(v.at[idx], op)(vals), x), expected)


@pytest.mark.parametrize("op", ["set", "add", "multiply", "min", "max"])
def test_at_update_under_mode(mode, op):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    cases = [(1, 2.5), ((slice(None), 1), np.array([1., 2., 3.], np.float32)),
             ((np.array([0, 0, 2]),), np.float32(2.0)),
             ((slice(None, None, -1), [1, 3]), np.float32(-1.0)), ((Ellipsis, -1), 9.0)]
    for idx, vals in cases:
        f = mode(lambda v: getattr(jnp.asarray(v).at[idx], op)(vals))
        expected = _np_update(x, idx, np.broadcast_to(vals, x[idx].shape), op)
        assert_close(f(x), expected, err_msg=repr(idx))


def test_at_traced_index_and_out_of_range_drop(mode):
    x = np.zeros(4, np.float32)
    f = mode(lambda x, i: jnp.asarray(x).at[i].set(5.0))
    assert_close(f(x, np.int32(-1)), np.array([0, 0, 0, 5], np.float32))
    assert_close(f(x, np.int32(9)), x)  # out of range updates are dropped
    g = mode(lambda x, i: jnp.asarray(x).at[i].add(1.0))
    assert_close(g(x, np.array([0, 0, 7, -1], np.int32)), np.array([2, 0, 0, 1], np.float32))


def test_at_casts_values_and_keeps_dtype():
    x = jnp.arange(4)
    out = x.at[1].set(2.7)
    assert out.dtype == np.int32 and int(out[1]) == 2
    b = jnp.array([True, False, False])
    assert_close(b.at[1].add(True), np.array([True, True, False]))
    assert_close(b.at[0].min(False), np.array([False, False, False]))
    assert_close(x.at[1].get(), np.int32(1))
    if jax_numpy is not None:
        assert jax_numpy.arange(4).at[1].set(2.7).dtype == out.dtype


def test_at_bad_values_shape():
    with pytest.raises(ValueError, match="broadcast"):
        jnp.zeros((3, 4)).at[0].set(jnp.ones(3))
    with pytest.raises(ValueError, match="mode"):
        from absjit.numpy._indexing import index_update
        index_update(jnp.zeros(3), 0, 1.0, "divide")
    with pytest.raises(TypeError, match="immutable"):
        jnp.zeros(3)[0] = 1.0


def test_update_printing():
    text = str(absjit.make_jaxpr(lambda x, i: x.at[i].set(0.0))(np.zeros(3, np.float32), 1))
    assert "scatter[axes=(0,)]" in text
    text = str(absjit.make_jaxpr(lambda x: x.at[1:3].add(1.0))(np.zeros(4, np.float32)))
    assert "dynamic_update_slice" in text


# ---------------------------------------------------------------------------
# autodiff and batching through indexing
# ---------------------------------------------------------------------------
X = np.arange(12, dtype=np.float32).reshape(3, 4)
GRAD_CASES = [
    ("advanced", lambda m, x: (x[m.array([0, 0, 2]), 1:3] ** 2).sum()),
    ("basic", lambda m, x: (x[1, ::-2] * x[None, -1, 1::2]).sum()),
    ("mask_free_take", lambda m, x: (m.take(x, m.array([1, 1, 3]), axis=1) ** 2).sum()),
    ("set", lambda m, x: (x.at[1].set(0.0) * x).sum()),
    ("add", lambda m, x: (x.at[m.array([0, 0, 2])].add(x[1]) ** 2).sum()),
    ("multiply", lambda m, x: x.at[0, ::2].multiply(3.0).sum()),
    ("scatter_min", lambda m, x: (x.at[m.array([0, 2]), m.array([1, 3])].min(5.0) ** 2).sum()),
]


@pytest.mark.parametrize("fn", [c[1] for c in GRAD_CASES], ids=[c[0] for c in GRAD_CASES])
def test_grad_through_indexing(fn):
    got = absjit.grad(lambda x: fn(jnp, x))(X)
    if jax_numpy is not None:
        import jax
        expected = np.asarray(jax.grad(lambda x: fn(jax_numpy, x))(X))
    else:  # central differences in float64
        expected = np.zeros_like(X)
        for k in np.ndindex(X.shape):
            e = np.zeros_like(X)
            e[k] = 1e-2
            expected[k] = (float(fn(jnp, X + e)) - float(fn(jnp, X - e))) / 2e-2
    assert_close(got, expected, rtol=1e-4)


def test_grad_with_traced_index():
    g = absjit.grad(lambda x, i: (x[i] ** 2).sum())(X, 1)
    expected = np.zeros_like(X)
    expected[1] = 2 * X[1]
    assert_close(g, expected)


def test_vmap_through_indexing():
    i = np.array([2, 0, 1], np.int32)
    assert_close(absjit.vmap(lambda x, i: x[i])(X, i), X[np.arange(3), i])
    assert_close(absjit.vmap(lambda i: jnp.asarray(X)[:, i])(i), X[:, i].T)
    expected = X.copy()
    expected[np.arange(3), i] += 10
    assert_close(absjit.vmap(lambda x, i: x.at[i].add(10.0))(X, i), expected)
    assert_close(absjit.vmap(lambda x, s: jnp.roll(x, s))(X, i + 1),
                 np.stack([np.roll(X[b], s) for b, s in enumerate(i + 1)]))
    assert_close(absjit.vmap(lambda x: jnp.take(x, jnp.array([2, 0])), in_axes=1)(X),
                 X[[2, 0]].T)


@pytest.mark.parametrize("idx", [(np.array([5, -7]),), (slice(None), np.array([9, -9])),
                                 (np.array([[4], [0]]), np.array([0, -5]))])
def test_out_of_range_array_indices_follow_jax(idx):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = [jnp.asarray(x)[idx], jnp.asarray(x).at[idx].add(100.0),
           jnp.asarray(x).at[idx].set(100.0)]
    if jax_numpy is not None:
        ref = [jax_numpy.asarray(x)[idx], jax_numpy.asarray(x).at[idx].add(100.0),
               jax_numpy.asarray(x).at[idx].set(100.0)]
        for g, r in zip(got, ref):
            assert_close(g, np.asarray(r))
    else:  # clamped reads, computed directly
        clamped = tuple(np.clip(np.where(i < 0, i + n, i), 0, n - 1)
                        if isinstance(i, np.ndarray) else i for i, n in zip(idx, x.shape))
        assert_close(got[0], x[clamped])


def test_out_of_range_python_ints_follow_jax():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases = [lambda a: a[5], lambda a: a[-5], lambda a: a[1, 7], lambda a: a[:, -9],
             lambda a: a[5, 1:], lambda a: a.at[5].set(1.0), lambda a: a.at[1, 7].add(1.0),
             lambda a: a.at[-9, 0].set(7.0)]
    expected = [x[1], x[0], x[1, 2], x[:, 0], x[1, 1:], x, x, x]
    for f, want in zip(cases, expected):
        assert_close(f(jnp.asarray(x)), want)
        assert_close(absjit.jit(f)(x), want)
    if jax_numpy is not None:
        for f in cases:
            assert_close(f(jnp.asarray(x)), np.asarray(f(jax_numpy.asarray(x))))
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.zeros(0)[0]
