"""examples/hmm_em.py runs (``--quick``): EM's log-likelihood never decreases, and
when JAX is installed the same program under JAX samples the same sequence and
reaches the same log-likelihoods. That full run is the slow tier
(tests/slow_variants.txt); the default run takes the example's own program through a
few EM steps eagerly."""
import contextlib
import io
import os
import runpy
import sys

import numpy as np

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples", "hmm_em.py")


def test_hmm_em_quick():
    out = io.StringIO()
    argv = sys.argv
    sys.argv = [EXAMPLE, "--quick"]
    try:
        with contextlib.redirect_stdout(out):
            module = runpy.run_path(EXAMPLE, run_name="hmm_em")
            trace = module["main"](["--quick"])
    finally:
        sys.argv = argv
    text = out.getvalue()
    assert "absjit: T=300, 8 EM steps" in text
    assert np.all(np.diff(trace) >= -1e-2 * np.abs(trace[1:]))
    assert ("absjit and JAX agree" in text) or ("JAX not installed" in text)


def test_hmm_em_steps_run_eagerly():
    module = runpy.run_path(EXAMPLE, run_name="hmm_em")
    jnp, lax, random, logsumexp, _ = module["absjit_api"]()
    eager = (jnp, lax, random, logsumexp, lambda f, **kwargs: f)
    xs, trace, (pi, A, B) = module["fit"](eager, 12, 3)
    assert xs.shape == (12,) and set(np.unique(xs)) <= {0, 1, 2, 3}
    assert np.all(np.isfinite(trace)) and np.all(np.diff(trace) >= -1e-3 * np.abs(trace[1:]))
    np.testing.assert_allclose([pi.sum(), *A.sum(1), *B.sum(1)], 1.0, rtol=1e-4)
