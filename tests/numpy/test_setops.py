"""``absjit.numpy._setops``: unique (with size=), the Array-API unique_* functions, the
1-D set operations, the one-argument where, compress/extract and digitize, compared
with NumPy and (where installed) JAX, eagerly and under every backend."""
import numpy as np
import pytest
from hypothesis import given, strategies as hst
from hypothesis.extra import numpy as hnp

import absjit
import absjit.numpy as jnp
from absjit import errors
from tests.checks import assert_close, jax_numpy

# Few shapes (every new shape is a new kernel under the compiling backends) and few
# values, so that duplicates, NaNs, infinities and signed zeros are common.
_SHAPES = hst.sampled_from([(0,), (1,), (6,), (2, 3)])
_FLOATS = hst.sampled_from([-1.5, -0.0, 0.0, 2.0, 3.0, np.inf, np.nan])
ARRAYS = hst.one_of(hnp.arrays(np.int32, _SHAPES, elements=hst.integers(-3, 3)),
                    hnp.arrays(np.float32, _SHAPES, elements=_FLOATS))
SIZES = hst.sampled_from([0, 1, 4, 9])
# Under the compiling backends each new shape, dtype or size is a new compile, so there
# the values vary at one shape and dtype (the interpreters cover the rest).
COMPILED_ARRAYS = hnp.arrays(np.float32, (6,), elements=_FLOATS)


@pytest.fixture
def compiling(request):
    return request.node.callspec.params.get("mode") in ("jit-cpu", "jit-xla", "jit-cuda")


def _draw_case(data, compiling, fills=(None, -2)):
    """An array, a size and a fill_value (fewer kinds when compiling)."""
    if compiling:
        return data.draw(COMPILED_ARRAYS), 4, data.draw(hst.sampled_from(fills[:1]))
    return data.draw(ARRAYS), data.draw(SIZES), data.draw(hst.sampled_from(fills))


def _padded(values, size, fill, dtype):
    """NumPy ``values`` cut or padded to ``size`` with ``fill``."""
    out = np.full(size, fill, dtype)
    k = min(size, len(values))
    out[:k] = np.asarray(values)[:k]
    return out


def _eager(mode) -> bool:
    """Whether ``mode`` is eager: JAX's answer does not depend on the mode, so it is
    asked once, there (each new shape costs JAX a compile); the other modes are held to
    NumPy's answer padded as JAX pads."""
    f = lambda: None  # noqa: E731
    return mode(f) is f


def _jax_or_none(fn, *args, **kwargs):
    """JAX's result, or None without JAX (or where JAX itself fails on the input)."""
    if jax_numpy is None:
        return None
    try:
        return getattr(jax_numpy, fn)(*args, **kwargs)
    except (ValueError, TypeError, IndexError):
        return None


# ---------------------------------------------------------------------------
# unique
# ---------------------------------------------------------------------------
@given(hst.data(), hst.booleans())
def test_unique_sized_matches_numpy_and_jax(mode, compiling, data, equal_nan):
    x, size, fill_value = _draw_case(data, compiling)
    def f(a):
        return jnp.unique(a, return_index=True, return_inverse=True, return_counts=True,
                          equal_nan=equal_nan, size=size, fill_value=fill_value)
    if x.size == 0 and fill_value is None and size:
        with pytest.raises(ValueError, match="fill_value"):
            mode(f)(x)
        return
    got = mode(f)(x)
    vals, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True,
                                    return_counts=True, equal_nan=equal_nan)
    k = len(vals)
    fill = (vals[0] if k else 0) if fill_value is None else fill_value
    expected = (_padded(vals, size, fill, x.dtype),
                _padded(idx, size, idx[0] if k else 0, np.int32),
                inv.reshape(x.shape).astype(np.int32),
                _padded(cnt, size, 0, np.int32))
    assert_close(got, expected)
    want = _jax_or_none("unique", x, return_index=True, return_inverse=True,
                        return_counts=True, equal_nan=equal_nan, size=size,
                        fill_value=fill_value) if _eager(mode) else None
    if want is not None and x.size:  # JAX returns empty index/counts for empty input
        assert_close(got, tuple(np.asarray(w) for w in want))


