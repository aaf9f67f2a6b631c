"""optax training loops (adam, sgd with momentum, chain(clip, adamw)) on a small linear
regression, written for JAX. ``python optax_loops.py absjit`` runs them through
absjit.compat_jax, ``python optax_loops.py jax`` on the real jax; prints JSON."""
import json, sys
if sys.argv[1] == "absjit":
    import absjit.compat_jax
    absjit.compat_jax.install()
import jax
import jax.numpy as jnp
import numpy as np
import optax

rng = np.random.default_rng(0)
X = rng.standard_normal((32, 4)).astype(np.float32)
w_true = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
Y = (X @ w_true + 0.1).astype(np.float32)


def loss_fn(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2)


def train(opt, steps=25):
    params = {"w": jnp.zeros(4, jnp.float32), "b": jnp.zeros((), jnp.float32)}
    state = opt.init(params)

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state, X, Y)
        losses.append(float(loss))
    return {"losses": losses, "w": np.asarray(params["w"]).tolist(), "b": float(params["b"])}


out = {
    "adam": train(optax.adam(0.1)),
    "sgd": train(optax.sgd(0.05, momentum=0.9)),
    "chain": train(optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(0.05, weight_decay=1e-2))),
}
print(json.dumps(out))
