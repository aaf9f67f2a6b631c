import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import absjit
import absjit.numpy as jnp
from tests.checks import assert_close, check_against_numpy, jax
from tests.grad_checks import check_grads

CASES = [
    ("constant", {}), ("constant", {"constant_values": ((1, 2), (3, 4))}),
    ("edge", {}), ("linear_ramp", {}), ("linear_ramp", {"end_values": (5, -2)}),
    ("maximum", {}), ("minimum", {"stat_length": 2}), ("mean", {}),
    ("mean", {"stat_length": ((1, 2), (3, 1))}), ("median", {}),
    ("reflect", {}), ("reflect", {"reflect_type": "odd"}), ("symmetric", {}),
    ("symmetric", {"reflect_type": "odd"}), ("wrap", {}),
]
WIDTHS = [2, ((1, 2), (7, 3)), (0, 5)]


@pytest.mark.parametrize("mode_name, kwargs", CASES, ids=[f"{m}-{i}" for i, (m, _) in
                                                         enumerate(CASES)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pad_matches_numpy(mode_name, kwargs, dtype):
    x = ((np.arange(12).reshape(3, 4) * 7) % 11).astype(dtype)
    if dtype == np.float32:
        x = x ** 1.3
    for pw in WIDTHS:
        out = jnp.pad(x, pw, mode_name, **kwargs)
        assert_close(out, np.pad(x, pw, mode_name, **kwargs), rtol=1e-5, atol=1e-5)
        if jax is not None:
            assert out.dtype == jax.numpy.pad(x, pw, mode_name, **kwargs).dtype


@pytest.mark.parametrize("mode_name", ["constant", "reflect", "mean", "wrap"])
def test_pad_under_transforms(mode_name, mode):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    check_against_numpy(lambda a: jnp.pad(a, ((1, 1), (2, 0)), mode_name),
                        lambda a: np.pad(a, ((1, 1), (2, 0)), mode_name), x,
                        transform=mode, jax_fn=(lambda a: jax.numpy.pad(
                            a, ((1, 1), (2, 0)), mode_name)) if jax else None)


def test_pad_empty_and_weak_scalars():
    out = jnp.pad(jnp.ones((2, 2)), 1, "empty")
    assert out.shape == (4, 4) and out.dtype == np.float32
    assert_close(out[1:3, 1:3], np.ones((2, 2), np.float32))
    assert jnp.pad(jnp.ones(2, jnp.int32), 1, constant_values=7).tolist() == [7, 1, 1, 7]


def test_pad_gradients():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    for m, kw in [("constant", {}), ("reflect", {"reflect_type": "odd"}), ("edge", {}),
                  ("mean", {}), ("linear_ramp", {"end_values": 1.0})]:
        check_grads(lambda a: jnp.pad(a, ((1, 2), (2, 1)), m, **kw), (x,), order=1)


def test_pad_errors():
    x = jnp.ones((2, 2))
    with pytest.raises(ValueError, match="Unimplemented padding mode"):
        jnp.pad(x, 1, "circular")
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(x, -1)
    with pytest.raises(ValueError, match="unsupported keyword"):
        jnp.pad(x, 1, "edge", constant_values=3)
    with pytest.raises(ValueError, match="reflect_type"):
        jnp.pad(x, 1, "reflect", reflect_type="weird")
    with pytest.raises(ValueError, match="empty axis"):
        jnp.pad(jnp.ones((0, 2)), 1, "edge")
    with pytest.raises(ValueError):
        jnp.pad(x, ((1, 2, 3),))


def test_pad_traced_fill_values(mode):
    x = np.ones((2, 2), np.float32)
    out = mode(lambda a, c: jnp.pad(a, ((1, 2), (0, 1)), constant_values=((c, 0), (1, c))))(
        x, np.float32(5.0))
    assert_close(out, np.pad(x, ((1, 2), (0, 1)), constant_values=((5, 0), (1, 5))))
    table = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    out = mode(lambda a, c: jnp.pad(a, 1, constant_values=c))(x, table)
    assert_close(out, np.pad(x, 1, constant_values=table))
    ramp = mode(lambda a, c: jnp.pad(a, 2, "linear_ramp", end_values=c))(x[0], np.float32(5))
    assert_close(ramp, np.pad(x[0], 2, "linear_ramp", end_values=5.0))
    g = absjit.grad(lambda c: jnp.pad(jnp.ones(2), (1, 2), constant_values=c).sum())(5.0)
    assert float(g) == 3.0


@settings(max_examples=30)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       widths=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=3,
                       max_size=3),
       mode_name=st.sampled_from(["constant", "edge", "wrap", "reflect", "symmetric",
                                  "maximum", "mean", "linear_ramp"]),
       odd=st.booleans())
def test_pad_random_shapes_against_numpy(shape, widths, mode_name, odd):
    x = (np.arange(np.prod(shape)).reshape(shape) * 1.7 % 5).astype(np.float32)
    pw = tuple(widths[:len(shape)])
    kwargs = {"reflect_type": "odd"} if odd and mode_name in ("reflect", "symmetric") else {}
    assert_close(jnp.pad(x, pw, mode_name, **kwargs), np.pad(x, pw, mode_name, **kwargs),
                 rtol=1e-5, atol=1e-5)
