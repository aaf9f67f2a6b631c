"""Cutting a program into pieces that compile separately and are shared by content.

Numba's compile time grows super-linearly with the size of one function (its dataflow
analyses walk blocks × variables), and every function costs a fixed ~0.1 s. So a large
program is cut into *units* — one loop nest, reduction, opaque op or control-flow
statement, with the allocations and scalar code just before it — and runs of units are
*pieces*: small functions whose parameters are the values they read from earlier
pieces and whose results are the values later pieces read. A renderer names
everything inside a piece canonically, so equal pieces (ten sweeps of a stencil, the
same layer in two programs) have equal source and compile once.

A program small enough to compile quickly stays one function (no call between pieces
on the hot path of small kernels).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from . import ir

__all__ = ["Piece", "split_program", "outline_loops", "SINGLE_FUNCTION_MAX", "PIECE_BUDGET",
           "OUTLINE_MIN"]

# A program with at most this many IR statements compiles as one function.
SINGLE_FUNCTION_MAX = 80
# Units are joined into one piece while it holds at most this many units and this many
# IR statements: Numba's cost per function is ~0.1 s fixed plus ~30-60 ms per loop
# nest, and grows faster than linearly past ~20 nests in one function (measured on the
# 2-core development machine; see README "Compile time").
PIECE_UNITS = 8
PIECE_BUDGET = 240

_LIGHT = (ir.Alloc, ir.Let, ir.Store, ir.View, ir.Alias, ir.ConstArray)


@dataclasses.dataclass(eq=False)
class Piece:
    """Statements plus the values they take from and hand back to the driver.

    A *host* piece is a single whole-array operation the driver runs itself (through
    the primitive's NumPy implementation: a BLAS product needs no compiled code).
    """

    body: list
    params: list
    results: list
    weight: int
    host: bool = False


def _light(stmt) -> bool:
    return isinstance(stmt, _LIGHT) or (isinstance(stmt, ir.Nest) and not stmt.vars)


def _units(body, host=None) -> list:
    """``[(statements, is_host)]``: each heavy statement with the light ones before it;
    a host statement stands alone (the light ones before it join the previous unit)."""
    units, cur = [], []
    for stmt in body:
        if host is not None and host(stmt):
            if cur:
                if units and not units[-1][1]:
                    units[-1][0].extend(cur)
                else:
                    units.append((cur, False))
            units.append(([stmt], True))
            cur = []
            continue
        cur.append(stmt)
        if not _light(stmt):
            units.append((cur, False))
            cur = []
    if cur:
        if units and not units[-1][1]:
            units[-1][0].extend(cur)
        else:
            units.append((cur, False))
    return units


def _touches(block):
    """(values read or written before this block defines them — they come from earlier
    pieces, in order of first use —, values the block defines)."""
    used, defined = [], []
    seen_d = set()
    seen_u = set()
    for stmt in ir.walk(block):
        vals = list(ir.stmt_uses(stmt))
        if isinstance(stmt, ir.Store):
            vals.append(stmt.buf)
        elif isinstance(stmt, ir.Copy):
            vals.append(stmt.dst)
        elif isinstance(stmt, ir.Reduce):
            vals += [a.out for a in stmt.accs()]
        if isinstance(stmt, ir.Let) and isinstance(stmt.expr, ir.Load):
            vals.append(stmt.expr.buf)
        for v in vals:
            # A loop carry is read at the top of the loop and redefined at its end: its
            # first touch here is a read, so it is a parameter.
            if isinstance(v, (ir.Buffer, ir.Sym)) and id(v) not in seen_d \
                    and id(v) not in seen_u:
                seen_u.add(id(v))
                used.append(v)
        defs = ir.stmt_defs(stmt) if isinstance(stmt, (ir.Alloc, ir.Let, ir.View, ir.Alias,
                                                       ir.Opaque, ir.ConstArray,
                                                       ir.CallPiece)) else []
        for v in defs:
            if id(v) not in seen_d:
                seen_d.add(id(v))
                defined.append(v)
    return used, defined


def _piece(body, later):
    used, defined = _touches(body)
    return Piece(body, used, [v for v in defined if id(v) in later], ir.count_stmts(body))


def _group(units, keys, max_units, budget) -> list:
    """Greedy grouping of ``[(statements, host)]`` into ``[(statements, weight, host)]``
    (see :func:`split_program`); ``keys[k]`` is unit ``k``'s canonical source or None."""
    groups, cur, first, weight, n = [], [], None, 0, 0
    for (unit, is_host), key in zip(units, keys):
        w = ir.count_stmts(unit)
        # Cut where the structure repeats, once the piece holds half its budget of
        # units (fewer calls from the driver; equal pieces either way).
        restart = key is not None and key == first and n >= max_units // 2
        if cur and (is_host or n >= max_units or weight + w > budget or restart):
            groups.append((cur, weight, False))
            cur, weight, n = [], 0, 0
        if is_host:
            groups.append((unit, w, True))
            continue
        if not cur:
            first = key
        cur = cur + unit
        weight += w
        n += 1
    if cur:
        groups.append((cur, weight, False))
    return groups


def split_program(program: ir.Program, unit_key=None, host=None, force: bool = False,
                  max_units: int = PIECE_UNITS, budget: int = PIECE_BUDGET,
                  single_max: int = SINGLE_FUNCTION_MAX):
    """The program's pieces in order, or ``None`` when it should stay one function
    (``force`` cuts even a small program).

    ``host(stmt)`` marks top-level statements the driver runs itself (see
    :class:`Piece`).

    Consecutive units are grouped greedily up to ``max_units`` units and ``budget``
    statements. ``unit_key(piece)`` (a backend's hash of a unit's canonical source) lets
    grouping follow repeated structure: a group holding at least half its units also
    ends where the next unit equals its first one, so a loop body unrolled by tracing
    (ten equal sweeps) gives equal groups, which compile once.
    """
    total = ir.count_stmts(program.body)
    units = _units(program.body, host if (force or total > single_max) else None)
    if not force and (total <= single_max or len(units) <= 1):
        return None
    keys = [None] * len(units)
    if unit_key is not None:
        later = {id(b) for b in program.outputs}
        uses = [_touches(u)[0] for u, _ in units]
        for k in range(len(units) - 1, -1, -1):
            if not units[k][1]:
                keys[k] = unit_key(_piece(units[k][0], later))
            later.update(id(v) for v in uses[k])
    groups = _group(units, keys, max_units, budget)
    infos = [_touches(body) for body, _, _ in groups]
    # What each piece must hand back: values it defines that later pieces (or the
    # program's outputs) use. Walk backwards accumulating later uses.
    later = {id(b) for b in program.outputs}
    pieces = [None] * len(groups)
    for k in range(len(groups) - 1, -1, -1):
        (body, w, is_host), (used, defined) = groups[k], infos[k]
        results = [v for v in defined if id(v) in later]
        pieces[k] = Piece(body, used, results, w, is_host)
        later.update(id(v) for v in used)
    return pieces


# A loop body with more IR statements than this is outlined into pieces.
OUTLINE_MIN = 120


def _top_defs(stmts) -> list:
    """Values defined at the top level of ``stmts`` (scalar code in a rank-0 nest
    counts as top level; lets inside loops do not)."""
    out, stack = [], list(reversed(stmts))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ir.Nest) and not stmt.vars:
            stack.extend(reversed(stmt.body))
            continue
        if isinstance(stmt, (ir.Alloc, ir.Let, ir.View, ir.Alias, ir.Opaque, ir.ConstArray,
                             ir.CallPiece)):
            out += [v for v in ir.stmt_defs(stmt) if all(v is not o for o in out)]
    return out


