"""Shared test fixtures.

``mode`` parametrizes a test over every way absjit can run a function: ``eager`` (op by
op, the NumPy reference interpreter) and ``jit-<backend>`` for each available backend
(``jit-xla`` where jax is installed: XLA on the CPU platform; ``jit-cuda`` only when
``ABSJIT_TEST_CUDA=1`` is set on a machine where the cuda backend runs).
Write ``mode(f)(*args)`` instead of ``f(*args)`` to get all of them.
"""
from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Compiled kernels go to a per-session directory, not the user's cache (the disk-cache
# tests make their own directories). Set before absjit compiles anything.
_SESSION_CACHE = tempfile.mkdtemp(prefix="absjit-test-cache-")
os.environ.setdefault("ABSJIT_CACHE_DIR", _SESSION_CACHE)
# Every miss compiles before it returns, so a test of the cpu backend runs its kernels
# (with tiering on, a first call would run on the NumPy interpreter);
# tests/jit/test_tiering.py turns tiering on where it tests it.
os.environ.setdefault("ABSJIT_TIERING", "0")
# Tier 0's block evaluator compiles once per machine (~10 s a float type); tests where
# tiering is on run tier 0 on NumPy alone, and
# tests/backends/numba_cpu/evaluator/test_block_evaluator.py tests the evaluator.
os.environ.setdefault("ABSJIT_TIER0_EVALUATOR", "0")

import absjit  # noqa: E402

# Hypothesis examples per test; under compiling backends every new shape is a new
# kernel (~0.1-0.5 s of Numba compile on this hardware), so those get fewer.
EXAMPLES = int(os.environ.get("ABSJIT_HYPOTHESIS_EXAMPLES", "25"))
COMPILED_EXAMPLES = int(os.environ.get("ABSJIT_HYPOTHESIS_COMPILED_EXAMPLES", "6"))
_COMPILING_MODES = ("jit-cpu", "jit-cuda", "jit-xla")

