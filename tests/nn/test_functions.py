import numpy as np
import pytest
import scipy.special as sp

import absjit
import absjit.numpy as jnp
from absjit import nn
from tests.checks import assert_close, check_against_numpy, jax
from tests.grad_checks import check_grads

_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _np_softplus(x):
    return np.logaddexp(x, 0)


def _np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _np_gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _np_hs(x):
    return np.clip(x + 3, 0, 6) / 6


# name -> NumPy reference
REFERENCE = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "gelu": _np_gelu,
    "silu": lambda x: x * sp.expit(x),
    "swish": lambda x: x * sp.expit(x),
    "sigmoid": sp.expit,
    "log_sigmoid": lambda x: -_np_softplus(-x),
    "softplus": _np_softplus,
    "elu": _np_elu,
    "selu": lambda x: _SELU_S * _np_elu(x, _SELU_A),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": _np_hs,
    "hard_silu": lambda x: x * _np_hs(x),
    "hard_swish": lambda x: x * _np_hs(x),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "identity": lambda x: x,
    "tanh": np.tanh,
    "glu": lambda x: x[..., :2] * sp.expit(x[..., 2:]),
    "softmax": lambda x: sp.softmax(x, axis=-1),
    "log_softmax": lambda x: sp.log_softmax(x, axis=-1),
    "standardize": lambda x: (x - x.mean(-1, keepdims=True))
    / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
}


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_activation_values_and_dtypes(name, mode, rng):
    x = (rng.standard_normal((3, 4)) * 3).astype(np.float32)
    fn = getattr(nn, name)
    jax_fn = getattr(jax.nn, name) if jax is not None else None
    check_against_numpy(fn, REFERENCE[name], x, transform=mode, jax_fn=jax_fn,
                        rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["relu", "gelu", "silu", "sigmoid", "log_sigmoid", "softplus",
                                  "elu", "selu", "celu", "leaky_relu", "softmax",
                                  "log_softmax", "glu", "standardize", "soft_sign"])
def test_activation_gradients(name, rng):
    x = rng.standard_normal((2, 4)) + 0.1  # away from the kinks
    check_grads(getattr(nn, name), (x,), order=1)


@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("name", ["relu", "relu6", "hard_tanh", "leaky_relu", "elu"])
def test_derivative_at_kinks_matches_jax(name):
    x = np.array([-1.0, 0.0, 1.0, 6.0], np.float32)
    g = absjit.vmap(absjit.grad(getattr(nn, name)))(x)
    expected = jax.vmap(jax.grad(getattr(jax.nn, name)))(x)
    assert_close(g, np.asarray(expected))


@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("x", [np.int32(3), 2.0, np.array([1, -2], np.int32)])
@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "hard_tanh", "celu"])
def test_scalar_and_integer_dtypes_match_jax(name, x):
    out = getattr(nn, name)(x)
    ref = getattr(jax.nn, name)(x)
    assert out.dtype == ref.dtype and out.weak_type == ref.weak_type


def test_softmax_is_stable_and_masked(mode):
    x = np.array([[1000.0, 1001.0, -1000.0], [1.0, 2.0, 3.0]], np.float32)
    where = np.array([[True, True, False], [True, False, True]])
    out, masked, lsm = mode(lambda a, w: (nn.softmax(a), nn.softmax(a, where=w),
                                          nn.log_softmax(a, axis=-1, where=w)))(x, where)
    assert np.isfinite(np.asarray(out)).all()
    assert_close(out, sp.softmax(x.astype(np.float64), axis=-1).astype(np.float32))
    expected = np.where(where, sp.softmax(np.where(where, x, -np.inf), axis=-1), 0)
    assert_close(masked, expected.astype(np.float32))
    expected = np.where(where, sp.log_softmax(np.where(where, x, -np.inf), axis=-1), -np.inf)
    assert_close(lsm, expected.astype(np.float32))
    assert_close(nn.softmax(x, axis=None), sp.softmax(x.astype(np.float64)).astype(np.float32))


def test_softmax_gradient_finite_for_large_inputs():
    g = absjit.grad(lambda x: nn.log_softmax(x)[0])(jnp.array([1000.0, 0.0]))
    assert np.isfinite(np.asarray(g)).all()
    assert_close(g, np.array([0.0, 0.0], np.float32), atol=1e-6)


def test_one_hot(mode):
    x = np.array([[0, 2], [-1, 3]], np.int32)
    out = mode(lambda a: nn.one_hot(a, 3))(x)
    assert_close(out, (x[..., None] == np.arange(3)).astype(np.float32))
    out0 = nn.one_hot(x, 3, axis=0, dtype=jnp.int32)
    assert_close(out0, np.moveaxis((x[..., None] == np.arange(3)), -1, 0).astype(np.int32))


@pytest.mark.parametrize("bad", [3.5, "3", np.float32(3.0)])
def test_one_hot_rejects_non_integer_num_classes(bad):
    with pytest.raises(TypeError, match="num_classes"):
        nn.one_hot(jnp.arange(3), bad)
    with pytest.raises(ValueError, match="non-negative"):
        nn.one_hot(jnp.arange(3), -1)


def test_glu_rejects_odd_axis():
    with pytest.raises(ValueError, match="even"):
        nn.glu(jnp.ones(3))


def test_gelu_exact(mode):
    x = np.linspace(-8, 8, 33).astype(np.float32)
    want = x * sp.ndtr(x.astype(np.float64))
    assert_close(mode(lambda v: nn.gelu(v, approximate=False))(x), want.astype(np.float32),
                 rtol=1e-6, atol=1e-6)
    check_grads(lambda v: nn.gelu(v, approximate=False), (x[::4] / 2,), order=1)


def test_logsumexp_is_scipy_special_logsumexp():
    from absjit.scipy.special import logsumexp
    assert nn.logsumexp is logsumexp


def test_standardize_with_given_statistics_and_where():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = nn.standardize(x, axis=0, mean=1.0, variance=4.0)
    assert_close(out, ((x - 1.0) / np.sqrt(4.0 + 1e-5)).astype(np.float32))
    where = np.array([[True, True, False], [True, True, True]])
    out = nn.standardize(x, where=where)
    m = np.array([[0.5], [4.0]])
    v = np.array([[0.25], [2 / 3]])
    assert_close(out, ((x - m) / np.sqrt(v + 1e-5)).astype(np.float32), rtol=1e-5)
