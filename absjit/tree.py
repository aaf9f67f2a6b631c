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

from .tree_util import tree_all as all  # noqa: A001
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A001
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["map", "leaves", "flatten", "unflatten", "structure", "reduce", "all",
           "transpose", "map_with_path", "flatten_with_path", "leaves_with_path"]
