import numpy as np
import pytest

import absjit
from absjit import lax
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads

RNG = np.random.default_rng(0)


def _np_conv_transpose_1d(x, w, stride, pads):
    """NHC x HIO: dilate the input by the stride, pad, then correlate."""
    n, h, c = x.shape
    dil = np.zeros((n, (h - 1) * stride + 1, c), x.dtype)
    dil[:, ::stride] = x
    lo, hi = pads
    full = np.pad(dil, ((0, 0), (lo, hi), (0, 0)))
    k = w.shape[0]
    out_h = full.shape[1] - k + 1
    return np.stack([np.einsum("nkc,kco->no", full[:, i:i + k], w) for i in range(out_h)], 1)


@pytest.mark.parametrize("stride, padding, pads", [(1, "VALID", (2, 2)), (2, "SAME", (2, 1)),
                                                   (2, ((1, 0),), (1, 0))])
def test_conv_transpose_1d_against_numpy(stride, padding, pads, mode):
    x = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 4)).astype(np.float32)
    out = mode(lambda a, b: lax.conv_transpose(a, b, (stride,), padding))(x, w)
    assert_close(out, _np_conv_transpose_1d(x, w, stride, pads).astype(np.float32),
                 rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(jax is None, reason="needs JAX")
@pytest.mark.parametrize("dn", [None, ("NCHW", "OIHW", "NCHW")])
@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1))])
@pytest.mark.parametrize("transpose_kernel", [False, True])
def test_conv_transpose_2d_matches_jax(dn, padding, transpose_kernel):
    if dn is None:
        x = RNG.standard_normal((2, 5, 4, 3)).astype(np.float32)
        w = RNG.standard_normal((3, 2, 3, 4) if not transpose_kernel else (3, 2, 4, 3))
    else:
        x = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
        w = RNG.standard_normal((4, 3, 3, 2) if not transpose_kernel else (3, 4, 3, 2))
    w = w.astype(np.float32)
    out = lax.conv_transpose(x, w, (2, 1), padding, dimension_numbers=dn,
                             transpose_kernel=transpose_kernel)
    ref = jax.lax.conv_transpose(x, w, (2, 1), padding, dimension_numbers=dn,
                                 transpose_kernel=transpose_kernel)
    assert out.shape == ref.shape
    assert_close(out, np.asarray(ref), rtol=1e-4, atol=1e-4)


def test_conv_transpose_gradients_and_errors():
    x = RNG.standard_normal((1, 3, 2))
    w = RNG.standard_normal((2, 2, 2))
    check_grads(lambda a, b: lax.conv_transpose(a, b, (2,), "SAME"), (x, w), order=1)
    with pytest.raises(ValueError, match="padding"):
        lax.conv_transpose(x, w, (2,), "FULL")
    with pytest.raises(TypeError, match="strides"):
        lax.conv_transpose(x, w, (2, 2), "SAME")
    with pytest.raises(TypeError, match="rank"):
        lax.conv_transpose(x, w[0], (2,), "SAME")
    assert absjit.eval_shape(lambda a, b: lax.conv_transpose(a, b, (3,), "VALID"), x, w
                             ).shape == (1, 9, 2)  # in * stride + max(k - stride, 0)
