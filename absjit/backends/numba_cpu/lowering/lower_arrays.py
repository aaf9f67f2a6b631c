"""Primitives lowered as whole-array statements: ``dot_general``, general ``reshape``,
``concatenate``, ``pad`` and the cumulative reductions.

``array_rules[p](ctx, outs, ins, in_avals, out_avals, **params) -> [lines]``: ``ins`` are
names of C-contiguous arrays (the generator materialises operands first), ``outs`` the
names to bind. ``ctx.fresh(prefix)`` gives unused local names.

``dot_general`` (:func:`dot_plan` decides) calls BLAS for real and complex floats: a
2-D product through Numba's ``np.dot`` (a transpose is passed to BLAS as a flag, not
copied), a batched one through :func:`.blas_kernels._bgemm`, one call per matrix
written in place into the result, on operands reshaped without a copy when their layout
allows (else gathered into (batch, rows, cols) buffers by plain loops). Integers, bool,
and batches of tiny matrices use a loop that accumulates in the result dtype (wrapping
for integers, or-of-ands for bool), as the NumPy impl rule does. Large products run as
blocks on a thread pool (:func:`.blas_kernels._pgemm_pool`). Rules emit plain loops rather
than ``np.transpose``/``np.full``/slice assignment: those take Numba far longer to
compile than the loops take to write.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ....debug import debug_print_p, format_values
from ....ops import indexing as ix, linalg, reductions as red, structural as st
from ....core.dims import Dim
from ....core.shapes import size_code as _sz, size_of
from . import lower_conv, lower_fft, lower_linalg, lower_sort
from ...numba.lower_elementwise import dtype_ctor, lower_max, lower_min
from .lower_host import host_rule

__all__ = ["array_rules", "array_rule", "dot_plan", "gemm_blocks", "DEBUG_FORMATS",
           "debug_print_callback", "NOT_LOWERED", "TOP_LEVEL_ON_HOST"]

# Whole-array primitives this backend does not render as loops, and why. At the top
# level of a program they run through their NumPy implementation between compiled
# pieces; inside a loop or branch, from an object-mode block of the kernel
# (:mod:`.lower_host`); either way with one warning, and only that equation leaves
# compiled code.
NOT_LOWERED = {
    "custom_lin": "appears only in linearised jaxprs, which are transposed, not run",
    "pure_callback": "calls Python: runs between compiled pieces",
    "debug_callback": "calls Python: runs between compiled pieces",
    "io_callback": "calls Python: runs between compiled pieces",
}
NOT_LOWERED.update((name, "a collective over a named vmap axis: vmap removes it before any "
                          "backend sees it") for name in ("psum", "pmax", "pmin",
                                                          "all_gather", "axis_index"))

# Primitives with a rule here that still run between compiled pieces at a program's top
# level, where a library's batched or threaded call is as fast (or faster: DUCC's FFTs)
# and costs no compile; their rules serve loop and branch bodies.
TOP_LEVEL_ON_HOST = frozenset({"fft", "eigh", "qr", "svd", "eig", "schur", "hessenberg"})

array_rules: dict = {}
# Rules that take symbolic sizes (the ranked level); a program whose other whole-array
# operations have symbolic shapes runs on the interpret backend.
SYMBOLIC_SIZES = {"dot_general", "reshape", "concatenate", "cumsum", "cumprod", "cummax",
                  "cummin", "sort", "top_k", "dynamic_update_slice", "scatter", "scatter-add",
                  "scatter-mul", "scatter-min", "scatter-max"}


def _shape(shape) -> str:
    return "(" + "".join(f"{_sz(d)}, " for d in shape) + ")"


def _prod(xs):
    return size_of(xs)


def _is_zero(n) -> bool:
    """``n`` is the literal 0 (a symbolic size may be anything)."""
    return type(n) is not Dim and n == 0


def _free(ndim, contract, batch):
    return [d for d in range(ndim) if d not in contract and d not in batch]


def _loop_nest(lines, dims, depth=0, var="q", parallel=False):
    """Open loops over ``dims`` (sizes), the outermost a ``prange`` when ``parallel``;
    returns (index names, body indentation)."""
    names = []
    for n, size in enumerate(dims):
        rng = "prange" if parallel and n == 0 else "range"
        lines.append("    " * depth + f"for {var}{n} in {rng}({_sz(size)}):")
        names.append(f"{var}{n}")
        depth += 1
    return names, depth


def _flat(names, sizes) -> str:
    """Row-major flat index of ``names`` within ``sizes`` (source text)."""
    expr = "0"
    for nm, size in zip(names, sizes):
        expr = nm if expr == "0" else f"({expr}) * {_sz(size)} + {nm}"
    return expr


def _gather_matrix(ctx, lines, name, aval, batch, rows, cols, dt):
    """A fresh C array (B, R, C) holding ``name`` with dims grouped as given."""
    shp = aval.shape
    sizes = [_prod([shp[d] for d in g]) for g in (batch, rows, cols)]
    out = ctx.fresh("m")
    lines.append(f"{out} = _empty({_shape(sizes)}, {dtype_ctor(dt)})")
    order = list(batch) + list(rows) + list(cols)
    names, depth = _loop_nest(lines, [shp[d] for d in order])
    by_dim = dict(zip(order, names))
    flat = [_flat([by_dim[d] for d in g], [shp[d] for d in g]) for g in (batch, rows, cols)]
    src = ", ".join(by_dim[d] for d in range(aval.ndim)) or "()"
    lines.append("    " * depth + f"{out}[{', '.join(flat)}] = {name}[{src}]")
    return out, sizes


# BLAS dtypes (result and operands alike): real and complex floats.
BLAS_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                              np.complex128))
# A batched product whose matrices take at most this many multiply-adds (M*N*K) runs
# as a loop over the output instead of one BLAS call per matrix: a call costs ~25-45 ns
# (measured on the 2-core AMD EPYC development machine, float32: 4096 products of 4x4
# take 0.08 ms as a loop and 0.13 ms through BLAS; 1024 of 8x8 0.16 ms and 0.05 ms).
LOOP_MAX_PRODUCT = 128
# That loop runs its batch axis as ``prange`` from this many multiply-adds in all
# (4096 products of 4x4: 0.052 ms in parallel, 0.069 ms serial; of 2x2 the parallel
# launch costs more than it saves).
PARALLEL_MIN_PRODUCT = 1 << 17
# A BLAS product whose matrices take at least this many multiply-adds each is split into
# blocks of result columns (and matrices of a batch) that the threads of absjit's pool
# (:mod:`.pool`) take one at a time, each a single-threaded BLAS call
# (:func:`.blas_kernels._pgemm_pool`): on a machine where other processes keep cores
# busy, OpenBLAS's fixed split waits for its slowest thread. Smaller matrices stay one
# serial call each: a task per 16x16 or 64x64 product cost more than it saved (256 of
# 16x16: 0.074 ms against 0.024 ms serial; 64 of 64x64: 0.19 ms against 0.155 ms; 2-core
# machine, load 1.4-1.8).
PARALLEL_GEMM_MIN = 1 << 20
# ... in about this many tasks, none narrower than ``GEMM_BLOCK_MIN`` columns: 16 for one
# matrix (rather than 8: on 2 cores with 1 busy process, the last task a preempted
# thread holds is half as long; no cost on an idle machine), 8 for a batch (cutting
# each of 8 256x256 products in two cost 6%).
GEMM_TASKS = 16
GEMM_BATCH_TASKS = 8
GEMM_BLOCK_MIN = 128


def _static(*sizes) -> bool:
    return all(type(d) is not Dim for d in sizes)


def dot_plan(in_avals, out_aval, dimension_numbers) -> str:
    """How ``dot_general`` is computed: ``"blas"`` (a BLAS call per matrix, written in
    place), ``"parallel blas"`` (large matrices: blocks of the result in Numba's
    threads, :data:`PARALLEL_GEMM_MIN`), ``"loop"`` (a loop accumulating in the result dtype:
    integers, bool, empty products, batches of tiny matrices) or ``"parallel loop"`` (the
    same with its batch axis in ``prange``, where the program allows it)."""
    (lc, rc), (lb, rb) = dimension_numbers
    la, ra = in_avals
    dt = np.dtype(out_aval.dtype)
    if dt not in BLAS_DTYPES or np.dtype(la.dtype) != dt or np.dtype(ra.dtype) != dt:
        return "loop"
    k = _prod([la.shape[d] for d in lc])
    if _is_zero(_prod(out_aval.shape)) or _is_zero(k):
        return "loop"
    nb = _prod([la.shape[d] for d in lb])
    mn = _prod(out_aval.shape[len(lb):])
    if not _static(nb, mn, k) or not out_aval.ndim:
        return "blas"
    if not lb or mn * k > LOOP_MAX_PRODUCT:
        return "parallel blas" if mn * k >= PARALLEL_GEMM_MIN else "blas"
    return "parallel loop" if nb * mn * k >= PARALLEL_MIN_PRODUCT and nb > 1 else "loop"


def _pgemm_name() -> str:
    """The blocked product to call: on the native pool where it runs
    (:mod:`.pool`), else in Numba's threads."""
    from ..parallel import pool
    return "_pgemm_pool" if pool.ensure() else "_pgemm_prange"


