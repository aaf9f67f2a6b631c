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


_SLOW = pytest.mark.slow  # the same path as the default cases, another kind of damage


@pytest.mark.parametrize("damage", ["truncate", pytest.param("garbage", marks=_SLOW),
                                    "module", pytest.param("delete_mac", marks=_SLOW)])
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
        for p in glob.glob(str(kdir / "*.mac")):
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


# -- the trust model (README "disk cache"): attacks and odd files -----------------------
PWNED = r"""
import os, pickle
class Payload:
    def __reduce__(self):
        return (os.system, ("touch {marker}",))
"""


def test_planted_pickle_with_recomputed_checksum_is_never_loaded(tmp_path):
    """An attacker who can write the cache but not read the user's secret replaces
    Numba's index with a pickle that runs code, and writes the SHA-256 of the files
    (all the old cache checked) as the MAC. absjit must refuse it before unpickling."""
    import hashlib
    import pickle
    run(tmp_path)
    kdir = tmp_path / "numba_cpu"
    marker = tmp_path / "pwned"
    ns = {}
    exec(PWNED.format(marker=marker), ns)
    for p in glob.glob(str(kdir / "__pycache__" / "*.nbi")):
        with open(p, "wb") as f:
            f.write(pickle.dumps(ns["Payload"]()))
    for mac in glob.glob(str(kdir / "*.mac")):
        h = hashlib.sha256()
        for p in sorted(glob.glob(str(kdir / "__pycache__" / "*"))):
            h.update(open(p, "rb").read())
        with open(mac, "w") as f:
            f.write(h.hexdigest())
    assert run(tmp_path) == {"compiles": 1, "disk_hits": 0}
    assert not marker.exists()


@pytest.mark.parametrize("mode_or_owner", ["world-writable", "other-owner"])
def test_untrusted_cache_directory_is_refused(tmp_path, mode_or_owner):
    root = tmp_path / "shared"
    root.mkdir()
    if mode_or_owner == "world-writable":
        os.chmod(root, 0o777)
    else:
        if os.geteuid() != 0:
            pytest.skip("making a directory owned by another user needs root")
        os.chown(root, 65534, 65534)
    script = SCRIPT.replace("import json, sys", "import json, sys, warnings\n"
                            "warnings.simplefilter('always')")
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(root))
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"compiles": 1,
                                                                    "disk_hits": 0}
        assert "not using the kernel cache directory" in proc.stderr
    assert not glob.glob(str(root / "**" / "*.nb*"), recursive=True)


@pytest.mark.parametrize("odd", ["fifo", pytest.param("directory", marks=_SLOW),
                                 pytest.param("bad-mac-bytes", marks=_SLOW), "symlink"])
def test_odd_files_are_corrupt_entries_not_hangs(tmp_path, odd, monkeypatch):
    run(tmp_path)
    kdir = tmp_path / "numba_cpu"
    if odd == "bad-mac-bytes":
        for p in glob.glob(str(kdir / "*.mac")):
            with open(p, "wb") as f:
                f.write(b"\xff\xfe\x00 not ascii")
    else:
        for p in glob.glob(str(kdir / "__pycache__" / "*.nbc")):
            os.unlink(p)
            if odd == "fifo":
                os.mkfifo(p)
            elif odd == "directory":
                os.mkdir(p)
            else:
                os.symlink("/etc/passwd", p)
    assert run(tmp_path) == {"compiles": 1, "disk_hits": 0}
    assert run(tmp_path) == {"compiles": 0, "disk_hits": 1}
    monkeypatch.setenv("ABSJIT_CACHE_DIR", str(tmp_path))
    absjit.cache.clear()  # removes whatever is there, directories included
    assert not [p for p in glob.glob(str(tmp_path / "**"), recursive=True)
                if os.path.isfile(p) and not p.endswith(".secret")]


def test_secret_is_private(tmp_path):
    run(tmp_path)
    st = os.stat(tmp_path / ".secret")
    assert st.st_mode & 0o777 == 0o600 and st.st_size == 32


def test_concurrent_clear_never_fails_a_call(tmp_path):
    script = SCRIPT.replace("print(json.dumps", """import threading
stop = False
def clearing():
    while not stop:
        absjit.cache.clear()
t = threading.Thread(target=clearing); t.start()
try:
    for k in range(12):
        g = absjit.jit(lambda x, k=k: x * (1.5 + k) - 2.0, backend="cpu")
        assert float(np.asarray(g(np.float32(2.0)))) == 2.0 * (1.5 + k) - 2.0
finally:
    stop = True; t.join()
print(json.dumps""")
    run(tmp_path, script)


def test_runtime_helpers_write_nothing_into_the_package(tmp_path):
    import absjit.backends.numba_cpu as pkg
    pycache = os.path.join(os.path.dirname(pkg.__file__), "__pycache__")
    before = set(glob.glob(os.path.join(pycache, "*.nb*")))
    script = SCRIPT.replace("lambda x: jnp.tanh(x) * 3.25 + 1.0", "lambda x: jnp.tanh(x @ x)")
    script = script.replace("ref = np.tanh(np.arange(4, dtype=np.float32)) * 3.25 + 1.0",
                            "ref = np.tanh(np.float32(14.0))")
    run(tmp_path, script)
    assert set(glob.glob(os.path.join(pycache, "*.nb*"))) == before


@pytest.mark.parametrize("bad", ["short", "directory", "fifo", "mode"])
def test_clear_renews_an_unusable_secret(tmp_path, monkeypatch, bad):
    monkeypatch.setenv("ABSJIT_CACHE_DIR", str(tmp_path))
    tmp_path.chmod(0o700)
    secret = tmp_path / ".secret"
    if bad == "short":
        secret.write_bytes(b"x" * 5)
        secret.chmod(0o600)
    elif bad == "directory":
        secret.mkdir()
        (secret / "inside").write_bytes(b"y")
    elif bad == "fifo":
        os.mkfifo(secret)
    else:
        secret.write_bytes(os.urandom(32))
        secret.chmod(0o644)
    absjit.cache.clear()
    st = os.lstat(secret)
    assert secret.is_file() and st.st_mode & 0o777 == 0o600 and st.st_size == 32
    # and the cache works: a fresh process compiles once, the next loads it
    assert run(tmp_path) == {"compiles": 1, "disk_hits": 0}
    assert run(tmp_path) == {"compiles": 0, "disk_hits": 1}


def test_clear_keeps_a_good_secret(tmp_path, monkeypatch):
    run(tmp_path)
    before = (tmp_path / ".secret").read_bytes()
    monkeypatch.setenv("ABSJIT_CACHE_DIR", str(tmp_path))
    absjit.cache.clear()
    assert (tmp_path / ".secret").read_bytes() == before
