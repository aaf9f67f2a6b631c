"""The loop IR: what a backend renders. Data, never text.

A :class:`Program` has parameters (the jaxpr's constants then arguments, as buffers), a
body (a list of statements) and outputs. Statements nest: loop nests, reductions and
control flow hold their bodies as lists of statements, so every pass is a walk over
data and a renderer is an interpreter of it.

Values
------
``Buffer(name, shape, dtype)``   an array (shape entries are sizes: ints today)
``Sym(name, dtype)``             a scalar local
``Const(value, dtype)``          a scalar constant

Scalar expressions (right-hand sides of :class:`Let`)
-----------------------------------------------------
``Load(buf, index)``             ``buf[index]``; ``index`` is a tuple of index
                                 expressions (:mod:`absjit.core.shapes`)
``Op(prim, args, in_dtypes, out_dtype, params)``
                                 an elementwise primitive on scalar values; backends
                                 spell it from their scalar table
``IndexValue(ix, dtype)``        the value of an index expression (``iota``)
``Ref(value)``                   a copy of a scalar value

Statements
----------
``Alloc(buf)``                   a fresh uninitialised buffer
``Let(sym, expr)``               define (or, for carries and accumulators, redefine)
``Store(buf, index, value)``     ``buf[index] = value``
``Nest(vars, shape, body, parallel)``
                                 a loop nest; ``vars[d]`` runs over ``range(shape[d])``
``Reduce(out, vars, shape, axes, monoid, body, value, parallel, siblings, out_at)``
                                 ``out[out_at + kept vars] = fold(monoid, value)``
                                 over the ``axes`` of the nest ``vars``/``shape``;
                                 ``body`` computes ``value`` at the full index.
                                 ``siblings`` are more accumulators
                                 (:class:`Acc`) the same loops fold from the same
                                 body: sibling reductions read their inputs once
``Rows(vars, shape, body, parallel)``
                                 a :class:`Nest` over leading (row) axes whose body
                                 holds nests and reductions over the rest of each row:
                                 a row is reduced and then consumed while in cache
                                 (:mod:`.rows`)
``Switch(index, branches)``      run ``branches[clamp(index, 0, n - 1)]``
``While(cond_body, cond, body)`` ``while True: cond_body; if not cond: break; body``
``ForRange(var, extent, reverse, body)``
                                 ``for var in range(extent)`` (backwards if reverse)
``Opaque(prim, outs, ins, in_avals, out_avals, params)``
                                 a whole-array operation (dot, concatenate, scatter…)
``Copy(dst, src, dst_at, src_at)``
                                 ``dst[dst_at...] = src[src_at...]`` element by element
``View(dst, src, at)``           ``dst`` names ``src[at...]`` without a copy
``Alias(dst, src)``              ``dst`` names the storage of ``src`` (written in place)
``ConstArray(buf, value)``       ``buf`` holds a small constant array (a NumPy value a
                                 loop body closed over)
``CallPiece(piece)``             run a separately compiled piece (:mod:`.pieces`) here:
                                 large loop bodies are outlined into such calls

:func:`verify` checks a program's invariants (every value defined before use, dtypes of
stores, shapes of copies); the IR passes end with it as jaxpr passes end with
``typecheck``.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core.shapes import IxAdd, IxClamp, IxScale, IxVar, is_ix

__all__ = ["Buffer", "Sym", "Const", "Load", "Op", "IndexValue", "Ref", "Alloc", "Let",
           "Store", "Nest", "Reduce", "Acc", "Rows", "Switch", "While", "ForRange", "Opaque",
           "Copy", "View", "Alias", "ConstArray", "CallPiece", "Program", "IRError", "verify",
           "LoopIndex", "ix_vars",
           "walk", "child_blocks",
           "stmt_uses", "stmt_defs", "expr_values", "ix_values", "count_stmts"]


class IRError(Exception):
    """A loop-IR invariant does not hold (a compiler bug, never a user error)."""


@dataclasses.dataclass(eq=False)
class Buffer:
    name: str
    shape: tuple
    dtype: np.dtype

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"{self.name}:{self.dtype.name}{list(self.shape)}"


@dataclasses.dataclass(eq=False)
class Sym:
    name: str
    dtype: np.dtype

    def __repr__(self):
        return f"{self.name}:{self.dtype.name}"


@dataclasses.dataclass(eq=False)
class LoopIndex(Sym):
    """The value of an enclosing loop's variable ``var``, handed to an outlined piece
    as a parameter: inside the piece, index expressions naming ``var`` read it."""

    var: str = ""


@dataclasses.dataclass(frozen=True)
class Const:
    value: object
    dtype: np.dtype


# -- scalar expressions --------------------------------------------------------------
@dataclasses.dataclass(eq=False)
class Load:
    buf: Buffer
    index: tuple


@dataclasses.dataclass(eq=False)
class Op:
    prim: object
    args: tuple
    in_dtypes: tuple
    out_dtype: np.dtype
    params: dict


@dataclasses.dataclass(eq=False)
class IndexValue:
    ix: object
    dtype: np.dtype


@dataclasses.dataclass(eq=False)
class Ref:
    value: object


# -- statements ----------------------------------------------------------------------
@dataclasses.dataclass(eq=False)
class Alloc:
    buf: Buffer


@dataclasses.dataclass(eq=False)
class Let:
    sym: Sym
    expr: object


@dataclasses.dataclass(eq=False)
class Store:
    buf: Buffer
    index: tuple
    value: object


@dataclasses.dataclass(eq=False)
class Nest:
    vars: tuple
    shape: tuple
    body: list
    parallel: bool = False


@dataclasses.dataclass(eq=False)
class Rows(Nest):
    """A loop over rows (the leading axes) whose body runs nests and reductions over
    the rest of the row; their index expressions name the row's loop variables."""


