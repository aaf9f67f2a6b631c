"""Loop-IR statements rendered as ``numba.cuda.jit`` kernels.

One kernel per top-level loop nest, reduction or copy; its parameters are the buffers
and host scalars the statement reads or writes (:func:`free_values`). Kernels are
written with the cpu renderer's machinery (canonical names, index expressions,
reductions' folds) and the device scalar table (:mod:`.device_rules`):

* a **nest** is a grid-stride loop over its flattened index space, one thread per
  output element, the flat index split back into the nest's variables;
* a **reduction** with a long reduced extent is a block-level tree reduction: each
  block folds a strided slice of one output's reduced elements per thread, each warp
  combines its threads' accumulators with ``shfl_down`` shuffles, the warps' totals
  meet in shared memory and are combined by shuffles again, and thread 0 writes either the
  result or, when several blocks share an output, a partial that a second kernel folds
  (accumulating in the monoid's accumulator dtype, as on the cpu). Short reductions and
  ``argmax``/``argmin`` run one thread per output element;
* a **copy** is a grid-stride loop over the copied elements;
* ``dot_general`` without CuPy is a tiled shared-memory kernel (:func:`dot_source`).

Kernel source depends only on the statement's structure (names are canonical), so equal
statements share one compiled kernel.
"""
from __future__ import annotations

import numpy as np

from ...compiler import Unsupported, ir
from ...core.shapes import IxAdd, IxScale, IxVar
from ..numba.lower_elementwise import dtype_ctor, literal_expr, preserves_dtype
from ..numba.render import FunctionRenderer, _Aval
from .device_rules import device_scalar_rules

__all__ = ["KernelRenderer", "free_values", "render_nest", "render_reduce",
           "render_serial_reduce", "render_column_reduce", "reduce_plan", "render_copy", "dot_source",
           "numba_type", "TREE_MIN_EXTENT"]

# A reduction whose reduced extent is at least this runs as a block tree reduction.
TREE_MIN_EXTENT = 128


def free_values(stmts) -> list:
    """Buffers and scalars ``stmts`` read or write that they do not define, in order of
    first appearance (a kernel's parameters)."""
    defined, seen, out = set(), set(), []

    def use(v):
        if isinstance(v, (ir.Buffer, ir.Sym)) and id(v) not in defined and id(v) not in seen:
            seen.add(id(v))
            out.append(v)

    for st in ir.walk(stmts):
        if isinstance(st, (ir.Alloc, ir.ConstArray, ir.Opaque, ir.CallPiece, ir.View,
                           ir.Alias)):
            raise Unsupported([f"{type(st).__name__.lower()} inside a kernel"])
        for v in ir.stmt_uses(st):
            use(v)
        if isinstance(st, ir.Store):
            use(st.buf)
        elif isinstance(st, ir.Reduce):
            use(st.out)
        elif isinstance(st, ir.Copy):
            use(st.dst)
        if isinstance(st, ir.Let):
            defined.add(id(st.sym))
    return out


def _ix_vars(ix, out):
    stack = [ix]
    while stack:
        x = stack.pop()
        if isinstance(x, IxVar):
            out.append(x.name)
        elif isinstance(x, IxAdd):
            stack += [x.a, x.b]
        elif isinstance(x, IxScale):
            stack.append(x.a)


def outer_loop_vars(stmts) -> list:
    """Names of loop variables ``stmts`` index with but do not bind: the host loops
    around a launch (a ``scan`` writing row ``i`` of its stacked output). They become
    trailing kernel parameters."""
    own, used = set(), []
    for st in ir.walk(stmts):
        if isinstance(st, (ir.Nest, ir.Reduce)):
            own.update(st.vars)
        elif isinstance(st, ir.ForRange):
            own.add(st.var)
        index = []
        if isinstance(st, ir.Let):
            if isinstance(st.expr, ir.Load):
                index = list(st.expr.index)
            elif isinstance(st.expr, ir.IndexValue):
                index = [st.expr.ix]
        elif isinstance(st, ir.Store):
            index = list(st.index)
        elif isinstance(st, ir.Copy):
            index = list(st.dst_at) + list(st.src_at)
        for ix in index:
            _ix_vars(ix, used)
    out = []
    for name in used:
        if name not in own and name not in out:
            out.append(name)
    return out


def kernel_params(stmts) -> list:
    """A kernel's parameters: :func:`free_values`, then ``("loop", name)`` for each of
    :func:`outer_loop_vars`."""
    return free_values(stmts) + [("loop", v) for v in outer_loop_vars(stmts)]