@pytest.mark.parametrize("flags", [(True, False, False), (False, True, False),
                                   (False, False, True), (True, False, True)])
def test_unique_sized_return_subsets(mode, flags):
    x = np.array([[4, 1, 4], [9, 1, 1]], np.int32)
    index, inverse, counts = flags
    got = mode(lambda a: jnp.unique(a, *flags, size=5, fill_value=0))(x)
    full = jnp.unique(x, True, True, True, size=5, fill_value=0)
    assert_close(got, (full[0],) + tuple(r for r, f in zip(full[1:], flags) if f))
    assert_close(mode(lambda a: jnp.unique(a, size=2))(x), np.array([1, 4], np.int32))


def test_unique_concrete_path_follows_numpy():
    x = np.array([[3., np.nan, 1.], [3., np.nan, 1.]], np.float32)
    for equal_nan in (True, False):
        got = jnp.unique(x, True, True, True, equal_nan=equal_nan)
        want = np.unique(x, True, True, True, equal_nan=equal_nan)
        assert_close(got, (want[0],) + tuple(w.astype(np.int32) for w in want[1:]))
    got = jnp.unique(x, return_inverse=True, axis=0)
    want = np.unique(x, return_inverse=True, axis=0)
    assert_close(got, (want[0], want[1].astype(np.int32)))
    # the concrete level knows the value, so no size is needed under jit
    f = absjit.jit(lambda a: jnp.unique(a, return_counts=True), abstraction="concrete")
    assert_close(f(np.array([2, 2, 5], np.int32)),
                 (np.array([2, 5], np.int32), np.array([2, 1], np.int32)))


def test_unique_under_vmap_and_ranked():
    x = np.array([[3, 1, 3, 2], [0, 0, 7, 0]], np.int32)
    f = absjit.vmap(lambda a: jnp.unique(a, True, True, True, size=3, fill_value=-1))
    for row, got in zip(x, zip(*f(x))):
        assert_close(got, jnp.unique(row, True, True, True, size=3, fill_value=-1))
    g = absjit.jit(lambda a: jnp.unique(a, return_counts=True, size=3),
                   abstraction="ranked")
    for n in (4, 7):
        v = np.arange(n, dtype=np.int32) % 3
        assert_close(g(v), (np.array([0, 1, 2], np.int32),
                            np.bincount(v).astype(np.int32)))
    assert g._cache_size() == 1


def test_unique_array_api_variants(mode):
    x = np.array([[2., np.nan, 2.], [np.nan, 5., -1.]], np.float32)
    sized = mode(lambda a: (jnp.unique_values(a, size=6), jnp.unique_counts(a, size=6),
                            jnp.unique_inverse(a, size=6, fill_value=0),
                            jnp.unique_all(a, size=6, fill_value=9.)))(x)
    eager = (jnp.unique_values(x), jnp.unique_counts(x), jnp.unique_inverse(x),
             jnp.unique_all(x))
    # each NaN is its own value here (the Array API's rule)
    assert_close(eager[0], np.array([-1., 2., 5., np.nan, np.nan], np.float32))
    assert eager[3]._fields == ("values", "indices", "inverse_indices", "counts")
    assert eager[1]._fields == ("values", "counts")
    assert eager[2]._fields == ("values", "inverse_indices")
    assert_close(sized[1].counts, np.array([1, 2, 1, 1, 1, 0], np.int32))
    assert_close(sized[3].values, np.array([-1., 2., 5., np.nan, np.nan, 9.], np.float32))
    assert_close(sized[2].inverse_indices, eager[2].inverse_indices)
    if jax_numpy is not None:
        for name, got in zip(["unique_values", "unique_counts", "unique_inverse",
                              "unique_all"], eager):
            assert_close(got, getattr(jax_numpy, name)(x))
        assert_close(sized[3], tuple(jax_numpy.unique_all(x, size=6, fill_value=9.)))


