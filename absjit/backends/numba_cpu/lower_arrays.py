"""Primitives lowered as whole-array statements: ``dot_general``, general ``reshape``,
``concatenate``, ``pad`` and the cumulative reductions.

``array_rules[p](ctx, outs, ins, in_avals, out_avals, **params) -> [lines]``: ``ins`` are
names of C-contiguous arrays (the generator materialises operands first), ``outs`` the
names to bind. ``ctx.fresh(prefix)`` gives unused local names.

``dot_general`` calls BLAS through Numba's ``np.dot`` for float32/float64 (a 2-D
transpose is passed to BLAS as a flag, not copied); other dtypes use a loop that
accumulates in the result dtype (wrapping for integers, or-of-ands for bool), as the
NumPy impl rule does.
"""
from __future__ import annotations

import numpy as np

from ...ops import linalg, reductions as red, structural as st
from .lower_elementwise import dtype_ctor, lower_max, lower_min

__all__ = ["array_rules"]

array_rules: dict = {}


def _shape(shape) -> str:
    return "(" + "".join(f"{int(d)}, " for d in shape) + ")"


def _prod(xs) -> int:
    return int(np.prod(xs, dtype=np.int64)) if len(xs) else 1


def _free(ndim, contract, batch):
    return [d for d in range(ndim) if d not in contract and d not in batch]


def _as_3d(ctx, lines, name, aval, batch, first, second):
    """``name`` transposed to (batch, first, second) and reshaped to 3-D."""
    perm = tuple(batch) + tuple(first) + tuple(second)
    shape3 = (_prod([aval.shape[d] for d in batch]), _prod([aval.shape[d] for d in first]),
              _prod([aval.shape[d] for d in second]))
    src = name
    if perm != tuple(range(aval.ndim)):
        src = f"np.ascontiguousarray(np.transpose({name}, {_shape(perm)}))"
    out = ctx.fresh(name + "_3d")
    lines.append(f"{out} = {src}.reshape({_shape(shape3)})")
    return out, shape3


