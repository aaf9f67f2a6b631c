"""The branch-free two-way select (``absjit.ops._select.blend_into``) against
``np.where``, bit for bit: every element size, scalar cases, masks of every kind (random,
sorted, all one case), NaN payloads and signed zeros, and an ``out`` that is a case's
own buffer; and the cases it declines, untouched."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from absjit.ops._select import BLOCK, MIN_ELEMENTS, blend_into

DTYPES = [np.bool_, np.int8, np.uint16, np.float16, np.int32, np.float32, np.float64,
          np.int64, np.complex64]


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8)


def _case(rng, dtype, n):
    raw = rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype=np.uint8)
    if np.dtype(dtype) == np.bool_:
        raw = raw % 2
    return raw.view(dtype)  # any bits: NaN payloads, signed zeros, subnormals


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from(DTYPES), n=st.sampled_from([MIN_ELEMENTS, BLOCK + 7, 3 * BLOCK]),
       mask=st.sampled_from(["random", "sorted", "all", "none", "alternating"]),
       scalar0=st.booleans(), scalar1=st.booleans(), alias=st.sampled_from([None, 0, 1]),
       seed=st.integers(0, 2 ** 16))
def test_blend_equals_where_bit_for_bit(dtype, n, mask, scalar0, scalar1, alias, seed):
    rng = np.random.default_rng(seed)
    which = {"random": rng.random(n) < 0.5, "sorted": np.arange(n) >= n // 3,
             "all": np.ones(n, bool), "none": np.zeros(n, bool),
             "alternating": np.arange(n) % 2 == 0}[mask]
    which = which.reshape(-1, 1) if n % 2 else which.reshape(2, -1)
    shape = which.shape
    c0 = _case(rng, dtype, 1)[0] if scalar0 else _case(rng, dtype, n).reshape(shape)
    c1 = _case(rng, dtype, 1)[0] if scalar1 else _case(rng, dtype, n).reshape(shape)
    want = np.where(which, c1, c0)
    cases = [c0, c1]
    if alias is not None and not (scalar0, scalar1)[alias]:
        out = cases[alias] = cases[alias].copy()
    else:
        out = np.empty(shape, dtype)
    got = blend_into(which, cases[0], cases[1], out)
    assert got is out
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_declined_cases_leave_out_untouched():
    n = 2 * MIN_ELEMENTS
    which = np.arange(n) % 3 == 0
    a, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    for args in [(which[:10], a[:10], b[:10], np.empty(10, np.float32)),    # small
                 (which, a, b, np.empty(2 * n, np.float32)[::2]),           # strided out
                 (which, a[::-1], b, np.empty(n, np.float32)),              # strided case
                 (which, a.astype(np.float64), b, np.empty(n, np.float32)),  # other dtype
                 (which.astype(np.int8), a, b, np.empty(n, np.float32)),    # not boolean
                 (which, a.astype(np.complex128), b.astype(np.complex128),  # 16 bytes
                  np.empty(n, np.complex128))]:
        out = args[-1]
        out[...] = 7
        assert blend_into(*args) is None
        assert (out == 7).all()


@pytest.mark.parametrize("backend", ["interpret"])
def test_where_on_random_data_under_the_interpreter_and_eager(backend):
    import absjit
    import absjit.numpy as jnp
    x = np.random.default_rng(3).standard_normal(3 * BLOCK).astype(np.float32)
    x[::7] = np.nan
    x[1::11] = -0.0

    def f(v):
        return jnp.where(v > 0, v, jnp.float32(-0.0) * v) * 2

    want = np.where(x > 0, x, np.float32(-0.0) * x) * 2
    for got in (f(x), absjit.jit(f, backend=backend)(x)):
        np.testing.assert_array_equal(_bits(np.asarray(got)), _bits(want))
