"""Passes over the loop IR. Each takes and returns a :class:`~.ir.Program` and ends
with :func:`~.ir.verify`, as jaxpr passes end with ``typecheck``.

``scalarize``       rank-0 buffers that are only loaded and stored (loop carries, branch
                    results, scan slices) become scalar locals, kept in registers.
``hoist_allocs``    allocations inside ``While``/``ForRange`` bodies move before the
                    loop: every iteration overwrites them fully, so one suffices.
``reuse_dead``      a nest that reads a dead temporary of its own shape and dtype only at
                    the element it writes stores into that temporary instead of a new
                    buffer (a product's bias + relu epilogue runs in place).
``fuse_rows``       a reduction along the trailing axes and the nests and reductions that
                    consume it run row by row in one loop (:mod:`.rows`).
``hoist_invariants`` scalars a loop nest's body computes without its loop variables
                    (a scatter's row index, read once per row, not once per element)
                    move before the nest. Not in :func:`optimize`: for renderers whose
                    nests are loops in one function (the cpu backend), not kernel
                    launches (cuda).

Shape guards need no pass: only the program's entry checks its parameters (renderers
emit them from ``Program.params``); loop bodies never do.
"""
from __future__ import annotations

from ..core.shapes import IxVar
from . import ir
from .rows import fuse_rows

__all__ = ["scalarize", "hoist_allocs", "reuse_dead", "fuse_rows", "hoist_invariants",
           "optimize"]


def _map_blocks(block, fn):
    """``fn`` applied to ``block`` and, first, to every block nested in it (bottom up).
    Recursion depth is the nesting depth of control flow, not the program's length."""
    for stmt in block:
        if isinstance(stmt, (ir.Nest, ir.Reduce, ir.ForRange)):
            stmt.body = _map_blocks(stmt.body, fn)
        elif isinstance(stmt, ir.Switch):
            stmt.branches = [_map_blocks(b, fn) for b in stmt.branches]
        elif isinstance(stmt, ir.While):
            stmt.cond_body = _map_blocks(stmt.cond_body, fn)
            stmt.body = _map_blocks(stmt.body, fn)
    return fn(block)


# -- scalarize -----------------------------------------------------------------------
def scalarize(program: ir.Program) -> ir.Program:
    """Rank-0 buffers accessed only by ``Load``/``Store`` become :class:`~.ir.Sym`."""
    candidates = {}
    banned = {id(b) for b in program.params} | {id(b) for b in program.outputs}
    for stmt in ir.walk(program.body):
        if isinstance(stmt, ir.Alloc) and stmt.buf.ndim == 0:
            candidates[id(stmt.buf)] = stmt.buf
        elif isinstance(stmt, (ir.Let, ir.Store)):
            continue
        else:
            for v in ir.stmt_uses(stmt) + ir.stmt_defs(stmt):
                if isinstance(v, ir.Buffer):
                    banned.add(id(v))
    syms = {k: ir.Sym(b.name, b.dtype) for k, b in candidates.items() if k not in banned}
    if not syms:
        return program

    def rewrite(block):
        out = []
        for stmt in block:
            if isinstance(stmt, ir.Alloc) and id(stmt.buf) in syms:
                continue
            if isinstance(stmt, ir.Store) and id(stmt.buf) in syms:
                stmt = ir.Let(syms[id(stmt.buf)], ir.Ref(stmt.value))
            elif isinstance(stmt, ir.Let) and isinstance(stmt.expr, ir.Load) \
                    and id(stmt.expr.buf) in syms:
                stmt = ir.Let(stmt.sym, ir.Ref(syms[id(stmt.expr.buf)]))
            out.append(stmt)
        return out
    program.body = _map_blocks(program.body, rewrite)
    return ir.verify(program)


# -- hoist_allocs --------------------------------------------------------------------
def _take_allocs(block, into):
    """Remove the ``Alloc`` statements of ``block`` and of the non-loop blocks nested in
    it (branches), appending them to ``into``."""
    kept = []
    for stmt in block:
        if isinstance(stmt, ir.Alloc):
            into.append(stmt)
            continue
        if isinstance(stmt, ir.Switch):
            stmt.branches = [_take_allocs(b, into) for b in stmt.branches]
        kept.append(stmt)
    return kept


def hoist_allocs(program: ir.Program) -> ir.Program:
    """Move allocations out of loop bodies (innermost loops first, so a buffer of a
    doubly nested loop ends up before the outer loop)."""
    def rewrite(block):
        out = []
        for stmt in block:
            if isinstance(stmt, ir.While):
                hoisted = []
                stmt.cond_body = _take_allocs(stmt.cond_body, hoisted)
                stmt.body = _take_allocs(stmt.body, hoisted)
                out += hoisted
            elif isinstance(stmt, ir.ForRange):
                hoisted = []
                stmt.body = _take_allocs(stmt.body, hoisted)
                out += hoisted
            out.append(stmt)
        return out
    program.body = _map_blocks(program.body, rewrite)
    return ir.verify(program)


# -- reuse_dead ----------------------------------------------------------------------
def _last_touch(block) -> dict:
    """``id(value) -> index`` of the last statement of ``block`` (nested blocks
    included) that reads or writes it: one pass, so the pass stays linear."""
    last = {}
    for k, stmt in enumerate(block):
        for sub in ir.walk([stmt]):
            for v in ir.stmt_uses(sub):
                last[id(v)] = k
            if isinstance(sub, ir.Store):
                last[id(sub.buf)] = k
            elif isinstance(sub, ir.Copy):
                last[id(sub.dst)] = k
            elif isinstance(sub, ir.Let) and isinstance(sub.expr, ir.Load):
                last[id(sub.expr.buf)] = k
    return last


