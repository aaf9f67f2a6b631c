"""Abstraction levels defined by a user, with the public API only.

Two small levels are defined here, as a user would: ``strong`` (shaped, with weak types
made strong, so ``f(2)`` and ``f(jnp.int32(2))`` share an entry) and
``small_concrete`` (concrete for arrays of at most 16 elements, so Python may branch on
their values; shaped above). They must work end to end with ``jit``, ``make_jaxpr``
and the entry cache, and bad levels must fail clearly.
"""
from __future__ import annotations

import logging

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.core import ConcreteArray, Level, ShapedArray, ShapedLevel
from absjit.errors import ConcretizationTypeError
from tests.checks import assert_close


class StrongLevel(ShapedLevel):
    """Shaped, but Python scalars are traced with strong types."""

    def abstractify(self, value):
        return super().abstractify(value).strip_weak_type()


class SmallConcreteLevel(Level):
    """Concrete for arrays of at most 16 elements, shaped above."""

    strictness = 2
    aval_class = ShapedArray

    def abstractify(self, value):
        arr = np.asarray(value)
        if arr.size <= 16:
            weak = type(value) in (int, float, complex)
            return ConcreteArray(np.asarray(jnp.asarray(value)), weak_type=weak)
        return ShapedArray(arr.shape, jnp.asarray(arr[:0]).dtype)


absjit.register_level("strong", StrongLevel)
absjit.register_level("small_concrete", SmallConcreteLevel)

BACKENDS = ["interpret", "cpu"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_strong_level_shares_an_entry_between_weak_and_strong_ints(backend):
    traces = []

    def f(x):
        traces.append(x)
        return x * 3

    g = absjit.jit(f, abstraction="strong", backend=backend)
    a = g(2)
    b = g(jnp.int32(2))
    assert g._cache_size() == 1 and len(traces) == 1
    assert int(a) == int(b) == 6
    assert not a.weak_type  # traced strong: the result is strong too
    assert "Traced<ShapedArray(int32[])>" in repr(traces[0])
    shaped = absjit.jit(f, backend=backend)
    shaped(2), shaped(jnp.int32(2))
    assert shaped._cache_size() == 2  # the default level keeps weak types apart


def test_strong_level_in_make_jaxpr():
    text = str(absjit.make_jaxpr(lambda x: x + 1.5, abstraction="strong")(2.0))
    assert text.startswith("{ lambda ; a:f32[]. let")
    weak = absjit.make_jaxpr(lambda x: x + 1.5)(2.0)
    assert weak.in_avals[0].weak_type
    strong = absjit.make_jaxpr(lambda x: x + 1.5, abstraction="strong")(2.0)
    assert not strong.in_avals[0].weak_type


@pytest.mark.parametrize("backend", BACKENDS)
def test_small_concrete_level_lets_python_branch_on_small_arrays(backend):
    def f(x):
        if x.sum() > 0:  # needs the value: only the concrete level allows it
            return x * 2
        return x - 1

    g = absjit.jit(f, abstraction="small_concrete", backend=backend)
    pos, neg = np.arange(1, 5, dtype=np.float32), -np.arange(1, 5, dtype=np.float32)
    assert_close(g(pos), pos * 2)
    assert_close(g(neg), neg - 1)
    assert g._cache_size() == 2  # a concrete aval is keyed by value
    assert_close(g(pos), pos * 2)
    assert g._cache_size() == 2
    with pytest.raises(ConcretizationTypeError):
        g(np.ones(17, np.float32))  # shaped above 16 elements: no value to branch on


def test_small_concrete_level_under_make_jaxpr_and_per_argument():
    def f(x, y):
        return x * y if y[0] > 0 else x - y

    jaxpr = absjit.make_jaxpr(f, abstraction={"y": "small_concrete"})(
        np.ones((40, 3), np.float32), np.full(3, 2, np.float32))
    assert "mul" in str(jaxpr) and "sub" not in str(jaxpr)
    g = absjit.jit(f, abstraction={"y": "small_concrete"}, backend="cpu")
    x = np.arange(3, dtype=np.float32)
    assert_close(g(x, np.full(3, -1, np.float32)), x + 1)
    assert_close(g(x, np.full(3, 2, np.float32)), x * 2)


def test_user_level_in_the_explain_cache_misses_log(caplog):
    g = absjit.jit(lambda x: x + 1, abstraction="small_concrete", backend="interpret")
    absjit.config.update("explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="absjit"):
            g(np.ones(2, np.float32))
            g(np.zeros(2, np.float32))
    finally:
        absjit.config.update("explain_cache_misses", False)
    assert "x: f32[2]=[1. 1.] -> f32[2]=[0. 0.]" in caplog.text


def test_unregistered_level_names_the_registered_ones():
    with pytest.raises(ValueError, match="registered levels: .*ranked.*shaped.*strong"):
        absjit.jit(lambda x: x, abstraction="no_such_level")
    with pytest.raises(ValueError, match="registered levels"):
        absjit.make_jaxpr(lambda x: x, abstraction={"x": "shapd"})(1.0)


class _UnhashableAval(ShapedArray):
    __hash__ = None


def test_unhashable_aval_class_is_refused_at_registration():
    class Bad(ShapedLevel):
        aval_class = _UnhashableAval

    with pytest.raises(TypeError, match="unhashable"):
        absjit.register_level("bad_at_registration", Bad)
    assert "bad_at_registration" not in absjit.registered_levels()


def test_unhashable_aval_is_refused_at_first_use():
    class Sneaky(ShapedLevel):  # declares nothing; its avals cannot be cache keys
        def abstractify(self, value):
            return _UnhashableAval(np.shape(value), np.float32)

    absjit.register_level("sneaky", Sneaky)
    with pytest.raises(TypeError, match="'sneaky'.*unhashable"):
        absjit.jit(lambda x: x, abstraction="sneaky")(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="unhashable"):
        absjit.make_jaxpr(lambda x: x, abstraction="sneaky")(np.ones(2, np.float32))


def test_register_level_checks_its_arguments():
    with pytest.raises(TypeError, match="Level subclass"):
        absjit.register_level("not_a_level", object)
    with pytest.raises(TypeError, match="non-empty string"):
        absjit.register_level("", StrongLevel)
