"""absjit.random: JAX's exact streams (stored reference values, and live JAX when
installed), traced seeds and keys, distributions, bad input."""
import os

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import random

REF = np.load(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                           "random_reference.npz"))

# The same calls as scripts/make_random_reference.py, with absjit.
CASES = {
    "prngkey": lambda r: r.PRNGKey(7),
    "prngkey_neg": lambda r: r.PRNGKey(-3),
    "split": lambda r: r.split(r.PRNGKey(1), 5),
    "split_2d": lambda r: r.split(r.PRNGKey(1), (2, 3)),
    "fold_in": lambda r: r.fold_in(r.PRNGKey(1), 123),
    "bits": lambda r: r.bits(r.PRNGKey(3), (257,)),
    "bits_u8": lambda r: r.bits(r.PRNGKey(3), (33,), dtype=np.uint8),
    "bits_u16": lambda r: r.bits(r.PRNGKey(3), (4, 5), dtype=np.uint16),
    "uniform": lambda r: r.uniform(r.PRNGKey(3), (1000,)),
    "uniform_range": lambda r: r.uniform(r.PRNGKey(4), (1000,), minval=-2.3, maxval=3.7),
    "uniform_f16": lambda r: r.uniform(r.PRNGKey(3), (100,), dtype=np.float16),
    "normal": lambda r: r.normal(r.PRNGKey(3), (4000,)),
    "randint": lambda r: r.randint(r.PRNGKey(3), (1000,), 0, 7),
    "randint_full": lambda r: r.randint(r.PRNGKey(3), (100,), -2 ** 31, 2 ** 31 - 1),
    "randint_u8": lambda r: r.randint(r.PRNGKey(3), (100,), 0, 256, dtype=np.uint8),
    "randint_empty_range": lambda r: r.randint(r.PRNGKey(3), (10,), 5, 5),
    "bernoulli": lambda r: r.bernoulli(r.PRNGKey(4), 0.3, (500,)),
    "categorical": lambda r: r.categorical(
        r.PRNGKey(4), np.log(np.array([0.1, 0.2, 0.7], np.float32)), shape=(200,)),
    "choice": lambda r: r.choice(r.PRNGKey(5), 10, (20,)),
    "choice_noreplace": lambda r: r.choice(r.PRNGKey(5), 10, (6,), replace=False),
    "choice_p": lambda r: r.choice(r.PRNGKey(5), 4, (50,),
                                   p=np.array([0.1, 0.2, 0.3, 0.4], np.float32)),
    "permutation": lambda r: r.permutation(r.PRNGKey(6), 10),
    "permutation_2d": lambda r: r.permutation(r.PRNGKey(6), np.arange(12).reshape(4, 3)),
    "rademacher": lambda r: r.rademacher(r.PRNGKey(8), (100,)),
    "exponential": lambda r: r.exponential(r.PRNGKey(8), (1000,)),
    "truncated_normal": lambda r: r.truncated_normal(r.PRNGKey(7), -1.0, 2.0, (1000,)),
}


