"""The primitives behind absjit.random's exact streams: ``fma`` (single rounding, eagerly
and compiled), ``threefry2x32`` (Random123's vectors, every output word, batching,
zero tangents), and float32 ``erf_inv``/``normal`` equal to JAX bit for bit."""
from fractions import Fraction

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax, random
from absjit.ops.fma import fma
from absjit.ops.threefry import threefry2x32


def _round_to_f32(q: Fraction) -> np.float32:
    """The float32 nearest to the rational ``q`` (ties to even), exactly."""
    guess = np.float32(float(q))
    cands = {guess, np.nextafter(guess, np.float32(np.inf)),
             np.nextafter(guess, np.float32(-np.inf))}
    best = None
    for c in cands:
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - q)
        key = (d, int(np.array(c).view(np.uint32)) & 1)  # ties: the even one
        if best is None or key < best[0]:
            best = (key, c)
    return best[1]


def _fma_cases():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(3000).astype(np.float32) * np.float32(4.0)
    b = rng.standard_normal(3000).astype(np.float32)
    c = (rng.standard_normal(3000) * 10.0 ** rng.integers(-30, 3, 3000)).astype(np.float32)
    # Where rounding through float64 goes wrong: a*b exactly halfway between two float32
    # values and c far below float64's last bit; and exact cancellation.
    h = np.float32(1 + 2 ** -12)
    a = np.concatenate([a, [h, h, h, np.float32(3.0), np.float32(1e-20)]]).astype(np.float32)
    b = np.concatenate([b, [h, h, -h, np.float32(1 / 3), np.float32(1e-20)]]).astype(np.float32)
    c = np.concatenate([c, [2.0 ** -80, -2.0 ** -80, 2.0 ** -80, -1.0, 1e-45]]).astype(np.float32)
    # Products of values a power of two apart, plus c at every scale: long carries.
    a[:200] = np.float32(1.0) + np.arange(200, dtype=np.float32) * np.float32(2 ** -23)
    b[:200] = np.float32(1.0) - np.arange(200, dtype=np.float32) * np.float32(2 ** -23)
    return a, b, c


def test_fma_rounds_once_eagerly_and_compiled():
    a, b, c = _fma_cases()
    want = np.array([_round_to_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                     for x, y, z in zip(a, b, c)], np.float32)
    eager = np.asarray(fma(a, b, c))
    np.testing.assert_array_equal(eager.view(np.uint32), want.view(np.uint32))
    compiled = np.asarray(absjit.jit(fma)(a, b, c))
    np.testing.assert_array_equal(compiled.view(np.uint32), want.view(np.uint32))
    # The double-rounding case in particular rounds up, away from float64's tie.
    assert eager[-5] == np.float32(1 + 2 ** -11 + 2 ** -23)


def test_fma_rules_and_bad_input():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    g = absjit.grad(lambda a, b: jnp.sum(fma(a, b, np.float32(1))), argnums=(0, 1))(x, x * 2)
    np.testing.assert_allclose(np.asarray(g[0]), x * 2)
    np.testing.assert_allclose(np.asarray(g[1]), x)
    batched = absjit.vmap(lambda a: fma(a, a, np.float32(0.5)))(x.reshape(5, 1))
    np.testing.assert_array_equal(np.asarray(batched).ravel(), np.asarray(fma(x, x, 0.5 + 0 * x)))
    with pytest.raises(TypeError, match="float32"):
        fma(np.ones(2, np.int32), np.ones(2, np.int32), np.ones(2, np.int32))


# Random123's known-answer vectors for Threefry-2x32 with 20 rounds.
KAT = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
       ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
       ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]


@pytest.mark.parametrize("mode", ["eager", "cpu"])
def test_threefry_known_answers_and_words(mode):
    k0 = np.array([k[0][0] for k in KAT], np.uint32)
    k1 = np.array([k[0][1] for k in KAT], np.uint32)
    x0 = np.array([k[1][0] for k in KAT], np.uint32)
    x1 = np.array([k[1][1] for k in KAT], np.uint32)
    y0 = np.array([k[2][0] for k in KAT], np.uint32)
    y1 = np.array([k[2][1] for k in KAT], np.uint32)

    def words(a, b, c, d):
        return tuple(threefry2x32(a, b, c, d, output=o) for o in ("x0", "x1", "xor"))
    f = words if mode == "eager" else absjit.jit(words)
    # The key words vary per element here: operands broadcast like any elementwise op.
    got = [np.asarray(v) for v in f(k0, k1, x0, x1)]
    np.testing.assert_array_equal(got[0], y0)
    np.testing.assert_array_equal(got[1], y1)
    np.testing.assert_array_equal(got[2], y0 ^ y1)


def test_threefry_batches_and_has_zero_tangents():
    keys = random.split(random.PRNGKey(4), 3)
    draws = absjit.vmap(lambda k: random.bits(k, (5,)))(keys)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(draws[i]), np.asarray(random.bits(keys[i], (5,))))
    text = str(absjit.make_jaxpr(lambda k: random.bits(k, (4,)))(random.PRNGKey(0)))
    assert text.count("threefry2x32[output=xor]") == 1
    g = absjit.grad(lambda s: jnp.sum(random.uniform(random.PRNGKey(1), (3,)) * s))(2.0)
    np.testing.assert_allclose(float(g), float(jnp.sum(random.uniform(random.PRNGKey(1), (3,)))),
                               rtol=1e-6)
    with pytest.raises(TypeError, match="uint32"):
        threefry2x32(np.int32(0), np.uint32(0), np.uint32(0), np.uint32(0))


def test_erf_inv_and_normal_equal_jax_bit_for_bit():
    jax = pytest.importorskip("jax")
    x = np.linspace(-1, 1, 20001).astype(np.float32)
    below_one = np.nextafter(np.float32(1), np.float32(0))
    x = np.concatenate([x, below_one * np.array([1, -1], np.float32),
                        np.array([1.5, -2.0, np.nan], np.float32)])
    want = np.asarray(jax.jit(jax.lax.erf_inv)(x))
    for got in (lax.erf_inv(x), absjit.jit(lax.erf_inv)(x)):
        np.testing.assert_array_equal(np.asarray(got), want)
    key = np.asarray(jax.random.PRNGKey(77))
    want = np.asarray(jax.jit(lambda k: jax.random.normal(k, (30001,)))(key))
    for got in (random.normal(key, (30001,)),
                absjit.jit(lambda k: random.normal(k, (30001,)))(key)):
        np.testing.assert_array_equal(np.asarray(got).view(np.uint32), want.view(np.uint32))


def test_log1p_based_samplers_equal_jax_bit_for_bit():
    jax = pytest.importorskip("jax")
    key = np.asarray(jax.random.PRNGKey(5))
    for name in ("exponential", "laplace"):
        want = np.asarray(jax.jit(lambda k: getattr(jax.random, name)(k, (20000,)))(key))
        got = absjit.jit(lambda k: getattr(random, name)(k, (20000,)))(key)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint32), want.view(np.uint32))


def test_uint64_bits_equal_jax():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        want = np.asarray(jax.random.bits(jax.random.PRNGKey(3), (100,), dtype=np.uint64))
    absjit.config.update("enable_x64", True)
    try:
        got = np.asarray(random.bits(random.PRNGKey(3), (100,), dtype=np.uint64))
    finally:
        absjit.config.update("enable_x64", False)
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, want)
