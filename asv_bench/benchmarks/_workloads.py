"""The benchmark workloads, one definition per implementation.

Shared by the asv benchmarks and ``scripts/compare.py``. Every ``make_*`` returns
``{implementation name: zero-argument callable}``, already warmed up (compiled), so a
timing measures steady-state calls only.
"""
from __future__ import annotations

import numpy as np

import absjit
import absjit.numpy as jnp

try:
    import jax
    import jax.numpy as jax_numpy
    jax.config.update("jax_platforms", "cpu")
except Exception:  # noqa: BLE001 - jax is a benchmark extra
    jax = None
try:
    import numba
except ImportError:  # pragma: no cover
    numba = None
try:
    import numexpr
except ImportError:  # pragma: no cover
    numexpr = None

ALPHA, LMBDA = 1.67, 1.05


def _ready(x):
    return x.block_until_ready() if hasattr(x, "block_until_ready") else x


def _warm(impls):
    for fn in impls.values():
        _ready(fn())
    return impls


# -- selu on 1e6 float32 (seed 000) ----------------------------------------------------
def selu_jnp(x, alpha=ALPHA, lmbda=LMBDA):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def _selu_loop(x, out):
    a = np.float32(ALPHA)
    lm = np.float32(LMBDA)
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = lm * (v if v > 0 else a * np.exp(v) - a)
    return out


def make_selu(n=1_000_000):
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    impls = {"absjit": lambda f=absjit.jit(selu_jnp): f(x),
             "numpy": lambda: np.float32(LMBDA) * np.where(
                 x > 0, x, np.float32(ALPHA) * np.exp(x) - np.float32(ALPHA))}
    if jax is not None:
        jf = jax.jit(lambda v: LMBDA * jax_numpy.where(v > 0, v, ALPHA * jax_numpy.exp(v)
                                                       - ALPHA))
        xj = jax.device_put(x)
        impls["jax"] = lambda: jf(xj)
    if numba is not None:
        serial = numba.njit(error_model="numpy")(_selu_loop)
        @numba.njit(parallel=True, error_model="numpy")
        def par(x, out):
            a = np.float32(ALPHA)
            lm = np.float32(LMBDA)
            for i in numba.prange(x.shape[0]):
                v = x[i]
                out[i] = lm * (v if v > 0 else a * np.exp(v) - a)
            return out
        impls["numba"] = lambda: serial(x, np.empty_like(x))
        impls["numba-prange"] = lambda: par(x, np.empty_like(x))
    if numexpr is not None:
        impls["numexpr"] = lambda: numexpr.evaluate(
            "where(x > 0, x, 1.67 * exp(x) - 1.67) * 1.05", local_dict={"x": x})
    return _warm(impls)


# -- norm on 10000x10 (seed 003) -------------------------------------------------------
def norm_jnp(X):
    X = X - X.mean(0)
    return X / jnp.sqrt(jnp.mean(X * X, 0))


def _norm_loop(X):
    n, m = X.shape
    mean = np.zeros(m, np.float64)
    for i in range(n):
        for j in range(m):
            mean[j] += X[i, j]
    mean /= n
    var = np.zeros(m, np.float64)
    for i in range(n):
        for j in range(m):
            d = X[i, j] - mean[j]
            var[j] += d * d
    scale = 1.0 / np.sqrt(var / n)
    out = np.empty_like(X)
    for i in range(n):
        for j in range(m):
            out[i, j] = (X[i, j] - mean[j]) * scale[j]
    return out


def make_norm(shape=(10000, 10)):
    X = np.random.default_rng(3).standard_normal(shape).astype(np.float32)

    def np_norm(X):
        X = X - X.mean(0)
        return X / np.sqrt(np.mean(X * X, 0))
    impls = {"absjit": lambda f=absjit.jit(norm_jnp): f(X), "numpy": lambda: np_norm(X)}
    if jax is not None:
        def jnorm(X):
            X = X - X.mean(0)
            return X / jax_numpy.sqrt(jax_numpy.mean(X * X, 0))
        jf, Xj = jax.jit(jnorm), jax.device_put(X)
        impls["jax"] = lambda: jf(Xj)
    if numba is not None:
        loop = numba.njit(error_model="numpy")(_norm_loop)
        impls["numba"] = lambda: loop(X)
    return _warm(impls)


# -- softmax over the last axis of 1000x1000 float32 ----------------------------------
def softmax_jnp(x, np_mod=jnp):
    e = np_mod.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def make_softmax(shape=(1000, 1000)):
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    impls = {"absjit": lambda f=absjit.jit(softmax_jnp): f(x),
             "numpy": lambda: softmax_jnp(x, np)}
    if jax is not None:
        jf, xj = jax.jit(lambda x: softmax_jnp(x, jax_numpy)), jax.device_put(x)
        impls["jax"] = lambda: jf(xj)
    return _warm(impls)


# -- sum and sum of squares of 1e6 float32 (sibling reductions) ------------------------
def sum_sumsq_jnp(x):
    return x.sum(), (x * x).sum()


def make_sum_sumsq(n=1_000_000):
    x = np.random.default_rng(8).standard_normal(n).astype(np.float32)
    impls = {"absjit": lambda f=absjit.jit(sum_sumsq_jnp): f(x),
             "numpy": lambda: sum_sumsq_jnp(x)}
    if jax is not None:
        jf, xj = jax.jit(sum_sumsq_jnp), jax.device_put(x)
        impls["jax"] = lambda: jf(xj)
    return _warm(impls)


