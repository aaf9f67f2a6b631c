"""From a jaxpr to the source of one Python function that Numba compiles.

Plan (all decided before any text is written):

1. nested ``jit`` equations are inlined, dead equations dropped;
2. every equation gets a *kind*: ``scalar`` (elementwise), ``index`` (index arithmetic:
   broadcast, transpose, slice ...), ``value`` (iota), ``reduce`` (accumulator loop) or
   ``array`` (whole-array statement: dot, general reshape, concatenate ...);
3. fusion: the result of a scalar/index/value equation stays *lazy* (an expression
   recomputed inside its consumers' loops) unless it must exist as an array: it is an
   output, an ``array`` equation reads it, a consumer broadcasts it to a larger size, or
   loops of more than one consumer need it and it is costly to recompute;
4. each array-valued result is emitted in equation order: lazy values become one loop
   nest that reads only materialised arrays and writes only this result; reductions
   become accumulator loops over their operand's (lazy) expression.

Loop bodies are straight-line scalar code, one local per (value, index) pair, so a value
used twice in one body is computed once. Sizes are literals. The outermost loop of a
nest larger than ``PARALLEL_MIN_SIZE`` elements is a ``prange`` when the backend may
compile a parallel kernel.
"""
from __future__ import annotations

import keyword

import numpy as np

from ...core import pretty
from ...core.jaxpr import Literal, Var
from .lower_arrays import array_rules
from .lower_elementwise import dtype_ctor, literal_expr, scalar_rules
from .lower_reductions import reduction_rules
from .lower_structural import dynamic_index_rules, index_rules, value_rules
from . import lower_control_flow  # noqa: F401,E402 - registers cond/while/scan/debug_print

__all__ = ["generate", "Unsupported", "PARALLEL_MIN_SIZE", "lowerable_primitives"]

# Below this many elements a loop nest runs serially: measured on 2 cores (see
# README "Performance"), threads only pay off for ~1e5 float32 elements and up.
PARALLEL_MIN_SIZE = 1 << 17

# Dtypes Numba computes with exactly like NumPy. float16/bfloat16 and complex fall back.
_SUPPORTED = {np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                    np.uint8, np.uint16, np.uint32, np.uint64,
                                    np.float32, np.float64)}
_COSTLY = {"exp", "exp2", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos",
           "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
           "atanh", "atan2", "pow", "logistic", "div", "rem", "nextafter"}
_RESERVED = set(keyword.kwlist) | {"np", "math", "numba", "prange", "range", "abs", "min",
                                   "max", "kernel", "True",
                                   "False", "None"}


class Unsupported(Exception):
    """The jaxpr holds something this backend does not lower (names the primitives)."""

    def __init__(self, names):
        self.names = sorted(set(names))
        super().__init__(", ".join(self.names))


def lowerable_primitives() -> set:
    return (set(scalar_rules) | set(index_rules) | set(value_rules) | set(reduction_rules)
            | set(array_rules))


