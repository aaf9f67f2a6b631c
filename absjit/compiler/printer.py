"""A readable text form of the loop IR (``print(program)`` via :func:`pformat`).

::

    kernel(a:float32[32, 32]) -> (t4)
      t2:float32[30, 30] = alloc
      nest i1 < 30, i2 < 30:
        s3 = load a[i1, i2 + 1]
        ...
        t2[i1, i2] = s9

Index expressions print in Python syntax; ``clamp(v, lo, hi)`` is a run-time index.
"""
from __future__ import annotations

import numpy as np

from ..core.shapes import IxAdd, IxClamp, IxConst, IxScale, IxVar
from . import ir

__all__ = ["pformat", "format_ix", "format_value"]


def format_ix(ix, value=None) -> str:
    """``ix`` as Python source; ``value(v)`` spells the scalar of a clamped index."""
    value = value or format_value
    if isinstance(ix, IxVar):
        return ix.name
    if isinstance(ix, IxConst):
        return str(ix.value)
    if isinstance(ix, IxScale):
        return f"{format_ix(ix.a, value)} * {ix.k}" if ix.k >= 0 else \
            f"-({format_ix(ix.a, value)} * {-ix.k})"
    if isinstance(ix, IxAdd):
        b = ix.b
        if isinstance(b, IxConst) and isinstance(b.value, int) and b.value < 0:
            return f"({format_ix(ix.a, value)} - {-b.value})"
        return f"({format_ix(ix.a, value)} + {format_ix(b, value)})"
    if isinstance(ix, IxClamp):
        return f"min(max(int({value(ix.value)}), {ix.lo}), {ix.hi})"
    raise ir.IRError(f"not an index expression: {ix!r}")


def format_value(v) -> str:
    if isinstance(v, (ir.Sym, ir.Buffer)):
        return v.name
    if isinstance(v, ir.Const):
        return f"{v.value!r}:{np.dtype(v.dtype).name}"
    raise ir.IRError(f"not a value: {v!r}")


def _index(index) -> str:
    return "[" + ", ".join(format_ix(i) for i in index) + "]"


def _expr(e) -> str:
    if isinstance(e, ir.Load):
        return f"load {e.buf.name}{_index(e.index)}"
    if isinstance(e, ir.Op):
        params = " ".join(f"{k}={v}" for k, v in sorted(e.params.items()))
        head = e.prim.name + (f"[{params}]" if params else "")
        return f"{head} " + " ".join(format_value(a) for a in e.args)
    if isinstance(e, ir.IndexValue):
        return f"index {format_ix(e.ix)}"
    if isinstance(e, ir.Ref):
        return format_value(e.value)
    raise ir.IRError(f"not an expression: {e!r}")


def _fold(acc, axes) -> str:
    m = acc.monoid
    what = f"arg{m.arg}" if m.arg else m.combine
    return (f"reduce[{what} axes={tuple(axes)} acc={np.dtype(m.acc_dtype).name}] "
            f"{format_value(acc.value)}")


def _stmt_lines(stmt, out, depth):
    ind = "  " * depth
    if isinstance(stmt, ir.Alloc):
        out.append(f"{ind}{stmt.buf!r} = alloc")
    elif isinstance(stmt, ir.Let):
        out.append(f"{ind}{stmt.sym.name}:{stmt.sym.dtype.name} = {_expr(stmt.expr)}")
    elif isinstance(stmt, ir.Store):
        out.append(f"{ind}{stmt.buf.name}{_index(stmt.index)} = {format_value(stmt.value)}")
    elif isinstance(stmt, ir.Nest):
        rng = ", ".join(f"{v} < {n}" for v, n in zip(stmt.vars, stmt.shape))
        what = "rows" if isinstance(stmt, ir.Rows) else "nest"
        out.append(f"{ind}{'parallel ' if stmt.parallel else ''}{what} {rng}:")
        return [stmt.body]
    elif isinstance(stmt, ir.Reduce):
        at = _index(stmt.out_at) if stmt.out_at else ""
        outs = ", ".join(a.out.name + at for a in stmt.accs())
        folds = ", ".join(_fold(a, stmt.axes) for a in stmt.accs())
        rng = ", ".join(f"{v} < {n}" for v, n in zip(stmt.vars, stmt.shape))
        out.append(f"{ind}{outs} = {'parallel ' if stmt.parallel else ''}"
                   f"{folds} over {rng}:")
        return [stmt.body]
    elif isinstance(stmt, ir.Switch):
        out.append(f"{ind}switch {format_value(stmt.index)}:")
        for k, b in enumerate(stmt.branches):
            out.append(f"{ind}  case {k}:")
            _block(b, out, depth + 2)
        return []
    elif isinstance(stmt, ir.While):
        out.append(f"{ind}while:")
        _block(stmt.cond_body, out, depth + 1)
        out.append(f"{ind}  break unless {format_value(stmt.cond)}")
        _block(stmt.body, out, depth + 1)
        return []
    elif isinstance(stmt, ir.ForRange):
        out.append(f"{ind}for {stmt.var} < {stmt.extent}{' reversed' if stmt.reverse else ''}:")
        return [stmt.body]
    elif isinstance(stmt, ir.Opaque):
        outs = ", ".join(repr(b) for b in stmt.outs) or "()"
        out.append(f"{ind}{outs} = {stmt.prim.name} "
                   + " ".join(b.name for b in stmt.ins))
    elif isinstance(stmt, ir.Copy):
        d = _index(stmt.dst_at) if stmt.dst_at else ""
        s = _index(stmt.src_at) if stmt.src_at else ""
        out.append(f"{ind}{stmt.dst.name}{d}[...] = copy {stmt.src.name}{s}")
    elif isinstance(stmt, ir.View):
        at = _index(stmt.at) if stmt.at else ""
        out.append(f"{ind}{stmt.dst!r} = view {stmt.src.name}{at}")
    elif isinstance(stmt, ir.Alias):
        out.append(f"{ind}{stmt.dst!r} = reuse {stmt.src.name}")
    elif isinstance(stmt, ir.ConstArray):
        out.append(f"{ind}{stmt.buf!r} = const {np.array2string(stmt.value, threshold=8)}")
    else:
        out.append(f"{ind}{stmt!r}")
    return []


def _block(block, out, depth):
    # An explicit stack: straight-line programs of any length print without recursion.
    stack = [(iter(block), depth)]
    while stack:
        it, d = stack[-1]
        stmt = next(it, None)
        if stmt is None:
            stack.pop()
            continue
        for kid in _stmt_lines(stmt, out, d):
            stack.append((iter(kid), d + 1))


def pformat(program: ir.Program) -> str:
    params = ", ".join(repr(b) for b in program.params)
    outs = ", ".join(b.name for b in program.outputs)
    out = [f"{program.name}({params}) -> ({outs})"]
    _block(program.body, out, 1)
    return "\n".join(out)
