"""Rules of ``dim_value`` (a symbolic size used as a value; defined in
:mod:`absjit.core.dim_value`, since staging emits it) that belong to transforms."""
from __future__ import annotations

from ..core.dim_value import dim_value_p
from ..interpreters import ad, batching

__all__ = ["dim_value_p"]


def _dim_value_batch(vals, dims, *, size, dtype):
    return [dim_value_p.bind(size=size, dtype=dtype)], [None]


ad.defjvp_zero(dim_value_p)
batching.batch_rules[dim_value_p] = _dim_value_batch
