"""Every example in absjit's docstrings runs and prints what it shows.

Each docstring runs in its module's namespace plus the names a user types first:
``import numpy as np, absjit, absjit.numpy as jnp`` and ``from absjit import lax``. One test per module, so a failure names the
module and the example.
"""
import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax

# Modules that need an optional dependency: they are checked only where it is installed.
_OPTIONAL = {
    "absjit.backends.numba_cuda": "numba.cuda",
    "absjit.backends.xla": "jax",
    "absjit.dask": "dask",
}


def _module_names():
    names = ["absjit"]
    for info in pkgutil.walk_packages(absjit.__path__, prefix="absjit."):
        names.append(info.name)
    return sorted(names)


def _needs(name):
    for prefix, dependency in _OPTIONAL.items():
        if name == prefix or name.startswith(prefix + "."):
            return dependency
    return None


@pytest.mark.parametrize("name", _module_names())
def test_docstring_examples(name):
    dependency = _needs(name)
    if dependency is not None:
        pytest.importorskip(dependency)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    user_names = {"np": np, "jnp": jnp, "absjit": absjit, "lax": lax}
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    for test in finder.find(module, name, extraglobs=user_names):
        if test.examples:
            result = runner.run(test, out=failures.append, clear_globs=True)
            del result
    assert not failures, "".join(failures)
