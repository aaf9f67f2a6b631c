"""Typed PRNG keys (``random.key``): JAX's user contract (shape, dtype ``key<fry>``,
reprs, ``key_data``/``wrap_key_data``/``key_impl``, no arithmetic), the same numbers as
raw keys, and keys crossing ``jit`` (every backend), ``vmap``, loops and pytrees."""
import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax, random

try:
    import jax
except ImportError:  # the stored expectations below still run
    jax = None

SPLIT3 = np.array([[1797259609, 2579123966], [928981903, 3453687069],
                   [4146024105, 2718843009]], np.uint32)   # jax.random.split(key(0), 3)


def _data(k):
    return np.asarray(random.key_data(k))


def test_key_array_attributes_and_reprs():
    k = random.key(0)
    assert k.shape == () and k.ndim == 0 and k.size == 1
    assert str(k.dtype) == "key<fry>" and k.dtype == random.key(5).dtype
    assert jnp.issubdtype(k.dtype, absjit.dtypes.prng_key)
    assert jnp.issubdtype(k.dtype, absjit.dtypes.extended)
    assert not jnp.issubdtype(k.dtype, np.integer)
    assert not jnp.issubdtype(np.float32, absjit.dtypes.prng_key)
    ks = random.split(k, 3)
    assert ks.shape == (3,) and len(ks) == 3
    np.testing.assert_array_equal(_data(ks), SPLIT3)
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert repr(ks[1]) == "Array((), dtype=key<fry>) overlaying:\n[ 928981903 3453687069]"
    assert ks[1:].shape == (2,) and ks.reshape(3, 1).shape == (3, 1)
    assert ks.reshape(3, 1).T.shape == (1, 3) and ks.reshape(1, 3).squeeze().shape == (3,)
    np.testing.assert_array_equal(_data(list(ks)[2]), SPLIT3[2])
    assert random.key_impl(k) == "threefry2x32" and repr(random.key_impl(k)) == "'threefry2x32'"
    if jax is not None:
        jk = jax.random.key(0)
        assert repr(k) == repr(jk) and repr(ks) == repr(jax.random.split(jk, 3))
        assert str(k.dtype) == str(jk.dtype)
        assert repr(random.key_impl(k)) == repr(jax.random.key_impl(jk))


def test_key_data_and_wrap_round_trip():
    words = np.array([[0, 1], [0, 2]], np.uint32)
    w = random.wrap_key_data(words)
    assert w.shape == (2,) and str(w.dtype) == "key<fry>"
    np.testing.assert_array_equal(_data(w), words)
    np.testing.assert_array_equal(_data(random.key(42)), np.asarray(random.PRNGKey(42)))
    # key_data of a raw key is the raw key; key_impl knows raw keys too.
    np.testing.assert_array_equal(_data(random.PRNGKey(3)), [0, 3])
    assert random.key_impl(random.PRNGKey(3)) == "threefry2x32"
    with pytest.raises(TypeError, match="PRNG key"):
        random.wrap_key_data(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="already a typed key"):
        random.wrap_key_data(w)
    with pytest.raises(ValueError, match="threefry2x32"):
        random.key(0, impl="rbg")


@pytest.mark.parametrize("name,call", [
    ("split", lambda r, k: r.split(k, 4)),
    ("fold_in", lambda r, k: r.fold_in(k, 7)),
    ("bits", lambda r, k: r.bits(k, (5,))),
    ("uniform", lambda r, k: r.uniform(k, (5,))),
    ("normal", lambda r, k: r.normal(k, (5,))),
    ("randint", lambda r, k: r.randint(k, (5,), 0, 9)),
    ("choice", lambda r, k: r.choice(k, 10, (3,), replace=False)),
    ("gamma", lambda r, k: r.gamma(k, 1.5, (4,))),
])
def test_typed_and_raw_keys_give_the_same_numbers(name, call):
    typed, raw = call(random, random.key(11)), call(random, random.PRNGKey(11))
    if name in ("split", "fold_in"):
        assert str(typed.dtype) == "key<fry>" and raw.dtype == np.uint32
        typed = random.key_data(typed)
    np.testing.assert_array_equal(np.asarray(typed), np.asarray(raw))
    if jax is not None and name != "gamma":   # gamma matches JAX's distribution only
        want = call(jax.random, jax.random.key(11))
        if name in ("split", "fold_in"):
            want = jax.random.key_data(want)
        np.testing.assert_array_equal(np.asarray(typed), np.asarray(want))


