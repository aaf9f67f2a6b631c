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

from . import ir

__all__ = ["Piece", "split_program", "SINGLE_FUNCTION_MAX", "PIECE_BUDGET"]

# A program with at most this many IR statements compiles as one function.
SINGLE_FUNCTION_MAX = 80
# Units are joined into one piece while the piece stays under this many statements.
PIECE_BUDGET = 1

_LIGHT = (ir.Alloc, ir.Let, ir.Store, ir.View, ir.Alias)


@dataclasses.dataclass(eq=False)
class Piece:
    """Statements plus the values they take from and hand back to the driver."""

    body: list
    params: list
    results: list
    weight: int


def _light(stmt) -> bool:
    return isinstance(stmt, _LIGHT) or (isinstance(stmt, ir.Nest) and not stmt.vars)


def _units(body) -> list:
    units, cur = [], []
    for stmt in body:
        cur.append(stmt)
        if not _light(stmt):
            units.append(cur)
            cur = []
    if cur:
        if units:
            units[-1].extend(cur)
        else:
            units.append(cur)
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
            vals.append(stmt.out)
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
                                                       ir.Opaque)) else []
        for v in defs:
            if id(v) not in seen_d:
                seen_d.add(id(v))
                defined.append(v)
    return used, defined


def split_program(program: ir.Program, budget: int = PIECE_BUDGET,
                  single_max: int = SINGLE_FUNCTION_MAX):
    """The program's pieces in order, or ``None`` when it should stay one function."""
    total = ir.count_stmts(program.body)
    units = _units(program.body)
    if total <= single_max or len(units) <= 1:
        return None
    groups, cur, weight = [], [], 0
    for unit in units:
        w = ir.count_stmts(unit)
        if cur and weight + w > budget:
            groups.append((cur, weight))
            cur, weight = [], 0
        cur = cur + unit
        weight += w
    if cur:
        groups.append((cur, weight))
    infos = [_touches(body) for body, _ in groups]
    # What each piece must hand back: values it defines that later pieces (or the
    # program's outputs) use. Walk backwards accumulating later uses.
    later = {id(b) for b in program.outputs}
    pieces = [None] * len(groups)
    for k in range(len(groups) - 1, -1, -1):
        (body, w), (used, defined) = groups[k], infos[k]
        results = [v for v in defined if id(v) in later]
        pieces[k] = Piece(body, used, results, w)
        later.update(id(v) for v in used)
    return pieces
