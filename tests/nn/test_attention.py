"""nn.dot_product_attention against a NumPy reference and JAX (every mask option,
grouped-query heads, rank-3 inputs, float16), in every mode, under grad and vmap, and
its errors; the activations mish, squareplus, log1mexp, logmeanexp, sparse_plus and
sparse_sigmoid; initializers.delta_orthogonal and Initializer."""
import numpy as np
import pytest
import scipy.special as sp

import absjit
import absjit.numpy as jnp
from absjit import nn, random
from absjit.nn import initializers
from tests.checks import assert_close, check_against_numpy, jax
from tests.grad_checks import check_grads

B, T, S, N, K, H = 2, 3, 5, 4, 2, 8


def _inputs(dtype=np.float32, seed=0):
    r = np.random.default_rng(seed)
    q = r.standard_normal((B, T, N, H)).astype(dtype)
    k = r.standard_normal((B, S, K, H)).astype(dtype)
    v = r.standard_normal((B, S, K, H)).astype(dtype)
    return q, k, v


def _np_attention(q, k, v, bias=None, mask=None, scale=None, is_causal=False,
                  q_len=None, kv_len=None, window=None):
    """Attention written out with a loop over heads (float64)."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    g = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, g, axis=2), np.repeat(v, g, axis=2)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    t, s = np.arange(q.shape[1])[:, None], np.arange(k.shape[1])[None, :]
    if mask is not None:
        keep &= mask
    if is_causal:
        keep &= s <= t
    if window is not None:
        keep &= (s >= t - window[0]) & (s <= t + window[1])
    if q_len is not None:
        keep &= (np.arange(q.shape[1])[None, :] < q_len[:, None])[:, None, :, None]
    if kv_len is not None:
        keep &= (np.arange(k.shape[1])[None, :] < kv_len[:, None])[:, None, None, :]
    logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
    out = np.einsum("bnts,bsnh->btnh", sp.softmax(logits, axis=-1), v)
    if q_len is not None:
        out = out * (np.arange(q.shape[1])[None, :] < q_len[:, None])[:, :, None, None]
    return out.astype(np.float32)


_R = np.random.default_rng(1)
_BIAS = _R.standard_normal((N, T, S)).astype(np.float32)
_MASK = _R.random((B, 1, T, S)) > 0.3
_QL, _KVL = np.array([1, 3], np.int32), np.array([2, 0], np.int32)
OPTIONS = {
    "plain": {},
    "bias": dict(bias=_BIAS),
    "mask": dict(mask=_MASK),
    "causal": dict(is_causal=True),
    "scale_bias_mask": dict(scale=0.3, bias=_BIAS, mask=_MASK),
    "seq_lengths": dict(query_seq_lengths=_QL, key_value_seq_lengths=_KVL),
    "window": dict(local_window_size=1),
    "window_causal": dict(local_window_size=(2, 0), is_causal=True),
}
_NP_ARGS = {"query_seq_lengths": "q_len", "key_value_seq_lengths": "kv_len",
            "local_window_size": "window"}


def _np_kwargs(opts):
    out = {}
    for name, val in opts.items():
        if name == "local_window_size":
            val = (val, val) if isinstance(val, int) else val
        out[_NP_ARGS.get(name, name)] = val
    return out


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_matches_reference_and_jax(name):
    q, k, v = _inputs()
    opts = OPTIONS[name]
    out = nn.dot_product_attention(q, k, v, **opts)
    assert_close(out, _np_attention(q, k, v, **_np_kwargs(opts)), rtol=1e-5, atol=1e-6)
    if jax is not None:
        assert_close(out, np.asarray(jax.nn.dot_product_attention(q, k, v, **opts)),
                     rtol=1e-5, atol=1e-6)


def test_every_mode(mode):
    # One call with every option, so the cpu backend compiles one program.
    q, k, v = _inputs()

    def prog(q, k, v, bias, mask, ql, kvl):
        return nn.dot_product_attention(q, k, v, bias, mask, is_causal=True,
                                        query_seq_lengths=ql, key_value_seq_lengths=kvl,
                                        local_window_size=(1, 2))
    got = mode(prog)(q, k, v, _BIAS, _MASK, _QL, np.array([4, 2], np.int32))
    want = _np_attention(q, k, v, _BIAS, _MASK, is_causal=True, q_len=_QL,
                         kv_len=np.array([4, 2]), window=(1, 2))
    assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_rank3_inputs():
    q, k, v = _inputs()
    out = nn.dot_product_attention(q[0], k[0], v[0], is_causal=True)
    assert_close(out, _np_attention(q[:1], k[:1], v[:1], is_causal=True)[0],
                 rtol=1e-5, atol=1e-6)


def test_float16_and_grad_and_vmap():
    q, k, v = _inputs()
    h = [a.astype(np.float16) for a in (q, k, v)]
    out = nn.dot_product_attention(*h)
    assert out.dtype == np.float16
    assert_close(out.astype(np.float32), _np_attention(q, k, v), rtol=1e-2, atol=1e-2)
    small = [a[:1, :2, :2, :3].astype(np.float64) for a in (q, k, v)]
    small[1], small[2] = small[1][:, :, :1], small[2][:, :, :1]
    absjit.config.update("enable_x64", True)
    check_grads(lambda a, b, c: nn.dot_product_attention(a, b, c, is_causal=True),
                small, order=1)
    absjit.config.update("enable_x64", False)
    batched = absjit.vmap(lambda a: nn.dot_product_attention(a, a, a))(q)
    assert_close(batched, np.stack([_np_attention(x[None], x[None], x[None])[0] for x in q]),
                 rtol=1e-5, atol=1e-6)
    if jax is not None:
        gq = absjit.grad(lambda a: nn.dot_product_attention(a, k, v, mask=_MASK).sum())(q)
        gj = jax.grad(lambda a: jax.nn.dot_product_attention(a, k, v, mask=_MASK).sum())(q)
        assert_close(gq, np.asarray(gj), rtol=1e-4, atol=1e-5)


def test_attention_errors():
    q, k, v = _inputs()
    with pytest.raises(ValueError, match="value shape"):
        nn.dot_product_attention(q, k, v[..., :6])
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        nn.dot_product_attention(q, np.repeat(k[:, :, :1], 3, 2), np.repeat(v[:, :, :1], 3, 2))
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        nn.dot_product_attention(q, k, v, mask=np.ones((T, S), np.float32))
    with pytest.raises(ValueError, match="Unsupported implementation"):
        nn.dot_product_attention(q, k, v, implementation="foo")
    with pytest.raises(RuntimeError, match="cudnn"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")
    with pytest.raises(ValueError, match="rank 4"):
        nn.dot_product_attention(q[0, 0], k[0, 0], v[0, 0])
    with pytest.raises(ValueError, match="local_window_size"):
        nn.dot_product_attention(q, k, v, local_window_size=-1)
    assert nn.dot_product_attention(q, k, v, implementation="xla").shape == q.shape


# ---------------------------------------------------------------------------
# activations
# ---------------------------------------------------------------------------
def _np_log1mexp(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(-np.expm1(-x))


REFERENCE = {
    "mish": lambda x: x * np.tanh(np.logaddexp(x, 0)),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip(x + 1, 0, 2) / 2,
    "log1mexp": _np_log1mexp,
    "logmeanexp": lambda x: sp.logsumexp(x) - np.log(x.size),
}


def _activation_input(name, rng):
    x = (rng.standard_normal((3, 4)) * 3).astype(np.float32)
    return np.abs(x) + np.float32(1e-3) if name == "log1mexp" else x


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_activation_values_and_dtypes(name, rng):
    jax_fn = getattr(jax.nn, name) if jax is not None else None
    check_against_numpy(getattr(nn, name), REFERENCE[name], _activation_input(name, rng),
                        jax_fn=jax_fn, rtol=1e-5, atol=1e-6)


def test_activations_in_every_mode(mode, rng):
    names = sorted(REFERENCE)
    xs = [_activation_input(name, rng) for name in names]
    got = mode(lambda *a: [getattr(nn, n)(x) for n, x in zip(names, a)])(*xs)
    for name, x, g in zip(names, xs, got):
        assert_close(g, REFERENCE[name](x.astype(np.float64)).astype(np.float32),
                     rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("x", [2.0, np.float16(0.5), np.array([-1.5, 0.0, 0.3, 40.0], np.float32)])
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_scalar_dtypes_and_weak_types_match_jax(name, x):
    out = getattr(nn, name)(x)
    ref = getattr(jax.nn, name)(x)
    assert out.dtype == ref.dtype and out.weak_type == ref.weak_type
    assert_close(out, np.asarray(ref), rtol=1e-3 if out.dtype == np.float16 else 1e-5,
                 atol=1e-6)


def test_log1mexp_edges_and_logmeanexp_options():
    out = np.asarray(nn.log1mexp(np.array([0.0, 1e-8, 0.5, 30.0, -1.0], np.float32)))
    assert out[0] == -np.inf and np.isnan(out[-1])
    np.testing.assert_allclose(out[1:4], [np.log(1e-8), np.log(-np.expm1(-0.5)),
                                          -np.exp(-30.0)], rtol=1e-6)
    assert np.isfinite(np.asarray(absjit.grad(nn.log1mexp)(1e-3)))
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    w = np.array([[True, False], [True, True]])
    assert_close(nn.logmeanexp(x, axis=0, keepdims=True),
                 (sp.logsumexp(x, axis=0, keepdims=True) - np.log(2)).astype(np.float32))
    assert_close(nn.logmeanexp(x, axis=1, where=w),
                 np.array([1.0, sp.logsumexp([3.0, 4.0]) - np.log(2)], np.float32))


@pytest.mark.parametrize("name", ["mish", "squareplus", "log1mexp", "logmeanexp"])
def test_activation_gradients(name, rng):
    x = np.abs(rng.standard_normal((2, 4))) + 0.2
    check_grads(getattr(nn, name), (x,), order=1)


# ---------------------------------------------------------------------------
# initializers
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 2, 4), (4, 4, 2, 3), (2, 3, 5, 3, 3)])
def test_delta_orthogonal(shape):
    w = np.asarray(initializers.delta_orthogonal(2.0)(random.key(0), shape))
    centre = tuple((k - 1) // 2 for k in shape[:-2])
    m = w[centre]
    assert_close(m @ m.T, 4 * np.eye(shape[-2], dtype=np.float32), atol=1e-5)
    w2 = w.copy()
    w2[centre] = 0
    assert not w2.any()
    if jax is not None:
        ref = jax.nn.initializers.delta_orthogonal(2.0)(jax.random.key(0), shape)
        assert_close(w, np.asarray(ref), atol=1e-5)


def test_delta_orthogonal_errors_and_initializer_protocol():
    init = initializers.delta_orthogonal()
    with pytest.raises(ValueError, match="fan_in"):
        init(random.key(0), (3, 4, 2))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init(random.key(0), (2, 2))
    assert init(random.key(0), (1, 2, 2), np.float64).dtype == np.float32  # x64 off
    for f in (init, initializers.zeros, initializers.glorot_normal()):
        assert isinstance(f, initializers.Initializer)
    assert not isinstance(3, initializers.Initializer)
