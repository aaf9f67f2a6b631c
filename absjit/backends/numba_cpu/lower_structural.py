"""Structural primitives as index arithmetic, and the ones that need real arrays.

``index_rules[p](out_idx, in_aval, out_aval, **params)`` maps the loop indices of the
output (source strings) to the operand's indices, so a consumer reads the operand in
place: no copy for ``broadcast_in_dim``, ``transpose``, ``squeeze``, ``rev``, ``slice``
and size-1-only ``reshape``. A rule returns ``None`` when it cannot (a general
``reshape``), and the generator materialises the operand and takes a view instead.

``value_rules[p](out_idx, out_aval, **params)`` compute a value from indices alone
(``iota``). ``array_rules`` (see :mod:`.lower_arrays`) handle the rest.
"""
from __future__ import annotations

from ...ops import structural as st
from .lower_elementwise import dtype_ctor

__all__ = ["index_rules", "value_rules"]

index_rules: dict = {}
value_rules: dict = {}


def lower_broadcast_in_dim(out_idx, in_aval, out_aval, *, shape, broadcast_dimensions):
    return ["0" if in_aval.shape[i] == 1 and shape[d] != 1 else out_idx[d]
            for i, d in enumerate(broadcast_dimensions)]


def lower_transpose(out_idx, in_aval, out_aval, *, permutation):
    idx = [None] * len(permutation)
    for j, p in enumerate(permutation):
        idx[p] = out_idx[j]
    return idx


def lower_squeeze(out_idx, in_aval, out_aval, *, dimensions):
    it = iter(out_idx)
    return ["0" if d in dimensions else next(it) for d in range(in_aval.ndim)]


def lower_rev(out_idx, in_aval, out_aval, *, dimensions):
    return [f"({in_aval.shape[d] - 1} - {i})" if d in dimensions else i
            for d, i in enumerate(out_idx)]


def lower_slice(out_idx, in_aval, out_aval, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * in_aval.ndim
    out = []
    for i, lo, s in zip(out_idx, start_indices, strides):
        term = i if s == 1 else f"{s} * {i}"
        out.append(term if lo == 0 else f"({lo} + {term})")
    return out


def lower_reshape(out_idx, in_aval, out_aval, *, new_sizes, dimensions):
    """Only reshapes that add or drop size-1 dimensions are index arithmetic."""
    if dimensions is not None:
        return None
    in_big = [d for d, n in enumerate(in_aval.shape) if n != 1]
    out_big = [d for d, n in enumerate(out_aval.shape) if n != 1]
    if [in_aval.shape[d] for d in in_big] != [out_aval.shape[d] for d in out_big]:
        return None
    idx = ["0"] * in_aval.ndim
    for di, do in zip(in_big, out_big):
        idx[di] = out_idx[do]
    return idx


def lower_iota(out_idx, out_aval, *, dtype, shape, dimension):
    return f"{dtype_ctor(dtype)}({out_idx[dimension]})"


for _p, _rule in ((st.broadcast_in_dim_p, lower_broadcast_in_dim),
                  (st.transpose_p, lower_transpose), (st.squeeze_p, lower_squeeze),
                  (st.rev_p, lower_rev), (st.slice_p, lower_slice),
                  (st.reshape_p, lower_reshape)):
    index_rules[_p] = _rule
value_rules[st.iota_p] = lower_iota


# ``dynamic_slice`` reads its operand at run-time starts, each clamped into range (the
# rule the impl shares): ``dynamic_index_rules[p](out_idx, starts, in_aval, out_aval,
# **params)`` receives the starts as scalar expressions.
dynamic_index_rules: dict = {}


def lower_dynamic_slice(out_idx, starts, in_aval, out_aval, *, slice_sizes):
    return [f"(min(max(int({s}), 0), {n - k}) + {i})"
            for i, s, n, k in zip(out_idx, starts, in_aval.shape, slice_sizes)]


dynamic_index_rules[st.dynamic_slice_p] = lower_dynamic_slice
index_rules[st.dynamic_slice_p] = lambda out_idx, in_aval, out_aval, **params: \
    lower_dynamic_slice(out_idx, ["0"] * in_aval.ndim, in_aval, out_aval, **params)
