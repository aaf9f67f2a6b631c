"""Array-API names, index helpers, calculus and array utilities of ``absjit.numpy``
(``_misc.py``, the additions to ``_numeric.py``, ``order='F'`` reshapes), compared with
NumPy and, where installed, JAX (values, dtypes, weak types)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import absjit
import absjit.numpy as jnp
from absjit.errors import ConcretizationTypeError
from tests.checks import assert_close, check_against_numpy, jax, jax_numpy


def _jax_same(out, jax_out):
    """Values, dtypes and weak types of an absjit result equal JAX's (when installed)."""
    if jax is None:
        return
    a_leaves = absjit.tree_util.tree_leaves(out)
    j_leaves = jax.tree_util.tree_leaves(jax_out)
    assert len(a_leaves) == len(j_leaves)
    for a, j in zip(a_leaves, j_leaves):
        assert np.dtype(a.dtype) == np.dtype(j.dtype), (a.dtype, j.dtype)
        assert bool(getattr(a, "weak_type", False)) == bool(getattr(j, "weak_type", False))
        assert_close(a, np.asarray(j), rtol=1e-5, atol=1e-5)


def _jax(name):
    return None if jax is None else getattr(jax_numpy, name)


# ---------------------------------------------------------------------------
# array-API names
# ---------------------------------------------------------------------------
def test_aliases_are_the_numpy_functions():
    assert jnp.acos is jnp.arccos and jnp.asinh is jnp.arcsinh and jnp.atan2 is jnp.arctan2
    for name in ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh",
                 "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift"]:
        assert name in jnp.__all__
    x = np.array([0.1, 0.5, 0.9], np.float32)
    assert_close(jnp.atanh(x), np.arctanh(x))
    assert_close(jnp.atan2(x, x[::-1]), np.arctan2(x, x[::-1]))


def test_bitwise_count(mode):
    x = np.array([0, 1, 7, -1, -128, 127, 255, -(2 ** 31), 2 ** 31 - 1], np.int64)
    for dt in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]:
        a = x.astype(dt)
        out = mode(jnp.bitwise_count)(a)
        assert_close(out, np.bitwise_count(a).astype(np.uint8))
        if jax is not None:
            _jax_same(out, jax_numpy.bitwise_count(a))
    _jax_same(jnp.bitwise_count(np.array([True, False])), _jax("bitwise_count")(
        np.array([True, False])) if jax else None)
    _jax_same(jnp.bitwise_count(5), jax_numpy.bitwise_count(5) if jax else None)
    with pytest.raises(TypeError, match="integer"):
        jnp.bitwise_count(1.0)


def test_bitwise_count_int64():
    absjit.config.update("enable_x64", True)
    a = np.array([-1, 2 ** 62 + 5, 0], np.int64)
    assert_close(jnp.bitwise_count(a), np.bitwise_count(a))
    assert_close(jnp.bitwise_count(a.view(np.uint64)), np.bitwise_count(a.view(np.uint64)))


def test_astype_matrix_transpose_unstack(mode):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10.5
    out = mode(lambda a: (jnp.astype(a, jnp.int32), jnp.matrix_transpose(a),
                          jnp.unstack(a, axis=1), jnp.unstack(a)))(x)
    assert_close(out[0], x.astype(np.int32))
    assert_close(out[1], np.swapaxes(x, -1, -2))
    assert_close(list(out[2]), [x[:, i] for i in range(3)])
    assert len(out[3]) == 2
    if jax is not None:
        _jax_same(out, (jax_numpy.astype(x, "int32"), jax_numpy.matrix_transpose(x),
                        jax_numpy.unstack(x, axis=1), jax_numpy.unstack(x)))
        _jax_same(jnp.astype(3, jnp.float32), jax_numpy.astype(3, jnp.float32))
    assert jnp.astype(x, jnp.float32, copy=True, device=None).dtype == np.float32
    with pytest.raises(ValueError, match="two dimensions"):
        jnp.matrix_transpose(np.ones(3))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.unstack(np.float32(1))


