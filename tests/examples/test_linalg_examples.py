"""The linear-algebra examples run end to end with ``--quick``; each asserts its own
results (the objective decreases, the minimum is reached) and, with JAX installed,
that JAX computes the same."""
from __future__ import annotations

import contextlib
import io
import os
import runpy

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                        "examples")


def _run_quick(name):
    ns = runpy.run_path(os.path.join(EXAMPLES, name), run_name="example")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ns["main"](["--quick"])
    return out.getvalue()


@pytest.mark.parametrize("name,expect", [("gp_regression.py", "-log marginal likelihood"),
                                         ("newton_bfgs.py", "Newton:")])
def test_example_runs_quick(name, expect):
    text = _run_quick(name)
    assert expect in text
    from tests.checks import jax
    if jax is not None:
        assert "agrees with JAX" in text