# ---------------------------------------------------------------------------
# Set operations
# ---------------------------------------------------------------------------
def _expected_setop(name, a, b, size, fill_value, assume_unique):
    """NumPy's result padded with JAX's default fills."""
    x, y = np.ravel(a), np.ravel(b)
    dt = np.dtype(jnp.result_type(x, y)) if name != "setdiff1d" else x.dtype
    if name == "union1d":
        vals = np.union1d(x, y)
        fill = vals[0] if len(vals) else 0
    elif name == "setdiff1d":
        vals = np.setdiff1d(x, y, assume_unique)
        fill = 0
    elif name == "setxor1d":
        vals = np.setxor1d(x, y, assume_unique)
        fill = np.min(vals) if len(vals) else 0
    else:
        vals = np.intersect1d(x, y, assume_unique)
        fill = vals[0] if len(vals) else 0
    return _padded(vals, size, fill if fill_value is None else fill_value, dt)


@pytest.mark.parametrize("name", ["setdiff1d", "intersect1d", "union1d", "setxor1d"])
@given(hst.data())
def test_set_ops_sized(mode, compiling, name, data):
    f = getattr(jnp, name)
    a, size, fill_value = _draw_case(data, compiling)
    b = data.draw(COMPILED_ARRAYS if compiling else ARRAYS)
    if name == "union1d" and a.size + b.size == 0 and size and fill_value is None:
        with pytest.raises(ValueError, match="fill_value"):
            mode(lambda p, q: f(p, q, size=size))(a, b)
        return
    got = mode(lambda p, q: f(p, q, size=size, fill_value=fill_value))(a, b)
    expected = _expected_setop(name, a, b, size, fill_value, False)
    assert_close(got, expected)
    want = _jax_or_none(name, a, b, size=size, fill_value=fill_value) \
        if size and _eager(mode) else None
    # (JAX pads inconsistently when an input is empty, e.g. intersect1d([], [1], size=1)
    # gives [1]; absjit pads as for any other empty result)
    # (JAX's setdiff1d pads an all-NaN result with NaN, e.g. setdiff1d([nan] * 6, [0],
    # size=4) gives [nan, nan, nan, nan]; absjit pads with 0 as for any other result)
    nan_quirk = name == "setdiff1d" and np.isnan(np.asarray(a, np.float64)).any()
    if want is not None and a.size and b.size and not nan_quirk:
        assert_close(got, np.asarray(want))


@given(hst.data())
def test_intersect1d_indices(mode, compiling, data):
    shapes = [(5,)] if compiling else [(0,), (5,)]
    a = data.draw(hnp.arrays(np.int32, hst.sampled_from(shapes), elements=hst.integers(-4, 4)))
    b = data.draw(hnp.arrays(np.int32, (4,), elements=hst.integers(-4, 4)))
    size = 6 if compiling else data.draw(hst.sampled_from([2, 6]))
    got = mode(lambda p, q: jnp.intersect1d(p, q, return_indices=True, size=size))(a, b)
    vals, ia, ib = np.intersect1d(a, b, return_indices=True)
    fill = vals[0] if len(vals) else 0
    assert_close(got, (_padded(vals, size, fill, np.int32),
                       _padded(ia, size, a.size, np.int32),
                       _padded(ib, size, b.size, np.int32)))
    want = _jax_or_none("intersect1d", a, b, return_indices=True, size=size)
    if want is not None and a.size and b.size:  # JAX fails on empty inputs
        assert_close(got, tuple(np.asarray(w) for w in want))


def test_set_ops_assume_unique(mode):
    a = np.array([7, 1, 4, 9], np.int32)
    b = np.array([4, 8, 7], np.int32)
    for name in ("setdiff1d", "setxor1d", "intersect1d"):
        f = getattr(jnp, name)
        got = mode(lambda p, q: f(p, q, True, size=5, fill_value=-1))(a, b)
        assert_close(got, _expected_setop(name, a, b, 5, -1, True))
        assert_close(f(a, b, True), getattr(np, name)(a, b, True))
    # setdiff1d keeps ar1's order and repeats when told they are unique (NumPy's rule)
    rep = np.array([3, 1, 3, 5], np.int32)
    assert_close(mode(lambda p: jnp.setdiff1d(p, b, assume_unique=True, size=4))(rep),
                 np.array([3, 1, 3, 5], np.int32))
    got = jnp.intersect1d(a, b, assume_unique=True, return_indices=True)
    want = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    assert_close(got, (want[0],) + tuple(w.astype(np.int32) for w in want[1:]))


