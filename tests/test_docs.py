"""The user guide (``docs/``, built by MkDocs with mkdocstrings): it builds with no
broken link or reference, its examples run and print what they show, and every public
function and class of absjit has a docstring and an entry in the API reference."""
import doctest
import glob
import importlib
import os
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")

# API reference page -> the modules whose ``__all__`` it documents.
REFERENCE = {
    "absjit": ["absjit"],
    "numpy": ["absjit.numpy"],
    "lax": ["absjit.lax"],
    "random": ["absjit.random"],
    "nn": ["absjit.nn"],
    "scipy": ["absjit.scipy.special", "absjit.scipy.linalg"],
    "tree_util": ["absjit.tree_util"],
}


def _own_public_objects(module_name):
    """``(name, object)`` for every function and class in the module's ``__all__``
    that absjit defines (NumPy's scalar types, constants and submodules are not
    absjit's to document)."""
    module = importlib.import_module(module_name)
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            continue
        if not callable(obj) or not getattr(obj, "__module__", "").startswith("absjit"):
            continue
        yield name, obj


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocstrings")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_docs_build_strict_without_broken_links(site):
    assert os.path.exists(os.path.join(site, "index.html"))


@pytest.mark.parametrize("page", sorted(REFERENCE))
def test_every_public_name_is_in_the_api_reference(site, page):
    html = open(os.path.join(site, "api", page, "index.html"), encoding="utf-8").read()
    missing = []
    for module_name in REFERENCE[page]:
        ids = set(re.findall(r'id="' + re.escape(module_name) + r'\.([A-Za-z_0-9]+)"', html))
        # A name that a subpackage shadows (``absjit.jit``) is documented by its full path.
        missing += [f"{module_name}.{name}" for name, obj in _own_public_objects(module_name)
                    if name not in ids and f'id="{obj.__module__}.{obj.__qualname__}"' not in html]
    assert not missing, f"not in docs/api/{page}.md: {missing}"


@pytest.mark.parametrize("module_name", sorted({m for ms in REFERENCE.values() for m in ms}))
def test_every_public_function_and_class_has_a_docstring(module_name):
    undocumented = [name for name, obj in _own_public_objects(module_name)
                    if not (getattr(obj, "__doc__", None) or "").strip()]
    assert not undocumented, f"{module_name}: no docstring for {undocumented}"


@pytest.mark.parametrize("page", sorted(os.path.relpath(p, DOCS)
                                        for p in glob.glob(os.path.join(DOCS, "*.md"))))
def test_guide_examples_run(page):
    path = os.path.join(DOCS, page)
    text = open(path, encoding="utf-8").read()
    # A code fence ends an example's expected output, as a blank line does.
    text = "\n".join("" if line.startswith("```") else line for line in text.splitlines())
    globs = {"np": np, "jnp": jnp, "absjit": absjit, "lax": lax}
    test = doctest.DocTestParser().get_doctest(text, globs, page, path, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert not report, "".join(report)
