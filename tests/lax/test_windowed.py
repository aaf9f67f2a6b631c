import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import absjit
import absjit.numpy as jnp
from absjit import lax
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads


def _np_reduce_window(x, init, op, dims, strides, pads, base=None, wdil=None):
    """A loop over output positions (the executable spec)."""
    nd = x.ndim
    base = base or (1,) * nd
    wdil = wdil or (1,) * nd
    dil_shape = tuple((d - 1) * b + 1 if d else 0 for d, b in zip(x.shape, base))
    full = np.full(tuple(d + lo + hi for d, (lo, hi) in zip(dil_shape, pads)), init, x.dtype)
    inner = tuple(slice(lo, lo + d, b) for (lo, _), d, b in zip(pads, dil_shape, base))
    full[inner] = x
    eff = tuple((w - 1) * d + 1 for w, d in zip(dims, wdil))
    out_shape = tuple(max(0, (p - e) // s + 1) if p >= e else 0
                      for p, e, s in zip(full.shape, eff, strides))
    out = np.empty(out_shape, x.dtype)
    for idx in np.ndindex(*out_shape):
        window = full[tuple(slice(i * s, i * s + e, d) for i, s, e, d in
                            zip(idx, strides, eff, wdil))]
        out[idx] = op.reduce(window, axis=None, initial=init)
    return out


@pytest.mark.parametrize("name, op, init", [("max", np.maximum, -np.inf),
                                            ("add", np.add, 0.0),
                                            ("min", np.minimum, np.inf)])
@pytest.mark.parametrize("padding", ["VALID", "SAME", ((1, 0), (0, 2))])
def test_reduce_window_against_loop(name, op, init, padding, mode):
    x = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    comp = {"max": lax.max, "add": lax.add, "min": lax.min}[name]
    out = mode(lambda a: lax.reduce_window(a, np.float32(init), comp, (2, 3), (1, 2),
                                           padding))(x)
    pads = padding if not isinstance(padding, str) else lax.padtype_to_pads(
        x.shape, (2, 3), (1, 2), padding)
    assert_close(out, _np_reduce_window(x, np.float32(init), op, (2, 3), (1, 2), pads),
                 rtol=1e-5)
    if jax is not None:
        jc = {"max": jax.lax.max, "add": jax.lax.add, "min": jax.lax.min}[name]
        ref = jax.lax.reduce_window(x, np.float32(init), jc, (2, 3), (1, 2), padding)
        assert out.shape == ref.shape and out.dtype == ref.dtype


def test_reduce_window_dilations_and_ints():
    x = np.arange(35, dtype=np.int32).reshape(5, 7)
    out = lax.reduce_window(x, np.int32(0), lax.add, (2, 2), (2, 1), ((0, 1), (1, 1)),
                            base_dilation=(1, 2), window_dilation=(2, 1))
    assert_close(out, _np_reduce_window(x, np.int32(0), np.add, (2, 2), (2, 1),
                                        ((0, 1), (1, 1)), (1, 2), (2, 1)))
    if jax is not None:
        ref = jax.lax.reduce_window(x, np.int32(0), jax.lax.add, (2, 2), (2, 1),
                                    ((0, 1), (1, 1)), base_dilation=(1, 2),
                                    window_dilation=(2, 1))
        assert_close(out, np.asarray(ref))


def test_reduce_window_gradients_and_vmap():
    x = np.random.default_rng(1).standard_normal((4, 5))
    check_grads(lambda a: lax.reduce_window(a, 0.0, lax.add, (2, 2), (1, 1), "SAME"), (x,),
                order=1)
    check_grads(lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 2), (2, 2), "VALID"),
                (x,), order=1)
    xs = np.random.default_rng(2).standard_normal((3, 4, 5)).astype(np.float32)
    out = absjit.vmap(lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 2), (1, 1),
                                                  "VALID"))(xs)
    assert_close(out, np.stack([_np_reduce_window(a, np.float32(-np.inf), np.maximum, (2, 2),
                                                  (1, 1), ((0, 0), (0, 0))) for a in xs]))


