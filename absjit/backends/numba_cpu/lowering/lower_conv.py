"""``conv_general_dilated`` lowered to loops: every layout (dimension numbers), stride,
padding (negative crops), lhs and rhs dilation, feature groups and batch groups.

Four shapes of code:

* **taps as axpy loops** (float32/float64, one spatial axis, stride 1, no lhs dilation
  or batch groups, at most ``AXPY_MAX_FEATURE_PAIRS`` feature pairs per group:
  ``jnp.convolve``/``correlate``): each kernel tap adds ``w[k] * x[p + off(k)]`` to the
  output row over the in-bounds range of ``p``, a vectorised loop with no window
  matrix.
* **shifted products** (float32/float64, stride 1, no lhs dilation or batch groups, at
  least ``SHIFTED_MIN_FEATURES`` input features per group): per batch element the input
  is copied once into a zero-padded ``(features, padded positions)`` matrix, and each
  kernel offset adds one BLAS product ``W_k @ X[:, off(k):]`` over a shifted view of it
  (:func:`.blas_kernels._gemm_rows`): no window matrix, half the work of im2col on a
  3x3 convolution.
* **im2col + BLAS** (float32/float64 operands and result, at least ``BLAS_MIN_MACS``
  multiply-adds): per group and output batch element, the input windows are gathered
  into a ``(in_features * kernel_size, out_positions)`` matrix (zeros where a window
  reaches into padding or between dilated input elements), multiplied by the group's
  ``(out_features, in_features * kernel_size)`` kernel matrix with one BLAS call, and
  the product is written to the output in its layout. The innermost gather runs over
  the last output spatial axis with its in-bounds range computed up front, so the copy
  has no per-element test.
* **direct loops** (small convolutions, integer and complex dtypes, and
  ``preferred_element_type`` different from the operands'): one accumulator per output
  element, the operands converted to the result dtype first and accumulated in it
  (integers wrap), as the NumPy implementation does.

Coordinates: output position ``p`` and kernel offset ``k`` read the lhs-dilated,
padded input at ``t = p * stride + k * rhs_dilation``; that is dilated coordinate
``i = t - pad_low``, an input element only when ``0 <= i < dilated size`` and
``i % lhs_dilation == 0`` (then element ``i // lhs_dilation``), else zero.
"""
from __future__ import annotations

import numpy as np

from ....ops import conv as conv_ops
from ...numba.lower_elementwise import dtype_ctor

__all__ = ["lower_conv_general_dilated", "BLAS_MIN_MACS", "PARALLEL_MIN_MACS",
           "SHIFTED_MIN_FEATURES", "AXPY_MAX_FEATURE_PAIRS"]

# Below this many multiply-adds the direct loops beat gathering and a BLAS call.
BLAS_MIN_MACS = 1 << 15
# From this many multiply-adds an im2col convolution of several batch elements runs them
# in parallel (about a millisecond of work on one core).
PARALLEL_MIN_MACS = 1 << 22
# A stride-1 convolution with at least this many input features per group is one BLAS
# product per kernel offset over shifted views of the padded input (no im2col matrix).
SHIFTED_MIN_FEATURES = 16


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= int(x)
    return out


def _shape(shape) -> str:
    return "(" + "".join(f"{int(d)}, " for d in shape) + ")"


def _index(arr, ndim, by_axis) -> str:
    return f"{arr}[{', '.join(by_axis[a] for a in range(ndim)) or '()'}]"


def _flat(names, sizes) -> str:
    """The row-major flat index of loop variables ``names`` over extents ``sizes`` (the
    first extent is not needed); ``"0"`` for none."""
    flat = "0"
    for name, size in zip(names, sizes):
        flat = name if flat == "0" else f"({flat}) * {size} + {name}"
    return flat


def _copy_kernel(lines, rhs, geo, g, o, c, ks, target) -> None:
    """Loops over (group, out feature of the group, in feature, kernel offsets) writing
    each kernel element to ``target`` (an indexed array written with those names)."""
    lines += [f"for {g} in range({geo.groups}):", f"    for {o} in range({geo.og}):",
              f"        for {c} in range({geo.n_feat_in}):"]
    depth = 3
    for k, size in zip(ks, geo.k_sp):
        lines.append("    " * depth + f"for {k} in range({size}):")
        depth += 1
    ra = {geo.rspec[0]: f"{g} * {geo.og} + {o}", geo.rspec[1]: c}
    ra.update(zip(geo.rspec[2:], ks))
    lines.append("    " * depth + f"{target} = {_index(rhs, geo.ndim, ra)}")


