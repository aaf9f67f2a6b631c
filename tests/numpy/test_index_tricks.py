"""``absjit.numpy._index_tricks``: ix_, mgrid, ogrid, r_, c_, s_ and index_exp against
NumPy and (where installed) JAX, eagerly and inside a jitted program."""
import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from tests.checks import assert_close, jax_numpy


def _grids(m):
    return (m.mgrid[0:3, 1:2], m.mgrid[0:1:5j], m.mgrid[0:2:0.5, 0:2], m.mgrid[-1:1:3j, 0:2],
            *m.ogrid[0:3, 1:4:2], m.ogrid[0:3], m.r_[np.array([1, 2]), 0, 3:5],
            m.r_[1.0, np.array([1, 2])], m.r_["0,2", np.array([1, 2]), np.array([3, 4])],
            m.r_["-1,2,0", np.array([1, 2]), np.array([3, 4])],
            m.c_[np.array([1, 2]), np.array([3, 4])], m.c_[np.ones((2, 2)), np.array([3, 4])],
            m.c_[1:3, 3:5])


def test_grids_and_concatenators_match_numpy_and_jax():
    got = _grids(jnp)
    want = _grids(np)
    for g, w in zip(got, want):
        assert_close(g, np.asarray(w).astype(g.dtype))
    if jax_numpy is not None:
        for g, w in zip(got, _grids(jax_numpy)):
            assert np.dtype(g.dtype) == np.dtype(w.dtype)
            assert bool(g.weak_type) == bool(w.weak_type)
    # inside a traced program the grids are constants, the arrays traced
    f = absjit.jit(lambda x: jnp.r_[x, 0, 3:5] + jnp.mgrid[0:5][None], backend="interpret")
    assert_close(f(np.array([1, 2], np.int32)), np.array([[1, 3, 2, 6, 8]], np.int32))


@pytest.mark.parametrize("directive", ["0,3,1", "1,3,-1", "0,3,0", "0,4,-2", "0,4,1",
                                       "0,4,2"])
@pytest.mark.parametrize("shape", [(2, 3), (3,)])
def test_r_directives_follow_numpy(directive, shape):
    a = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    assert_close(jnp.r_[directive, a, a], np.r_[directive, a, a])


def test_ix_s_index_exp():
    rows, cols = jnp.ix_(np.array([0, 2]), np.array([True, False, True]))
    want = np.ix_(np.array([0, 2]), np.array([True, False, True]))
    assert_close((rows, cols), tuple(w.astype(np.int32) for w in want))
    x = np.arange(12).reshape(3, 4)
    ix = jnp.ix_(jnp.array([0, 2]), jnp.array([1, 3]))
    assert_close(jnp.asarray(x)[ix], x[np.ix_([0, 2], [1, 3])].astype(np.int32))
    assert jnp.s_[1:2, ::3] == np.s_[1:2, ::3]
    assert jnp.index_exp[1:2] == np.index_exp[1:2]


def test_index_tricks_bad_input():
    with pytest.raises(ValueError, match="1 dimensional"):
        jnp.ix_(np.ones((2, 2)))
    with pytest.raises(ValueError, match="matrix"):
        jnp.r_["r", np.array([1, 2])]
    with pytest.raises(ValueError, match="first"):
        jnp.r_[np.array([1, 2]), "0"]
    with pytest.raises(ValueError):  # NumPy raises too: no such axis order
        jnp.r_["0,3,-3", np.ones((2, 3))]
    with pytest.raises(TypeError, match="concrete"):
        absjit.jit(lambda n: jnp.mgrid[0:n])(3)
