"""Autodiff: jvp/vjp/grad/linearize/jacobians against finite differences and JAX, the
concrete default level, jit composition, higher order, pytrees and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.errors import TracerBoolConversionError
from tests.checks import assert_close, jax, jax_numpy
from tests.grad_checks import check_grads

jnp_ref = jax_numpy  # the JAX twin of each function below, where installed


def _pos(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def _any(rng, shape):
    return rng.uniform(-1.5, 1.5, shape)


# (name, absjit function, JAX function or None, argument makers)
UNARY = ["sin", "cos", "tan", "tanh", "exp", "expm1", "sinh", "cosh", "arctan", "arcsinh",
         "negative", "abs", "square", "cbrt"]
UNARY_POS = ["log", "log1p", "sqrt", "arccosh"]
UNARY_UNIT = ["arcsin", "arccos", "arctanh"]


@pytest.mark.parametrize("name", UNARY + UNARY_POS + UNARY_UNIT)
def test_unary_grads(name, rng):
    fn = getattr(jnp, name)
    jfn = getattr(jax_numpy, name) if jax_numpy is not None else None
    if name in UNARY_POS:
        x = _pos(rng, (3,)) + (1.0 if name == "arccosh" else 0.0)
    elif name in UNARY_UNIT:
        x = rng.uniform(-0.8, 0.8, (3,))
    else:
        x = _any(rng, (3,)) + 0.1
    check_grads(fn, [x], order=2, jax_fn=jfn)


BINARY = {
    "add": lambda m: m.add, "subtract": lambda m: m.subtract,
    "multiply": lambda m: m.multiply, "divide": lambda m: m.divide,
    "power": lambda m: m.power, "maximum": lambda m: m.maximum,
    "minimum": lambda m: m.minimum, "arctan2": lambda m: m.arctan2,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_grads(name, rng):
    fn = BINARY[name](jnp)
    jfn = BINARY[name](jax_numpy) if jax_numpy is not None else None
    x, y = _pos(rng, (2, 3)), _pos(rng, (3,))
    check_grads(fn, [x, y], order=2, jax_fn=jfn)


REDUCTIONS = {
    "sum": lambda m, x: m.sum(x, axis=0), "prod": lambda m, x: m.prod(x, axis=1),
    "max": lambda m, x: m.max(x, axis=1), "min": lambda m, x: m.min(x),
    "mean": lambda m, x: m.mean(x), "cumsum": lambda m, x: m.cumsum(x, axis=1),
    "cumprod": lambda m, x: m.cumprod(x, axis=0), "var": lambda m, x: m.var(x, axis=0),
    "logsumexp_like": lambda m, x: m.log(m.sum(m.exp(x))),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_grads(name, rng):
    fn = REDUCTIONS[name]
    x = _pos(rng, (3, 4))
    check_grads(lambda a: fn(jnp, a), [x], order=2,
                jax_fn=(lambda a: fn(jax_numpy, a)) if jax_numpy is not None else None)


STRUCTURAL = {
    "reshape": lambda m, x: m.reshape(x, (4, 3)),
    "transpose": lambda m, x: m.transpose(x),
    "slice": lambda m, x: x[1:, ::2],
    "index": lambda m, x: x[1],
    "fancy": lambda m, x: x[m.array([0, 2, 2])] if m is jnp else x[np.array([0, 2, 2])],
    "concatenate": lambda m, x: m.concatenate([x, 2 * x], axis=1),
    "stack": lambda m, x: m.stack([x, x * x]),
    "flip": lambda m, x: m.flip(x, axis=1),
    "broadcast": lambda m, x: m.broadcast_to(x[0], (2, 4)),
    "where": lambda m, x: m.where(x > 1.0, x, -x * x),
    "sort": lambda m, x: m.sort(x, axis=1),
    "clip": lambda m, x: m.clip(x, 0.8, 1.5),
    "at_set": lambda m, x: x.at[0, 1].set(7.0),
    "at_add": lambda m, x: x.at[1].add(x[0]),
    "dot": lambda m, x: m.dot(x, x.T),
    "matmul_vec": lambda m, x: x @ m.arange(4.0),
    "einsum": lambda m, x: m.einsum("ij,kj->ik", x, x),
}


@pytest.mark.parametrize("name", sorted(STRUCTURAL))
def test_structural_grads(name, rng):
    fn = STRUCTURAL[name]
    x = _pos(rng, (3, 4))
    check_grads(lambda a: fn(jnp, a), [x], order=2,
                jax_fn=(lambda a: fn(jax_numpy, a)) if jax_numpy is not None else None)


def test_conv_grads(rng):
    x = _any(rng, (1, 2, 6))
    w = _any(rng, (3, 2, 3))
    f = lambda a, b: lax.conv_general_dilated(a, b, (1,), "SAME")  # noqa: E731
    jf = (lambda a, b: jax.lax.conv_general_dilated(a, b, (1,), "SAME")) if jax else None
    check_grads(f, [x, w], order=1, jax_fn=jf)


@settings(max_examples=10)
@given(st.lists(st.floats(-2, 2), min_size=1, max_size=5))
def test_grad_matches_jax_hypothesis(xs):
    x = np.asarray(xs, np.float32)
    f = lambda a: jnp.sum(jnp.tanh(a) * a + jnp.exp(-a * a))  # noqa: E731
    g = absjit.grad(f)(x)
    expected = (1 - np.tanh(x) ** 2) * x + np.tanh(x) - 2 * x * np.exp(-x * x)
    assert_close(g, expected.astype(np.float32), rtol=1e-4, atol=1e-5)
    if jax is not None:
        jg = jax.grad(lambda a: jax_numpy.sum(jax_numpy.tanh(a) * a + jax_numpy.exp(-a * a)))(x)
        assert_close(g, np.asarray(jg), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# the abstraction level
# ---------------------------------------------------------------------------
def branchy(x):
    if x > 0:
        return x * x
    return -3.0 * x


def test_grad_concrete_level_branches_on_values():
    assert float(absjit.grad(branchy)(3.0)) == 6.0
    assert float(absjit.grad(branchy)(-1.0)) == -3.0
    _, t = absjit.jvp(branchy, (2.0,), (1.0,))
    assert float(t) == 4.0


def test_grad_tracer_repr_shows_concrete_level():
    seen = []

    def f(x):
        seen.append(repr(x))
        return x * 2.0
    absjit.grad(f)(3.0)
    assert seen[0].startswith("Traced<ConcreteArray(3., dtype=float32, weak_type=True)>")


def test_jit_of_grad_is_strict_and_names_argument():
    with pytest.raises(TracerBoolConversionError, match="branchy.*for grad.*'x'"):
        absjit.jit(absjit.grad(branchy))(3.0)


def test_grad_shaped_abstraction_is_strict():
    with pytest.raises(TracerBoolConversionError):
        absjit.grad(branchy, abstraction="shaped")(3.0)


def test_grad_of_jit_traces_shaped():
    with pytest.raises(TracerBoolConversionError):
        absjit.grad(absjit.jit(branchy))(3.0)


# ---------------------------------------------------------------------------
# composition with jit, higher order
# ---------------------------------------------------------------------------
def f_poly(x):
    return jnp.sum(jnp.sin(x) * x ** 3)


def test_grad_modes(mode, rng):
    x = rng.uniform(-1, 1, (5,)).astype(np.float32)
    g = mode(absjit.grad(f_poly))(x)
    expected = np.cos(x) * x ** 3 + 3 * np.sin(x) * x ** 2
    assert_close(g, expected, rtol=1e-5, atol=1e-6)


def test_higher_order_under_jit(mode):
    f = lambda x: x ** 4 + jnp.sin(x)  # noqa: E731
    assert_close(mode(absjit.grad(absjit.grad(f)))(1.5),
                 np.float32(12 * 1.5 ** 2 - np.sin(1.5)), rtol=1e-5)
    assert_close(mode(absjit.grad(absjit.grad(absjit.grad(f))))(1.5),
                 np.float32(24 * 1.5 - np.cos(1.5)), rtol=1e-5)


def test_hessian_and_jacobians(mode, rng):
    x = rng.uniform(-1, 1, (3,)).astype(np.float32)
    f = lambda v: jnp.sum(v ** 3) + v[0] * v[1]  # noqa: E731
    h = mode(absjit.hessian(f))(x)
    expected = np.diag(6 * x) + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], np.float32)
    assert_close(h, expected, rtol=1e-5, atol=1e-5)
    assert_close(mode(absjit.jacfwd(absjit.jacrev(f)))(x), expected, rtol=1e-5, atol=1e-5)
    g = lambda v: jnp.sin(v) * v[0]  # noqa: E731
    jf, jr = mode(absjit.jacfwd(g))(x), mode(absjit.jacrev(g))(x)
    assert jf.shape == (3, 3)
    assert_close(jf, jr, rtol=1e-5, atol=1e-6)
    if jax is not None:
        assert_close(jf, np.asarray(jax.jacfwd(lambda v: jax_numpy.sin(v) * v[0])(x)),
                     rtol=1e-5, atol=1e-6)


def test_jacobian_pytree_shapes():
    x = {"a": np.ones((2,), np.float32), "b": np.ones((), np.float32)}
    f = lambda p: (p["a"] * p["b"], jnp.sum(p["a"]))  # noqa: E731
    for jac in (absjit.jacfwd(f)(x), absjit.jacrev(f)(x)):
        assert jac[0]["a"].shape == (2, 2)
        assert jac[0]["b"].shape == (2,)
        assert jac[1]["a"].shape == (2,)
        assert jac[1]["b"].shape == ()


def test_vjp_linearize_pytrees():
    params = {"w": np.array([1.0, 2.0], np.float32), "b": np.float32(0.5)}

    def f(p, x):
        return {"y": p["w"] * x + p["b"], "s": jnp.sum(p["w"])}
    out, pullback = absjit.vjp(f, params, np.float32(3.0))
    ct = {"y": np.ones(2, np.float32), "s": np.float32(1.0)}
    dp, dx = pullback(ct)
    assert_close(dp["w"], np.array([4.0, 4.0], np.float32))
    assert_close(dp["b"], np.float32(2.0))
    assert_close(dx, np.float32(3.0))
    y, f_jvp = absjit.linearize(lambda a: jnp.sin(a) * 2.0, np.float32(0.5))
    assert_close(f_jvp(np.float32(1.0)), np.float32(2 * np.cos(0.5)))
    assert_close(f_jvp(np.float32(2.0)), np.float32(4 * np.cos(0.5)))


def test_value_and_grad_argnums_has_aux():
    def f(x, y):
        return x * y * y, {"aux": y}
    (v, aux), (gx, gy) = absjit.value_and_grad(f, argnums=(0, 1), has_aux=True)(2.0, 3.0)
    assert float(v) == 18.0 and float(aux["aux"]) == 3.0
    assert float(gx) == 9.0 and float(gy) == 12.0
    g, aux = absjit.grad(f, argnums=1, has_aux=True)(2.0, 3.0)
    assert float(g) == 12.0


@pytest.mark.parametrize("wrap", ["eager", "jit", "ranked"])
def test_auxiliary_data_computed_from_the_input_comes_back_as_values(wrap):
    # the aux of grad/vjp/jvp/linearize/jacrev is a plain value at every level, never
    # a tracer of the transformation (it was returned as one, and leaked under jit)
    x = np.arange(1.0, 6.0, dtype=np.float32)
    f = lambda a: (jnp.sum(a ** 2), {"m": a.mean(), "s": a * 2})  # noqa: E731
    transforms = {
        "grad": lambda a: absjit.grad(f, has_aux=True)(a),
        "jvp": lambda a: absjit.jvp(f, (a,), (jnp.ones_like(a),), has_aux=True),
        "vjp": lambda a: (lambda o, pb, aux: (o, pb(1.0), aux))(
            *absjit.vjp(f, a, has_aux=True)),
        "linearize": lambda a: (lambda y, fj, aux: (y, fj(jnp.ones_like(a)), aux))(
            *absjit.linearize(f, a, has_aux=True)),
        "jacrev": lambda a: absjit.jacrev(lambda b: (b ** 2, b.sum()), has_aux=True)(a),
        "jacfwd": lambda a: absjit.jacfwd(lambda b: (b ** 2, b.sum()), has_aux=True)(a),
    }
    for name, t in transforms.items():
        g = t if wrap == "eager" else absjit.jit(
            t, abstraction="ranked" if wrap == "ranked" else None)
        out = g(x)
        aux = out[-1]
        for leaf in absjit.tree.leaves(aux):
            assert type(leaf) is absjit.Array, (name, type(leaf))
        if isinstance(aux, dict):
            np.testing.assert_allclose(np.asarray(aux["m"]), 3.0)
            np.testing.assert_allclose(np.asarray(aux["s"]), x * 2)
        else:
            np.testing.assert_allclose(np.asarray(aux), x.sum())


def test_integer_inputs_get_float0_tangents():
    f = lambda x, n: x * n  # noqa: E731
    _, pullback = absjit.vjp(f, np.float32(2.0), np.int32(3))
    gx, gn = pullback(np.float32(1.0))
    assert float(gx) == 3.0
    assert np.asarray(gn).dtype == absjit.dtypes.float0
    p, t = absjit.jvp(lambda n: n * 2, (np.int32(3),), (np.zeros((), absjit.dtypes.float0),))
    assert int(p) == 6 and np.asarray(t).dtype == absjit.dtypes.float0


def test_stop_gradient(mode):
    f = lambda x: x * lax.stop_gradient(x)  # noqa: E731
    assert float(mode(absjit.grad(f))(3.0)) == 3.0
    assert_close(absjit.vmap(absjit.grad(f))(np.arange(3.0, dtype=np.float32)),
                 np.arange(3.0, dtype=np.float32))


def test_grad_output_type_matches_input():
    g = absjit.grad(lambda x: x * x)(3.0)
    assert g.dtype == np.float32 and g.weak_type
    g = absjit.grad(lambda x: jnp.sum(x * x))(np.ones(2, np.float32))
    assert g.dtype == np.float32 and not g.weak_type


def test_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = 1 (a classic nested-differentiation bug)
    f = lambda x: x * absjit.grad(lambda y: x + y)(1.0)  # noqa: E731
    assert float(absjit.grad(f)(2.0)) == 1.0


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
def test_grad_of_nonscalar_names_shape():
    with pytest.raises(TypeError, match=r"scalar-output.*\(3,\)"):
        absjit.grad(lambda x: x * 2)(np.ones(3, np.float32))


def test_grad_wrt_integer_is_jax_error():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        absjit.grad(lambda x: x * 2.0)(3)
    if jax is not None:
        with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
            jax.grad(lambda x: x * 2.0)(3)


def test_jvp_bad_tangents():
    with pytest.raises(TypeError, match="tree structure"):
        absjit.jvp(jnp.sin, (1.0,), (1.0, 2.0))
    with pytest.raises(ValueError, match="shape"):
        absjit.jvp(jnp.sin, (np.ones(2, np.float32),), (np.ones(3, np.float32),))
    with pytest.raises(TypeError, match="dtypes"):
        absjit.jvp(jnp.sin, (np.ones(2, np.float32),), (np.ones(2, np.int32),))


def test_vjp_bad_cotangent():
    _, pb = absjit.vjp(jnp.sin, np.ones(2, np.float32))
    with pytest.raises(ValueError, match="Shape of cotangent"):
        pb(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="Tree structure"):
        pb((np.ones(2, np.float32),))


def test_grad_bad_argnums():
    with pytest.raises(ValueError, match="argnums"):
        absjit.grad(lambda x: x)(1.0) if False else absjit.grad(lambda x: x, argnums=2)(1.0)


def test_jvp_integer_primal_needs_float0_tangent():
    with pytest.raises(TypeError, match="float0"):
        absjit.jvp(lambda n: n * 2, (np.int32(3),), (np.int32(0),))
    if jax is not None:
        with pytest.raises(TypeError, match="float0"):
            jax.jvp(lambda n: n * 2, (np.int32(3),), (np.int32(0),))


LAX_OPS = {
    "logistic": lambda x: lax.logistic(x),
    "exp2": lambda x: lax.exp2(x),
    "rsqrt": lambda x: lax.rsqrt(x),
    "integer_pow": lambda x: lax.integer_pow(x, 3),
    "rem": lambda x: lax.rem(x, np.float64(0.7)),
    "pow": lambda x: lax.pow(x, x),
    "zero_derivative": lambda x: lax.floor(x) + lax.ceil(x) + lax.sign(x) + lax.round(x) + x,
    "cummax": lambda x: lax.cummax(x, axis=0),
    "cummin": lambda x: lax.cummin(x, axis=1),
    "reduce_max": lambda x: lax.reduce_max(x, (1,)),
    "dynamic_slice": lambda x: lax.dynamic_slice(x, (np.int32(1), np.int32(1)), (2, 2)),
    "dynamic_update_slice": lambda x: lax.dynamic_update_slice(
        x, x[:2, :2] * 3.0, (np.int32(1), np.int32(0))),
    "pad": lambda x: lax.pad(x, np.float64(0.0), ((1, 2, 1), (0, 1, 0))),
    "squeeze_expand": lambda x: lax.squeeze(lax.expand_dims(x, (0,)), (0,)),
    "rev": lambda x: lax.rev(x, (0,)),
    "convert": lambda x: lax.convert_element_type(x, np.float32).astype(np.float64) * x,
    "scatter_mul": lambda x: x.at[0].multiply(x[1]),
    "scatter_max": lambda x: x.at[0].max(x[1] * 2.0),
    "select_n": lambda x: lax.select_n(x > 1.0, x, x * x),
    "clamp": lambda x: lax.clamp(np.float64(0.8), x, np.float64(1.5)),
    "argmax_take": lambda x: x[jnp.argmax(x[:, 0])],
    "top_k": lambda x: lax.top_k(x, 2)[0],
    "sort_key_val": lambda x: lax.sort_key_val(x[0], x[1])[1],
}


@pytest.mark.parametrize("name", sorted(LAX_OPS))
def test_lax_primitive_grads(name, rng):
    x = _pos(rng, (3, 4))
    # a round trip through float32 makes finite differences coarse
    tol = dict(eps=1e-2, atol=2e-3, rtol=2e-3) if name == "convert" else {}
    check_grads(LAX_OPS[name], [x], order=2, **tol)