def reuse_dead(program: ir.Program) -> ir.Program:
    """Write a nest's result over a dead temporary it reads element by element."""
    shared = {id(b) for b in program.params} | {id(b) for b in program.outputs}
    for stmt in ir.walk(program.body):
        if isinstance(stmt, (ir.View, ir.Alias)):
            shared.add(id(stmt.src))
            shared.add(id(stmt.dst))
        elif isinstance(stmt, ir.ConstArray):
            shared.add(id(stmt.buf))

    def rewrite(block):
        fresh = {}  # id -> Buffer: storage created in this block (Alloc, opaque result)
        last = _last_touch(block)
        for k, stmt in enumerate(block):
            if isinstance(stmt, ir.Alloc):
                fresh[id(stmt.buf)] = stmt.buf
            elif isinstance(stmt, ir.Opaque):
                fresh.update((id(b), b) for b in stmt.outs)
            if not isinstance(stmt, ir.Nest) or k == 0:
                continue
            alloc = block[k - 1]
            stores = [s for s in stmt.body if isinstance(s, ir.Store)]
            if not isinstance(alloc, ir.Alloc) or len(stores) != 1 \
                    or stores[0].buf is not alloc.buf:
                continue
            own = tuple(IxVar(n) for n in stmt.vars)
            if stores[0].index != own:
                continue
            loads = {}
            for s in stmt.body:
                if isinstance(s, ir.Let) and isinstance(s.expr, ir.Load):
                    loads.setdefault(id(s.expr.buf), set()).add(s.expr.index)
            for key, idxs in loads.items():
                t = fresh.get(key)
                if t is None or t is alloc.buf or key in shared or idxs != {own}:
                    continue
                if t.shape != alloc.buf.shape or t.dtype != alloc.buf.dtype \
                        or last.get(key, k) > k:
                    continue
                block[k - 1] = ir.Alias(alloc.buf, t)
                shared.add(key)
                break
        return block
    program.body = _map_blocks(program.body, rewrite)
    return ir.verify(program)


# -- hoist_invariants ----------------------------------------------------------------
def _nest_vars(expr) -> set:
    """Loop variables a scalar expression's index expressions name."""
    if isinstance(expr, ir.Load):
        return set().union(*(ir.ix_vars(ix) for ix in expr.index))
    if isinstance(expr, ir.IndexValue):
        return ir.ix_vars(expr.ix)
    return set()


def _invariant_lets(nest, defs) -> list:
    """The ``Let`` statements at the top of ``nest``'s body (before anything else runs)
    whose value is the same at every iteration: no loop variable of the nest in their
    indices, operands defined outside the nest or by an earlier invariant, a loaded
    buffer the nest never writes, and a symbol defined there only (``defs``: how many
    times the program defines each symbol). A nest that may run no iteration keeps
    its body (a hoisted load would then run where none ran)."""
    if not all(type(n) is int and n > 0 for n in nest.shape):
        return []
    inner = set(nest.vars)
    written, defined = set(), {}
    for stmt in ir.walk(nest.body):
        for v in ir.stmt_defs(stmt):
            if isinstance(v, ir.Buffer):
                written.add(id(v))
            else:
                defined[id(v)] = defined.get(id(v), 0) + 1
    hoisted, hoisted_syms = [], set()
    for stmt in nest.body:
        if not isinstance(stmt, ir.Let) or defs.get(id(stmt.sym)) != 1 \
                or _nest_vars(stmt.expr) & inner:
            break  # keep the order of everything from here on
        ok = True
        for v in ir.expr_values(stmt.expr):
            if isinstance(v, ir.Buffer):
                ok &= id(v) not in written
            elif isinstance(v, ir.Sym):
                ok &= id(v) not in defined or id(v) in hoisted_syms
        if not ok:
            break
        hoisted.append(stmt)
        hoisted_syms.add(id(stmt.sym))
    return hoisted


def hoist_invariants(program: ir.Program) -> ir.Program:
    """Loop-invariant scalars at the top of a plain nest's body move before the nest.

    A scatter-add row by row reads its row index inside the loop over the row's
    elements (``for j in range(width): r = idx[i]; out[r, j] += src[s, j]``); LLVM
    cannot move that load out, since the stores to ``out`` might change ``idx`` for
    all it knows, and the row loop then runs unvectorised. Only statements before the
    body's first other statement move (so reads keep their order with respect to
    writes), and only out of ``Nest`` statements (not rows or reductions, whose bodies
    other passes shape) outside rows loops."""
    defs: dict = {}
    for stmt in ir.walk(program.body):
        if isinstance(stmt, ir.Let):
            defs[id(stmt.sym)] = defs.get(id(stmt.sym), 0) + 1

    def rewrite(block, in_rows):
        out = []
        for stmt in block:
            if isinstance(stmt, (ir.Nest, ir.Reduce, ir.ForRange)):
                stmt.body = rewrite(stmt.body, isinstance(stmt, ir.Rows))
            elif isinstance(stmt, ir.Switch):
                stmt.branches = [rewrite(b, False) for b in stmt.branches]
            elif isinstance(stmt, ir.While):
                stmt.cond_body = rewrite(stmt.cond_body, False)
                stmt.body = rewrite(stmt.body, False)
            # A rows loop holds nests and reductions only (a renderer may split it
            # into whole-array loops again: ``rows.unfused``).
            if type(stmt) is ir.Nest and stmt.body and not in_rows:
                lets = _invariant_lets(stmt, defs)
                if lets:
                    out += lets
                    stmt.body = stmt.body[len(lets):]
            out.append(stmt)
        return out
    program.body = rewrite(program.body, False)
    return ir.verify(program)


def optimize(program: ir.Program) -> ir.Program:
    """The standard IR pipeline."""
    return fuse_rows(reuse_dead(hoist_allocs(scalarize(program))))
