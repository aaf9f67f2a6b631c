"""The import graph of the package holds its layering (docs/architecture.md).

Imports inside functions count as much as those at the top of a module: they run on
first use, and a lazy import of a backend from the frontend is still a dependency.
``from package import module`` is an edge to the module, not to the package (whose
``__init__`` every module of it runs first anyway).

* Nothing outside a backend's package imports it: the frontend (``jit``, ``core``,
  ``numpy``…) and the shared parts of ``absjit.backends`` (``base``, ``diskcache``,
  ``background``, ``sources``, ``interpret``) reach backends through the registry.
* Backends import no other backend; the two Numba backends share
  ``absjit.backends.numba``, which imports neither of them.
* The frontend's lower layers import downwards only: ``core`` imports no other layer,
  ``interpreters`` only ``core``, and both only the small modules in
  :data:`UNDER_THE_LAYERS` besides (``ops``, above them, may import both).
* The largest strongly connected set of modules may not grow (a ratchet: lower
  :data:`LARGEST_CYCLE` whenever a change breaks cycles up).
* The modules of ``absjit.numpy`` import one another downwards only: no two of them
  import each other, directly or not.
"""
from __future__ import annotations

import ast
import collections
import pathlib
import sys

import absjit

PACKAGE = pathlib.Path(absjit.__file__).parent
BACKENDS = ("absjit.backends.numba_cpu", "absjit.backends.numba_cuda", "absjit.backends.xla",
            "absjit.backends.numba")
SHARED_BY = {"absjit.backends.numba": ("absjit.backends.numba_cpu",
                                       "absjit.backends.numba_cuda")}
#: Modules in the largest strongly connected set of the import graph today: ``ops``'
#: ``elementwise``, ``structural``, ``reductions`` and ``indexing``.
LARGEST_CYCLE = 4
#: The frontend's packages and top-level modules, lowest first: none imports a later one.
FRONTEND_ORDER = ("absjit.core", "absjit.interpreters", "absjit.ops", "absjit.api_transforms",
                  "absjit.custom_derivatives", "absjit.lax", "absjit.numpy")
#: The frontend's lower layers, lowest first, each with the layers it may import.
LAYERS = {"absjit.core": (),
          "absjit.interpreters": ("absjit.core",),
          "absjit.ops": ("absjit.core", "absjit.interpreters")}
#: The modules ``core`` and ``interpreters`` may import besides their layers: none of
#: them imports a layer.
UNDER_THE_LAYERS = ("absjit.config", "absjit.dtypes", "absjit.errors", "absjit.tree_util",
                    "absjit._pytree", "absjit._tree_paths", "absjit._traceback")


def _modules() -> dict:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("absjit",) + path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _graph() -> dict:
    """``module -> {(imported module, line)}`` over the package, every import
    statement (in functions too) resolved to the module it loads."""
    modules = _modules()

    def resolve(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges = collections.defaultdict(set)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                # ``from package import module`` depends on the module (the package's
                # ``__init__`` has run already); ``from module import name``, on it
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules
                           else source for a in node.names]
            else:
                continue
            for target in targets:
                found = resolve(target) if target.startswith("absjit") else None
                if found and found != name:
                    edges[name].add((found, node.lineno))
    return edges


def _backend_of(module):
    return next((b for b in BACKENDS if module == b or module.startswith(b + ".")), None)


def _violations(graph) -> list:
    wrong = []
    for module, targets in graph.items():
        own = _backend_of(module)
        for target, line in targets:
            theirs = _backend_of(target)
            if theirs is None or theirs == own or own in SHARED_BY.get(theirs, ()):
                continue
            wrong.append(f"{module}:{line} imports {target}")
    return sorted(wrong)


def test_backends_are_imported_only_from_their_own_package():
    wrong = _violations(_graph())
    assert not wrong, "\n".join(wrong)


def _in(module, package) -> bool:
    return module == package or module.startswith(package + ".")


def _layer_of(module):
    return next((layer for layer in LAYERS if _in(module, layer)), None)


def _layer_violations(graph) -> list:
    """Imports of ``core`` and ``interpreters`` modules that go up or sideways: to a
    layer that is not below theirs, or outside the layers and :data:`UNDER_THE_LAYERS`;
    and imports of the modules under the layers that reach a layer."""
    wrong = []
    for module, targets in graph.items():
        own = _layer_of(module)
        below = own is None and any(_in(module, m) for m in UNDER_THE_LAYERS)
        if own is None and not below:
            continue
        for target, line in targets:
            theirs = _layer_of(target)
            if below:
                ok = theirs is None
            elif theirs is not None:
                ok = theirs == own or theirs in LAYERS[own]
            else:  # ``ops`` builds on the array type and more; the layers under it do not
                ok = own == "absjit.ops" or any(_in(target, m) for m in UNDER_THE_LAYERS)
            if not ok:
                wrong.append(f"{module}:{line} imports {target}")
    return sorted(wrong)


def test_the_frontend_layers_import_downwards():
    wrong = _layer_violations(_graph())
    assert not wrong, "\n".join(wrong)