def test_matvec_vecmat(mode, rng):
    a = rng.standard_normal((5, 2, 3)).astype(np.float32)
    v = rng.standard_normal((4, 1, 3)).astype(np.float32)
    out = mode(jnp.matvec)(a, v)
    assert_close(out, np.einsum("...ij,...j->...i", a, v), rtol=1e-5, atol=1e-5)
    c = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64)
    m = rng.standard_normal((3, 2)).astype(np.float32)
    out2 = mode(jnp.vecmat)(c, m)
    assert_close(out2, np.conj(c) @ m, rtol=1e-5, atol=1e-5)
    if jax is not None:
        _jax_same(out, jax_numpy.matvec(a, v))
        _jax_same(out2, jax_numpy.vecmat(c, m))
    with pytest.raises(ValueError, match="matrix"):
        jnp.matvec(np.ones(3), np.ones(3))


# ---------------------------------------------------------------------------
# unravel_index / ravel_multi_index
# ---------------------------------------------------------------------------
def test_unravel_index(mode):
    idx = np.array([0, 5, 3, 100, -1, -100], np.int32)
    out = mode(lambda i: jnp.unravel_index(i, (2, 3)))(idx)
    # JAX's behaviour: negative indices count from the end, the rest are clipped.
    expected = np.unravel_index(np.clip(np.where(idx < 0, idx + 6, idx), 0, 5), (2, 3))
    assert_close(list(out), list(expected), check_dtype=False)
    if jax is not None:
        _jax_same(out, jax_numpy.unravel_index(idx, (2, 3)))
        _jax_same(jnp.unravel_index(5, (2, 3)), jax_numpy.unravel_index(5, (2, 3)))
        i8 = np.array([5, 1], np.int8)
        _jax_same(jnp.unravel_index(i8, (20, 30)), jax_numpy.unravel_index(i8, (20, 30)))
    assert jnp.unravel_index(np.array([0]), ()) == ()
    with pytest.raises(TypeError, match="integers"):
        jnp.unravel_index(1.0, (2, 3))


@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index(mode, order):
    i, j = np.array([1, 5, 0, -1], np.int32), np.array([2, -1, 1, 7], np.int32)
    dims = (2, 3)
    for m in ["wrap", "clip"]:
        out = mode(lambda a, b: jnp.ravel_multi_index((a, b), dims, mode=m, order=order))(i, j)
        assert_close(out, np.ravel_multi_index((i, j), dims, mode=m, order=order)
                     .astype(np.int32))
        if jax is not None:
            _jax_same(out, jax_numpy.ravel_multi_index((i, j), dims, mode=m, order=order))
    good = (np.array([1, 0]), np.array([2, 1]))
    assert_close(jnp.ravel_multi_index(good, dims, order=order),
                 np.ravel_multi_index(good, dims, order=order).astype(np.int32))


def test_ravel_multi_index_errors():
    i, j = np.array([1, 5]), np.array([2, 0])
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((i, j), (2, 3))
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        absjit.jit(lambda a, b: jnp.ravel_multi_index((a, b), (2, 3)))(i, j)
    with pytest.raises(ValueError, match="mode"):
        jnp.ravel_multi_index((i, j), (2, 3), mode="nope")
    with pytest.raises(ValueError, match="order"):
        jnp.ravel_multi_index((i, j), (2, 3), order="K")
    with pytest.raises(ValueError, match="coordinate arrays"):
        jnp.ravel_multi_index((i,), (2, 3))
    with pytest.raises(TypeError, match="integers"):
        jnp.ravel_multi_index((i * 1.0, j), (2, 3))
    if jax is not None:
        _jax_same(jnp.ravel_multi_index((1, 2), (2, 3)),
                  jax_numpy.ravel_multi_index((1, 2), (2, 3)))


@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2 ** 16))
def test_ravel_unravel_roundtrip(shape, seed):
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    flat = rng.integers(0, size, 5).astype(np.int32)
    coords = jnp.unravel_index(flat, tuple(shape))
    assert_close(list(coords), [c.astype(np.int32) for c in np.unravel_index(flat, shape)])
    assert_close(jnp.ravel_multi_index(coords, tuple(shape)), flat)