@given(ARRAYS, ARRAYS)
def test_set_ops_concrete_match_numpy(a, b):
    assert_close(jnp.union1d(a, b), np.union1d(a, b).astype(jnp.result_type(a, b)))
    assert_close(jnp.setdiff1d(a, b), np.setdiff1d(a, b).astype(a.dtype))
    assert_close(jnp.setxor1d(a, b), np.setxor1d(a, b).astype(jnp.result_type(a, b)))
    got = jnp.intersect1d(a, b, return_indices=True)
    want = np.intersect1d(a, b, return_indices=True)
    assert_close(got, (want[0].astype(jnp.result_type(a, b)),)
                 + tuple(w.astype(np.int32) for w in want[1:]))


def test_set_ops_under_vmap_and_ranked():
    a = np.array([[3, 1, 3, 2], [1, 1, 1, 0]], np.int32)
    b = a[::-1]
    for name in ("setdiff1d", "intersect1d", "union1d", "setxor1d"):
        f = getattr(jnp, name)
        got = absjit.vmap(lambda p, q: f(p, q, size=4, fill_value=-1))(a, b)
        for i in range(2):
            assert_close(got[i], f(a[i], b[i], size=4, fill_value=-1))
        # compiled at the ranked level for one of them (the others on the interpreter)
        backend = "cpu" if name == "intersect1d" else "interpret"
        g = absjit.jit(lambda p, q: f(p, q, size=4), abstraction="ranked", backend=backend)
        for n in (3, 6):
            p, q = np.arange(n, dtype=np.int32), np.arange(2, 2 + n, dtype=np.int32)
            assert_close(g(p, q), f(p, q, size=4))
        assert g._cache_size() == 1


# ---------------------------------------------------------------------------
# where, compress, extract
# ---------------------------------------------------------------------------
@given(hst.data())
def test_one_argument_where(mode, compiling, data):
    shapes = [(2, 3)] if compiling else [(5,), (2, 3)]
    c = data.draw(hnp.arrays(np.int32, hst.sampled_from(shapes), elements=hst.integers(0, 2)))
    size = 4 if compiling else data.draw(hst.sampled_from([1, 4, 7]))
    got = mode(lambda v: jnp.where(v, size=size, fill_value=-1))(c)
    want = tuple(_padded(i, size, -1, np.int32) for i in np.nonzero(c))
    assert_close(got, want)
    if jax_numpy is not None:
        assert_close(got, tuple(np.asarray(w) for w in
                                jax_numpy.where(c, size=size, fill_value=-1)))
    assert_close(jnp.where(c), tuple(i.astype(np.int32) for i in np.nonzero(c)))
    # the three-argument form is unchanged
    assert_close(mode(lambda v: jnp.where(v > 0, v, -v))(c), np.where(c > 0, c, -c))


@given(hst.data())
def test_compress_and_extract(mode, compiling, data):
    lengths = [4] if compiling else [3, 4, 6]
    cond = data.draw(hnp.arrays(np.bool_, hst.sampled_from(lengths), elements=hst.booleans()))
    axis = 0 if compiling else data.draw(hst.sampled_from([None, 0, 1]))
    size = 2 if compiling else data.draw(hst.sampled_from([2, 5]))
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    n = a.size if axis is None else a.shape[axis]
    mask = np.zeros(n, bool)
    mask[:min(n, cond.size)] = cond[:n]
    got = mode(lambda c, v: jnp.compress(c, v, axis, size=size, fill_value=-1))(cond, a)
    taken = np.compress(mask, a, axis)
    ax = 0 if axis is None else axis
    pad = [(0, 0)] * taken.ndim
    pad[ax] = (0, max(0, size - taken.shape[ax]))
    want = np.pad(taken, pad, constant_values=-1).take(np.arange(size), axis=ax)
    assert_close(got, want)
    if jax_numpy is not None and size <= min(n, cond.size):  # JAX refuses larger sizes
        assert_close(got, jax_numpy.compress(cond, a, axis, size=size, fill_value=-1))
    if not cond[n:].any():
        assert_close(jnp.compress(cond, a, axis), np.compress(cond, a, axis))
        assert_close(mode(lambda v: v.compress(cond, axis))(a), np.compress(cond, a, axis))
    c2 = (a % 3 == 0)
    assert_close(mode(lambda c, v: jnp.extract(c, v, size=size))(c2, a),
                 _padded(np.extract(c2, a), size, 0, np.float32))
    assert_close(jnp.extract(c2, a), np.extract(c2, a))


