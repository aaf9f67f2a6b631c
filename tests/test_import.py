"""What ``import absjit`` imports: nothing heavy before it is used.

The import is measured in new interpreters with ``-X importtime``: the assertions are on
which modules it loads (structure), not on how long that takes, which depends on the
machine. ``scripts/import_time.py`` reports the time.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Loaded on first use, never by ``import absjit``: compilers and their runtimes, optional
# dependencies, and absjit's own modules that need them or that few programs use.
HEAVY = ["numba", "numba.cuda", "numba_cuda", "llvmlite", "scipy", "jax", "jaxlib", "dask",
         "distributed", "matplotlib", "pandas", "torch", "cupy", "tbb", "ml_dtypes",
         "absjit.backends.numba_cpu", "absjit.backends.numba_cuda", "absjit.backends.xla",
         "absjit.scipy", "absjit.nn", "absjit.numpy.linalg",
         "absjit.numpy.fft", "absjit.dask", "absjit.example_libraries", "absjit.random",
         "absjit.cache"]


def imported_by(code):
    """The modules ``python -X importtime -c code`` imports beyond an empty program."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))

    def names(program):
        # -X importtime lists what import statements load; sys.modules adds modules
        # loaded through importlib.import_module, which it does not list.
        program += "\nimport sys; print(' '.join(sys.modules))"
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", program], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:") and "cumulative" not in line} | \
            set(proc.stdout.split())

    return names(code) - names("pass")


def test_import_absjit_imports_nothing_heavy():
    mods = imported_by("import absjit")
    assert "absjit" in mods and "absjit.numpy" in mods and "absjit.lax" in mods
    loaded = sorted(m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert loaded == []


@pytest.mark.parametrize("name", ["nn", "random", "scipy", "cache", "example_libraries"])
def test_lazy_submodules_are_attributes(name):
    import absjit
    assert name in dir(absjit)
    assert getattr(absjit, name).__name__ == f"absjit.{name}"


def test_lazy_numpy_submodules():
    import absjit.numpy as jnp
    assert {"linalg", "fft"} <= set(dir(jnp))
    assert jnp.linalg.__name__ == "absjit.numpy.linalg"
    assert jnp.fft.__name__ == "absjit.numpy.fft"
    with pytest.raises(AttributeError):
        jnp.no_such_function  # noqa: B018


def test_backends_load_when_asked_for():
    # A fresh process: listing the backends imports their modules, not their compilers.
    mods = imported_by("import absjit; assert 'cpu' in absjit.backends()")
    assert "absjit.backends.numba_cpu" in mods
    assert "numba" not in mods and "jax" not in mods


def test_concurrent_first_lookups_all_find_the_backend():
    # A fresh process: eight threads ask for the cpu backend before it is imported.
    code = r"""
import threading, absjit
from absjit.backends.base import get_backend
found, errors = [], []
def ask():
    try:
        found.append(get_backend("cpu").name)
    except Exception as e:  # noqa: BLE001
        errors.append(repr(e))
threads = [threading.Thread(target=ask) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert found == ["cpu"] * 8 and not errors, (found, errors)
"""
    imported_by(code)  # asserts the program exits cleanly


def test_ml_dtypes_loads_only_for_bfloat16():
    # float32 work, eager and compiled, never needs bfloat16's module.
    mods = imported_by("import absjit, absjit.numpy as jnp\n"
                       "x = jnp.ones(3) + 1\n"
                       "assert float(absjit.jit(lambda a: (a * 2).sum())(x)) == 12.0\n"
                       "assert jnp.result_type(x, 1.0) == jnp.float32\n"
                       "assert 'bfloat16' in dir(jnp) and 'bfloat16' in jnp.__all__")
    assert "absjit.backends.numba_cpu" in mods and "ml_dtypes" not in mods


@pytest.mark.parametrize("spelling", ["jnp.bfloat16", "absjit.dtypes.bfloat16", "'bfloat16'"])
def test_bfloat16_after_a_fresh_import(spelling):
    # The first use of bfloat16 loads ml_dtypes; it then works eagerly and compiled.
    code = f"""
import absjit, absjit.numpy as jnp
import numpy as np
x = jnp.ones(3, {spelling}) + 1
assert x.dtype == jnp.bfloat16 and x.dtype.name == "bfloat16", x.dtype
assert repr(x) == "Array([2, 2, 2], dtype=bfloat16)", repr(x)
y = absjit.jit(lambda a: a * 2 + 1.5)(x)
assert y.dtype == jnp.bfloat16 and np.asarray(y, np.float32).tolist() == [5.5] * 3
assert str(absjit.make_jaxpr(lambda a: a + 1)(x)).startswith("{{ lambda ; a:bf16[3]")
assert jnp.promote_types(jnp.bfloat16, jnp.float16) == jnp.float32
assert jnp.result_type(x, 1.0) == jnp.bfloat16
assert float(jnp.finfo(jnp.bfloat16).eps) == 2.0 ** -7
z = jnp.asarray(np.float64(1 + 2.0 ** -8 + 2.0 ** -30), dtype=jnp.bfloat16)
assert np.asarray(z).view(np.uint16) == 0x3F81  # float64 -> bfloat16 rounds once
"""
    assert "ml_dtypes" in imported_by(code)


def test_bfloat16_values_made_before_absjit_saw_bfloat16():
    # ml_dtypes imported by the program (or by JAX): its arrays and dtypes are bfloat16
    # to absjit although absjit has not loaded bfloat16 itself.
    code = """
import ml_dtypes, numpy as np
import absjit, absjit.numpy as jnp
a = np.ones(3, ml_dtypes.bfloat16)
assert jnp.result_type(a, np.float16) == np.float32
assert jnp.result_type(a, 1.0) == a.dtype
x = absjit.jit(lambda v: v + 1)(a)
assert x.dtype == a.dtype and jnp.issubdtype(x.dtype, jnp.floating)
"""
    imported_by(code)  # asserts the program exits cleanly
