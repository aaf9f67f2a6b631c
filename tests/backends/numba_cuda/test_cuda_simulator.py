"""The cuda backend where no GPU is: its test module under Numba's CUDA simulator, the
errors when it cannot run, and the NumPy pin of the ``cuda`` extra.

``NUMBA_ENABLE_CUDASIM`` must be set before ``numba.cuda`` is first imported, and
turning the simulator on in this process would add a ``jit-cuda`` mode to every test
that uses the ``mode`` fixture; so ``test_cuda.py`` runs in a subprocess with the
simulator on. On a machine with a GPU ``test_cuda.py`` is also collected directly
(see ``conftest.py``) and runs on the real device.
"""
from __future__ import annotations

import configparser
import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

import absjit
from absjit.backends.numba_cuda import compat
from absjit.backends.numba_cuda import BACKEND, runtime
from absjit.errors import BackendUnavailableError

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_cuda_suite_passes_under_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W",
         "ignore::RuntimeWarning", str(pathlib.Path(__file__).with_name("test_cuda.py"))],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    passed = re.search(r"(\d+) passed", out)
    assert passed and int(passed.group(1)) >= 30, out[-2000:]
    assert "skipped" not in out and "failed" not in out


@pytest.fixture
def no_cuda(monkeypatch):
    """The cuda backend as on a machine without numba-cuda."""
    runtime.unavailable_reason.cache_clear()
    monkeypatch.setattr(runtime, "installed", lambda: False)
    yield
    monkeypatch.undo()
    runtime.unavailable_reason.cache_clear()


def test_missing_numba_cuda_is_a_runtime_error_naming_the_fix(no_cuda):
    assert "cuda" not in absjit.backends()
    for name in ("cuda", "gpu"):
        with pytest.raises(RuntimeError) as info:
            absjit.jit(lambda x: x, backend=name)
        msg = str(info.value)
        assert isinstance(info.value, BackendUnavailableError)
        assert "available backends: " + ", ".join(absjit.backends()) in msg
        assert "pip install 'absjit[cuda]'" in msg and "NUMBA_ENABLE_CUDASIM=1" in msg
    with pytest.raises(RuntimeError, match="numba-cuda is not installed"):
        absjit.devices("gpu")
    with pytest.raises(RuntimeError, match="numba-cuda is not installed"):
        absjit.device_put(1.0, "gpu")
    with pytest.raises(ValueError, match="numba-cuda is not installed"):
        absjit.config.update("default_backend", "cuda")


def test_no_gpu_and_no_simulator_is_a_runtime_error(monkeypatch):
    fake = types.SimpleNamespace(is_available=lambda: False)
    runtime.unavailable_reason.cache_clear()
    monkeypatch.setattr(runtime, "cuda_module", lambda: fake)
    monkeypatch.setattr(runtime, "simulator", lambda: False)
    monkeypatch.setattr(runtime, "_driver_present", lambda: True)
    monkeypatch.setattr(compat, "numba_cuda_problem", lambda: None)
    try:
        assert not BACKEND.is_available()
        with pytest.raises(RuntimeError, match="no CUDA GPU or driver was found.*"
                                               "NUMBA_ENABLE_CUDASIM=1"):
            absjit.jit(lambda x: x, backend="cuda")
    finally:
        monkeypatch.undo()
        runtime.unavailable_reason.cache_clear()


def test_numpy_without_row_stack_is_refused_with_the_pin():
    numpy_25 = types.SimpleNamespace(__version__="2.5.0")  # no row_stack
    msg = compat.numba_cuda_problem(numpy_25, "0.30.4")
    assert "np.row_stack" in msg and "numpy<2.5" in msg
    assert compat.numba_cuda_problem(numpy_25, "0.31.0") is None
    import numpy
    assert compat.numba_cuda_problem(numpy, "0.30.4") is None  # this NumPy is fine


def test_cuda_and_test_extras_pin_a_numpy_numba_cuda_works_with():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    extras = cfg["options.extras_require"]
    for extra in ("cuda", "test"):
        reqs = [r.strip() for r in extras[extra].splitlines() if r.strip()]
        assert any(r.startswith("numba-cuda") for r in reqs), reqs
        assert compat.NUMBA_CUDA_NUMPY_PIN in reqs, reqs
    from packaging.specifiers import SpecifierSet
    pin = SpecifierSet(compat.NUMBA_CUDA_NUMPY_PIN[len("numpy"):])
    assert "2.4.6" in pin and "2.5.0" not in pin