# ---------------------------------------------------------------------------
# order='F'
# ---------------------------------------------------------------------------
def test_reshape_order_f(mode):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    out = mode(lambda a: (jnp.reshape(a, (4, -1), order="F"), jnp.ravel(a, order="F"),
                          a.reshape(6, 4, order="F"), a.flatten(order="F"),
                          a.ravel(order="F"), a.reshape((3, 8), order="C")))(x)
    assert_close(list(out), [x.reshape((4, -1), order="F"), x.ravel(order="F"),
                             x.reshape(6, 4, order="F"), x.flatten(order="F"),
                             x.ravel(order="F"), x.reshape(3, 8)])


def test_reshape_order_errors_and_grad():
    x = jnp.arange(6.0).reshape(2, 3)
    with pytest.raises(NotImplementedError):
        jnp.reshape(x, (3, 2), order="A")
    with pytest.raises(ValueError, match="order"):
        jnp.reshape(x, (3, 2), order="K")
    with pytest.raises(NotImplementedError):
        jnp.ravel(x, order="K")
    with pytest.raises(NotImplementedError):
        x.flatten(order="A")
    w = np.arange(6.0, dtype=np.float32)
    g = absjit.grad(lambda a: jnp.sum(jnp.ravel(a, order="F") * w))(x)
    assert_close(g, w.reshape((2, 3), order="F"))


@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.booleans())
def test_reshape_order_f_hypothesis(shape, to_flat):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    new = (-1,) if to_flat else tuple(shape[::-1])
    assert_close(jnp.reshape(x, new, order="F"), x.reshape(new, order="F"))


# ---------------------------------------------------------------------------
# trapezoid, gradient, vander, polyfit
# ---------------------------------------------------------------------------
def test_trapezoid(mode, rng):
    y = rng.standard_normal((3, 5)).astype(np.float32)
    x1 = np.cumsum(rng.random(5)).astype(np.float32)
    x2 = np.cumsum(rng.random((3, 5)), axis=1).astype(np.float32)
    out = mode(lambda a, b, c: (jnp.trapezoid(a), jnp.trapezoid(a, dx=0.5, axis=0),
                                jnp.trapezoid(a, b), jnp.trapezoid(a, c)))(y, x1, x2)
    expected = (np.trapezoid(y), np.trapezoid(y, dx=0.5, axis=0), np.trapezoid(y, x1),
                np.trapezoid(y, x2))
    assert_close(list(out), list(expected), rtol=1e-5, atol=1e-5)
    iy = np.arange(5, dtype=np.int32)
    check_against_numpy(jnp.trapezoid, np.trapezoid, iy, jax_fn=_jax("trapezoid"))
    with pytest.raises(TypeError):
        jnp.trapezoid([1, 2, 3])
    if jax is not None:
        g = absjit.grad(lambda a: jnp.trapezoid(a, x1))(y[0])
        assert_close(g, np.asarray(jax.grad(lambda a: jax_numpy.trapezoid(a, x1))(y[0])),
                     rtol=1e-5, atol=1e-6)


def test_gradient(mode, rng):
    f = rng.standard_normal((4, 5)).astype(np.float32)
    xs = np.array([0.0, 1.0, 1.5, 3.0, 3.5], np.float32)
    out = mode(lambda a, x: (jnp.gradient(a), jnp.gradient(a, 2.0, axis=1),
                             jnp.gradient(a, 0.5, x), jnp.gradient(a[0], x)))(f, xs)
    expected = (np.gradient(f), np.gradient(f, 2.0, axis=1), np.gradient(f, 0.5, xs),
                np.gradient(f[0], xs))
    assert_close(out[0], expected[0], rtol=1e-5, atol=1e-5)
    assert_close(list(out[1:]), list(expected[1:]), rtol=1e-5, atol=1e-5)
    if jax is not None:
        _jax_same(out, (jax_numpy.gradient(f), jax_numpy.gradient(f, 2.0, axis=1),
                        jax_numpy.gradient(f, 0.5, xs), jax_numpy.gradient(f[0], xs)))
        i = np.array([1, 4, 9], np.int32)
        _jax_same(jnp.gradient(i), jax_numpy.gradient(i))
    assert jnp.gradient(np.float32(1.0)) == []


