"""Semantics that must not depend on the installed NumPy (or JAX) version: each is
implemented by absjit, and tested against absjit's documented rule rather than against
whatever the installed library does.

* ``jnp.cross`` of 2-vectors (NumPy 2.5 removed them from ``np.cross``; JAX keeps them);
* float -> integer conversion truncates toward zero, saturates, and maps NaN to 0, on
  every path that converts (``astype``, ``convert_element_type``, ``jnp.array`` /
  ``asarray`` with an integer dtype, ``jnp.int8(x)``) — NumPy's ``astype`` leaves
  out-of-range values unspecified and changed them between versions;
* ``log2``/``log10`` are strongly typed whatever the operand (JAX 0.10's rule; JAX 0.11
  changed it, and ``tests/numpy/test_ufuncs.py`` tolerates that difference only).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import absjit
import absjit.lax as lax
import absjit.numpy as jnp


def test_cross_never_calls_numpys_cross(monkeypatch, mode):
    def refuse(*a, **k):
        raise AssertionError("np.cross was called")
    monkeypatch.setattr(np, "cross", refuse)
    a2, b2 = np.float32([[1, 2], [3, -4]]), np.float32([5, 7])
    got = np.asarray(mode(jnp.cross)(a2, b2))
    np.testing.assert_allclose(got, a2[:, 0] * b2[1] - a2[:, 1] * b2[0])
    a3, b3 = np.float32([1, 2, 3]), np.float32([-2, 0.5, 4])
    want3 = np.float32([a3[1] * b3[2] - a3[2] * b3[1], a3[2] * b3[0] - a3[0] * b3[2],
                        a3[0] * b3[1] - a3[1] * b3[0]])
    np.testing.assert_allclose(np.asarray(mode(jnp.cross)(a3, b3)), want3, rtol=1e-6)
    # a 2-vector with a 3-vector: the 2-vector's z is 0
    np.testing.assert_allclose(np.asarray(mode(jnp.cross)(a3[:2], b3)),
                               np.float32([2 * 4 - 0, 0 - 1 * 4, 1 * 0.5 - 2 * -2]),
                               rtol=1e-6)


def _rule(v, dtype):
    info = np.iinfo(dtype)
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return info.max if v > 0 else info.min
    return max(info.min, min(info.max, math.trunc(v)))


VALUES = [300.0, -300.0, float("nan"), float("inf"), float("-inf"), 2.7, -2.7, 3e9, -0.5]
CONVERSIONS = {
    "asarray(dtype=)": lambda x, dt: jnp.asarray(x, dtype=dt),
    "array(dtype=)": lambda x, dt: jnp.array(x, dtype=dt),
    "array(list, dtype=)": lambda x, dt: jnp.array(x.tolist(), dtype=dt),
    "scalar type": lambda x, dt: getattr(jnp, np.dtype(dt).name)(x),
    "astype": lambda x, dt: jnp.asarray(x).astype(dt),
    "convert_element_type": lambda x, dt: lax.convert_element_type(x, dt),
}


@pytest.mark.parametrize("how", list(CONVERSIONS))
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32])
def test_float_to_int_follows_the_documented_rule(how, dtype):
    x = np.array(VALUES, np.float32)
    got = np.asarray(CONVERSIONS[how](x, dtype))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, [_rule(float(v), dtype) for v in x])


@pytest.mark.parametrize("value", [300.7, -1e10, float("nan")])
def test_python_float_scalar_to_int(value):
    got = jnp.array(value, dtype=jnp.int8)
    assert int(got) == _rule(value, np.int8)
    assert int(jnp.int8(value)) == _rule(value, np.int8)


@pytest.mark.parametrize("fn", [jnp.log2, jnp.log10])
@pytest.mark.parametrize("x", [8, 8.0, np.float32(8), np.int32(8), np.ones(2, np.float32)])
def test_log2_log10_are_strongly_typed(mode, fn, x):
    out = mode(fn)(x)
    assert out.dtype == np.float32 and not out.weak_type
    want = np.log2 if fn is jnp.log2 else np.log10
    np.testing.assert_allclose(np.asarray(out), want(np.float32(x)), rtol=1e-6)


def test_log2_weak_type_in_x64_mode():
    absjit.config.update("enable_x64", True)
    out = jnp.log2(8.0)
    assert out.dtype == np.float64 and not out.weak_type and float(out) == 3.0