class _Geometry:
    """The convolution's sizes, read once from the avals and params."""

    def __init__(self, in_avals, out_avals, p):
        lhs, rhs = in_avals
        dn = p["dimension_numbers"]
        self.ndim = len(lhs.shape)
        self.lspec, self.rspec, self.ospec = dn.lhs_spec, dn.rhs_spec, dn.out_spec
        self.out_shape = tuple(int(d) for d in out_avals[0].shape)
        self.in_sp = [int(lhs.shape[a]) for a in self.lspec[2:]]
        self.k_sp = [int(rhs.shape[a]) for a in self.rspec[2:]]
        self.out_sp = [self.out_shape[a] for a in self.ospec[2:]]
        self.n_out = self.out_shape[self.ospec[0]]
        self.n_feat_out = int(rhs.shape[self.rspec[0]])
        self.n_feat_in = int(rhs.shape[self.rspec[1]])   # per group
        fgc, bgc = p["feature_group_count"], p["batch_group_count"]
        self.fgc, self.bgc = fgc, bgc
        self.groups = max(fgc, bgc)
        self.og = self.n_feat_out // self.groups
        self.strides = p["window_strides"]
        self.pad_lo = [lo for lo, _ in p["padding"]]
        self.ld, self.rd = p["lhs_dilation"], p["rhs_dilation"]
        self.dil = [0 if n == 0 else (n - 1) * r + 1 for n, r in zip(self.in_sp, self.ld)]

    def lhs_batch(self, g, n):
        return f"{g} * {self.n_out} + {n}" if self.bgc > 1 else n

    def lhs_feature(self, g, c):
        return f"{g} * {self.n_feat_in} + {c}" if self.fgc > 1 else c


def _in_window(geo, d, p, k, lines, ind, ctx):
    """Lines binding the input coordinate for spatial axis ``d`` and the condition
    under which it is a real input element: ``(name, condition or None)``."""
    i = ctx.fresh("i")
    lines.append(ind + f"{i} = {p} * {geo.strides[d]} + {k} * {geo.rd[d]} - "
                       f"({geo.pad_lo[d]})")
    cond = f"0 <= {i} < {geo.dil[d]}"
    if geo.ld[d] != 1:
        cond += f" and {i} % {geo.ld[d]} == 0"
        x = ctx.fresh("x")
        lines.append(ind + f"{x} = {i} // {geo.ld[d]}")
        return x, cond, i
    return i, cond, i


def _direct(ctx, out, lhs, rhs, geo, dt, lines):
    ctor = dtype_ctor(dt)
    n, o, c = ctx.fresh("n"), ctx.fresh("o"), ctx.fresh("c")
    ps = [ctx.fresh("p") for _ in geo.out_sp]
    ks = [ctx.fresh("k") for _ in geo.k_sp]
    acc = ctx.fresh("acc")
    heads = [f"for {n} in range({geo.n_out}):", f"for {o} in range({geo.n_feat_out}):"]
    heads += [f"for {p} in range({s}):" for p, s in zip(ps, geo.out_sp)]
    depth = 0
    for h in heads:
        lines.append("    " * depth + h)
        depth += 1
    ind = "    " * depth
    g = ctx.fresh("g")
    lines += [ind + f"{g} = {o} // {geo.og}",
              ind + f"{acc} = {ctor}(0)",
              ind + f"for {c} in range({geo.n_feat_in}):"]
    depth += 1
    xs = []
    for d, (p, k) in enumerate(zip(ps, ks)):
        ind = "    " * depth
        lines.append(ind + f"for {k} in range({geo.k_sp[d]}):")
        ind += "    "
        x, cond, _ = _in_window(geo, d, p, k, lines, ind, ctx)
        lines += [ind + f"if not ({cond}):", ind + "    continue"]
        xs.append(x)
        depth += 1
    ind = "    " * depth
    la = {geo.lspec[0]: geo.lhs_batch(g, n), geo.lspec[1]: geo.lhs_feature(g, c)}
    la.update(zip(geo.lspec[2:], xs))
    ra = {geo.rspec[0]: o, geo.rspec[1]: c}
    ra.update(zip(geo.rspec[2:], ks))
    prod = f"{ctor}({_index(lhs, geo.ndim, la)}) * {ctor}({_index(rhs, geo.ndim, ra)})"
    step = f"{acc} + {prod}" if dt.kind in "fc" else f"{ctor}({acc} + {prod})"
    lines.append(ind + f"{acc} = {step}")
    oa = {geo.ospec[0]: n, geo.ospec[1]: o}
    oa.update(zip(geo.ospec[2:], ps))
    lines.append("    " * (2 + len(ps)) + f"{_index(out, geo.ndim, oa)} = {acc}")