# -- dot 100x1000 @ 1000x2000 then relu (seed 004) -------------------------------------
def make_dot_relu(m=100, k=1000, n=2000):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    impls = {"absjit": lambda f=absjit.jit(lambda x, y: jnp.maximum(x @ y, 0)): f(a, b),
             "numpy": lambda: np.maximum(a @ b, 0)}
    if jax is not None:
        jf = jax.jit(lambda x, y: jax_numpy.maximum(x @ y, 0))
        aj, bj = jax.device_put(a), jax.device_put(b)
        impls["jax"] = lambda: jf(aj, bj)
    return _warm(impls)


# -- 3-layer MLP forward on 256 rows ---------------------------------------------------
def _mlp_params(sizes=(784, 512, 256, 10), seed=5):
    rng = np.random.default_rng(seed)
    return [((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32),
             rng.standard_normal(o).astype(np.float32) * 0.1)
            for i, o in zip(sizes[:-1], sizes[1:])]


def mlp_jnp(params, x):
    for w, b in params[:-1]:
        x = jnp.maximum(x @ w + b, 0)
    w, b = params[-1]
    return x @ w + b


def make_mlp(rows=256):
    params = _mlp_params()
    x = np.random.default_rng(6).standard_normal((rows, 784)).astype(np.float32)

    def np_mlp(params, x):
        for w, b in params[:-1]:
            x = np.maximum(x @ w + b, 0)
        w, b = params[-1]
        return x @ w + b
    impls = {"absjit": lambda f=absjit.jit(mlp_jnp): f(params, x),
             "numpy": lambda: np_mlp(params, x)}
    if jax is not None:
        def jmlp(params, x):
            for w, b in params[:-1]:
                x = jax_numpy.maximum(x @ w + b, 0)
            w, b = params[-1]
            return x @ w + b
        jf = jax.jit(jmlp)
        pj = jax.device_put(params)
        xj = jax.device_put(x)
        impls["jax"] = lambda: jf(pj, xj)
    return _warm(impls)


# -- 3-layer MLP training step: value_and_grad + SGD update, batch 128 ------------------
def _mlp_loss(mod, params, x, y):
    for w, b in params[:-1]:
        x = mod.maximum(x @ w + b, 0)
    w, b = params[-1]
    logits = x @ w + b
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - mod.log(mod.sum(mod.exp(logits), axis=1, keepdims=True))
    return -mod.mean(mod.sum(logp * y, axis=1))


def _mlp_train_step(lib, mod, lr=0.01):
    def loss(params, x, y):
        return _mlp_loss(mod, params, x, y)

    def step(params, x, y):
        value, grads = lib.value_and_grad(loss)(params, x, y)
        return value, [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return lib.jit(step)


def make_mlp_train(rows=128):
    params = _mlp_params()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((rows, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, rows)]
    f = _mlp_train_step(absjit, jnp)
    impls = {"absjit": lambda: absjit.block_until_ready(f(params, x, y))}
    if jax is not None:
        jf = _mlp_train_step(jax, jax_numpy)
        pj, xj, yj = jax.device_put(params), jax.device_put(x), jax.device_put(y)
        impls["jax"] = lambda: jax.block_until_ready(jf(pj, xj, yj))
    return _warm(impls)


# -- batched products: einsum 'bij,bjk->bik' and attention scores -----------------------
def make_bmm(batch=64, n=64):
    """``einsum('bij,bjk->bik')`` on ``batch`` float32 matrices of ``n x n``."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((batch, n, n)).astype(np.float32)
    b = rng.standard_normal((batch, n, n)).astype(np.float32)
    impls = {"absjit": lambda f=absjit.jit(lambda x, y: jnp.einsum("bij,bjk->bik", x, y)):
             f(a, b), "numpy": lambda: np.matmul(a, b)}
    if jax is not None:
        jf = jax.jit(lambda x, y: jax_numpy.einsum("bij,bjk->bik", x, y))
        aj, bj = jax.device_put(a), jax.device_put(b)
        impls["jax"] = lambda: jf(aj, bj)
    return _warm(impls)


def make_attention_scores(b=8, h=8, q=64, k=64, d=32):
    """``einsum('bhqd,bhkd->bhqk')``: the key operand is read transposed."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((b, h, q, d)).astype(np.float32)
    y = rng.standard_normal((b, h, k, d)).astype(np.float32)
    spec = "bhqd,bhkd->bhqk"
    impls = {"absjit": lambda f=absjit.jit(lambda u, v: jnp.einsum(spec, u, v)): f(x, y),
             "numpy": lambda: np.matmul(x, np.swapaxes(y, -1, -2))}
    if jax is not None:
        jf = jax.jit(lambda u, v: jax_numpy.einsum(spec, u, v))
        xj, yj = jax.device_put(x), jax.device_put(y)
        impls["jax"] = lambda: jf(xj, yj)
    return _warm(impls)


BMM_SHAPES = {"bmm 256x16x16": (256, 16), "bmm 64x64x64": (64, 64), "bmm 8x256x256": (8, 256)}

WORKLOADS = {"selu": make_selu, "norm": make_norm, "softmax": make_softmax,
             "sum_sumsq": make_sum_sumsq, "dot_relu": make_dot_relu,
             "mlp": make_mlp, "mlp_train": make_mlp_train}
WORKLOADS.update((name, (lambda s: lambda: make_bmm(*s))(shape))
                 for name, shape in BMM_SHAPES.items())
WORKLOADS["attention scores"] = make_attention_scores