# ---------------------------------------------------------------------------
# digitize
# ---------------------------------------------------------------------------
@given(hnp.arrays(np.float32, (6,), elements=_FLOATS),
       hnp.arrays(np.float32, hst.sampled_from([0, 1, 4]),
                  elements=hst.sampled_from([-2.0, -0.0, 1.0, 2.0, 3.0])),
       hst.booleans(), hst.booleans())
def test_digitize(mode, x, bins, decreasing, right):
    bins = np.sort(bins)[::-1] if decreasing else np.sort(bins)
    bins = np.ascontiguousarray(bins)
    got = mode(lambda v, b: jnp.digitize(v, b, right))(x, bins)
    assert_close(got, np.digitize(x, bins, right).astype(np.int32))
    if jax_numpy is not None:
        assert_close(got, jax_numpy.digitize(x, bins, right))
    ints = np.array([[0, 5], [2, 3]], np.int32)
    assert_close(mode(lambda v: jnp.digitize(v, np.array([1, 3, 3, 4])))(ints),
                 np.digitize(ints, [1, 3, 3, 4]).astype(np.int32))


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------
_NEEDS_SIZE = [
    lambda a: jnp.unique(a), lambda a: jnp.unique(a, return_counts=True),
    lambda a: jnp.unique_values(a), lambda a: jnp.unique_all(a),
    lambda a: jnp.setdiff1d(a, a), lambda a: jnp.intersect1d(a, a),
    lambda a: jnp.union1d(a, a), lambda a: jnp.setxor1d(a, a),
    lambda a: jnp.where(a), lambda a: jnp.compress(a > 0, a),
    lambda a: jnp.extract(a > 0, a)]


@pytest.mark.parametrize("fn", _NEEDS_SIZE)
def test_traced_without_size_explains(fn):
    with pytest.raises(errors.ConcretizationTypeError, match="size="):
        absjit.jit(fn)(np.array([1, 2, 2], np.int32))


def test_bad_input_raises_clearly():
    x = np.array([1, 2, 2], np.int32)
    for fn in (jnp.unique, jnp.unique_values, lambda a, size: jnp.setdiff1d(a, a, size=size),
               lambda a, size: jnp.intersect1d(a, a, size=size),
               lambda a, size: jnp.union1d(a, a, size=size),
               lambda a, size: jnp.setxor1d(a, a, size=size),
               lambda a, size: jnp.compress(a > 1, a, size=size),
               lambda a, size: jnp.where(a, size=size)):
        with pytest.raises(ValueError, match="non-negative"):
            fn(x, size=-1)
        with pytest.raises(TypeError):
            fn(x, size=2.5)
    with pytest.raises(errors.ConcretizationTypeError):
        absjit.jit(lambda a, n: jnp.unique(a, size=n))(x, 3)
    with pytest.raises(TypeError):
        jnp.unique("abc", size=2)
    with pytest.raises(TypeError):
        jnp.setdiff1d([1, 2], "ab")
    with pytest.raises(ValueError, match="scalar"):
        jnp.unique(x, size=4, fill_value=np.array([1, 2]))
    with pytest.raises(ValueError, match="fill_value"):
        jnp.unique(np.zeros(0, np.int32), size=2)
    with pytest.raises(NotImplementedError, match="axis"):
        jnp.unique(np.ones((2, 2)), axis=0, size=2)
    with pytest.raises(ValueError, match="both or neither"):
        jnp.where(x, 1)
    with pytest.raises(ValueError, match="one-argument"):
        jnp.where(x, 1, 2, size=3)
    with pytest.raises(ValueError, match="1-D"):
        jnp.compress(np.ones((2, 2), bool), x)
    with pytest.raises(ValueError, match="past the end"):
        jnp.compress(np.array([0, 0, 0, 1], bool), x)
    with pytest.raises(NotImplementedError, match="out"):
        jnp.compress(x > 1, x, out=x)
    with pytest.raises(ValueError, match="bins must be 1-D"):
        jnp.digitize(x, np.ones((2, 2)))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.compress(x > 1, x, axis=3)
