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

from ...ops import indexing as ix, structural as st
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


# Index arithmetic that reads other operands at run time: ``dynamic_slice`` (its starts,
# each clamped into range) and ``gather`` (its index arrays, clamped). A rule gets
# ``read(k, idx)``: a scalar expression of operand ``k + 1`` at indices ``idx``.
dynamic_index_rules: dict = {}


def lower_dynamic_slice(out_idx, read, in_aval, out_aval, *, slice_sizes):
    return [f"(min(max(int({read(k, ())}), 0), {n - size}) + {i})"
            for k, (i, n, size) in enumerate(zip(out_idx, in_aval.shape, slice_sizes))]


def lower_gather(out_idx, read, in_aval, out_aval, *, axes, index_ndim):
    bidx, rest = list(out_idx[:index_ndim]), iter(out_idx[index_ndim:])
    sub = []
    for d in range(in_aval.ndim):
        if d in axes:
            k = axes.index(d)
            sub.append(f"min(max(int({read(k, bidx)}), 0), {max(in_aval.shape[d] - 1, 0)})")
        else:
            sub.append(next(rest))
    return sub


def _static_probe(rule, extra=None):
    """The rule with placeholder reads: used only to ask whether an op is index-like."""
    def probe(out_idx, in_aval, out_aval, **params):
        return rule(out_idx, lambda k, idx: "0", in_aval, out_aval, **params, **(extra or {}))
    return probe


dynamic_index_rules[st.dynamic_slice_p] = lower_dynamic_slice
index_rules[st.dynamic_slice_p] = _static_probe(lower_dynamic_slice)
dynamic_index_rules[ix.gather_p] = lower_gather
index_rules[ix.gather_p] = _static_probe(lower_gather, {"index_ndim": 0})