def test_reduce_window_errors():
    x = jnp.ones((3, 3))
    with pytest.raises(TypeError, match="one entry per dimension"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1, 1), "VALID")
    with pytest.raises(ValueError, match="positive"):
        lax.reduce_window(x, 0.0, lax.add, (0, 1), (1, 1), "VALID")


def test_associative_scan_sizes():
    for n in [1, 2, 5, 8, 13]:
        x = np.arange(1, n + 1, dtype=np.float32)
        assert_close(lax.associative_scan(jnp.add, x), np.cumsum(x))
        assert_close(lax.associative_scan(jnp.multiply, x, reverse=True),
                     np.cumprod(x[::-1])[::-1], rtol=1e-5)


def test_associative_scan_under_transforms(mode):
    x = np.arange(1, 5, dtype=np.float32)
    out = mode(lambda a: (lax.associative_scan(jnp.add, a),
                          lax.associative_scan(jnp.maximum, a[::-1], reverse=True)))(x)
    # reverse scan of the reversed array: suffix maxima of x[::-1]
    assert_close(out, (np.cumsum(x), np.maximum.accumulate(x)[::-1]))


def test_associative_scan_pytree_axis_and_grad():
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    a, m = lax.associative_scan(lambda p, q: (p[0] + q[0], jnp.maximum(p[1], q[1])),
                                (x, x), axis=1)
    assert_close(a, np.cumsum(x, axis=1), rtol=1e-5)
    assert_close(m, np.maximum.accumulate(x, axis=1))

    # a linear recurrence h_t = a_t h_{t-1} + b_t, the classic use
    def combine(p, q):
        return (q[0] * p[0], q[0] * p[1] + q[1])
    coef = np.random.default_rng(1).random(7)
    b = np.random.default_rng(2).standard_normal(7)
    h = lax.associative_scan(combine, (jnp.asarray(coef, jnp.float32),
                                       jnp.asarray(b, jnp.float32)))[1]
    ref, acc = [], 0.0
    for c, v in zip(coef, b):
        acc = c * acc + v
        ref.append(acc)
    assert_close(h, np.array(ref, np.float32), rtol=1e-5, atol=1e-6)
    check_grads(lambda v: lax.associative_scan(jnp.multiply, v), (coef + 0.5,), order=1)
    if jax is not None:
        j = jax.lax.associative_scan(jax.numpy.add, x, axis=1)
        assert_close(lax.associative_scan(jnp.add, x, axis=1), np.asarray(j), rtol=1e-5)
    with pytest.raises(ValueError, match="same size"):
        lax.associative_scan(lambda p, q: p, (jnp.ones(3), jnp.ones(4)))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.associative_scan(jnp.add, jnp.ones(3), axis=1)


@settings(max_examples=25)
@given(shape=st.tuples(st.integers(1, 6), st.integers(1, 6)),
       window=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       strides=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       padding=st.sampled_from(["VALID", "SAME"]),
       dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)))
def test_reduce_window_random_geometry(shape, window, strides, padding, dilation):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    eff = tuple((w - 1) * d + 1 for w, d in zip(window, dilation))
    pads = lax.padtype_to_pads(shape, eff, strides, padding)
    out = lax.reduce_window(x, np.float32(-np.inf), lax.max, window, strides, padding,
                            window_dilation=dilation)
    assert_close(out, _np_reduce_window(x, np.float32(-np.inf), np.maximum, window, strides,
                                        pads, wdil=dilation))
    if jax is not None and 0 in out.shape:  # no window fits: JAX gives the same empty shape
        assert out.shape == jax.lax.reduce_window(x, np.float32(-np.inf), jax.lax.max, window,
                                                  strides, padding,
                                                  window_dilation=dilation).shape
