"""Pytrees: nested containers whose leaves are arrays.

Built-in nodes: ``tuple``, ``list``, ``dict`` (keys sorted), ``None`` (no leaves),
``namedtuple``; more with :func:`register_pytree_node`. Everything else is a leaf.

Examples
--------
>>> leaves, tree = tree_flatten({"b": 2, "a": (1, None)})
>>> leaves
[1, 2]
>>> tree_unflatten(tree, [10, 20])
{'a': (10, None), 'b': 20}
"""
from __future__ import annotations

__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten",
           "tree_leaves", "tree_structure", "tree_map", "leaf_paths", "treedef_is_leaf",
           "register_pytree_node_class", "tree_all"]

_REGISTRY: dict = {}


def register_pytree_node(nodetype, flatten_func, unflatten_func) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux_data)`` and
    ``unflatten_func(aux_data, children) -> x``; ``aux_data`` must be hashable.
    """
    _REGISTRY[nodetype] = (flatten_func, unflatten_func)


def register_pytree_node_class(cls):
    """Class decorator: ``cls.tree_flatten()`` and ``cls.tree_unflatten(aux, children)``."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


class PyTreeDef:
    """The structure of a pytree (hashable, compares by value)."""

    __slots__ = ("kind", "data", "children", "num_leaves", "_hash")

    # kinds
    LEAF, NONE, TUPLE, LIST, DICT, NAMEDTUPLE, CUSTOM = range(7)

    def __init__(self, kind, data, children):
        self.kind = kind
        self.data = data
        self.children = children
        if kind == PyTreeDef.LEAF:
            self.num_leaves = 1
        else:
            self.num_leaves = sum(c.num_leaves for c in children)
        self._hash = hash((kind, data if kind != PyTreeDef.CUSTOM else (data[0], data[1]),
                           children))

    def __eq__(self, other):
        return (self is other) or (type(other) is PyTreeDef and self._hash == other._hash
                                   and self.kind == other.kind and self.data == other.data
                                   and self.children == other.children)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._pp()})"

    def _pp(self):
        k = self.kind
        if k == PyTreeDef.LEAF:
            return "*"
        if k == PyTreeDef.NONE:
            return "None"
        inner = ", ".join(c._pp() for c in self.children)
        if k == PyTreeDef.TUPLE:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if k == PyTreeDef.LIST:
            return f"[{inner}]"
        if k == PyTreeDef.DICT:
            return "{" + ", ".join(f"{key!r}: {c._pp()}"
                                   for key, c in zip(self.data, self.children)) + "}"
        if k == PyTreeDef.NAMEDTUPLE:
            return f"{self.data.__name__}({inner})"
        return f"{self.data[0].__name__}[{self.data[1]!r}]({inner})"

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)


_LEAF = PyTreeDef(PyTreeDef.LEAF, None, ())
_NONE = PyTreeDef(PyTreeDef.NONE, None, ())


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    if x is None:
        return _NONE
    if t is tuple:
        return PyTreeDef(PyTreeDef.TUPLE, len(x), tuple(_flatten(c, leaves, is_leaf) for c in x))
    if t is list:
        return PyTreeDef(PyTreeDef.LIST, len(x), tuple(_flatten(c, leaves, is_leaf) for c in x))
    if t is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            raise TypeError(f"dict keys of a pytree must be sortable; got {list(x)!r}") from None
        return PyTreeDef(PyTreeDef.DICT, keys, tuple(_flatten(x[k], leaves, is_leaf) for k in keys))
    reg = _REGISTRY.get(t)
    if reg is not None:
        children, aux = reg[0](x)
        return PyTreeDef(PyTreeDef.CUSTOM, (t, aux),
                         tuple(_flatten(c, leaves, is_leaf) for c in children))
    if _is_namedtuple(x):
        return PyTreeDef(PyTreeDef.NAMEDTUPLE, t, tuple(_flatten(c, leaves, is_leaf) for c in x))
    leaves.append(x)
    return _LEAF


def tree_flatten(tree, is_leaf=None):
    """``(leaves, treedef)``."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _unflatten(treedef, it):
    k = treedef.kind
    if k == PyTreeDef.LEAF:
        return next(it)
    if k == PyTreeDef.NONE:
        return None
    children = [_unflatten(c, it) for c in treedef.children]
    if k == PyTreeDef.TUPLE:
        return tuple(children)
    if k == PyTreeDef.LIST:
        return children
    if k == PyTreeDef.DICT:
        return dict(zip(treedef.data, children))
    if k == PyTreeDef.NAMEDTUPLE:
        return treedef.data(*children)
    cls, aux = treedef.data
    return _REGISTRY[cls][1](aux, children)


def tree_unflatten(treedef: PyTreeDef, leaves):
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree {treedef} has {treedef.num_leaves} leaves, got {len(leaves)}")
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.kind == PyTreeDef.LEAF


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest`` (same structure)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} vs {r_def}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_all(tree) -> bool:
    return all(tree_leaves(tree))


def leaf_paths(tree) -> list:
    """A path suffix for every leaf: ``''`` for a leaf, ``'[0]'``, ``"['w']"``, ``'.x'``."""
    out: list = []

    def walk(x, prefix):
        t = type(x)
        if x is None:
            return
        if t is tuple or t is list:
            for i, c in enumerate(x):
                walk(c, f"{prefix}[{i}]")
        elif t is dict:
            for k in sorted(x):
                walk(x[k], f"{prefix}[{k!r}]")
        elif t in _REGISTRY:
            children, _ = _REGISTRY[t][0](x)
            for i, c in enumerate(children):
                walk(c, f"{prefix}[{i}]")
        elif _is_namedtuple(x):
            for f, c in zip(type(x)._fields, x):
                walk(c, f"{prefix}.{f}")
        else:
            out.append(prefix)
    walk(tree, "")
    return out
