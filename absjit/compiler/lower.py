"""From a jaxpr to the loop IR, following the fusion :class:`~.plan.Plan`.

Array-valued results are emitted in equation order: a materialised lazy value becomes
one :class:`~.ir.Nest` that reads only arrays and stores only this result; a reduction
becomes a :class:`~.ir.Reduce` over its operand's lazy expression (sibling reductions
the plan groups become one, with an accumulator each); an opaque op reads
materialised operands; ``cond``/``while``/``scan`` become :class:`~.ir.Switch`,
:class:`~.ir.While` and :class:`~.ir.ForRange` whose bodies are lowered the same way,
recursively (nesting depth is the program's control-flow depth, not its length).

Inside a nest the body is straight-line scalar code with one :class:`~.ir.Let` per
(value, index) pair, so a value read twice at one index is computed once.
"""
from __future__ import annotations

import numpy as np

from ..core import pretty
from ..core.fusion import IndexMap, Reduction, Value, fusion_kind
from ..core.jaxpr import Literal, Var
from ..core.passes import dce, inline_calls
from ..core.dims import Dim
from ..core.primitive import all_primitives
from ..core.shapes import IxClamp, IxVar, maybe_more_than, size_of
from . import ir
from .plan import SCATTER_COMBINE
from .plan import plan as make_plan

__all__ = ["lower_program", "Unsupported", "PARALLEL_MIN_SIZE"]

_I64, _BOOL = np.dtype(np.int64), np.dtype(bool)
# A large scatter runs as this many parallel parts, each folding the updates of its
# share of the result's rows (each part reads every index: more parts cost more reads).
SCATTER_PARTS = 8
# ... when each update's window has at least this many elements (a part skips the
# others' updates at a mispredicted branch each: 20,000 windows of 16 floats ran
# 0.55-0.67 ms in 8 parts against 0.18-0.29 ms serially on 2 cores).
SCATTER_PART_WINDOW = 32

# Below this many elements a loop nest is not marked parallel: threads only pay off
# from ~1e5 float32 elements on the 2-core development machine (see README).
PARALLEL_MIN_SIZE = 1 << 17


class Unsupported(Exception):
    """The program holds something a backend does not lower (names what)."""

    def __init__(self, names):
        self.names = sorted(set(names))
        super().__init__(", ".join(self.names))