@dataclasses.dataclass(eq=False)
class Acc:
    """One more accumulator of a :class:`Reduce`: ``out[out_at + kept] = fold(monoid,
    value)``, ``value`` computed by the reduction's body."""

    out: Buffer
    monoid: object
    value: object


@dataclasses.dataclass(eq=False)
class Reduce:
    out: Buffer
    vars: tuple
    shape: tuple
    axes: tuple
    monoid: object
    body: list
    value: object
    parallel: bool = False
    siblings: tuple = ()
    out_at: tuple = ()

    def accs(self) -> list:
        """Every accumulator, this reduction's own first."""
        return [Acc(self.out, self.monoid, self.value)] + list(self.siblings)


@dataclasses.dataclass(eq=False)
class Switch:
    index: object
    branches: list


@dataclasses.dataclass(eq=False)
class While:
    cond_body: list
    cond: object
    body: list


@dataclasses.dataclass(eq=False)
class ForRange:
    var: str
    extent: int
    reverse: bool
    body: list


@dataclasses.dataclass(eq=False)
class Opaque:
    prim: object
    outs: list
    ins: list
    in_avals: list
    out_avals: list
    params: dict


@dataclasses.dataclass(eq=False)
class Copy:
    dst: Buffer
    src: Buffer
    dst_at: tuple = ()
    src_at: tuple = ()


@dataclasses.dataclass(eq=False)
class View:
    dst: Buffer
    src: Buffer
    at: tuple


@dataclasses.dataclass(eq=False)
class Alias:
    dst: Buffer
    src: Buffer


@dataclasses.dataclass(eq=False)
class ConstArray:
    buf: Buffer
    value: object


@dataclasses.dataclass(eq=False)
class CallPiece:
    piece: object  # a compiler.pieces.Piece: params in, results defined here


@dataclasses.dataclass(eq=False)
class Program:
    """A whole compiled function: ``params`` in, ``outputs`` out (fresh buffers).

    ``source`` is the printed jaxpr it came from (renderers put it in a comment).
    """

    name: str
    params: list
    body: list
    outputs: list
    source: str = ""


# -- walking -------------------------------------------------------------------------
def child_blocks(stmt) -> list:
    """The statement lists nested directly in ``stmt``."""
    if isinstance(stmt, (Nest, Reduce, ForRange)):
        return [stmt.body]
    if isinstance(stmt, Switch):
        return list(stmt.branches)
    if isinstance(stmt, While):
        return [stmt.cond_body, stmt.body]
    return []


def walk(block):
    """Every statement of ``block`` and its nested blocks, outer before inner, with an
    explicit stack (no recursion proportional to program size)."""
    stack = [iter(block)]
    while stack:
        for stmt in stack[-1]:
            yield stmt
            kids = child_blocks(stmt)
            if kids:
                stack.extend(iter(b) for b in reversed(kids))
                break
        else:
            stack.pop()


def count_stmts(block) -> int:
    return sum(1 for _ in walk(block))


def _ix_nodes(ix):
    """Every node of an index expression (sums and scales are opened)."""
    stack = [ix]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, IxAdd):
            stack += [x.a, x.b]
        elif isinstance(x, IxScale):
            stack.append(x.a)


def ix_vars(ix) -> set:
    """The loop variables an index expression names."""
    return {x.name for x in _ix_nodes(ix) if isinstance(x, IxVar)}


def ix_values(ix) -> list:
    """Scalar values an index expression reads at run time (clamped indices)."""
    return [x.value for x in _ix_nodes(ix) if isinstance(x, IxClamp)]


def expr_values(expr) -> list:
    """Scalar values and buffers a scalar expression reads."""
    if isinstance(expr, Load):
        return [expr.buf] + [v for ix in expr.index for v in ix_values(ix)]
    if isinstance(expr, Op):
        return list(expr.args)
    if isinstance(expr, IndexValue):
        return ix_values(expr.ix)
    if isinstance(expr, Ref):
        return [expr.value]
    raise IRError(f"not a scalar expression: {expr!r}")