def _im2col(ctx, out, lhs, rhs, geo, dt, lines):
    ctor = dtype_ctor(dt)
    ksize = _prod(geo.k_sp)
    rows, cols_n = geo.n_feat_in * ksize, _prod(geo.out_sp)
    wm, cols, res = ctx.fresh("wm"), ctx.fresh("cols"), ctx.fresh("res")
    g, o, c, n = ctx.fresh("g"), ctx.fresh("o"), ctx.fresh("c"), ctx.fresh("n")
    ks = [ctx.fresh("k") for _ in geo.k_sp]
    ps = [ctx.fresh("p") for _ in geo.out_sp]
    # The kernel as (groups, out features per group, in features * kernel positions).
    lines.append(f"{wm} = _empty({_shape((geo.groups, geo.og, rows))}, {ctor})")
    row = _flat([c] + ks, [geo.n_feat_in] + list(geo.k_sp))
    _copy_kernel(lines, rhs, geo, g, o, c, ks, f"{wm}[{g}, {o}, {row}]")
    # Windows of one (group, batch element), one row per (in feature, kernel offset).
    # Large convolutions of several batch elements run them in parallel, each with its
    # own window matrix and a single-threaded BLAS product (the thread policy sets BLAS
    # to one thread before such a kernel): a whole product per thread scales better
    # than one product split across threads, and the gathers run in parallel too.
    parallel = (ctx.parallel_ok and geo.n_out >= 2
                and _prod(geo.out_shape) * rows >= PARALLEL_MIN_MACS)
    ctx.uses_parallel |= parallel
    alloc = f"{cols} = _empty({_shape((rows, cols_n))}, {ctor})"
    lines += [] if parallel else [alloc]
    lines += [f"for {g} in range({geo.groups}):",
              f"    for {n} in {'prange' if parallel else 'range'}({geo.n_out}):"]
    lines += [f"        {alloc}"] if parallel else []
    lines += [f"        for {c} in range({geo.n_feat_in}):"]
    depth = 3
    for k, size in zip(ks, geo.k_sp):
        lines.append("    " * depth + f"for {k} in range({size}):")
        depth += 1
    ind = "    " * depth
    r = ctx.fresh("r")
    lines.append(ind + f"{r} = {row}")
    la = {geo.lspec[0]: geo.lhs_batch(g, n), geo.lspec[1]: geo.lhs_feature(g, c)}
    xs, conds = [], []
    nsp = len(geo.out_sp)
    for d in range(nsp - 1):  # all spatial axes but the last: a zero row segment or not
        lines.append(ind + f"for {ps[d]} in range({geo.out_sp[d]}):")
        ind += "    "
        x, cond, _ = _in_window(geo, d, ps[d], ks[d], lines, ind, ctx)
        xs.append(x)
        conds.append(cond)
    last = nsp - 1
    base = _flat(ps[:nsp - 1], geo.out_sp[:nsp - 1])
    b = ctx.fresh("base")
    width = geo.out_sp[last]
    lines.append(ind + f"{b} = ({base}) * {width}")
    q = ps[last]
    if conds:
        lines += [ind + f"if not ({' and '.join(conds)}):",
                  ind + f"    for {q} in range({width}):",
                  ind + f"        {cols}[{r}, {b} + {q}] = {ctor}(0)",
                  ind + "    continue"]
    s, off = geo.strides[last], ctx.fresh("off")
    lines.append(ind + f"{off} = {ks[last]} * {geo.rd[last]} - ({geo.pad_lo[last]})")
    la.update(zip(geo.lspec[2:], xs))
    if geo.ld[last] == 1:
        # In bounds for first <= q < stop: q * s + off in [0, size).
        first, stop = ctx.fresh("first"), ctx.fresh("stop")
        lines += [ind + f"{first} = min(max(0, (-{off} + {s - 1}) // {s}), {width})",
                  ind + f"{stop} = min(max({first}, ({geo.dil[last]} - {off} + {s - 1}) "
                        f"// {s}), {width})",
                  ind + f"for {q} in range({first}):",
                  ind + f"    {cols}[{r}, {b} + {q}] = {ctor}(0)",
                  ind + f"for {q} in range({first}, {stop}):"]
        la[geo.lspec[2 + last]] = f"{q} * {s} + {off}"
        lines += [ind + f"    {cols}[{r}, {b} + {q}] = {_index(lhs, geo.ndim, la)}",
                  ind + f"for {q} in range({stop}, {width}):",
                  ind + f"    {cols}[{r}, {b} + {q}] = {ctor}(0)"]
    else:
        i = ctx.fresh("i")
        ld = geo.ld[last]
        la[geo.lspec[2 + last]] = f"{i} // {ld}"
        lines += [ind + f"for {q} in range({width}):",
                  ind + f"    {i} = {q} * {s} + {off}",
                  ind + f"    if 0 <= {i} < {geo.dil[last]} and {i} % {ld} == 0:",
                  ind + f"        {cols}[{r}, {b} + {q}] = {_index(lhs, geo.ndim, la)}",
                  ind + "    else:",
                  ind + f"        {cols}[{r}, {b} + {q}] = {ctor}(0)"]
    # One product per (group, batch element), scattered to the output layout.
    # (_gemm_rows into a new matrix, not np.dot: Numba's np.dot takes a process's first
    # such kernel ~0.2 s longer to compile)
    ind = "    " * 2
    lines += [ind + f"{res} = _empty({_shape((geo.og, cols_n))}, {ctor})",
              ind + f"_gemm_rows({geo.og}, {cols_n}, {rows}, {wm}, {g} * {geo.og * rows}, "
                    f"{rows}, {cols}, 0, {cols_n}, {res}, 0, {cols_n}, 0.0)"]
    lines.append(ind + f"for {o} in range({geo.og}):")
    depth = 3
    for p, size in zip(ps, geo.out_sp):
        lines.append("    " * depth + f"for {p} in range({size}):")
        depth += 1
    flat = _flat(ps, geo.out_sp)
    oa = {geo.ospec[0]: n, geo.ospec[1]: f"{g} * {geo.og} + {o}"}
    oa.update(zip(geo.ospec[2:], ps))
    lines.append("    " * depth + f"{_index(out, geo.ndim, oa)} = {res}[{o}, {flat}]")


