"""Helpers generated kernels call (LAPACK, BLAS, FFT, sort and math functions) are kept
in the disk cache: compiled once per machine, loaded by the next process even for a
program it has never compiled, and authenticated like kernels. Each test runs new
interpreters, since what matters is what a new process compiles."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

SOLVE = r"""
import json, os
import numpy as np
import absjit, absjit.numpy as jnp
from absjit.backends.numba_cpu import lapack_kernels as lk
n = int(os.environ["ORDER"])
rng = np.random.default_rng(n)
a = rng.standard_normal((8, n, n)) + n * np.eye(n)
b = rng.standard_normal((8, n, 2))
x = absjit.jit(jnp.linalg.solve)(a.astype(np.float32), b.astype(np.float32))
ok = bool(np.allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-3, atol=1e-4))
counts = {name: [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())]
          for name, d in (("lu", lk._lapack_lu), ("trsm", lk._blas_trsm))}
print(json.dumps({"ok": ok, "counts": counts, "info": absjit.cache.info()}))
"""


def run(tmp_path, order):
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path), ORDER=str(order),
               ABSJIT_TIERING="0")
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", SOLVE], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_new_program_in_a_new_process_loads_its_helpers(tmp_path):
    first = run(tmp_path, 24)
    assert first["ok"]
    assert first["counts"] == {"lu": [0, 1], "trsm": [0, 1]}  # compiled, then saved
    assert first["info"]["helpers"] >= 2 and first["info"]["kernels"] >= 1
    # another order is another kernel, which compiles; the helpers it calls load
    second = run(tmp_path, 20)
    assert second["ok"]
    assert second["counts"] == {"lu": [1, 0], "trsm": [1, 0]}
    assert second["info"]["kernels"] > first["info"]["kernels"]


def test_a_helper_entry_that_does_not_authenticate_is_never_read(tmp_path):
    run(tmp_path, 24)
    # Numba's files are intact and loadable; only their MAC is wrong (as if another
    # user had written them): they must not be read
    mac = tmp_path / "numba_cpu" / "absjit_k_helper_lapack_kernels__lapack_lu.mac"
    mac.write_text("0" * 64)
    got = run(tmp_path, 20)
    assert got["ok"]
    assert got["counts"]["lu"] == [0, 1]
    assert got["counts"]["trsm"] == [1, 0]  # other entries are unaffected
    assert run(tmp_path, 18)["counts"]["lu"] == [1, 0]  # rebuilt and signed
    # a damaged data file is dropped too, and the call still answers
    (data,) = glob.glob(str(tmp_path / "numba_cpu" / "__pycache__" /
                            "absjit_k_helper_lapack_kernels__lapack_lu.*.nbc"))
    with open(data, "r+b") as fh:
        fh.seek(os.path.getsize(data) // 2)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0xFF]))
    got = run(tmp_path, 22)
    assert got["ok"] and got["counts"]["lu"] == [0, 1]


def test_a_new_version_key_starts_the_entry_afresh(tmp_path):
    run(tmp_path, 24)
    stub = tmp_path / "numba_cpu" / "absjit_k_helper_lapack_kernels__lapack_lu.py"
    text = stub.read_text()
    assert "absjit helper" in text and "numba_cpu" in text  # the backend's version key
    stub.write_text(text.replace("numba_cpu", "numba_cpu (another build)"))
    got = run(tmp_path, 20)
    assert got["ok"] and got["counts"]["lu"] == [0, 1]
    assert stub.read_text() == text


def test_helpers_are_saved_again_after_the_cache_is_cleared(tmp_path):
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path), ABSJIT_TIERING="0")
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    script = r"""
import numpy as np, absjit, absjit.numpy as jnp, absjit.cache
absjit.config.update("enable_x64", True)
a = np.eye(20) * 2
absjit.jit(jnp.linalg.solve)(a.astype(np.float32), np.ones((20, 1), np.float32))
absjit.cache.clear()
# the same helpers, for another element type: compiled after the clear
absjit.jit(jnp.linalg.solve)(a, np.ones((20, 1)))
"""
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    entry = tmp_path / "numba_cpu" / "absjit_k_helper_lapack_kernels__lapack_lu"
    assert entry.with_suffix(".py").exists() and entry.with_suffix(".mac").exists()
