"""``_empty``, the allocation generated kernels use instead of Numba's ``np.empty``."""
from __future__ import annotations

import numba
import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu.kernels.alloc_kernels import _empty


@numba.njit
def _make(shape, dtype):
    return _empty(shape, dtype)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float32,
                                   np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 0, 7), (1, 1, 1, 3)])
def test_matches_numpy_empty(dtype, shape):
    a = _make(shape, dtype)
    want = np.empty(shape, dtype)
    assert a.shape == want.shape and a.dtype == want.dtype
    assert a.flags.c_contiguous and a.flags.writeable
    if a.size:
        assert a.strides == want.strides
        a[...] = 1
        assert a.sum() == a.size


def test_one_integer_is_a_1d_shape():
    @numba.njit
    def f(n):
        return _empty(n, np.float32)
    assert f(6).shape == (6,)


@pytest.mark.parametrize("shape,match", [((-1,), "negative dimensions"),
                                         ((3, -2), "negative dimensions"),
                                         ((1 << 62, 4), "array is too big")])
def test_bad_sizes_raise_value_error(shape, match):
    with pytest.raises(ValueError, match=match):
        _make(shape, np.float64)


def test_kernels_allocate_with_it():
    f = absjit.jit(lambda x: jnp.exp(x) + 1.0)
    x = np.arange(6, dtype=np.float32)
    src = f.lower(x).compile().as_text()
    assert "_empty(" in src and "np.empty(" not in src
    np.testing.assert_allclose(np.asarray(f(x)), np.exp(x) + 1, rtol=1e-6)