def _shifted(ctx, out, lhs, rhs, geo, dt, lines):
    """Stride 1, no lhs dilation: per batch element, the input is copied once into a
    zero-padded ``(features, padded positions)`` matrix; for kernel offset ``k`` the
    windows' elements are that matrix shifted by ``off(k)`` positions, a strided view
    BLAS reads in place, so the convolution is one accumulating product per offset
    (``Y += W_k @ X[:, off(k):]``, no im2col matrix). ``Y``'s columns are padded
    positions; the output takes the ones inside the image."""
    ctor = dtype_ctor(dt)
    nsp = len(geo.out_sp)
    cin, og, groups = geo.n_feat_in, geo.og, geo.groups
    padded = [o + (k - 1) * r for o, k, r in zip(geo.out_sp, geo.k_sp, geo.rd)]
    strides = [_prod(padded[d + 1:]) for d in range(nsp)]
    size = _prod(padded)
    span = sum((o - 1) * s for o, s in zip(geo.out_sp, strides)) + 1
    nk = _prod(geo.k_sp)
    wk, xp, y = ctx.fresh("wk"), ctx.fresh("xp"), ctx.fresh("y")
    g, o, c, n = ctx.fresh("g"), ctx.fresh("o"), ctx.fresh("c"), ctx.fresh("n")
    ks = [ctx.fresh("k") for _ in geo.k_sp]
    kflat = _flat(ks, geo.k_sp)
    # The kernel as (offset, group, out features per group, in features per group).
    lines.append(f"{wk} = _empty({_shape((nk, groups, og, cin))}, {ctor})")
    _copy_kernel(lines, rhs, geo, g, o, c, ks, f"{wk}[{kflat}, {g}, {o}, {c}]")
    parallel = (ctx.parallel_ok and geo.n_out >= 2
                and _prod(geo.out_shape) * cin * nk >= PARALLEL_MIN_MACS)
    ctx.uses_parallel |= parallel
    lines.append(f"for {n} in {'prange' if parallel else 'range'}({geo.n_out}):")
    # The zero-padded input of batch element n: padded coordinate = input + pad_lo.
    lines += [f"    {xp} = np.zeros({_shape((groups * cin, size))}, {ctor})",
              f"    for {c} in range({groups * cin}):"]
    depth = 2
    ins = [ctx.fresh("i") for _ in range(nsp)]
    for d, i in enumerate(ins):
        lo, extent = geo.pad_lo[d], geo.in_sp[d]
        first, stop = max(0, -lo), min(extent, padded[d] - lo)
        lines.append("    " * depth + f"for {i} in range({first}, {max(first, stop)}):")
        depth += 1
    pos = " + ".join(f"({i} + {geo.pad_lo[d]}) * {strides[d]}" for d, i in enumerate(ins))
    la = {geo.lspec[0]: n, geo.lspec[1]: c}
    la.update(zip(geo.lspec[2:], ins))
    lines.append("    " * depth + f"{xp}[{c}, {pos}] = {_index(lhs, geo.ndim, la)}")
    lines += [f"    {y} = _empty({_shape((og, span))}, {ctor})",
              f"    for {g} in range({groups}):"]
    depth = 2
    for k, kn in zip(ks, geo.k_sp):
        lines.append("    " * depth + f"for {k} in range({kn}):")
        depth += 1
    off = " + ".join(f"{k} * {geo.rd[d] * strides[d]}" for d, k in enumerate(ks))
    ind = "    " * depth
    lines.append(ind + f"_gemm_rows({og}, {span}, {cin}, {wk}, (({kflat}) * {groups} + {g})"
                       f" * {og * cin}, {cin}, {xp}, {g} * {cin * size} + {off}, {size}, "
                       f"{y}, 0, {span}, 0.0 if ({kflat}) == 0 else 1.0)")
    lines.append(f"        for {o} in range({og}):")
    depth = 3
    ps = [ctx.fresh("p") for _ in geo.out_sp]
    for p, extent in zip(ps, geo.out_sp):
        lines.append("    " * depth + f"for {p} in range({extent}):")
        depth += 1
    col = " + ".join(f"{p} * {strides[d]}" for d, p in enumerate(ps))
    oa = {geo.ospec[0]: n, geo.ospec[1]: f"{g} * {og} + {o}"}
    oa.update(zip(geo.ospec[2:], ps))
    lines.append("    " * depth + f"{_index(out, geo.ndim, oa)} = {y}[{o}, {col}]")


