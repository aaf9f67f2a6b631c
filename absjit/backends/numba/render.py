"""The loop IR rendered as Python source for ``numba.njit``.

One :class:`FunctionRenderer` writes one function: a whole program, a piece of one
(:mod:`absjit.compiler.pieces`) or the driver that calls the pieces. Everything it
names is named canonically — parameters ``arg0 arg1 …``, buffers ``b0 …``, scalars
``s0 …``, loop indices ``j0 …`` in order of first appearance — so two pieces with the
same structure have the same source, and so the same cache entry.

Scalar operations are spelled by :mod:`.lower_elementwise` (one rule per primitive),
whole-array operations by the target's array rules (:meth:`FunctionRenderer.array_rule`);
loops, reductions and control flow are written here from the IR's data. A target
subclasses :class:`FunctionRenderer` for what only it has: the cpu backend's
(:mod:`absjit.backends.numba_cpu.render`) adds its array rules, its fold helpers and
loops run as tasks of its thread pool; the cuda backend's kernel and driver renderers
change the scalar table and launch kernels.
"""
from __future__ import annotations

import numpy as np

from ...compiler import ir
from ...compiler.printer import format_ix
from ...core.primitive import all_primitives
from ...core.dims import Dim
from ...core.shapes import (IxAdd, IxClamp, IxConst, IxScale, IxVar, is_static, size_of,
                            shape_code as shape_text, size_code as size_text)
from .lower_elementwise import (dtype_ctor, literal_expr, preserves_dtype, scalar_rules)
from . import render_periodic

__all__ = ["FunctionRenderer", "shape_text", "size_text"]


class _Aval:
    """The fields scalar and array rules read from an aval."""

    __slots__ = ("dtype", "shape", "ndim")

    def __init__(self, dtype, shape=()):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.ndim = len(self.shape)


