"""Numba's threads run on TBB wherever the ``tbb`` wheel is installed, a virtual
environment included: the wheel puts ``libtbb.so.12`` in the environment's ``lib/``,
which the dynamic loader does not search, and without TBB Numba picks ``omp``, whose
forked children hang (``absjit.backends.numba_cpu.parallel.threads``)."""
from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys

import pytest

from absjit.backends.numba_cpu.parallel import threads

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


def _tbb_installed():
    try:
        importlib.metadata.distribution("tbb")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


needs_tbb = pytest.mark.skipif(not (_tbb_installed() and sys.platform == "linux"),
                               reason="the tbb wheel is not installed (Linux test)")

# A prange kernel starts Numba's threading layer; absjit chooses it first.
LAYER = r"""
import json, sys
from absjit.backends.numba_cpu.parallel import threads
asked = threads.configure_layer()
import numba

@numba.njit(parallel=True)
def total(n):
    s = 0
    for i in numba.prange(n):
        s += i
    return s

assert total(1000) == 499500
print(json.dumps({"asked": asked, "layer": numba.threading_layer(),
                  "paths": threads.tbb_library_paths()}))
"""


def run(python, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    env["PYTHONPATH"] = ROOT
    env.update(env_extra or {})
    proc = subprocess.run([python, "-c", LAYER], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@needs_tbb
def test_tbb_library_paths_find_the_wheels_library():
    paths = threads.tbb_library_paths()
    assert paths and all(os.path.isfile(p) and p.endswith("libtbb.so.12") for p in paths)


@needs_tbb
def test_layer_is_tbb_when_the_tbb_wheel_is_installed():
    # In CI this interpreter is the README's virtual environment, which holds the wheel.
    got = run(sys.executable)
    assert got["asked"] == "tbb" and got["layer"] == "tbb", got


def test_preload_is_a_no_op_without_a_library(monkeypatch):
    monkeypatch.setattr(threads, "tbb_library_paths", lambda: [])
    monkeypatch.setattr(threads, "_TBB_NAMES", {sys.platform: "libabsjit-no-such-tbb.so.0"})
    assert threads._preload_tbb() is False


def test_wheel_layout_is_found_by_prefix(tmp_path, monkeypatch):
    """The wheel's layout in a venv: ``<prefix>/lib/libtbb.so.12``."""
    if sys.platform not in threads._TBB_NAMES:
        pytest.skip("no TBB name for this platform")
    name = threads._TBB_NAMES[sys.platform]
    lib = tmp_path / ("Library/bin" if sys.platform == "win32" else "lib")
    lib.mkdir(parents=True)
    (lib / name).write_bytes(b"")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    assert str(lib / name) in threads.tbb_library_paths()
