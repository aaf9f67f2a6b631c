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
    "scipy.special": ["absjit.scipy.special"],
    "scipy.linalg": ["absjit.scipy.linalg"],
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


def _api_pages(site):
    for root, _, files in os.walk(os.path.join(site, "api")):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(root, name)
                yield os.path.relpath(path, site), open(path, encoding="utf-8").read()


def test_api_reference_has_no_raw_rst_addresses_or_future_names(site):
    """What Markdown cannot render or a reader cannot use: Sphinx roles (``:func:`x```
    becomes ``:func:<code>x</code>``), memory addresses from a value's ``repr``, and the
    ``annotations`` feature ``from __future__ import annotations`` leaves in a module."""
    problems = []
    for page, html in _api_pages(site):
        text = re.sub(r"<[^>]+>", "", html)
        for pattern, what in [
                (r":(?:py:)?(?:func|class|meth|mod|data|attr|obj|exc|ref|const):(?:<code>|`)",
                 "rST role"),
                (r"\bat 0x[0-9a-fA-F]+|0x7f[0-9a-fA-F]{8,}", "memory address"),
                (r"_Feature\(|\bannotations = ", "leaked __future__ name"),
                (r"^\s*\.\. (?:warning|note|versionadded|deprecated)::", "rST directive")]:
            for m in re.finditer(pattern, html if "role" in what else text, flags=re.M):
                problems.append(f"{page}: {what}: {m.group(0)!r}")
    assert not problems, "\n".join(problems[:40])


def test_constants_and_float0_are_documented_in_absjits_words(site):
    html = open(os.path.join(site, "api", "numpy", "index.html"), encoding="utf-8").read()
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    for name, words in [("pi", "circumference"), ("e", "natural logarithm"),
                        ("euler_gamma", "Euler–Mascheroni"), ("inf", "infinity"),
                        ("nan", "Not a Number"), ("float0", "tangents of integer")]:
        m = re.search(r'id="absjit\.numpy\.' + name + r'"(.{0,1500})', html, flags=re.S)
        assert m, name
        assert words in " ".join(re.sub(r"<[^>]+>", " ", m.group(1)).split()), name
    assert "Convert a string or number to a floating point number" not in text
    assert "VoidDType" not in text


def test_module_pages_list_their_functions(site):
    """Each API page opens with a summary table whose names link to their entries."""
    for page, module in [("numpy", "absjit.numpy"), ("lax", "absjit.lax"),
                         ("scipy.special", "absjit.scipy.special")]:
        html = open(os.path.join(site, "api", page, "index.html"), encoding="utf-8").read()
        links = set(re.findall(r'href="#' + re.escape(module) + r'\.(\w+)"', html))
        names = {name for name, _ in _own_public_objects(module)}
        assert names and len(names - links) <= len(names) // 20, sorted(names - links)[:20]