def test_gradient_errors():
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(np.ones(4), edge_order=1)
    with pytest.raises(ValueError, match="at least 2"):
        jnp.gradient(np.ones(1))
    with pytest.raises(TypeError, match="spacing"):
        jnp.gradient(np.ones(4), 1.0, 2.0)
    with pytest.raises(ValueError, match="1-D"):
        jnp.gradient(np.ones(4), np.ones(3))


def test_vander(mode):
    x = np.array([1, 2, -3, 0], np.int32)
    fx = np.array([0.5, -2.0, 0.0], np.float32)
    out = mode(lambda a, b: (jnp.vander(a), jnp.vander(b, 5, increasing=True),
                             jnp.vander(a, 0), jnp.vander(b, 1)))(x, fx)
    assert_close(list(out), [np.vander(x), np.vander(fx, 5, True).astype(np.float32),
                             np.vander(x, 0), np.vander(fx, 1).astype(np.float32)],
                 check_dtype=False)  # NumPy's integer vander is int64; JAX's dtypes below
    if jax is not None:
        _jax_same(out, (jax_numpy.vander(x), jax_numpy.vander(fx, 5, increasing=True),
                        jax_numpy.vander(x, 0), jax_numpy.vander(fx, 1)))
    # Running products: finite at 0, where JAX's power-based vander gives NaN.
    g = absjit.grad(lambda a: jnp.sum(jnp.vander(a, 4)))(fx)
    assert_close(g, 3 * fx ** 2 + 2 * fx + 1)
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.vander(np.ones((2, 2)))
    with pytest.raises(ValueError, match="non-negative"):
        jnp.vander(x, -1)
    with pytest.raises(TypeError):
        jnp.vander(np.array([True, False]))


def test_polyfit(mode):
    x = np.linspace(-1, 2, 7).astype(np.float32)
    y = (2 * x ** 2 - x + 0.5 + 0.01 * np.sin(9 * x)).astype(np.float32)
    y2 = np.stack([y, 3 * x + 1], axis=1)
    w = np.linspace(1, 2, 7).astype(np.float32)
    run = mode(lambda a, b, b2, ww: (jnp.polyfit(a, b, 2), jnp.polyfit(a, b2, 1),
                                     jnp.polyfit(a, b, 2, w=ww)))
    out = run(x, y, y2, w)
    assert_close(list(out), [np.polyfit(x, y, 2).astype(np.float32),
                             np.polyfit(x, y2, 1).astype(np.float32),
                             np.polyfit(x, y, 2, w=w).astype(np.float32)],
                 rtol=2e-3, atol=2e-3)
    c, resid, rank, s, rcond = jnp.polyfit(x, y, 2, full=True)
    nc, nresid, nrank, ns, nrcond = np.polyfit(x, y, 2, full=True)
    assert int(rank) == nrank == 3
    assert_close(s, ns.astype(np.float32), rtol=1e-4, atol=1e-5)
    c, v = jnp.polyfit(x, y, 2, cov=True)
    assert v.shape == (3, 3)
    if jax is not None:
        _jax_same(jnp.polyfit(x, y, 2), jax_numpy.polyfit(x, y, 2))
    with pytest.raises(ValueError, match="deg"):
        jnp.polyfit(x, y, -1)
    with pytest.raises(TypeError, match="1-D"):
        jnp.polyfit(np.ones((2, 2)), y, 1)
    with pytest.raises(TypeError, match="same length"):
        jnp.polyfit(x, np.ones(3), 1)


