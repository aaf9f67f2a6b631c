"""What a user sees when something goes wrong: errors that name their function and
argument, tracebacks without absjit's frames, and the x64 truncation warning."""
import os
import traceback
import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.errors import ConcretizationTypeError

_PACKAGE = os.path.dirname(absjit.__file__) + os.sep


def _frames(err):
    return [f.filename for f in traceback.extract_tb(err.__traceback__)]


# -- concretization ----------------------------------------------------------------
@pytest.mark.parametrize("method", ["item", "tolist"])
def test_item_and_tolist_of_a_tracer_raise_concretization_error(method):
    f = absjit.jit(lambda x: getattr(x, method)())
    with pytest.raises(ConcretizationTypeError, match=f"`{method}` method"):
        f(jnp.ones(()))


def test_item_and_tolist_work_at_the_concrete_level():
    seen = []

    def f(x):
        seen.append((x.item(), x.tolist()))
        return x * 2

    absjit.make_jaxpr(f, abstraction="concrete")(jnp.float32(3.0))
    assert seen == [(3.0, 3.0)]


# -- control-flow bodies name the user's function and argument --------------------
_TABLE = np.array([0., 1., 2.], dtype=np.float32)


def body_indexing_numpy(idx, acc):
    return acc + _TABLE[idx] ** 2


def test_fori_loop_body_error_names_the_body_and_its_index():
    with pytest.raises(ConcretizationTypeError) as info:
        lax.fori_loop(0, 3, body_indexing_numpy, 0.)
    msg = str(info.value)
    assert "body_indexing_numpy" in msg and "for fori_loop" in msg
    assert "argument 'idx'" in msg
    assert "scan.py" not in msg and "arg0" not in msg
    assert "static_argnames" not in msg  # a body's arguments cannot be static


def test_fori_loop_with_traced_bounds_names_the_body_too():
    f = absjit.jit(lambda n: lax.fori_loop(0, n, body_indexing_numpy, 0.))
    with pytest.raises(ConcretizationTypeError, match="argument 'idx'"):
        f(3)


def test_scan_and_while_loop_name_pytree_leaves():
    with pytest.raises(ConcretizationTypeError, match=r"argument 'x'"):
        lax.scan(lambda c, x: (c + (1. if x > 0 else 2.), None), 0., jnp.ones(3))
    with pytest.raises(ConcretizationTypeError, match=r"argument 'state\['a'\]'"):
        lax.while_loop(lambda state: state["a"] < 3,
                       lambda state: {"a": state["a"] + (1 if state["a"] > 0 else 2)},
                       {"a": 0})


# -- traceback filtering ------------------------------------------------------------
def test_tracebacks_leave_out_absjit_frames_by_default():
    with pytest.raises(ConcretizationTypeError) as info:
        absjit.vmap(lambda x: x if x > 0 else -x)(jnp.ones(3))
    files = _frames(info.value)
    internal = [f for f in files if f.startswith(_PACKAGE)]
    assert len(internal) == 1 and internal[0].endswith("_traceback.py")
    assert any("traceback_filtering" in n for n in getattr(info.value, "__notes__", []))


def test_traceback_filtering_off_keeps_every_frame():
    absjit.config.update("traceback_filtering", "off")
    try:
        with pytest.raises(ConcretizationTypeError) as info:
            absjit.vmap(lambda x: x if x > 0 else -x)(jnp.ones(3))
    finally:
        absjit.config.update("traceback_filtering", "auto")
    internal = [f for f in _frames(info.value) if f.startswith(_PACKAGE)]
    assert len(internal) > 3


def test_errors_raised_by_absjit_on_bad_input_keep_the_raising_frame():
    # No user code ran: the frame that raised is the useful one.
    with pytest.raises(TypeError) as info:
        absjit.vmap(lambda x: x)("not an array")
    assert any(f.startswith(_PACKAGE) for f in _frames(info.value))


def test_traceback_filtering_values_are_checked():
    with pytest.raises(ValueError, match="'auto' or 'off'"):
        absjit.config.update("traceback_filtering", "on-ish")


# -- x64 truncation warning -----------------------------------------------------------
def test_explicit_64_bit_request_warns_once_with_x64_off():
    with pytest.warns(UserWarning, match="float64 is not available.*truncated to dtype float32"):
        x = jnp.zeros(3, dtype=jnp.float64)
    assert x.dtype == np.float32
    with pytest.warns(UserWarning, match="int64"):
        jnp.arange(3, dtype=np.int64)


def test_default_kinds_and_x64_on_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.zeros(3, dtype=float)
        jnp.linspace(0, 10, 5, dtype=int)
        jnp.ones(2, dtype=jnp.float32).astype(jnp.float32)
        absjit.config.update("enable_x64", True)
        try:
            assert jnp.zeros(3, dtype=jnp.float64).dtype == np.float64
        finally:
            absjit.config.update("enable_x64", False)


# -- weak types through grad ------------------------------------------------------------
@pytest.mark.parametrize("f", [lambda x: 2.0 * x, lambda x: x ** 3, lambda x: x ** 2],
                         ids=["scale", "cube", "square"])
def test_gradient_of_a_python_scalar_stays_weak(f):
    # JAX: grad(lambda x: 2.0 * x)(3.0) is Array(2., dtype=float32, weak_type=True).
    assert absjit.grad(f)(3.0).weak_type
    assert absjit.jit(absjit.grad(f))(3.0).weak_type


def test_jit_tracebacks_show_the_users_frames_only():
    @absjit.jit
    def f(x):
        return x if x > 0 else -x
    with pytest.raises(ConcretizationTypeError) as info:
        f(1.0)
    internal = [f for f in _frames(info.value) if f.startswith(_PACKAGE)]
    assert len(internal) == 1 and internal[0].endswith(os.path.join("jit", "api.py"))
    assert any(f.endswith("test_user_errors.py") for f in _frames(info.value))


def test_errors_from_generated_kernels_are_not_user_code():
    # The entry check of a ranked kernel raises from generated code: absjit's own, so
    # the traceback is left whole and gets no note.
    f = absjit.jit(lambda x, y: x * y, abstraction="ranked")
    f(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="must equal") as info:
        f(np.ones(5, np.float32), np.ones(7, np.float32))
    assert not getattr(info.value, "__notes__", None)
