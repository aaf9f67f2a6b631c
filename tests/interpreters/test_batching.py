"""vmap: against a Python loop over the batch, in_axes/out_axes, composition with jit
and grad, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax, jax_numpy


def loop_reference(f, in_axes, *args):
    """``vmap(f, in_axes)(*args)`` computed with a Python loop (out_axes=0)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    size = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = []
    for i in range(size):
        sl = [a if ax is None else np.take(np.asarray(a), i, axis=ax) for a, ax in zip(args, axes)]
        outs.append(f(*sl))
    return absjit.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


FUNCS = {
    "elementwise": lambda x, y: jnp.sin(x) * y + 1.0,
    "scalar_vs_array": lambda x, y: x[0] * y,
    "reduce": lambda x, y: jnp.sum(x * y, axis=0),
    "max": lambda x, y: jnp.max(x) + jnp.min(y),
    "dot": lambda x, y: jnp.dot(x, y),
    "outer": lambda x, y: jnp.outer(x, y),
    "reshape_t": lambda x, y: jnp.reshape(x, (1, 3)).T * y,
    "index": lambda x, y: x[1] + y[::-1],
    "dyn_index": lambda x, y: x[jnp.argmax(y)],
    "where": lambda x, y: jnp.where(x > y, x, y),
    "concat": lambda x, y: jnp.concatenate([x, y]),
    "sort": lambda x, y: jnp.sort(x * y),
    "cumsum": lambda x, y: jnp.cumsum(x) - y,
    "at_set": lambda x, y: x.at[0].set(y[1]),
    "cond": lambda x, y: lax.cond(jnp.sum(x) > 0, lambda a, b: a * b, lambda a, b: a - b, x, y),
    "scan": lambda x, y: lax.scan(lambda c, v: (c + v, c * v), 0.0, x * y),
    "fori": lambda x, y: lax.fori_loop(0, 3, lambda i, c: c * x + y[i], x),
    "while": lambda x, y: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2 + y, c[1] + 1),
                                         (x, 0))[0],
}


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, -1)])
def test_vmap_matches_loop(name, in_axes, mode, rng):
    f = FUNCS[name]
    x = rng.standard_normal((3,) if in_axes[0] is None else (3, 3) if in_axes[0] == 1
                            else (4, 3)).astype(np.float32)
    y = rng.standard_normal((3, 4) if in_axes[1] == -1 else (3,) if in_axes[1] is None
                            else (4, 3)).astype(np.float32)
    if in_axes[0] == 1:
        x = rng.standard_normal((3, 4)).astype(np.float32)
    got = mode(absjit.vmap(f, in_axes=in_axes))(jnp.asarray(x), jnp.asarray(y))
    expected = loop_reference(lambda a, b: f(jnp.asarray(a), jnp.asarray(b)), in_axes, x, y)
    assert_close(got, expected, rtol=1e-5, atol=1e-5, check_dtype=False)


@settings(max_examples=10)
@given(st.integers(1, 4), st.integers(1, 3), st.sampled_from([0, 1, -1]))
def test_vmap_axes_hypothesis(batch, n, out_axis):
    rng = np.random.default_rng(batch * 10 + n)
    x = rng.standard_normal((n, batch)).astype(np.float32)
    f = lambda v: jnp.stack([v, jnp.exp(v)])  # noqa: E731
    got = absjit.vmap(f, in_axes=1, out_axes=out_axis)(x)
    expected = np.stack([np.stack([x[:, i], np.exp(x[:, i])]) for i in range(batch)])
    expected = np.moveaxis(expected, 0, out_axis)
    assert_close(got, expected, rtol=1e-5)
    if jax is not None:
        j = jax.vmap(lambda v: jax_numpy.stack([v, jax_numpy.exp(v)]), in_axes=1,
                     out_axes=out_axis)(x)
        assert got.shape == j.shape


def test_vmap_pytrees_and_none():
    params = {"w": np.ones((2,), np.float32), "b": np.float32(1.0)}
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    f = lambda p, x: {"out": jnp.dot(p["w"], x) + p["b"], "x": x}  # noqa: E731
    got = absjit.vmap(f, in_axes=({"w": None, "b": None}, 0))(params, xs)
    assert_close(got["out"], xs.sum(1) + 1)
    assert_close(got["x"], xs)
    got = absjit.vmap(f, in_axes=(None, 0), out_axes={"out": 0, "x": 1})(params, xs)
    assert got["x"].shape == (2, 3)


def test_vmap_unbatched_output_and_axis_size():
    out = absjit.vmap(lambda x: 1.0, axis_size=3, in_axes=None)(np.float32(2.0))
    assert_close(out, np.ones(3, np.float32), check_dtype=False)
    out = absjit.vmap(lambda x, y: y, in_axes=(0, None))(np.ones(4, np.float32), 2.0)
    assert out.shape == (4,)


def test_per_example_gradients(mode, rng):
    w = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((5, 3)).astype(np.float32)
    ys = rng.standard_normal(5).astype(np.float32)

    def loss(w, x, y):
        return (jnp.dot(w, x) - y) ** 2

    got = mode(absjit.vmap(absjit.grad(loss), in_axes=(None, 0, 0)))(w, xs, ys)
    expected = 2 * (xs @ w - ys)[:, None] * xs
    assert_close(got, expected, rtol=1e-5, atol=1e-5)
    got2 = absjit.grad(lambda w: jnp.sum(absjit.vmap(loss, in_axes=(None, 0, 0))(w, xs, ys)))(w)
    assert_close(got2, expected.sum(0), rtol=1e-4, atol=1e-5)
    got3 = absjit.jit(absjit.vmap(absjit.jit(absjit.grad(loss)), in_axes=(None, 0, 0)))(w, xs, ys)
    assert_close(got3, expected, rtol=1e-5, atol=1e-5)


def test_nested_vmap(rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((4, 3)).astype(np.float32)
    got = absjit.vmap(absjit.vmap(jnp.dot, (None, 0)), (0, None))(x, y)
    assert_close(got, x @ y.T, rtol=1e-5, atol=1e-5)


def test_batched_scalar_broadcasts_against_array():
    # a batched logically-rank-0 operand next to a rank-1 operand (defbroadcasting)
    f = lambda s, v: lax.add(s, v)  # noqa: E731
    got = absjit.vmap(f, in_axes=(0, None))(np.arange(3, dtype=np.float32),
                                            np.ones(2, np.float32))
    assert_close(got, np.arange(3, dtype=np.float32)[:, None] + np.ones(2, np.float32))


def test_vmap_mismatched_sizes_names_arguments():
    with pytest.raises(ValueError, match=r"inconsistent sizes.*\n.*argument x .*\(3,\)"
                                         r".*\n.*argument y .*\(4,\)"):
        absjit.vmap(lambda x, y: x + y)(np.ones(3), np.ones(4))


def test_vmap_in_axes_mismatch():
    with pytest.raises(ValueError, match="in_axes"):
        absjit.vmap(lambda x, y: x + y, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="tree prefix"):
        absjit.vmap(lambda p: p["a"], in_axes=({"b": 0},))({"a": np.ones(3)})
    with pytest.raises(ValueError, match="axis 2"):
        absjit.vmap(lambda x: x, in_axes=2)(np.ones(3))
    with pytest.raises(ValueError, match="at least one non-None"):
        absjit.vmap(lambda x: x, in_axes=None)(np.ones(3))
