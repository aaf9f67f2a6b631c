"""Pytrees: nested containers whose leaves are arrays.

Built-in nodes: ``tuple``, ``list``, ``dict`` (keys sorted), ``None`` (no leaves),
``namedtuple``, ``collections.OrderedDict`` (insertion order) and
``collections.defaultdict`` (keys sorted); more with :func:`register_pytree_node`,
:func:`register_pytree_with_keys`, :func:`register_pytree_node_class`,
:func:`register_pytree_with_keys_class`, :func:`register_dataclass` and
:func:`register_static`. Everything else is a leaf. The ``*_with_path`` functions
pair every leaf with its key path (``DictKey``, ``SequenceKey``, ``GetAttrKey``,
``FlattenedIndexKey``), as in ``jax.tree_util``.

The core (registry, ``PyTreeDef``, flattening, ``tree_map``) lives in ``_pytree``;
this module adds the helpers built on it (one-level flattening, treedef
construction, ``tree_broadcast``, ``tree_reduce_associative``, the registry object).

Examples
--------
>>> tree_map(lambda x: x * 2, {"a": 1, "b": (2, None)})
{'a': 2, 'b': (4, None)}
"""
from __future__ import annotations

from typing import Any, Tuple, Union

from ._pytree import (_MISSING, _NODE_KINDS, _REGISTRY, DictKey, FlattenedIndexKey,  # noqa: F401
                      GetAttrKey, Partial, PyTreeDef, SequenceKey, _flatten_up_to,
                      _is_namedtuple, _node, all_leaves, keystr, leaf_paths,
                      register_dataclass, register_pytree_node, register_pytree_node_class,
                      register_pytree_with_keys, tree_all, tree_flatten,
                      tree_flatten_with_path, tree_leaves, tree_leaves_with_path, tree_map,
                      tree_map_with_path, tree_reduce, tree_structure, tree_transpose,
                      tree_unflatten, treedef_is_leaf)

__all__ = ["PyTreeDef", "register_pytree_node", "register_pytree_with_keys",
           "register_pytree_node_class", "register_dataclass", "tree_flatten",
           "tree_unflatten", "tree_leaves", "tree_structure", "tree_map", "tree_reduce",
           "tree_all", "tree_transpose", "tree_flatten_with_path", "tree_leaves_with_path",
           "tree_map_with_path", "keystr", "DictKey", "SequenceKey", "GetAttrKey",
           "FlattenedIndexKey", "Partial", "leaf_paths", "treedef_is_leaf", "all_leaves",
           "tree_broadcast", "tree_reduce_associative", "treedef_children", "treedef_tuple",
           "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
           "register_pytree_with_keys_class", "register_static", "default_registry",
           "KeyEntry", "KeyPath"]

# One entry of a key path, and a key path (type aliases for annotations).
KeyEntry = Union[SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey, Any]
KeyPath = Tuple[KeyEntry, ...]


def register_pytree_with_keys_class(cls):
    """Class decorator: ``cls.tree_flatten_with_keys() -> (((key, child), ...), aux)``
    and ``cls.tree_unflatten(aux, children)`` (``cls.tree_flatten`` is used for
    flattening without keys when defined).

    Examples
    --------
    >>> @register_pytree_with_keys_class
    ... class Cell:
    ...     def __init__(self, v):
    ...         self.v = v
    ...     def tree_flatten_with_keys(self):
    ...         return ((GetAttrKey("v"), self.v),), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> keystr(tree_leaves_with_path(Cell(3))[0][0])
    '.v'
    """
    flat = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              None if flat is None else (lambda x: x.tree_flatten()))
    return cls


def register_static(cls):
    """Class decorator: instances of ``cls`` become nodes without children, kept whole
    in the tree structure (so they must be hashable), as static values.

    Examples
    --------
    >>> @register_static
    ... class Tag(str):
    ...     pass
    >>> tree_leaves([Tag("a"), 1])
    [1]
    """
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def is_tree_node(typ) -> bool:
    """Whether instances of the type ``typ`` are pytree nodes (built-in or registered
    containers, namedtuples, ``NoneType``).

    Examples
    --------
    >>> is_tree_node(list), is_tree_node(type(None)), is_tree_node(int)
    (True, True, False)
    """
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node takes a type, got {typ!r}")
    return (typ in _NODE_KINDS or typ is type(None) or typ in _REGISTRY
            or (issubclass(typ, tuple) and hasattr(typ, "_fields")))


