"""Key paths of pytree leaves: the key classes of ``jax.tree_util`` and ``keystr``.

A key path is a tuple of keys, one per node from the root down to a leaf:
``SequenceKey(idx)`` for tuples and lists, ``DictKey(key)`` for dicts,
``GetAttrKey(name)`` for namedtuples and dataclasses, ``FlattenedIndexKey(key)`` for
nodes registered without keys.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "keystr"]


@dataclass(frozen=True)
class SequenceKey:
    """Position ``idx`` in a tuple or list; prints as ``[idx]``.

    Examples
    --------
    >>> str(SequenceKey(0))
    '[0]'
    """
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclass(frozen=True)
class DictKey:
    """Key ``key`` of a dict; prints as ``['key']``.

    Examples
    --------
    >>> str(DictKey("w"))
    "['w']"
    """
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


@dataclass(frozen=True)
class GetAttrKey:
    """Attribute ``name`` (namedtuple field, dataclass field); prints as ``.name``.

    Examples
    --------
    >>> str(GetAttrKey("x"))
    '.x'
    """
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclass(frozen=True)
class FlattenedIndexKey:
    """Child ``key`` of a node registered without keys; prints as
    ``[<flat index key>]``.

    Examples
    --------
    >>> str(FlattenedIndexKey(1))
    '[<flat index 1>]'
    """
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _simple(k) -> str:
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return k.name
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    return str(k)


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``"['a'][0].x"``, or with ``simple=True`` the bare keys
    joined by ``separator``.

    Examples
    --------
    >>> keystr((DictKey("a"), SequenceKey(0)))
    "['a'][0]"
    >>> keystr((DictKey("a"), SequenceKey(0)), simple=True, separator="/")
    'a/0'
    """
    if simple:
        return separator.join(_simple(k) for k in keys)
    return separator.join(str(k) for k in keys)


def _path_walk(x, prefix, out, is_leaf, registry, is_namedtuple):
    """Append ``(path, leaf)`` for every leaf below ``x`` (same order as flattening)."""
    if is_leaf is not None and is_leaf(x):
        out.append((prefix, x))
        return
    if x is None:
        return
    t = type(x)
    if t is tuple or t is list:
        for i, c in enumerate(x):
            _path_walk(c, prefix + (SequenceKey(i),), out, is_leaf, registry, is_namedtuple)
        return
    if t is dict:
        for k in sorted(x):
            _path_walk(x[k], prefix + (DictKey(k),), out, is_leaf, registry, is_namedtuple)
        return
    reg = registry.get(t)
    if reg is not None:
        if reg[2] is not None:
            pairs = reg[2](x)[0]
        else:
            pairs = [(FlattenedIndexKey(i), c) for i, c in enumerate(reg[0](x)[0])]
        for k, c in pairs:
            _path_walk(c, prefix + (k,), out, is_leaf, registry, is_namedtuple)
        return
    if is_namedtuple(x):
        for f, c in zip(type(x)._fields, x):
            _path_walk(c, prefix + (GetAttrKey(f),), out, is_leaf, registry, is_namedtuple)
        return
    out.append((prefix, x))
