"""The eager fast path of binary operators gives exactly what the ordinary path gives."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.numpy import _eager_fast

OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.eq,
       operator.ne, operator.lt, operator.le, operator.gt, operator.ge, operator.and_,
       operator.or_, operator.xor]
SLOW = {operator.add: jnp.add, operator.sub: jnp.subtract, operator.mul: jnp.multiply,
        operator.truediv: jnp.true_divide, operator.eq: jnp.equal,
        operator.ne: jnp.not_equal, operator.lt: jnp.less, operator.le: jnp.less_equal,
        operator.gt: jnp.greater, operator.ge: jnp.greater_equal,
        operator.and_: jnp.bitwise_and, operator.or_: jnp.bitwise_or,
        operator.xor: jnp.bitwise_xor}


def _same(a, b):
    assert type(a) is type(b) is absjit.Array
    assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(-5, 6, shape)
    if np.dtype(dtype).kind == "f":
        v = v.astype(dtype)
        v.flat[0] = np.nan
        if v.size > 1:
            v.flat[1] = np.inf
    return jnp.asarray(v.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("shapes", [((10,), (10,)), ((3, 4), (4,)), ((), ())])
def test_operators_match_the_ordinary_path(dtype, shapes):
    x, y = _values(dtype, shapes[0], 0), _values(dtype, shapes[1], 1)
    for op in OPS:
        try:
            with np.errstate(all="ignore"):
                want = SLOW[op](x, y)
        except TypeError as e:  # bitwise ops on floats: the same error either way
            with pytest.raises(TypeError, match=str(e)[:30]):
                op(x, y)
            continue
        with np.errstate(all="ignore"):
            _same(op(x, y), want)
            _same(op(x, y), want)  # the second call runs from the cache


def test_fast_path_is_taken_for_same_dtype_arrays_only():
    _eager_fast._cache.clear()
    x = jnp.arange(10.0)
    y = jnp.ones(10)
    x + y
    assert ("add", x.dtype, (10,), (10,)) in _eager_fast._cache
    n = len(_eager_fast._cache)
    _same(x + 1.0, jnp.add(x, 1.0))  # a Python scalar: weak, ordinary path
    _same(x + jnp.arange(10), jnp.add(x, jnp.arange(10)))  # promotion: ordinary path
    assert len(_eager_fast._cache) == n
    # a broadcast is not a single primitive on the operands: remembered as "no"
    _same(x.reshape(2, 5) + jnp.ones(5), jnp.add(x.reshape(2, 5), jnp.ones(5)))
    assert _eager_fast._cache[("add", x.dtype, (2, 5), (5,))] is False


def test_weak_operands_keep_the_ordinary_semantics():
    x = absjit.Array(np.float32(3.0), weak_type=True)
    y = absjit.Array(np.float32(4.0), weak_type=True)
    _same(x + y, jnp.add(x, y))
    assert (x + y).weak_type


def test_traced_operators_do_not_use_the_eager_cache():
    x = jnp.arange(3.0)
    text = str(absjit.make_jaxpr(lambda a: a + x)(x))
    assert "add" in text
    assert float(absjit.grad(lambda a: jnp.sum(a * x))(x)[2]) == 2.0


def test_configuration_change_clears_the_cache():
    x = jnp.arange(4.0)
    x * x
    assert _eager_fast._cache
    absjit.config.update("enable_x64", absjit.config.enable_x64)
    assert not _eager_fast._cache