def stmt_uses(stmt) -> list:
    """Buffers and symbols ``stmt`` reads itself, before its nested blocks run (a
    reduction's ``value`` and a loop's ``cond`` are defined inside them)."""
    if isinstance(stmt, Let):
        return expr_values(stmt.expr)
    if isinstance(stmt, Store):
        return [stmt.value] + [v for ix in stmt.index for v in ix_values(ix)]
    if isinstance(stmt, Switch):
        return [stmt.index]
    if isinstance(stmt, Opaque):
        return list(stmt.ins)
    if isinstance(stmt, CallPiece):
        return list(stmt.piece.params)
    if isinstance(stmt, Copy):
        return [stmt.src] + [v for ix in stmt.dst_at + stmt.src_at for v in ix_values(ix)]
    if isinstance(stmt, (View, Alias)):
        return [stmt.src] + [v for ix in getattr(stmt, "at", ()) for v in ix_values(ix)]
    return []


def stmt_defs(stmt) -> list:
    """Buffers and symbols ``stmt`` defines or writes."""
    if isinstance(stmt, (Alloc, ConstArray)):
        return [stmt.buf]
    if isinstance(stmt, Let):
        return [stmt.sym]
    if isinstance(stmt, Store):
        return [stmt.buf]
    if isinstance(stmt, Reduce):
        return [a.out for a in stmt.accs()]
    if isinstance(stmt, Opaque):
        return list(stmt.outs)
    if isinstance(stmt, CallPiece):
        return list(stmt.piece.results)
    if isinstance(stmt, Copy):
        return [stmt.dst]
    if isinstance(stmt, (View, Alias)):
        return [stmt.dst]
    return []


_DEFINING = (Alloc, Let, View, Alias, ConstArray)


def verify(program: Program) -> Program:
    """Check ``program``'s invariants; raises :class:`IRError`.

    * every buffer and symbol is defined (a parameter, ``Alloc``, ``Let``, ``View``,
      ``Alias`` or an opaque op's result) before it is read, in program order;
    * loads and stores index with as many index expressions as the buffer has dims;
    * copies move between buffers of one dtype;
    * outputs are defined.
    """
    defined = set(id(b) for b in program.params)
    loop_vars: set = set()

    def need(v, where):
        if isinstance(v, Const):
            return
        if isinstance(v, (Buffer, Sym)):
            if id(v) not in defined:
                raise IRError(f"{v!r} is read before it is defined ({where})")
            return
        raise IRError(f"not a value: {v!r} ({where})")

    def check_index(buf, index, where):
        if len(index) != buf.ndim:
            raise IRError(f"{where}: {buf!r} indexed with {len(index)} indices")
        for ix in index:
            if not is_ix(ix):
                raise IRError(f"{where}: not an index expression: {ix!r}")

    stack = [iter(program.body)]
    while stack:
        for stmt in stack[-1]:
            name = type(stmt).__name__
            for v in stmt_uses(stmt):
                need(v, name)
            if isinstance(stmt, (Store,)):
                check_index(stmt.buf, stmt.index, name)
                need(stmt.buf, name)
            if isinstance(stmt, Let) and isinstance(stmt.expr, Load):
                check_index(stmt.expr.buf, stmt.expr.index, name)
            if isinstance(stmt, Copy):
                need(stmt.dst, name)
                if stmt.dst.dtype != stmt.src.dtype:
                    raise IRError(f"Copy between dtypes: {stmt.dst!r} <- {stmt.src!r}")
            if isinstance(stmt, (Nest, Reduce)):
                loop_vars.update(stmt.vars)
                if len(stmt.vars) != len(stmt.shape):
                    raise IRError(f"{name}: {len(stmt.vars)} vars for shape {stmt.shape}")
            if isinstance(stmt, Reduce):
                for acc in stmt.accs():
                    need(acc.out, name)
                    if acc.out.ndim != len(stmt.out_at) + len(stmt.vars) - len(stmt.axes):
                        raise IRError(f"Reduce: {acc.out!r} does not match its loops")
            for v in stmt_defs(stmt):
                if isinstance(stmt, _DEFINING + (Opaque, CallPiece)):
                    defined.add(id(v))
            kids = child_blocks(stmt)
            if kids:
                stack.extend(iter(b) for b in reversed(kids))
                break
        else:
            stack.pop()
    for out in program.outputs:
        need(out, "outputs")
    return program


def size_atoms(params, body, results=()) -> list:
    """The root atoms of every symbolic size (``ranked`` level) that ``params``, ``body``
    and ``results`` mention — shapes, loop extents, index constants, parameters of
    opaque ops, and the bodies of the pieces ``body`` calls — sorted by name. A
    renderer binds each one once, at function entry."""
    from ..core.dims import Dim
    found: dict = {}
    seen: set = set()
    stack = list(params) + list(results) + list(body)
    while stack:
        x = stack.pop()
        if isinstance(x, Dim):
            for a in x.atoms():
                found.setdefault(a.name, a)
            continue
        if isinstance(x, (int, float, str, bool, np.ndarray, np.generic, np.dtype)) \
                or x is None:
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, CallPiece):
            p = x.piece
            stack.extend(list(p.params) + list(p.results) + list(p.body))
        elif dataclasses.is_dataclass(x) or is_ix(x):
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x)) \
                if dataclasses.is_dataclass(x) else stack.extend(x)
        elif hasattr(x, "shape") and hasattr(x, "dtype"):  # an aval
            stack.extend(x.shape)
    return [found[k] for k in sorted(found)]
