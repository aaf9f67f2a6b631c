"""Loop nests over short rows rendered as one flat, vectorisable loop.

A C-ordered ``(10000, 10)`` array walked as ``for i: for j in range(10)`` keeps LLVM's
loop vectoriser from the work: the inner loop is too short, and the outer one reads
with a stride of 10. When every array the nest reads or writes is either indexed by the
whole nest (``x[i, j]``: one step of the flat position ``p``) or only by the trailing
("tail") loop indices (``mean[j]``: a value that repeats with period ``T``, the size of
the tail), the nest is one flat loop over ``p``. It is rendered in chunks of ``L``
elements, ``L`` a multiple of both ``T`` and the vector width: within a chunk, the
periodic operands are read from tables of ``L`` elements filled once before the loop
(``tab[k] = mean[k % T]``), so the inner loop ``for k in range(L)`` reads and writes
contiguously and vectorises; the last, partial chunk runs the same body over fewer
``k``.

A reduction over the leading axes that keeps the tail (``X.sum(0)``, or a whole-array
sum when there is no tail) accumulates into ``L`` accumulators the same way — lane
``k`` folds the elements at positions ``p = k (mod L)`` — and the lanes that belong to
one output element are folded last. The accumulators keep the reduction's accumulator
dtype (float32 sums in float64), so the result is as exact as the one-accumulator
loop's, or more: each lane adds ``L / T`` times fewer terms.

:func:`layout` decides (and returns None where the nest is not of that form or too
small to gain); :func:`render_nest` and :func:`render_reduce` write the loops.

With symbolic sizes (the ``ranked`` level) the period, the chunk and the size are
computed when the kernel runs (:attr:`Layout.prelude`), and the size conditions the
static layout checks become :attr:`Layout.guard`: the caller renders the flat loop
under ``if guard:`` and the plain loop nest under ``else:``.
"""
from __future__ import annotations

import dataclasses
import math

from ...compiler import ir
from ...core.dims import Dim
from ...core.shapes import IxAdd, IxVar, is_static, ix_vars, size_code, size_of
from .lower_elementwise import dtype_ctor as _ctor, literal_expr as _literal

__all__ = ["Layout", "layout", "render_nest", "render_reduce"]

#: Innermost extents at least this long vectorise as they are.
SHORT_ROW = 64
#: A chunk holds at least this many elements (enough independent vector lanes to hide
#: the latency of a floating-point add) and is a multiple of ``LANES``.
MIN_CHUNK = 64
LANES = 16
#: With symbolic sizes the chunk's length is known only at run time, so its inner loop
#: carries a vector remainder: longer chunks pay it less often (norm 10000x10, ranked
#: against shaped: 1.13-1.25x with 64, 0.98-1.17x with 256).
SYMBOLIC_MIN_CHUNK = 256


@dataclasses.dataclass
class Layout:
    """Sizes are ints, or (symbolic layouts) names the :attr:`prelude` binds."""
    split: int        # the tail is vars[split:]
    period: object    # T: elements in one tail (1 without a tail)
    chunk: object     # L: a multiple of T and LANES
    size: object      # N: elements of the nest
    tables: dict      # (id(buf), index) -> (buf, index): the periodic loads
    rows: object = None    # L // T
    n_full: object = None  # N // L: whole chunks
    rem: object = None     # N - n_full * L: elements of the partial last chunk
    guard: str | None = None   # symbolic layouts: when the flat loop is used
    prelude: tuple = ()        # symbolic layouts: lines binding the names above


def _clamps(index) -> bool:
    return any(ir.ix_values(i) for i in index)


