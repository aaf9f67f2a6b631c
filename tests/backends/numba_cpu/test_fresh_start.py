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

import numpy as np

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


# Kernels of every kind the cpu backend makes, run in two new processes that share a
# disk cache: the second loads every kernel and must compute the same numbers without
# Numba's lowering registries (absjit skips the context refresh a cache load would do).
_KINDS = r"""
from absjit import lax, random
from absjit.backends.numba_cpu import tiers
rng = np.random.default_rng(0)
x = rng.standard_normal(300_000).astype(np.float32)
A = rng.standard_normal((200, 300)).astype(np.float32)
B = rng.standard_normal((300, 400)).astype(np.float32)
S = rng.standard_normal((64, 64))
S = S @ S.T + 64 * np.eye(64)
img = rng.standard_normal((2, 16, 12, 12)).astype(np.float32)
ker = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
progs = {
 "selu": (lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67), (x,)),
 "dot_relu": (lambda a, b: jnp.maximum(a @ b, 0.0), (A, B)),
 "big_dot": (lambda a: a @ a.T, (rng.standard_normal((512, 512)).astype(np.float32),)),
 "sort": (lambda x: jnp.sort(x)[::7] + jnp.argsort(x[:100]).astype(jnp.float32).sum(), (x,)),
 "cumsum_argmax": (lambda x: (jnp.cumsum(x), jnp.argmax(x), x.max(), (x * x).sum()), (x,)),
 "complex": (lambda x: jnp.abs(jnp.exp(1j * x) * (2 + 3j)) + jnp.angle(x + 1j), (x,)),
 "half": (lambda x: (x.astype(jnp.float16) * 3 + 1).astype(jnp.float32), (x,)),
 "random": (lambda k: random.normal(k, (1000,)) + random.uniform(k, (1000,)), (random.PRNGKey(3),)),
 "conv": (lambda a, w: lax.conv_general_dilated(a, w, (1, 1), "SAME"), (img, ker)),
 "linalg": (lambda s: (jnp.linalg.inv(s), jnp.linalg.cholesky(s), jnp.linalg.solve(s, s[0])), (S,)),
 "loops": (lambda x: lax.fori_loop(0, 50, lambda i, c: c * 0.99 + jnp.sin(c), x[:1000]), (x,)),
 "while": (lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (0, 1.0)), (37,)),
 "scatter": (lambda x: jnp.zeros(100).at[(jnp.abs(x[:5000]) * 30).astype(jnp.int32) % 100].add(x[:5000]), (x,)),
 "trans": (lambda x: (jnp.tanh(x), jnp.sin(x), jnp.log1p(jnp.abs(x)), jnp.power(jnp.arange(10), 3)), (x,)),
 "rows": (lambda a: jax_softmax(a), (A,)),
 "ranked": (None, (x,)),
}
def jax_softmax(a):
    e = jnp.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
out = {}
for name, (fn, args) in progs.items():
    if name == "ranked":
        f = absjit.jit(lambda x: jnp.exp(x) * 2 - x, abstraction="ranked")
        r1 = f(args[0])
        tiers.promote_all(); tiers.wait()
        res = (r1, f(args[0][:1000]), f(args[0]))
    else:
        res = absjit.jit(fn)(*args)
    leaves = absjit.tree_util.tree_leaves(res)
    out[name] = [np.asarray(l).astype(np.float64).ravel()[:50].tolist() for l in leaves]
from absjit.backends.numba_cpu import stats
print(json.dumps({"out": out, "registries": "numba.np.npyimpl" in sys.modules,
                  "stats": {k: stats[k] for k in ("compiles", "disk_hits")}}))
"""


def test_cached_kernels_of_every_kind_run_without_numba_registries(tmp_path):
    first = run(_KINDS, tmp_path)
    second = run(_KINDS, tmp_path)
    assert first["stats"]["compiles"] > 10 and first["registries"]
    assert second["stats"] == {"compiles": 0,
                               "disk_hits": first["stats"]["compiles"]}
    assert not second["registries"]
    assert second["out"] == first["out"]


def test_new_compile_after_cached_loads(tmp_path):
    # a process that loaded kernels without the registries, then compiles a new one
    script = r"""
x = np.linspace(-2, 2, 300_000, dtype=np.float32)
f = absjit.jit(lambda v: jnp.tanh(v) * 3 + jnp.sort(v)[::-1])
first = np.asarray(f(x))
g = absjit.jit(lambda v: jnp.cumsum(jnp.exp(v))[-1] + v.max())
got = float(g(x)) if "{new}" == "yes" else 0.0
from absjit.backends.numba_cpu import stats
print(json.dumps({"f": first[::1000].tolist(), "g": got,
                  "registries": "numba.np.npyimpl" in sys.modules,
                  "compiles": stats["compiles"], "hits": stats["disk_hits"]}))
"""
    cold = run(script.replace("{new}", "no"), tmp_path)
    warm = run(script.replace("{new}", "yes"), tmp_path)
    x = np.linspace(-2, 2, 300_000, dtype=np.float32)
    assert warm["f"] == cold["f"] and warm["hits"] >= 1 and warm["compiles"] >= 1
    assert warm["registries"]  # the new compile refreshed Numba's context
    assert abs(warm["g"] - (np.cumsum(np.exp(x), dtype=np.float64)[-1] + 2.0)) < 1e-3 * warm["g"]
