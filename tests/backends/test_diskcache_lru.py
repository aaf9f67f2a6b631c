"""The disk cache's size cap: ``ABSJIT_CACHE_MAX_BYTES`` and least-recently-used eviction
(``absjit/backends/diskcache.py``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from absjit.backends import diskcache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("text, want", [
    ("", diskcache.DEFAULT_MAX_BYTES), ("1000", 1000), ("4k", 4096), ("512M", 512 << 20),
    ("2G", 2 << 30), ("1.5g", 3 << 29), (" 7 ", 7),
])
def test_max_bytes(monkeypatch, text, want):
    monkeypatch.setenv("ABSJIT_CACHE_MAX_BYTES", text)
    assert diskcache.max_bytes() == want


@pytest.mark.parametrize("text", ["0", "-5", "lots", "G", "12Q"])
def test_bad_max_bytes_is_a_clear_error(monkeypatch, text):
    monkeypatch.setenv("ABSJIT_CACHE_MAX_BYTES", text)
    with pytest.raises(ValueError, match="ABSJIT_CACHE_MAX_BYTES"):
        diskcache.max_bytes()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ABSJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ABSJIT_CACHE_MAX_BYTES", raising=False)
    monkeypatch.delenv("ABSJIT_DISABLE_DISK_CACHE", raising=False)
    assert diskcache.usable()
    return tmp_path


def make_entry(name, nbytes, stamp):
    """An authenticated entry of about ``nbytes``, last used at ``stamp`` (seconds)."""
    module = f"absjit_k_{name}"
    diskcache.write_module(module, f"# {name}\n")
    with open(os.path.join(diskcache.numba_dir(), module + ".kernel-1.py311.nbi"), "wb") as f:
        f.write(b"i" * 100)
    with open(os.path.join(diskcache.numba_dir(), module + ".kernel-1.py311.1.nbc"), "wb") as f:
        f.write(b"d" * nbytes)
    diskcache.record_mac(module)
    mac = os.path.join(diskcache.kernel_dir(), module + ".mac")
    os.utime(mac, (stamp, stamp))
    return module


def present(module):
    return os.path.exists(os.path.join(diskcache.kernel_dir(), module + ".py"))


def test_least_recently_used_entries_go_first(cache):
    old, mid, new = (make_entry(n, 10_000, t) for n, t in
                     (("old", 1_000_000), ("mid", 2_000_000), ("new", 3_000_000)))
    sizes = diskcache._entries(diskcache.BACKEND_DIR)
    total = sum(s for s, _ in sizes.values())
    # under the cap: nothing happens
    assert diskcache.evict(limit=total) == 0
    assert all(map(present, (old, mid, new)))
    # just over: the oldest goes (down to 90% of the cap)
    assert diskcache.evict(limit=total - 1) == 1
    assert not present(old) and present(mid) and present(new)
    assert not diskcache.cache_files(old)  # Numba's files go with it
    assert not os.path.exists(os.path.join(diskcache.kernel_dir(), old + ".mac"))


def test_a_use_refreshes_an_entry(cache):
    old, mid, new = (make_entry(n, 10_000, t) for n, t in
                     (("old", 1_000_000), ("mid", 2_000_000), ("new", 3_000_000)))
    # authenticating an entry before a load is a use: "old" becomes the newest
    assert diskcache.verify_or_purge(old)
    total = sum(s for s, _ in diskcache._entries(diskcache.BACKEND_DIR).values())
    diskcache.evict(limit=total - 1)
    assert present(old) and not present(mid) and present(new)


def test_the_entry_just_written_is_kept(cache):
    a = make_entry("a", 10_000, 1_000_000)
    b = make_entry("b", 10_000, 500_000)  # older stamp, but being written now
    assert diskcache.evict(limit=1, keep=b) == 1
    assert present(b) and not present(a)


def test_writing_past_the_cap_evicts(cache, monkeypatch):
    entries = [make_entry(f"e{i}", 20_000, 1_000_000 + i) for i in range(4)]
    monkeypatch.setenv("ABSJIT_CACHE_MAX_BYTES", "50k")
    newest = make_entry("fresh", 20_000, 2_000_000)  # record_mac enforces the cap
    assert present(newest)
    kept = [e for e in entries if present(e)]
    assert kept == entries[len(entries) - len(kept):]  # the newest survive, in order
    size = sum(s for s, _ in diskcache._entries(diskcache.BACKEND_DIR).values())
    assert size <= 50 * 1024
    assert diskcache.info()["max_bytes"] == 50 * 1024


WRITER = r"""
import json, sys
import numpy as np
import absjit, absjit.numpy as jnp
from absjit.backends.numba_cpu import stats
k = int(sys.argv[1])
x = np.arange(5, dtype=np.float32)
for i in range(4):  # distinct kernels: each a write and an eviction under a tiny cap
    c = float(k * 100 + i)
    out = absjit.jit(lambda v: jnp.sin(v) * c + 1.0)(x)
    assert np.allclose(np.asarray(out), np.sin(x) * np.float32(c) + 1, rtol=1e-6), out
