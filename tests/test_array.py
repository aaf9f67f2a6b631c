"""absjit.Array: immutability, conversions, printing, protocols, operators, methods."""
import pickle

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from tests.checks import jax, jax_numpy


def test_repr_matches_jax_format():
    assert repr(jnp.array([1., 2.])) == "Array([1., 2.], dtype=float32)"
    assert repr(jnp.add(2, 2)) == "Array(4, dtype=int32, weak_type=True)"
    assert repr(jnp.zeros((0, 2))) == "Array([], shape=(0, 2), dtype=float32)"
    if jax is not None:
        for value in ([1., 2.], [[1, 2], [3, 4]], 3.5, [True, False]):
            assert repr(jnp.array(value)) == repr(jax_numpy.array(value))


def test_immutable_with_a_pointer_to_at():
    x = jnp.arange(3)
    with pytest.raises(TypeError, match=r"immutable.*\.at\[idx\]\.set"):
        x[0] = 1
    assert x.at[0].set(10).tolist() == [10, 1, 2]
    assert x.tolist() == [0, 1, 2]
    with pytest.raises(ValueError):
        np.asarray(x)[0] = 5  # the shared buffer is read-only
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def test_numpy_conversion_is_zero_copy():
    x = jnp.arange(6.0).reshape(2, 3)
    a, b = np.asarray(x), np.asarray(x)
    assert np.shares_memory(a, b) and a.dtype == np.float32
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert not np.shares_memory(np.array(x, copy=True), a)


def test_scalar_conversions_and_item():
    assert float(jnp.float32(2.5)) == 2.5 and int(jnp.int32(7)) == 7
    assert bool(jnp.array(True)) is True and complex(jnp.array(1 + 2j)) == 1 + 2j
    assert [10, 20, 30][jnp.int32(1)] == 20  # __index__
    with pytest.raises(TypeError, match="integer"):
        [1, 2][jnp.float32(1)]
    assert jnp.array([[1, 2]]).item(1) == 2


def test_len_iter_and_zero_d():
    x = jnp.arange(3)
    assert len(x) == 3 and [int(v) for v in x] == [0, 1, 2]
    with pytest.raises(TypeError, match="unsized"):
        len(jnp.float32(1))
    with pytest.raises(TypeError, match="0-d"):
        iter(jnp.float32(1))


def test_metadata():
    x = jnp.ones((2, 3), dtype=jnp.float16)
    assert (x.shape, x.ndim, x.size, x.dtype, x.itemsize, x.nbytes) == \
        ((2, 3), 2, 6, np.float16, 2, 12)
    assert x.T.shape == (3, 2) and x.weak_type is False
    assert x.block_until_ready() is x and absjit.block_until_ready({"a": x})["a"] is x


def test_dlpack_shares_with_new_consumers_and_copies_for_old_ones():
    x = jnp.arange(4.0)
    y = np.from_dlpack(x)  # asks for DLPack >= 1.0: shared and read-only
    assert np.shares_memory(y, np.asarray(x)) and not y.flags.writeable
    assert x.__dlpack_device__() == (1, 0)
    old = np.from_dlpack(_OldConsumerView(x))
    assert old.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not np.shares_memory(old, np.asarray(x))
    if jax is not None:
        assert jax_numpy.from_dlpack(x).tolist() == [0.0, 1.0, 2.0, 3.0]


class _OldConsumerView:
    """Stands for a consumer that speaks DLPack 0.x (no max_version)."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kwargs):
        return self.x.__dlpack__(stream=kwargs.get("stream"))

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


def test_pickle_roundtrip_keeps_weak_type():
    x = jnp.add(jnp.arange(3), 1.5)
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, absjit.Array) and y.weak_type == x.weak_type
    assert y.tolist() == x.tolist()


def test_operators_dispatch_to_numpy_layer():
    x = jnp.arange(1, 5)
    assert (x + 1).tolist() == [2, 3, 4, 5] and (1 + x).tolist() == [2, 3, 4, 5]
    assert (x / 2).dtype == np.float32 and (x // 2).tolist() == [0, 1, 1, 2]
    assert (x ** 2).tolist() == [1, 4, 9, 16] and (-x).tolist() == [-1, -2, -3, -4]
    assert (x @ x).item() == 30 and (x > 2).tolist() == [False, False, True, True]
    assert (np.arange(4) + x).tolist() == [1, 3, 5, 7]  # ndarray on the left defers
    assert isinstance(np.arange(4) + x, absjit.Array)
    assert abs(jnp.array([-1, 2])).tolist() == [1, 2]
    assert (~jnp.array([True, False])).tolist() == [False, True]
    with pytest.raises(TypeError):
        x + "a"


def test_methods():
    x = jnp.arange(6.0).reshape(2, 3)
    assert x.sum() == 15 and x.mean(0).tolist() == [1.5, 2.5, 3.5]
    assert x.max() == 5 and x.min(1).tolist() == [0, 3] and x.prod() == 0
    assert x.astype(jnp.int32).dtype == np.int32 and x.ravel().shape == (6,)
    assert x.transpose().shape == (3, 2) and x.reshape(3, 2).shape == (3, 2)
    assert x.reshape((1, 6)).squeeze().shape == (6,)
    np.testing.assert_allclose(np.asarray(x.std()), np.arange(6.0).std(), rtol=1e-6)
    assert x.argmax() == 5 and x.cumsum().tolist()[-1] == 15


def test_nan_and_inf_flow_through():
    x = jnp.array([np.nan, np.inf, -1.0])
    assert np.isnan(np.asarray(jnp.sqrt(x))[0]) and np.asarray(jnp.log(x))[1] == np.inf
    assert np.isnan(np.asarray(jnp.sqrt(x))[2])
