"""JAX API that code written for JAX (its docs, optax) relies on, compared with jax
where it is installed: dtype comparisons, the Array API namespace functions, forward
mode through ``x ** 2.0``, ``.at[].get(mode="fill")``, ``backend="tpu"``, and the
modules typing, sharding, flatten_util, ad_checkpoint, experimental, test_util."""
from __future__ import annotations

import functools
import sys

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from tests.checks import assert_close, jax, jax_numpy

needs_jax = pytest.mark.skipif(jax is None, reason="jax is not installed")


# -- 1. dtype equality never raises ------------------------------------------------------
@pytest.mark.parametrize("other", [None, {"a": 1}, [1], 1, object(), "not a dtype", (3,)])
def test_dtype_eq_with_non_dtypes_is_false(other):
    for t in (jnp.float32, jnp.float64, jnp.int8, jnp.bool_):
        assert (t == other) is False and (t != other) is True


def test_dtype_eq_with_dtype_likes():
    assert jnp.float32 == np.float32 and jnp.float32 == np.dtype("float32")
    assert jnp.float32 == "float32" and np.dtype("float32") == jnp.float32
    assert jnp.float32 != jnp.float64 and hash(jnp.float32) == hash(np.dtype("float32"))


# -- 2. Array API namespace pieces ---------------------------------------------------------
def test_array_namespace_info():
    info = jnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False}
    assert info.default_device() in info.devices()
    assert info.default_dtypes()["real floating"] == np.float32
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32"}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64"}
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind="reals")
    assert jnp.__array_api_version__ == "2023.12"


def test_array_namespace_device_and_dlpack():
    x = jnp.arange(3.0)
    assert x.__array_namespace__() is jnp
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version="1999.01")
    dev = absjit.devices()[0]
    assert x.to_device(dev).device == dev
    for make in (lambda: jnp.zeros(3, device=dev), lambda: jnp.arange(3, device=dev),
                 lambda: jnp.full((2,), 1.0, device=dev), lambda: jnp.eye(2, device=dev),
                 lambda: jnp.fft.fftfreq(4, device=dev), lambda: jnp.asarray([1], device=dev)):
        assert make().device == dev
    with pytest.raises(TypeError, match="device must be"):
        jnp.zeros(3, device=7)
    assert_close(jnp.from_dlpack(np.arange(3.0, dtype=np.float32)),
                 np.arange(3.0, dtype=np.float32))
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1, 2])


def test_isdtype_kinds():
    assert jnp.isdtype(jnp.float32, "real floating")
    assert jnp.isdtype(dtype=jnp.uint8, kind=("bool", "integral"))
    assert not jnp.isdtype(jnp.complex64, "real floating")
    assert jnp.isdtype(jnp.bfloat16, "numeric") and jnp.isdtype(jnp.int8, jnp.int8)
    with pytest.raises(ValueError, match="unknown kind"):
        jnp.isdtype(jnp.float32, "floats")


@needs_jax
def test_array_api_fixes_match_jax():
    x8 = np.arange(1, 5, dtype=np.uint8)
    for fn in (lambda m: m.cumulative_sum(x8), lambda m: m.cumulative_sum(x8 > 2),
               lambda m: m.repeat(m.arange(3), m.asarray([2])),
               lambda m: m.reshape(m.arange(6), (2, 3), copy=False),
               lambda m: m.signbit(m.asarray([-np.nan, np.nan, -0.0, 1.0]))):
        ours, theirs = fn(jnp), fn(jax_numpy)
        assert_close(ours, np.asarray(theirs))
        assert ours.dtype == theirs.dtype


def test_complex_expm1_and_tanh_special_cases():
    inf, nan = np.inf, np.nan
    z = np.array([complex(-0.0, 0), complex(inf, 0), complex(-inf, inf), complex(inf, nan),
                  complex(nan, 0), complex(1, 1)], np.complex64)
    want = [0j, complex(inf, 0), complex(-1, 0), complex(inf, nan), complex(nan, 0),
            np.expm1(np.complex64(1 + 1j))]
    for f in (jnp.expm1, absjit.jit(jnp.expm1)):
        out = np.asarray(f(z))
        assert_close(out, np.asarray(want, np.complex64))
        assert not np.signbit(out[0].real)
    t = np.asarray(jnp.tanh(np.array([complex(inf, 3.0), complex(-inf, -3.0)], np.complex64)))
    assert list(np.signbit(t.imag)) == [False, True] and list(t.real) == [1, -1]