print(json.dumps(dict(stats)))
"""


def test_concurrent_processes_under_a_tiny_cap(tmp_path):
    # two processes writing and evicting in one directory at once: no call fails
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(tmp_path), ABSJIT_CACHE_MAX_BYTES="30k",
               PYTHONPATH=ROOT)
    env.pop("ABSJIT_DISABLE_DISK_CACHE", None)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(k)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in (1, 2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1])["compiles"] >= 1
    entries = _entries_of(tmp_path)
    # 8 kernels were written: some were evicted. The cap is below one entry's size, so
    # each eviction keeps only its own process's new entry, and two processes evicting
    # at once may each delete the other's: none left is a legal end state (a deleted
    # entry costs a later call a compile, never a failure)
    assert len(entries) < 8
    largest = max((s for s, _ in entries.values()), default=0)
    # at most the cap plus what the last writers added since their own eviction
    assert sum(s for s, _ in entries.values()) <= 30 * 1024 + 2 * largest


def _entries_of(root):
    old = os.environ.get("ABSJIT_CACHE_DIR")
    os.environ["ABSJIT_CACHE_DIR"] = str(root)
    try:
        return diskcache._entries(diskcache.BACKEND_DIR)
    finally:
        if old is None:
            del os.environ["ABSJIT_CACHE_DIR"]
        else:
            os.environ["ABSJIT_CACHE_DIR"] = old


def test_a_save_landing_between_mac_and_write_does_not_leave_a_stale_mac(cache, monkeypatch):
    # Two processes compile one kernel: A hashes the files, B replaces the data file
    # with its own (equivalent, different bytes) and records its MAC, then A's MAC
    # lands. The entry must still authenticate afterwards.
    module = make_entry("race", 1000, 1_000_000)
    data = os.path.join(diskcache.numba_dir(), module + ".kernel-1.py311.1.nbc")
    real_mac = diskcache._mac
    calls = []

    def mac_then_other_writer_saves(*args):
        value = real_mac(*args)
        if not calls:
            with open(data, "wb") as f:
                f.write(b"e" * 1000)  # B's save, after A has hashed
        calls.append(value)
        return value

    monkeypatch.setattr(diskcache, "_mac", mac_then_other_writer_saves)
    diskcache.record_mac(module)
    monkeypatch.setattr(diskcache, "_mac", real_mac)
    assert len(calls) >= 3  # it noticed and wrote again
    assert diskcache.verify_or_purge(module)


def test_numbas_temporary_files_are_not_part_of_an_entry(cache):
    module = make_entry("tmp", 1000, 1_000_000)
    partial = os.path.join(diskcache.numba_dir(),
                           module + ".kernel-1.py311.nbi.tmp.0123456789abcdef")
    with open(partial, "wb") as f:
        f.write(b"half a save")
    assert partial not in diskcache.cache_files(module)
    assert diskcache.verify_or_purge(module)  # another writer's save in progress
    diskcache.purge(module)
    assert not os.path.exists(partial)  # but a purge removes it with the rest
