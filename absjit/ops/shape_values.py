"""Rules of ``dim_value`` (a symbolic size used as a value; defined in
:mod:`absjit.core.dim_value`, since staging emits it) that belong to transforms."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.dim_value import dim_value_p
from ..interpreters import ad, batching

__all__ = ["dim_value_p", "dim_value"]


def dim_value(size):
    """The value of a size (an int or a symbolic ``Dim`` of the ranked level) as a
    weakly typed int scalar (int32, or int64 with x64); traced code stages ``dim_value[size=x0]``.

    Examples
    --------
    >>> dim_value(3)
    Array(3, dtype=int32, weak_type=True)
    """
    return dim_value_p.bind(size=size, dtype=dtypes.canonicalize_dtype(np.int64))


def _dim_value_batch(vals, dims, *, size, dtype):
    return [dim_value_p.bind(size=size, dtype=dtype)], [None]


ad.defjvp_zero(dim_value_p)
batching.batch_rules[dim_value_p] = _dim_value_batch
