"""``sort`` lowered to loops: a stable sort of one or more operands along one axis.

The first ``num_keys`` operands are the keys, compared lexicographically; every operand
is permuted the same way. The order is the NumPy implementation's (the spec): NaN after
every number, ``-0.0`` equal to ``0.0`` (so the two keep their input order), complex
numbers by NumPy's rule (real part, then imaginary part, an element with a NaN part
after every element without). Equal keys keep their input order whatever
``is_stable`` says, which is what the interpret backend does too.

Two shapes of code, chosen by the static length ``n`` of the sorted axis:

* ``n <= INSERTION_MAX``: an insertion sort that moves the rows of all output operands
  together, in place — no temporaries, so a sort of a few values inside a ``fori_loop``
  body costs tens of nanoseconds, not an allocation and a call;
* larger ``n``: a permutation is sorted (insertion sort on runs of ``RUN`` elements,
  then bottom-up merges alternating between two index buffers, which is stable), then
  every operand is gathered through it.

``argsort`` is ``sort`` with an ``iota`` operand carried along (see
:mod:`absjit.ops.sorting`), so it lowers here as well; ``top_k`` is a selection per row
(:func:`lower_top_k`), not a sort.
"""
from __future__ import annotations

import numpy as np

from ....core.dims import Dim
from ....core.shapes import shape_code as _shape, size_code as _sz
from ....ops import sorting
from ...numba.lower_elementwise import dtype_ctor

__all__ = ["lower_sort", "lower_top_k", "INSERTION_MAX", "RUN"]

INSERTION_MAX = 32
RUN = 16


def _lt(dt, a: str, b: str) -> str:
    """Source for "key ``a`` sorts strictly before key ``b``" for one dtype."""
    kind = np.dtype(dt).kind
    if kind == "f":
        return f"_sort_lt_float({a}, {b})"
    if kind == "c":
        return f"_sort_lt_complex({a}, {b})"
    if kind == "b":
        return f"(not {a} and {b})"
    return f"({a} < {b})"


def _lex_lt(dts, a_of, b_of) -> str:
    """Lexicographic "before" over several keys: ``a_of(k)``/``b_of(k)`` give key k."""
    expr = _lt(dts[-1], a_of(len(dts) - 1), b_of(len(dts) - 1))
    for k in range(len(dts) - 2, -1, -1):
        a, b = a_of(k), b_of(k)
        lt, gt = _lt(dts[k], a, b), _lt(dts[k], b, a)
        expr = f"({lt} or (not {gt} and {expr}))"
    return expr