class _Names:
    """Fresh names for one program (buffers, symbols, loop indices)."""

    def __init__(self):
        self.count = 0

    def __call__(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"


def _dt(x) -> np.dtype:
    return np.dtype(x.aval.dtype)


class _Body:
    """Straight-line scalar code of one loop body: ``value(x, idx)`` returns a scalar
    value for ``x`` at index expressions ``idx``, appending the lets it needs."""

    def __init__(self, low):
        self.low = low
        self.stmts = []
        self.memo = {}
        self.reads = {}  # Buffer -> set of index tuples read

    def value(self, x, idx):
        """The scalar value of ``x`` at ``idx``. Iterative: a chain of thousands of
        fused operations needs no deep recursion."""
        stack = [self._key(x, idx)]
        while stack:
            var, at = stack[-1]
            if isinstance(var, Literal) or (var, at) in self.memo:
                stack.pop()
                continue
            pending = self._step(var, at)
            if pending:
                stack.extend(pending)
            else:
                stack.pop()
        return self._get(x, idx)

    @staticmethod
    def _key(x, idx):
        """The memo key of ``x`` at ``idx`` (a rank-0 value has one element)."""
        return (x, tuple(idx) if not isinstance(x, Literal) and x.aval.ndim else ())

    def _get(self, x, idx):
        if isinstance(x, Literal):
            return ir.Const(x.val[()], _dt(x))
        return self.memo[self._key(x, idx)]

    def _step(self, x, idx):
        """Define ``(x, idx)`` if its operands are ready; else return the operand
        (var, index) pairs still to compute."""
        low = self.low
        key = (x, idx)
        buf = low.arrays.get(x)
        if buf is not None:
            if isinstance(buf, ir.Const):
                self.memo[key] = buf
                return None
            self.reads.setdefault(buf, set()).add(idx)
            return self._let(key, ir.Load(buf, idx), _dt(x))
        eqn = low.plan.eqns[low.plan.producer[x]]
        kind = fusion_kind(eqn.primitive)
        if isinstance(kind, IndexMap):
            # Dynamic operands (gather indices, slice starts) are read first, then the
            # source at the mapped index; the rule is pure, so calling it twice is fine.
            missing = []

            def read(k, at, _eqn=eqn):
                dep = self._key(_eqn.invars[k + 1], at)
                if not isinstance(dep[0], Literal) and dep not in self.memo:
                    missing.append(dep)
                    return None
                return self._get(*dep)
            src = eqn.invars[0]
            sub = kind.rule(list(idx), src.aval, x.aval, read, **eqn.params)
            if missing:
                return missing
            dep = self._key(src, sub)
            if not isinstance(src, Literal) and dep not in self.memo:
                return [dep]
            self.memo[key] = self._get(*dep)
            return None
        if isinstance(kind, Value):
            return self._let(key, ir.IndexValue(kind.rule(list(idx), x.aval, **eqn.params),
                                                _dt(x)), _dt(x))
        deps = [self._key(a, idx) for a in eqn.invars]
        missing = [d for d in deps if not isinstance(d[0], Literal) and d not in self.memo]
        if missing:
            return missing
        args = tuple(self._get(*d) for d in deps)
        return self._let(key, ir.Op(eqn.primitive, args, tuple(_dt(a) for a in eqn.invars),
                                    _dt(x), dict(eqn.params)), _dt(x))

    def let(self, expr, dtype):
        """A new scalar defined as ``expr`` (not memoised)."""
        sym = ir.Sym(self.low.names("s"), np.dtype(dtype))
        self.stmts.append(ir.Let(sym, expr))
        return sym

    def op(self, name, a, b, dtype):
        """The binary primitive ``name`` on two values of one dtype."""
        dt = np.dtype(getattr(a, "dtype", dtype))
        prim = all_primitives()[name]
        return self.let(ir.Op(prim, (a, b), (dt, dt), np.dtype(dtype), {}), dtype)

    def _let(self, key, expr, dtype):
        sym = ir.Sym(self.low.names("s"), dtype)
        self.stmts.append(ir.Let(sym, expr))
        self.memo[key] = sym
        return None


class _Lowerer:
    """Lowers one (sub-)jaxpr whose inputs are bound to buffers or constants."""

    def __init__(self, names, options, jaxpr_eqns, outvars, inputs, invars,
                 loop_scatters=False):
        self.names = names
        self.options = options
        self.loop_scatters = loop_scatters
        self.plan = make_plan(jaxpr_eqns, outvars, loop_scatters)
        self.arrays = dict(zip(invars, inputs))  # Var -> Buffer | Const
        self.inputs = {id(b) for b in inputs if isinstance(b, ir.Buffer)}
        self.view_of = {}  # Buffer -> Buffer whose storage it shares
        self.stmts = []
        self.outvars = outvars

    # -- helpers -----------------------------------------------------------------------
    def buffer(self, v, prefix="t"):
        return ir.Buffer(self.names(prefix), tuple(v.aval.shape), _dt(v))

    def parallel_hint(self, shape) -> bool:
        par = getattr(self.options, "parallel", None)
        if par is not None:
            return bool(par) and len(shape) > 0 and maybe_more_than(shape[0], 1)
        # A symbolic size may be large: such nests are parallel (prange).
        return len(shape) > 0 and maybe_more_than(shape[0], 1) and \
            maybe_more_than(size_of(shape), PARALLEL_MIN_SIZE - 1)

    def loop_vars(self, ndim):
        return tuple(self.names("i") for _ in range(ndim))

    def operand(self, x):
        """``x`` as a buffer (materialised now if lazy; literals become rank-0 arrays)."""
        if isinstance(x, Literal):
            buf = ir.Buffer(self.names("lit"), (), _dt(x))
            self.stmts += [ir.Alloc(buf), ir.Store(buf, (), ir.Const(x.val[()], _dt(x)))]
            return buf
        got = self.arrays.get(x)
        if isinstance(got, ir.Const):
            buf = ir.Buffer(self.names("lit"), (), got.dtype)
            self.stmts += [ir.Alloc(buf), ir.Store(buf, (), got)]
            return buf
        if got is None:
            self.materialise(x)
            got = self.arrays[x]
        return got

    # -- emitting ------------------------------------------------------------------------
    def materialise(self, *values):
        """One loop nest storing ``values`` (all of one shape): shared lazy values are
        computed once per element."""
        bufs = [self.buffer(v) for v in values]
        shape = bufs[0].shape
        vars_ = self.loop_vars(len(shape))
        idx = tuple(IxVar(n) for n in vars_)
        body = _Body(self)
        stores = [ir.Store(b, idx, body.value(v, idx)) for v, b in zip(values, bufs)]
        self.stmts += [ir.Alloc(b) for b in bufs]
        self.stmts.append(ir.Nest(vars_, shape, body.stmts + stores,
                                  self.parallel_hint(shape)))
        for v, b in zip(values, bufs):
            self.arrays[v] = b

    def reduction(self, *eqns):
        """One :class:`~.ir.Reduce` folding the reductions ``eqns`` (operands of one
        shape, the same axes): one body computes every operand at each index, so
        values they share are loaded and computed once."""
        x = eqns[0].invars[0]
        if isinstance(x, Literal):
            raise Unsupported([f"{eqns[0].primitive.name} of a literal"])
        outs = [self.buffer(eqn.outvars[0]) for eqn in eqns]
        shape = tuple(x.aval.shape)
        vars_ = self.loop_vars(len(shape))
        idx = tuple(IxVar(n) for n in vars_)
        body = _Body(self)
        accs = []
        for eqn, out in zip(eqns, outs):
            xe, v = eqn.invars[0], eqn.outvars[0]
            monoid = fusion_kind(eqn.primitive).rule(xe.aval, v.aval, **eqn.params)
            self.stmts.append(ir.Alloc(out))
            accs.append(ir.Acc(out, monoid, body.value(xe, idx)))
            self.arrays[v] = out
        axes = tuple(eqns[0].params["axes"])
        kept = [shape[d] for d in range(len(shape)) if d not in axes]
        first = accs[0]
        self.stmts.append(ir.Reduce(first.out, vars_, shape, axes, first.monoid, body.stmts,
                                    first.value, bool(kept) and self.parallel_hint(shape),
                                    siblings=tuple(accs[1:])))

    def opaque(self, eqn):
        ins = [self.operand(x) for x in eqn.invars]
        prim = eqn.primitive
        if prim.name == "reshape" and eqn.params.get("dimensions") is None:
            # A row-major reshape of a contiguous array is a view.
            (src,) = ins
            out = self.buffer(eqn.outvars[0])
            self.stmts.append(ir.View(out, src, ()))
            self.view_of[out] = self.view_of.get(src, src)
            self.arrays[eqn.outvars[0]] = out
            return
        outs = [self.buffer(v) for v in eqn.outvars]
        self.stmts.append(ir.Opaque(prim, outs, ins, [x.aval for x in eqn.invars],
                                    [v.aval for v in eqn.outvars], dict(eqn.params)))
        for v, b in zip(eqn.outvars, outs):
            self.arrays[v] = b

    def scatter(self, eqn):
        """A scatter as loops: the result starts as a copy of the operand (one parallel
        nest), then a loop over the update positions reads each position's indices and,
        when all are in range, folds that update's window into the result, in order (so
        a plain scatter keeps the last of duplicate updates). Operand, indices and
        updates are read through their lazy expressions: a gather feeding the updates
        is not stored first.

        A large scatter runs as :data:`SCATTER_PARTS` parallel parts, each walking every
        update position but folding only those whose first index falls in its share of
        the result's rows: every element still receives its updates in order, from one
        thread, so results do not depend on the number of threads."""
        x, upd, *idx = eqn.invars
        axes = tuple(eqn.params["axes"])
        out = self.buffer(eqn.outvars[0])
        self.stmts.append(ir.Alloc(out))
        shape = out.shape
        vars_ = self.loop_vars(len(shape))
        own = tuple(IxVar(n) for n in vars_)
        init = _Body(self)
        first = init.value(x, own)
        self.stmts.append(ir.Nest(vars_, shape, init.stmts + [ir.Store(out, own, first)],
                                  self.parallel_hint(shape)))
        rows = int(shape[axes[0]])
        nb = idx[0].aval.ndim
        window = size_of(tuple(upd.aval.shape[nb:]))
        parts = SCATTER_PARTS if rows >= SCATTER_PARTS and window >= SCATTER_PART_WINDOW \
            and self.parallel_hint(tuple(upd.aval.shape)) else 1
        pvar = self.names("i")
        part = _Body(self)  # the part's bounds, once per part
        if parts > 1:
            bounds = self._part_bounds(part, pvar, parts, rows)
        bvars = self.loop_vars(nb)
        at = tuple(IxVar(n) for n in bvars)
        outer = _Body(self)
        conds, pos = [], {}
        for k, d in enumerate(axes):
            t = outer.let(ir.Op(all_primitives()["convert_element_type"],
                                (outer.value(idx[k], at),), (_dt(idx[k]),), _I64,
                                {"new_dtype": _I64, "weak_type": False}), _I64)
            lo, hi = ir.Const(0, _I64), ir.Const(int(shape[d]), _I64)
            if k == 0 and parts > 1:
                lo, hi = bounds
            conds += [outer.op("ge", t, lo, _BOOL), outer.op("lt", t, hi, _BOOL)]
            pos[d] = IxClamp(t, 0, max(int(shape[d]) - 1, 0))
        ok = conds[0]
        for c in conds[1:]:
            ok = outer.op("and", ok, c, _BOOL)
        rshape = tuple(upd.aval.shape[nb:])
        rvars = self.loop_vars(len(rshape))
        rest = iter(IxVar(n) for n in rvars)
        dst = tuple(pos[d] if d in pos else next(rest) for d in range(len(shape)))
        inner = _Body(self)
        new = inner.value(upd, at + tuple(IxVar(n) for n in rvars))
        combine = SCATTER_COMBINE[eqn.primitive.name]
        if combine is not None:
            new = inner.op(combine, inner.let(ir.Load(out, dst), out.dtype), new, out.dtype)
        window = inner.stmts + [ir.Store(out, dst, new)]
        if rshape:
            window = [ir.Nest(rvars, rshape, window, False)]
        outer.stmts.append(ir.Switch(ok, [[], window]))
        loop = ir.Nest(bvars, tuple(idx[0].aval.shape), outer.stmts, False)
        self.stmts.append(loop if parts == 1 else
                          ir.Nest((pvar,), (parts,), part.stmts + [loop], True))
        self.arrays[eqn.outvars[0]] = out

    @staticmethod
    def _part_bounds(body, pvar, parts, rows):
        """``(lo, hi)``: the rows ``[p * rows // parts, (p + 1) * rows // parts)`` of part
        ``p`` (the loop variable ``pvar``), as int64 values."""
        p = body.let(ir.IndexValue(IxVar(pvar), _I64), _I64)
        nxt = body.op("add", p, ir.Const(1, _I64), _I64)
        n, k = ir.Const(rows, _I64), ir.Const(parts, _I64)
        return (body.op("div", body.op("mul", p, n, _I64), k, _I64),
                body.op("div", body.op("mul", nxt, n, _I64), k, _I64))

    # -- control flow ------------------------------------------------------------------
    def sub(self, closed, inputs, copy_inputs=True):
        """Statements and result values of ``closed`` applied to ``inputs``; constants
        the body closed over become :class:`~.ir.ConstArray` buffers (renderers decide
        how large a constant they accept)."""
        closed = inline_calls(closed)  # calls nested in a loop body, too
        consts = []
        for cv, c in zip(closed.jaxpr.constvars, closed.consts):
            buf = ir.Buffer(self.names("k"), tuple(cv.aval.shape), _dt(cv))
            consts.append(buf)
            self.stmts.append(ir.ConstArray(buf, np.asarray(c, dtype=buf.dtype)))
        low = _Lowerer(self.names, self.options, closed.jaxpr.eqns, closed.jaxpr.outvars,
                       consts + list(inputs), list(closed.jaxpr.constvars)
                       + list(closed.jaxpr.invars), self.loop_scatters)
        outs = low.run(copy_inputs=copy_inputs)
        return low.stmts, outs

    def assign(self, dst, value):
        """Statements writing ``value`` (a buffer or constant) into buffer ``dst``."""
        if isinstance(value, ir.Const):
            if dst.ndim:
                raise Unsupported(["a constant array result of a branch"])
            return [ir.Store(dst, (), value)]
        if not dst.ndim:
            s = ir.Sym(self.names("s"), value.dtype)
            return [ir.Let(s, ir.Load(value, ())), ir.Store(dst, (), s)]
        return [ir.Copy(dst, value)]

    def cond(self, eqn):
        index = self.operand(eqn.invars[0])
        ops = [self.operand(x) for x in eqn.invars[1:]]
        outs = [self.buffer(v, "c") for v in eqn.outvars]
        idx_sym = ir.Sym(self.names("ci"), index.dtype)
        self.stmts += [ir.Alloc(b) for b in outs]
        self.stmts.append(ir.Let(idx_sym, ir.Load(index, ())))
        branches = []
        for br in eqn.params["branches"]:
            stmts, res = self.sub(br, ops, copy_inputs=False)
            for dst, r in zip(outs, res):
                stmts += self.assign(dst, r)
            branches.append(stmts)
        self.stmts.append(ir.Switch(idx_sym, branches))
        for v, b in zip(eqn.outvars, outs):
            self.arrays[v] = b

    def carries(self, outvars, init):
        bufs = [self.buffer(v, "carry") for v in outvars]
        for b, i in zip(bufs, init):
            self.stmts.append(ir.Alloc(b))
            self.stmts += self.assign(b, i)
        return bufs

    def while_loop(self, eqn):
        p = eqn.params
        ins = [self.operand(x) for x in eqn.invars]
        cc = ins[:p["cond_nconsts"]]
        bc = ins[p["cond_nconsts"]:p["cond_nconsts"] + p["body_nconsts"]]
        carry = self.carries(eqn.outvars, ins[p["cond_nconsts"] + p["body_nconsts"]:])
        cond_stmts, (pred,) = self.sub(p["cond_jaxpr"], cc + carry)
        if isinstance(pred, ir.Const):
            pred_val = pred
        else:
            pred_val = ir.Sym(self.names("wp"), pred.dtype)
            cond_stmts.append(ir.Let(pred_val, ir.Load(pred, ())))
        body, new = self.sub(p["body_jaxpr"], bc + carry)
        for dst, r in zip(carry, new):
            body += self.assign(dst, r)
        self.stmts.append(ir.While(cond_stmts, pred_val, body))
        for v, b in zip(eqn.outvars, carry):
            self.arrays[v] = b

    def scan(self, eqn):
        p = eqn.params
        nc, nk = p["num_consts"], p["num_carry"]
        ins = [self.operand(x) for x in eqn.invars]
        consts, xs = ins[:nc], ins[nc + nk:]
        carry = self.carries(eqn.outvars[:nk], ins[nc:nc + nk])
        ys = [self.buffer(v, "ys") for v in eqn.outvars[nk:]]
        self.stmts += [ir.Alloc(b) for b in ys]
        it = self.names("it")
        at = (IxVar(it),)
        body = []
        slices = []
        for x in xs:
            sl = ir.Buffer(self.names("x"), x.shape[1:], x.dtype)
            if sl.ndim:
                body.append(ir.View(sl, x, at))
            else:
                s = ir.Sym(self.names("s"), x.dtype)
                body += [ir.Alloc(sl), ir.Let(s, ir.Load(x, at)), ir.Store(sl, (), s)]
            slices.append(sl)
        stmts, new = self.sub(p["jaxpr"], consts + carry + slices)
        body += stmts
        for dst, r in zip(carry, new[:nk]):
            body += self.assign(dst, r)
        for y, r in zip(ys, new[nk:]):
            if isinstance(r, ir.Const):
                body.append(ir.Store(y, at, r))
            elif r.ndim:
                body.append(ir.Copy(y, r, dst_at=at))
            else:
                s = ir.Sym(self.names("s"), r.dtype)
                body += [ir.Let(s, ir.Load(r, ())), ir.Store(y, at, s)]
        length = p["length"]
        self.stmts.append(ir.ForRange(it, length if type(length) is Dim else int(length),
                                      bool(p["reverse"]), body))
        for v, b in zip(eqn.outvars, carry + ys):
            self.arrays[v] = b

    # -- the whole (sub-)jaxpr -----------------------------------------------------------
    def run(self, copy_inputs=True):
        plan = self.plan
        for n, eqn in enumerate(plan.eqns):
            if not plan.live[n]:
                continue
            kind = plan.kinds[n]
            if kind == "reduction":
                group = plan.reduce_groups.get(n)
                if group is not None:
                    self.reduction(*[plan.eqns[k] for k in group])
                elif n not in plan.reduce_root:
                    self.reduction(eqn)
            elif kind == "opaque":
                self.opaque(eqn)
            elif kind == "scatter":
                self.scatter(eqn)
            elif kind == "control":
                name = eqn.primitive.name
                if name == "cond":
                    self.cond(eqn)
                elif name == "while":
                    self.while_loop(eqn)
                else:
                    self.scan(eqn)
            elif eqn.outvars[0] in plan.materialised and plan.root_of[eqn.outvars[0]] == n:
                self.materialise(*[v for v in plan.groups[n] if v not in self.arrays])
        return self.results(copy_inputs)

    def results(self, copy_inputs):
        """The outputs as values; with ``copy_inputs`` never an input buffer (or a view
        of one): callers may overwrite results, never the caller's arguments."""
        outs = []
        for x in self.outvars:
            if isinstance(x, Literal):
                outs.append(ir.Const(x.val[()], _dt(x)))
                continue
            buf = self.arrays.get(x)
            if buf is None:
                self.materialise(x)
                buf = self.arrays[x]
            if isinstance(buf, ir.Const):
                outs.append(buf)
                continue
            base = self.view_of.get(buf, buf)
            if copy_inputs and id(base) in self.inputs:
                fresh = ir.Buffer(self.names("copy"), buf.shape, buf.dtype)
                self.stmts.append(ir.Alloc(fresh))
                self.stmts += self.assign(fresh, buf)
                buf = fresh
            outs.append(buf)
        return outs


def lower_program(closed, options, name="kernel", loop_scatters=False) -> ir.Program:
    """The loop IR of ``closed`` (calls inlined, dead code dropped). Raises
    :class:`Unsupported` for what no backend can lower from this IR. With
    ``loop_scatters`` scatters become serial loops reading fused operands (for a
    renderer that runs a nest marked serial as one loop), else opaque statements."""
    inlined = inline_calls(closed)
    if len(inlined.jaxpr.constvars) != len(closed.jaxpr.constvars):
        raise Unsupported(["a nested call with constants"])
    jaxpr = dce(inlined.jaxpr)
    for eqn in jaxpr.eqns:
        kind = fusion_kind(eqn.primitive)
        if isinstance(kind, Reduction) and len(eqn.outvars) != 1:
            raise Unsupported([eqn.primitive.name])
    names = _Names()
    namer = pretty.var_namer()
    source = pretty.render(pretty._pp_jaxpr_doc(closed.jaxpr, namer, 88), 88)
    params = []
    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        params.append(ir.Buffer(_param_name(namer(v)), tuple(v.aval.shape), _dt(v)))
    low = _Lowerer(names, options, jaxpr.eqns, jaxpr.outvars, params,
                   list(jaxpr.constvars) + list(jaxpr.invars), loop_scatters)
    outs = low.run(copy_inputs=True)
    final = []
    for o in outs:
        if isinstance(o, ir.Const):
            buf = ir.Buffer(names("out"), (), o.dtype)
            low.stmts += [ir.Alloc(buf), ir.Store(buf, (), o)]
            o = buf
        final.append(o)
    return ir.verify(ir.Program(name, params, low.stmts, final, source))


def _param_name(name: str) -> str:
    # Printed jaxpr names (a, b, … ba) can collide with Python keywords (``as``, ``if``,
    # ``in``, ``is``, ``or``): every generated name is checked by the renderers too, but
    # parameters keep the jaxpr's names so the comment reads along.
    return name + "_" if name in _RESERVED else name


_RESERVED = {"as", "if", "in", "is", "or", "and", "not", "def", "del", "for", "try",
             "np", "nb", "math", "prange", "range", "abs", "min", "max", "int", "len"}