# -- 3. wrong answers ----------------------------------------------------------------------
def test_forward_mode_of_float_power_at_negative_base():
    f = lambda x: x ** 2.0  # noqa: E731
    assert float(absjit.jvp(f, (-2.0,), (1.0,))[1]) == -4.0
    assert float(absjit.jacfwd(f)(-2.0)) == -4.0
    assert float(absjit.hessian(f)(-2.0)) == 2.0
    assert float(absjit.jit(absjit.hessian(f))(-2.0)) == 2.0
    if jax is not None:
        assert float(jax.hessian(f)(-2.0)) == 2.0 and float(jax.jacfwd(f)(-2.0)) == -4.0


@pytest.mark.parametrize("backend", ["cpu", "interpret"])
def test_at_get_fill_under_jit(backend):
    x = jnp.arange(3.0)
    f = absjit.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0), backend=backend)
    got = [float(f(x, i)) for i in (5, 1, -1, -4, 3)]
    assert got == [-1.0, 1.0, 2.0, -1.0, -1.0]
    g = absjit.jit(lambda y, i: y.at[i, 1:].get(mode="fill", fill_value=-1.0), backend=backend)
    y = jnp.arange(6.0).reshape(2, 3)
    assert_close(g(y, jnp.array([0, 2, -2])), np.array([[1, 2], [-1, -1], [1, 2]], np.float32))
    if jax is not None:
        jf = jax.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0))
        assert [float(jf(np.arange(3.0, dtype=np.float32), i)) for i in (5, 1, -1, -4, 3)] == got


@needs_jax
def test_at_get_modes_match_jax():
    cases = [(5, {}), (5, {"mode": "fill"}), (-4, {"mode": "fill", "fill_value": 7}),
             (-3, {"mode": "fill", "fill_value": 7}), (5, {"mode": "clip"}),
             (5, {"mode": "drop"}), (5, {"fill_value": 3}),
             (np.array([0, 9, -1]), {"mode": "fill"})]
    for idx, kw in cases:
        ours = jnp.arange(3.0).at[idx].get(**kw)
        theirs = jax_numpy.arange(3.0).at[idx].get(**kw)
        assert_close(ours, np.asarray(theirs), err_msg=f"{idx} {kw}")
    assert int(jnp.arange(3).at[7].get(mode="fill")) == int(
        jax_numpy.arange(3).at[7].get(mode="fill"))
    with pytest.raises(ValueError, match="Unknown gather mode"):
        jnp.arange(3.0).at[1].get(mode="wrap")


def test_tpu_backend_without_a_tpu_raises(monkeypatch):
    if "xla" not in absjit.backends():
        pytest.skip("the xla backend needs jax")
    from absjit.backends import base
    monkeypatch.setattr(base, "_PLATFORMS", ("cpu",))
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        absjit.jit(lambda x: x + 1, backend="tpu")


# -- 4. API -----------------------------------------------------------------------------------
def test_typing_and_sharding():
    from absjit.typing import ArrayLike, DTypeLike  # noqa: F401
    from absjit.sharding import Sharding, SingleDeviceSharding
    s = jnp.ones(2).sharding
    assert isinstance(s, Sharding) and s.is_fully_replicated
    assert s.device_set == {absjit.devices()[0]} and s.shard_shape((4, 2)) == (4, 2)
    assert s == SingleDeviceSharding(absjit.devices()[0])
    assert absjit.device_put(np.ones(2), s).device == absjit.devices()[0]
    with pytest.raises(TypeError, match="device must be"):
        SingleDeviceSharding("cpu0")


def test_jit_accepts_inline_and_donation():
    assert float(absjit.jit(lambda x: x + 1, inline=True, donate_argnums=0)(1.0)) == 2.0
    with pytest.raises(TypeError, match="inline must be a bool"):
        absjit.jit(lambda x: x, inline="yes")
    with pytest.raises(TypeError, match="donate_argnums"):
        absjit.jit(lambda x: x, donate_argnums="x")


