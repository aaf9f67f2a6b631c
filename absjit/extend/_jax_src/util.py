"""``safe_map`` and ``safe_zip``: ``map``/``zip`` that insist on equal lengths (served as
``jax._src.util`` by the import alias).

Examples
--------
>>> from absjit.extend._jax_src.util import safe_map, safe_zip
>>> safe_map(lambda a, b: a + b, [1, 2], [10, 20])
[11, 22]
>>> safe_zip([1, 2], [3])
Traceback (most recent call last):
...
ValueError: safe_zip: arguments have lengths 2 and 1
"""
from __future__ import annotations

__all__ = ["safe_map", "safe_zip"]


def _check(name, seqs):
    lengths = [len(s) for s in seqs]
    if len(set(lengths)) > 1:
        raise ValueError(f"{name}: arguments have lengths "
                         + " and ".join(str(n) for n in lengths))


def safe_map(f, *seqs) -> list:
    """``list(map(f, *seqs))``, raising ``ValueError`` when the lengths differ."""
    seqs = [list(s) for s in seqs]
    _check("safe_map", seqs)
    return list(map(f, *seqs))


def safe_zip(*seqs) -> list:
    """``list(zip(*seqs))``, raising ``ValueError`` when the lengths differ."""
    seqs = [list(s) for s in seqs]
    _check("safe_zip", seqs)
    return list(zip(*seqs))