class KernelRenderer(FunctionRenderer):
    """The cpu renderer with the device scalar table, no ``prange``, and reductions
    nested in a kernel folded by one thread."""

    reduce_in_parts = False  # no arrays of partials inside a device kernel

    def __init__(self):
        super().__init__(parallel_ok=False)

    def bind_params(self, params) -> list:
        names = super().bind_params([p for p in params if not isinstance(p, tuple)])
        return names + [self.loop_var(p[1]) for p in params if isinstance(p, tuple)]

    def expr(self, e, dtype):
        if isinstance(e, ir.Op):
            self.prims.add(e.prim.name)
            rule = device_scalar_rules.get(e.prim)
            if rule is None:
                raise Unsupported([e.prim.name])
            args = [self.value(a) for a in e.args]
            text = rule(args, [_Aval(d) for d in e.in_dtypes], _Aval(e.out_dtype), **e.params)
            if preserves_dtype(e.prim, e.in_dtypes, e.out_dtype):
                return text
            return f"{dtype_ctor(e.out_dtype)}({text})"
        return super().expr(e, dtype)

    def reduce(self, s, depth):
        # Inside a kernel one thread folds the whole reduction: kept axes outside,
        # reduced axes inside, a scalar accumulator (no temporary arrays on the device).
        kept = [d for d in range(len(s.shape)) if d not in s.axes]
        inner = self.loops([s.vars[d] for d in kept], [s.shape[d] for d in kept], depth, False)
        self.reduce_at_kept(s, inner)

    def reduce_at_kept(self, s, depth):
        """Fold ``s`` for the kept index already bound."""
        m = s.monoid
        kept = [d for d in range(len(s.shape)) if d not in s.axes]
        acc = self.fresh("acc")
        self.emit(f"{acc} = {literal_expr(m.identity, m.acc_dtype)}", depth)
        if m.arg:
            self.emit(f"{acc}_i = -1", depth)
        rdepth = self.loops([s.vars[a] for a in s.axes], [s.shape[a] for a in s.axes],
                            depth, False)
        self.block(s.body, rdepth)
        pos = self.loop_var(s.vars[s.axes[0]]) if s.axes else "0"
        self._fold(s.monoid, acc, self.value(s.value), pos, rdepth, s.value.dtype)
        kidx = ", ".join(self.loop_var(s.vars[d]) for d in kept) or "()"
        self.emit(f"{self.name(s.out)}[{kidx}] = {self._final(s.monoid, acc)}", depth)

    def split_index(self, flat, vars_, shape, depth):
        """Bind each of ``vars_`` from the flat (row-major) index ``flat``."""
        self.split_names(flat, [self.loop_var(v) for v in vars_], shape, depth)

    def split_names(self, flat, names, shape, depth):
        """Bind the variables ``names`` from the flat (row-major) index ``flat``."""
        rest = flat
        for k in range(len(names) - 1, -1, -1):
            name = names[k]
            if k == 0:
                self.emit(f"{name} = {rest}", depth)
            else:
                self.emit(f"{name} = {rest} % {int(shape[k])}", depth)
                nxt = self.fresh("r")
                self.emit(f"{nxt} = {rest} // {int(shape[k])}", depth)
                rest = nxt


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _head(r, params):
    """Bind the kernel's parameters first so their names are ``arg0 arg1 …``."""
    return r.bind_params(params)


def render_nest(stmt) -> tuple:
    """``(source, params, n)`` of a kernel running ``stmt`` (a :class:`ir.Nest`) with
    one thread per element of its ``n``-element index space."""
    params = kernel_params([stmt])
    r = KernelRenderer()
    pnames = _head(r, params)
    n = _size(stmt.shape)
    if not stmt.vars:
        r.emit("if cuda.grid(1) == 0:", 1)
        r.block(stmt.body, 2)
    else:
        r.emit(f"for t in range(cuda.grid(1), {n}, cuda.gridsize(1)):", 1)
        r.split_index("t", stmt.vars, stmt.shape, 2)
        r.block(stmt.body, 2)
    return _source(r, pnames), params, n


def render_copy(stmt) -> tuple:
    """``(source, params, n)`` of a kernel for a :class:`ir.Copy`."""
    params = kernel_params([stmt])
    r = KernelRenderer()
    pnames = _head(r, params)
    src_shape = stmt.src.shape[len(stmt.src_at):]
    n = _size(src_shape)
    names = [f"q{k}" for k in range(len(src_shape))]
    r.emit(f"for t in range(cuda.grid(1), {n}, cuda.gridsize(1)):", 1)
    r.split_names("t", names, src_shape, 2)
    d = [r._ix(i) for i in stmt.dst_at] + names
    s = [r._ix(i) for i in stmt.src_at] + names
    r.emit(f"{r.name(stmt.dst)}[{', '.join(d) or '()'}] = "
           f"{r.name(stmt.src)}[{', '.join(s) or '()'}]", 2)
    return _source(r, pnames), params, n


