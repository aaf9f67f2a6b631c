"""Array creation against NumPy (values) and JAX (dtypes and weak types)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as hs

import absjit
import absjit.numpy as jnp
from absjit.errors import ConcretizationTypeError
from tests.checks import assert_close, jax_numpy


def _same_type_as_jax(out, jax_out):
    if jax_numpy is None:
        return
    assert np.dtype(out.dtype) == np.dtype(jax_out.dtype), (out.dtype, jax_out.dtype)
    assert bool(out.weak_type) == bool(getattr(jax_out, "weak_type", False))


@pytest.mark.parametrize("args,kwargs", [
    ((5,), {}), ((5.0,), {}), ((2, 9, 3), {}), ((10, 0, -3), {}), ((0, 1, 0.25), {}),
    ((1, 5, 0.5), {}), ((3,), {"dtype": np.float32}), ((0,), {}), ((5, 2), {}),
    ((np.int32(4),), {}), ((-2.5, 2.5), {}), ((0, 10, 3), {"dtype": np.int16}),
])
def test_arange(args, kwargs):
    out = jnp.arange(*args, **kwargs)
    np_kwargs = dict(kwargs)
    expected = np.arange(*args, **np_kwargs)
    assert_close(out, expected.astype(out.dtype))
    if jax_numpy is not None:
        _same_type_as_jax(out, jax_numpy.arange(*args, **kwargs))


def test_arange_is_iota_when_traced():
    text = str(absjit.make_jaxpr(lambda: jnp.arange(4))())
    assert "iota[dtype=int32 shape=(4,) dimension=0]" in text
    text = str(absjit.make_jaxpr(lambda: jnp.arange(2, 11, 3))())
    assert "iota" in text and "mul" in text and "add" in text
    with pytest.raises(ConcretizationTypeError):
        absjit.make_jaxpr(lambda n: jnp.arange(n))(3)
    with pytest.raises(ValueError, match="step"):
        jnp.arange(0, 3, 0)


def test_arange_under_mode(mode):
    assert_close(mode(lambda x: x + jnp.arange(3))(np.float32(1)), np.arange(1, 4, dtype=np.float32))


@given(hs.floats(-10, 10), hs.floats(-10, 10), hs.integers(0, 7), hs.booleans())
def test_linspace_random(start, stop, num, endpoint):
    out, step = jnp.linspace(start, stop, num, endpoint=endpoint, retstep=True)
    exp, exp_step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
    assert_close(out, exp.astype(np.float32), rtol=1e-5, atol=1e-5)
    if num > 1 or not endpoint and num > 0:
        assert_close(step, np.float32(exp_step), rtol=1e-5, atol=1e-6)
    # Traced bounds stage arithmetic on an iota; values agree.
    traced = absjit.jit(lambda a, b: jnp.linspace(a, b, num, endpoint=endpoint),
                        backend="interpret")(np.float32(start), np.float32(stop))
    assert_close(traced, exp.astype(np.float32), rtol=1e-4, atol=1e-4)


def test_linspace_options():
    assert_close(jnp.linspace(0, 10, 5, dtype=int), np.linspace(0, 10, 5, dtype=int)
                 .astype(np.int32))
    a, b = np.array([0., 1.]), np.array([2., 5.])
    assert_close(jnp.linspace(a, b, 3, axis=1), np.linspace(a, b, 3, axis=1).astype(np.float32))
    assert_close(jnp.linspace(a, b, 3), np.linspace(a, b, 3).astype(np.float32))
    with pytest.raises(ValueError, match="non-negative"):
        jnp.linspace(0, 1, -1)
    if jax_numpy is not None:
        _same_type_as_jax(jnp.linspace(0, 1, 5), jax_numpy.linspace(0, 1, 5))
        _same_type_as_jax(jnp.linspace(0, 10, 5, dtype=int),
                          jax_numpy.linspace(0, 10, 5, dtype=int))


def test_linspace_traced_under_mode(mode):
    f = mode(lambda a, b: jnp.linspace(a, b, 5))
    assert_close(f(np.float32(1), np.float32(3)), np.linspace(1, 3, 5).astype(np.float32))


def test_logspace_geomspace():
    assert_close(jnp.logspace(0, 2, 3), np.logspace(0, 2, 3).astype(np.float32))
    assert_close(jnp.logspace(0, 3, 4, base=2.0, endpoint=False),
                 np.logspace(0, 3, 4, base=2.0, endpoint=False).astype(np.float32))
    assert_close(jnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4).astype(np.float32),
                 rtol=1e-5)
    assert_close(jnp.geomspace(-1, -16, 5), np.geomspace(-1, -16, 5).astype(np.float32),
                 rtol=1e-5)
    with pytest.raises(ValueError, match="zero"):
        jnp.geomspace(0, 1)
    if jax_numpy is not None:
        _same_type_as_jax(jnp.logspace(0, 2, 3), jax_numpy.logspace(0, 2, 3))


@given(hs.integers(0, 5), hs.one_of(hs.none(), hs.integers(0, 5)), hs.integers(-6, 6))
def test_eye_random(n, m, k):
    assert_close(jnp.eye(n, m, k), np.eye(n, m, k, dtype=np.float32))
    assert_close(jnp.eye(n, m, k, dtype=bool), np.eye(n, m, k, dtype=bool))


def test_eye_identity_under_mode(mode):
    assert_close(mode(lambda x: x * jnp.eye(3, k=1))(np.float32(2)),
                 2 * np.eye(3, k=1, dtype=np.float32))
    assert_close(jnp.identity(3, dtype=np.int32), np.identity(3, dtype=np.int32))
    if jax_numpy is not None:
        _same_type_as_jax(jnp.eye(2), jax_numpy.eye(2))
        _same_type_as_jax(jnp.identity(2, dtype=int), jax_numpy.identity(2, dtype=int))
    with pytest.raises(ValueError, match="negative"):
        jnp.eye(-1)
    with pytest.raises(TypeError, match="integer"):
        jnp.eye(2.5)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    xs = [np.arange(3, dtype=np.float32), np.arange(2, dtype=np.int32), np.arange(4.0)]
    for k in (1, 2, 3):
        out = jnp.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
        exp = np.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
        assert len(out) == len(exp)
        for o, e in zip(out, exp):
            assert_close(o, e.astype(o.dtype))
    with pytest.raises(ValueError, match="indexing"):
        jnp.meshgrid(xs[0], indexing="yx")
    with pytest.raises(ValueError, match="1-D"):
        jnp.meshgrid(np.zeros((2, 2)))


def test_indices():
    assert_close(jnp.indices((2, 3)), np.indices((2, 3)).astype(np.int32))
    for o, e in zip(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
        assert_close(o, e.astype(np.int32))


def test_array_of_tracers_stages_a_stack(mode):
    def f(xs):
        return jnp.array([x ** 2 for x in xs])

    x = np.arange(3, dtype=np.float32)
    assert_close(mode(f)(x), x ** 2)
    text = str(absjit.make_jaxpr(f)(x))
    assert "concatenate[dimension=0]" in text and "f32[3]" in text
    nested = absjit.make_jaxpr(lambda a: jnp.array([[a, 1.0], [2.0, a]]))(np.float32(3))
    assert "f32[2,2]" in str(nested)


def test_like_functions_on_tracers(mode):
    def f(x):
        return jnp.zeros_like(x), jnp.ones_like(x, dtype=np.int32), jnp.full_like(x, 7.0), \
            jnp.empty_like(x)

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    z, o, s, e = mode(f)(x)
    assert_close(z, np.zeros_like(x))
    assert_close(o, np.ones((2, 3), np.int32))
    assert_close(s, np.full_like(x, 7.0))
    assert e.shape == x.shape and e.dtype == x.dtype
    text = str(absjit.make_jaxpr(lambda x: jnp.ones(3) + x)(np.float32(1)))
    assert "f32[3] = broadcast_in_dim 1.0" in text


def test_tri_family_in_creation_namespace():
    assert_close(jnp.tri(3, 2, -1, dtype=np.int32), np.tri(3, 2, -1, dtype=np.int32))
    assert_close(jnp.tril(np.ones((3, 3)), -1), np.tril(np.ones((3, 3), np.float32), -1))
    assert_close(jnp.triu(np.ones((2, 3, 3)), 1), np.triu(np.ones((2, 3, 3), np.float32), 1))
