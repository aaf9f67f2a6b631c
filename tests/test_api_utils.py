"""eval_shape, checkpoint, callbacks and the device queries."""
import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from tests.checks import assert_close, jax

pytestmark = pytest.mark.filterwarnings("ignore:absjit cpu backend:RuntimeWarning")


def test_jacobian_is_jacrev():
    x = jnp.array([1.0, 2.0])
    assert_close(absjit.jacobian(lambda v: v ** 2)(x), np.diag([2.0, 4.0]).astype(np.float32))


# -- eval_shape --------------------------------------------------------------------------
def test_eval_shape_pytrees_and_structs():
    calls = []

    def f(params, x):
        calls.append(1)
        h = x @ params["w"] + params["b"]
        return {"out": jnp.tanh(h), "n": jnp.sum(h, axis=0).astype(jnp.int32)}, 2.0 * x[0, 0]

    params = {"w": absjit.ShapeDtypeStruct((3, 5), jnp.float32),
              "b": jnp.zeros(5)}
    x = absjit.ShapeDtypeStruct((7, 3), jnp.float32)
    out = absjit.eval_shape(f, params, x)
    assert out[0]["out"] == absjit.ShapeDtypeStruct((7, 5), jnp.float32)
    assert out[0]["n"] == absjit.ShapeDtypeStruct((5,), jnp.int32)
    assert out[1].shape == () and out[1].dtype == np.float32 and not out[1].weak_type
    assert len(calls) == 1


def test_eval_shape_traces_only():
    ran = []
    spec = absjit.ShapeDtypeStruct((4,), jnp.float32)

    def f(x):
        return absjit.pure_callback(lambda v: ran.append(1) or v, spec, x)
    assert absjit.eval_shape(f, spec).shape == (4,)
    assert ran == []


@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("fn, args", [
    (lambda x: x + 1.0, (2.0,)),
    (lambda x: x * 2, (np.arange(3, dtype=np.int32),)),
    (lambda x, y: x[:2] * y[1:], (np.ones(2, np.float32), np.ones(3, np.float32))),
    (lambda x: x.sum(), (3,)),
])
def test_eval_shape_matches_jax(fn, args):
    ours = absjit.eval_shape(fn, *args)
    theirs = jax.eval_shape(fn, *args)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert ours.weak_type == theirs.weak_type
    # a jax.ShapeDtypeStruct is accepted as an argument too
    structs = [jax.ShapeDtypeStruct(np.shape(a), jax.numpy.asarray(a).dtype) for a in args]
    assert absjit.eval_shape(fn, *structs).shape == theirs.shape


def test_shape_dtype_struct():
    s = absjit.ShapeDtypeStruct((2, 3), jnp.float32)
    assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    assert s.ndim == 2 and s.size == 6 and len(s) == 2
    assert s == absjit.ShapeDtypeStruct([2, 3], np.float32) and hash(s) == hash(
        absjit.ShapeDtypeStruct((2, 3), "float32"))
    assert repr(absjit.ShapeDtypeStruct((), jnp.float32, weak_type=True)).endswith(
        "weak_type=True)")
    if jax is not None:
        assert repr(s) == repr(jax.ShapeDtypeStruct((2, 3), np.float32))
    with pytest.raises(TypeError, match="shape"):
        absjit.ShapeDtypeStruct((2.5,), jnp.float32)


# -- checkpoint ----------------------------------------------------------------------------
def _mlp(w, x):
    h = jnp.tanh(x @ w)
    return jnp.sum(jnp.sin(h) ** 2)


W = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
X = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)


@pytest.mark.parametrize("transform", ["eager", "jit"])
def test_checkpoint_gradients_equal_plain(transform):
    wrap = (lambda f: f) if transform == "eager" else absjit.jit
    g_plain = wrap(absjit.grad(_mlp, argnums=(0, 1)))(W, X)
    g_remat = wrap(absjit.grad(absjit.checkpoint(_mlp), argnums=(0, 1)))(W, X)
    assert_close(g_remat, g_plain, rtol=1e-6, atol=1e-6)
    assert absjit.remat is absjit.checkpoint


