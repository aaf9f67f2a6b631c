"""What a backend's compiled code depends on, as a hash of source files (part of its
cache key: :meth:`absjit.backends.base.Backend.version_key`).

A backend's key covers its own package, the packages it names (the compiler), and the
modules under ``absjit.backends`` outside its package that its modules import at
their top level, followed transitively — not whole packages. Both Numba backends
render with :mod:`absjit.backends.numba` (the loop-IR renderer and scalar spellings),
so a change there invalidates both; a change to the cpu backend's thread pool or math
kernels does not touch CUDA kernels.

>>> files = source_files("absjit.backends.numba_cuda", also=("absjit.compiler",))
>>> any(f.endswith("numba/render.py") for f in files)
True
>>> any(f.endswith("numba_cpu/parallel/pool.py") for f in files)
False
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re

__all__ = ["source_files", "source_hash"]

_ROOT = "absjit.backends"


def _package_files(package: str) -> list:
    """A package's modules, those of its sub-packages included, or a module's own file."""
    spec = importlib.util.find_spec(package)
    if spec.submodule_search_locations is None:
        return [spec.origin]
    here = os.path.dirname(spec.origin)
    return sorted(os.path.join(folder, n) for folder, _, names in os.walk(here)
                  for n in names if n.endswith(".py"))


def _package_of(path: str, package: str) -> str:
    """The package of module file ``path``, found under ``package`` (a sub-package's
    modules belong to the sub-package)."""
    spec = importlib.util.find_spec(package)
    if spec.submodule_search_locations is None:
        return package.rsplit(".", 1)[0]
    rel = os.path.relpath(os.path.dirname(path), os.path.dirname(spec.origin))
    return package if rel == "." else ".".join([package, *rel.split(os.sep)])


def _module_file(module: str):
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and \
        spec.origin.endswith(".py") else None


# A top-level ``from X import a, b`` (parenthesised lists included) or ``import X``: read
# with a pattern, not parsed (parsing every module of a package cost 0.25 s of a
# process's first compile).
_FROM = re.compile(r"^from\s+(\.*)([\w.]*)\s+import\s+(\([^)]*\)|[^\n#]*)", re.M)
_IMPORT = re.compile(r"^import\s+([\w.]+)", re.M)


def _top_level_imports(path: str, package: str) -> set:
    """Absolute names of the modules ``path`` (a module of ``package``) imports at its
    top level (imports inside functions are the lazy ones, not followed)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = {m.group(1) for m in _IMPORT.finditer(text)}
    parts = package.split(".")
    for m in _FROM.finditer(text):
        dots, module, names = m.group(1), m.group(2), m.group(3)
        if dots:
            base = ".".join(parts[:len(parts) - len(dots) + 1])
            target = f"{base}.{module}" if module else base
        else:
            target = module
        if module:  # ``from .render import x``: that module
            found.add(target)
        # ``from . import runtime``: the names that are modules (a package's
        # ``__init__`` runs on import but holds no code the kernels use)
        for name in names.strip("()").replace("\n", " ").split(","):
            name = name.split(" as ")[0].strip()
            if name.isidentifier():
                found.add(f"{target}.{name}")
    return found


@functools.lru_cache(maxsize=None)
def source_files(package: str, also: tuple = ()) -> tuple:
    """The source files of ``package`` and of the packages (or modules) ``also``, then
    of every module of another backend (under ``absjit.backends``) they import at top
    level, transitively; sorted."""
    files = set()
    for p in (package,) + tuple(also):
        files.update(_package_files(p))
    todo = [(f, _package_of(f, p)) for p in (package,) + tuple(also)
            for f in _package_files(p)]
    while todo:
        path, pkg = todo.pop()
        for name in _top_level_imports(path, pkg):
            # a module of another backend's package (absjit.backends.<backend>.<module>)
            if not name.startswith(_ROOT + ".") or name.count(".") < 3 or \
                    name.startswith(package + "."):
                continue
            found = _module_file(name)
            if found is not None and found not in files:
                files.add(found)
                todo.append((found, name if found.endswith("__init__.py")
                              else name.rsplit(".", 1)[0]))
    return tuple(sorted(files))


@functools.lru_cache(maxsize=None)
def source_hash(package: str, also: tuple = ()) -> str:
    """16 hex digits of the SHA-256 of :func:`source_files` (their paths relative to
    the ``absjit`` package, then their bytes)."""
    h = hashlib.sha256()
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in source_files(package, also):
        with open(path, "rb") as f:
            h.update(os.path.relpath(path, top).encode() + b"\0" + f.read())
    return h.hexdigest()[:16]
