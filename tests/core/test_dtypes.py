"""JAX's promotion lattice and canonicalization."""
import itertools

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import dtypes
from tests.checks import jax, jax_numpy

ALL = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
       np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
if dtypes.bfloat16 is not None:
    ALL.append(dtypes.bfloat16)


@pytest.mark.skipif(jax is None, reason="JAX not installed")
@pytest.mark.parametrize("x64", [False, True])
def test_promote_types_matches_jax_everywhere(x64):
    absjit.config.update("enable_x64", x64)
    jax.config.update("jax_enable_x64", x64)
    try:
        for a, b in itertools.product(ALL, ALL):
            ours = dtypes.promote_types(a, b)
            theirs = jax_numpy.promote_types(a, b)
            theirs = np.dtype(jax.dtypes.canonicalize_dtype(theirs))
            assert ours == theirs, (a, b, ours, theirs)
    finally:
        jax.config.update("jax_enable_x64", False)


WEAK_CASES = [1, 1.0, 1j, True]


@pytest.mark.skipif(jax is None, reason="JAX not installed")
def test_weak_scalar_promotion_matches_jax():
    for dt, scalar in itertools.product(ALL, WEAK_CASES):
        arr = np.zeros(2, dtype=dt)
        ours = jnp.add(jnp.asarray(arr), scalar)
        theirs = jax_numpy.add(jax_numpy.asarray(arr), scalar)
        assert ours.dtype == theirs.dtype, (dt, scalar)
        assert ours.weak_type == theirs.weak_type, (dt, scalar)
    for a, b in itertools.product(WEAK_CASES, WEAK_CASES):
        ours, theirs = jnp.add(a, b), jax_numpy.add(a, b)
        assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), (a, b)


def test_canonicalize_without_x64():
    assert dtypes.canonicalize_dtype(np.float64) == np.float32
    assert dtypes.canonicalize_dtype(np.int64) == np.int32
    assert jnp.asarray(np.ones(3)).dtype == np.float32
    absjit.config.update("enable_x64", True)
    assert jnp.asarray(np.ones(3)).dtype == np.float64
    assert jnp.add(1.0, 1.0).dtype == np.float64


def test_unsupported_dtypes_are_type_errors():
    with pytest.raises(TypeError):
        jnp.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        jnp.asarray(np.array([object()], dtype=object))
    with pytest.raises(TypeError):
        jnp.zeros(3, dtype="U5")


def test_scalar_types_make_arrays():
    x = jnp.float32(1)
    assert isinstance(x, absjit.Array) and x.dtype == np.float32 and not x.weak_type
    assert np.dtype(jnp.float32) == np.float32
    assert jnp.asarray([1, 2]).astype(jnp.float16).dtype == np.float16
    assert isinstance(x, jnp.ndarray)
