"""Print the "Supported API" name lists (``docs/api-list.md``), built from each module's
``__all__``.

Usage::

    python scripts/api_list.py                          # print the Markdown
    python scripts/api_list.py --check docs/api-list.md  # exit 1 if the page's list differs
    python scripts/api_list.py --write docs/api-list.md  # rewrite the page's list

The list lies between the lines ``<!-- api-list:start -->`` and
``<!-- api-list:end -->``. A section lists a module's public names (its ``__all__``)
except submodules and primitives (``*_p``), sorted, with their count computed here.
``absjit.scipy.*`` and ``absjit.example_libraries.*`` sections appear for every
submodule that exists (and for a subpackage that exports more than its submodules).
"""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

START, END = "<!-- api-list:start -->", "<!-- api-list:end -->"

# In this order; packages marked with a trailing ".*" expand to their submodules.
MODULES = ["absjit", "absjit.numpy", "absjit.numpy.linalg", "absjit.numpy.fft", "absjit.lax",
           "absjit.random", "absjit.nn", "absjit.nn.initializers", "absjit.tree", "absjit.tree_util",
           "absjit.debug", "absjit.scipy.*", "absjit.example_libraries.*"]


def _expand(spec) -> list:
    if not spec.endswith(".*"):
        return [spec]
    pkg_name = spec[:-2]
    try:
        pkg = importlib.import_module(pkg_name)
    except ImportError:
        return []
    names = [f"{pkg_name}.{m.name}" for m in pkgutil.iter_modules(pkg.__path__)
             if not m.name.startswith("_")]
    out = []
    for name in sorted(names):
        # a subpackage gets its own section too when it defines functions
        # (absjit.scipy.stats.sem), then one per submodule
        out.extend([name] + _expand(name + ".*") if _is_package(name) else [name])
    return out


def _is_package(name) -> bool:
    return hasattr(importlib.import_module(name), "__path__")


def public_names(module_name: str) -> list:
    """The names ``module_name`` exports, without submodules, primitives or the config
    object."""
    from absjit.core.primitive import Primitive
    mod = importlib.import_module(module_name)
    names = getattr(mod, "__all__", None)
    if names is None:
        raise SystemExit(f"{module_name} has no __all__: define it so its API is explicit")
    out = []
    for name in names:
        if not hasattr(mod, name):
            raise SystemExit(f"{module_name}.__all__ lists {name!r}, which it does not define")
        value = getattr(mod, name)
        if isinstance(value, (types.ModuleType, Primitive)) or name == "config":
            continue
        out.append(name)
    return sorted(set(out))


def render() -> str:
    lines = []
    for spec in MODULES:
        for module_name in _expand(spec):
            names = public_names(module_name)
            if not names:
                continue
            listed = ", ".join(f"`{n}`" for n in names)
            lines.append(f"**{module_name}** ({len(names)}): {listed}")
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _split(text: str, path: str):
    try:
        head, rest = text.split(START + "\n", 1)
        body, tail = rest.split(END, 1)
    except ValueError:
        raise SystemExit(f"{path}: no '{START}' ... '{END}' section (each marker on its own "
                         "line)") from None
    return head, body, tail


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", metavar="PAGE", help="exit 1 if the section differs")
    group.add_argument("--write", metavar="PAGE", help="rewrite the section in place")
    args = parser.parse_args(argv)
    text = render()
    if args.check is None and args.write is None:
        sys.stdout.write(text)
        return 0
    path = args.check or args.write
    with open(path, encoding="utf-8") as f:
        current = f.read()
    head, body, tail = _split(current, path)
    if args.check:
        if body == text:
            print(f"{path}: the API list is up to date")
            return 0
        print(f"{path}: the API list differs from the modules; run "
              f"python scripts/api_list.py --write {path}")
        return 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + START + "\n" + text + END + tail)
    print(f"{path}: API list written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