def reduce_plan(stmt, threads: int, max_blocks: int) -> tuple:
    """``(kind, kept size, reduced size, blocks per output or column groups)``.

    * ``"serial"``: one thread per output (``argmax``/``argmin``, short reductions, or
      enough outputs to fill the device on their own);
    * ``"columns"``: the kept axes are innermost (``X.sum(0)``): ``groups`` threads per
      output each fold a strided set of rows, so a warp reads consecutive elements;
      a tree per output then folds the groups' partials;
    * ``"tree"``: blocks per output fold the reduced elements (consecutive threads read
      consecutive elements), a tree in shared memory, and a second pass over the blocks'
      partials when an output has several blocks.
    """
    kept_dims = [d for d in range(len(stmt.shape)) if d not in stmt.axes]
    kept = _size(stmt.shape[d] for d in kept_dims)
    red = _size(stmt.shape[a] for a in stmt.axes)
    slots = threads * max_blocks
    if stmt.monoid.arg or red < TREE_MIN_EXTENT:
        return "serial", kept, red, 1
    if kept > 1 and min(kept_dims) > max(stmt.axes):
        groups = min(-(-red // 8), slots // kept)
        if groups <= 1:
            return "serial", kept, red, 1
        return "columns", kept, red, groups
    # Enough blocks per output to fill the device when there are few outputs; each
    # thread folds at least 8 elements before the tree.
    per = max(1, min(max_blocks // max(kept, 1), -(-red // (threads * 8))))
    return "tree", kept, red, per


def render_column_reduce(stmt, threads: int, groups: int) -> tuple:
    """``(first, params, second)``: the ``"columns"`` reduction of :func:`reduce_plan`.
    ``first`` takes the statement's parameters and then ``partial`` (``groups * kept``
    accumulators); ``second(out, partial)`` folds each output's partials in a block."""
    m = stmt.monoid
    params = kernel_params([stmt])
    kept = [d for d in range(len(stmt.shape)) if d not in stmt.axes]
    kvars, kshape = [stmt.vars[d] for d in kept], [stmt.shape[d] for d in kept]
    rvars, rshape = [stmt.vars[a] for a in stmt.axes], [stmt.shape[a] for a in stmt.axes]
    nk, nr = _size(kshape), _size(rshape)
    acc_dt = np.dtype(m.acc_dtype)
    r = KernelRenderer()
    pnames = _head(r, params) + ["partial"]
    r.emit(f"for t in range(cuda.grid(1), {groups * nk}, cuda.gridsize(1)):", 1)
    r.emit(f"k = t % {nk}", 2)
    r.emit(f"g = t // {nk}", 2)
    r.split_index("k", kvars, kshape, 2)
    acc = r.fresh("acc")
    r.emit(f"{acc} = {literal_expr(m.identity, acc_dt)}", 2)
    r.emit(f"for e in range(g, {nr}, {groups}):", 2)
    r.split_index("e", rvars, rshape, 3)
    r.block(stmt.body, 3)
    r._fold(stmt.monoid, acc, r.value(stmt.value), "e", 3, stmt.value.dtype)
    r.emit(f"partial[t] = {acc}", 2)
    first = _source(r, pnames)
    r2 = KernelRenderer()
    out_name = r2.bind_params([stmt.out])[0]
    r2.emit(f"sm = cuda.shared.array({threads // WARP}, {numba_type(acc_dt)})", 1)
    r2.emit("tid = cuda.threadIdx.x", 1)
    r2.emit(f"for k in range(cuda.blockIdx.x, {nk}, cuda.gridDim.x):", 1)
    a2 = r2.fresh("acc")
    r2.emit(f"{a2} = {literal_expr(m.identity, acc_dt)}", 2)
    r2.emit(f"for g in range(tid, {groups}, {threads}):", 2)
    r2.emit(f"{a2} = {r2._combine(m, a2, f'partial[g * {nk} + k]', acc_dt)}", 3)
    total = _tree(r2, m, a2, acc_dt, threads, 2)
    r2.emit("if tid == 0:", 2)
    r2.split_index("k", kvars, kshape, 3)
    kidx = ", ".join(r2.loop_var(v) for v in kvars) or "()"
    r2.emit(f"{out_name}[{kidx}] = {r2._final(stmt.monoid, total)}", 3)
    r2.emit("cuda.syncthreads()", 2)
    second = f"def kernel({out_name}, partial):\n" + "\n".join(r2.lines) + "\n"
    return first, params, second


WARP = 32  # threads per warp: the width of a shuffle


def _tree(r, m, acc, acc_dt, threads, depth) -> str:
    """Combine every thread's ``acc`` of the block; returns the name holding the total
    in thread 0.

    Each warp folds its 32 accumulators with ``shfl_down`` (no shared memory, no
    barrier), lane 0 of each warp writes the warp's total to ``sm[warp]``, one barrier,
    then every warp folds those ``threads // 32`` totals the same way (all lanes take
    part, so the shuffles never diverge). Every thread calls the same shuffles in the
    same order: the simulator's stand-in (:func:`.runtime.sim_shfl_down`) relies on it.
    """
    if threads % WARP or threads // WARP > WARP:
        raise ValueError(f"a tree reduction needs a multiple of {WARP} threads, at most "
                         f"{WARP * WARP}; got {threads}")
    shfl = f"_shfl_down_{np.dtype(acc_dt).name}"
    r.emit(f"lane = tid % {WARP}", depth)
    # The shuffled value gets a name: a combine may spell its operand twice inside a
    # conditional, and a shuffle must run exactly once on every lane.
    for off in (16, 8, 4, 2, 1):
        r.emit(f"other = {shfl}({acc}, {off})", depth)
        r.emit(f"{acc} = {r._combine(m, acc, 'other', acc_dt)}", depth)
    r.emit("if lane == 0:", depth)
    r.emit(f"sm[tid // {WARP}] = {acc}", depth + 1)
    r.emit("cuda.syncthreads()", depth)
    warps = threads // WARP
    r.emit(f"{acc} = sm[lane] if lane < {warps} else "
           f"{literal_expr(m.identity, acc_dt)}", depth)
    for off in (16, 8, 4, 2, 1):
        if off < warps:
            r.emit(f"other = {shfl}({acc}, {off})", depth)
            r.emit(f"{acc} = {r._combine(m, acc, 'other', acc_dt)}", depth)
    return acc


def render_reduce(stmt, threads: int, per: int) -> tuple:
    """``(source, params, second)`` of a tree reduction kernel for ``stmt`` (see the
    module docstring); ``second`` is the source of the kernel folding the partials, or
    None when each output has one block. With ``per > 1`` the first kernel takes one
    more trailing parameter, the partials (``kept * per`` accumulators)."""
    m = stmt.monoid
    params = kernel_params([stmt])
    kept = [d for d in range(len(stmt.shape)) if d not in stmt.axes]
    kvars = [stmt.vars[d] for d in kept]
    kshape = [stmt.shape[d] for d in kept]
    rvars = [stmt.vars[a] for a in stmt.axes]
    rshape = [stmt.shape[a] for a in stmt.axes]
    nk, nr = _size(kshape), _size(rshape)
    acc_dt = np.dtype(m.acc_dtype)
    r = KernelRenderer()
    pnames = _head(r, params)
    if per > 1:
        pnames.append("partial")
    r.emit(f"sm = cuda.shared.array({threads // WARP}, {numba_type(acc_dt)})", 1)
    r.emit("tid = cuda.threadIdx.x", 1)
    r.emit(f"for blk in range(cuda.blockIdx.x, {nk * per}, cuda.gridDim.x):", 1)
    r.emit(f"k = blk // {per}", 2)
    r.emit(f"c = blk % {per}", 2)
    r.split_index("k", kvars, kshape, 2)
    acc = r.fresh("acc")
    r.emit(f"{acc} = {literal_expr(m.identity, acc_dt)}", 2)
    r.emit(f"for e in range(c * {threads} + tid, {nr}, {per * threads}):", 2)
    r.split_index("e", rvars, rshape, 3)
    r.block(stmt.body, 3)
    r._fold(stmt.monoid, acc, r.value(stmt.value), "e", 3, stmt.value.dtype)
    total = _tree(r, m, acc, acc_dt, threads, 2)
    r.emit("if tid == 0:", 2)
    if per > 1:
        r.emit(f"partial[blk] = {total}", 3)
    else:
        kidx = ", ".join(r.loop_var(v) for v in kvars) or "()"
        r.emit(f"{r.name(stmt.out)}[{kidx}] = {r._final(stmt.monoid, total)}", 3)
    # Every thread must be done reading ``sm`` before the next output's block reuses it.
    r.emit("cuda.syncthreads()", 2)
    first = _source(r, pnames)
    if per == 1:
        return first, params, None
    # The second pass: one thread per output folds its ``per`` partials.
    r2 = KernelRenderer()
    out_name = r2.bind_params([stmt.out])[0]
    r2.emit(f"for k in range(cuda.grid(1), {nk}, cuda.gridsize(1)):", 1)
    r2.split_index("k", kvars, kshape, 2)
    a2 = r2.fresh("acc")
    r2.emit(f"{a2} = partial[k * {per}]", 2)
    r2.emit(f"for c in range(1, {per}):", 2)
    r2.emit(f"{a2} = {r2._combine(m, a2, f'partial[k * {per} + c]', acc_dt)}", 3)
    kidx = ", ".join(r2.loop_var(v) for v in kvars) or "()"
    r2.emit(f"{out_name}[{kidx}] = {r2._final(stmt.monoid, a2)}", 2)
    second = "def kernel(" + out_name + ", partial):\n" + "\n".join(r2.lines) + "\n"
    return first, params, second


def render_serial_reduce(stmt) -> tuple:
    """``(source, params, n)``: one thread per output element folds its reduction."""
    params = kernel_params([stmt])
    r = KernelRenderer()
    pnames = _head(r, params)
    kept = [d for d in range(len(stmt.shape)) if d not in stmt.axes]
    n = _size(stmt.shape[d] for d in kept)
    r.emit(f"for t in range(cuda.grid(1), {n}, cuda.gridsize(1)):", 1)
    r.split_index("t", [stmt.vars[d] for d in kept], [stmt.shape[d] for d in kept], 2)
    r.reduce_at_kept(stmt, 2)
    return _source(r, pnames), params, n


def numba_type(dt) -> str:
    """The Numba type of a dtype as kernel source (``numba.float32``)."""
    dt = np.dtype(dt)
    return "numba.boolean" if dt == np.bool_ else f"numba.{dt.name}"


def _source(r, pnames) -> str:
    return f"def kernel({', '.join(pnames)}):\n" + "\n".join(r.lines) + "\n"


def dot_source(trans_a: bool, trans_b: bool, dtype, tile: int, epilogue=None) -> str:
    """A tiled shared-memory product of stacks, ``out[z] = A[z] @ B[z]`` with ``A[z]``
    (M, K) being ``a[z]`` or ``a[z].T`` (``trans_a``) and ``B[z]`` (K, N) being ``b[z]``
    or ``b[z].T``; launched on a grid of ``tile x tile`` blocks with the stack index on
    the grid's z axis. Accumulates in the result dtype (integers wrap), as the cpu
    backend's product loop does.

    ``epilogue = (lines, names)`` (:mod:`.dot_epilogue`) replaces the store: the kernel
    takes ``out2`` (the 2-d output) and ``names`` after its usual parameters, and runs
    ``lines`` with ``acc``, ``row`` and ``col`` bound."""
    dt = np.dtype(dtype)
    store = "            out[z, row, col] = acc"
    extra = ""
    if epilogue is not None:
        lines, names = epilogue
        store = "\n".join("            " + line for line in lines)
        extra = "".join(", " + n for n in ["out2", *names])
    zero = literal_expr(0, dt)
    ctor = dtype_ctor(dt)
    a_at = "a[z, kk, row]" if trans_a else "a[z, row, kk]"
    b_at = "b[z, col, kk]" if trans_b else "b[z, kk, col]"
    prod = "sa[ty, q] * sb[q, tx]"
    step = f"acc + {prod}" if dt.kind == "f" else f"{ctor}(acc + {ctor}({prod}))"
    return f"""def kernel(a, b, out, M, N, K, Z{extra}):
    sa = cuda.shared.array(({tile}, {tile}), {numba_type(dt)})
    sb = cuda.shared.array(({tile}, {tile}), {numba_type(dt)})
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * {tile} + ty
    col = cuda.blockIdx.x * {tile} + tx
    for z in range(cuda.blockIdx.z, Z, cuda.gridDim.z):
        acc = {zero}
        for t in range((K + {tile - 1}) // {tile}):
            kk = t * {tile} + tx
            if row < M and kk < K:
                sa[ty, tx] = {a_at}
            else:
                sa[ty, tx] = {zero}
            kk = t * {tile} + ty
            if kk < K and col < N:
                sb[ty, tx] = {b_at}
            else:
                sb[ty, tx] = {zero}
            cuda.syncthreads()
            for q in range({tile}):
                acc = {step}
            cuda.syncthreads()
        if row < M and col < N:
{store}
"""
