"""``absjit.tree``: the short names of the pytree functions, as in ``jax.tree``.

Examples
--------
>>> from absjit import tree
>>> tree.map(lambda x: x * 2, {"a": 1, "b": (2, None)})
{'a': 2, 'b': (4, None)}
>>> tree.leaves([1, (2, 3)])
[1, 2, 3]
"""
from __future__ import annotations

import dataclasses

from .tree_util import tree_all as all  # noqa: A001
from .tree_util import tree_broadcast as broadcast
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A001
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce
from .tree_util import tree_reduce_associative as reduce_associative
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["map", "leaves", "flatten", "unflatten", "structure", "reduce", "all",
           "transpose", "map_with_path", "flatten_with_path", "leaves_with_path",
           "broadcast", "reduce_associative", "static"]


def static(**kwargs):
    """A ``dataclasses.field`` marked static (``metadata={"static": True}``), so that
    ``tree_util.register_dataclass`` keeps it in the structure rather than as a leaf.
    Takes ``dataclasses.field``'s arguments.

    Examples
    --------
    >>> import dataclasses
    >>> from absjit import tree, tree_util
    >>> @tree_util.register_dataclass
    ... @dataclasses.dataclass
    ... class Op:
    ...     x: float
    ...     kind: str = tree.static(default="add")
    >>> tree.leaves(Op(1.0))
    [1.0]
    """
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)
