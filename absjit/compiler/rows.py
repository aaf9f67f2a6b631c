"""Row fusion: a reduction along the trailing axes and the nests that consume it, one
row at a time.

Softmax and layer norm reduce each row (``x.max(-1)``, ``x.mean(-1)``) and then
broadcast the result back over the row. As separate loop nests that is two or more
passes over whole arrays; when every nest and reduction of a run of statements touches
the arrays the run writes only in its own row, the run is one loop over rows
(:class:`~.ir.Rows`) whose body reduces the row and then consumes it while it is in
cache.

:func:`fuse_rows` decides, on the loop IR (where index expressions say exactly which
elements each statement reads):

* legal: a run of consecutive nests and reductions (allocations and aliases between
  them move before the loop) over shapes starting with the rows' shape ``K``, each
  reduction keeping exactly the leading axes; every array the run writes has ``K`` as
  its leading shape, is written at the statement's own row, and is read inside the run
  only at the reader's own row; no array read in the run at another position is
  written in it;
* profitable: the run holds a reduction and a statement after it, and a row holds at
  least :data:`ROW_MIN` elements (shorter rows vectorise better as whole-array loops).

:func:`unfused` turns :class:`~.ir.Rows` loops and sibling reductions back into
separate statements, for a renderer that launches one kernel per statement.
"""
from __future__ import annotations

from ..core.shapes import IxAdd, IxScale, IxVar, maybe_more_than, size_of
from . import ir

__all__ = ["fuse_rows", "unfused", "ROW_MIN"]

# A row shorter than this many elements is not fused: its loops are too short to
# vectorise, and the rows of such an array are better walked as one flat loop.
ROW_MIN = 64

_LIGHT = (ir.Alloc, ir.Alias)


def _k_of(stmt):
    """How many leading axes ``stmt`` keeps (a reduction along the trailing axes)."""
    if type(stmt) is not ir.Reduce or stmt.out_at:
        return None
    nd = len(stmt.shape)
    k = nd - len(stmt.axes)
    if k < 1 or tuple(stmt.axes) != tuple(range(k, nd)):
        return None
    return k


def _straight(stmt) -> bool:
    return all(isinstance(s, (ir.Let, ir.Store)) for s in stmt.body)


def _fits(stmt, rows) -> bool:
    """``stmt`` is a nest or trailing-axes reduction over ``rows``' shape prefix."""
    k = len(rows)
    if type(stmt) is ir.Nest:
        ok = len(stmt.shape) > k
    elif type(stmt) is ir.Reduce:
        ok = _k_of(stmt) == k
    else:
        return False
    return ok and _straight(stmt) and tuple(stmt.shape[:k]) == tuple(rows)


class _Run:
    """The legality bookkeeping of one candidate run over rows of shape ``rows``."""

    def __init__(self, rows, same):
        self.rows = tuple(rows)
        self.k = len(rows)
        self.same = same          # id(buffer) -> id of the storage it names
        self.written = set()      # storage ids the run writes (at its own rows)
        self.read_any = set()     # storage ids read at positions not tied to a row

    def _row(self, index, vars_) -> bool:
        return len(index) >= self.k and all(
            isinstance(i, IxVar) and i.name == v for i, v in zip(index, vars_[:self.k]))

    def admit(self, stmt) -> bool:
        """Add ``stmt`` when the run stays legal with it."""
        k, vars_ = self.k, stmt.vars
        reads, writes = [], []
        for s in stmt.body:
            if isinstance(s, ir.Let) and isinstance(s.expr, ir.Load):
                reads.append((s.expr.buf, s.expr.index))
            elif isinstance(s, ir.Store):
                writes.append((s.buf, s.index))
        outs = [a.out for a in stmt.accs()] if isinstance(stmt, ir.Reduce) else []
        for buf, index in writes:
            # a nest writes its whole buffer, at its own element: whole rows
            if tuple(index) != tuple(IxVar(v) for v in vars_) \
                    or tuple(buf.shape) != tuple(stmt.shape):
                return False
        for buf in outs:
            if tuple(buf.shape) != self.rows:
                return False
        mine = {self.same.get(id(b), id(b)) for b, _ in writes} | \
            {self.same.get(id(b), id(b)) for b in outs}
        if mine & self.read_any:
            return False
        loose = set()
        for buf, index in reads:
            key = self.same.get(id(buf), id(buf))
            row = buf.ndim >= k and tuple(buf.shape[:k]) == self.rows \
                and self._row(index, vars_)
            if key in self.written or key in mine:
                if not row:
                    return False
            elif not row:
                loose.add(key)
        if loose & mine:
            return False
        self.written |= mine
        self.read_any |= loose
        return True


def _rename(ix, names):
    if isinstance(ix, IxVar):
        return IxVar(names.get(ix.name, ix.name))
    if isinstance(ix, IxAdd):
        return IxAdd(_rename(ix.a, names), _rename(ix.b, names))
    if isinstance(ix, IxScale):
        return IxScale(_rename(ix.a, names), ix.k)
    return ix  # constants, and clamped indices (their value is a scalar, not a loop)


def _renamed_body(body, names):
    out = []
    for s in body:
        if isinstance(s, ir.Let) and isinstance(s.expr, ir.Load):
            s = ir.Let(s.sym, ir.Load(s.expr.buf,
                                      tuple(_rename(i, names) for i in s.expr.index)))
        elif isinstance(s, ir.Let) and isinstance(s.expr, ir.IndexValue):
            s = ir.Let(s.sym, ir.IndexValue(_rename(s.expr.ix, names), s.expr.dtype))
        elif isinstance(s, ir.Store):
            s = ir.Store(s.buf, tuple(_rename(i, names) for i in s.index), s.value)
        out.append(s)
    return out