def layout(stmt, names=None) -> Layout | None:
    """The flat layout of ``stmt`` (a :class:`~absjit.compiler.ir.Nest` or a
    :class:`~absjit.compiler.ir.Reduce` over leading axes), or None. ``names`` makes
    fresh local names; a symbolic layout needs it."""
    shape, vars_ = tuple(stmt.shape), tuple(stmt.vars)
    if not shape or len(set(vars_)) != len(vars_):
        return None
    static = is_static(shape)
    if not static and names is None:
        return None
    is_reduce = isinstance(stmt, ir.Reduce)
    conds = []  # symbolic conditions (source) the static checks below make on ints
    if is_reduce:
        if any(a.monoid.arg for a in stmt.accs()) or stmt.out_at \
                or tuple(stmt.axes) != tuple(range(len(stmt.axes))) \
                or not stmt.axes or (static and not is_static(stmt.out.shape)):
            return None
        split = len(stmt.axes)
    else:
        if len(shape) < 2:
            return None
        if type(shape[-1]) is Dim:
            conds.append(f"{size_code(shape[-1])} < {SHORT_ROW}")
        elif shape[-1] >= SHORT_ROW:
            return None
        split = len(shape)
    full = tuple(IxVar(v) for v in vars_)
    tables, used = {}, set()
    for st in stmt.body:
        if isinstance(st, ir.Let):
            e = st.expr
            if isinstance(e, ir.IndexValue):
                return None
            if not isinstance(e, ir.Load) or not e.index:
                continue
            if _clamps(e.index):
                return None
            if e.index == full and _same_shape(e.buf.shape, shape):
                continue
            names_ = set().union(*(ix_vars(i) for i in e.index))
            if not names_:
                continue  # a constant position: an invariant load
            if not names_ <= set(vars_):
                return None  # indexed by an enclosing loop (a row of ``Rows``)
            tables[(id(e.buf), e.index)] = (e.buf, e.index)
            used |= names_
        elif isinstance(st, ir.Store):
            if is_reduce or st.index != full or not _same_shape(st.buf.shape, shape):
                return None
        else:
            return None
    if used:
        first = min(vars_.index(v) for v in used)
        if is_reduce and first < split:
            return None  # a periodic operand that varies along a reduced axis
        split = min(split, first) if not is_reduce else split
    if not is_reduce and split == 0:
        return None
    tail = shape[split:]
    if not static:
        return _symbolic(shape, split, tail, is_reduce, tables, conds, names)
    period = math.prod(tail)
    if period == 0:
        return None  # an empty tail: nothing to vectorise (and no chunk is a multiple)
    if not is_reduce and period >= SHORT_ROW:
        return None
    if is_reduce and split < len(shape) and shape[-1] >= SHORT_ROW:
        return None  # a long kept row vectorises in the plain rendering
    rows = LANES // math.gcd(period, LANES)
    while rows * period < MIN_CHUNK:
        rows *= 2
    chunk = rows * period
    size = math.prod(shape)
    if size < 2 * chunk:
        return None
    n_full, rem = divmod(size, chunk)
    return Layout(split, period, chunk, size, tables, rows, n_full, rem)


def _same_shape(a, b) -> bool:
    """Structural equality (for symbolic sizes, never an assumption)."""
    return len(a) == len(b) and all(
        (type(x) is Dim) == (type(y) is Dim) and
        (x.code() == y.code() if type(x) is Dim else x == y) for x, y in zip(a, b))