def test_checkpoint_backward_recomputes_from_inputs():
    jaxpr = absjit.make_jaxpr(absjit.grad(absjit.checkpoint(_mlp)))(W, X).jaxpr
    calls = [e for e in jaxpr.eqns if e.primitive.name == "jit"]
    assert [c.params["name"] for c in calls] == ["checkpoint(_mlp)",
                                                 "transpose(jvp(checkpoint(_mlp)))"]
    backward = calls[1]
    # the backward call gets the inputs (w, x) and the output cotangent, no intermediates
    assert [str(v) for v in backward.invars[:2]] == [str(v) for v in jaxpr.invars]
    inner = [e.primitive.name for e in backward.params["jaxpr"].jaxpr.eqns]
    assert "tanh" in inner and "sin" in inner  # the forward pass, recomputed


def test_checkpoint_forward_mode_hessian_vmap_and_closures():
    cf = absjit.checkpoint(_mlp)
    assert_close(absjit.jvp(cf, (W, X), (W, X)), absjit.jvp(_mlp, (W, X), (W, X)), rtol=1e-6)
    cube = absjit.checkpoint(lambda v: jnp.sum(v ** 3))
    assert_close(absjit.hessian(cube)(jnp.array([1.0, 2.0])),
                 np.diag([6.0, 12.0]).astype(np.float32))
    xs = np.stack([X, 2 * X])
    assert_close(absjit.vmap(absjit.grad(cf), in_axes=(None, 0))(W, xs),
                 absjit.vmap(absjit.grad(_mlp), in_axes=(None, 0))(W, xs), rtol=1e-6)
    # a value closed over by the checkpointed function still gets its gradient
    g = absjit.grad(lambda s: absjit.checkpoint(lambda v: jnp.sum(v * s) ** 2)(X))(2.0)
    assert_close(g, absjit.grad(lambda s: jnp.sum(X * s) ** 2)(2.0), rtol=1e-6)


def test_checkpoint_static_argnums_and_policy():
    f = absjit.checkpoint(lambda x, n: x ** n if n > 1 else x, static_argnums=(1,))
    assert float(absjit.grad(f)(3.0, 2)) == 6.0
    assert float(absjit.grad(f)(3.0, 1)) == 1.0
    with pytest.raises(ValueError, match="static_argnums"):
        f(3.0)
    # Any policy is accepted (absjit saves only the inputs; values are the same).
    g = absjit.grad(absjit.checkpoint(_mlp, policy=lambda *a, **k: True))(W, X)
    assert_close(g, absjit.grad(_mlp)(W, X), rtol=1e-5)
    with pytest.raises(TypeError, match="policy"):
        absjit.checkpoint(_mlp, policy="dots")
    if jax is not None:
        jg = jax.grad(jax.checkpoint(_jax_mlp))(W, X)
        assert_close(absjit.grad(absjit.checkpoint(_mlp))(W, X), np.asarray(jg), rtol=1e-5)


def _jax_mlp(w, x):
    h = jax.numpy.tanh(x @ w)
    return jax.numpy.sum(jax.numpy.sin(h) ** 2)


# -- pure_callback --------------------------------------------------------------------------
def _host_sin(x):
    return np.sin(x).astype(x.dtype)


def test_pure_callback_eager_and_jit(mode):
    def f(x):
        spec = absjit.ShapeDtypeStruct(x.shape, x.dtype)
        return absjit.pure_callback(_host_sin, spec, x) * 2
    x = np.linspace(0, 1, 5, dtype=np.float32)
    assert_close(mode(f)(x), (2 * np.sin(x)).astype(np.float32))


def test_pure_callback_pytrees_and_kwargs():
    def host(a, b, *, scale):
        return {"sum": (a + b) * scale, "n": np.array(a.size, np.int32)}
    spec = {"sum": absjit.ShapeDtypeStruct((3,), jnp.float32),
            "n": absjit.ShapeDtypeStruct((), jnp.int32)}
    out = absjit.jit(lambda a, b: absjit.pure_callback(host, spec, a, b, scale=2.0))(
        jnp.ones(3), jnp.arange(3.0))
    assert_close(out["sum"], np.array([2.0, 4.0, 6.0], np.float32))
    assert_close(out["n"], np.array(3, np.int32))


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_pure_callback_vmap(method):
    seen = []

    def host(x, y):
        seen.append(x.shape)
        return (x * y).astype(np.float32)

    def f(x, y):
        return absjit.pure_callback(host, absjit.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                    vmap_method=method)
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    y = np.array([3.0, 4.0], np.float32)
    out = absjit.vmap(f, in_axes=(0, None))(xs, y)
    assert_close(out, xs * y)
    expected_shape = {"sequential": (2,), "expand_dims": (3, 2), "broadcast_all": (3, 2)}
    assert seen[-1] == expected_shape[method]