class FunctionRenderer:
    """Writes one function. ``parallel_ok`` allows ``prange`` for nests the IR marks
    parallel (the backend decides: e.g. not in programs that call BLAS)."""

    #: ``combine primitive -> helper`` for float accumulators: folds the target's
    #: helpers vectorise (none here: plain Python folds).
    float_folds: dict = {}
    #: Whether a large reduction into one value (or a short row) runs in parts with
    #: arrays of partials (:meth:`_reduce_whole`): a renderer for code that cannot
    #: allocate (a device kernel) sets False.
    reduce_in_parts = True

    def __init__(self, parallel_ok: bool, lift_consts: bool = False,
                 parallel_blas: bool = False, pool_loops: bool = False):
        self.parallel_ok = parallel_ok
        # Parallel nests run as chunk functions on absjit's pool (:mod:`.loop_kernels`)
        # rather than as ``prange`` loops on Numba's threads.
        self.pool_loops = pool_loops and parallel_ok
        self.chunks = []  # the chunk functions' sources (module level, before this one)
        self.alias_of = {}  # a buffer's name -> the name it aliases (``b3 = b1``)
        self.uses_pool_loops = False
        # Large products may run as blocks on a thread pool (``_pgemm_*``); only where
        # the caller keeps BLAS at one thread while this function runs.
        self.parallel_blas = parallel_blas
        # With ``lift_consts`` scalar constants become trailing parameters ``c0 c1 …``
        # (``self.consts`` holds their values): pieces that differ only in constants
        # (a long chain, a loop unrolled with a different step each time) share code.
        self.lift_consts = lift_consts
        self.consts = []
        self.lines = []
        self.names = {}
        self.counts = {}
        self.uses_parallel = False
        self.serial_only = 0  # > 0: nests render serial whatever they are marked
        self.prims = set()
        # ``call_piece(piece) -> (name, dispatcher, constants)`` compiles an outlined
        # loop body; ``callees`` collects the dispatchers this function calls.
        self.call_piece = None
        self.callees = {}
        self.hoisted = {}  # id(rank-0 buffer) -> scalar read before a parallel loop
        # Symbolic sizes (``ranked`` level) this function takes as trailing parameters.
        self.size_params = []

    # -- names -----------------------------------------------------------------------
    def _new(self, prefix):
        n = self.counts.get(prefix, 0)
        self.counts[prefix] = n + 1
        return f"{prefix}{n}"

    def name(self, v) -> str:
        key = id(v)
        got = self.names.get(key)
        if got is None:
            got = self._new("b" if isinstance(v, ir.Buffer) else "s")
            self.names[key] = got
        return got

    def loop_var(self, var: str) -> str:
        key = ("loop", var)
        got = self.names.get(key)
        if got is None:
            got = self._new("j")
            self.names[key] = got
        return got

    def fresh(self, prefix) -> str:
        """A local name for array rules (never clashes with canonical names)."""
        return self._new(prefix + "_")

    def bind_params(self, params) -> list:
        names = []
        for v in params:
            nm = self._new("arg")
            self.names[id(v)] = nm
            if isinstance(v, ir.LoopIndex):  # index expressions naming ``v.var`` read it
                self.names[("loop", v.var)] = nm
            names.append(nm)
        return names

    # -- values --------------------------------------------------------------------------
    def value(self, v) -> str:
        if isinstance(v, ir.Const):
            if not self.lift_consts:
                return literal_expr(v.value, v.dtype)
            # One parameter per occurrence, not per value: the source must depend on
            # the structure alone, never on which constants happen to be equal.
            self.consts.append(np.asarray(v.value, dtype=v.dtype)[()])
            return self._new("c")
        if isinstance(v, ir.LoopIndex):   # the caller's own loop variable
            return self.loop_var(v.var)
        return self.name(v)

    def ix(self, index) -> str:
        if not index:
            return "()"
        return ", ".join(self._ix(i) for i in index)

    def _ix(self, i) -> str:
        return format_ix(_rename_ix(i, self), self.value)

    def expr(self, e, dtype) -> str:
        if isinstance(e, ir.Load):
            if not e.index and id(e.buf) in self.hoisted:
                return self.hoisted[id(e.buf)]
            return f"{self.name(e.buf)}[{self.ix(e.index)}]"
        if isinstance(e, ir.Op):
            self.prims.add(e.prim.name)
            args = [self.value(a) for a in e.args]
            in_avals = [_Aval(d) for d in e.in_dtypes]
            text = scalar_rules[e.prim](args, in_avals, _Aval(e.out_dtype), **e.params)
            if preserves_dtype(e.prim, e.in_dtypes, e.out_dtype):
                return text
            return f"{dtype_ctor(e.out_dtype)}({text})"
        if isinstance(e, ir.IndexValue):
            return f"{dtype_ctor(dtype)}({self._ix(e.ix)})"
        if isinstance(e, ir.Ref):
            if isinstance(e.value, ir.Const) or np.dtype(e.value.dtype) != np.dtype(dtype):
                return f"{dtype_ctor(dtype)}({self.value(e.value)})"
            return self.value(e.value)
        raise ir.IRError(f"cannot render {e!r}")

    # -- statements ----------------------------------------------------------------------
    def emit(self, line, depth):
        self.lines.append("    " * depth + line)

    def block(self, stmts, depth):
        for stmt in stmts:
            self.stmt(stmt, depth)

    def loops(self, vars_, shape, depth, parallel):
        for d, (v, n) in enumerate(zip(vars_, shape)):
            rng = "prange" if (d == 0 and parallel) else "range"
            self.emit(f"for {self.loop_var(v)} in {rng}({size_text(n)}):", depth)
            depth += 1
        return depth

    def _pool_ok(self, s) -> bool:
        """Whether the nest or reduction ``s`` (marked parallel) runs as tasks of a
        thread pool (:meth:`pool_loop`); a target with a pool says when."""
        return False

    def pool_loop(self, vars_, shape, depth, inner, count=None) -> bool:
        """Write loops over ``vars_`` as tasks of a thread pool; True where written
        (a target without a pool writes nothing: the caller writes plain loops)."""
        return False

    def array_rule(self, prim):
        """The rule that writes whole-array primitive ``prim`` (an ``ir.Opaque``):
        ``rule(renderer, outs, ins, in_avals, out_avals, **params) -> lines``."""
        raise NotImplementedError(f"{type(self).__name__} has no array rules ({prim.name})")

    def _parallel(self, flag, body=(), depth=0) -> bool:
        """Whether a nest marked ``flag`` becomes a ``prange`` loop. Rank-0 buffers the
        body reads are read once before it: Numba's parallel lowering cannot index a
        0-d array inside a ``prange`` loop."""
        ok = bool(flag) and self.parallel_ok and not self.serial_only
        self.uses_parallel |= ok
        if ok:
            for st in ir.walk(body):
                if isinstance(st, ir.Let) and isinstance(st.expr, ir.Load) \
                        and not st.expr.index and id(st.expr.buf) not in self.hoisted:
                    h = self.fresh("h")
                    self.emit(f"{h} = {self.name(st.expr.buf)}[()]", depth)
                    self.hoisted[id(st.expr.buf)] = h
        return ok

    def _periodic(self, s, depth, flat, plain, flat_parallel, plain_parallel=True):
        """``s`` as one flat loop where :func:`.render_periodic.layout` allows it (for
        symbolic sizes, under a run-time test with the plain loops as the other
        branch), else as plain loops. Reads hoisted for a loop stay inside it.
        ``flat_parallel``: whether the flat rendering can hold a ``prange`` loop."""
        outer = dict(self.hoisted)
        lay = render_periodic.layout(s, self.fresh)
        sized_plain = (lambda d: self._sized(s, d, plain)) if plain_parallel else plain
        if lay is None:
            sized_plain(depth)
        elif lay.guard is None:
            flat(self, s, lay, depth)
        else:
            for line in lay.prelude:
                self.emit(line, depth)
            self.emit(f"if {lay.guard}:", depth)
            if flat_parallel:
                self._sized(s, depth + 1, lambda d: flat(self, s, lay, d))
            else:
                flat(self, s, lay, depth + 1)
            self.hoisted = dict(outer)
            self.emit("else:", depth)
            sized_plain(depth + 1)
        self.hoisted = outer

    def _sized(self, s, depth, render):
        """``render(depth)`` for a nest marked parallel whose size is symbolic: its
        ``prange`` rendering under ``if size >= PARALLEL_MIN_SIZE``, a serial one
        otherwise — the choice a static size gets while tracing, made when the kernel
        runs (starting threads for a few elements costs more than the loop)."""
        if not (s.parallel and self.parallel_ok) or self.serial_only or \
                is_static(s.shape):
            render(depth)
            return
        from ...compiler.lower import PARALLEL_MIN_SIZE
        outer = dict(self.hoisted)
        self.emit(f"if {size_text(size_of(s.shape))} >= {PARALLEL_MIN_SIZE}:", depth)
        render(depth + 1)
        self.hoisted = dict(outer)
        self.emit("else:", depth)
        self.serial_only += 1
        try:
            render(depth + 1)
        finally:
            self.serial_only -= 1
        self.hoisted = outer

    def stmt(self, s, depth):
        if isinstance(s, ir.Alloc):
            b = s.buf
            self.emit(f"{self.name(b)} = _empty({shape_text(b.shape)}, "
                      f"{dtype_ctor(b.dtype)})", depth)
        elif isinstance(s, ir.Let):
            self.emit(f"{self.name(s.sym)} = {self.expr(s.expr, s.sym.dtype)}", depth)
        elif isinstance(s, ir.Store):
            self.emit(f"{self.name(s.buf)}[{self.ix(s.index)}] = {self.value(s.value)}",
                      depth)
        elif isinstance(s, ir.Nest):
            def plain(d):
                def body(inner):
                    self.block(s.body, inner)
                if self._pool_ok(s) and self.pool_loop(s.vars, s.shape, d, body):
                    return
                body(self.loops(s.vars, s.shape, d, self._parallel(s.parallel, s.body, d)))
            # short rows: one flat loop (render_periodic)
            self._periodic(s, depth, render_periodic.render_nest, plain, True)
        elif isinstance(s, ir.Reduce):
            kept = [d for d in range(len(s.shape)) if d not in s.axes]
            # only a reduction whose kept axes are outermost loops over them in prange
            self._periodic(s, depth, render_periodic.render_reduce,
                           lambda d: self.reduce(s, d), False,
                           bool(kept) and all(d < a for d in kept for a in s.axes))
        elif isinstance(s, ir.Switch):
            self.switch(s, depth)
        elif isinstance(s, ir.While):
            self.emit("while True:", depth)
            self.block(s.cond_body, depth + 1)
            self.emit(f"if not {self.value(s.cond)}:", depth + 1)
            self.emit("break", depth + 2)
            self.block(s.body, depth + 1)
        elif isinstance(s, ir.ForRange):
            rng = f"range({size_text(s.extent - 1)}, -1, -1)" if s.reverse \
                else f"range({size_text(s.extent)})"
            self.emit(f"for {self.loop_var(s.var)} in {rng}:", depth)
            self.block(s.body or [], depth + 1)
            if not s.body:
                self.emit("pass", depth + 1)
        elif isinstance(s, ir.Opaque):
            self.prims.add(s.prim.name)
            outs = [self.name(b) for b in s.outs]
            ins = [self.name(b) for b in s.ins]
            lines = self.array_rule(s.prim)(self, outs, ins, s.in_avals, s.out_avals,
                                            **s.params)
            for line in lines:
                self.emit(line, depth)
        elif isinstance(s, ir.Copy):
            self.copy(s, depth)
        elif isinstance(s, ir.View):
            src = self.name(s.src)
            if s.at:
                src = f"{src}[{self.ix(s.at)}]"
                if len(s.at) + s.dst.ndim != s.src.ndim:
                    raise ir.IRError("View: indexing must drop leading dimensions")
            elif s.dst.shape != s.src.shape:
                src = f"{src}.reshape({shape_text(s.dst.shape)})"
            self.emit(f"{self.name(s.dst)} = {src}", depth)
        elif isinstance(s, ir.Alias):
            src = self.name(s.src)
            self.alias_of[self.name(s.dst)] = self.alias_of.get(src, src)
            self.emit(f"{self.name(s.dst)} = {src}", depth)
        elif isinstance(s, ir.CallPiece):
            fname, disp, consts, sizes = self.call_piece(s.piece)
            self.callees[fname] = disp
            args = [self.value(v) for v in s.piece.params]
            args += [self.value(ir.Const(c, c.dtype)) for c in consts]
            args += sizes  # bound (or received) by this function under the same names
            call = f"{fname}({', '.join(args)})"
            if s.piece.results:
                outs = "".join(self.value(v) + ", " for v in s.piece.results)
                self.emit(f"({outs}) = {call}", depth)
            else:
                self.emit(call, depth)
        elif isinstance(s, ir.ConstArray):
            vals = ", ".join(repr(x.item()) for x in s.value.ravel())
            self.emit(f"{self.name(s.buf)} = np.array([{vals}], {dtype_ctor(s.buf.dtype)})"
                      f".reshape({shape_text(s.buf.shape)})", depth)
        else:
            raise ir.IRError(f"cannot render {s!r}")

    def copy(self, s, depth):
        src_shape = s.src.shape[len(s.src_at):]
        names = [self.fresh("q") for _ in src_shape]
        inner = depth
        for nm, n in zip(names, src_shape):
            self.emit(f"for {nm} in range({size_text(n)}):", inner)
            inner += 1
        d = [self._ix(i) for i in s.dst_at] + names
        r = [self._ix(i) for i in s.src_at] + names
        self.emit(f"{self.name(s.dst)}[{', '.join(d) or '()'}] = "
                  f"{self.name(s.src)}[{', '.join(r) or '()'}]", inner)

    def switch(self, s, depth):
        idx = self.value(s.index)
        n = len(s.branches)
        for k, branch in enumerate(s.branches):
            if k == 0:
                head = f"if {idx} <= 0:" if n > 1 else "if True:"
            elif k == n - 1:
                head = "else:"
            else:
                head = f"elif {idx} == {k}:"
            self.emit(head, depth)
            self.block(branch, depth + 1)
            if not branch:
                self.emit("pass", depth + 1)

    # -- reductions ----------------------------------------------------------------------
    def _float_fold(self, m):
        """The helper that folds float accumulator ``m`` so LLVM can vectorise the loop
        (``self.float_folds``), or None."""
        if np.dtype(m.acc_dtype).kind != "f":
            return None
        return self.float_folds.get(m.combine)

    def _combine(self, m, acc, val, dtype):
        fold = self._float_fold(m)
        if fold is not None:
            return f"{fold}({acc}, {val})"
        prim = all_primitives()[m.combine]
        a = _Aval(dtype)
        text = scalar_rules[prim]([acc, val], [a, a], a)
        if np.dtype(m.acc_dtype).kind == "f":
            return text  # float arithmetic keeps the accumulator's (wider) dtype
        return f"{dtype_ctor(m.acc_dtype)}({text})"

    def _fold(self, m, acc, val, pos, depth, body_dtype):
        """Fold ``val`` into the accumulator ``acc`` of monoid ``m``."""
        if m.arg:
            better = ">" if m.arg == "max" else "<"
            cond = f"{acc}_i < 0 or ({val} {better} {acc})"
            if np.dtype(m.acc_dtype).kind == "f":
                cond = (f"{acc}_i < 0 or ({acc} == {acc} and ({val} {better} {acc} or "
                        f"{val} != {val}))")
            self.emit(f"if {cond}:", depth)
            self.emit(f"{acc} = {val}", depth + 1)
            self.emit(f"{acc}_i = {pos}", depth + 1)
        else:
            body_dt, acc_dt = np.dtype(body_dtype), np.dtype(m.acc_dtype)
            same = body_dt == acc_dt or (body_dt.kind == acc_dt.kind == "f")
            v = val if same else f"{dtype_ctor(acc_dt)}({val})"
            self.emit(f"{acc} = {self._combine(m, acc, v, acc_dt)}", depth)

    def _final(self, m, acc):
        if m.arg:
            return f"{dtype_ctor(m.out_dtype)}({acc}_i)"
        if np.dtype(m.acc_dtype) == np.dtype(m.out_dtype):
            return acc
        return f"{dtype_ctor(m.out_dtype)}({acc})"

    def _lanes(self, s, accs, names, depth):
        """A long contiguous row folded into ``ROW_LANES`` accumulators per reduction
        (lane ``k`` folds the row's elements ``k (mod ROW_LANES)``), then the lanes into
        ``names``: independent chains the loop vectoriser can run side by side, where
        one accumulator is one long dependency chain. Accumulator dtypes are kept."""
        n = int(s.shape[-1])
        j = self.loop_var(s.vars[-1])
        lanes = [self.fresh("lane") for _ in accs]
        tmps = [self.fresh("a") for _ in accs]
        q, c, k = self.fresh("q"), self.fresh("c"), self.fresh("k")
        for a, lane in zip(accs, lanes):
            self.emit(f"{lane} = _empty(({ROW_LANES},), {dtype_ctor(a.monoid.acc_dtype)})",
                      depth)
        self.emit(f"for {q} in range({ROW_LANES}):", depth)
        for a, lane in zip(accs, lanes):
            self.emit(f"{lane}[{q}] = {literal_expr(a.monoid.identity, a.monoid.acc_dtype)}",
                      depth + 1)

        def fold(slot, d):
            self.block(s.body, d)
            for a, lane, t in zip(accs, lanes, tmps):
                val = self.value(a.value)
                self.emit(f"{t} = {lane}[{slot}]", d)
                self._fold(a.monoid, t, val, "0", d, a.value.dtype)
                self.emit(f"{lane}[{slot}] = {t}", d)
        full = n // ROW_LANES * ROW_LANES
        self.emit(f"for {c} in range({n // ROW_LANES}):", depth)
        self.emit(f"for {k} in range({ROW_LANES}):", depth + 1)
        self.emit(f"{j} = {c} * {ROW_LANES} + {k}", depth + 2)
        fold(k, depth + 2)
        if full < n:
            self.emit(f"for {j} in range({full}, {n}):", depth)
            fold("0", depth + 1)
        for a, lane, acc in zip(accs, lanes, names):
            self.emit(f"for {q} in range({ROW_LANES}):", depth)
            self._fold(a.monoid, acc, f"{lane}[{q}]", "0", depth + 1, a.monoid.acc_dtype)

    def reduce(self, s, depth):
        """The loops of ``s``: every accumulator (sibling reductions) folds its value
        from the one body, in the same order as it would alone."""
        accs = s.accs()
        shape, axes = s.shape, s.axes
        kept = [d for d in range(len(shape)) if d not in axes]
        if not kept and self._reduce_whole(s, depth):
            return
        at = [self._ix(i) for i in s.out_at]
        pos = self.loop_var(s.vars[axes[0]]) if axes else "0"
        if all(d < a for d in kept for a in axes):
            # Reduced axes innermost: one scalar accumulator per output element.
            kvars, kshape = [s.vars[d] for d in kept], [shape[d] for d in kept]
            if kept and self._pool_ok(s) and self.pool_loop(
                    kvars, kshape, depth, lambda inner: self._reduce_rows(s, inner)):
                return
            par = self._parallel(s.parallel, s.body, depth)
            self._reduce_rows(s, self.loops(kvars, kshape, depth, par))
            return
        # Reduced axes outside kept ones: accumulators indexed by the kept axes.
        kshape = shape_text([shape[d] for d in kept])
        names = [self.fresh("acc") for _ in accs]
        for a, acc in zip(accs, names):
            self.emit(f"{acc} = _empty({kshape}, {dtype_ctor(a.monoid.acc_dtype)})", depth)
            if a.monoid.arg:
                self.emit(f"{acc}_i = _empty({kshape}, np.int64)", depth)
        fv = [self.fresh("q") for _ in kept]
        inner = depth
        for nm, d in zip(fv, kept):
            self.emit(f"for {nm} in range({size_text(shape[d])}):", inner)
            inner += 1
        f = ", ".join(fv) or "()"
        for a, acc in zip(accs, names):
            self.emit(f"{acc}[{f}] = {literal_expr(a.monoid.identity, a.monoid.acc_dtype)}",
                      inner)
            if a.monoid.arg:
                self.emit(f"{acc}_i[{f}] = -1", inner)
        body_depth = self.loops(s.vars, shape, depth, False)
        self.block(s.body, body_depth)
        k = ", ".join(self.loop_var(s.vars[d]) for d in kept) or "()"
        tmps = [self.fresh("a") for _ in accs]
        for a, acc, sa in zip(accs, names, tmps):
            val = self.value(a.value)
            self.emit(f"{sa} = {acc}[{k}]", body_depth)
            if a.monoid.arg:
                self.emit(f"{sa}_i = {acc}_i[{k}]", body_depth)
            self._fold(a.monoid, sa, val, pos, body_depth, a.value.dtype)
            self.emit(f"{acc}[{k}] = {sa}", body_depth)
            if a.monoid.arg:
                self.emit(f"{acc}_i[{k}] = {sa}_i", body_depth)
        inner = depth
        for nm, d in zip(fv, kept):
            self.emit(f"for {nm} in range({size_text(shape[d])}):", inner)
            inner += 1
        oidx = ", ".join(at + fv) or "()"
        for a, acc, sa in zip(accs, names, tmps):
            self.emit(f"{sa} = {acc}[{f}]", inner)
            if a.monoid.arg:
                self.emit(f"{sa}_i = {acc}_i[{f}]", inner)
            self.emit(f"{self.name(a.out)}[{oidx}] = {self._final(a.monoid, sa)}", inner)

    def parts_loop(self, part, parts, depth, body) -> None:
        """``for part in range(parts): body`` — on the pool where the kernel's loops
        run there (:meth:`pool_loop`), else one part after the other. Either way the
        parts are the same, so a result built from them has the same bits."""
        if self.pool_loops and not self.serial_only and \
                self.pool_loop([part], [parts], depth, body, count=str(parts)):
            return
        self.emit(f"for {self.loop_var(part)} in range({parts}):", depth)
        body(depth + 1)

    def part_range(self, part, n, parts, depth) -> tuple:
        """``(lo, hi)``: names bound to part ``part``'s share ``[lo, hi)`` of ``n``
        (inside :meth:`parts_loop`'s body). The bounds are tested (the test never
        fails) so LLVM sees ``0 <= lo <= hi <= n``: an index built from them never
        wraps around, and the loops over them vectorise."""
        lo, hi, pv = self.fresh("lo"), self.fresh("hi"), self.loop_var(part)
        self.emit(f"{lo} = {pv} * {n} // {parts}", depth)
        self.emit(f"{hi} = ({pv} + 1) * {n} // {parts}", depth)
        self.emit(f"if {lo} < 0 or {hi} > {n}:", depth)
        self.emit("continue", depth + 1)
        return lo, hi

    def _reduce_whole(self, s, depth) -> bool:
        """A reduction of every axis of a large static array in parts: its first axis
        cut into :func:`whole_parts` parts (on the pool where it runs:
        :meth:`parts_loop`), each folded into partial accumulators, then the partials
        folded in order. The parts depend on the shape alone, so the result is the
        same bits whatever the thread count, and with the pool or without; an arg
        reduction keeps the first extremum (a part's position, compared strictly, in
        order). False, with nothing written, where it does not apply."""
        shape = s.shape
        if not self.reduce_in_parts or s.out_at or not shape or not is_static(shape):
            return False
        parts = whole_parts(shape)
        if parts < 2:
            return False
        accs = s.accs()
        partials = [self.fresh("part") for _ in accs]
        part_var = self.fresh("_part")
        n0 = int(shape[0])

        def chunk(d):
            c, r = self.loop_var(part_var), self.fresh("r")
            lo, hi = self.part_range(part_var, n0, parts, d)
            names = self._init_accs(accs, d)
            self.emit(f"for {r} in range({hi} - {lo}):", d)
            self.emit(f"{self.loop_var(s.vars[0])} = {lo} + {r}", d + 1)
            rdepth = self.loops(list(s.vars[1:]), list(shape[1:]), d + 1, False)
            self.block(s.body, rdepth)
            pos = self.loop_var(s.vars[s.axes[0]])
            for a, acc in zip(accs, names):
                self._fold(a.monoid, acc, self.value(a.value), pos, rdepth, a.value.dtype)
            for a, acc, part in zip(accs, names, partials):
                self.emit(f"{part}[{c}] = {acc}", d)
                if a.monoid.arg:
                    self.emit(f"{part}_i[{c}] = {acc}_i", d)

        for a, part in zip(accs, partials):
            self.emit(f"{part} = _empty(({parts},), {dtype_ctor(a.monoid.acc_dtype)})", depth)
            if a.monoid.arg:
                self.emit(f"{part}_i = _empty(({parts},), np.int64)", depth)
        self.parts_loop(part_var, parts, depth, chunk)
        names = self._init_accs(accs, depth)
        q = self.fresh("q")
        self.emit(f"for {q} in range({parts}):", depth)
        for a, acc, part in zip(accs, names, partials):
            self._fold(a.monoid, acc, f"{part}[{q}]", f"{part}_i[{q}]", depth + 1,
                       a.monoid.acc_dtype)
        for a, acc in zip(accs, names):
            self.emit(f"{self.name(a.out)}[()] = {self._final(a.monoid, acc)}", depth)
        return True

    def _init_accs(self, accs, depth) -> list:
        """Fresh accumulators for ``accs``, set to their monoids' identities."""
        names = [self.fresh("acc") for _ in accs]
        for a, acc in zip(accs, names):
            self.emit(f"{acc} = {literal_expr(a.monoid.identity, a.monoid.acc_dtype)}",
                      depth)
            if a.monoid.arg:
                self.emit(f"{acc}_i = -1", depth)
        return names

    def _reduce_rows(self, s, inner):
        """Inside the loops over a reduction's kept axes (outermost): its accumulators,
        the loops over its reduced axes, and the stores of the results."""
        accs = s.accs()
        shape, axes = s.shape, s.axes
        kept = [d for d in range(len(shape)) if d not in axes]
        at = [self._ix(i) for i in s.out_at]
        pos = self.loop_var(s.vars[axes[0]]) if axes else "0"
        names = self._init_accs(accs, inner)
        if _lanes_ok(s, self._float_fold):
            self._lanes(s, accs, names, inner)
        else:
            rdepth = self.loops([s.vars[a] for a in axes], [shape[a] for a in axes],
                                inner, False)
            self.block(s.body, rdepth)
            for a, acc in zip(accs, names):
                self._fold(a.monoid, acc, self.value(a.value), pos, rdepth,
                           a.value.dtype)
        kidx = ", ".join(at + [self.loop_var(s.vars[d]) for d in kept]) or "()"
        for a, acc in zip(accs, names):
            self.emit(f"{self.name(a.out)}[{kidx}] = {self._final(a.monoid, acc)}",
                      inner)