def _compare(name, got, expected):
    """Equal to the last bit: integers and floats alike (``normal``, ``truncated_normal``
    and ``exponential`` included: absjit's float32 ``erf_inv`` and ``log1p`` there follow
    XLA's CPU algorithms with its fused multiply-adds)."""
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape, name
    if got.dtype.kind == "f":
        got, expected = got.view(f"u{got.itemsize}"), expected.view(f"u{got.itemsize}")
    np.testing.assert_array_equal(got, expected, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_stored_jax_values_eagerly(name):
    _compare(name, CASES[name](random), REF[name])


# Under jit on the cpu backend each case is a fresh Numba compile (about a second), so
# only a representative few.
@pytest.mark.parametrize("name", ["split", "uniform_range", "normal", "truncated_normal",
                                  "randint"])
def test_matches_stored_jax_values_under_jit(name):
    _compare(name, absjit.jit(lambda: CASES[name](random))(), REF[name])


def test_uint64_bits_match_stored_jax_values():
    absjit.config.update("enable_x64", True)
    try:
        got = random.bits(random.PRNGKey(3), (64,), dtype=np.uint64)
    finally:
        absjit.config.update("enable_x64", False)
    _compare("bits_u64", got, REF["bits_u64"])


def test_matches_live_jax_with_traced_keys():
    jax = pytest.importorskip("jax")
    f = absjit.jit(lambda key: random.uniform(key, (300,), minval=-1.0, maxval=5.0))
    for seed in (0, 42, 2 ** 31 - 1):
        k = np.asarray(jax.random.PRNGKey(seed))
        np.testing.assert_array_equal(np.asarray(random.PRNGKey(seed)), k)
        np.testing.assert_array_equal(np.asarray(random.randint(k, (300,), -4, 9)),
                                      np.asarray(jax.random.randint(k, (300,), -4, 9)))
        np.testing.assert_array_equal(
            np.asarray(f(k)), np.asarray(jax.random.uniform(k, (300,), minval=-1.0, maxval=5.0)))


# Staging tests run the traced program on the interpret backend: what they check is
# tracing (traced seeds, batching), and each cpu compile of the cipher costs seconds.
def _jit(f):
    return absjit.jit(f, backend="interpret")


def test_traced_seed_under_jit_and_vmap():
    keys = _jit(random.PRNGKey)(jnp.int32(-3))
    np.testing.assert_array_equal(np.asarray(keys), REF["prngkey_neg"])
    seeds = jnp.arange(4)
    batched = absjit.vmap(random.PRNGKey)(seeds)
    np.testing.assert_array_equal(np.asarray(batched),
                                  np.stack([np.asarray(random.PRNGKey(i)) for i in range(4)]))
    draws = _jit(absjit.vmap(lambda s: random.normal(random.PRNGKey(s), (3,))))(seeds)
    assert draws.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(draws[1]),
                                  np.asarray(random.normal(random.PRNGKey(1), (3,))))


def test_vmapped_split_and_keys_as_jit_outputs():
    keys = random.split(random.PRNGKey(1), 3)
    out = absjit.vmap(lambda k: random.split(k))(keys)
    assert out.shape == (3, 2, 2) and out.dtype == np.uint32
    np.testing.assert_array_equal(np.asarray(out[2]), np.asarray(random.split(keys[2])))
    step = _jit(lambda k: random.split(k))
    np.testing.assert_array_equal(np.asarray(step(keys[0])), np.asarray(random.split(keys[0])))


def test_grad_through_sampling_has_zero_key_tangent():
    def f(scale, key):
        return jnp.sum(scale * random.normal(key, (5,)))
    key = random.PRNGKey(0)
    g = absjit.grad(f)(2.0, key)
    np.testing.assert_allclose(float(g), float(jnp.sum(random.normal(key, (5,)))), rtol=1e-6)
    gk = absjit.grad(lambda s: jnp.sum(random.uniform(random.PRNGKey(0), (3,)) * s))(1.0)
    assert np.isfinite(float(gk))


def test_dtypes_follow_jax():
    key = random.PRNGKey(0)
    assert random.uniform(key, ()).dtype == np.float32
    assert random.normal(key, (2,), dtype=np.float16).dtype == np.float16
    assert random.randint(key, (2,), 0, 3, dtype=np.int8).dtype == np.int8
    assert random.bernoulli(key, 0.5, (2,)).dtype == np.bool_
    assert random.poisson(key, 2.0, (2,)).dtype == np.int32
    assert random.normal(key, (2,), dtype=np.complex64).dtype == np.complex64
    absjit.config.update("enable_x64", True)
    try:
        assert random.uniform(key, (2,), dtype=np.float64).dtype == np.float64
        assert random.bits(key, (2,), dtype=np.uint64).dtype == np.uint64
    finally:
        absjit.config.update("enable_x64", False)


def test_bad_input():
    key = random.PRNGKey(0)
    with pytest.raises(TypeError, match="uint32\\[2\\]"):
        random.normal(np.zeros(3, np.float32), (2,))
    with pytest.raises(TypeError, match="PRNG key is a typed key .* or a uint32"):
        random.uniform(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="vmap"):
        random.uniform(random.split(key, 3))
    with pytest.raises(TypeError, match="integer"):
        random.PRNGKey(1.5)
    with pytest.raises(TypeError, match="integer"):
        random.PRNGKey(jnp.float32(1.0))
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        random.choice(key, 3, (4,), replace=False)
    with pytest.raises(ValueError, match="negative dimension"):
        random.normal(key, (2, -1))
    with pytest.raises(ValueError, match="float dtype"):
        random.uniform(key, (2,), dtype=np.int32)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        random.choice(key, 3, (2,), p=np.ones(4, np.float32))


