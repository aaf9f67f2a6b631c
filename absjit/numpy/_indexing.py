"""Indexing (``x[idx]``) and functional index updates (``x.at[idx].set(y)``).

Placeholder for eager-only basic indexing; the full implementation stages
``slice``/``gather``/``scatter`` primitives.
"""
from __future__ import annotations

import numpy as np

from ..array import Array

__all__ = ["getitem", "index_update"]


def getitem(x, idx):
    if isinstance(x, Array):
        return Array._new(np.asarray(x._value[idx]), x.weak_type)
    raise NotImplementedError("indexing traced arrays is not implemented yet")


def index_update(x, idx, values, mode):
    raise NotImplementedError(".at[] updates are not implemented yet")
