"""Programs whose reductions the compiler fuses (sibling reductions in one nest, a row
reduction with its consumers in one loop over rows), on the cpu backend against the
interpret backend and NumPy: any shape (empty and size-1 axes included), NaN and
infinities, non-contiguous inputs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import absjit
import absjit.numpy as jnp
from absjit.scipy.special import logsumexp
from tests.checks import assert_close


def softmax(x):
    e = jnp.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x):
    m = x.mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)


def np_layer_norm(x):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)


def norm(x):  # seed 003: column statistics
    x = x - x.mean(0)
    return x / jnp.sqrt(jnp.mean(x * x, 0))


def np_norm(x):
    x = x - x.mean(0)
    return x / np.sqrt(np.mean(x * x, 0))


def np_logsumexp(x):
    m = x.max(-1, keepdims=True)
    return (np.log(np.exp(x - m).sum(-1, keepdims=True)) + m)[..., 0]


# (absjit function, NumPy reference in float64, needs a non-empty reduced axis)
CASES = {
    "softmax": (softmax, np_softmax, True),
    "layer_norm": (layer_norm, np_layer_norm, False),
    "norm": (norm, np_norm, False),
    "logsumexp": (lambda x: logsumexp(x, axis=-1), np_logsumexp, True),
    "mean_var": (lambda x: (x.mean(-1), jnp.var(x, -1), x.mean(0), jnp.var(x, 0)),
                 lambda x: (x.mean(-1), x.var(-1), x.mean(0), x.var(0)), False),
    "max_argmax": (lambda x: (x.max(-1), jnp.argmax(x, -1), x.min(0), jnp.argmin(x, 0)),
                   lambda x: (x.max(-1), np.argmax(x, -1), x.min(0), np.argmin(x, 0)), True),
    "sum_sumsq": (lambda x: (x.sum(0), (x * x).sum(0), x.sum(), (x * x).sum()),
                  lambda x: (x.sum(0), (x * x).sum(0), x.sum(), (x * x).sum()), False),
}

_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf])


@st.composite
def operands(draw, nonempty):
    lo = 1 if nonempty else 0
    shape = (draw(st.integers(lo, 5)), draw(st.sampled_from([lo, 1, 3, 70, 130])))
    # Any float32 (tiny, subnormal) for the comparison with the interpreter; halves of
    # small integers for the one with NumPy in float64, which a float32 program can
    # only follow on well-conditioned data (a variance of 1e-38 squared is 0 in float32).
    grid = draw(st.booleans())
    elements = st.integers(-60, 60).map(lambda k: k / 2) if grid else \
        st.floats(-30, 30, width=32)
    x = draw(hnp.arrays(np.float32, shape, elements=elements))
    if x.size and draw(st.booleans()):
        flat = x.reshape(-1)
        for _ in range(draw(st.integers(1, 3))):
            flat[draw(st.integers(0, flat.size - 1))] = draw(_SPECIAL)
    if draw(st.booleans()):  # the same values through a strided view
        wide = np.zeros((shape[0], 2 * shape[1]), np.float32)
        wide[:, ::2] = x
        x = wide[:, ::2]
        assert not x.flags.c_contiguous or x.size <= 1 or shape[1] <= 1
    return x, grid


def _np_reference(np_fn, x):
    with np.errstate(all="ignore"):
        out = np_fn(x.astype(np.float64))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=5)  # each new shape is a compile
@given(data=st.data())
def test_cpu_against_interpret_and_numpy(name, data):
    fn, np_fn, nonempty = CASES[name]
    x, grid = data.draw(operands(nonempty))
    with np.errstate(all="ignore"):
        got = absjit.jit(fn, backend="cpu")(x)
        want = absjit.jit(fn, backend="interpret")(x)
    assert_close(got, want, rtol=2e-5, atol=1e-5)
    if grid and np.isfinite(x).all():
        ref = _np_reference(np_fn, x)
        leaves = absjit.tree_util.tree_leaves(got)
        refs = ref if isinstance(ref, tuple) else (ref,)
        for g, r in zip(leaves, refs):
            r = np.asarray(r).astype(np.asarray(g).dtype)
            assert_close(g, r, rtol=1e-4, atol=1e-3, check_dtype=False)


def test_row_fused_softmax_on_a_large_array():
    # rows of 1000: the fused loop over rows, in parallel
    x = np.random.default_rng(1).normal(size=(300, 1000)).astype(np.float32) * 10
    x[5, 3] = np.inf
    x[7, :] = -np.inf
    got = np.asarray(absjit.jit(softmax)(x))
    want = np.asarray(absjit.jit(softmax, backend="interpret")(x))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7, equal_nan=True)
    with np.errstate(all="ignore"):
        ref = np_softmax(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-7, equal_nan=True)


def test_sibling_sums_are_bit_identical_to_separate_ones():
    # the shared nest folds each sum in the same order as a nest of its own
    x = np.random.default_rng(2).normal(size=(1000, 37)).astype(np.float32)
    both = absjit.jit(lambda x: (x.sum(0), (x * x).sum(0), x.sum(1), (x * x).sum(1)))(x)
    alone = [absjit.jit(f)(x) for f in (lambda x: x.sum(0), lambda x: (x * x).sum(0),
                                        lambda x: x.sum(1), lambda x: (x * x).sum(1))]
    for a, b in zip(both, alone):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("n", [64, 100, 1000])
def test_long_row_reductions_in_lanes_of_every_kind(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(7, n)).astype(np.float32)
    x[2, n // 3] = np.nan
    x[3, n - 1] = np.inf
    k = rng.integers(-5, 6, size=(7, n)).astype(np.int32)

    def f(x, k):
        return (x.sum(-1), x.max(-1), x.min(-1), jnp.prod(1 + x * 1e-3, -1),
                k.sum(-1), k.max(-1), (k > 4).any(-1), (k > -5).all(-1), jnp.argmax(x, -1))
    got = absjit.jit(f)(x, k)
    want = absjit.jit(f, backend="interpret")(x, k)
    assert_close(got, want, rtol=2e-6, atol=1e-6)


def test_fused_reductions_under_the_ranked_level():
    # symbolic sizes: one compile fuses rows and siblings for every shape
    def f(x):
        return softmax(x), x.sum(0), (x * x).sum(0), x.max(1), jnp.argmax(x, 1)
    g = absjit.jit(f, abstraction="ranked")
    for shape in [(3, 100), (50, 7), (1, 1), (70, 300)]:
        x = np.random.default_rng(sum(shape)).normal(size=shape).astype(np.float32)
        assert_close(g(x), absjit.jit(f, backend="interpret")(x), rtol=2e-5, atol=1e-6)
    assert g._cache_size() == 2  # which axes have size 1 is part of a ranked aval
