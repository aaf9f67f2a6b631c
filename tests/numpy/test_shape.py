"""Shape functions of ``absjit.numpy`` against NumPy (values) and JAX (dtypes)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as hs

import absjit
import absjit.numpy as jnp
from absjit.errors import ConcretizationTypeError, TracerIntegerConversionError
from tests.checks import assert_close, check_against_numpy, jax_numpy

shapes = hs.lists(hs.integers(0, 4), min_size=1, max_size=3).map(tuple)

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
B = np.arange(12, dtype=np.int32).reshape(3, 4)

# (id, function of the module m (absjit.numpy, numpy or jax.numpy) and an array)
CASES = [
    ("reshape", lambda m, x: m.reshape(x, (4, -1))),
    ("ravel", lambda m, x: m.ravel(x)),
    ("transpose", lambda m, x: m.transpose(x)),
    ("transpose_axes", lambda m, x: m.transpose(x, (1, 2, 0))),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, 2)),
    ("moveaxis", lambda m, x: m.moveaxis(x, [0, 1], [2, 0])),
    ("expand_dims", lambda m, x: m.expand_dims(x, (0, -1))),
    ("squeeze", lambda m, x: m.squeeze(m.expand_dims(x, 1))),
    ("broadcast_to", lambda m, x: m.broadcast_to(x[0, 0], (2, 4))),
    ("broadcast_arrays", lambda m, x: m.broadcast_arrays(x[0], x[:, :1, :1])),
    ("concatenate", lambda m, x: m.concatenate([x, x * 2], axis=-1)),
    ("concatenate_none", lambda m, x: m.concatenate([x, x[0]], axis=None)),
    ("stack", lambda m, x: m.stack([x, x], 1)),
    ("hstack", lambda m, x: m.hstack([x, x])),
    ("vstack", lambda m, x: m.vstack([x[0, 0], x[1, 1]])),
    ("dstack", lambda m, x: m.dstack([x[0], x[1]])),
    ("column_stack", lambda m, x: m.column_stack([x[0, 0], x[1, 0]])),
    ("split", lambda m, x: m.split(x, 2, axis=2)),
    ("array_split", lambda m, x: m.array_split(x, 3, axis=2)),
    ("split_indices", lambda m, x: m.split(x, [1, 3], axis=2)),
    ("hsplit", lambda m, x: m.hsplit(x, 3)),
    ("vsplit", lambda m, x: m.vsplit(x, 2)),
    ("flip", lambda m, x: m.flip(x)),
    ("flip_axes", lambda m, x: m.flip(x, (0, 2))),
    ("fliplr", lambda m, x: m.fliplr(x)),
    ("flipud", lambda m, x: m.flipud(x)),
    ("roll", lambda m, x: m.roll(x, 2)),
    ("roll_axis", lambda m, x: m.roll(x, -1, axis=1)),
    ("roll_multi", lambda m, x: m.roll(x, (1, 2), axis=(0, 2))),
    ("rot90", lambda m, x: m.rot90(x)),
    ("rot90_k3", lambda m, x: m.rot90(x, 3, (1, 2))),
    ("rot90_k2", lambda m, x: m.rot90(x, 2)),
    ("tile", lambda m, x: m.tile(x[0, 0], (2, 3))),
    ("tile_int", lambda m, x: m.tile(x, 2)),
    ("repeat", lambda m, x: m.repeat(x, 2, axis=1)),
    ("repeat_flat", lambda m, x: m.repeat(x, 3)),
    ("repeat_counts", lambda m, x: m.repeat(x[0, 0], np.array([1, 0, 2, 3]))),
    ("take", lambda m, x: m.take(x, np.array([[0, -1], [2, 3]]), axis=2)),
    ("take_flat", lambda m, x: m.take(x, np.array([5, 23]))),
    ("take_along_axis", lambda m, x: m.take_along_axis(
        x, np.argsort(-np.asarray(A), axis=1), axis=1)),
    ("diagonal", lambda m, x: m.diagonal(x)),
    ("diagonal_offset", lambda m, x: m.diagonal(x, 1, 1, 2)),
    ("diagonal_neg", lambda m, x: m.diagonal(x, -1, 2, 1)),
    ("diag_2d", lambda m, x: m.diag(x[0])),
    ("diag_1d", lambda m, x: m.diag(x[0, 0], 1)),
    ("diag_1d_neg", lambda m, x: m.diag(x[0, 0], -2)),
    ("trace", lambda m, x: m.trace(x[0], 1)),
    ("tril", lambda m, x: m.tril(x)),
    ("triu", lambda m, x: m.triu(x, 1)),
    ("atleast_1d", lambda m, x: m.atleast_1d(x[0, 0, 0])),
    ("atleast_2d", lambda m, x: m.atleast_2d(x[0, 0])),
    ("atleast_3d", lambda m, x: m.atleast_3d(x[0, 0])),
    ("atleast_3d_2d", lambda m, x: m.atleast_3d(x[0])),
]


@pytest.mark.parametrize("fn", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_shape_functions(mode, fn):
    check_against_numpy(lambda x: fn(jnp, x), lambda x: fn(np, x), A, transform=mode,
                        jax_fn=(lambda x: fn(jax_numpy, x)) if jax_numpy is not None else None)


def test_int_dtype_preserved_and_promotion():
    out = jnp.concatenate([B, np.ones((1, 4), np.float32)])
    assert out.dtype == np.float32
    assert jnp.stack([B, B]).dtype == np.int32
    assert jnp.tri(3).dtype == np.float32
    assert jnp.tri(3, dtype=int).dtype == np.int32
    if jax_numpy is not None:
        assert jnp.concatenate([1.0, B[0]], axis=None).dtype == \
            jax_numpy.concatenate([jax_numpy.atleast_1d(1.0), B[0]]).dtype


def test_query_functions():
    assert jnp.ndim(A) == 3 and jnp.shape(A) == (2, 3, 4) and jnp.size(A) == 24
    assert jnp.size(A, -1) == 4
    assert jnp.broadcast_shapes((2, 1), (3,)) == (2, 3)


# ---------------------------------------------------------------------------
# hypothesis over shapes and axes
# ---------------------------------------------------------------------------
@given(shapes, hs.randoms())
def test_reshape_transpose_random(shape, r):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    target = list(shape)[::-1]
    if target:
        target[r.randrange(len(target))] = -1
    if 0 in shape and -1 in target:
        target[target.index(-1)] = 0
    assert_close(jnp.reshape(x, target), np.reshape(x, target))
    perm = list(range(len(shape)))
    r.shuffle(perm)
    assert_close(jnp.transpose(x, perm), np.transpose(x, perm))
    src, dst = r.randrange(len(shape)), r.randrange(-len(shape), len(shape))
    assert_close(jnp.moveaxis(x, src, dst), np.moveaxis(x, src, dst))
    assert_close(jnp.expand_dims(x, dst), np.expand_dims(x, dst))


@given(shapes, hs.integers(-3, 2), hs.integers(1, 3))
def test_join_split_random(shape, axis, sections):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    axis = axis % len(shape)
    assert_close(jnp.concatenate([x, x + 1], axis), np.concatenate([x, x + 1], axis))
    assert_close(jnp.stack([x, x], axis), np.stack([x, x], axis))
    assert_close(jnp.array_split(x, sections, axis), np.array_split(x, sections, axis))
    assert_close(jnp.split(x, [1, -1], axis), np.split(x, [1, -1], axis))
    assert_close(jnp.flip(x, axis), np.flip(x, axis))


@given(shapes, hs.integers(-7, 7), hs.lists(hs.integers(0, 2), min_size=1, max_size=3))
def test_roll_tile_repeat_random(shape, shift, reps):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    assert_close(jnp.roll(x, shift), np.roll(x, shift))
    assert_close(jnp.roll(x, shift, axis=-1), np.roll(x, shift, axis=-1))
    assert_close(jnp.tile(x, reps), np.tile(x, reps))
    assert_close(jnp.repeat(x, reps[0], axis=0), np.repeat(x, reps[0], axis=0))
    counts = (np.arange(shape[-1]) % 3)
    assert_close(jnp.repeat(x, counts, axis=-1), np.repeat(x, counts, axis=-1))


@given(hs.integers(0, 4), hs.integers(0, 4), hs.integers(-5, 5))
def test_diagonal_triangles_random(n, m, k):
    x = np.arange(n * m * 2, dtype=np.float32).reshape(2, n, m)
    assert_close(jnp.diagonal(x, k, 1, 2), np.diagonal(x, k, 1, 2))
    assert_close(jnp.tril(x, k), np.tril(x, k))
    assert_close(jnp.triu(x, k), np.triu(x, k))
    assert_close(jnp.tri(n, m, k), np.tri(n, m, k, dtype=np.float32))
    if n:
        assert_close(jnp.diag(x[0, 0], k), np.diag(x[0, 0], k))


@given(shapes, hs.data())
def test_take_random(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    axis = data.draw(hs.integers(0, len(shape) - 1))
    n = shape[axis]
    if n == 0:
        return
    idx = np.array(data.draw(hs.lists(hs.integers(-n, n - 1), max_size=4)), np.int32)
    assert_close(jnp.take(x, idx, axis=axis), np.take(x, idx, axis=axis))
    along = np.broadcast_to(idx.reshape((1,) * axis + (-1,) + (1,) * (len(shape) - axis - 1)),
                            shape[:axis] + (len(idx),) + shape[axis + 1:])
    assert_close(jnp.take_along_axis(x, along, axis), np.take_along_axis(x, along, axis))


def test_take_modes():
    x = np.array([10., 20., 30.], np.float32)
    idx = np.array([0, 3, -4, 2])
    assert_close(jnp.take(x, idx), np.array([10, np.nan, np.nan, 30], np.float32))
    assert_close(jnp.take(x, idx, mode="clip"), np.take(x, idx, mode="clip"))
    assert_close(jnp.take(x, idx, mode="wrap"), np.take(x, idx, mode="wrap"))
    assert_close(jnp.take(x, idx, fill_value=-1.0), np.array([10, -1, -1, 30], np.float32))
    assert_close(jnp.take(B, np.array([99]), axis=1)[0], np.array([np.iinfo(np.int32).min], np.int32))
    if jax_numpy is not None:
        assert_close(jnp.take(x, idx), np.asarray(jax_numpy.take(x, idx)))


# ---------------------------------------------------------------------------
# traced arguments
# ---------------------------------------------------------------------------
def test_roll_traced_shift(mode):
    x = np.arange(5, dtype=np.float32)
    f = mode(lambda x, s: jnp.roll(x, s))
    for s in [0, 2, -1, 7, -12]:
        assert_close(f(x, np.int32(s)), np.roll(x, s))


def test_repeat_traced_counts(mode):
    x = np.array([1., 2., 3.], np.float32)
    f = mode(lambda x, r: jnp.repeat(x, r, total_repeat_length=5))
    assert_close(f(x, np.array([2, 0, 3], np.int32)), np.array([1, 1, 3, 3, 3], np.float32))
    with pytest.raises(ConcretizationTypeError, match="total_repeat_length"):
        absjit.make_jaxpr(lambda x, r: jnp.repeat(x, r))(x, np.array([1, 1, 1]))


def test_reshape_with_traced_size_names_the_fix():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TracerIntegerConversionError, match="np.prod"):
        absjit.jit(lambda x: x.reshape(jnp.array(x.shape).prod()))(x)
    assert absjit.jit(lambda x: x.reshape(np.prod(x.shape)))(x).shape == (6,)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: jnp.reshape(x, (5, -1)), ValueError, "cannot reshape"),
    (lambda x: jnp.reshape(x, (-1, -1)), ValueError, "one unknown"),
    (lambda x: jnp.reshape(x, (2, 2.5)), TypeError, "integer"),
    (lambda x: jnp.transpose(x, (0, 1)), ValueError, "don't match"),
    (lambda x: jnp.transpose(x, (0, 1, 3)), ValueError, "out of bounds"),
    (lambda x: jnp.swapaxes(x, 0, 3), ValueError, "out of bounds"),
    (lambda x: jnp.squeeze(x, 0), ValueError, "size not equal to one"),
    (lambda x: jnp.expand_dims(x, 5), ValueError, "out of bounds"),
    (lambda x: jnp.broadcast_to(x, (3, 3, 4)), ValueError, "cannot broadcast"),
    (lambda x: jnp.broadcast_arrays(x, np.zeros(5)), ValueError, "incompatible"),
    (lambda x: jnp.concatenate([x, x[0]]), ValueError, "same number of dimensions"),
    (lambda x: jnp.concatenate([x, x[:, :2]], axis=2), ValueError, "must match"),
    (lambda x: jnp.concatenate([x, x], axis=3), ValueError, "out of bounds"),
    (lambda x: jnp.concatenate([x[0, 0, 0]]), ValueError, "zero-dimensional"),
    (lambda x: jnp.stack([x, x[0]]), ValueError, "same shape"),
    (lambda x: jnp.stack([]), ValueError, "at least one"),
    (lambda x: jnp.split(x, 5, axis=2), ValueError, "equal division"),
    (lambda x: jnp.flip(x, 4), ValueError, "out of bounds"),
    (lambda x: jnp.roll(x, (1, 2), axis=(0, 1, 2)), ValueError, "same length"),
    (lambda x: jnp.repeat(x, np.array([1, 2])), ValueError, "one entry per element"),
    (lambda x: jnp.take(x, np.array([0.5])), TypeError, "integers"),
    (lambda x: jnp.take_along_axis(x, np.zeros((2, 3), np.int32), 0), ValueError, "rank"),
    (lambda x: jnp.diagonal(x[0, 0]), ValueError, "two dimensions"),
    (lambda x: jnp.diagonal(x, 0, 1, 1), ValueError, "cannot be the same"),
    (lambda x: jnp.tril(x[0, 0]), ValueError, "2-D"),
    (lambda x: jnp.vsplit(x[0, 0], 2), ValueError, "2 or more"),
    (lambda x: jnp.rot90(x, 1, (0, 0)), ValueError, "repeated axis|different"),
])
def test_bad_input(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn(A)
    with pytest.raises(exc, match=match):
        absjit.make_jaxpr(fn)(A)


def test_jaxpr_of_shape_functions():
    text = str(absjit.make_jaxpr(lambda x: jnp.flip(jnp.swapaxes(x, 0, 1), 0))(B))
    assert text == ("{ lambda ; a:i32[3,4]. let\n"
                    "    b:i32[4,3] = transpose[permutation=(1, 0)] a\n"
                    "    c:i32[4,3] = rev[dimensions=(0,)] b\n"
                    "  in (c,) }")
    text = str(absjit.make_jaxpr(lambda x: jnp.stack([x, x]))(np.zeros(2, np.float32)))
    assert "concatenate[dimension=0]" in text and "f32[2,2]" in text


@pytest.mark.parametrize("fn", [
    lambda m: m.stack([1, 2]), lambda m: m.hstack([1., 2.]), lambda m: m.tile(m.array(1.0), 3),
    lambda m: m.repeat(m.array(1.0), 3), lambda m: m.broadcast_to(1.0, (2,)),
    lambda m: m.expand_dims(m.array(2.0), 0), lambda m: m.take(m.array(2.0)[None], m.array([0])),
    lambda m: m.concatenate([m.array(1.0)[None], m.array([2., 3.])]),
])
def test_weak_types_follow_jax(fn):
    out = fn(jnp)
    if jax_numpy is not None:
        ref = fn(jax_numpy)
        assert (out.dtype, out.weak_type) == (ref.dtype, ref.weak_type)
    else:
        assert out.dtype in (np.float32, np.int32)
