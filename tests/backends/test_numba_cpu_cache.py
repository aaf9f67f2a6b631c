"""The cpu backend's disk cache: across processes, after corruption, under races."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

import absjit.cache

SCRIPT = r"""
import json, sys
import numpy as np
import absjit, absjit.numpy as jnp
from absjit.backends.numba_cpu import stats
f = absjit.jit(lambda x: jnp.tanh(x) * 3.25 + 1.0, backend="cpu")
out = f(np.arange(4, dtype=np.float32))
ref = np.tanh(np.arange(4, dtype=np.float32)) * 3.25 + 1.0
assert np.allclose(np.asarray(out), ref), out
print(json.dumps({"compiles": stats["compiles"], "disk_hits": stats["disk_hits"]}))
"""


def run(cache_dir, script=SCRIPT, env_extra=None):
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(cache_dir))
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_second_process_loads_without_compiling(tmp_path):
    assert run(tmp_path) == {"compiles": 1, "disk_hits": 0}
    assert run(tmp_path) == {"compiles": 0, "disk_hits": 1}
    kdir = tmp_path / "numba_cpu"
    assert oct(os.stat(kdir).st_mode & 0o777) == oct(0o700)
    assert glob.glob(str(kdir / "absjit_k_*.py"))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "module", "delete_sum"])
def test_corrupted_entries_are_dropped_and_rebuilt(tmp_path, damage):
    run(tmp_path)
    kdir = tmp_path / "numba_cpu"
    numba_files = glob.glob(str(kdir / "__pycache__" / "*"))
    assert numba_files
    if damage == "truncate":
        for p in numba_files:
            with open(p, "r+b") as f:
                f.truncate(max(os.path.getsize(p) // 3, 1))
    elif damage == "garbage":
        for p in numba_files:
            with open(p, "wb") as f:
                f.write(os.urandom(200))
    elif damage == "module":
        for p in glob.glob(str(kdir / "absjit_k_*.py")):
            with open(p, "w") as f:
                f.write("raise SystemExit('foreign module')\n")
    else:
        for p in glob.glob(str(kdir / "*.sum")):
            os.unlink(p)
    assert run(tmp_path) == {"compiles": 1, "disk_hits": 0}  # rebuilt, not trusted
    assert run(tmp_path) == {"compiles": 0, "disk_hits": 1}  # and good again


def test_concurrent_writers_both_succeed(tmp_path):
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path))
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert run(tmp_path)["compiles"] == 0


def test_works_after_fork(tmp_path):
    script = SCRIPT.replace("print(json.dumps", "import os\npid = os.fork()\n"
                            "if pid == 0:\n"
                            "    g = absjit.jit(lambda x: x * 5.5, backend='cpu')\n"
                            "    ok = float(np.asarray(g(np.float32(2.0)))) == 11.0\n"
                            "    ok = ok and np.allclose(np.asarray(f(np.arange(4, dtype=np.float32))), ref)\n"
                            "    os._exit(0 if ok else 3)\n"
                            "_, status = os.waitpid(pid, 0)\n"
                            "assert os.waitstatus_to_exitcode(status) == 0\n"
                            "print(json.dumps")
    run(tmp_path, script)


def test_disabled_writes_nothing(tmp_path):
    run(tmp_path, env_extra={"ABSJIT_DISABLE_DISK_CACHE": "1"})
    assert not (tmp_path / "numba_cpu").exists() or not glob.glob(
        str(tmp_path / "numba_cpu" / "*.py"))


def test_info_and_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("ABSJIT_CACHE_DIR", str(tmp_path))
    run(tmp_path)
    info = absjit.cache.info()
    assert info["directory"] == str(tmp_path)  # one folder per backend below it
    assert os.path.isdir(tmp_path / "numba_cpu")
    assert info["kernels"] == 1 and info["bytes"] > 0 and info["enabled"]
    absjit.cache.clear()
    assert absjit.cache.info()["kernels"] == 0
    assert run(tmp_path)["compiles"] == 1
