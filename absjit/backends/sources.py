"""What a backend's compiled code depends on, as a hash of source files (part of its
cache key: :meth:`absjit.backends.base.Backend.version_key`).

A backend's key covers its own package, the packages it names (the compiler), and the
modules of *other* backends its modules import at their top level, followed
transitively — not the whole of those backends. The cuda backend renders kernels with
the cpu backend's renderer and scalar spellings, so a change there invalidates CUDA
kernels; a change to the cpu backend's thread pool or math kernels does not.

>>> files = source_files("absjit.backends.numba_cuda", also=("absjit.compiler",))
>>> any(f.endswith("numba_cpu/render.py") for f in files)
True
>>> any(f.endswith("numba_cpu/pool.py") for f in files)
False
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os

__all__ = ["source_files", "source_hash"]

_ROOT = "absjit.backends"


def _package_files(package: str) -> list:
    """A package's modules, or a module's own file."""
    spec = importlib.util.find_spec(package)
    if spec.submodule_search_locations is None:
        return [spec.origin]
    here = os.path.dirname(spec.origin)
    return sorted(os.path.join(here, n) for n in os.listdir(here) if n.endswith(".py"))


def _module_file(module: str):
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and \
        spec.origin.endswith(".py") else None


def _top_level_imports(path: str, package: str) -> set:
    """Absolute names of the modules ``path`` (a module of ``package``) imports at its
    top level (imports inside functions are the lazy ones, not followed)."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    parts = package.split(".")
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(parts[:len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if node.module:  # ``from .render import x``: that module
                found.add(target)
            # ``from . import runtime``: the names that are modules (a package's
            # ``__init__`` runs on import but holds no code the kernels use)
            found.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@functools.lru_cache(maxsize=None)
def source_files(package: str, also: tuple = ()) -> tuple:
    """The source files of ``package`` and of the packages (or modules) ``also``, then
    of every module of another backend (under ``absjit.backends``) they import at top
    level, transitively; sorted."""
    files = set()
    for p in (package,) + tuple(also):
        files.update(_package_files(p))
    todo = [(f, p) for p in (package,) + tuple(also) for f in _package_files(p)]
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
                todo.append((found, name.rsplit(".", 1)[0]))
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
