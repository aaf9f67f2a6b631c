"""Behaviour that JAX's documentation notebooks print, compared with jax (where it is
installed): ``python scripts/jax_notebooks.py`` runs the notebooks themselves; these
are the fast checks of what it found."""
from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from tests.checks import jax, jax_numpy

needs_jax = pytest.mark.skipif(jax is None, reason="jax is not installed")


def _printed(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args)
    return buf.getvalue()


def _layers(np_mod, remat):
    def g(W, x):
        y = np_mod.dot(W, x)
        return np_mod.sin(y)

    def f(W1, W2, x):
        x = remat(g)(W1, x)
        x = remat(g)(W2, x)
        return x
    return f


# -- ad_checkpoint.print_saved_residuals ----------------------------------------------
@needs_jax
@pytest.mark.parametrize("remat", [False, True])
def test_print_saved_residuals_matches_jax(remat):
    from absjit.ad_checkpoint import print_saved_residuals
    import jax.ad_checkpoint
    ident = lambda g: g  # noqa: E731
    ours = _layers(jnp, absjit.checkpoint if remat else ident)
    theirs = _layers(jax_numpy, jax.checkpoint if remat else ident)
    args = (np.ones((5, 4), np.float32), np.ones((6, 5), np.float32), np.ones(4, np.float32))
    got = _printed(print_saved_residuals, ours, *args)
    want = _printed(jax.ad_checkpoint.print_saved_residuals, theirs, *args)
    assert got == want
    assert "from the argument W1" in got and f"{Path(__file__).name}:" in got


def test_saved_residuals_of_sin_is_cos():
    from absjit.ad_checkpoint import saved_residuals
    (aval, what), = saved_residuals(jnp.sin, 1.0)
    assert aval.shape == () and what.startswith("output of cos")
