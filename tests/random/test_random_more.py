"""absjit.random's composed samplers (rayleigh, maxwell, double_sided_maxwell, wald, f,
geometric, generalized_normal, triangular, binomial, multinomial) and clone/key_dtype:
JAX's draws for the same key where the parts are exact, each law by a goodness-of-fit
test (as tests/random/test_random_stats.py: p-value above 1e-4 at fixed seeds), every mode,
vmap over keys, dtypes and bad input."""
import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import random

from tests.checks import jax

stats = pytest.importorskip("scipy.stats")

N = 100_000
ALPHA = 1e-4

# name -> (absjit/jax call taking (random module, key), how close to JAX's draws)
# "exact": every bit; "ulp": log/sqrt may differ by an ulp, so almost all draws equal
# and all within a few ulps; "gamma": built on gamma, whose retried draws differ.
SAMPLERS = {
    "geometric": (lambda r, k: r.geometric(k, 0.3, (2000,)), "exact"),
    "triangular": (lambda r, k: r.triangular(k, -1.0, 0.5, 3.0, (2000,)), "exact"),
    "rayleigh": (lambda r, k: r.rayleigh(k, 2.0, (2000,)), "ulp"),
    "maxwell": (lambda r, k: r.maxwell(k, (2000,)), "ulp"),
    "double_sided_maxwell": (lambda r, k: r.double_sided_maxwell(k, 0.5, 2.0, (2000,)), "ulp"),
    "double_sided_maxwell_params": (lambda r, k: r.double_sided_maxwell(
        k, np.array([0.0, 1.0, -2.0], np.float32), 2.0, (400,)), "ulp"),
    "wald": (lambda r, k: r.wald(k, 1.5, (2000,)), "ulp"),
    "f": (lambda r, k: r.f(k, 3.0, 5.0, (2000,)), "gamma"),
    "generalized_normal": (lambda r, k: r.generalized_normal(k, 1.5, (2000,)), "gamma"),
}


def _close_to_jax(name, got, want, kind):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, name
    if kind == "exact":
        np.testing.assert_array_equal(got, want, err_msg=name)
    elif kind == "ulp":
        assert np.mean(got == want) > 0.5, name
        np.testing.assert_allclose(got, want, rtol=2e-5, err_msg=name)
    else:
        assert np.mean(got == want) > 0.2, name
        assert np.mean(np.isclose(got, want, rtol=1e-5)) > 0.5, name


@pytest.mark.skipif(jax is None, reason="JAX not installed")
def test_draws_follow_jax_for_the_same_key():
    names = sorted(SAMPLERS)  # one JAX program for all of them: one XLA compile
    want = jax.jit(lambda k: [SAMPLERS[n][0](jax.random, k) for n in names])(jax.random.key(3))
    for name, w in zip(names, want):
        call, kind = SAMPLERS[name]
        _close_to_jax(name, call(random, random.key(3)), w, kind)


_CHEAP = ["double_sided_maxwell", "geometric", "maxwell", "rayleigh", "triangular", "wald"]


def test_every_mode_gives_the_eager_draws(mode):
    # One program for the samplers without gamma draws (those compile elsewhere) and
    # binomial: the cpu backend compiles it once.
    def prog(k):
        return tuple(SAMPLERS[name][0](random, k)[:50] for name in _CHEAP) + (
            random.binomial(k, 20.0, 0.3, (50,)),)
    eager = prog(random.key(5))
    got = mode(prog)(random.key(5))
    for name, a, b in zip(_CHEAP + ["binomial"], got, eager):
        if SAMPLERS.get(name, (None, "exact"))[1] == "exact":
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)
        else:  # a compiled log/sqrt may round differently
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, err_msg=name)


def test_gamma_based_and_multinomial_staged():
    # Staged and run by the reference interpreter (the cpu backend's compile of these
    # loops takes ~15 s; they use only primitives the other tests compile).
    def prog(k):
        return (random.f(k, 3.0, 5.0, (50,)), random.generalized_normal(k, 1.5, (50,)),
                random.multinomial(k, 10.0, jnp.array([0.2, 0.3, 0.5]), shape=(4, 3)))
    eager = prog(random.key(5))
    got = absjit.jit(prog, backend="interpret")(random.key(5))
    for a, b in zip(got, eager):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5)
    np.testing.assert_array_equal(np.asarray(got[2]).sum(-1), 10)


def _ks(x, cdf):
    x = np.asarray(x, np.float64).ravel()
    assert np.all(np.isfinite(x))
    p = stats.kstest(x, cdf).pvalue
    assert p > ALPHA, f"KS p-value {p:.2e}"


def _dsm_cdf(x, loc=0.5, scale=2.0):
    m = stats.maxwell(scale=scale)
    z = np.asarray(x) - loc
    return np.where(z >= 0, 0.5 + 0.5 * m.cdf(z), 0.5 - 0.5 * m.cdf(-z))