#: Accumulators per reduction along a long contiguous row (a multiple of the vector width).
ROW_LANES = 16

#: A reduction of an array of at least ``PARALLEL_MIN_SIZE`` elements into one value
#: (or, rendered as a flat loop, into a short trailing row: ``render_periodic``) runs in
#: at most this many parts (of its first axis; of a flat loop's whole chunks) ...
WHOLE_PARTS = 64
#: ... none smaller than this many elements.
WHOLE_PART_MIN = 1 << 14


def whole_parts(shape) -> int:
    """Parts a reduction of every axis of an array of static ``shape`` is cut into
    (:meth:`FunctionRenderer._reduce_whole`); below 2 it runs as one loop.

    Examples
    --------
    >>> whole_parts((1_000_000,)), whole_parts((1000, 1000)), whole_parts((100_000,))
    (61, 61, 1)
    """
    from ...compiler.lower import PARALLEL_MIN_SIZE
    total = int(np.prod(shape))
    if total < PARALLEL_MIN_SIZE:
        return 1
    return int(min(WHOLE_PARTS, shape[0], total // WHOLE_PART_MIN))


def _lanes_ok(s, float_fold) -> bool:
    """Whether reduction ``s`` folds its rows in :data:`ROW_LANES` lanes: one reduced
    axis, the innermost, of a static extent of at least ``4 * ROW_LANES``; no arg
    reduction (positions need the first extremum in order); a straight-line body; and
    not every accumulator a fold LLVM vectorises by itself (``float_fold``)."""
    n = s.shape[-1] if s.shape else None
    return (tuple(s.axes) == (len(s.shape) - 1,) and type(n) is int and n >= 4 * ROW_LANES
            and not any(a.monoid.arg for a in s.accs())
            and not all(float_fold(a.monoid) is not None for a in s.accs())
            and all(isinstance(st, ir.Let) for st in s.body))


def _rename_ix(i, r):
    """``i`` with loop-variable names replaced by the renderer's canonical ones."""
    if isinstance(i, IxVar):
        return IxVar(r.loop_var(i.name))
    if isinstance(i, IxAdd):
        return IxAdd(_rename_ix(i.a, r), _rename_ix(i.b, r))
    if isinstance(i, IxScale):
        return IxScale(_rename_ix(i.a, r), i.k)
    if isinstance(i, IxConst) and type(i.value) is Dim:
        return IxVar(i.value.code())  # a symbolic offset (``n - 1 - i`` in ``rev``)
    if isinstance(i, IxClamp) and (type(i.lo) is Dim or type(i.hi) is Dim):
        return IxClamp(i.value, size_text(i.lo), size_text(i.hi))  # printed as given
    return i
