"""absjit.scipy.ndimage.map_coordinates, absjit.scipy.interpolate.RegularGridInterpolator
and absjit.scipy.cluster.vq.vq against SciPy and JAX, in every mode, under grad, vmap and
jit (the interpolator as a pytree), and on bad input."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.interpolate as sip
import scipy.ndimage as snd
from hypothesis import given, strategies as hst

import absjit
import absjit.numpy as jnp
from absjit.scipy.cluster.vq import vq
from absjit.scipy.interpolate import RegularGridInterpolator
from absjit.scipy.ndimage import map_coordinates
from tests.checks import assert_close, jax
from tests.grad_checks import check_grads

jnd = jip = jvq = None
if jax is not None:
    import jax.scipy.cluster.vq as jvq
    import jax.scipy.interpolate as jip
    import jax.scipy.ndimage as jnd

MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]


def _coords(rng, shape, lo=-7, hi=9):
    c = rng.uniform(lo, hi, (len(shape), 3, 6)).astype(np.float32)
    c[0, 0, :5] = [-0.5, 0.5, 4.5, 1.5, 2.0]  # halves and an integer
    return c


@pytest.mark.parametrize("nd_mode", MODES)
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_against_jax(rng, nd_mode, order):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    c = _coords(rng, x.shape)
    out = map_coordinates(x, list(c), order, mode=nd_mode, cval=-2.0)
    assert out.dtype == np.float32 and out.shape == (3, 6)
    xi = (x * 10).astype(np.int32)
    out_i = map_coordinates(xi, list(c), order, mode=nd_mode)
    assert out_i.dtype == np.int32
    if jnd is not None:
        ref = jnd.map_coordinates(x, list(c), order, mode=nd_mode, cval=-2.0)
        assert_close(out, ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(np.asarray(out_i),
                                      np.asarray(jnd.map_coordinates(xi, list(c), order,
                                                                     mode=nd_mode)))


@pytest.mark.parametrize("nd_mode", ["nearest", "mirror", "reflect", "constant"])
def test_map_coordinates_linear_against_scipy(rng, nd_mode):
    """SciPy agrees with JAX for linear interpolation inside the array and in these modes
    (for ``constant`` only away from the border, where SciPy does not blend in cval)."""
    x = rng.standard_normal((6, 5, 4)).astype(np.float32)
    if nd_mode == "constant":
        c = rng.uniform(0, 3, (3, 10)).astype(np.float32)
    else:
        c = rng.uniform(-8, 12, (3, 10)).astype(np.float32)
    assert_close(map_coordinates(x, list(c), 1, mode=nd_mode),
                 snd.map_coordinates(x, c, order=1, mode=nd_mode), rtol=1e-5, atol=1e-5)


def test_every_mode_one_program(mode, rng):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    c = _coords(rng, x.shape)
    grid = (np.arange(5.0, dtype=np.float32), np.array([0, 1, 3, 4], np.float32))
    pts = rng.uniform(-0.5, 4.5, (7, 2)).astype(np.float32)
    obs = rng.standard_normal((6, 3)).astype(np.float32)
    book = rng.standard_normal((4, 3)).astype(np.float32)

    def program(x, c0, c1, interp, pts, obs, book):
        return (map_coordinates(x, [c0, c1], 1, mode="reflect"),
                map_coordinates(x, [c0, c1], 0, mode="constant", cval=1.0),
                interp(pts), interp(pts, method="nearest"), *vq(obs, book))

    interp = RegularGridInterpolator(grid, x)
    out = mode(program)(x, c[0], c[1], interp, pts, obs, book)
    expected = program(x, c[0], c[1], interp, pts, obs, book)  # eager reference
    ref = sip.RegularGridInterpolator(grid, x, bounds_error=False)
    ref_nearest = sip.RegularGridInterpolator(grid, x, method="nearest", bounds_error=False)
    codes, dist = svq.vq(obs, book)
    assert_close(list(out), list(expected), rtol=1e-5, atol=1e-5)
    assert_close(list(out[2:]), [ref(pts).astype(np.float32),
                                 ref_nearest(pts).astype(np.float32), codes.astype(np.int32),
                                 dist.astype(np.float32)], rtol=1e-5, atol=1e-5)


@given(hst.integers(1, 5), hst.integers(0, 1), hst.sampled_from(MODES),
       hst.integers(0, 2**16))
def test_map_coordinates_hypothesis(n, order, nd_mode, seed):
    if jnd is None:
        pytest.skip("needs JAX")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    c = rng.uniform(-2 * n - 1, 2 * n + 1, 9).astype(np.float32)
    assert_close(map_coordinates(x, [c], order, mode=nd_mode),
                 jnd.map_coordinates(x, [c], order, mode=nd_mode), rtol=1e-5, atol=1e-5)


def test_map_coordinates_grad_vmap(rng):
    x = rng.standard_normal((4, 4)).astype(np.float32)
    c = rng.uniform(0.1, 2.9, (2, 5)).astype(np.float32)
    c[:, 0] = [1.3, 2.7]
    check_grads(lambda x, c: map_coordinates(x, [c[0], c[1]], 1, mode="nearest"), [x, c])
    out = absjit.vmap(lambda x: map_coordinates(x, list(c), 1))(np.stack([x, 2 * x]))
    assert_close(out[1], 2 * out[0], rtol=1e-5, atol=1e-5)


def test_regular_grid_interpolator(rng):
    grid = (np.array([0.0, 1.0, 2.5, 4.0]), np.array([-1.0, 0.0, 2.0]), np.arange(3.0))
    values = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    pts = rng.uniform(-1.5, 4.5, (5, 4, 3)).astype(np.float32)
    for method in ("linear", "nearest"):
        for fill in (np.nan, None, -3.0):
            ours = RegularGridInterpolator(grid, values, method=method, fill_value=fill)
            ref = sip.RegularGridInterpolator(grid, values, method=method, bounds_error=False,
                                              fill_value=fill)
            out = ours(pts)
            assert out.shape == (5, 4, 2) and out.dtype == np.float32
            assert_close(out, ref(pts).astype(np.float32), rtol=1e-5, atol=1e-5)
    f = RegularGridInterpolator(grid[:2], values[..., 0, 0])
    assert_close(f((pts[..., 0], pts[..., 1])), f(pts[..., :2]))
    assert f(np.array([0.5, 0.5], np.float32)).shape == (1,)
    one_d = RegularGridInterpolator((np.arange(3.0),), np.arange(3.0) * 2)
    assert_close(one_d(np.array([0.5, 1.5, 4.0], np.float32)),
                 np.array([1.0, 3.0, np.nan], np.float32))
    assert RegularGridInterpolator((np.arange(3.0),), np.arange(3))(
        np.array([[0.5]])).dtype == np.float32
    if jip is not None:
        j = jip.RegularGridInterpolator(grid, values)(pts)
        assert_close(RegularGridInterpolator(grid, values)(pts), j, rtol=1e-5, atol=1e-5)


def test_regular_grid_interpolator_pytree_grad_vmap(rng):
    grid = (np.arange(4.0, dtype=np.float32),)
    values = rng.standard_normal(4).astype(np.float32)
    f = RegularGridInterpolator(grid, values)
    leaves, tree = absjit.tree_util.tree_flatten(f)
    assert len(leaves) == 3
    g = absjit.tree_util.tree_unflatten(tree, leaves)
    x = np.array([[0.5], [2.25]], np.float32)
    assert_close(g(x), f(x))
    # Derivative with respect to the values and to the points.
    grad_v = absjit.grad(lambda v: RegularGridInterpolator(grid, v)(x).sum())(values)
    assert_close(grad_v, np.array([0.5, 0.5, 0.75, 0.25], np.float32))
    grid64 = (np.arange(4.0),)
    check_grads(lambda p, v: RegularGridInterpolator(grid64, v)(p[:, None]),
                [np.array([0.3, 1.7, 2.2]), values.astype(np.float64)])
    batched = absjit.vmap(lambda v: RegularGridInterpolator(grid, v)(x))(np.stack([values,
                                                                                   -values]))
    assert_close(batched[1], -batched[0])


def test_vq(rng):
    obs = rng.standard_normal((8, 3)).astype(np.float32)
    book = rng.standard_normal((4, 3)).astype(np.float32)
    codes, dist = vq(obs, book)
    ref_codes, ref_dist = svq.vq(obs, book)
    assert codes.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(codes), ref_codes)
    assert_close(dist, ref_dist.astype(np.float32), rtol=1e-5, atol=1e-5)
    codes, dist = vq(np.array([1, 2, 3]), np.array([0, 2]))
    np.testing.assert_array_equal(np.asarray(codes), [0, 1, 1])
    assert dist.dtype == np.float32
    if jvq is not None:
        jc, jd = jvq.vq(obs, book)
        assert (jc.dtype, jd.dtype) == (codes.dtype, dist.dtype)


def test_bad_input():
    x = jnp.ones((3, 3))
    c = [jnp.zeros(2)] * 2
    with pytest.raises(NotImplementedError, match="order"):
        map_coordinates(x, c, 3)
    with pytest.raises(NotImplementedError, match="mode"):
        map_coordinates(x, c, 1, mode="grid-wrap")
    with pytest.raises(ValueError, match="input.ndim"):
        map_coordinates(x, c[:1], 1)
    with pytest.raises(TypeError):
        map_coordinates([[1.0]], [[0.0], [0.0]], 1)
    grid = (jnp.arange(3.0), jnp.arange(3.0))
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(grid, x, bounds_error=True)
    with pytest.raises(ValueError, match="not defined"):
        RegularGridInterpolator(grid, x, method="cubic")
    with pytest.raises(ValueError, match="points"):
        RegularGridInterpolator((jnp.arange(4.0), jnp.arange(3.0)), x)
    with pytest.raises(ValueError, match="dimension"):
        RegularGridInterpolator(grid, x)(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="same rank"):
        vq(jnp.ones((3, 2)), jnp.ones(2))
    with pytest.raises(ValueError, match="not supported"):
        vq(jnp.ones((3, 2, 1)), jnp.ones((2, 2, 1)))
    with pytest.raises(ValueError, match="features"):
        vq(jnp.ones((3, 2)), jnp.ones((2, 3)))