def _axpy(ctx, out, lhs, rhs, geo, dt, lines):
    """One spatial axis, few features: for each kernel tap, ``out[p] += w[k] *
    x[p + off(k)]`` over the range of ``p`` whose input is real, a loop with no test per
    element that the vectoriser turns into wide multiply-adds. No window matrix (im2col
    copies the input once per tap) and no per-element bounds test (the direct loop).
    Output positions go in blocks of ``AXPY_BLOCK`` so the block being summed stays in
    the L1 cache across the taps."""
    ctor = dtype_ctor(dt)
    n, o, c, k, p, b = (ctx.fresh(x) for x in "nockpb")
    g, w, off, lo, hi, orow, xrow, b_end = (ctx.fresh(x) for x in (
        "g", "w", "off", "lo", "hi", "orow", "xrow", "bend"))
    os_, xs = ctx.fresh("os"), ctx.fresh("xs")
    size_out, size_in = geo.out_sp[0], geo.in_sp[0]
    # Rows as 1-D views (the spatial axis last in both layouts: unit stride).
    oa = {geo.ospec[0]: n, geo.ospec[1]: o, geo.ospec[2]: ":"}
    la = {geo.lspec[0]: n, geo.lspec[1]: geo.lhs_feature(g, c), geo.lspec[2]: ":"}
    ra = {geo.rspec[0]: o, geo.rspec[1]: c, geo.rspec[2]: k}
    lines += [
        f"for {n} in range({geo.n_out}):",
        f"    for {o} in range({geo.n_feat_out}):",
        f"        {g} = {o} // {geo.og}",
        f"        {orow} = {_index(out, geo.ndim, oa)}",
        f"        for {p} in range({size_out}):",
        f"            {orow}[{p}] = {ctor}(0)",
        f"        for {b} in range(0, {size_out}, {AXPY_BLOCK}):",
        f"            {b_end} = min({b} + {AXPY_BLOCK}, {size_out})",
        f"            for {c} in range({geo.n_feat_in}):",
        f"                {xrow} = {_index(lhs, geo.ndim, la)}",
        f"                for {k} in range({geo.k_sp[0]}):",
        f"                    {w} = {_index(rhs, geo.ndim, ra)}",
        f"                    {off} = {k} * {geo.rd[0]} - ({geo.pad_lo[0]})",
        f"                    {lo} = min(max({b}, -{off}), {b_end})",
        f"                    {hi} = min(max({lo}, {size_in} - {off}), {b_end})",
        # Slices starting at 0: Numba's index is then provably nonnegative, so it
        # drops its negative-index wraparound and LLVM vectorises the loop (indexing
        # with ``p + off`` keeps a branch per element: ten times slower).
        f"                    {os_} = {orow}[{lo}:{hi}]",
        f"                    {xs} = {xrow}[{lo} + {off}:{hi} + {off}]",
        f"                    for {p} in range({hi} - {lo}):",
        f"                        {os_}[{p}] += {w} * {xs}[{p}]",
    ]