@needs_jax
def test_ravel_pytree_matches_jax():
    from jax.flatten_util import ravel_pytree as jax_ravel
    from absjit.flatten_util import ravel_pytree
    tree = {"w": np.ones((2, 2), np.float32), "b": (np.arange(3, dtype=np.int32), 2.0)}
    flat, unravel = ravel_pytree(tree)
    jflat, junravel = jax_ravel(tree)
    assert_close(flat, np.asarray(jflat))
    back, jback = unravel(flat), junravel(jflat)
    for a, b in zip(absjit.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(jback)):
        assert_close(a, np.asarray(b))
    with pytest.raises(ValueError, match="shape"):
        unravel(flat[:2])
    empty, _ = ravel_pytree([])
    assert empty.shape == (0,) and empty.dtype == np.float32
    g = absjit.grad(lambda v: unravel(v)["w"].sum())(flat)
    assert float(g.sum()) == 4.0


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @absjit.custom_jvp
    def f(x, y):
        return x * y
    f.defjvps(lambda tx, out, x, y: tx * y * 2, None)
    assert [float(v) for v in absjit.grad(f, argnums=(0, 1))(2.0, 3.0)] == [6.0, 0.0]

    @functools.partial(absjit.custom_jvp, nondiff_argnums=(0,))
    def app(fn, x):
        return fn(x)

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        return app(fn, primals[0]), 3.0 * tangents[0]
    assert float(absjit.grad(lambda x: app(jnp.sin, x))(1.0)) == 3.0

    @functools.partial(absjit.custom_vjp, nondiff_argnums=(1,))
    def scale(x, k):
        return x * k
    scale.defvjp(lambda x, k: (x * k, x), lambda k, res, g: (g * k * 10,))
    assert float(absjit.grad(lambda x: scale(x, 2.0))(1.5)) == 20.0
    assert float(absjit.jit(absjit.grad(lambda x: scale(x, 2.0)))(1.5)) == 20.0
    with pytest.raises(TypeError, match="nondiff_argnums"):
        absjit.custom_jvp(lambda x: x, nondiff_argnums="a")


def test_ad_checkpoint_policies():
    from absjit.ad_checkpoint import checkpoint, checkpoint_name, checkpoint_policies
    for policy in (checkpoint_policies.dots_saveable, checkpoint_policies.nothing_saveable,
                   checkpoint_policies.save_only_these_names("h")):
        f = checkpoint(lambda x: jnp.sin(checkpoint_name(x * 2, "h")), policy=policy)
        assert_close(absjit.grad(f)(0.5), np.float32(2 * np.cos(1.0)))
    with pytest.raises(TypeError, match="policy"):
        checkpoint(jnp.sin, policy="dots")


def test_grad_holomorphic_and_allow_int():
    z = np.complex64(1 + 2j)
    assert complex(absjit.grad(lambda z: z ** 2, holomorphic=True)(z)) == 2 + 4j
    with pytest.raises(TypeError, match="complex dtype"):
        absjit.grad(lambda z: z, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="outputs with complex"):
        absjit.grad(lambda z: jnp.abs(z), holomorphic=True)(z)
    gx, gn = absjit.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(gx) == 3.0 and gn.dtype == absjit.dtypes.float0
    if jax is not None:
        assert complex(jax.grad(lambda z: z ** 2, holomorphic=True)(z)) == 2 + 4j


def test_io_callback_and_checkify():
    from absjit.experimental import checkify, io_callback
    spec = absjit.ShapeDtypeStruct((), np.float32)
    assert float(absjit.jit(lambda x: io_callback(lambda v: np.float32(v * 2), spec, x))(
        1.5)) == 3.0

    def f(x):
        checkify.check(x > 0, "x must be positive, got {}", x)
        return jnp.log(x)
    for g in (f, absjit.jit(f)):
        err, _ = checkify.checkify(g)(-1.0)
        assert err.get() == "x must be positive, got -1.0"
        with pytest.raises(checkify.JaxRuntimeError):
            err.throw()
        err, out = checkify.checkify(g)(1.0)
        assert err.get() is None and float(out) == 0.0
    with pytest.raises(checkify.JaxRuntimeError, match="positive"):
        absjit.jit(f)(-2.0)


def test_check_grads():
    from absjit.test_util import check_grads
    check_grads(jnp.sin, (0.5,), order=2)
    check_grads(lambda x, y: jnp.sum(x * jnp.exp(y)), (jnp.ones(3), jnp.zeros(3)), 2)

    @absjit.custom_jvp
    def wrong(x):
        return jnp.sin(x)
    wrong.defjvp(lambda p, t: (wrong(p[0]), 2.0 * t[0]))
    with pytest.raises(AssertionError):
        check_grads(wrong, (0.5,), 1, modes=["fwd"])
    with pytest.raises(ValueError, match="mode"):
        check_grads(jnp.sin, (0.5,), 1, modes=["sideways"])


def test_debug_breakpoint_calls_the_hook(monkeypatch):
    calls = []
    monkeypatch.setattr(sys, "breakpointhook", lambda *a, **k: calls.append(1))
    absjit.debug.breakpoint()
    f = absjit.jit(lambda x: (absjit.debug.breakpoint(), x + 1)[1], backend="interpret")
    f(1.0)
    f(2.0)
    assert len(calls) == 3