CONTINUOUS = {
    "rayleigh": (lambda k: random.rayleigh(k, 2.0, (N,)), stats.rayleigh(scale=2.0).cdf),
    "maxwell": (lambda k: random.maxwell(k, (N,)), stats.maxwell().cdf),
    "double_sided_maxwell": (lambda k: random.double_sided_maxwell(k, 0.5, 2.0, (N,)),
                             _dsm_cdf),
    "wald": (lambda k: random.wald(k, 1.5, (N,)), stats.invgauss(1.5).cdf),
    "f": (lambda k: random.f(k, 3.0, 7.0, (N,)), stats.f(3.0, 7.0).cdf),
    "generalized_normal": (lambda k: random.generalized_normal(k, 1.5, (N,)),
                           stats.gennorm(1.5).cdf),
    "generalized_normal_small_p": (lambda k: random.generalized_normal(k, 0.6, (N,)),
                                   stats.gennorm(0.6).cdf),
    "triangular": (lambda k: random.triangular(k, -1.0, 0.5, 3.0, (N,)),
                   stats.triang(0.375, loc=-1.0, scale=4.0).cdf),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_laws(name):
    sample, cdf = CONTINUOUS[name]
    _ks(sample(random.key(2000 + sorted(CONTINUOUS).index(name))), cdf)


def _chi2(counts, probs):
    counts, probs = np.asarray(counts, np.float64), np.asarray(probs, np.float64)
    expected = probs * counts.sum()
    keep = expected >= 5  # pool the sparse tail into one cell
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    p = stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue
    assert p > ALPHA, f"chi-square p-value {p:.2e}"


@pytest.mark.parametrize("n,p", [(10, 0.3), (7, 0.9), (200, 0.4), (1000, 0.97), (3, 0.5)])
def test_binomial_law(n, p):
    x = np.asarray(random.binomial(random.key(int(n * 100 * p)), n, p, (N,)))
    assert x.dtype == np.float32 and np.all(x == np.round(x))
    assert x.min() >= 0 and x.max() <= n
    _chi2(np.bincount(x.astype(np.int64), minlength=n + 1), stats.binom(n, p).pmf(np.arange(n + 1)))


def test_geometric_law():
    x = np.asarray(random.geometric(random.key(31), 0.2, (N,)))
    assert x.min() >= 1
    m = int(x.max())
    _chi2(np.bincount(x, minlength=m + 1)[1:], stats.geom(0.2).pmf(np.arange(1, m + 1)))


def test_multinomial_law_and_sums():
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    c = np.asarray(random.multinomial(random.key(41), 12, p * 5, shape=(N // 4, 4)))
    assert c.shape == (N // 4, 4) and c.dtype == np.float32
    np.testing.assert_array_equal(c.sum(-1), 12)
    for i in range(4):  # each marginal is Binomial(12, p_i)
        _chi2(np.bincount(c[:, i].astype(np.int64), minlength=13),
              stats.binom(12, p[i]).pmf(np.arange(13)))
    # a pair's sum is Binomial(12, p_0 + p_3): checks the joint law, not only marginals
    _chi2(np.bincount((c[:, 0] + c[:, 3]).astype(np.int64), minlength=13),
          stats.binom(12, p[0] + p[3]).pmf(np.arange(13)))


def test_binomial_and_multinomial_edges():
    x = random.binomial(random.key(0), np.array([0.0, 10, -1, 5, 8, 8]),
                        np.array([0.5, 1.0, 0.5, np.nan, 0.0, 1.5]))
    np.testing.assert_array_equal(np.asarray(x), [0, 10, np.nan, np.nan, 0, np.nan])
    c = random.multinomial(random.key(1), np.array([5.0, 9.0]), np.array([0.0, 1.0, 0.0]),
                           dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(c), [[0, 5, 0], [0, 9, 0]])
    assert random.binomial(random.key(0), 5, 0.5, (0, 3)).shape == (0, 3)


def test_shapes_dtypes_and_vmap():
    k = random.key(0)
    assert random.rayleigh(k, np.ones((2, 3), np.float32)).shape == (2, 3)
    assert random.wald(k, 1.0, (4,), dtype=np.float16).dtype == np.float16
    assert random.geometric(k, 0.5, (3,), dtype=np.int16).dtype == np.int16
    assert random.geometric(k, 1, (3,)).dtype == np.int32
    assert random.double_sided_maxwell(k, np.zeros(3), 1.0).shape == (3,)
    assert random.multinomial(k, np.array([3.0, 4.0]), np.ones(3)).shape == (2, 3)
    keys = random.split(k, 3)
    batched = absjit.vmap(lambda kk: random.triangular(kk, 0.0, 1.0, 2.0, (4,)))(keys)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(batched[i]),
                                      np.asarray(random.triangular(keys[i], 0.0, 1.0, 2.0, (4,))))
    b = absjit.vmap(lambda kk: random.binomial(kk, 30.0, 0.5, (5,)))(keys)
    assert b.shape == (3, 5) and np.all(np.asarray(b) <= 30)
    assert random.clone(k) is k
    assert random.key_dtype() == k.dtype
    if jax is not None:
        assert str(random.key_dtype()) == str(jax.random.key_dtype())


def test_bad_input():
    k = random.key(0)
    with pytest.raises(ValueError, match="int dtype"):
        random.geometric(k, 0.3, (3,), dtype=np.float32)
    with pytest.raises(ValueError, match="float"):
        random.rayleigh(k, 1.0, (3,), dtype=np.int32)
    with pytest.raises(ValueError, match="broadcast"):
        random.wald(k, np.ones(3), (4,))
    with pytest.raises(ValueError, match="categories"):
        random.multinomial(k, 10, np.ones(3), shape=(4,))
    with pytest.raises(ValueError, match="threefry"):
        random.key_dtype("rbg")
    with pytest.raises(TypeError):
        random.maxwell(1.0, (3,))