def test_unnormalised_p_is_normalised_and_empty_range_gives_minval():
    key = random.PRNGKey(5)
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    np.testing.assert_array_equal(np.asarray(random.choice(key, 4, (50,), p=p * 10)),
                                  REF["choice_p"])
    assert np.all(np.asarray(random.randint(key, (10,), 5, 2)) == 5)


def _ks(samples, cdf):
    from scipy import stats
    return stats.kstest(samples, cdf).pvalue


def test_rejection_samplers_stage_under_jit():
    f = absjit.jit(lambda k: (random.gamma(k, 0.7, (50,)), random.poisson(k, 20.0, (50,))),
                   backend="interpret")
    g, p = f(random.PRNGKey(1))
    np.testing.assert_array_equal(np.asarray(g), np.asarray(random.gamma(random.PRNGKey(1),
                                                                         0.7, (50,))))
    np.testing.assert_array_equal(np.asarray(p), np.asarray(random.poisson(random.PRNGKey(1),
                                                                           20.0, (50,))))
    jax = None
    try:
        import jax
    except ImportError:
        pass
    if jax is not None:   # most draws follow JAX's exact path
        ours = np.asarray(random.gamma(random.PRNGKey(9), 2.5, (1000,)))
        theirs = np.asarray(jax.random.gamma(jax.random.PRNGKey(9), 2.5, (1000,)))
        assert np.mean(np.abs(ours - theirs) <= 1e-5 * np.abs(theirs)) > 0.8


def test_small_alpha_gamma_and_inverse_cdf_samplers_are_finite():
    # Their laws are tested at 1e5 samples in test_random_stats.py.
    key = random.PRNGKey(9)
    g = np.asarray(random.gamma(key, 0.3, (2000,)))
    assert np.all(g >= 0) and abs(g.mean() - 0.3) < 0.05
    pts = np.asarray(random.ball(key, 3, shape=(1000,)))
    assert pts.shape == (1000, 3) and np.all(np.linalg.norm(pts, axis=-1) <= 1)
    assert np.all(np.asarray(random.pareto(key, 3.0, (100,))) >= 1)


def test_multivariate_normal_covariance():
    cov = np.array([[2.0, 0.6], [0.6, 1.0]], np.float32)
    x = np.asarray(random.multivariate_normal(random.PRNGKey(2), np.array([1.0, -1.0]), cov,
                                              (40_000,)))
    np.testing.assert_allclose(x.mean(0), [1.0, -1.0], atol=0.03)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.05)


def test_traces_to_uint32_ops():
    text = str(absjit.make_jaxpr(lambda k: random.uniform(k, (3,)))(random.PRNGKey(0)))
    assert "shift_right_logical" in text and "; a:u32[2]. let" in text


@pytest.mark.parametrize("n,m,shape", [(3, None, ()), (4, 2, (2,)), (2, 5, ())])
def test_orthogonal(n, m, shape):
    q = np.asarray(random.orthogonal(random.PRNGKey(1), n, shape, m=m))
    rows, cols = (n, n) if m is None else (n, m)
    assert q.shape == shape + (rows, cols)
    small = min(rows, cols)
    gram = q.swapaxes(-1, -2) @ q if rows >= cols else q @ q.swapaxes(-1, -2)
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(small), gram.shape), atol=1e-5)
    try:
        import jax
    except ImportError:
        return
    ref = np.asarray(jax.random.orthogonal(jax.random.PRNGKey(1), n, shape, m=m))
    np.testing.assert_allclose(q, ref, atol=1e-5)


def test_gamma_compiles_on_cpu_and_matches_its_distribution():
    # The rejection loops compile in seconds on the cpu backend (the hash is one
    # primitive there); the compiled draws follow Gamma(a) and mostly equal the eager ones.
    from scipy import stats
    key = random.PRNGKey(21)
    g = np.asarray(absjit.jit(lambda k: random.gamma(k, 1.7, (20_000,)))(key))
    assert _ks(g, stats.gamma(1.7).cdf) > 1e-3
    eager = np.asarray(random.gamma(key, 1.7, (20_000,)))
    assert np.mean(np.abs(g - eager) <= 1e-5 * eager) > 0.99