def test_small_names():
    from absjit.example_libraries import stax
    absjit.config.config_with_absl()
    assert stax.logsoftmax is absjit.nn.log_softmax
    s = absjit.ShapeDtypeStruct.like(jnp.ones((2, 3)))
    assert (s.shape, s.dtype, s.weak_type) == ((2, 3), np.float32, False)
    assert absjit.ShapeDtypeStruct.like(2.0).weak_type


def test_pytree_with_unhashable_aux_data():
    class P:
        def __init__(self, x, meta):
            self.x, self.meta = x, meta
    absjit.tree_util.register_pytree_node(P, lambda p: ((p.x,), p.meta),
                                          lambda m, c: P(c[0], m))
    p = P(1.0, {"a": [1, 2]})
    tree = absjit.tree_util.tree_structure(p)
    assert hash(tree) == hash(absjit.tree_util.tree_structure(P(5.0, {"a": [1, 2]})))
    assert tree == absjit.tree_util.tree_structure(P(5.0, {"a": [1, 2]}))
    assert tree != absjit.tree_util.tree_structure(P(5.0, {"a": [3]}))
    assert float(absjit.jit(lambda p: p.x * 2)(p)) == 2.0
    assert float(absjit.grad(lambda p: p.x * 2)(p).x) == 2.0
    arr = np.arange(3)
    q = absjit.tree_util.tree_structure(P(1.0, arr))
    assert q == absjit.tree_util.tree_structure(P(2.0, arr))
    assert q != absjit.tree_util.tree_structure(P(2.0, np.arange(3)))


def test_debug_print_under_vmap_prints_each_element(capsys):
    def f(x, y):
        absjit.debug.print("x={} y={}", x, y)
        return x * 2
    absjit.vmap(f, in_axes=(0, None))(jnp.arange(3.0), 7.0)
    assert capsys.readouterr().out.splitlines() == ["x=0.0 y=7.0", "x=1.0 y=7.0",
                                                    "x=2.0 y=7.0"]
    absjit.jit(absjit.vmap(f, in_axes=(None, 0)), backend="interpret")(1.0, jnp.arange(2))
    assert capsys.readouterr().out.splitlines() == ["x=1.0 y=0", "x=1.0 y=1"]


@pytest.mark.parametrize("case", [
    lambda m, lax: m.reshape(m.ones(6), (4,)),
    lambda m, lax: m.ones(6) + m.ones(4),
    lambda m, lax: m.concatenate([m.ones((2, 3)), m.ones((2, 4))], axis=0),
    lambda m, lax: m.dot(m.ones((2, 3)), m.ones((4, 2))),
    lambda m, lax: m.ones((2, 3)) @ m.ones((4, 2)),
    lambda m, lax: lax.reshape(m.ones(6), (4,)),
    lambda m, lax: lax.slice(m.ones(6), (0,), (7,)),
])
def test_shape_errors_are_what_jax_raises(case):
    from absjit import lax
    with pytest.raises(Exception) as ours:
        case(jnp, lax)
    assert isinstance(ours.value, TypeError) and isinstance(ours.value, ValueError)
    if jax is not None:
        with pytest.raises((TypeError, ValueError)) as theirs:
            case(jax_numpy, jax.lax)
        assert isinstance(ours.value, type(theirs.value))


def test_custom_rules_run_the_primal_once_under_grad():
    calls = []

    @absjit.custom_jvp
    def h(x):
        calls.append("jvp")
        return jnp.sin(x)
    h.defjvp(lambda p, t: (h(p[0]), jnp.cos(p[0]) * t[0]))

    @absjit.custom_vjp
    def k(x):
        calls.append("vjp")
        return jnp.sin(x)
    k.defvjp(lambda x: (k(x), x), lambda r, g: (g * jnp.cos(r),))
    assert_close(absjit.grad(h)(1.0), np.float32(np.cos(1.0)))
    assert_close(absjit.grad(k)(1.0), np.float32(np.cos(1.0)))
    assert calls == ["jvp", "vjp"]
    # a rule calling the function with other shapes traces it again
    h2 = absjit.custom_jvp(lambda x: jnp.sum(x))
    h2.defjvp(lambda p, t: (h2(jnp.stack([p[0], p[0]])) / 2, t[0]))
    assert float(absjit.grad(h2)(3.0)) == 1.0


def test_signbit_reads_nan_signs_on_every_backend(mode):
    x = np.array([-np.nan, np.nan, -0.0, 0.0, -1.0, 2.0, -np.inf], np.float32)
    want = [True, False, True, False, True, False, True]
    for dt in (np.float32, np.float64, np.float16):
        assert list(np.asarray(mode(jnp.signbit)(x.astype(dt)))) == want
    assert_close(mode(jnp.copysign)(np.float32(2.0), x),
                 np.float32([-2, 2, -2, 2, -2, 2, -2]))
