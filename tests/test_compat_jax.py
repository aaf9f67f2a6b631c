"""absjit.compat_jax: unmodified JAX code (optax) runs on absjit through the import alias.

Each alias run happens in a subprocess, so the real jax imported by this test process
is never displaced.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOOPS = os.path.join(ROOT, "tests", "data", "optax_loops.py")


def _run(args, code=None, env_extra=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
               JAX_PLATFORMS="cpu")
    env.update(env_extra or {})
    cmd = [sys.executable] + (["-c", code] if code is not None else [LOOPS]) + list(args)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_alias_resolves_modules_and_names_missing_ones():
    out = _run([], code="""
import sys, absjit.compat_jax
absjit.compat_jax.install()
import jax, jax.numpy as jnp
from jax import lax, random, tree_util, flatten_util, typing, sharding
import jax.scipy.special, jax.example_libraries.stax
assert jax is sys.modules["absjit"] and jnp is sys.modules["absjit.numpy"]
assert jax.numpy.__spec__.name == "absjit.numpy"
print(float(jax.grad(lambda x: jnp.sin(x) * 2)(0.0)))
try:
    import jax.interpreters.pxla
except ImportError as e:
    print("missing:", e.name)
assert "xla" not in absjit.backends()  # the name jax now means absjit
absjit.compat_jax.uninstall()
assert "jax" not in sys.modules
""")
    assert out.split() == ["2.0", "missing:", "jax.interpreters.pxla"]


def test_uninstall_restores_a_real_jax_imported_before():
    pytest.importorskip("jax")
    out = _run([], code="""
import sys, jax, absjit.compat_jax
real = jax
with absjit.compat_jax.installed():
    import jax as aliased
    assert aliased.__name__ == "absjit"
import jax
assert jax is real and sys.modules["jax.numpy"] is real.numpy
print("restored")
""")
    assert out.strip() == "restored"


def test_optax_training_loops_match_jax():
    pytest.importorskip("optax")
    pytest.importorskip("jax")
    ours = json.loads(_run(["absjit"]).strip().splitlines()[-1])
    theirs = json.loads(_run(["jax"]).strip().splitlines()[-1])
    assert set(ours) == {"adam", "sgd", "chain"}
    for name in ours:
        for key in ("losses", "w", "b"):
            np.testing.assert_allclose(ours[name][key], theirs[name][key], rtol=1e-5,
                                       atol=1e-5, err_msg=f"{name} {key}")