def _largest_cycle(edges) -> list:
    """The largest strongly connected set of ``edges`` (Tarjan's algorithm)."""
    index, low, stack, on_stack, best = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > len(best):
                best[:] = component

    for v in list(edges):
        if v not in index:
            visit(v)
    return best


def test_the_largest_import_cycle_does_not_grow():
    edges = {m: {t for t, _ in ts} for m, ts in _graph().items()}
    cycle = _largest_cycle(edges)
    assert len(cycle) <= LARGEST_CYCLE, (
        f"{len(cycle)} modules import each other (directly or not), more than "
        f"{LARGEST_CYCLE}: a new import closed a cycle")


def test_the_numpy_modules_import_downwards_only():
    def numpy(module):
        return module == "absjit.numpy" or module.startswith("absjit.numpy.")

    graph = _graph()
    edges = {m: {t for t, _ in ts if numpy(t)} for m, ts in graph.items() if numpy(m)}
    cycle = _largest_cycle(edges)
    lines = sorted(f"{m}:{line} imports {t}" for m in cycle for t, line in graph[m]
                   if t in cycle)
    assert len(cycle) <= 1, (
        f"{len(cycle)} modules of absjit.numpy import each other (directly or not); "
        "move what both need below them:\n" + "\n".join(lines))


def test_the_checks_see_what_they_must():
    graph = _graph()  # relative imports inside functions are resolved
    assert ("absjit.backends.numba_cpu.parallel.threads" in
            {t for t, _ in graph["absjit.backends.numba_cpu.backend"]})
    made_up = {"absjit.jit.api": {("absjit.backends.numba_cpu.backend", 3)},
               "absjit.backends.numba_cuda.kernels": {("absjit.backends.numba_cpu.render", 4),
                                                      ("absjit.backends.numba.render", 5)},
               "absjit.backends.numba.render": {("absjit.backends.numba_cuda.runtime", 6)},
               "absjit.backends.numba_cpu.render": {("absjit.backends.numba.render", 7),
                                                    ("absjit.backends.base", 8)}}
    assert _violations(made_up) == [
        "absjit.backends.numba.render:6 imports absjit.backends.numba_cuda.runtime",
        "absjit.backends.numba_cuda.kernels:4 imports absjit.backends.numba_cpu.render",
        "absjit.jit.api:3 imports absjit.backends.numba_cpu.backend"]
    layered = {"absjit.core.trace": {("absjit.array", 9), ("absjit.core.avals", 10),
                                     ("absjit.errors", 11)},
               "absjit.interpreters.ad": {("absjit.ops.structural", 12),
                                          ("absjit.core.trace", 13)},
               "absjit.ops.structural": {("absjit.interpreters.ad", 14),
                                         ("absjit.array", 15)},
               "absjit.dtypes": {("absjit.core.avals", 16)}}
    assert _layer_violations(layered) == [
        "absjit.core.trace:9 imports absjit.array",
        "absjit.dtypes:16 imports absjit.core.avals",
        "absjit.interpreters.ad:12 imports absjit.ops.structural"]
    cycle = _largest_cycle({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"a"}})
    assert sorted(cycle) == ["a", "b", "c"]


def _package(module):
    """``absjit.<name>``: the package (or top-level module) ``module`` belongs to."""
    return ".".join(module.split(".")[:2])


def _package_graph(graph) -> dict:
    """The import graph with every module collapsed to its package; ``absjit``'s own
    ``__init__``, which imports them all, left out."""
    edges = collections.defaultdict(set)
    for module, targets in graph.items():
        for target, _ in targets:
            a, b = _package(module), _package(target)
            if a != b and "absjit" not in (a, b):
                edges[a].add(b)
    return edges


def test_no_two_packages_import_each_other():
    cycle = _largest_cycle(_package_graph(_graph()))
    assert len(cycle) <= 1, f"these packages import each other: {sorted(cycle)}"


def _order_violations(graph) -> list:
    rank = {p: i for i, p in enumerate(FRONTEND_ORDER)}
    wrong = []
    for module, targets in graph.items():
        own = rank.get(_package(module))
        for target, line in targets:
            theirs = rank.get(_package(target))
            if own is not None and theirs is not None and theirs > own:
                wrong.append(f"{module}:{line} imports {target}")
    return sorted(wrong)


def test_the_frontend_packages_import_downwards():
    wrong = _order_violations(_graph())
    assert not wrong, "\n".join(wrong)


def test_the_package_checks_see_what_they_must():
    made_up = {"absjit.ops.collectives": {("absjit.numpy._creation", 1)},
               "absjit.lax._special": {("absjit.ops.elementwise", 2),
                                       ("absjit.numpy", 3)},
               "absjit.numpy._creation": {("absjit.lax.linalg", 4)}}
    assert _order_violations(made_up) == [
        "absjit.lax._special:3 imports absjit.numpy",
        "absjit.ops.collectives:1 imports absjit.numpy._creation"]
    assert sorted(_largest_cycle(_package_graph(made_up))) == ["absjit.lax", "absjit.numpy",
                                                                "absjit.ops"]
