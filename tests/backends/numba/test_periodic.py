"""Nests over short rows rendered as one flat loop (``render_periodic``) against the
interpret backend: elementwise nests with row-broadcast operands, column reductions
and whole-array reductions, with remainders, NaN/inf, empty and non-contiguous inputs."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import absjit  # noqa: E402
import absjit.numpy as jnp  # noqa: E402
from absjit.backends.numba import render_periodic  # noqa: E402
from absjit.compiler import ir  # noqa: E402

from tests.checks import assert_close  # noqa: E402


pytestmark = pytest.mark.usefixtures("module_cache_dir")


def _compiled(f, *args):
    return absjit.jit(f, backend="cpu").lower(*args).compile()


def check_flat(f, *args, flat=True, **tol):
    """``f`` on cpu equals interpret; ``flat``: the kernel used the flat form."""
    c = _compiled(f, *args)
    assert ("flat_" in c.as_text() or "acc_" in c.as_text() and "tab_" in c.as_text()) \
        if flat else "flat_" not in c.as_text()
    got = c(*args)
    want = absjit.jit(f, backend="interpret")(*args)
    assert_close(got, want, **tol)
    return got


def _norm(X):
    X = X - X.mean(0)
    return X / jnp.sqrt(jnp.mean(X * X, 0))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1000, 10), (257, 3), (999, 7), (40, 5, 3)])
def test_norm_matches_interpret(dt, shape):
    X = np.random.default_rng(3).standard_normal(shape).astype(dt) * 5 + 2
    got = check_flat(_norm, X, rtol=2e-6 if dt == np.float32 else 1e-12, atol=1e-6)
    assert np.asarray(got).shape == shape


@pytest.mark.parametrize("axes", [0, (0, 1), None])
def test_column_and_whole_sums(axes):
    X = np.random.default_rng(0).standard_normal((301, 4, 3)).astype(np.float32)
    got = check_flat(lambda x: jnp.sum(x, axes), X, rtol=1e-5, atol=1e-4)
    with np.errstate(all="ignore"):
        exact = X.astype(np.float64).sum(axes)
    assert np.abs(np.asarray(got, np.float64) - exact).max() <= 1e-5 * np.abs(X).sum()


def test_float32_sum_is_accurate():
    # 1e6 values around 1e4: a float32 running sum would be ~1e-3 relatively off.
    x = (np.random.default_rng(1).random(1_000_000) + 1e4).astype(np.float32)
    got = np.asarray(_compiled(jnp.sum, x)(x))
    exact = x.astype(np.float64).sum()
    assert abs(float(got) - exact) <= 2 * np.spacing(np.float32(exact))


@pytest.mark.parametrize("red", [jnp.max, jnp.min, jnp.prod, jnp.sum])
def test_special_values_in_columns(red):
    X = np.random.default_rng(2).standard_normal((200, 6)).astype(np.float32)
    X[17, 1] = np.nan
    X[40, 2], X[41, 3] = np.inf, -np.inf
    X[50, 4], X[51, 4] = np.inf, -np.inf
    X[:, 5] = -0.0
    if red is jnp.prod:
        X = 1 + X / 100
        X[17, 1] = np.nan
    check_flat(lambda x: red(x, 0), X, rtol=1e-5)


def test_integer_and_boolean_columns():
    X = np.random.default_rng(4).integers(-1000, 1000, (500, 5)).astype(np.int32)
    check_flat(lambda x: jnp.sum(x, 0), X)
    check_flat(lambda x: jnp.max(x, 0), X)
    check_flat(lambda x: jnp.all(x > -990, 0), X)
    check_flat(lambda x: (x - x.min(0)) * 3, X)


def test_row_broadcast_elementwise_and_nan():
    X = np.random.default_rng(5).standard_normal((333, 10)).astype(np.float32)
    X[3, 3], X[100, 9] = np.nan, np.inf
    row = np.random.default_rng(6).standard_normal(10).astype(np.float32)
    row[2] = 0.0
    check_flat(lambda x, r: (x - r) / r, X, row, rtol=1e-6)
    check_flat(lambda x, r: jnp.where(x > r, x * 2, r), X, row)


def test_non_contiguous_inputs():
    base = np.random.default_rng(7).standard_normal((600, 20)).astype(np.float32)
    check_flat(_norm, base[:, ::2], rtol=2e-6, atol=1e-6)
    check_flat(_norm, base[::2, :10], rtol=2e-6, atol=1e-6)
    check_flat(lambda x: jnp.sum(x, 0), base.T[:8].T, rtol=1e-5, atol=1e-4)


def test_empty_and_small_arrays_keep_the_plain_loops():
    for shape in [(0, 10), (3, 10), (0,), (3, 0), (200, 0)]:  # (n, 0): an empty period
        X = np.ones(shape, np.float32)
        check_flat(lambda x: jnp.sum(x, 0), X, flat=False)
        if len(shape) == 2:
            check_flat(lambda x: x - x.mean(0), X, flat=False)


def test_long_rows_keep_the_plain_loops():
    X = np.ones((100, 300), np.float32)
    check_flat(lambda x: x - x.mean(0), X, flat=False)


def test_layout_rejects_what_it_cannot_flatten():
    # A column broadcast (x[i, 0]) varies along the outer axis: not periodic.
    X = np.random.default_rng(8).standard_normal((500, 6)).astype(np.float32)
    prog = _compiled(lambda x: x - x[:, :1], X).executable.program
    nests = [s for s in ir.walk(prog.body) if isinstance(s, ir.Nest) and len(s.shape) == 2]
    assert nests and all(render_periodic.layout(s) is None for s in nests)
    check_flat(lambda x: x - x[:, :1], X, flat=False)
    # argmax tracks positions: kept in the plain rendering.
    check_flat(lambda x: jnp.argmax(x, 0), X, flat=False)


# -- ranked: the flat form under a run-time test, prange only for large sizes -------
_RANKED_FNS = {
    "norm": _norm,
    "col_sum_max": lambda X: (X.sum(0), X.max(0), X.min(0)),
    "whole_sum": lambda X: (X * 2).sum(),
    "row_broadcast": lambda X: X * X.mean(0) - jnp.exp(X[0]),
}
_RANKED = {k: absjit.jit(f, abstraction="ranked", backend="cpu")
           for k, f in _RANKED_FNS.items()}


@pytest.mark.parametrize("name", sorted(_RANKED_FNS))
@pytest.mark.parametrize("shape", [(5, 3), (40, 10), (1000, 7), (3, 100), (20000, 10),
                                   (4, 0), (0, 6), (70, 64), (9, 63), (3, 4, 5),
                                   (30000, 3, 5)])
def test_ranked_flat_form_matches_interpret(name, shape, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    if x.size:
        x.ravel()[:: 7] = np.where(rng.random(x.ravel()[:: 7].shape) < 0.1, np.nan,
                                   x.ravel()[:: 7])
    f = _RANKED[name]
    if shape[0] == 0 and name in ("col_sum_max", "row_broadcast"):
        # the max of nothing, or row 0 of nothing: errors, as in JAX
        with pytest.raises((ValueError, IndexError)):
            f(x)
        return
    want = absjit.jit(_RANKED_FNS[name], backend="interpret")(x)
    with np.errstate(all="ignore"):
        assert_close(f(x), want, rtol=2e-5, atol=2e-5)


def test_ranked_flat_form_is_one_entry_and_checks_at_run_time(rng, monkeypatch):
    import weakref

    from absjit.backends.numba_cpu import tiers
    # promote_all() below: this test's kernel only, not every cold ranked kernel this
    # worker has compiled (each a parallel compile)
    monkeypatch.setattr(tiers, "_COLD", weakref.WeakSet())
    # (scaled: a program of its own, so its ranked kernel is made in this test)
    f = absjit.jit(lambda X: _norm(X * 1.0000001), abstraction="ranked", backend="cpu")
    for shape in ((10, 10), (5000, 10), (200000, 3), (8, 200)):
        x = rng.standard_normal(shape).astype(np.float32)
        assert_close(f(x), absjit.jit(_norm, backend="interpret")(x), rtol=1e-5,
                     atol=1e-5)
    assert f._cache_size() == 1
    text = f.lower(x).compile().as_text()
    assert "flat_" in text and "tab_" in text  # the flat form is there ...
    assert "if (_T_" in text and "else:" in text  # ... behind a test of the sizes
    # parallel loops only when the size is large (the parallel tier's source)
    assert len(tiers._COLD) >= 1
    tiers.promote_all()
    tiers.wait()
    assert_close(f(x), absjit.jit(_norm, backend="interpret")(x), rtol=1e-5, atol=1e-5)