@pytest.mark.parametrize("backend", ["interpret", "cpu", "xla"])
def test_typed_keys_as_jit_arguments_and_outputs(backend):
    if backend == "xla":
        pytest.importorskip("jax")
    f = absjit.jit(lambda k: (k, random.split(k), random.uniform(k, (3,))), backend=backend)
    k = random.key(0)
    same, ks, u = f(k)
    assert str(same.dtype) == "key<fry>" and same.shape == () and ks.shape == (2,)
    np.testing.assert_array_equal(_data(same), [0, 0])
    np.testing.assert_array_equal(_data(ks), SPLIT3[:2])
    np.testing.assert_array_equal(np.asarray(u), np.asarray(random.uniform(k, (3,))))
    # A traced seed makes a typed key inside jit.
    g = absjit.jit(lambda s: random.key(s), backend=backend)
    np.testing.assert_array_equal(_data(g(jnp.int32(3))), [0, 3])


def test_typed_keys_under_vmap_loops_and_in_pytrees():
    ks = random.split(random.key(0), 3)
    draws = absjit.vmap(lambda k: random.normal(k, (2,)))(ks)
    assert draws.shape == (3, 2)
    np.testing.assert_array_equal(np.asarray(draws[1]), np.asarray(random.normal(ks[1], (2,))))
    nested = absjit.vmap(random.split)(ks)
    assert nested.shape == (3, 2) and str(nested.dtype) == "key<fry>"
    np.testing.assert_array_equal(_data(nested[2]), _data(random.split(ks[2])))
    batched = absjit.vmap(random.key)(jnp.arange(3))
    np.testing.assert_array_equal(_data(batched), [[0, 0], [0, 1], [0, 2]])
    # fori_loop / scan carries (JAX: [683029726, 1624662641] after three splits).
    k3 = lax.fori_loop(0, 3, lambda i, k: random.split(k)[0], random.key(0))
    np.testing.assert_array_equal(_data(k3), [683029726, 1624662641])

    def body(c, _):
        c, s = random.split(c)
        return c, random.uniform(s)
    last, us = lax.scan(body, random.key(0), None, length=3)
    np.testing.assert_array_equal(_data(last), [683029726, 1624662641])
    assert us.shape == (3,)
    state = {"key": random.key(1), "w": jnp.ones(2)}
    out = absjit.jit(lambda s: {"key": random.split(s["key"])[0], "w": s["w"] * 2},
                     backend="interpret")(state)
    assert str(out["key"].dtype) == "key<fry>"
    np.testing.assert_array_equal(_data(out["key"]), _data(random.split(random.key(1))[0]))
    g = absjit.grad(lambda s, k: jnp.sum(s * random.normal(k, (3,))))(1.0, random.key(0))
    np.testing.assert_allclose(float(g), float(jnp.sum(random.normal(random.key(0), (3,)))),
                               rtol=1e-6)
    if jax is not None:
        jks = jax.random.split(jax.random.key(0), 3)
        np.testing.assert_array_equal(
            _data(nested), np.asarray(jax.random.key_data(jax.vmap(jax.random.split)(jks))))


def test_typed_keys_refuse_arithmetic_and_conversion():
    k, ks = random.key(0), random.split(random.key(0), 3)
    for bad in (lambda: k + 1, lambda: 1 + k, lambda: k * k, lambda: -k, lambda: k < k,
                lambda: jnp.add(k, 1), lambda: jnp.sum(ks), lambda: np.asarray(k),
                lambda: float(k), lambda: bool(k), lambda: len(k)):
        with pytest.raises(TypeError):
            bad()
    assert bool(k == random.key(0)) and not bool(k != random.key(0))
    with pytest.raises(TypeError, match="single key.*vmap"):
        random.normal(ks, (2,))
    with pytest.raises(TypeError, match="already a PRNG key"):
        random.key(k)


def test_typed_keys_feed_initializers_and_stax():
    from absjit.example_libraries import stax
    from absjit.nn import initializers
    for make in (initializers.glorot_normal, initializers.lecun_uniform,
                 initializers.orthogonal):
        np.testing.assert_array_equal(np.asarray(make()(random.key(0), (3, 4))),
                                      np.asarray(make()(random.PRNGKey(0), (3, 4))))
    init, apply = stax.serial(stax.Dense(3), stax.Relu, stax.Dropout(0.5))
    _, params = init(random.key(1), (2, 4))
    out = apply(params, np.ones((2, 4), np.float32), rng=random.key(2))
    np.testing.assert_array_equal(
        np.asarray(out), np.asarray(apply(params, np.ones((2, 4), np.float32),
                                          rng=random.PRNGKey(2))))