settings.register_profile(
    "default", max_examples=EXAMPLES,
    deadline=None,
    # ``mode`` and ``rng`` are stateless per example (a transform, a seeded generator
    # only used for setup), so sharing them across generated inputs is intended.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("default")


def _modes():
    """``jit-cuda`` only with ``ABSJIT_TEST_CUDA=1``: on a GPU it would add a mode to
    hundreds of op tests (``tests/backends/numba_cuda/test_cuda.py`` covers the backend)."""
    modes = ["eager"]
    backends = getattr(absjit, "backends", None)
    if backends is not None:
        with_cuda = os.environ.get("ABSJIT_TEST_CUDA", "0") not in ("", "0")
        modes += [f"jit-{name}" for name in backends() if name != "cuda" or with_cuda]
    return modes


@pytest.fixture(params=_modes())
def mode(request):
    """A function transform: identity for eager, ``jit(..., backend=b)`` otherwise."""
    name = request.param
    if name == "eager":
        return lambda f: f
    backend = name[len("jit-"):]
    return lambda f: absjit.jit(f, backend=backend)


@pytest.fixture(autouse=True)
def _reset_x64():
    before = absjit.config.enable_x64
    yield
    absjit.config.update("enable_x64", before)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(params=["float32", "float64"])
def float_dtype(request):
    """np.float32, then np.float64 with 64-bit types on in absjit and in JAX (which
    must be installed) for the length of the test."""
    if request.param == "float32":
        yield np.float32
        return
    import jax
    absjit.config.update("enable_x64", True)  # (_reset_x64 restores it)
    jax.config.update("jax_enable_x64", True)
    try:
        yield np.float64
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Run hypothesis tests parametrized with a compiling ``mode`` on fewer examples.

    Hypothesis binds a test's settings when the module is imported, so the only place
    to change them per parametrization is the settings object on the test function
    for the duration of this one call.
    """
    fn = getattr(item, "obj", None)
    current = getattr(fn, "_hypothesis_internal_use_settings", None)
    callspec = getattr(item, "callspec", None)
    mode = callspec.params.get("mode") if callspec is not None else None
    if current is None or mode not in _COMPILING_MODES \
            or current.max_examples <= COMPILED_EXAMPLES:
        yield
        return
    fn._hypothesis_internal_use_settings = settings(current, max_examples=COMPILED_EXAMPLES)
    try:
        yield
    finally:
        fn._hypothesis_internal_use_settings = current


def _release_memory():
    """Drop what compiled code this process holds for other modules' programs (absjit's
    and JAX's caches; a later module that needs a kernel again loads it from the
    session's disk cache) and give freed memory back to the system: a worker runs
    thousands of tests, and without this its memory only grows."""
    import gc
    import sys
    jax = sys.modules.get("jax")
    if jax is not None and hasattr(jax, "clear_caches"):
        jax.clear_caches()
    from absjit.jit import compile_cache
    compile_cache.clear()
    backends = sys.modules.get("absjit.backends.base")
    if backends is not None:
        for name in ("cpu",):
            try:
                backends.get_backend(name).clear_memory()
            except Exception:  # noqa: BLE001 - not available here
                pass
    gc.collect()
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _resident_bytes() -> int:
    """This process's resident memory (0 where ``/proc`` does not tell)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


# A worker releases memory after a test module once it holds more than this; releasing
# after every module costs about a second each time (JAX's cache clear alone is half
# of it), some 150 s of a whole run.
RELEASE_ABOVE_BYTES = int(float(os.environ.get("ABSJIT_TEST_RELEASE_ABOVE_GB", "2"))
                          * (1 << 30))

if os.environ.get("ABSJIT_TEST_RELEASE_MEMORY", "1") != "0":
    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(item, nextitem):
        if nextitem is None or nextitem.path != item.path:
            resident = _resident_bytes()
            if resident == 0 or resident > RELEASE_ABOVE_BYTES:
                _release_memory()


# -- the slow tier's list of heavier variants -------------------------------------------
SLOW_VARIANTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slow_variants.txt")
# The one group of slow_variants.txt whose tests may move whole (not one variant of many).
WHOLE_TESTS_GROUP = "Whole example programs"


def read_slow_variants(path=SLOW_VARIANTS):
    """The groups of ``tests/slow_variants.txt``, as (header, node ids) pairs.

    Groups are separated by blank lines; a group's leading ``#`` lines are its header
    (the reason its variants are in the slow tier), its other lines node ids. A block of
    comment lines only (the file's preamble) is no group."""
    groups, block = [], []
    with open(path, encoding="utf-8") as f:
        for line in list(f) + [""]:
            line = line.strip()
            if line:
                block.append(line)
                continue
            ids = [entry for entry in block if not entry.startswith("#")]
            if ids:
                header = []
                for entry in block:
                    if not entry.startswith("#"):
                        break
                    header.append(entry.lstrip("#").strip())
                groups.append((" ".join(header), ids))
            block = []
    return groups


_SLOW_IDS = frozenset(i for _, ids in read_slow_variants() for i in ids)
# Every test this session collected (whether or not -m/-k then deselect it): node id ->
# (marked slow in its test file, its ``mode`` parameter or None); and the node ids of the
# modules and classes whose tests were all collected. tests/test_slow_tier.py reads them.
COLLECTED: dict = {}
COLLECTED_CONTAINERS: set = set()


def pytest_collectreport(report):
    if not report.passed:
        return
    COLLECTED_CONTAINERS.add(report.nodeid)
    for node in report.result:
        if isinstance(node, pytest.Item):
            callspec = getattr(node, "callspec", None)
            COLLECTED[node.nodeid] = (node.get_closest_marker("slow") is not None,
                                      callspec.params.get("mode") if callspec else None)


@pytest.hookimpl(tryfirst=True)  # before ``-m 'not slow'`` deselects
def pytest_collection_modifyitems(config, items):
    """The variants listed in tests/slow_variants.txt are the slow tier."""
    for item in items:
        if item.nodeid in _SLOW_IDS:
            item.add_marker(pytest.mark.slow)
    dump = os.environ.get("ABSJIT_SLOW_TIER_DUMP")
    if dump:  # for tests/test_slow_tier.py, from a collecting subprocess
        import json
        with open(dump, "w", encoding="utf-8") as f:
            json.dump({"collected": COLLECTED, "containers": sorted(COLLECTED_CONTAINERS)}, f)


def pytest_report_header(config):
    """The versions the suite runs with, at the top of every report."""
    from absjit.api_contexts import library_versions
    return "libraries: " + ", ".join(f"{name} {v}" for name, v in library_versions().items())


_RSS_LOG = os.environ.get("ABSJIT_TEST_RSS_LOG")


if _RSS_LOG:  # opt-in: each test's duration and the worker's peak memory after it
    import resource
    import time

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        t0, c0 = time.perf_counter(), time.process_time()
        yield
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(f"{_RSS_LOG}.{worker}", "a") as log:
            log.write(f"{item.nodeid}\t{time.perf_counter() - t0:.3f}\t"
                      f"{time.process_time() - c0:.3f}\t{peak_mb:.0f}\n")


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)
