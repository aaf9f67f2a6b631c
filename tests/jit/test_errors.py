"""Errors users meet under jit: each names the function, the argument and the fix, is
raised before any kernel runs, and leaves the cache usable."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.errors import (ConcretizationTypeError, NonConcreteBooleanIndexError,
                           TracerBoolConversionError)


def test_branch_on_traced_value_names_function_and_argument():
    def f(x):
        if x > 0:
            return x
        else:
            return 2 * x

    f_jit = absjit.jit(f)
    with pytest.raises(TracerBoolConversionError) as info:
        f_jit(10)
    msg = str(info.value)
    assert isinstance(info.value, ConcretizationTypeError)
    assert "Traced<ShapedArray(bool[], weak_type=True)>with<DynamicJaxprTrace(level=0/1)>" in msg
    assert "tracing the function f at" in msg and "for jit" in msg
    assert "argument 'x'" in msg and "static_argnames=['x']" in msg
    assert f_jit._cache_size() == 0
    assert int(absjit.jit(f, static_argnums=0)(10)) == 10


def test_while_on_traced_value_names_n():
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    with pytest.raises(ConcretizationTypeError, match="argument 'n'"):
        absjit.jit(g)(10, 20)
    assert int(absjit.jit(g, static_argnames=["n"])(10, 20)) == 30


def test_argument_named_through_pytree_path():
    @absjit.jit
    def f(params):
        return params["w"] if params["flag"] else params["w"] * 2

    with pytest.raises(TracerBoolConversionError, match=r"argument 'params\['flag'\]'"):
        f({"w": jnp.ones(2), "flag": True})


def test_shape_arithmetic_with_jnp_points_at_numpy():
    @absjit.jit
    def f(x):
        return x.reshape(jnp.array(x.shape).prod())

    with pytest.raises(ConcretizationTypeError) as info:
        f(jnp.ones((2, 3)))
    assert "does not depend on any argument" in str(info.value)
    assert "np.prod(x.shape)" in str(info.value)

    @absjit.jit
    def g(x):
        return x.reshape((np.prod(x.shape),))

    assert g(jnp.ones((2, 3))).shape == (6,)


def test_boolean_mask_indexing_needs_a_concrete_mask():
    def get_negatives(x):
        return x[x < 0]

    x = jnp.array([-1.0, 2.0, -3.0])
    with pytest.raises(NonConcreteBooleanIndexError):
        absjit.jit(get_negatives)(x)
    out = absjit.jit(get_negatives, abstraction="concrete")(x)
    assert np.asarray(out).tolist() == [-1.0, -3.0]


@pytest.mark.parametrize("bad, typename", [(iter([0.0, 1.0]), "list_iterator"),
                                           ((v for v in [1.0]), "generator"),
                                           ("abc", "str"),
                                           (np.array(["a"], dtype=object), "numpy.ndarray"),
                                           (object(), "object")])
def test_invalid_leaf_types(bad, typename):
    @absjit.jit
    def sum_of_sqs(xs):
        return xs

    with pytest.raises(TypeError) as info:
        sum_of_sqs(bad)
    msg = str(info.value)
    assert "Argument 'xs'" in msg and typename in msg and "not a valid absjit type" in msg
    assert "sum_of_sqs" in msg


def test_invalid_leaf_inside_pytree_names_path():
    f = absjit.jit(lambda params, x: x)
    with pytest.raises(TypeError, match=r"Argument 'params\['b'\]\[1\]'"):
        f({"a": 1.0, "b": [2.0, "oops"]}, 1.0)


def test_unhashable_static_argument():
    f = absjit.jit(lambda x, shape: x, static_argnames=["shape"])
    with pytest.raises(ValueError, match="Non-hashable static argument 'shape'.*list"):
        f(1.0, [2, 3])
    assert float(f(1.0, (2, 3))) == 1.0


def test_static_argnum_out_of_range_and_unknown_argname():
    def f(x, n):
        return x

    with pytest.raises(ValueError, match="static_argnums.*out of range.*f takes 2"):
        absjit.jit(f, static_argnums=2)
    with pytest.raises(ValueError, match="static_argnums.*out of range"):
        absjit.jit(f, static_argnums=-3)
    with pytest.raises(ValueError, match="static_argnames names 'm'"):
        absjit.jit(f, static_argnames=["m"])
    with pytest.raises(TypeError, match="static_argnums must be ints"):
        absjit.jit(f, static_argnums="n")


def test_wrong_number_of_arguments_and_unknown_keyword():
    def add(x, y):
        return x + y

    f = absjit.jit(add)
    with pytest.raises(TypeError, match=r"add\(\) missing a required argument: 'y'"):
        f(1.0)
    with pytest.raises(TypeError, match=r"add\(\) too many positional arguments"):
        f(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match=r"add\(\) got an unexpected keyword argument 'z'"):
        f(1.0, 2.0, z=3.0)
    with pytest.raises(TypeError, match=r"add\(\) multiple values for argument 'x'"):
        f(1.0, x=2.0)
    assert float(f(1.0, 2.0)) == 3.0


def test_returning_a_non_array_value():
    @absjit.jit
    def f(x):
        return {"ok": x, "bad": "text"}

    with pytest.raises(TypeError, match=r"jitted function f returned .*str.*output\['bad'\]"):
        f(1.0)
    assert f._cache_size() == 0


def test_unknown_backend_fails_at_jit_time():
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        absjit.jit(lambda x: x, backend="nope")


def test_tracer_leaking_from_jit_is_reported():
    leaked = []

    @absjit.jit
    def f(x):
        leaked.append(x)
        return x

    f(1.0)
    with pytest.raises(absjit.errors.UnexpectedTracerError):
        jnp.add(leaked[0], 1.0)


def test_errors_under_partial_decorator():
    @partial(absjit.jit, static_argnames=["n"])
    def f(x, n):
        return x if x > n else -x

    with pytest.raises(TracerBoolConversionError, match="argument 'x'"):
        f(1.0, 2)
