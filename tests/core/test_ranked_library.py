"""Library functions at the ``ranked`` level: each one traced on symbolic sizes gives
what the ``shaped`` level gives, from one entry for two sizes; a function whose result
depends on a size Python must know raises ``InconclusiveDimensionError``."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax, random
from absjit.errors import InconclusiveDimensionError


def _data(rows, cols):
    rng = np.random.default_rng(rows * 100 + cols)
    return rng.standard_normal((rows, cols)).astype(np.float32)


WORKS = {
    "normal": lambda x: x + random.normal(random.key(0), x.shape),
    "uniform_rows": lambda x: random.uniform(random.key(0), (x.shape[0],)) + x[:, 0],
    "dropout": lambda x: jnp.where(random.bernoulli(random.key(1), 0.8, x.shape), x / 0.8, 0),
    "randint": lambda x: random.randint(random.key(2), x.shape, 0, 10) + x,
    "choice": lambda x: random.choice(random.key(3), x[0], (3,)),
    "choice_per_row": lambda x: random.choice(random.key(3), x[0], (x.shape[0],)),
    "gamma": lambda x: random.gamma(random.key(4), 2.0, x.shape),
    "categorical": lambda x: random.categorical(random.key(5), x),
    "split": lambda x: random.key_data(random.split(random.key(5), x.shape[0])),
    "permutation_rows": lambda x: random.permutation(random.key(6), x),
    "permutation_flat": lambda x: random.permutation(random.key(6), x.reshape(-1)),
    "choice_without_replacement": lambda x: random.choice(random.key(7), x[0], (3,),
                                                          replace=False),
    "asarray_of_size": lambda x: jnp.asarray(x.shape[0]) * x,
    "array_of_sizes": lambda x: jnp.array([x.shape[0], x.shape[1], 2]),
    "cov": lambda x: jnp.cov(x),
    "corrcoef": lambda x: jnp.corrcoef(x),
    "diagonal": lambda x: jnp.diagonal(x),
    "diagonal_offsets": lambda x: (jnp.diagonal(x, 2), jnp.diag(x, -1)),
    "trace": lambda x: jnp.trace(x.T @ x),
    "qr_r": lambda x: jnp.abs(jnp.linalg.qr(x.T)[1]),
    "svdvals": lambda x: jnp.linalg.svd(x, compute_uv=False),
    "svd_reconstruct": lambda x: (lambda u, s, vt: (u * s) @ vt)(
        *jnp.linalg.svd(x, full_matrices=False)),
    "norm_2": lambda x: jnp.linalg.norm(x, 2),
    "median": lambda x: jnp.median(x, axis=1),
    "percentile": lambda x: jnp.percentile(x, 30, axis=0),
    "unique_size": lambda x: jnp.unique(jnp.round(x), size=3),
    "top_k": lambda x: lax.top_k(x, 2)[0],
    "argsort_descending": lambda x: jnp.argsort(x, axis=1, descending=True),
    "size_as_number": lambda x: x / jnp.size(x),
    "vdot_2d": lambda x: jnp.vdot(x, x),
    "dynamic_update_slice": lambda x: lax.dynamic_update_slice(x, jnp.ones((2, 2)), (1, 1)),
    "conv_valid": lambda x: lax.conv_general_dilated(x[None, None], jnp.ones((1, 1, 2, 2)),
                                                     (1, 1), "VALID")[0, 0],
    "reduce_window_valid": lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1),
                                                       "VALID"),
    "nonzero_size": lambda x: jnp.nonzero(x > 0, size=5, fill_value=-1),
    "argwhere_size": lambda x: jnp.argwhere(x > 0, size=4),
    "interp": lambda x: jnp.interp(x[0], jnp.sort(x[1]), x[2]),
    "fft": lambda x: jnp.abs(jnp.fft.fft(x, axis=1)),
    "rfft_irfft": lambda x: jnp.fft.irfft(jnp.fft.rfft(x)),
    "fft2_ortho": lambda x: jnp.fft.fft2(x, norm="ortho").real,
    "ifft_forward": lambda x: jnp.fft.ifft(x, norm="forward").imag,
    "at_add": lambda x: x.at[0].add(1.0),
    "at_multiply_rows": lambda x: x.at[1:3].multiply(2.0),
    "at_max_column": lambda x: x.at[:, 2].max(0.5),
}


# On the cpu backend the default run compiles one function of each kind (random bits,
# products and reductions, sorts, selection, FFT, scatter, windows, sized outputs); the
# rest are the slow tier. The interpreter runs every one.
_CPU_DEFAULT = {"normal", "cov", "diagonal_offsets", "median", "top_k", "fft", "at_add",
                "conv_valid", "nonzero_size", "unique_size", "dynamic_update_slice",
                "permutation_rows"}


def _cases():
    for name in sorted(WORKS):
        yield pytest.param("interpret", name, id=f"{name}-interpret")
        yield pytest.param("cpu", name, id=f"{name}-cpu",
                           marks=() if name in _CPU_DEFAULT else pytest.mark.slow)


@pytest.mark.parametrize("backend,name", list(_cases()))
def test_ranked_equals_shaped(backend, name):
    """The reference is the shaped level on the interpreter (the cpu backend's shaped
    kernels are compared with it elsewhere): one ranked compile per case, not three."""
    fn = WORKS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = absjit.jit(fn, abstraction="ranked", backend=backend)
        shaped = absjit.jit(fn, backend="interpret")
        for shape in ((4, 6), (5, 9)):
            x = _data(*shape)
            for got, want in zip(absjit.tree.leaves(ranked(x)), absjit.tree.leaves(shaped(x))):
                got, want = np.asarray(got), np.asarray(want)
                assert got.dtype == want.dtype
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5)
    assert ranked._cache_size() == 1


def test_asarray_of_a_size_is_a_weak_int():
    jaxpr = absjit.make_jaxpr(lambda x: jnp.asarray(x.shape[0]), abstraction="ranked")(
        np.ones(3, np.float32))
    (out,) = jaxpr.out_avals
    assert out.dtype == np.int32 and out.weak_type


@pytest.mark.parametrize("fn, what", [
    (lambda x: jnp.cross(x[0], np.ones(3, np.float32)), "jnp.cross"),
    (lambda x: jnp.array_split(x, 2, axis=0)[1], "int("),
    (lambda x: jnp.convolve(x[0], x[1]), "int("),
])
def test_size_dependent_structure_is_inconclusive(fn, what):
    with pytest.raises(InconclusiveDimensionError, match=r"x\.shape\[\d\]") as info:
        absjit.jit(fn, abstraction="ranked")(_data(4, 6))
    assert what in str(info.value)


def test_choice_and_top_k_check_sizes_at_entry():
    f = absjit.jit(lambda x: lax.top_k(x, 3)[0], abstraction="ranked", backend="cpu")
    assert f(_data(2, 5)).shape == (2, 3)
    with pytest.raises(ValueError, match=r"x.shape\[1\].*top_k with k=3"):
        f(_data(2, 2))
    g = absjit.jit(lambda x: random.choice(random.key(0), x, (3,), replace=False),
                   abstraction="ranked")
    assert g(np.arange(5.0, dtype=np.float32)).shape == (3,)
    with pytest.raises(ValueError, match="without replacement takes at most"):
        g(np.arange(2.0, dtype=np.float32))


def test_permutation_rounds_follow_the_size_at_run_time():
    # JAX shuffles 1625 elements with one sort and 1626 with two: one ranked entry
    # gives each size the numbers the shaped level gives
    f = absjit.jit(lambda x: random.permutation(random.key(0), x), abstraction="ranked",
                   backend="cpu")
    for n in (1625, 1626):
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(np.asarray(f(x)),
                                      np.asarray(random.permutation(random.key(0), x)))
    assert f._cache_size() == 1


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_nonzero_of_an_empty_array_from_the_same_entry(backend):
    f = absjit.jit(lambda x: jnp.nonzero(x > 0, size=3, fill_value=-1), abstraction="ranked",
                   backend=backend)
    rows, cols = f(np.ones((4, 6), np.float32))
    np.testing.assert_array_equal(np.asarray(cols), [0, 1, 2])
    for empty in (np.ones((0, 6), np.float32), np.ones((5, 0), np.float32)):
        for got in f(empty):
            np.testing.assert_array_equal(np.asarray(got), [-1, -1, -1])
    assert f._cache_size() == 1