def _symbolic(shape, split, tail, is_reduce, tables, conds, names):
    """The layout of a nest with symbolic sizes: its sizes computed at run time, and
    the static checks of :func:`layout` as a run-time guard."""
    if is_reduce and split < len(shape):
        last = shape[-1]
        if type(last) is Dim:
            conds.append(f"{size_code(last)} < {SHORT_ROW}")
        elif last >= SHORT_ROW:
            return None
    t, rows, chunk, size, n_full, rem = (names(p) for p in
                                         ("_T", "_R", "_L", "_N", "_F", "_M"))
    prelude = (
        f"{t} = {size_code(size_of(tail))}",
        f"{rows} = {LANES} // min({LANES}, {t} & -{t}) if {t} > 0 else 1",
        f"while {t} > 0 and {rows} * {t} < {SYMBOLIC_MIN_CHUNK}:",
        f"    {rows} *= 2",
        f"{chunk} = {rows} * {t}",
        f"{size} = {size_code(size_of(shape))}",
        f"{n_full} = {size} // {chunk} if {chunk} > 0 else 0",
        f"{rem} = {size} - {n_full} * {chunk}",
    )
    conds = [f"{t} > 0"] + ([] if is_reduce else [f"{t} < {SHORT_ROW}"]) + conds + \
        [f"{size} >= 2 * {chunk}"]
    return Layout(split, t, chunk, size, tables, rows, n_full, rem,
                  " and ".join(f"({c})" for c in conds), prelude)


def _offset(r, vars_, shape) -> str:
    """The row-major offset of the loop indices ``vars_`` within ``shape`` (source)."""
    terms, inner = [], []  # inner: the sizes after the current index
    for v, n in reversed(list(zip(vars_, shape))):
        j = r.loop_var(v)
        if not inner:
            terms.append(j)
        elif is_static(inner):
            terms.append(f"{j} * {math.prod(inner)}")
        else:
            terms.append(f"{j} * ({size_code(size_of(inner))})")
        inner.append(n)
    return " + ".join(reversed(terms)) or "0"


def _flat_body(r, stmt, lay, base, k, depth):
    """Emit the tables and flat views, and return ``stmt.body`` rewritten to read the
    flat position ``base + k``: whole-nest loads and stores through 1-D views, periodic
    loads through the tables."""
    shape, vars_ = tuple(stmt.shape), tuple(stmt.vars)
    tail_vars, tail_shape = vars_[lay.split:], shape[lay.split:]
    tabs = {}
    for key, (buf, index) in lay.tables.items():
        tab = ir.Buffer(r.fresh("tab"), (lay.chunk if lay.guard is None else 0,),
                        buf.dtype)
        r.names[id(tab)] = tab.name
        r.emit(f"{tab.name} = _empty(({lay.chunk},), {_ctor(buf.dtype)})", depth)
        rr = r.fresh("q")
        r.emit(f"for {rr} in range({lay.rows}):", depth)
        inner = depth + 1
        for v, n in zip(tail_vars, tail_shape):
            r.emit(f"for {r.loop_var(v)} in range({size_code(n)}):", inner)
            inner += 1
        pos = f"{rr} * {lay.period} + {_offset(r, tail_vars, tail_shape)}" \
            if tail_vars else rr
        r.emit(f"{tab.name}[{pos}] = {r.name(buf)}[{r.ix(index)}]", inner)
        tabs[key] = tab
    flats = {}
    at = (IxAdd(IxVar(base), IxVar(k)),)
    full = tuple(IxVar(v) for v in vars_)

    def flat(buf):
        got = flats.get(id(buf))
        if got is None:
            got = ir.Buffer(r.fresh("flat"), (lay.size if lay.guard is None else 0,),
                            buf.dtype)
            r.names[id(got)] = got.name
            r.emit(f"{got.name} = {r.name(buf)}.reshape(({lay.size},))", depth)
            flats[id(buf)] = got
        return got

    body = []
    for st in stmt.body:
        if isinstance(st, ir.Let) and isinstance(st.expr, ir.Load):
            e = st.expr
            key = (id(e.buf), e.index)
            if key in tabs:
                st = ir.Let(st.sym, ir.Load(tabs[key], (IxVar(k),)))
            elif e.index == full and e.index:
                st = ir.Let(st.sym, ir.Load(flat(e.buf), at))
        elif isinstance(st, ir.Store):
            st = ir.Store(flat(st.buf), at, st.value)
        body.append(st)
    return body


