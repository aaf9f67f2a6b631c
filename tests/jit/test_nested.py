"""jit inside other transformations: the staged ``jit[name=... jaxpr={...}]`` equation,
closed-over tracers, and composition with grad and vmap."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.ops.call import jit_p
from tests.checks import assert_close

BACKENDS = absjit.backends()


def test_make_jaxpr_of_jit_prints_the_jit_equation(capsys):
    def apply_activation(x):
        print("Compile")
        return jnp.maximum(0.0, x)

    z = jnp.ones((100, 2000))
    text = str(absjit.make_jaxpr(absjit.jit(apply_activation))(z))
    assert capsys.readouterr().out == "Compile\n"
    assert text == (
        "{ lambda ; a:f32[100,2000]. let\n"
        "    b:f32[100,2000] = jit[\n"
        "      name=apply_activation\n"
        "      jaxpr={ lambda ; c:f32[100,2000]. let d:f32[100,2000] = max 0.0 c in (d,) }\n"
        "    ] a\n"
        "  in (b,) }")


def test_nested_tracer_label_and_fresh_trace_per_context(capsys):
    def number_squared(num):
        print("Received: ", num)
        return num ** 2

    f = absjit.jit(number_squared)
    text = str(absjit.make_jaxpr(f)(2))
    out = capsys.readouterr().out
    assert out == ("Received:  Traced<ShapedArray(int32[], weak_type=True)>"
                   "with<DynamicJaxprTrace(level=1/1)>\n")
    assert "jaxpr={ lambda ; c:i32[]. let d:i32[] = integer_pow[y=2] c in (d,) }" in text
    results = [int(f(n)) for n in (2, 4, 8)]
    out = capsys.readouterr().out
    assert results == [4, 16, 64]
    assert out.count("Received") == 1 and "level=0/1" in out


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_of_jit_is_inlined_and_correct(backend):
    inner = absjit.jit(lambda x: x * 2.0 + 1.0)
    outer = absjit.jit(lambda x: inner(x) - inner(x * 3.0), backend=backend)
    x = jnp.arange(4.0)
    assert_close(outer(x), (np.arange(4.0) * 2 + 1) - (np.arange(4.0) * 6 + 1),
                 check_dtype=False)
    text = outer.lower(x).as_text()
    assert text.count("jit[") == 2


def test_closed_over_tracer_becomes_an_operand():
    def outer(x):
        return absjit.jit(lambda y: x * y)(3.0)

    closed = absjit.make_jaxpr(outer)(2.0)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is jit_p
    inner = eqn.params["jaxpr"]
    assert len(inner.jaxpr.invars) == 2 and not inner.consts
    assert float(absjit.jit(outer)(2.0)) == 6.0


def test_jit_under_grad_and_vmap():
    f = absjit.jit(lambda x: x * x * 3.0)
    assert float(absjit.grad(f)(2.0)) == pytest.approx(12.0)
    assert_close(absjit.vmap(f)(jnp.arange(3.0)), np.arange(3.0, dtype=np.float32) ** 2 * 3)
    g = absjit.jit(absjit.grad(lambda x: jnp.sin(x) * x))
    assert float(g(1.0)) == pytest.approx(np.cos(1.0) + np.sin(1.0), rel=1e-5)


def test_jit_closing_over_a_grad_tracer():
    def h(x):
        return absjit.jit(lambda y: x * y)(2.0)

    assert float(absjit.grad(h)(3.0)) == pytest.approx(2.0)


def test_jit_primitive_checks_operand_types():
    inner = absjit.make_jaxpr(lambda x: x + 1.0)(np.float32(1.0))
    with pytest.raises(TypeError, match=r"jit\[name=f\] operand 0 has type f32\[2\]"):
        jit_p.bind(jnp.ones(2), jaxpr=inner, name="f")
    (out,) = jit_p.bind(np.float32(1.0), jaxpr=inner, name="f")
    assert float(out) == 2.0


def test_values_propagate_through_a_staged_jit_at_the_concrete_level():
    inner = absjit.jit(lambda x: x * 2.0)

    def f(x):
        y = inner(x)
        return y if y > 3 else -y  # needs y's value: the jit equation is evaluated

    text = str(absjit.make_jaxpr(f, abstraction="concrete")(2.0))
    assert "jit[" in text and "neg" not in text
    assert "neg" in str(absjit.make_jaxpr(f, abstraction="concrete")(1.0))
    assert float(absjit.grad(f)(2.0)) == 2.0 and float(absjit.grad(f)(1.0)) == -2.0


def test_helper_under_grad_is_traced_once_per_signature():
    traces = []

    @absjit.jit
    def helper(w, x):
        traces.append(1)
        return jnp.tanh(x @ w)

    def loss(w, x):
        return jnp.sum(helper(w, x) ** 2)

    g = absjit.grad(loss)
    w = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    x = np.ones((4, 3), np.float32)
    first = g(w, x)
    for _ in range(3):
        assert_close(g(w, x), first)
    assert len(traces) == 1
    jg = absjit.jit(absjit.grad(loss))
    assert_close(jg(w, x), first, rtol=1e-5)
    assert len(traces) == 1  # another trace, the same avals: the cached jaxpr
    g(w, np.ones((5, 3), np.float32))  # a new shape traces again
    assert len(traces) == 2
    want = 2 * x.T @ (np.tanh(x @ w) * (1 - np.tanh(x @ w) ** 2))
    assert_close(first, want.astype(np.float32), rtol=1e-5)


def test_helper_under_vmap_and_jit_is_traced_once():
    traces = []

    @absjit.jit
    def helper(x):
        traces.append(1)
        return x * 2.0 + 1.0

    xs = jnp.arange(6.0).reshape(3, 2)
    outer = absjit.vmap(lambda r: helper(r) - helper(r * 3.0))
    for _ in range(3):
        assert_close(outer(xs), (np.arange(6.0).reshape(3, 2) * 2 + 1)
                     - (np.arange(6.0).reshape(3, 2) * 6 + 1), check_dtype=False)
    assert len(traces) == 1
    helper.clear_cache()
    outer(xs)
    assert len(traces) == 2


def test_helper_closing_over_an_outer_tracer_is_traced_every_time():
    traces = []

    def f(x):
        @absjit.jit
        def inner(y):
            traces.append(1)
            return y * x  # closes over the grad tracer
        return inner(x)

    g = absjit.grad(f)
    assert [float(g(jnp.float32(v))) for v in (1.0, 2.0)] == [2.0, 4.0]
    assert len(traces) == 2
