import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import absjit
import absjit.numpy as jnp
from absjit import random
from absjit.nn import initializers as init
from tests.checks import jax

KEY = random.PRNGKey(0)
SHAPE = (256, 128)


def test_erfinv_polynomial_matches_scipy():
    u = np.linspace(-0.9999, 0.9999, 4001).astype(np.float32)
    got = np.asarray(init._erfinv(jnp.asarray(u)))
    np.testing.assert_allclose(got, sp.erfinv(u.astype(np.float64)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [None, jnp.float32, jnp.float16])
def test_constant_initializers(dtype):
    expected = np.dtype(dtype or np.float32)
    for fn, value in [(init.zeros, 0.0), (init.ones, 1.0), (init.constant(-2.5), -2.5)]:
        w = fn(KEY, (2, 3), dtype) if dtype is not None else fn(KEY, (2, 3))
        assert w.shape == (2, 3) and w.dtype == expected
        np.testing.assert_array_equal(np.asarray(w), np.full((2, 3), value, expected))


def test_normal_uniform_truncated():
    w = np.asarray(init.normal(0.5)(KEY, SHAPE), np.float64)
    assert abs(w.mean()) < 0.01 and abs(w.std() - 0.5) < 0.01
    u = np.asarray(init.uniform(2.0)(KEY, SHAPE), np.float64)
    assert u.min() >= 0 and u.max() < 2.0 and abs(u.mean() - 1.0) < 0.02
    t = np.asarray(init.truncated_normal(3.0)(KEY, SHAPE), np.float64)
    assert np.abs(t).max() <= 6.0
    # a standard normal cut at +-2 has standard deviation 0.8796...
    assert abs(t.std() - 3.0 * 0.87962566) < 0.03
    # the shape of the distribution: Kolmogorov-Smirnov against the truncated normal
    assert st.kstest(t.ravel()[:4000] / 3.0, st.truncnorm(-2, 2).cdf).pvalue > 1e-3
    t2 = np.asarray(init.truncated_normal(1.0, lower=-1.0, upper=0.5)(KEY, (5000,)))
    assert t2.min() >= -1.0 and t2.max() <= 0.5
    assert st.kstest(t2, st.truncnorm(-1, 0.5).cdf).pvalue > 1e-3


@pytest.mark.parametrize("name, scale, mode, dist", [
    ("glorot_uniform", 1.0, "fan_avg", "uniform"),
    ("glorot_normal", 1.0, "fan_avg", "truncated_normal"),
    ("xavier_uniform", 1.0, "fan_avg", "uniform"),
    ("he_uniform", 2.0, "fan_in", "uniform"),
    ("he_normal", 2.0, "fan_in", "truncated_normal"),
    ("kaiming_normal", 2.0, "fan_in", "truncated_normal"),
    ("lecun_uniform", 1.0, "fan_in", "uniform"),
    ("lecun_normal", 1.0, "fan_in", "truncated_normal"),
])
def test_variance_scaling_family(name, scale, mode, dist):
    fan_in, fan_out = SHAPE
    n = {"fan_in": fan_in, "fan_avg": (fan_in + fan_out) / 2}[mode]
    w = getattr(init, name)()(KEY, SHAPE)
    assert w.shape == SHAPE and w.dtype == np.float32
    w = np.asarray(w, np.float64)
    std = math.sqrt(scale / n)
    assert abs(w.mean()) < 0.05 * std
    assert abs(w.std() / std - 1) < 0.03
    if dist == "uniform":
        assert np.abs(w).max() <= math.sqrt(3) * std * (1 + 1e-6)
    else:
        assert np.abs(w).max() <= 2 * std / 0.87962566 * (1 + 1e-6)
    if jax is not None:  # JAX's initializer has the same spread (not the same stream)
        ref = np.asarray(getattr(jax.nn.initializers, name)()(jax.random.PRNGKey(0), SHAPE))
        assert abs(w.std() / ref.std() - 1) < 0.03


def test_variance_scaling_receptive_field_and_modes():
    shape = (3, 3, 16, 32)  # HWIO conv kernel: fan_in = 9 * 16, fan_out = 9 * 32
    w = np.asarray(init.variance_scaling(1.0, "fan_out", "normal")(KEY, shape), np.float64)
    assert abs(w.std() / math.sqrt(1 / (9 * 32)) - 1) < 0.05
    w = np.asarray(init.variance_scaling(1.0, "fan_geo_avg", "normal")(KEY, shape), np.float64)
    assert abs(w.std() / math.sqrt(1 / (9 * math.sqrt(16 * 32))) - 1) < 0.05
    w = init.variance_scaling(1.0, "fan_in", "uniform", dtype=jnp.float16)(KEY, (8, 8))
    assert w.dtype == np.float16


def test_initializers_trace_under_jit():
    # (the cpu backend's compile of the threefry rounds is tested with absjit.random)
    for backend, make in [("interpret", init.lecun_uniform), ("interpret", init.he_normal)]:
        f = absjit.jit(lambda k: make()(k, (4, 5)), backend=backend)
        np.testing.assert_allclose(np.asarray(f(KEY)), np.asarray(make()(KEY, (4, 5))),
                                   rtol=1e-6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode"):
        init.variance_scaling(1.0, "fan_bad", "normal")
    with pytest.raises(ValueError, match="distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="at least 2D"):
        init.glorot_normal()(KEY, (5,))
    with pytest.raises(TypeError, match="floating"):
        init.normal()(KEY, (2,), jnp.int32)
    with pytest.raises(ValueError, match="lower < upper"):
        init.truncated_normal(lower=1.0, upper=-1.0)


@pytest.mark.parametrize("shape,axis", [((4, 6), -1), ((6, 4), -1), ((5, 2, 3), 0)])
def test_orthogonal(shape, axis):
    from absjit import random
    q = np.asarray(init.orthogonal(scale=2.0, column_axis=axis)(
        random.PRNGKey(3), shape))
    assert q.shape == shape and q.dtype == np.float32
    m = np.moveaxis(q, axis, -1).reshape(-1, shape[axis]) / 2.0
    small = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(small, np.eye(small.shape[0]), atol=1e-5)


def test_orthogonal_rejects_vectors():
    from absjit import random
    with pytest.raises(ValueError, match="2-D"):
        init.orthogonal()(random.PRNGKey(0), (5,))