def gemm_blocks(nb, n) -> int:
    """Column blocks per matrix for :func:`.blas_kernels._pgemm_pool`: about
    :data:`GEMM_TASKS` tasks for one matrix, :data:`GEMM_BATCH_TASKS` in all for a
    batch of ``nb``, none narrower than :data:`GEMM_BLOCK_MIN`.

    Examples
    --------
    >>> gemm_blocks(1, 2000), gemm_blocks(8, 256), gemm_blocks(1, 300), gemm_blocks(2, 2000)
    (15, 1, 2, 4)
    """
    tasks = GEMM_TASKS if nb == 1 else GEMM_BATCH_TASKS
    return max(1, min(-(-tasks // nb), n // GEMM_BLOCK_MIN))


def _bmk_transposed(aval, batch, free, contract, natural_first):
    """Whether ``aval`` laid out in C order is (batch, first, second) with ``first``
    being ``free`` (``natural_first``) or ``contract``: False when it is in the natural
    order, True when the two groups are swapped, None when a copy must regroup it."""
    dims = tuple(range(aval.ndim))
    nb = len(batch)
    if tuple(batch) != dims[:nb]:
        return None
    rest = dims[nb:]
    a, b = (tuple(free), tuple(contract)) if natural_first else (tuple(contract), tuple(free))
    if rest == a + b:
        return False
    if rest == b + a:
        return True
    return None


def _batched_operand(ctx, lines, name, aval, batch, free, contract, lhs_side, dt):
    """``(3-D array name, transposed)``: ``name`` viewed as (B, M, K) / (B, K, M) for the
    lhs or (B, K, N) / (B, N, K) for the rhs when its layout allows, else copied into the
    natural grouping."""
    t = _bmk_transposed(aval, batch, free, contract, lhs_side)
    shp = aval.shape
    sizes = [_prod([shp[d] for d in g]) for g in (batch, free, contract)]
    if t is None:
        groups = (batch, free, contract) if lhs_side else (batch, contract, free)
        out, _ = _gather_matrix(ctx, lines, name, aval, *groups, dt)
        return out, False
    nb, f, c = sizes
    first, second = (f, c) if lhs_side != t else (c, f)
    view = ctx.fresh("v")
    lines.append(f"{view} = {name}.reshape({_shape((nb, first, second))})")
    return view, t


def lower_dot_general(ctx, outs, ins, in_avals, out_avals, *, dimension_numbers, precision,
                      preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = ins
    la, ra = in_avals
    out_aval = out_avals[0]
    dt = np.dtype(out_aval.dtype)
    lines = []
    lf, rf = _free(la.ndim, lc, lb), _free(ra.ndim, rc, rb)
    plan = dot_plan(in_avals, out_aval, dimension_numbers)
    if plan == "parallel blas" and not ctx.parallel_blas:
        plan = "blas"  # the caller runs BLAS with its own threads
    if plan == "blas" and la.ndim == 1 and ra.ndim == 1 and len(lc) == 1:
        # A vector dot product through Numba's np.dot (BLAS's dot). Matrix products go
        # through _bgemm below, not np.dot: its implementation costs a process's first
        # kernel with a product ~0.15-0.2 s to compile (64x64 @ 64x64 + relu: 0.53 s ->
        # 0.38 s), while a vector's costs less than _bgemm's (0.20 s against 0.34 s).
        res = ctx.fresh("r")
        lines += [f"{res} = {dtype_ctor(dt)}(_dot({lhs}, {rhs}))",
                  f"{outs[0]} = _empty((), {dtype_ctor(dt)})",
                  f"{outs[0]}[()] = {res}"]
        return lines
    if plan in ("blas", "parallel blas"):
        # (B, M, K) @ (B, K, N) in place, one BLAS call per matrix; operands whose
        # layout already groups (batch, free, contracting) dims are only reshaped.
        a3, ta = _batched_operand(ctx, lines, lhs, la, lb, lf, lc, True, dt)
        b3, tb = _batched_operand(ctx, lines, rhs, ra, rb, rf, rc, False, dt)
        nb = _prod([la.shape[d] for d in lb])
        m = _prod([la.shape[d] for d in lf])
        n = _prod([ra.shape[d] for d in rf])
        o3 = ctx.fresh("o")
        # Flags as run-time values: a literal True/False would make Numba compile the
        # helper once per combination of them (a second or so each).
        flags = f"np.bool_({ta}), np.bool_({tb})"
        call = f"_bgemm({a3}, {b3}, {o3}, {flags})" if plan == "blas" else \
            f"{_pgemm_name()}({a3}, {b3}, {o3}, {flags}, np.int64({gemm_blocks(nb, n)}))"
        lines += [f"{o3} = _empty({_shape((nb, m, n))}, {dtype_ctor(dt)})", call,
                  f"{outs[0]} = {o3}.reshape({_shape(out_aval.shape)})"]
        return lines
    # A loop on the operands as they are: no copies, accumulate in the result dtype
    # (wrapping for integers, or-of-ands for bool), as the impl rule does. With literal
    # sizes LLVM unrolls the products of tiny matrices completely.
    ctor = dtype_ctor(dt)
    out = outs[0]
    lines.append(f"{out} = _empty({_shape(out_aval.shape)}, {ctor})")
    nbatch = len(lb)
    out_dims = list(out_aval.shape)
    parallel = plan == "parallel loop" and ctx.parallel_ok
    ctx.uses_parallel |= parallel
    names, depth = _loop_nest(lines, out_dims, 0, "q", parallel)
    bidx, lidx, ridx = names[:nbatch], names[nbatch:nbatch + len(lf)], names[nbatch + len(lf):]
    acc = ctx.fresh("acc")
    lines.append("    " * depth + f"{acc} = {'False' if dt == np.bool_ else ctor + '(0)'}")
    cnames, cdepth = _loop_nest(lines, [la.shape[d] for d in lc], depth, "r")
    lsub, rsub = [None] * la.ndim, [None] * ra.ndim
    for d, nm in zip(lb, bidx):
        lsub[d] = nm
    for d, nm in zip(rb, bidx):
        rsub[d] = nm
    for d, nm in zip(lf, lidx):
        lsub[d] = nm
    for d, nm in zip(rf, ridx):
        rsub[d] = nm
    for dl, dr, nm in zip(lc, rc, cnames):
        lsub[dl], rsub[dr] = nm, nm
    x = f"{lhs}[{', '.join(lsub) or '()'}]"
    y = f"{rhs}[{', '.join(rsub) or '()'}]"
    if la.dtype != dt:
        x, y = f"{ctor}({x})", f"{ctor}({y})"
    step = f"{acc} or ({x} and {y})" if dt == np.bool_ else f"{ctor}({acc} + {x} * {y})"
    lines.append("    " * cdepth + f"{acc} = {step}")
    lines.append("    " * depth + f"{out}[{', '.join(names) or '()'}] = {acc}")
    return lines


def lower_reshape(ctx, outs, ins, in_avals, out_avals, *, new_sizes, dimensions):
    src = ins[0]
    aval = in_avals[0]
    if dimensions is not None and tuple(dimensions) != tuple(range(aval.ndim)):
        lines = []
        t, _ = _gather_matrix(ctx, lines, src, aval, (), tuple(dimensions), (), aval.dtype)
        return lines + [f"{outs[0]} = {t}.reshape({_shape(new_sizes)})"]
    return [f"{outs[0]} = {src}.reshape({_shape(new_sizes)})"]


def lower_concatenate(ctx, outs, ins, in_avals, out_avals, *, dimension):
    out_aval = out_avals[0]
    out = outs[0]
    lines = [f"{out} = _empty({_shape(out_aval.shape)}, {dtype_ctor(out_aval.dtype)})"]
    start = 0
    for name, aval in zip(ins, in_avals):
        names, depth = _loop_nest(lines, aval.shape)
        dst = [f"{_sz(start)} + {nm}" if d == dimension and not _is_zero(start) else nm
               for d, nm in enumerate(names)]
        lines.append("    " * depth + f"{out}[{', '.join(dst)}] = {name}[{', '.join(names)}]")
        start += aval.shape[dimension]
    return lines


def lower_pad(ctx, outs, ins, in_avals, out_avals, *, padding_config):
    x, v = ins
    aval, out_aval = in_avals[0], out_avals[0]
    out = outs[0]
    lines = [f"{out} = _empty({_shape(out_aval.shape)}, {dtype_ctor(aval.dtype)})"]
    names, depth = _loop_nest(lines, out_aval.shape, 0, "p")
    lines.append("    " * depth + f"{out}[{', '.join(names) or '()'}] = {v}[()]")
    names, depth = _loop_nest(lines, aval.shape, 0, "q")
    dst, conds = [], []
    for nm, (lo, hi, it), size in zip(names, padding_config, out_aval.shape):
        pos = f"{lo} + {it + 1} * {nm}"
        dst.append(f"({pos})")
        if lo < 0 or hi < 0:
            conds.append(f"0 <= {pos} < {size}")
    ind = "    " * depth
    if conds:  # negative padding crops: skip elements that fall outside
        lines.append(ind + f"if {' and '.join(conds)}:")
        ind += "    "
    lines.append(ind + f"{out}[{', '.join(dst) or '()'}] = {x}[{', '.join(names) or '()'}]")
    return lines


def _cumulative(combine):
    def rule(ctx, outs, ins, in_avals, out_avals, *, axis, reverse):
        aval = in_avals[0]
        out, x = outs[0], ins[0]
        n = aval.shape[axis]
        ctor = dtype_ctor(aval.dtype)
        others = [d for d in range(aval.ndim) if d != axis]
        lines = [f"{out} = _empty({_shape(aval.shape)}, {ctor})"]
        names, depth = _loop_nest(lines, [aval.shape[d] for d in others])
        if _is_zero(n):
            return lines[:1]
        sub = dict(zip(others, names))
        order = f"range({_sz(n)} - 1, -1, -1)" if reverse else f"range({_sz(n)})"
        first = n - 1 if reverse else 0
        ind = "    " * depth
        lines.append(ind + f"for r0 in {order}:")

        def at(arr, pos):
            return f"{arr}[{', '.join(pos if d == axis else sub[d] for d in range(aval.ndim))}]"
        prev = "r0 + 1" if reverse else "r0 - 1"
        lines += [ind + f"    if r0 == {_sz(first)}:",
                  ind + f"        {at(out, 'r0')} = {at(x, 'r0')}",
                  ind + "    else:",
                  ind + f"        {at(out, 'r0')} = {ctor}("
                  f"{combine(at(out, prev), at(x, 'r0'), np.dtype(aval.dtype))})"]
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


def lower_dynamic_update_slice(ctx, outs, ins, in_avals, out_avals):
    x, upd, *starts = ins
    aval, uaval = in_avals[0], in_avals[1]
    out = outs[0]
    lines = [f"{out} = _empty({_shape(aval.shape)}, {dtype_ctor(aval.dtype)})"]
    names, depth = _loop_nest(lines, aval.shape, 0, "p")
    idx = ", ".join(names) or "()"
    lines.append("    " * depth + f"{out}[{idx}] = {x}[{idx}]")
    offs = []
    for s, n, k in zip(starts, aval.shape, uaval.shape):
        o = ctx.fresh("start")
        lines.append(f"{o} = min(max(int({s}[()]), 0), {_sz(n - k)})")
        offs.append(o)
    names, depth = _loop_nest(lines, uaval.shape, 0, "q")
    dst = ", ".join(f"{o} + {nm}" for o, nm in zip(offs, names)) or "()"
    lines.append("    " * depth + f"{out}[{dst}] = {upd}[{', '.join(names) or '()'}]")
    return lines


array_rules[st.dynamic_update_slice_p] = lower_dynamic_update_slice


def _scatter(combine):
    """Copy the operand, then fold every in-range update into it in order (so plain
    ``scatter`` keeps the last of duplicate updates, as the impl rule does)."""
    def rule(ctx, outs, ins, in_avals, out_avals, *, axes):
        x, upd, *idx = ins
        aval, uaval = in_avals[0], in_avals[1]
        nb = in_avals[2].ndim
        out = outs[0]
        ctor = dtype_ctor(aval.dtype)
        lines = [f"{out} = _empty({_shape(aval.shape)}, {ctor})"]
        names, depth = _loop_nest(lines, aval.shape, 0, "p")
        at = ", ".join(names) or "()"
        lines.append("    " * depth + f"{out}[{at}] = {x}[{at}]")
        # The indices depend on the batch position only: read and test them once per
        # batch position, then fold the whole window of the other axes (a plain loop
        # the vectoriser can widen: ``x.at[rows].add(v)`` adds rows, not elements).
        bidx, depth = _loop_nest(lines, uaval.shape[:nb], 0, "q")
        ind = "    " * depth
        ts, conds = {}, []
        for k, d in enumerate(axes):
            t = ctx.fresh("t")
            lines.append(ind + f"{t} = int({idx[k]}[{', '.join(bidx) or '()'}])")
            ts[d] = t
            conds.append(f"0 <= {t} < {_sz(aval.shape[d])}")
        lines.append(ind + f"if {' and '.join(conds)}:")
        rest_names, depth = _loop_nest(lines, uaval.shape[nb:], depth + 1, "r")
        ind = "    " * depth
        rest = iter(rest_names)
        pos = [ts[d] if d in ts else next(rest) for d in range(aval.ndim)]
        tgt = f"{out}[{', '.join(pos) or '()'}]"
        val = f"{upd}[{', '.join(bidx + rest_names) or '()'}]"
        lines.append(ind + f"{tgt} = {ctor}({combine(tgt, val, np.dtype(aval.dtype))})")
        return lines
    return rule


array_rules[ix.scatter_p] = _scatter(lambda old, new, dt: new)
array_rules[ix.scatter_add_p] = _scatter(lambda old, new, dt: f"{old} + {new}")
array_rules[ix.scatter_mul_p] = _scatter(lambda old, new, dt: f"{old} * {new}")
array_rules[ix.scatter_min_p] = _scatter(
    lambda old, new, dt: lower_min([old, new], [_A(dt)] * 2, None))
array_rules[ix.scatter_max_p] = _scatter(
    lambda old, new, dt: lower_max([old, new], [_A(dt)] * 2, None))


# -- debug_print: object mode formats values exactly as the eager interpreter does ----
def lower_debug_print(ctx, outs, ins, in_avals, out_avals, *, fmt, in_tree, views=None):
    # A stable key (not hash(), which varies per process) keeps the source, and so the
    # disk-cached kernel, the same across processes. ``views`` names, per operand, the
    # dtype its buffer holds the bits of (float16 kept as uint16: :mod:`.half`) or None.
    key = hashlib.sha256(repr((fmt, in_tree, views)).encode()).hexdigest()[:16]
    DEBUG_FORMATS[key] = (fmt, in_tree, views)
    args = "".join(f", {x}" for x in ins)
    return ["with objmode():", f"    debug_print_callback({key!r}{args})"]


def debug_print_callback(key, *vals):
    """Called from object mode inside a kernel: print like the eager interpreter."""
    fmt, in_tree, views = DEBUG_FORMATS[key]
    if views:
        vals = [v if dt is None else np.asarray(v).view(dt) for v, dt in zip(vals, views)]
    print(format_values(fmt, in_tree, vals))


# key -> (fmt, in_tree, views): filled while rendering, read by the compiled kernel's callback.
DEBUG_FORMATS: dict = {}
array_rules[debug_print_p] = lower_debug_print
array_rules.update(lower_sort.RULES)
array_rules.update(lower_conv.RULES)
array_rules.update(lower_linalg.RULES)
array_rules.update(lower_fft.RULES)


def array_rule(prim):
    """The rule that renders ``prim``: its loop lowering, or the object-mode call of its
    NumPy implementation (:func:`.lower_host.host_rule`) when it has none."""
    rule = array_rules.get(prim)
    return rule if rule is not None else host_rule(prim)
