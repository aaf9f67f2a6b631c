"""Collectives over a named vmap axis (``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index``, ``axis_size``) and ``pmap``, against JAX: eagerly, under
``jit`` outside and inside the ``vmap``, nested axes, control flow and gradients."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax, jax_numpy

X = np.arange(12, dtype=np.float32).reshape(4, 3) - 5


def _both(make, *args, rtol=1e-6):
    """``make(lib, lax, np_)`` built with absjit and with JAX: equal results (JAX where
    installed; the absjit result is returned for further checks)."""
    got = make(absjit, lax, jnp)(*args)
    if jax is not None:
        want = make(jax, jax.lax, jax_numpy)(*args)
        assert_close(got, want, rtol=rtol, atol=1e-5, check_dtype=False)
    return got


PROGRAMS = {
    "psum": lambda L, lx, n: L.vmap(lambda v: v / lx.psum(jnp_abs(n, v) + 1, "i"),
                                    axis_name="i"),
    "pmean": lambda L, lx, n: L.vmap(lambda v: v - lx.pmean(v, "i"), axis_name="i"),
    "pmax_pmin": lambda L, lx, n: L.vmap(lambda v: lx.pmax(v, "i") - lx.pmin(v, "i"),
                                         axis_name="i"),
    "axis_index": lambda L, lx, n: L.vmap(lambda v: v * lx.axis_index("i"), axis_name="i"),
    "all_gather": lambda L, lx, n: L.vmap(lambda v: lx.all_gather(v, "i").sum(0) * v,
                                          axis_name="i"),
    "all_gather_tiled": lambda L, lx, n: L.vmap(
        lambda v: lx.all_gather(v, "i", axis=0, tiled=True), axis_name="i"),
    "all_gather_axis1": lambda L, lx, n: L.vmap(lambda v: lx.all_gather(v, "i", axis=1),
                                                axis_name="i"),
    "pytree": lambda L, lx, n: L.vmap(lambda v: lx.psum({"a": v, "b": (v * 2,)}, "i"),
                                      axis_name="i"),
    "unbatched": lambda L, lx, n: L.vmap(lambda v: v + lx.psum(1.0, "i"), axis_name="i"),
    "in_axes_1": lambda L, lx, n: L.vmap(lambda v: lx.psum(v, "j"), in_axes=1,
                                         axis_name="j"),
}


def jnp_abs(n, v):
    return n.abs(v)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_collectives_eager_and_jit(name):
    make = PROGRAMS[name]
    got = _both(make, X)
    assert_close(absjit.jit(make(absjit, lax, jnp))(X), got, rtol=1e-6)
    assert_close(absjit.jit(make(absjit, lax, jnp), backend="cpu")(X), got, rtol=1e-6)


def test_jit_inside_the_vmap_and_nested_axes():
    def inner(L, lx, n):
        return L.jit(lambda v: v * lx.axis_index("i") + lx.psum(v, "i"))
    _both(lambda L, lx, n: L.vmap(inner(L, lx, n), axis_name="i"), X)

    def nested(L, lx, n):
        g = lambda v: lx.psum(v, "i") + 10 * lx.psum(v, "j") + lx.axis_index("j")  # noqa: E731
        return L.vmap(L.vmap(g, axis_name="j"), axis_name="i")
    _both(nested, X)
    assert absjit.vmap(absjit.vmap(lambda v: lax.axis_size("i") * 10 + lax.axis_size("j"),
                                   axis_name="j"), axis_name="i")(X)[0, 0] == 43


def test_collectives_in_control_flow_bodies():
    def scan_prog(L, lx, n):
        return L.vmap(lambda v: lx.scan(lambda c, u: (c + lx.psum(u, "i"), None), 0.0, v)[0],
                      axis_name="i")
    _both(scan_prog, X)

    def fori_prog(L, lx, n):
        return L.vmap(lambda v: lx.fori_loop(0, 3, lambda k, c: c + lx.pmean(c, "i"), v),
                      axis_name="i")
    _both(fori_prog, X)


def test_gradients_through_collectives():
    w = np.float32(1.5)

    def inside(L, lx, n):   # per-member gradients of a loss that sums over the axis
        return L.vmap(lambda u, v: L.grad(lambda a: lx.psum((a * v) ** 2, "i").sum())(u),
                      in_axes=(None, 0), axis_name="i")
    _both(inside, w, X)

    def outside(L, lx, n):
        return L.grad(lambda a: L.vmap(lambda v: lx.pmean(n.sum((a * v) ** 2), "i"),
                                       axis_name="i")(X).sum())
    _both(outside, w)

    def gather(L, lx, n):
        return L.grad(lambda y: L.vmap(lambda v: (lx.all_gather(v, "i")[0] * 3).sum()
                                       + (lx.all_gather(v, "i", tiled=True) ** 2).sum(),
                                       axis_name="i")(y).sum())
    _both(gather, X)
    with pytest.raises(NotImplementedError, match="pmax"):
        absjit.vmap(absjit.grad(lambda v: lax.pmax(v, "i")), axis_name="i")(X[:, 0])


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                    elements=st.floats(-8, 8, width=32)))
def test_psum_equals_the_batch_sum(x):
    got = absjit.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)
    assert_close(got, np.broadcast_to(x.sum(0), x.shape), rtol=1e-5, atol=1e-5)
    got = absjit.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
    assert_close(got, np.broadcast_to(x, (x.shape[0],) + x.shape))


def test_unbound_axis_names_raise_before_running():
    with pytest.raises(NameError, match="unbound axis name: 'k'"):
        lax.psum(jnp.ones(2), "k")
    with pytest.raises(NameError, match="unbound axis name"):
        absjit.jit(lambda v: lax.axis_index("k") + v)(1.0)
    with pytest.raises(NameError, match=r"bound by vmap here are: \['i'\]"):
        absjit.vmap(lambda v: lax.pmean(v, "j"), axis_name="i")(X)
    with pytest.raises(ValueError, match="out of bounds"):
        absjit.vmap(lambda v: lax.all_gather(v, "i", axis=3), axis_name="i")(X)


def test_pmap_is_a_compiled_named_vmap():
    def make(L, lx, n):
        return L.pmap(lambda v, k: v * k / lx.psum(n.abs(v) + 1, "d") + lx.axis_index("d"),
                      axis_name="d", static_broadcasted_argnums=1)
    f = make(absjit, lax, jnp)
    got = f(X, 3)
    assert f(X, 3) is not None and f._cache_size() == 1
    f(X, 4)
    assert f._cache_size() == 2          # a new static value: a new entry
    v = X
    want = v * 3 / (np.abs(v) + 1).sum(0) + np.arange(4, dtype=np.float32)[:, None]
    assert_close(got, want, rtol=1e-6)
    assert_close(absjit.pmap(lambda v: v + 1)(X), X + 1)
    with pytest.raises(ValueError, match="one device"):
        absjit.pmap(lambda v: v, devices=[object(), object()])
