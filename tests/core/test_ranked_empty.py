"""``ranked`` functions on empty arrays (a size 0 at run time): what NumPy computes
(reductions with an identity, elementwise code, sorts, products) works on every
backend from the entry traced on a non-empty array; reductions without an identity
raise a ``ValueError`` saying so before any kernel runs."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from tests.checks import assert_close, jax

BACKENDS = ["interpret", "cpu"] + (["xla"] if jax is not None else [])

WORKS = {
    "sum": (lambda x: x.sum(), lambda x: x.sum()),
    "sum_axis0": (lambda x: x.sum(0), lambda x: x.sum(0)),
    "prod": (lambda x: jnp.prod(x, 1), lambda x: np.prod(x, 1)),
    "mean_rows": (lambda x: x.mean(1), lambda x: x.mean(1)),
    "elementwise": (lambda x: jnp.where(x > 0, x, jnp.exp(x) - 1) * 2,
                    lambda x: np.where(x > 0, x, np.exp(x) - 1) * 2),
    "max_initial": (lambda x: jnp.max(x, initial=-1.0), lambda x: np.max(x, initial=-1.0)),
    "any_all": (lambda x: (jnp.any(x > 0), jnp.all(x > 0)),
                lambda x: (np.any(x > 0), np.all(x > 0))),
    "cumsum": (lambda x: jnp.cumsum(x, 0), lambda x: np.cumsum(x, 0)),
    "sort": (lambda x: jnp.sort(x, 0), lambda x: np.sort(x, 0)),
    "matmul": (lambda x: x.T @ x, lambda x: x.T @ x),
    "slice": (lambda x: x[1:] * 2, lambda x: x[1:] * 2),
}


def _empty_ok(name):
    return name != "slice"  # x[1:] assumes one row (checked at entry)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(WORKS))
def test_empty_arrays_work_where_numpy_works(backend, name, rng):
    fn, ref = WORKS[name]
    f = absjit.jit(fn, abstraction="ranked", backend=backend)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    assert_close(f(x), ref(x), rtol=1e-5, atol=1e-6, check_dtype=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy: mean of nothing
        for shape in ((0, 3), (4, 0)):
            e = np.zeros(shape, np.float32)
            if shape[0] == 0 and not _empty_ok(name):
                with pytest.raises(ValueError, match="ranked"):
                    f(e)
                continue
            assert_close(f(e), ref(e), rtol=0, atol=0, check_dtype=False)
    assert f._cache_size() == 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, why", [
    (lambda x: jnp.max(x), "max of an empty array has no identity; pass initial="),
    (lambda x: jnp.min(x, 0), "min of an empty array has no identity"),
    (lambda x: jnp.argmax(x), "argmax of an empty array"),
])
def test_reductions_without_identity_raise_on_empty(backend, fn, why):
    f = absjit.jit(fn, abstraction="ranked", backend=backend)
    f(np.ones(4, np.float32))
    with pytest.raises(ValueError, match=why):
        f(np.zeros(0, np.float32))
