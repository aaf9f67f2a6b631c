"""Backends' cache keys cover the sources their code depends on (absjit/backends/sources.py)."""
from __future__ import annotations

import os

from absjit.backends import sources


def _names(package, also=()):
    top = os.path.dirname(os.path.dirname(sources.__file__))
    return {os.path.relpath(f, top).replace(os.sep, "/")
            for f in sources.source_files(package, also)}


def test_the_cuda_key_covers_the_shared_numba_package_and_not_the_cpu_backend():
    cuda = _names("absjit.backends.numba_cuda", ("absjit.compiler", "absjit.backends.numba"))
    for needed in ("numba_cuda/kernels.py", "numba/render.py", "numba/render_periodic.py",
                   "numba/lower_elementwise.py", "numba/threefry.py", "compiler/lower.py"):
        assert "backends/" + needed in cuda or needed in cuda, needed
    assert not any(n.startswith("backends/numba_cpu/") for n in cuda)


def test_the_cpu_key_covers_its_package_and_the_compiler():
    cpu = _names("absjit.backends.numba_cpu", ("absjit.compiler",))
    here = os.path.dirname(sources.__file__)
    own = {f"backends/numba_cpu/{n}" for n in os.listdir(os.path.join(here, "numba_cpu"))
           if n.endswith(".py")}
    assert own <= cpu and "compiler/plan.py" in cpu
    assert {"backends/numba/render.py", "backends/numba/lower_elementwise.py"} <= cpu
    assert not any(n.startswith("backends/numba_cuda/") for n in cpu)


def test_the_hash_is_stable_and_names_the_files():
    a = sources.source_hash("absjit.backends.xla")
    assert a == sources.source_hash("absjit.backends.xla") and len(a) == 16
    assert a != sources.source_hash("absjit.backends.numba_cuda", ("absjit.compiler",))
