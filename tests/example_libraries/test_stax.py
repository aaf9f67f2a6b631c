"""example_libraries.stax against JAX's stax on the same parameters."""
import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import random, tree_util
from absjit.example_libraries import optimizers, stax
from tests.checks import assert_close, jax

if jax is not None:
    from jax.example_libraries import optimizers as jax_optimizers
    from jax.example_libraries import stax as jax_stax


def _both(build):
    """The network ``build(stax_module)`` in absjit and in JAX."""
    return build(stax), (build(jax_stax) if jax is not None else None)


def _to_jax(tree):
    return tree_util.tree_map(lambda x: jax.numpy.asarray(np.asarray(x)), tree)


def _conv_net(s):
    return s.serial(
        s.Conv(4, (3, 3), padding="SAME"), s.BatchNorm(), s.Relu,
        s.MaxPool((2, 2), strides=(2, 2)),
        s.Conv(6, (2, 2), strides=(1, 1)), s.Elu,
        s.AvgPool((2, 2), padding="SAME"),
        s.SumPool((1, 2)),
        s.Flatten, s.Dense(5), s.LeakyRelu, s.Dense(3), s.LogSoftmax)


def _deconv_net(s):
    return s.serial(s.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"), s.Relu,
                    s.ConvTranspose(2, (2, 2), padding="VALID"), s.Flatten, s.Dense(2))


def _deconv1d_net(s):
    return s.serial(s.Conv1DTranspose(3, (3,), strides=(2,)), s.Tanh,
                    s.GeneralConvTranspose(("NHC", "HIO", "NHC"), 2, (2,), padding="SAME"))


def _branchy_net(s):
    return s.serial(
        s.Dense(6), s.FanOut(3),
        s.parallel(s.serial(s.Dense(6), s.Tanh), s.Identity, s.serial(s.Dense(6),
                                                                        s.Sigmoid)),
        s.FanInConcat(), s.Flatten,
        s.shape_dependent(lambda shape: s.Dense(shape[-1] // 2)), s.Softplus, s.Selu,
        s.Gelu, s.Dense(2), s.Softmax)


def _residual_net(s):
    return s.serial(s.Dense(4), s.FanOut(2), s.parallel(s.Dense(4), s.Identity),
                    s.FanInSum, s.Exp)


@pytest.mark.parametrize("build, in_shape", [(_conv_net, (2, 8, 8, 3)),
                                             (_branchy_net, (5, 7)),
                                             (_residual_net, (3, 2)),
                                             (_deconv_net, (2, 4, 4, 1)),
                                             (_deconv1d_net, (2, 5, 3))])
def test_networks_match_jax(build, in_shape):
    (init_fun, apply_fun), theirs = _both(build)
    out_shape, params = init_fun(random.PRNGKey(1), in_shape)
    x = np.random.default_rng(0).standard_normal(in_shape).astype(np.float32)
    out = apply_fun(params, x)
    assert out.shape == out_shape
    if build is _residual_net:  # compiling the bigger networks takes seconds
        assert_close(absjit.jit(apply_fun)(params, x), out, rtol=1e-5, atol=1e-6)
    batchless_shape, _ = init_fun(random.PRNGKey(1), (-1,) + in_shape[1:])
    assert batchless_shape == (-1,) + out_shape[1:]
    if theirs is None:
        return
    # JAX's apply_fun on our parameters (JAX's own eager init takes seconds per network,
    # and its random streams differ anyway): the same structure, shapes and outputs
    _, j_apply = theirs
    ref = j_apply(_to_jax(params), x)
    assert out.shape == ref.shape
    assert_close(out, np.asarray(ref), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(jax is None, reason="needs JAX")
def test_training_steps_match_jax():
    init_fun, apply_fun = stax.serial(stax.Conv(3, (3, 3)), stax.Relu,
                                      stax.AvgPool((2, 2), strides=(2, 2)), stax.Flatten,
                                      stax.Dense(4), stax.Tanh, stax.Dense(2), stax.LogSoftmax)
    _, j_apply = jax_stax.serial(jax_stax.Conv(3, (3, 3)), jax_stax.Relu,
                                 jax_stax.AvgPool((2, 2), strides=(2, 2)), jax_stax.Flatten,
                                 jax_stax.Dense(4), jax_stax.Tanh, jax_stax.Dense(2),
                                 jax_stax.LogSoftmax)
    _, params = init_fun(random.PRNGKey(0), (4, 6, 6, 1))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6, 6, 1)).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[rng.integers(0, 2, 4)]

    def loss(apply, np_mod):
        return lambda p: -np_mod.mean(np_mod.sum(apply(p, x) * y, axis=1))
    opt_init, opt_update, get_params = optimizers.adam(0.01)
    j_init, j_update, j_get = jax_optimizers.adam(0.01)
    state, j_state = opt_init(params), j_init(_to_jax(params))
    step = absjit.jit(lambda i, s: opt_update(i, absjit.grad(loss(apply_fun, jnp))(
        get_params(s)), s))
    j_step = jax.jit(lambda i, s: j_update(i, jax.grad(loss(j_apply, jax.numpy))(j_get(s)), s))
    losses = []
    for i in range(5):
        losses.append(float(loss(apply_fun, jnp)(get_params(state))))
        state = step(i, state)
        j_state = j_step(i, j_state)
    assert_close(get_params(state), tree_util.tree_map(np.asarray, j_get(j_state)),
                 rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0]


def test_layer_names_match_jax():
    if jax is not None:
        names = {n for n in dir(jax_stax) if n[0].isupper()} | {
            "serial", "parallel", "shape_dependent", "elementwise"}
        assert names <= set(stax.__all__)


def test_dropout_and_batchnorm_variants():
    _, apply_fun = stax.Dropout(0.5)
    x = jnp.ones((100, 10))
    out = np.asarray(apply_fun((), x, rng=random.PRNGKey(0)))
    assert set(np.unique(out)) <= {0.0, 2.0} and 0.3 < (out > 0).mean() < 0.7
    with pytest.raises(ValueError, match="PRNG key"):
        apply_fun((), x)
    assert_close(stax.Dropout(0.5, mode="test")[1]((), x, rng=random.PRNGKey(0)),
                 np.ones((100, 10), np.float32))
    # serial splits the rng for each layer
    init_fun, apply_net = stax.serial(stax.Dense(3), stax.Dropout(0.9))
    _, params = init_fun(random.PRNGKey(0), (2, 4))
    assert apply_net(params, jnp.ones((2, 4)), rng=random.PRNGKey(1)).shape == (2, 3)
    x = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    for kw in [{"center": False}, {"scale": False}, {"center": False, "scale": False}]:
        init_fun, apply_fun = stax.BatchNorm(axis=0, **kw)
        _, params = init_fun(random.PRNGKey(0), x.shape)
        expected = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
        assert_close(apply_fun(params, x), expected.astype(np.float32), rtol=1e-4, atol=1e-5)
