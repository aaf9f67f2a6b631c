"""Helpers generated kernels call (LAPACK, BLAS, FFT, sort and math functions) are kept
in the disk cache: compiled once per machine, loaded by the next process even for a
program it has never compiled, and authenticated like kernels. Each test runs new
interpreters, since what matters is what a new process compiles."""
from __future__ import annotations

import glob
import json
import os
import pathlib
import subprocess
import sys

SCRIPT = r"""
import json, os
import numpy as np
import absjit, absjit.numpy as jnp
from absjit.backends.numba_cpu.kernels import fastmath_kernels as fk, lapack_kernels as lk
n = int(os.environ["ORDER"])
rng = np.random.default_rng(n)
if os.environ["PROGRAM"] == "solve":
    a = rng.standard_normal((8, n, n)) + n * np.eye(n)
    b = rng.standard_normal((8, n, 2))
    x = absjit.jit(jnp.linalg.solve)(a.astype(np.float32), b.astype(np.float32))
    ok = bool(np.allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-3, atol=1e-4))
    helpers = {"lu": lk._lapack_lu, "trsm": lk._blas_trsm}
else:  # one cheap helper
    x = rng.standard_normal(n).astype(np.float32)
    ok = bool(np.allclose(np.asarray(absjit.jit(jnp.exp)(x)), np.exp(x), rtol=1e-6))
    helpers = {"exp": fk._exp_float32}
counts = {name: [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())]
          for name, d in helpers.items()}
print(json.dumps({"ok": ok, "counts": counts, "info": absjit.cache.info()}))
"""


def entry(tmp_path, helper, suffix):
    """The files of a helper's entries (one per signature) with ``suffix``."""
    return [pathlib.Path(p) for p in sorted(glob.glob(
        str(tmp_path / "numba_cpu" / f"absjit_k_helper_{helper}_*{suffix}")))]


def run(tmp_path, order, program="exp"):
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path), ORDER=str(order),
               PROGRAM=program, ABSJIT_TIERING="0")
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_new_program_in_a_new_process_loads_its_helpers(tmp_path):
    first = run(tmp_path, 24, "solve")
    assert first["ok"]
    assert first["counts"] == {"lu": [0, 1], "trsm": [0, 1]}  # compiled, then saved
    assert first["info"]["helpers"] >= 2 and first["info"]["kernels"] >= 1
    # another order is another kernel, which compiles; the helpers it calls load
    second = run(tmp_path, 20, "solve")
    assert second["ok"]
    assert second["counts"] == {"lu": [1, 0], "trsm": [1, 0]}
    assert second["info"]["kernels"] > first["info"]["kernels"]


def test_a_helper_entry_that_does_not_authenticate_is_never_read(tmp_path):
    assert run(tmp_path, 5)["counts"] == {"exp": [0, 1]}
    assert run(tmp_path, 6)["counts"] == {"exp": [1, 0]}
    # Numba's files are intact and loadable; only their MAC is wrong (as if another
    # user had written them): they must not be read
    (mac,) = entry(tmp_path, "fastmath_kernels__exp_float32", ".mac")
    mac.write_text("0" * 64)
    got = run(tmp_path, 7)
    assert got["ok"] and got["counts"] == {"exp": [0, 1]}
    assert run(tmp_path, 8)["counts"] == {"exp": [1, 0]}  # rebuilt and signed
    # a damaged data file is dropped too, and the call still answers
    (data,) = glob.glob(str(tmp_path / "numba_cpu" / "__pycache__" /
                            "absjit_k_helper_fastmath_kernels__exp_float32_*.nbc"))
    with open(data, "r+b") as fh:
        fh.seek(os.path.getsize(data) // 2)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0xFF]))
    got = run(tmp_path, 9)
    assert got["ok"] and got["counts"] == {"exp": [0, 1]}


def test_a_new_version_key_starts_the_entry_afresh(tmp_path):
    run(tmp_path, 5)
    (stub,) = entry(tmp_path, "fastmath_kernels__exp_float32", ".py")
    text = stub.read_text()
    assert "absjit helper" in text and "numba_cpu" in text  # the backend's version key
    stub.write_text(text.replace("numba_cpu", "numba_cpu (another build)"))
    got = run(tmp_path, 6)
    assert got["ok"] and got["counts"] == {"exp": [0, 1]}
    assert stub.read_text() == text


def test_helpers_are_saved_again_after_the_cache_is_cleared(tmp_path):
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path), ABSJIT_TIERING="0")
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    script = r"""
import numpy as np, absjit, absjit.numpy as jnp, absjit.cache
absjit.config.update("enable_x64", True)
x = np.array([3.0, np.nan, -1.0, 2.0])
absjit.jit(jnp.sort)(x.astype(np.float32))
absjit.cache.clear()
# the same helper, for another element type: compiled after the clear
assert np.array_equal(np.asarray(absjit.jit(jnp.sort)(x)), np.sort(x), equal_nan=True)
"""
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    # the float64 entry, with its module file and MAC (the clear took float32's)
    assert len(entry(tmp_path, "kernels_sort__sort_lt_float", ".py")) == 1
    assert len(entry(tmp_path, "kernels_sort__sort_lt_float", ".mac")) == 1


def test_each_signature_is_an_entry_of_its_own(tmp_path):
    # Numba numbers a function's data files in one index: two processes saving two
    # signatures at once would take the same number. One entry per signature cannot.
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path), ABSJIT_TIERING="0")
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    script = r"""
import json, os, numpy as np, absjit, absjit.numpy as jnp
from absjit.backends.numba_cpu.kernels import kernels_sort as ks
absjit.config.update("enable_x64", True)
x = np.array([3.0, np.nan, -1.0, 2.0, -0.0, 5.0])[:int(os.environ["N"])]  # a new kernel
for dt in (np.float32, np.float64):
    assert np.array_equal(np.asarray(absjit.jit(jnp.sort)(x.astype(dt))),
                          np.sort(x.astype(dt)), equal_nan=True)
d = ks._sort_lt_float
print(json.dumps([sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())]))
"""
    counts = []
    for n in (4, 6):
        proc = subprocess.run([sys.executable, "-c", script], env=dict(env, N=str(n)),
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        counts.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert counts == [[0, 2], [2, 0]]
    assert len(entry(tmp_path, "kernels_sort__sort_lt_float", ".mac")) == 2