def test_pure_callback_errors():
    spec = absjit.ShapeDtypeStruct((2,), jnp.float32)
    with pytest.raises(ValueError, match="shape"):
        absjit.pure_callback(lambda x: np.zeros(3, np.float32), spec, jnp.ones(2))
    with pytest.raises(TypeError, match="dtype"):
        absjit.pure_callback(lambda x: np.zeros(2, np.int32), spec, jnp.ones(2))
    with pytest.raises(ValueError, match="JVP"):
        absjit.grad(lambda x: absjit.pure_callback(_host_sin, absjit.ShapeDtypeStruct(
            (), jnp.float32), x))(1.0)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        absjit.vmap(lambda x: absjit.pure_callback(_host_sin, absjit.ShapeDtypeStruct(
            (), jnp.float32), x))(jnp.ones(2))
    with pytest.raises(ValueError, match="vmap_method"):
        absjit.pure_callback(_host_sin, spec, jnp.ones(2), vmap_method="magic")
    with pytest.raises(TypeError, match="callable"):
        absjit.pure_callback(3, spec)


def test_distinct_callbacks_do_not_share_compiled_code():
    spec = absjit.ShapeDtypeStruct((2,), jnp.float32)
    f1 = absjit.jit(lambda x: absjit.pure_callback(lambda v: v + 1, spec, x))
    f2 = absjit.jit(lambda x: absjit.pure_callback(lambda v: v + 2, spec, x))
    x = jnp.zeros(2)
    assert_close(f1(x), np.ones(2, np.float32))
    assert_close(f2(x), np.full(2, 2.0, np.float32))


# -- debug.callback ------------------------------------------------------------------------
def test_debug_callback_runs_every_call_under_jit():
    seen = []

    @absjit.jit
    def f(x):
        absjit.debug.callback(lambda v, k: seen.append((float(v), int(k))), x, k=7)
        return x * 2
    f(1.0)
    f(2.0)
    assert seen == [(1.0, 7), (2.0, 7)]


def test_debug_callback_under_grad_and_vmap():
    seen = []

    def f(x):
        absjit.debug.callback(lambda v: seen.append(np.asarray(v).tolist()), x)
        return jnp.sum(x ** 2)
    g = absjit.grad(f)(jnp.array([1.0, 2.0]))
    assert_close(g, np.array([2.0, 4.0], np.float32))
    assert seen == [[1.0, 2.0]]
    seen.clear()
    absjit.vmap(f)(jnp.arange(4.0).reshape(2, 2))
    assert seen == [[0.0, 1.0], [2.0, 3.0]]
    with pytest.raises(TypeError, match="callable"):
        absjit.debug.callback(None)


# -- devices --------------------------------------------------------------------------------
def test_device_queries():
    (d,) = absjit.devices()
    assert d.platform == "cpu" and d.id == 0 and repr(d) == "CpuDevice(id=0)"
    assert absjit.local_devices() == [d]
    assert absjit.device_count() == absjit.local_device_count() == 1
    assert absjit.process_index() == 0 and absjit.process_count() == 1
    assert absjit.default_backend() == "cpu"
    if jax is not None:
        assert repr(d) == repr(jax.devices("cpu")[0])
    with pytest.raises(RuntimeError, match="Unknown backend"):
        absjit.devices("tpu")


def test_device_get():
    out = absjit.device_get({"w": jnp.ones(2), "n": 3, "t": (jnp.int32(4),)})
    assert type(out["w"]) is np.ndarray and out["w"].dtype == np.float32
    assert out["n"] == 3 and type(out["t"][0]) is np.ndarray
    with pytest.raises(absjit.errors.TracerArrayConversionError):
        absjit.jit(absjit.device_get)(jnp.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert absjit.device_get([]) == []


def test_importing_absjit_does_not_import_scipy():
    import subprocess
    import sys
    code = "import sys, absjit, absjit.numpy; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