def _one_level(tree):
    """``(keys, children, aux)`` of one node; ``ValueError`` for a leaf."""
    t = type(tree)
    if tree is None:
        return [], [], None
    if t is tuple or t is list:
        return [SequenceKey(i) for i in range(len(tree))], list(tree), None
    if t is dict:
        keys = tuple(sorted(tree))
        return [DictKey(k) for k in keys], [tree[k] for k in keys], keys
    reg = _REGISTRY.get(t)
    if reg is not None:
        if reg[2] is not None:
            pairs, aux = reg[2](tree)
            pairs = list(pairs)
            return [k for k, _ in pairs], [c for _, c in pairs], aux
        children, aux = reg[0](tree)
        children = list(children)
        return [FlattenedIndexKey(i) for i in range(len(children))], children, aux
    if _is_namedtuple(tree):
        return [GetAttrKey(f) for f in t._fields], list(tree), t
    raise ValueError(f"can't tree-flatten type: {t}")


def flatten_one_level(tree):
    """``(children, aux_data)`` of the node ``tree``, one level down (dict keys are
    the aux data of a dict, the class that of a namedtuple). A leaf raises
    ``ValueError``.

    Examples
    --------
    >>> flatten_one_level({"b": 1, "a": [2]})
    ([[2], 1], ('a', 'b'))
    """
    _, children, aux = _one_level(tree)
    return children, aux


def flatten_one_level_with_keys(tree):
    """``([(key, child), ...], aux_data)`` of the node ``tree``, one level down.

    Examples
    --------
    >>> flatten_one_level_with_keys((5, 6))[0]
    [(SequenceKey(idx=0), 5), (SequenceKey(idx=1), 6)]
    """
    keys, children, aux = _one_level(tree)
    return list(zip(keys, children)), aux


def treedef_children(treedef: PyTreeDef) -> list:
    """The structures of the children of ``treedef``'s root node.

    Examples
    --------
    >>> treedef_children(tree_structure({"a": (1, 2), "b": None}))
    [PyTreeDef((*, *)), PyTreeDef(None)]
    """
    return list(treedef.children)


def treedef_tuple(treedefs) -> PyTreeDef:
    """The structure of a tuple whose children have the structures ``treedefs``.

    Examples
    --------
    >>> treedef_tuple([tree_structure([1]), tree_structure(2)])
    PyTreeDef(([*], *))
    """
    children = tuple(treedefs)
    for c in children:
        if type(c) is not PyTreeDef:
            raise TypeError(f"treedef_tuple takes PyTreeDefs, got {type(c).__name__}")
    return _node(PyTreeDef.TUPLE, len(children), children)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """``prefix_tree`` with each of its leaves repeated over the subtree of
    ``full_tree`` at that position, so the result has ``full_tree``'s structure.

    Examples
    --------
    >>> tree_broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}])
    [(1, 1), {'a': [2, 2]}]
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees: list = []
    _flatten_up_to(prefix_def, full_tree, "", subtrees)
    return tree_unflatten(prefix_def, [tree_map(lambda _, v=leaf: v, sub, is_leaf=is_leaf)
                                       for leaf, sub in zip(prefix_leaves, subtrees)])


def tree_reduce_associative(operation, tree, *, identity=_MISSING, is_leaf=None):
    """Reduce the leaves with an associative ``operation`` in a balanced binary tree
    (the first half, then the second half, combined), which keeps the depth of nested
    calls logarithmic. Without leaves the result is ``identity`` (``TypeError`` if it
    is not given).

    Examples
    --------
    >>> tree_reduce_associative(lambda a, b: (a, b), [1, 2, 3, 4, 5])
    ((1, 2), (3, (4, 5)))
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _MISSING:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def reduce(xs):
        if len(xs) == 1:
            return xs[0]
        half = len(xs) // 2
        return operation(reduce(xs[:half]), reduce(xs[half:]))
    return reduce(leaves)


class _Registry:
    """The registry of pytree node types (``default_registry``): ``flatten``,
    ``flatten_one_level``, ``flatten_one_level_with_keys``, ``flatten_with_path``,
    ``is_node`` and ``register_node`` act on the same table as the module's
    functions."""

    def flatten(self, tree, leaf_predicate=None):
        return tree_flatten(tree, leaf_predicate)

    def flatten_with_path(self, tree, leaf_predicate=None):
        return tree_flatten_with_path(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        try:
            return flatten_one_level(tree)
        except ValueError:
            return None

    def flatten_one_level_with_keys(self, tree):
        try:
            return flatten_one_level_with_keys(tree)
        except ValueError:
            return None

    def is_node(self, type):  # noqa: A002 - JAX's argument name
        return is_tree_node(type)

    def register_node(self, type, to_iterable, from_iterable,  # noqa: A002
                      to_iterable_with_keys=None):
        if to_iterable_with_keys is None:
            register_pytree_node(type, to_iterable, from_iterable)
        else:
            register_pytree_with_keys(type, to_iterable_with_keys, from_iterable, to_iterable)

    def __repr__(self):
        return "<absjit.tree_util.default_registry>"


default_registry = _Registry()