# ---------------------------------------------------------------------------
# block, resize, fill_diagonal, put
# ---------------------------------------------------------------------------
def test_block(mode):
    a, b = np.ones((2, 2), np.float32), np.zeros((2, 1), np.float32)
    c = np.full((1, 3), 2, np.int32)
    out = mode(lambda a, b, c: (jnp.block([[a, b], [c]]), jnp.block([a, b]),
                                jnp.block([[[a]], [[a]]]), jnp.block([1.0, a[0]])))(a, b, c)
    expected = (np.block([[a, b], [c]]), np.block([a, b]), np.block([[[a]], [[a]]]),
                np.block([1.0, a[0]]).astype(np.float32))
    assert_close(list(out), list(expected), check_dtype=False)
    if jax is not None:
        _jax_same(out, (jax_numpy.block([[a, b], [c]]), jax_numpy.block([a, b]),
                        jax_numpy.block([[[a]], [[a]]]), jax_numpy.block([1.0, a[0]])))
        _jax_same(jnp.block([1, 2]), jax_numpy.block([1, 2]))
    with pytest.raises(ValueError, match="depth"):
        jnp.block([[1, 2], 3])
    with pytest.raises(ValueError, match="empty"):
        jnp.block([])
    with pytest.raises(ValueError, match="tuple"):
        jnp.block((1, 2))
    with pytest.raises(ValueError):  # as jnp.concatenate (JAX: TypeError)
        jnp.block([[a, np.ones((1, 2))]])


def test_resize(mode):
    x = np.arange(5, dtype=np.int32)
    out = mode(lambda a: (jnp.resize(a, (2, 4)), jnp.resize(a, 3), jnp.resize(a, (2, 0)),
                          jnp.resize(a.reshape(1, 5), (3, 5))))(x)
    assert_close(list(out), [np.resize(x, (2, 4)), np.resize(x, 3), np.resize(x, (2, 0)),
                             np.resize(x.reshape(1, 5), (3, 5))])
    assert_close(jnp.resize(np.zeros(0, np.float32), 3), np.zeros(3, np.float32))
    if jax is not None:
        _jax_same(jnp.resize(3, (2,)), jax_numpy.resize(3, (2,)))
    with pytest.raises(ValueError, match="non-negative"):
        jnp.resize(x, (-1,))


def test_fill_diagonal(mode):
    def ref(a, val, wrap=False):
        a = a.copy()
        np.fill_diagonal(a, val, wrap=wrap)
        return a
    tall, cube = np.zeros((7, 3), np.float32), np.zeros((3, 3, 3), np.int32)
    val = np.array([1.0, 2.0], np.float32)
    out = mode(lambda a, c, v: (jnp.fill_diagonal(a, v, inplace=False),
                                jnp.fill_diagonal(a, 5.0, wrap=True, inplace=False),
                                jnp.fill_diagonal(a.T, v, inplace=False),
                                jnp.fill_diagonal(c, 4, inplace=False)))(tall, cube, val)
    assert_close(list(out), [ref(tall, val), ref(tall, 5.0, True), ref(tall.T, val),
                             ref(cube, 4)])
    if jax is not None:
        _jax_same([out[0], out[2], out[3]],
                  [jax_numpy.fill_diagonal(tall, val, inplace=False),
                   jax_numpy.fill_diagonal(tall.T, val, inplace=False),
                   jax_numpy.fill_diagonal(cube, 4, inplace=False)])
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(tall, 1.0)
    with pytest.raises(ValueError, match="2-d"):
        jnp.fill_diagonal(np.zeros(3), 1.0, inplace=False)
    with pytest.raises(ValueError, match="equal"):
        jnp.fill_diagonal(np.zeros((2, 3, 2)), 1.0, inplace=False)


def test_put(mode):
    a = np.zeros((2, 3), np.float32)
    ind = np.array([1, 7, -1, 4], np.int32)
    v = np.array([5.0, 6.0, 7.0], np.float32)

    def ref(m):
        out = a.copy().ravel()
        idx = ind if m is not None else np.where(ind < 0, ind + 6, ind)
        vals = np.resize(v, ind.size)
        if m is None:
            keep = (idx >= 0) & (idx < 6)
            idx, vals = idx[keep], vals[keep]
        np.put(out, idx, vals, mode=m or "raise")
        return out.reshape(a.shape)
    for m in [None, "clip", "wrap"]:
        out = mode(lambda x, i, y: jnp.put(x, i, y, mode=m, inplace=False))(a, ind, v)
        assert_close(out, ref(m))
        if jax is not None:
            _jax_same(out, jax_numpy.put(a, ind, v, mode=m, inplace=False))
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put(a, ind, v)
    with pytest.raises(NotImplementedError, match="raise"):
        jnp.put(a, ind, v, mode="raise", inplace=False)
    with pytest.raises(ValueError, match="mode"):
        jnp.put(a, ind, v, mode="fill", inplace=False)