# Output positions summed per block in the axpy form (16 KiB of float32).
AXPY_BLOCK = 4096
# The axpy form serves convolutions with at most this many (input feature, output
# feature) pairs per group: beyond, a BLAS product reuses each input read many times.
AXPY_MAX_FEATURE_PAIRS = 4


def _axpy_applies(geo) -> bool:
    return (len(geo.out_sp) == 1 and geo.strides[0] == 1 and geo.ld[0] == 1
            and geo.bgc == 1 and geo.n_feat_in * geo.og <= AXPY_MAX_FEATURE_PAIRS)


def _shifted_applies(geo) -> bool:
    """Stride 1, no lhs dilation, no batch groups, and enough input features per group
    that a product per kernel offset keeps BLAS efficient (else im2col)."""
    return (all(s == 1 for s in geo.strides) and all(d == 1 for d in geo.ld)
            and geo.bgc == 1 and geo.n_feat_in >= SHIFTED_MIN_FEATURES)


def lower_conv_general_dilated(ctx, outs, ins, in_avals, out_avals, **params):
    geo = _Geometry(in_avals, out_avals, params)
    dt = np.dtype(out_avals[0].dtype)
    out, (lhs, rhs) = outs[0], ins
    lines = [f"{out} = _empty({_shape(geo.out_shape)}, {dtype_ctor(dt)})"]
    if _prod(geo.out_shape) == 0:
        return lines
    ksize = geo.n_feat_in * _prod(geo.k_sp)
    if ksize == 0:  # an empty window: every output element is an empty sum
        o = ctx.fresh("z")
        return lines + [f"for {o} in range({_prod(geo.out_shape)}):",
                        f"    {out}.reshape(-1)[{o}] = {dtype_ctor(dt)}(0)"]
    macs = _prod(geo.out_shape) * ksize
    blas = (dt in (np.dtype(np.float32), np.dtype(np.float64)) and geo.out_sp
            and all(np.dtype(a.dtype) == dt for a in in_avals) and macs >= BLAS_MIN_MACS)
    if not blas:
        _direct(ctx, out, lhs, rhs, geo, dt, lines)
    elif _axpy_applies(geo):
        _axpy(ctx, out, lhs, rhs, geo, dt, lines)
    elif _shifted_applies(geo):
        _shifted(ctx, out, lhs, rhs, geo, dt, lines)
    else:
        _im2col(ctx, out, lhs, rhs, geo, dt, lines)
    return lines


RULES = {conv_ops.conv_general_dilated_p: lower_conv_general_dilated}