def lower_sort(ctx, outs, ins, in_avals, out_avals, *, dimension, is_stable, num_keys):
    shape = tuple(in_avals[0].shape)
    # A symbolic size (ranked level) is read at run time: its source is an expression.
    n = _sz(shape[dimension])
    others = [d for d in range(len(shape)) if d != dimension]
    dts = [np.dtype(a.dtype) for a in in_avals]
    key_dts = dts[:num_keys]
    lines = [f"{o} = _empty({_shape(shape)}, {dtype_ctor(dt)})" for o, dt in zip(outs, dts)]
    if any(type(d) is not Dim and d == 0 for d in shape):
        return lines
    depth = 0
    rows = []
    for d in others:
        q = ctx.fresh("q")
        lines.append("    " * depth + f"for {q} in range({_sz(shape[d])}):")
        rows.append(q)
        depth += 1
    sub = dict(zip(others, rows))

    def at(arr, pos):
        return f"{arr}[{', '.join(pos if d == dimension else sub[d] for d in range(len(shape)))}]"

    ind = "    " * depth
    t, u = ctx.fresh("t"), ctx.fresh("u")
    if type(shape[dimension]) is not Dim and shape[dimension] <= INSERTION_MAX:
        lines.append(ind + f"for {t} in range({n}):")
        lines += [ind + f"    {at(o, t)} = {at(x, t)}" for o, x in zip(outs, ins)]
        vs = [ctx.fresh("v") for _ in outs]
        lines.append(ind + f"for {t} in range(1, {n}):")
        lines += [ind + f"    {v} = {at(o, t)}" for v, o in zip(vs, outs)]
        before = _lex_lt(key_dts, lambda k: vs[k], lambda k: at(outs[k], f"{u} - 1"))
        lines += [ind + f"    {u} = {t}",
                  ind + f"    while {u} > 0 and {before}:"]
        lines += [ind + f"        {at(o, u)} = {at(o, f'{u} - 1')}" for o in outs]
        lines += [ind + f"        {u} -= 1"]
        lines += [ind + f"    {at(o, u)} = {v}" for v, o in zip(vs, outs)]
        return lines
    # Merge sort of a permutation; the index buffers are made once, outside the rows.
    # The two index buffers are the rows of one array, and each pass reads the row
    # ``side`` names: swapping two variables instead (``src, dst = dst, src``) sends
    # Numba's parallel passes into endless copy propagation when the kernel also holds
    # a ``prange`` loop.
    bufs, perm, src, dst, side = (ctx.fresh(p) for p in
                                  ("idx", "perm", "src", "dst", "side"))
    p, lo, hi, mid, a, b, w = (ctx.fresh(x) for x in ("p", "lo", "hi", "mid", "a", "b", "w"))
    lines[len(outs):len(outs)] = [f"{bufs} = _empty((2, {n}), np.int64)",
                                  f"{perm} = {bufs}[0]"]
    keys = ins[:num_keys]

    def key_before(i, j):
        return _lex_lt(key_dts, lambda k: at(keys[k], i), lambda k: at(keys[k], j))
    body = [
        f"for {t} in range({n}):",
        f"    {perm}[{t}] = {t}",
        f"for {lo} in range(0, {n}, {RUN}):",
        f"    {hi} = min({lo} + {RUN}, {n})",
        f"    for {t} in range({lo} + 1, {hi}):",
        f"        {p} = {perm}[{t}]",
        f"        {u} = {t}",
        f"        while {u} > {lo} and {key_before(p, f'{perm}[{u} - 1]')}:",
        f"            {perm}[{u}] = {perm}[{u} - 1]",
        f"            {u} -= 1",
        f"        {perm}[{u}] = {p}",
        f"{side} = 0",
        f"{w} = {RUN}",
        f"while {w} < {n}:",
        f"    {src} = {bufs}[{side}]",
        f"    {dst} = {bufs}[1 - {side}]",
        f"    for {lo} in range(0, {n}, 2 * {w}):",
        f"        {mid} = min({lo} + {w}, {n})",
        f"        {hi} = min({lo} + 2 * {w}, {n})",
        f"        {a} = {lo}",
        f"        {b} = {mid}",
        f"        for {t} in range({lo}, {hi}):",
        # Take from the left run unless the right one's head sorts strictly before
        # it: equal keys keep their order (stability).
        f"            if {a} < {mid} and ({b} >= {hi} or not "
        f"{key_before(f'{src}[{b}]', f'{src}[{a}]')}):",
        f"                {dst}[{t}] = {src}[{a}]",
        f"                {a} += 1",
        "            else:",
        f"                {dst}[{t}] = {src}[{b}]",
        f"                {b} += 1",
        f"    {side} = 1 - {side}",
        f"    {w} *= 2",
        f"{src} = {bufs}[{side}]",
        f"for {t} in range({n}):",
    ]
    body += [f"    {at(o, t)} = {at(x, f'{src}[{t}]')}" for o, x in zip(outs, ins)]
    return lines + [ind + line for line in body]


RULES = {sorting.sort_p: lower_sort}


def lower_top_k(ctx, outs, ins, in_avals, out_avals, *, k):
    """Per-row selection (:func:`.kernels_sort._top_k_rows`): O(n + m log k) per row of
    n entries of which m ever join the k best, instead of a sort of the whole row."""
    aval = in_avals[0]
    shape = tuple(aval.shape)
    out_shape = tuple(out_avals[0].shape)
    dt = np.dtype(aval.dtype)
    vals, idx = outs
    x = ins[0]
    lines = [f"{vals} = _empty({_shape(out_shape)}, {dtype_ctor(dt)})",
             f"{idx} = _empty({_shape(out_shape)}, np.int32)"]
    if k == 0 or any(type(d) is not Dim and d == 0 for d in shape[:-1]):
        return lines
    rows = "1"
    for d in shape[:-1]:
        rows = f"{rows} * {_sz(d)}"
    n = _sz(shape[-1])
    flip, mask = 0, 0
    if dt.kind == "f":
        view = f".view(np.int{dt.itemsize * 8})"
        mask = int(np.iinfo(np.dtype(f"int{dt.itemsize * 8}")).max)
    elif dt.kind == "b":
        view = ".view(np.uint8)"
    else:
        view = ""
        if dt == np.uint64:
            flip = -(1 << 63)
    x2 = ctx.fresh("x2")
    lines += [f"{x2} = {x}.reshape(({rows}, {n}))",
              f"_top_k_rows({x2}, {x2}{view}, np.int64({flip}), np.int64({mask}), "
              f"{vals}.reshape(({rows}, {k})), {idx}.reshape(({rows}, {k})))"]
    return lines


RULES[sorting.top_k_p] = lower_top_k
