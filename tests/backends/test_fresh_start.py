"""A fresh process's start: what the cpu backend imports before its first result.

Numba's CPU target imports ``scipy.linalg.cython_blas`` when it starts; absjit loads
that module (and ``cython_lapack``) without the rest of ``scipy.linalg``
(:func:`absjit.compat.preload_scipy_blas`). These tests run in new interpreters, since
the point is what a process has imported.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

PRELUDE = r"""
import json, sys
import numpy as np
import absjit, absjit.numpy as jnp
"""


def run(script, tmp_path):
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", PRELUDE + script], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_first_result_does_not_import_scipy_linalg(tmp_path):
    got = run(r"""
x = np.arange(9, dtype=np.float32).reshape(3, 3)
out = absjit.jit(lambda a: jnp.maximum(a @ a, 1.0) * 0.5)(x)
assert np.allclose(np.asarray(out), np.maximum(x @ x, 1.0) * 0.5)
print(json.dumps({"linalg": "scipy.linalg" in sys.modules,
                  "blas": "scipy.linalg.cython_blas" in sys.modules,
                  "f2py": "numpy.f2py" in sys.modules}))
""", tmp_path)
    assert got == {"linalg": False, "blas": True, "f2py": False}


def test_scipy_linalg_imported_later_is_whole(tmp_path):
    got = run(r"""
x = np.eye(3) * 2.0
inv = absjit.jit(jnp.linalg.inv)(x)          # LAPACK through Numba's capsules
assert np.allclose(np.asarray(inv), np.eye(3) / 2.0)
import scipy.linalg.cython_blas
import scipy.linalg.cython_lapack as lapack
from scipy.linalg import cython_blas
import scipy.linalg
ok = [scipy.linalg.cython_blas is sys.modules["scipy.linalg.cython_blas"],
      scipy.linalg.cython_lapack is lapack, cython_blas is scipy.linalg.cython_blas,
      "dgemm" in scipy.linalg.cython_blas.__pyx_capi__,
      bool(np.allclose(scipy.linalg.blas.dgemm(1.0, x, x), x @ x)),
      bool(np.allclose(scipy.linalg.solve(x, np.ones(3)), np.ones(3) / 2.0))]
print(json.dumps(ok))
""", tmp_path)
    assert got == [True] * 6


def test_scipy_linalg_imported_first_is_left_alone(tmp_path):
    got = run(r"""
import scipy.linalg
from absjit import compat
before = list(sys.meta_path)
compat.preload_scipy_blas()
out = absjit.jit(lambda a: a @ a)(np.eye(2, dtype=np.float32))
print(json.dumps({"hooks_same": list(sys.meta_path) == before,
                  "blas_attr": scipy.linalg.cython_blas is sys.modules["scipy.linalg.cython_blas"],
                  "ok": bool(np.allclose(np.asarray(out), np.eye(2)))}))
""", tmp_path)
    assert got == {"hooks_same": True, "blas_attr": True, "ok": True}