# ---------------------------------------------------------------------------
# packbits / unpackbits
# ---------------------------------------------------------------------------
def test_packbits(mode, rng):
    bits = rng.integers(0, 2, (3, 11)).astype(np.uint8)
    ints = rng.integers(-2, 3, (4, 5)).astype(np.int32)
    out = mode(lambda b, i: (jnp.packbits(b), jnp.packbits(b, axis=1),
                             jnp.packbits(b, axis=0, bitorder="little"),
                             jnp.packbits(i, axis=-1), jnp.packbits(b != 0)))(bits, ints)
    assert_close(list(out), [np.packbits(bits), np.packbits(bits, axis=1),
                             np.packbits(bits, axis=0, bitorder="little"),
                             np.packbits(ints != 0, axis=-1), np.packbits(bits != 0)])
    if jax is not None:
        _jax_same(out[:4], [jax_numpy.packbits(bits), jax_numpy.packbits(bits, axis=1),
                            jax_numpy.packbits(bits, axis=0, bitorder="little"),
                            jax_numpy.packbits(ints, axis=-1)])
    with pytest.raises(TypeError, match="integer or boolean"):
        jnp.packbits(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="bitorder"):
        jnp.packbits(bits, bitorder="middle")


def test_unpackbits(mode, rng):
    u = rng.integers(0, 256, (3, 2)).astype(np.uint8)
    out = mode(lambda a: (jnp.unpackbits(a), jnp.unpackbits(a, axis=1, count=3),
                          jnp.unpackbits(a, axis=0, count=-5, bitorder="little"),
                          jnp.unpackbits(a, axis=1, count=20)))(u)
    assert_close(list(out), [np.unpackbits(u), np.unpackbits(u, axis=1, count=3),
                             np.unpackbits(u, axis=0, count=-5, bitorder="little"),
                             np.unpackbits(u, axis=1, count=20)])
    assert_close(jnp.packbits(jnp.unpackbits(u, axis=1), axis=1), u)
    with pytest.raises(TypeError, match="uint8"):
        jnp.unpackbits(np.array([1, 2], np.int32))


# ---------------------------------------------------------------------------
# apply_along_axis / apply_over_axes
# ---------------------------------------------------------------------------
def test_apply_along_axis(mode):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = mode(lambda a: (jnp.apply_along_axis(jnp.sum, 1, a),
                          jnp.apply_along_axis(lambda v: v[::-1] * 2, 0, a),
                          jnp.apply_along_axis(lambda v, k: jnp.outer(v, v) * k, -1, a, 2.0)))(x)
    assert_close(list(out), [np.apply_along_axis(np.sum, 1, x),
                             np.apply_along_axis(lambda v: v[::-1] * 2, 0, x),
                             np.apply_along_axis(lambda v, k: np.outer(v, v) * k, -1, x, 2.0)])
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.apply_along_axis(jnp.sum, 3, x)


def test_apply_over_axes(mode):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    out = mode(lambda a: (jnp.apply_over_axes(jnp.sum, a, [0, 2]),
                          jnp.apply_over_axes(lambda t, ax: jnp.max(t, ax, keepdims=True),
                                              a, (1,))))(x)
    assert_close(list(out), [np.apply_over_axes(np.sum, x, [0, 2]),
                             np.apply_over_axes(lambda t, ax: np.max(t, ax, keepdims=True),
                                                x, (1,))], check_dtype=False)
    if jax is not None:
        _jax_same(out[0], jax_numpy.apply_over_axes(jax_numpy.sum, x, [0, 2]))
    with pytest.raises(ValueError, match="rank"):
        jnp.apply_over_axes(lambda t, ax: jnp.sum(t), x, [0, 1])