def _chunks(r, lay, base, k, body_fn, depth, parallel, pool=False):
    """``for c: base = c * L; for k in range(L): body`` and the partial last chunk.
    ``parallel()``: whether the loop over chunks is a ``prange`` loop; with ``pool`` it
    runs on absjit's pool where it can
    (:meth:`absjit.backends.numba_cpu.render.CpuRenderer.pool_loop`)."""
    c = r.fresh("_c")

    def chunk(d):
        r.emit(f"{r.loop_var(base)} = {r.loop_var(c)} * {lay.chunk}", d)
        r.emit(f"for {r.loop_var(k)} in range({lay.chunk}):", d)
        body_fn(d + 1)
    if not (pool and r.pool_loop([c], [lay.n_full], depth, chunk, count=str(lay.n_full))):
        rng = "prange" if parallel() else "range"
        r.emit(f"for {r.loop_var(c)} in {rng}({lay.n_full}):", depth)
        chunk(depth + 1)
    if lay.guard is not None or lay.rem:
        r.emit(f"{r.loop_var(base)} = {lay.n_full} * {lay.chunk}"
               if lay.guard is not None else
               f"{r.loop_var(base)} = {lay.n_full * lay.chunk}", depth)
        r.emit(f"for {r.loop_var(k)} in range({lay.rem}):", depth)
        body_fn(depth + 1)


def _chunks_in_parts(r, lay, base, k, accs, names, fold_into, parts, depth):
    """:func:`_chunks` for a reduction, its whole chunks cut into ``parts`` runs of
    consecutive chunks (on the pool where it runs:
    :meth:`.render.FunctionRenderer.parts_loop`), each folding into its own row of
    lanes; the rows are folded into the lanes ``names`` in order, then the partial last
    chunk."""
    rows = [r.fresh("lanes") for _ in accs]
    part, c = r.fresh("_part"), r.fresh("_c")
    rr, q = r.fresh("r"), r.fresh("q")
    n_full = lay.n_full

    def run(d):
        pv = r.loop_var(part)
        # bounded chunk positions and lanes of the part's own (a 1-D array, as the
        # one-loop rendering's): LLVM vectorises the lanes as it does there
        lo, hi = r.part_range(part, n_full, parts, d)
        own = _new_lanes(r, accs, lay.chunk, d)
        fold = fold_into([(lambda i, o=o: f"{o}[{i}]") for o in own])
        r.emit(f"for {rr} in range({hi} - {lo}):", d)
        r.emit(f"{r.loop_var(c)} = {lo} + {rr}", d + 1)
        r.emit(f"{r.loop_var(base)} = {r.loop_var(c)} * {lay.chunk}", d + 1)
        r.emit(f"for {r.loop_var(k)} in range({lay.chunk}):", d + 1)
        fold(d + 2)
        r.emit(f"for {q} in range({lay.chunk}):", d)
        for o, row in zip(own, rows):
            r.emit(f"{row}[{pv}, {q}] = {o}[{q}]", d + 1)

    for a, row in zip(accs, rows):
        r.emit(f"{row} = _empty(({parts}, {lay.chunk}), {_ctor(a.monoid.acc_dtype)})", depth)
    r.parts_loop(part, parts, depth, run)
    p2 = r.fresh("q")
    r.emit(f"for {p2} in range({parts}):", depth)
    r.emit(f"for {q} in range({lay.chunk}):", depth + 1)
    for a, acc, row in zip(accs, names, rows):
        t = r.fresh("a")
        r.emit(f"{t} = {acc}[{q}]", depth + 2)
        r._fold(a.monoid, t, f"{row}[{p2}, {q}]", "0", depth + 2, a.monoid.acc_dtype)
        r.emit(f"{acc}[{q}] = {t}", depth + 2)
    if lay.rem:
        r.emit(f"{r.loop_var(base)} = {n_full * lay.chunk}", depth)
        r.emit(f"for {r.loop_var(k)} in range({lay.rem}):", depth)
        fold_into([(lambda i, acc=acc: f"{acc}[{i}]") for acc in names])(depth + 1)