def _inner(stmt, row_vars):
    """``stmt`` as a statement inside the row loop over ``row_vars``."""
    k = len(row_vars)
    names = dict(zip(stmt.vars[:k], row_vars))
    body = _renamed_body(stmt.body, names)
    if isinstance(stmt, ir.Reduce):
        nd = len(stmt.shape)
        return ir.Reduce(stmt.out, stmt.vars[k:], stmt.shape[k:], tuple(range(nd - k)),
                         stmt.monoid, body, stmt.value, False, stmt.siblings,
                         tuple(IxVar(v) for v in row_vars))
    return ir.Nest(stmt.vars[k:], stmt.shape[k:], body, False)


def _aliases(block) -> dict:
    same = {}
    for s in ir.walk(block):
        if isinstance(s, (ir.Alias, ir.View)):
            same[id(s.dst)] = same.get(id(s.src), id(s.src))
    return same


def _profitable(members) -> bool:
    heavy = [s for s in members if not isinstance(s, _LIGHT)]
    first = next((n for n, s in enumerate(heavy) if isinstance(s, ir.Reduce)), None)
    if first is None or first == len(heavy) - 1:
        return False
    red = heavy[first]
    row = red.shape[_k_of(red):]
    return maybe_more_than(size_of(row), ROW_MIN - 1)


def _fuse_block(block, same) -> list:
    out, n = [], 0
    while n < len(block):
        stmt = block[n]
        k = _k_of(stmt)
        if k is None or not _straight(stmt):
            out.append(stmt)
            n += 1
            continue
        # Start at the reduction; earlier nests are left alone (their rows would be
        # fused only if they fed it, and a producer nest often stores for later use).
        rows = tuple(stmt.shape[:k])
        run = _Run(rows, same)
        members, m = [], n
        while m < len(block):
            s = block[m]
            if isinstance(s, _LIGHT):
                members.append(s)
            elif _fits(s, rows) and run.admit(s):
                members.append(s)
            else:
                break
            m += 1
        while members and isinstance(members[-1], _LIGHT):
            members.pop()
            m -= 1
        if not _profitable(members):
            out.append(stmt)
            n += 1
            continue
        heavy = [s for s in members if not isinstance(s, _LIGHT)]
        row_vars = tuple(heavy[0].vars[:k])
        out += [s for s in members if isinstance(s, _LIGHT)]
        out.append(ir.Rows(row_vars, rows, [_inner(s, row_vars) for s in heavy],
                           any(s.parallel for s in heavy)))
        n = m
    return out


def fuse_rows(program: ir.Program) -> ir.Program:
    """Fuse row reductions with the statements that consume their rows (see the module
    docstring), in every block of ``program``."""
    same = _aliases(program.body)
    program.body = _fuse_block(program.body, same)
    stack = [program.body]
    while stack:
        block = stack.pop()
        for stmt in block:
            if isinstance(stmt, ir.Switch):
                stmt.branches = [_fuse_block(b, same) for b in stmt.branches]
                stack.extend(stmt.branches)
            elif isinstance(stmt, ir.While):
                stmt.cond_body = _fuse_block(stmt.cond_body, same)
                stmt.body = _fuse_block(stmt.body, same)
                stack += [stmt.cond_body, stmt.body]
            elif isinstance(stmt, ir.ForRange):
                stmt.body = _fuse_block(stmt.body, same)
                stack.append(stmt.body)
    return ir.verify(program)


def _outer(stmt, rows):
    """An inner statement of ``rows`` as a statement over whole arrays."""
    k = len(rows.vars)
    if isinstance(stmt, ir.Reduce):
        nd = len(stmt.shape)
        return ir.Reduce(stmt.out, tuple(rows.vars) + tuple(stmt.vars),
                         tuple(rows.shape) + tuple(stmt.shape),
                         tuple(range(k, k + nd)), stmt.monoid, stmt.body, stmt.value,
                         rows.parallel, stmt.siblings)
    return ir.Nest(tuple(rows.vars) + tuple(stmt.vars), tuple(rows.shape) + tuple(stmt.shape),
                   stmt.body, rows.parallel)


def _split(stmt) -> list:
    if isinstance(stmt, ir.Rows):
        return [t for s in stmt.body for t in _split(_outer(s, stmt))]
    if isinstance(stmt, ir.Reduce) and stmt.siblings:
        return [ir.Reduce(a.out, stmt.vars, stmt.shape, stmt.axes, a.monoid, stmt.body,
                          a.value, stmt.parallel, (), stmt.out_at) for a in stmt.accs()]
    return [stmt]


def unfused(program: ir.Program) -> ir.Program:
    """``program`` with every :class:`~.ir.Rows` loop split into whole-array nests and
    reductions, and every reduction with siblings split into one per accumulator (each
    with the shared body)."""
    def rewrite(block):
        out = []
        for stmt in block:
            if isinstance(stmt, ir.Switch):
                stmt.branches = [rewrite(b) for b in stmt.branches]
            elif isinstance(stmt, ir.While):
                stmt.cond_body, stmt.body = rewrite(stmt.cond_body), rewrite(stmt.body)
            elif isinstance(stmt, ir.ForRange):
                stmt.body = rewrite(stmt.body)
            out += _split(stmt)
        return out
    program.body = rewrite(program.body)
    return ir.verify(program)
