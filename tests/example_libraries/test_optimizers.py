"""example_libraries.optimizers against JAX's, step by step from the same parameters."""
import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import tree_util
from absjit.example_libraries import optimizers
from tests.checks import assert_close, jax

if jax is not None:
    from jax.example_libraries import optimizers as jax_optimizers

RNG = np.random.default_rng(0)
PARAMS = {"w": RNG.standard_normal((3, 2)).astype(np.float32),
          "b": RNG.standard_normal(2).astype(np.float32),
          "layers": [RNG.standard_normal(4).astype(np.float32)]}
X = RNG.standard_normal((5, 3)).astype(np.float32)


def _loss(np_mod, p, x):
    h = np_mod.tanh(x @ p["w"] + p["b"])
    return np_mod.sum(h ** 2) + np_mod.sum(np_mod.sin(p["layers"][0]))


OPTIMIZERS = [
    ("sgd", (0.1,), {}),
    ("sgd", (optimizers.exponential_decay(0.1, 2, 0.5),), {}),
    ("momentum", (0.05, 0.9), {}),
    ("nesterov", (0.05, 0.9), {}),
    ("adagrad", (0.1,), {}),
    ("rmsprop", (0.01,), {}),
    ("rmsprop_momentum", (0.01,), {}),
    ("adam", (0.05,), {}),
    ("adam", (optimizers.piecewise_constant([2], [0.05, 0.01]),), {"b1": 0.8}),
    ("adamax", (0.05,), {}),
    ("sm3", (0.1,), {}),
]


def _jax_args(args):
    """The same schedules built from JAX's module."""
    out = []
    for a in args:
        if callable(a):
            name = a.__qualname__.split(".")[0]
            out.append({"exponential_decay": jax_optimizers.exponential_decay(0.1, 2, 0.5),
                        "piecewise_constant": jax_optimizers.piecewise_constant(
                            [2], [0.05, 0.01])}[name])
        else:
            out.append(a)
    return out


@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("name, args, kwargs", OPTIMIZERS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(OPTIMIZERS)])
def test_steps_match_jax(name, args, kwargs):
    init, update, get_params = getattr(optimizers, name)(*args, **kwargs)
    j_init, j_update, j_get = getattr(jax_optimizers, name)(*_jax_args(args), **kwargs)
    state, j_state = init(PARAMS), j_init(PARAMS)
    grad = absjit.grad(lambda p: _loss(jnp, p, X))
    j_grad = jax.grad(lambda p: _loss(jax.numpy, p, X))
    for i in range(4):
        state = update(i, grad(get_params(state)), state)
        j_state = j_update(i, j_grad(j_get(j_state)), j_state)
    assert_close(get_params(state), tree_util.tree_map(np.asarray, j_get(j_state)),
                 rtol=2e-5, atol=2e-6)


def test_update_under_jit_and_state_is_a_pytree():
    init, update, get_params = optimizers.momentum(0.01, 0.9)
    state = init(PARAMS)
    leaves, treedef = tree_util.tree_flatten(state)
    assert len(leaves) == 3 * 2  # (x, velocity) per parameter
    assert isinstance(tree_util.tree_unflatten(treedef, leaves), optimizers.OptimizerState)
    grad = absjit.grad(lambda p: _loss(jnp, p, X))

    @absjit.jit
    def step(i, s):
        return update(i, grad(get_params(s)), s)
    eager = state
    for i in range(3):
        state = step(i, state)
        eager = update(i, grad(get_params(eager)), eager)
    assert_close(get_params(state), get_params(eager), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(0, [1.0], state)


def test_schedules_match_numpy():
    i = np.arange(12)
    assert_close(jnp.stack([optimizers.exponential_decay(0.5, 3, 0.1)(k) for k in i]),
                 (0.5 * 0.1 ** (i / 3)).astype(np.float32), rtol=1e-5)
    assert_close(jnp.stack([jnp.asarray(optimizers.inverse_time_decay(1.0, 4, 0.5)(k))
                            for k in i]), (1 / (1 + 0.5 * i / 4)).astype(np.float32))
    assert_close(jnp.stack([optimizers.inverse_time_decay(1.0, 4, 0.5, True)(k) for k in i]),
                 (1 / (1 + 0.5 * np.floor(i / 4))).astype(np.float32))
    assert_close(jnp.stack([optimizers.polynomial_decay(1.0, 8, 0.1, 2.0)(k) for k in i]),
                 ((1 - np.minimum(i, 8) / 8) ** 2 * 0.9 + 0.1).astype(np.float32), rtol=1e-5)
    sched = optimizers.piecewise_constant([3, 7], [1.0, 0.5, 0.25])
    assert_close(jnp.stack([sched(k) for k in i]),
                 np.select([i <= 3, i <= 7], [1.0, 0.5], 0.25).astype(np.float32))
    assert float(absjit.jit(sched)(5)) == 0.5
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [1.0])
    with pytest.raises(ValueError, match="sequences"):
        optimizers.piecewise_constant(1, [1.0])
    with pytest.raises(TypeError):
        optimizers.make_schedule([0.1, 0.2])


def test_clip_grads_l2_norm_and_packing():
    g = {"a": jnp.array([3.0, 0.0]), "b": [jnp.array([4.0])]}
    assert float(optimizers.l2_norm(g)) == 5.0
    clipped = optimizers.clip_grads(g, 1.0)
    assert_close(clipped, {"a": np.array([0.6, 0.0], np.float32), "b": [np.array([0.8],
                                                                               np.float32)]})
    assert_close(optimizers.clip_grads(g, 10.0), g)
    init, update, get_params = optimizers.momentum(0.1, 0.9)
    state = update(0, PARAMS, init(PARAMS))
    unpacked = optimizers.unpack_optimizer_state(state)
    assert isinstance(unpacked["w"], optimizers.JoinPoint)
    repacked = optimizers.pack_optimizer_state(unpacked)
    assert_close(get_params(repacked), get_params(state))
    assert repacked.tree_def == state.tree_def
    with pytest.raises(TypeError, match="JoinPoint"):
        optimizers.pack_optimizer_state({"w": 1})