def render_nest(r, stmt, lay, depth):
    base, k = r.fresh("_p"), r.fresh("_k")
    body = _flat_body(r, stmt, lay, base, k, depth)
    _chunks(r, lay, base, k, lambda d: r.block(body, d), depth,
            lambda: r._parallel(stmt.parallel, body, depth), pool=r._pool_ok(stmt))


def _parts(r, stmt, lay) -> int:
    """Parts the whole chunks of a flat reduction run in (each folding into lanes of
    its own), or 1: a static layout of at least ``PARALLEL_MIN_SIZE`` elements. The
    count depends on the layout alone (:func:`.render.whole_parts`), never on whether
    or on how many threads the parts run, so neither changes the result's bits."""
    from .render import whole_parts
    if not r.reduce_in_parts or lay.guard is not None \
            or any(a.monoid.arg for a in stmt.accs()):
        return 1
    return min(whole_parts((lay.size,)), lay.n_full)


def _new_lanes(r, accs, chunk, depth) -> list:
    """Names of fresh arrays of ``chunk`` lanes per accumulator, set to the monoids'
    identities."""
    names = [r.fresh("acc") for _ in accs]
    q = r.fresh("q")
    for a, acc in zip(accs, names):
        r.emit(f"{acc} = _empty(({chunk},), {_ctor(a.monoid.acc_dtype)})", depth)
    r.emit(f"for {q} in range({chunk}):", depth)
    for a, acc in zip(accs, names):
        r.emit(f"{acc}[{q}] = {_literal(a.monoid.identity, a.monoid.acc_dtype)}", depth + 1)
    return names


def render_reduce(r, stmt, lay, depth):
    accs = stmt.accs()
    base, k = r.fresh("_p"), r.fresh("_k")
    body = _flat_body(r, stmt, lay, base, k, depth)
    names = _new_lanes(r, accs, lay.chunk, depth)
    tmps = [r.fresh("a") for _ in accs]

    def fold_into(lanes):
        def fold(d):
            r.block(body, d)
            for a, lane, t in zip(accs, lanes, tmps):
                val = r.value(a.value)
                r.emit(f"{t} = {lane(r.loop_var(k))}", d)
                r._fold(a.monoid, t, val, "0", d, a.value.dtype)
                r.emit(f"{lane(r.loop_var(k))} = {t}", d)
        return fold

    fold = fold_into([(lambda i, acc=acc: f"{acc}[{i}]") for acc in names])
    parts = _parts(r, stmt, lay)
    if parts < 2:
        _chunks(r, lay, base, k, fold, depth, lambda: False)
    else:
        _chunks_in_parts(r, lay, base, k, accs, names, fold_into, parts, depth)
    # Lane k holds the output element k % T: fold the L / T lanes of each.
    shape, vars_ = tuple(stmt.shape), tuple(stmt.vars)
    tail_vars, tail_shape = vars_[lay.split:], shape[lay.split:]
    inner = depth
    for v, n in zip(tail_vars, tail_shape):
        r.emit(f"for {r.loop_var(v)} in range({size_code(n)}):", inner)
        inner += 1
    off = _offset(r, tail_vars, tail_shape) if tail_vars else "0"
    rows = lay.rows
    out_ix = ", ".join(r.loop_var(v) for v in tail_vars) or "()"
    for a, acc, t in zip(accs, names, tmps):
        m = a.monoid
        r.emit(f"{t} = {acc}[{off}]", inner)
        rr = r.fresh("q")
        r.emit(f"for {rr} in range(1, {rows}):", inner)
        r._fold(m, t, f"{acc}[{rr} * {lay.period} + {off}]", "0", inner + 1, m.acc_dtype)
        r.emit(f"{r.name(a.out)}[{out_ix}] = {r._final(m, t)}", inner)