# Call-like primitives whose body is inlined (the forward computation of a custom
# derivative is its ``call_jaxpr``), by the name of the parameter holding the body.
_CALLS = {"jit": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr"}


class _Op:
    __slots__ = ("prim", "invars", "outvars", "params", "kind")

    def __init__(self, prim, invars, outvars, params):
        self.prim, self.invars, self.outvars, self.params = prim, invars, outvars, params
        self.kind = None


def _inline(jaxpr, subst, ops):
    """Append ``jaxpr``'s equations to ``ops`` with nested jit calls inlined."""
    def read(x):
        return subst.get(x, x) if isinstance(x, Var) else x

    for eqn in jaxpr.eqns:
        ins = [read(x) for x in eqn.invars]
        inner = _CALLS.get(eqn.primitive.name)
        inner = eqn.params.get(inner) if inner else None
        if inner is not None:
            if inner.consts:
                raise Unsupported(["jit (with constants)"])
            inner_sub = dict(zip(inner.jaxpr.invars, ins))
            outs = _inline(inner.jaxpr, inner_sub, ops)
            for v, r in zip(eqn.outvars, outs):
                subst[v] = r
        else:
            ops.append(_Op(eqn.primitive, ins, list(eqn.outvars), dict(eqn.params)))
    return [read(v) for v in jaxpr.outvars]


def _size(aval) -> int:
    return int(np.prod(aval.shape, dtype=np.int64)) if aval.shape else 1


def _check_avals(ops, jaxpr):
    bad = []
    avals = [v.aval for v in jaxpr.constvars + jaxpr.invars]
    for op in ops:
        avals += [v.aval for v in op.outvars]
        avals += [x.aval for x in op.invars]
    for a in avals:
        if not all(isinstance(d, (int, np.integer)) for d in a.shape):
            bad.append(f"symbolic shape {a.str_short()}")
        elif np.dtype(a.dtype) not in _SUPPORTED:
            bad.append(f"dtype {np.dtype(a.dtype).name}")
    if bad:
        raise Unsupported(bad)


class _Plan:
    """Kinds, liveness and the materialisation decision for a flat list of ops."""

    def __init__(self, ops, outvars):
        self.ops = ops
        missing = []
        for op in ops:
            p = op.prim
            if p in scalar_rules:
                op.kind = "scalar"
            elif p in value_rules:
                op.kind = "value"
            elif p in index_rules and index_rules[p](
                    [f"i{d}" for d in range(op.outvars[0].aval.ndim)], op.invars[0].aval,
                    op.outvars[0].aval, **op.params) is not None:
                op.kind = "index"
            elif p in reduction_rules:
                op.kind = "reduce"
            elif p in array_rules:
                op.kind = "array"
            else:
                missing.append(p.name)
        if missing:
            raise Unsupported(missing)
        self.outset = {v for v in outvars if isinstance(v, Var)}
        self.producer = {}
        self.consumers = {}
        for n, op in enumerate(ops):
            for v in op.outvars:
                self.producer[v] = n
            for x in op.invars:
                if isinstance(x, Var):
                    self.consumers.setdefault(x, []).append(n)
        self.live = self._liveness()
        self.materialised = self._decide()

    def _liveness(self):
        live = [False] * len(self.ops)
        needed = set(self.outset)
        for n in range(len(self.ops) - 1, -1, -1):
            op = self.ops[n]
            if op.prim.effectful or any(v in needed for v in op.outvars):
                live[n] = True
                needed.update(x for x in op.invars if isinstance(x, Var))
        return live

    def _decide(self):
        fusible = ("scalar", "index", "value")
        cost = {}
        for op in self.ops:
            if op.kind in fusible:
                own = 8 if op.prim.name in _COSTLY else (1 if op.kind == "scalar" else 0)
                v = op.outvars[0]
                if op.kind == "index" and _size(v.aval) > _size(op.invars[0].aval):
                    # A broadcast reads an array: a costly operand is materialised.
                    cost[v] = 0
                else:
                    cost[v] = own + sum(cost.get(x, 0) for x in op.invars)
        mat, roots = set(), {}
        for n in range(len(self.ops) - 1, -1, -1):
            op = self.ops[n]
            if not self.live[n] or op.kind not in fusible:
                continue
            v = op.outvars[0]
            force = v in self.outset
            rs = set()
            for c in self.consumers.get(v, []):
                if not self.live[c]:
                    continue
                cop = self.ops[c]
                if cop.kind == "array":
                    force = True
                elif cop.kind == "reduce" or cop.outvars[0] in mat:
                    rs.add(c)
                else:
                    rs |= roots[cop.outvars[0]]
                if cop.kind == "index" and _size(cop.outvars[0].aval) > _size(v.aval) \
                        and cost[v] > 0:
                    force = True  # never recompute arithmetic once per broadcast copy
            if len(rs) > 1 and (cost[v] >= 8 or op.prim.name in _COSTLY):
                force = True
            if force:
                mat.add(v)
                roots[v] = {n}
            else:
                roots[v] = rs
        self.roots = roots
        return mat


class _Body:
    """Straight-line scalar code of one loop body."""

    def __init__(self, gen):
        self.gen = gen
        self.lines = []  # (text, primitive name)
        self.memo = {}
        self.reads = {}  # materialised var -> set of index tuples read

    def value(self, x, idx) -> str:
        """A scalar expression for ``x`` at indices ``idx`` (tuple of source strings)."""
        if isinstance(x, Literal):
            return literal_expr(x.val, x.aval.dtype)
        idx = tuple(idx) if x.aval.ndim else ()
        key = (x, idx)
        got = self.memo.get(key)
        if got is not None:
            return got
        gen = self.gen
        if x in gen.arrays:
            expr = f"{gen.arrays[x]}[{', '.join(idx) if idx else '()'}]"
            self.reads.setdefault(x, set()).add(idx)
        else:
            op = gen.plan.ops[gen.plan.producer[x]]
            if op.kind == "scalar":
                args = [self.value(a, idx) for a in op.invars]
                rule = scalar_rules[op.prim]
                inner = rule(args, [a.aval for a in op.invars], x.aval, **op.params)
                expr = f"{dtype_ctor(x.aval.dtype)}({inner})"
            elif op.kind == "value":
                expr = value_rules[op.prim](list(idx), x.aval, **op.params)
            else:
                src = op.invars[0]
                if op.prim in dynamic_index_rules:
                    params = dict(op.params)
                    if op.prim.name == "gather":
                        params["index_ndim"] = op.invars[1].aval.ndim

                    def read(k, at, _op=op):
                        return self.value(_op.invars[k + 1], at)
                    sub = dynamic_index_rules[op.prim](list(idx), read, src.aval, x.aval,
                                                       **params)
                else:
                    sub = index_rules[op.prim](list(idx), src.aval, x.aval, **op.params)
                expr = self.value(src, sub)
                self.memo[key] = expr
                return expr
        name = gen.fresh("s")
        prim = gen.plan.ops[gen.plan.producer[x]].prim.name if x not in gen.arrays else None
        self.lines.append((f"{name} = {expr}", prim))
        self.memo[key] = name
        return name


class _Gen:
    """Source for one jaxpr (:mod:`.lower_control_flow` builds one per sub-jaxpr)."""

    def __init__(self, closed, options, fn_name):
        self.closed = closed
        self.options = options
        self.fn_name = fn_name
        jaxpr = closed.jaxpr
        namer = pretty.var_namer()
        self.root = self
        self.base = 1  # indentation of the function body
        # Name variables exactly as the printed jaxpr does, so the comment reads along.
        self.jaxpr_text = pretty.render(pretty._pp_jaxpr_doc(jaxpr, namer, 88), 88)
        self.counter = 0
        self.lines = []
        self.line_prims = []
        self.prefix = ""
        self.namer = namer
        self.current = None
        self.uses_parallel = False
        self.ops = []
        subst = {}
        self.outs = _inline(jaxpr, subst, self.ops)
        _check_avals(self.ops, jaxpr)
        self.calls_blas = _calls_blas(self.ops)
        self.plan = _Plan(self.ops, self.outs)
        self.arrays = {}
        self.view_of = {}
        self.owned = set()  # arrays this kernel allocated (may be overwritten once dead)
        self.params = []
        self.param_vars = set(jaxpr.constvars) | set(jaxpr.invars)
        self.param_order = list(jaxpr.constvars) + list(jaxpr.invars)
        for v in self.param_order:
            name = self.var_name(v)
            self.params.append(name)
            self.arrays[v] = name

    def var_name(self, v) -> str:
        base = self.prefix + self.namer(v)
        return base + "_" if base in _RESERVED else base

    def fresh(self, prefix) -> str:
        root = self.root
        root.counter += 1
        return f"{prefix}{root.counter}"

    def emit(self, line, depth=1, prim=None):
        self.lines.append("    " * (depth - 1 + self.base) + line)
        self.line_prims.append(prim or self.current)

    def emit_body(self, body, depth):
        for line, prim in body.lines:
            self.emit(line, depth, prim)

    # -- loop nests ------------------------------------------------------------------
    def _loops(self, shape, depth, parallel_outer):
        idx = []
        for d, n in enumerate(shape):
            rng = "prange" if (d == 0 and parallel_outer) else "range"
            self.emit(f"for i{d} in {rng}({n}):", depth)
            idx.append(f"i{d}")
            depth += 1
        return idx, depth

    def _parallel(self, size) -> bool:
        par = self.options.parallel
        # A kernel that calls BLAS keeps its loops serial unless parallel is forced:
        # OpenBLAS's threads are still spinning when a prange epilogue starts, and the
        # two thread pools fighting over the cores cost more than the loop saves
        # (dot 100x1000 @ 1000x2000 + relu: ~2x slower with a prange relu, measured).
        auto = size >= PARALLEL_MIN_SIZE and not self.root.calls_blas
        ok = auto if par is None else bool(par)
        if ok:
            self.root.uses_parallel = True
        return ok

    def materialise(self, v):
        """Write lazy value ``v`` into a new array with one loop nest."""
        aval = v.aval
        name = self.var_name(v)
        shape = aval.shape
        par = len(shape) > 0 and shape[0] > 1 and self._parallel(_size(aval))
        start = len(self.lines)
        self.emit(f"{name} = np.empty({_shape(shape)}, {dtype_ctor(aval.dtype)})")
        idx, depth = self._loops(shape, 1, par)
        body = _Body(self)
        val = body.value(v, idx)
        self.emit_body(body, depth)
        self.emit(f"{name}[{', '.join(idx) if idx else '()'}] = {val}", depth)
        reuse = self._reusable(v, body, tuple(idx))
        if reuse is not None:
            # Write in place over a dead temporary of the same type (a dot's result
            # under bias + relu): saves a full-size allocation and a cache-cold pass.
            self.lines[start] = "    " * self.base + f"{name} = {self.arrays[reuse]}"
            self.owned.discard(reuse)
        self.arrays[v] = name
        self.owned.add(v)

    def _reusable(self, v, body, idx):
        plan = self.plan
        root = plan.producer[v]
        for t, seen in body.reads.items():
            if t not in self.owned or seen != {idx} or t in plan.outset:
                continue
            if t.aval.shape != v.aval.shape or t.aval.dtype != v.aval.dtype:
                continue
            if t in self.view_of.values():
                continue
            ok = True
            for c in plan.consumers.get(t, []):
                if not plan.live[c]:
                    continue
                cop = plan.ops[c]
                if cop.kind not in ("scalar", "index") or plan.roots.get(cop.outvars[0]) \
                        != {root}:
                    ok = False
                    break
            if ok:
                return t
        return None

    def copy(self, x) -> str:
        """A fresh array equal to ``x`` (a loop: far quicker to compile than np.copy)."""
        name = self.fresh("copy")
        self.emit(f"{name} = np.empty({_shape(x.aval.shape)}, {dtype_ctor(x.aval.dtype)})")
        idx, depth = self._loops(x.aval.shape, 1, False)
        i = ", ".join(idx) or "()"
        self.emit(f"{name}[{i}] = {self.arrays[x]}[{i}]", depth)
        return name

    def array_op(self, op):
        ins = self._operands(op)
        outs = [self.var_name(v) for v in op.outvars]
        lines = array_rules[op.prim](self, outs, ins, [x.aval for x in op.invars],
                                     [v.aval for v in op.outvars], **op.params)
        for line in lines:
            self.emit(line)
        for v, name in zip(op.outvars, outs):
            self.arrays[v] = name
        if op.prim.name == "reshape" and isinstance(op.invars[0], Var):
            self.view_of[op.outvars[0]] = op.invars[0]  # np.reshape returns a view
        else:
            self.owned.update(op.outvars)

    def reduce_op(self, op):
        x = op.invars[0]
        v = op.outvars[0]
        axes = tuple(op.params["axes"])
        spec = reduction_rules[op.prim](x.aval, v.aval, **op.params)
        shape = x.aval.shape
        kept = [d for d in range(len(shape)) if d not in axes]
        name = self.var_name(v)
        out_ctor = dtype_ctor(v.aval.dtype)
        acc_ctor = dtype_ctor(spec.acc_dtype)
        # Position along the reduced axis, for argmax/argmin (one axis).
        pos = f"i{axes[0]}" if axes else "0"
        suffix = all(d < a for d in kept for a in axes)
        self.emit(f"{name} = np.empty({_shape(v.aval.shape)}, {out_ctor})")
        if suffix:
            # Reduced axes innermost: a scalar accumulator per output element.
            kshape = [shape[d] for d in kept]
            par = bool(kshape) and kshape[0] > 1 and self._parallel(_size(x.aval))
            idx, depth = self._loops(kshape, 1, par)
            acc = self.fresh("acc")
            self.emit(f"{acc} = {spec.init}", depth)
            if spec.with_index:
                self.emit(f"{acc}_i = -1", depth)
            rdepth = depth
            for a in axes:
                self.emit(f"for i{a} in range({shape[a]}):", rdepth)
                rdepth += 1
            body = _Body(self)
            full = [f"i{d}" for d in range(len(shape))]
            val = body.value(x, full)
            self.emit_body(body, rdepth)
            for line in spec.update(acc, val, pos):
                self.emit(line, rdepth)
            self.emit(f"{name}[{', '.join(idx) if idx else '()'}] = {spec.final(acc)}", depth)
        else:
            # Reduced axes outside kept ones: accumulators indexed by the kept axes.
            acc = self.fresh("acc")
            kshape = _shape(v.aval.shape)
            self.emit(f"{acc} = np.empty({kshape}, {acc_ctor})")
            if spec.with_index:
                self.emit(f"{acc}_i = np.empty({kshape}, np.int64)")
            fidx, fdepth = self._loops(v.aval.shape, 1, False)
            f = ", ".join(fidx) or "()"
            self.emit(f"{acc}[{f}] = {spec.init}", fdepth)
            if spec.with_index:
                self.emit(f"{acc}_i[{f}] = -1", fdepth)
            idx, depth = self._loops(shape, 1, False)
            body = _Body(self)
            val = body.value(x, idx)
            self.emit_body(body, depth)
            k = ", ".join(f"i{d}" for d in kept) or "()"
            sa = self.fresh("a")
            self.emit(f"{sa} = {acc}[{k}]", depth)
            if spec.with_index:
                self.emit(f"{sa}_i = {acc}_i[{k}]", depth)
            for line in spec.update(sa, val, pos):
                self.emit(line, depth)
            self.emit(f"{acc}[{k}] = {sa}", depth)
            if spec.with_index:
                self.emit(f"{acc}_i[{k}] = {sa}_i", depth)
            oidx, depth = self._loops(v.aval.shape, 1, False)
            o = ", ".join(oidx) or "()"
            self.emit(f"{sa} = {acc}[{o}]", depth)
            if spec.with_index:
                self.emit(f"{sa}_i = {acc}_i[{o}]", depth)
            self.emit(f"{name}[{o}] = {spec.final(sa)}", depth)
        self.arrays[v] = name

    # -- the whole function ----------------------------------------------------------
    def emit_ops(self):
        plan = self.plan
        for n, op in enumerate(self.ops):
            if not plan.live[n]:
                continue
            self.current = op.prim.name
            if op.kind == "array":
                self.array_op(op)
            elif op.kind == "reduce":
                if isinstance(op.invars[0], Literal):
                    raise Unsupported([f"{op.prim.name} of a literal"])
                self.reduce_op(op)
            elif op.outvars[0] in plan.materialised:
                self.materialise(op.outvars[0])
        self.current = None

    def results(self) -> list:
        """Names of fresh arrays holding the outputs (inputs and literals are copied)."""
        rets = []
        for x in self.outs:
            if isinstance(x, Literal):
                tmp = self.fresh("out")
                self.emit(f"{tmp} = np.empty((), {dtype_ctor(x.aval.dtype)})")
                self.emit(f"{tmp}[()] = {literal_expr(x.val, x.aval.dtype)}")
                rets.append(tmp)
            else:
                base = x
                while base in self.view_of:
                    base = self.view_of[base]
                # Never hand an input buffer back: the caller may still write to it.
                if base in self.param_vars:
                    rets.append(self.copy(x))
                else:
                    rets.append(self.arrays[x])
        return rets

    def _operands(self, op):
        ins = []
        for x in op.invars:
            if isinstance(x, Literal):
                tmp = self.fresh("lit")
                self.emit(f"{tmp} = np.empty((), {dtype_ctor(x.aval.dtype)})")
                self.emit(f"{tmp}[()] = {literal_expr(x.val, x.aval.dtype)}")
                ins.append(tmp)
            else:
                if x not in self.arrays:
                    self.materialise(x)
                ins.append(self.arrays[x])
        return ins

    # -- the whole function ----------------------------------------------------------
    def build(self) -> str:
        # Sizes are literals below: a buffer of another shape must never get in.
        for v, name in zip(self.param_order, self.params):
            if v.aval.ndim:
                cond = " or ".join(f"{name}.shape[{d}] != {n}"
                                   for d, n in enumerate(v.aval.shape))
                self.emit(f"if {cond}:")
                self.emit(f"raise ValueError('argument {name} must have shape "
                          f"{tuple(v.aval.shape)}')", 2)
        self.emit_ops()
        rets = self.results()
        self.emit(f"return ({''.join(r + ', ' for r in rets)})")
        head = [f"# {line}" for line in self.jaxpr_text.splitlines()]
        head.append(f"def {self.fn_name}({', '.join(self.params)}):")
        self.line_prims[:0] = [None] * len(head)
        return "\n".join(head + self.lines) + "\n"


def _calls_blas(ops) -> bool:
    """Whether ``ops`` hold a float32/float64 ``dot_general`` (lowered to a BLAS call)."""
    return any(op.prim.name == "dot_general"
               and np.dtype(op.outvars[0].aval.dtype) in (np.float32, np.float64)
               for op in ops)


def _shape(shape) -> str:
    return "(" + "".join(f"{int(d)}, " for d in shape) + ")"


def generate(closed, options, fn_name="kernel"):
    """``(source, uses_parallel, line_prims)`` for ``closed``: ``line_prims[n]`` names
    the primitive that emitted source line ``n + 1``. Raises :class:`Unsupported`."""
    gen = _Gen(closed, options, fn_name)
    src = gen.build()
    return src, gen.uses_parallel, gen.line_prims