_DISK_CACHED_CHECK = """
import sys
from absjit.backends import diskcache
from absjit.backends.numba_cuda import BACKEND, runtime
runtime.simulator = lambda: False
disp = BACKEND._load("absjit_cuda_0123", "def kernel(a):\\n    a[0] = 1\\n", False)
assert disp.absjit_module == "absjit_cuda_0123"
assert disp._cache._cache_path == diskcache.numba_dir("numba_cuda")
assert sys.argv[1] in disp._cache._cache_path
"""


def test_gpu_kernels_are_disk_cached_inside_absjits_cache(tmp_path):
    # The disk-cache wiring of a real GPU, short of compiling: numba-cuda's kernel cache
    # for a generated module is pinned to <cache root>/numba_cuda/__pycache__. In a
    # process of its own without the simulator (numba-cuda's real ``cuda.jit``, which
    # compiles nothing before a launch), whatever this process's NUMBA_ENABLE_CUDASIM.
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(ABSJIT_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _DISK_CACHED_CHECK, str(cache)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    module = cache / "numba_cuda" / "absjit_cuda_0123.py"
    assert module.read_text().endswith("def kernel(a):\n    a[0] = 1\n")


def test_gpu_scripts_refuse_cleanly_without_a_gpu(tmp_path):
    import runpy
    bench = runpy.run_path(str(ROOT / "scripts" / "gpu_bench.py"))
    out = tmp_path / "figures.json"
    assert bench["main"](["--json", str(out), "--rounds", "1"]) == 2  # no GPU here
    assert not out.exists()
    names = [w[0] for w in bench["WORKLOADS"]]
    assert names == ["selu 1e8 float32", "norm 1e6x100", "norm 10000x10",
                     "dot 100x1000 @ 1000x2000 + relu", "cache-hit x + 1 (10 elements)"]
    check = ROOT / "scripts" / "gpu_check.sh"
    assert subprocess.run(["bash", "-n", str(check)]).returncode == 0
    text = check.read_text()
    for part in ("cuda_ptx_check.py", "tests/backends/numba_cuda/test_cuda.py",
                 "ABSJIT_TEST_CUDA=1",
                 "gpu_bench.py", "unset NUMBA_ENABLE_CUDASIM"):
        assert part in text, part


def test_jit_cuda_mode_is_opt_in(monkeypatch):
    from tests import conftest
    monkeypatch.setattr(absjit, "backends", lambda: ["cpu", "cuda", "interpret"])
    monkeypatch.delenv("ABSJIT_TEST_CUDA", raising=False)
    assert conftest._modes() == ["eager", "jit-cpu", "jit-interpret"]
    monkeypatch.setenv("ABSJIT_TEST_CUDA", "1")
    assert conftest._modes() == ["eager", "jit-cpu", "jit-cuda", "jit-interpret"]


def test_ptx_check_renders_every_kernel_family_with_signatures():
    # scripts/cuda_ptx_check.py needs NVVM to compile; its rendering and typing of the
    # kernels' parameters runs anywhere
    import runpy
    import numba
    check = runpy.run_path(str(ROOT / "scripts" / "cuda_ptx_check.py"))
    from absjit.backends.base import CompileOptions
    from absjit.compiler import compile_to_ir
    sources = []
    for _, fn, example in check["programs"]():
        program = compile_to_ir(absjit.make_jaxpr(fn)(*example), CompileOptions())
        for src, sig in check["kernels_of"](program):
            assert src.count(",") + 1 >= len(sig) and all(
                isinstance(t, numba.types.Type) for t in sig)
            sources.append(src)
    text = "\n".join(sources)
    for part in ("_shfl_down_float64(", "_shfl_down_bool(", "_shfl_down_int32(", "spill0",
                 "if cuda.grid(1) == 0:\n        while True:", "_ld_cbrt_float32("):
        assert part in text, part


def test_host_drivers_know_every_cpu_kernel_name():
    """Scalar code of a cuda host driver runs as Python with the cpu spellings: every
    vectorisable-kernel name the cpu table writes for a float op is bound there."""
    import numpy as np

    from absjit.backends.numba.lower_elementwise import scalar_rules
    from absjit.core.avals import ShapedArray
    ns = runtime.host_namespace()
    seen = set()
    for dt in (np.float32, np.float64):
        aval = ShapedArray((), np.dtype(dt))
        for prim, rule in scalar_rules.items():
            try:
                text = rule(["x"] * 2, [aval] * 2, aval)
            except Exception:  # noqa: BLE001 - rules for other arities or params
                continue
            for name in re.findall(r"\b(_[a-z0-9]+_float(?:32|64))\(", text):
                seen.add(name)
                assert name in ns, (prim, name)
    assert {"_sin_float32", "_tanh_float64", "_exp_float32"} <= seen
