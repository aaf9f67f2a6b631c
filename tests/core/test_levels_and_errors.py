import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import errors
from absjit.core.avals import ConcreteArray, ShapedArray
from absjit.core.levels import ShapedLevel, get_level, register_level


def test_avals_hash_and_compare_by_value():
    assert ShapedArray((3,), np.float32) == ShapedArray((3,), np.dtype("float32"))
    assert hash(ShapedArray((3,), np.float32)) == hash(ShapedArray((3,), np.float32))
    assert ShapedArray((3,), np.float32) != ShapedArray((3,), np.float32, weak_type=True)
    assert ConcreteArray(np.float32(1)) == ConcreteArray(np.float32(1))
    assert ConcreteArray(np.float32(1)) != ConcreteArray(np.float32(2))
    assert repr(ShapedArray((2, 3), np.int32)) == "ShapedArray(int32[2,3])"


def test_builtin_levels():
    assert get_level("shaped").abstractify(jnp.ones(3)) == ShapedArray((3,), np.float32)
    assert get_level("concrete").abstractify(2.0) == ConcreteArray(np.float32(2), weak_type=True)
    assert get_level("static").abstractify(5).value == 5
    with pytest.raises(TypeError):
        get_level("static").abstractify([1, 2])
    with pytest.raises(ValueError, match="unknown abstraction level"):
        get_level("nope")


def test_user_level_registers_and_traces():
    class ShapeOnly(ShapedLevel):
        """Forget weak types."""
        def abstractify(self, value):
            return super().abstractify(value).strip_weak_type()
    register_level("strong", ShapeOnly)
    text = str(absjit.make_jaxpr(lambda x: x + 1, abstraction="strong")(1.0))
    assert "a:f32[]" in text


def test_concrete_level_allows_python_branching():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return -x
    text = str(absjit.make_jaxpr(f, abstraction="concrete")(jnp.ones(3)))
    assert "mul" in text and "neg" not in text


def test_shaped_level_bool_error_names_argument_and_fix():
    def f(x, n):
        if n > 0:
            return x
        return -x
    with pytest.raises(errors.TracerBoolConversionError) as info:
        absjit.make_jaxpr(f)(1.0, 2.0)
    msg = str(info.value)
    assert isinstance(info.value, errors.ConcretizationTypeError)
    assert "argument 'n'" in msg and "static_argnames=['n']" in msg
    assert "function f" in msg and "Traced<ShapedArray(bool[], weak_type=True)>" in msg


def test_int_of_tracer_and_shape_arithmetic():
    def f(x):
        return x.reshape(jnp.array(x.shape).prod())
    with pytest.raises(errors.ConcretizationTypeError) as info:
        absjit.make_jaxpr(f)(jnp.ones((2, 3)))
    assert "np.prod(x.shape)" in str(info.value)


def test_array_conversion_error():
    def f(x):
        return np.asarray(x)
    with pytest.raises(errors.TracerArrayConversionError):
        absjit.make_jaxpr(f)(jnp.ones(3))


def test_escaped_tracer():
    leaked = []

    def f(x):
        leaked.append(x)
        return x
    absjit.make_jaxpr(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError, match="escape"):
        jnp.sin(leaked[0])


def test_iterator_argument_names_argument():
    with pytest.raises(TypeError, match="'xs'.*list_iterator"):
        absjit.make_jaxpr(lambda xs: xs)(iter([1.0, 2.0]))
