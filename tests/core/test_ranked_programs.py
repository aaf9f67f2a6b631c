"""Small real programs at the ``ranked`` level: one compiled entry serves every batch
size or sequence length, and gives what eager execution gives."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax, nn

RNG = np.random.default_rng(11)
W1 = RNG.standard_normal((8, 16)).astype(np.float32) / 3
W2 = RNG.standard_normal((16, 4)).astype(np.float32) / 4


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def attention(q, k, v):  # the scale is a size used as a number
    return nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1) @ v


def kmeans_step(x, c):  # one_hot over a symbolic number of clusters
    a = jnp.argmin(((x[:, None, :] - c[None, :, :]) ** 2).sum(-1), 1)
    oh = nn.one_hot(a, c.shape[0])
    return (oh.T @ x) / jnp.maximum(oh.sum(0), 1)[:, None]


def running_mean(x):  # arange from 1 to a symbolic size
    return jnp.cumsum(x, 0) / jnp.arange(1, x.shape[0] + 1)[:, None]


def train_step(x, y):
    def loss(ws):
        h = nn.relu(x @ ws[0])
        return -jnp.mean(jnp.sum(nn.log_softmax(h @ ws[1]) * nn.one_hot(y, 4), axis=1))
    value, grads = absjit.value_and_grad(loss)((W1, W2))
    return value, [w - 0.1 * g for w, g in zip((W1, W2), grads)]


def rnn(xs, w):
    return lax.scan(lambda h, x: (jnp.tanh(h @ w + x),) * 2, jnp.zeros(xs.shape[1]), xs)[1]


PROGRAMS = {
    "attention": (attention, lambda n: (_f32(n, 8), _f32(n, 8), _f32(n, 8))),
    "kmeans_step": (kmeans_step, lambda n: (_f32(n, 2), _f32(3, 2))),
    "running_mean": (running_mean, lambda n: (_f32(n, 3),)),
    "train_step": (train_step, lambda n: (_f32(n, 8), RNG.integers(0, 4, n).astype(np.int32))),
    "rnn": (rnn, lambda n: (_f32(n, 4), _f32(4, 4) * 0.3)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_one_entry_for_every_batch_size(name):
    fn, make = PROGRAMS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = absjit.jit(fn, abstraction="ranked", backend="cpu")
        for n in (7, 30, 129):
            args = make(n)
            for got, want in zip(absjit.tree.leaves(f(*args)), absjit.tree.leaves(fn(*args))):
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5,
                                           atol=2e-5)
    assert f._cache_size() == 1


def test_sizes_as_numbers_and_ranges():
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    f = absjit.jit(lambda x: (jnp.sqrt(x.shape[0]), jnp.arange(2, x.shape[0]),
                              jnp.arange(x.shape[0], 0, -2), jnp.arange(1, 2 * x.shape[1], 3)),
                   abstraction="ranked")
    got = [np.asarray(v) for v in f(x)]
    np.testing.assert_allclose(got[0], 2.0)
    np.testing.assert_array_equal(got[1], np.arange(2, 4))
    np.testing.assert_array_equal(got[2], np.arange(4, 0, -2))
    np.testing.assert_array_equal(got[3], np.arange(1, 6, 3))
    with pytest.raises(ValueError, match="non-empty range"):
        f(np.ones((0, 3), np.float32))  # arange(2, 0) would be empty
    with pytest.raises(TypeError, match="static integer step"):
        absjit.jit(lambda x: jnp.arange(0, x.shape[0], 0.5), abstraction="ranked")(x)


def test_a_size_divided_by_a_product_of_sizes():
    # ``100 // x.size`` is written into the kernel as source: a wrong bracket gave
    # 100 // x0 * x1 (200 on a 2x4 array instead of 12)
    f = absjit.jit(lambda x: (x * (100 // x.size), jnp.roll(x, 3)), abstraction="ranked",
                   backend="cpu")
    for shape in ((2, 4), (3, 5)):
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        scaled, rolled = f(x)
        np.testing.assert_array_equal(np.asarray(scaled), x * (100 // x.size))
        np.testing.assert_array_equal(np.asarray(rolled), np.roll(x, 3))


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_jacobians_of_symbolic_size(backend):
    # the basis of a Jacobian is the identity of the (symbolic) input size
    transforms = {
        "jacfwd": absjit.jacfwd(lambda b: jnp.sin(b) * b.sum()),
        "jacrev": absjit.jacrev(lambda b: jnp.sin(b) * b.sum()),
        "hessian": absjit.hessian(lambda b: (b ** 3).sum()),
    }
    for name, t in transforms.items():
        f = absjit.jit(t, abstraction="ranked", backend=backend)
        for n in (5, 8):
            x = np.arange(1.0, n + 1, dtype=np.float32)
            np.testing.assert_allclose(np.asarray(f(x)), np.asarray(t(x)), rtol=1e-5,
                                       atol=1e-4, err_msg=name)
        assert f._cache_size() == 1


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_traced_row_indices(backend):
    # a window of a symbolic width at a traced start: x[i], x[:, i], a fori_loop over
    # rows, and their gradients
    progs = {
        "row": lambda x, i: x[i],
        "column": lambda x, i: x[:, i],
        "window": lambda x, i: lax.dynamic_slice(x, (i, 0), (2, x.shape[1])),
        "set_row": lambda x, i: jnp.asarray(x).at[i].set(x[0] * 2),
        "fori_rows": lambda x, i: lax.fori_loop(
            0, x.shape[0], lambda k, c: c.at[k].set(c[k] * k), jnp.asarray(x)),
        "grad_row": lambda x, i: absjit.grad(lambda y: (y[i] ** 2).sum())(x),
    }
    for name, fn in progs.items():
        f = absjit.jit(fn, abstraction="ranked", backend=backend)
        for shape in ((4, 6), (5, 9)):
            x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
            np.testing.assert_allclose(np.asarray(f(x, np.int32(2))),
                                       np.asarray(fn(x, np.int32(2))), err_msg=name)
        assert f._cache_size() == 1


GRADS = {
    "head": lambda y: (y[:3] ** 2).sum(),
    "tail": lambda y: (y[1:] ** 2).sum(),
    "strided": lambda y: (y[::2] ** 2).sum(),
    "smoothness": lambda y: ((y[1:] - y[:-1]) ** 2).sum() + (jnp.diff(y) ** 2).sum(),
    "roll": lambda y: (jnp.roll(y, 1) * y).sum(),
    "pad": lambda y: (jnp.pad(y, 2) ** 2).sum(),
    "cumprod": lambda y: jnp.cumprod(y).sum() + jnp.cumprod(y[::-1]).sum(),
    "cummax": lambda y: absjit.lax.cummax(y, reverse=True).sum(),
    "prod": lambda y: jnp.prod(y),
}


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_of_slices(backend, name):
    # the backward pass of a slice pads by amounts computed from the sizes
    g = absjit.grad(GRADS[name])
    f = absjit.jit(g, abstraction="ranked", backend=backend)
    for n in (7, 10):
        x = np.linspace(0.5, 2.0, n).astype(np.float32)
        np.testing.assert_allclose(np.asarray(f(x)), np.asarray(g(x)), rtol=1e-5, atol=1e-6)
    assert f._cache_size() == 1


def test_gradient_of_strided_2d_slices():
    g = absjit.grad(lambda y: ((y[:, 1:] - y[:, :-1]) ** 2).sum() + (y[::2, ::3] ** 2).sum())
    f = absjit.jit(g, abstraction="ranked", backend="cpu")
    for shape in ((4, 7), (5, 9)):
        x = np.linspace(0.5, 2.0, np.prod(shape)).astype(np.float32).reshape(shape)
        np.testing.assert_allclose(np.asarray(f(x)), np.asarray(g(x)), rtol=1e-5, atol=1e-6)
    assert f._cache_size() == 1


def test_sizes_in_float_and_array_arithmetic():
    # as JAX's dimension_as_value: a size meeting a float or an array is its value
    progs = [lambda x: x * (x.shape[0] * 0.5), lambda x: x / (x.shape[0] / 2),
             lambda x: 1.0 / x.shape[0] + x, lambda x: x.shape[0] * jnp.ones(3),
             lambda x: x.shape[0] - np.float32(0.5) + x, lambda x: jnp.size(x) * 0.5 + x]
    for fn in progs:
        f = absjit.jit(fn, abstraction="ranked")
        for n in (4, 7):
            x = np.arange(n, dtype=np.float32)
            got, want = np.asarray(f(x)), np.asarray(fn(x))
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-6)
        assert f._cache_size() == 1


def test_repeats_per_element_fix_the_axis():
    fn = lambda x: jnp.repeat(x, jnp.array([1, 2, 1, 0]), axis=1,  # noqa: E731
                              total_repeat_length=4)
    f = absjit.jit(fn, abstraction="ranked", backend="cpu")
    for rows in (3, 5):
        x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
        np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(fn(x)))
    with pytest.raises(ValueError, match=r"x.shape\[1\] must be 4"):
        f(np.ones((5, 3), np.float32))


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_linspace_of_a_symbolic_number_of_samples(backend):
    progs = [lambda x: jnp.linspace(0, 1, x.shape[0]) + x,
             lambda x: jnp.linspace(-2.0, 3.0, x.shape[0], endpoint=False) * x,
             lambda x: jnp.linspace(x[0], x[-1], x.shape[0]),
             lambda x: jnp.logspace(0, 2, x.shape[0]) + x]
    for fn in progs:
        f = absjit.jit(fn, abstraction="ranked", backend=backend)
        for n in (2, 5, 9):
            x = np.arange(n, dtype=np.float32)
            np.testing.assert_allclose(np.asarray(f(x)), np.asarray(fn(x)), rtol=1e-6,
                                       atol=1e-6)
        assert f._cache_size() == 1
    f = absjit.jit(lambda x: jnp.linspace(0, 1, x.shape[0]) + x, abstraction="ranked",
                   backend=backend)
    assert f(np.ones(0, np.float32)).shape == (0,)  # an empty entry of the same rank