def lower_dot_general(ctx, outs, ins, in_avals, out_avals, *, dimension_numbers, precision,
                      preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = ins
    la, ra = in_avals
    out_aval = out_avals[0]
    dt = np.dtype(out_aval.dtype)
    lines = []
    if la.dtype != dt:
        lhs2, rhs2 = ctx.fresh("lhs"), ctx.fresh("rhs")
        lines += [f"{lhs2} = {lhs}.astype({dtype_ctor(dt)})",
                  f"{rhs2} = {rhs}.astype({dtype_ctor(dt)})"]
        lhs, rhs = lhs2, rhs2
    lf, rf = _free(la.ndim, lc, lb), _free(ra.ndim, rc, rb)
    blas = dt in (np.dtype(np.float32), np.dtype(np.float64))
    if blas and not lb and la.ndim <= 2 and ra.ndim <= 2 and len(lc) == 1 and \
            _prod(out_aval.shape) > 0 and la.shape[lc[0]] > 0:
        # Plain matrix/vector products: BLAS takes transposes as flags.
        a = lhs if la.ndim == 1 or lc[0] == 1 else f"{lhs}.T"
        b = rhs if ra.ndim == 1 or rc[0] == 0 else f"{rhs}.T"
        res = f"np.dot({a}, {b})"
        if la.ndim == 1 and ra.ndim == 1:
            lines.append(f"{outs[0]} = np.full((), {res}, {dtype_ctor(dt)})")
        else:
            lines.append(f"{outs[0]} = {res}")
        return lines
    a3, (nb, m, k) = _as_3d(ctx, lines, lhs, la, lb, lf, lc)
    b3, (_, _, n) = _as_3d(ctx, lines, rhs, ra, rb, rc, rf)
    o3 = ctx.fresh("o3")
    lines.append(f"{o3} = np.zeros({_shape((nb, m, n))}, {dtype_ctor(dt)})")
    if blas and m and n and k:
        lines += [f"for b in range({nb}):",
                  f"    {o3}[b] = np.dot({a3}[b], {b3}[b])"]
    else:
        if dt == np.bool_:
            step = f"{o3}[b, i, j] = {o3}[b, i, j] or (av and {b3}[b, p, j])"
        else:
            step = f"{o3}[b, i, j] = {dtype_ctor(dt)}({o3}[b, i, j] + av * {b3}[b, p, j])"
        lines += [f"for b in range({nb}):",
                  f"    for i in range({m}):",
                  f"        for p in range({k}):",
                  f"            av = {a3}[b, i, p]",
                  f"            for j in range({n}):",
                  f"                {step}"]
    lines.append(f"{outs[0]} = {o3}.reshape({_shape(out_aval.shape)})")
    return lines


def lower_reshape(ctx, outs, ins, in_avals, out_avals, *, new_sizes, dimensions):
    src = ins[0]
    if dimensions is not None and tuple(dimensions) != tuple(range(in_avals[0].ndim)):
        src = f"np.ascontiguousarray(np.transpose({src}, {_shape(dimensions)}))"
    return [f"{outs[0]} = {src}.reshape({_shape(new_sizes)})"]


def lower_concatenate(ctx, outs, ins, in_avals, out_avals, *, dimension):
    out_aval = out_avals[0]
    lines = [f"{outs[0]} = np.empty({_shape(out_aval.shape)}, {dtype_ctor(out_aval.dtype)})"]
    start = 0
    for name, aval in zip(ins, in_avals):
        size = aval.shape[dimension]
        if size:
            idx = ", ".join(f"{start}:{start + size}" if d == dimension else ":"
                            for d in range(out_aval.ndim))
            lines.append(f"{outs[0]}[{idx}] = {name}")
        start += size
    return lines


def lower_pad(ctx, outs, ins, in_avals, out_avals, *, padding_config):
    # Pad into a big array (non-negative edges, interior), then crop negative edges.
    x, v = ins
    aval = in_avals[0]
    dt = dtype_ctor(aval.dtype)
    big, put, crop = [], [], []
    for d, (lo, hi, it) in zip(aval.shape, padding_config):
        n = max(lo, 0) + max(hi, 0) + d + max(d - 1, 0) * it
        big.append(n)
        start = max(lo, 0)
        stop = start + (d - 1) * (it + 1) + 1 if d else start
        put.append(f"{start}:{stop}:{it + 1}")
        crop.append(f"{-min(lo, 0)}:{n + min(hi, 0)}")
    tmp = ctx.fresh("padded")
    lines = [f"{tmp} = np.full({_shape(big)}, {v}[()], {dt})"]
    if aval.size:
        lines.append(f"{tmp}[{', '.join(put) or '()'}] = {x}")
    if any(lo < 0 or hi < 0 for lo, hi, _ in padding_config):
        lines.append(f"{outs[0]} = np.ascontiguousarray({tmp}[{', '.join(crop)}])")
    else:
        lines.append(f"{outs[0]} = {tmp}")
    return lines


def _cumulative(combine):
    def rule(ctx, outs, ins, in_avals, out_avals, *, axis, reverse):
        aval = in_avals[0]
        out = outs[0]
        n = aval.shape[axis]
        dt = np.dtype(aval.dtype)
        outer, inner = _prod(aval.shape[:axis]), _prod(aval.shape[axis + 1:])
        x3 = ctx.fresh("x3")
        o3 = ctx.fresh("o3")
        prev = "(j + 1)" if reverse else "(j - 1)"
        order = f"range({n} - 2, -1, -1)" if reverse else f"range(1, {n})"
        first = n - 1 if reverse else 0
        acc = combine(f"{o3}[a, {prev}, c]", f"{x3}[a, j, c]", dt)
        lines = [f"{x3} = {ins[0]}.reshape({_shape((outer, n, inner))})",
                 f"{o3} = np.empty({_shape((outer, n, inner))}, {dtype_ctor(dt)})"]
        if n:
            lines += [f"for a in range({outer}):",
                      f"    for c in range({inner}):",
                      f"        {o3}[a, {first}, c] = {x3}[a, {first}, c]",
                      f"    for j in {order}:",
                      f"        for c in range({inner}):",
                      f"            {o3}[a, j, c] = {dtype_ctor(dt)}({acc})"]
        lines.append(f"{out} = {o3}.reshape({_shape(aval.shape)})")
        return lines
    return rule


class _A:
    def __init__(self, dt):
        self.dtype = dt


array_rules[linalg.dot_general_p] = lower_dot_general
array_rules[st.reshape_p] = lower_reshape
array_rules[st.concatenate_p] = lower_concatenate
array_rules[st.pad_p] = lower_pad
array_rules[red.cumsum_p] = _cumulative(lambda a, b, dt: f"{a} + {b}")
array_rules[red.cumprod_p] = _cumulative(lambda a, b, dt: f"{a} * {b}")
array_rules[red.cummax_p] = _cumulative(lambda a, b, dt: lower_max([a, b], [_A(dt)] * 2, None))
array_rules[red.cummin_p] = _cumulative(lambda a, b, dt: lower_min([a, b], [_A(dt)] * 2, None))