def outline_loops(block, max_units: int = PIECE_UNITS, budget: int = PIECE_BUDGET,
                  min_size: int = OUTLINE_MIN, loop_indices=None) -> None:
    """Replace the bodies of large ``While``/``ForRange`` loops in ``block`` (in place,
    innermost first) by :class:`~.ir.CallPiece` statements, so a loop around a big body
    compiles as small functions. A piece hands back every value it defines that any
    other statement of the loop reads (the next iteration may read it), and takes the
    variables of enclosing loops its index expressions name (:class:`~.ir.LoopIndex`)."""
    loop_indices = {} if loop_indices is None else loop_indices
    for stmt in block:
        if not isinstance(stmt, (ir.While, ir.ForRange)):
            continue
        outline_loops(stmt.body, max_units, budget, min_size, loop_indices)
        if ir.count_stmts(stmt.body) <= min_size:
            continue
        units = _units(stmt.body)
        groups = [g for g, _, _ in _group(units, [None] * len(units), max_units, budget)]
        if len(groups) <= 1:
            continue
        touched = [_touches(g) for g in groups]
        # Values that exist before the loop and are redefined inside it: its carries.
        carried = {id(v) for u, _ in touched for v in u}
        cond_used = _touches(stmt.cond_body)[0] if isinstance(stmt, ir.While) else []
        new_body = []
        for k, g in enumerate(groups):
            used, defined = touched[k]
            elsewhere = {id(v) for j, (u, _) in enumerate(touched) if j != k for v in u}
            elsewhere |= {id(v) for v in cond_used}
            if isinstance(stmt, ir.While):
                elsewhere.add(id(stmt.cond))
            # Hand back what the rest of the loop reads, and every value defined at
            # the group's top level that the loop carries (a carry is redefined here
            # and may be read after the loop).
            results = [v for v in _top_defs(g)
                       if id(v) in elsewhere or id(v) in carried]
            used = _with_loop_indices(g, used, loop_indices)
            new_body.append(ir.CallPiece(Piece(g, used, results, ir.count_stmts(g))))
        stmt.body = new_body


def _with_loop_indices(group, used, loop_indices) -> list:
    """``used`` plus a :class:`~.ir.LoopIndex` per loop variable that ``group``'s index
    expressions name but do not bind (an enclosing loop's); loop indices that nested
    pieces take for variables this group binds are dropped (the group supplies them)."""
    bound, named = set(), set()
    for s in ir.walk(group):
        if isinstance(s, ir.ForRange):
            bound.add(s.var)
        elif isinstance(s, (ir.Nest, ir.Reduce)):
            bound.update(s.vars)
        for ix in _index_exprs(s):
            named |= ir.ix_vars(ix)
    out = [v for v in used if not (isinstance(v, ir.LoopIndex) and v.var in bound)]
    have = {v.var for v in out if isinstance(v, ir.LoopIndex)}
    for var in sorted(named - bound - have):
        idx = loop_indices.get(var)
        if idx is None:
            idx = loop_indices[var] = ir.LoopIndex(f"{var}_index", np.dtype(np.int64), var)
        out.append(idx)
    return out


def _index_exprs(s) -> list:
    """The index expressions statement ``s`` itself holds."""
    if isinstance(s, ir.Let):
        if isinstance(s.expr, ir.Load):
            return list(s.expr.index)
        if isinstance(s.expr, ir.IndexValue):
            return [s.expr.ix]
        return []
    if isinstance(s, ir.Store):
        return list(s.index)
    if isinstance(s, ir.Copy):
        return list(s.dst_at) + list(s.src_at)
    if isinstance(s, ir.View):
        return list(s.at)
    if isinstance(s, ir.Reduce):
        return list(s.out_at)
    return []

