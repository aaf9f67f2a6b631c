"""The fusion planner: which values become arrays, and which loop nest computes what.

Input: a flat list of equations (calls already inlined). Every equation gets a kind from
the primitive's registered fusion kind (:mod:`absjit.core.fusion`):

``elementwise``  scalar arithmetic per element           fusible
``index``        data movement by index arithmetic       fusible
``value``        a value from the index alone (iota)     fusible
``reduction``    an accumulator loop over its operand    consumes a fusible operand
``opaque``       a whole-array op (dot, concatenate …)   reads materialised arrays
``control``      cond / while / scan                     reads materialised arrays
``scatter``      a scatter as loops (when asked for)     consumes fusible operands

The result of a fusible equation stays *lazy* — an expression recomputed inside each
loop that reads it — unless it must be an array (:attr:`Plan.materialised`, with the
reason): it is an output of the program, an opaque or control-flow op reads it, a
consumer broadcasts a computed value to a larger shape (never recompute arithmetic
once per copy), or several loop nests need a costly value. :attr:`Plan.nests` says in
which loop nests each lazy value is computed: a nest is named by the equation that
roots it (a materialised value, or a reduction).

A scatter (``x.at[i].add(v)``) is an opaque op unless the caller asks for scatter
loops (``loop_scatters``; the cpu backend does): then the operand, the indices and the
updates are read lazily, like a reduction's operand, so a gather or a product feeding
the updates is computed inside the scatter's (serial) loop instead of being stored
first. Updates whose expression is costly are still stored, by a parallel loop.

Sibling reductions — over operands of one shape, along the same axes, neither reading
the other (``x.sum(0)`` and ``(x * x).sum(0)``; ``max`` and ``argmax``) — share one
loop nest with an accumulator each (:attr:`Plan.reduce_groups`), so their inputs are
read once. The nest runs where the first of them stood; a later one joins only when
every array its operand reads already exists there.
"""
from __future__ import annotations

from ..core.fusion import (COSTLY, ControlFlow, Elementwise, IndexMap, Opaque, Reduction,
                           Value, fusion_kind)
from ..core.jaxpr import Literal, Var
from ..core.pretty import var_namer
from ..core.shapes import IxVar, is_static, size_of

__all__ = ["Plan", "plan", "FUSIBLE", "MAX_FUSED_OPS", "SCATTER_COMBINE"]

# The scatters that can run as loops, with the primitive combining an old element and
# an update (None: the update replaces it).
SCATTER_COMBINE = {"scatter": None, "scatter-add": "add", "scatter-mul": "mul",
                   "scatter-min": "min", "scatter-max": "max"}

FUSIBLE = ("elementwise", "index", "value")
# A lazy expression longer than this many operations is stored: a loop body of
# thousands of statements compiles super-linearly slowly, and a stored value lets the
# rest of a long chain compile as separate (often equal) pieces.
MAX_FUSED_OPS = 128


def _kind_of(eqn) -> str:
    kind = fusion_kind(eqn.primitive)
    if isinstance(kind, Elementwise):
        return "elementwise"
    if isinstance(kind, Value):
        return "value"
    if isinstance(kind, Reduction):
        return "reduction"
    if isinstance(kind, ControlFlow):
        return "control"
    if isinstance(kind, IndexMap):
        src, out = eqn.invars[0].aval, eqn.outvars[0].aval
        probe = [IxVar(f"i{d}") for d in range(out.ndim)]
        got = kind.rule(probe, src, out, lambda k, idx: None, **eqn.params)
        return "index" if got is not None else "opaque"
    assert isinstance(kind, Opaque), kind
    return "opaque"


def _loop_scatter(eqn) -> bool:
    """A scatter the lowering can write as loops: static shapes, at least one index
    array, and an element type whose arithmetic loops spell directly (16-bit floats
    move as bit patterns and bools add as ``or``: those stay opaque)."""
    if eqn.primitive.name not in SCATTER_COMBINE or len(eqn.invars) < 3:
        return False
    avals = [x.aval for x in eqn.invars] + [v.aval for v in eqn.outvars]
    if not all(is_static(a.shape) for a in avals):
        return False
    dt = eqn.outvars[0].aval.dtype
    return dt.kind in "iuc" or (dt.kind == "f" and dt.itemsize >= 4)


def _cost(eqn, kind) -> int:
    k = fusion_kind(eqn.primitive)
    if kind == "elementwise":
        return k.cost
    return 0


class Plan:
    """The fusion decisions for one flat list of equations.

    Attributes
    ----------
    eqns : list of JaxprEqn
    outvars : list of Var or Literal
    kinds : list of str
        One of ``elementwise index value reduction opaque control`` per equation.
    live : list of bool
        Whether the equation's results are needed (effectful ones always are).
    materialised : dict
        ``Var -> reason``: the fusible values that are written to arrays, and why.
    nests : dict
        ``Var -> frozenset`` of equation indices: the loop nests (named by their root
        equation) whose loops compute this lazy value.
    groups : dict
        ``root index -> [Var]``: the stored values one loop nest computes (more than one
        for a multi-output nest), emitted at the root equation.
    root_of : dict
        ``Var -> root index`` for every stored fusible value.
    reduce_groups : dict
        ``first index -> [reduction indices]`` for reductions computed in one loop nest
        (more than one each), emitted at the first.
    reduce_root : dict
        ``reduction index -> first index`` of its group, for grouped reductions.
    """

    def __init__(self, eqns, outvars, loop_scatters=False):
        self.eqns = list(eqns)
        self.outvars = list(outvars)
        self.kinds = [_kind_of(e) for e in self.eqns]
        if loop_scatters:
            self.kinds = ["scatter" if k == "opaque" and _loop_scatter(e) else k
                          for e, k in zip(self.eqns, self.kinds)]
        self.outset = {v for v in self.outvars if isinstance(v, Var)}
        self.producer: dict = {}
        self.consumers: dict = {}
        for n, eqn in enumerate(self.eqns):
            for v in eqn.outvars:
                self.producer[v] = n
            for x in eqn.invars:
                if isinstance(x, Var):
                    self.consumers.setdefault(x, []).append(n)
        self.live = self._liveness()
        self.materialised, self.nests = self._decide()
        self.reduce_groups, self.reduce_root = self._sibling_reductions()

    def _liveness(self):
        live = [False] * len(self.eqns)
        needed = set(self.outset)
        for n in range(len(self.eqns) - 1, -1, -1):
            eqn = self.eqns[n]
            if eqn.primitive.effectful or any(v in needed for v in eqn.outvars):
                live[n] = True
                needed.update(x for x in eqn.invars if isinstance(x, Var))
        return live

    def _expressions(self):
        """``(deps, capped)``: for each fusible value the set of fusible equations its
        lazy expression holds (each counted once, however often the DAG reuses it), and
        the values stored because that set grew past ``MAX_FUSED_OPS``."""
        deps, capped = {}, set()
        for n, eqn in enumerate(self.eqns):
            if self.kinds[n] not in FUSIBLE:
                continue
            v = eqn.outvars[0]
            got = {n}
            if not (self.kinds[n] == "index"
                    and _grows(eqn.invars[0].aval.shape, v.aval.shape)):
                for x in eqn.invars:
                    if isinstance(x, Var) and x in deps and x not in capped:
                        got |= deps[x]
                        if len(got) > MAX_FUSED_OPS:
                            break
            deps[v] = got
            if len(got) > MAX_FUSED_OPS:
                capped.add(v)
                deps[v] = {n}
        return deps, capped

    def _decide(self):
        deps, capped = self._expressions()
        # A broadcast reads an array (costly operands of it are stored): it costs 0.
        own = [_cost(e, k) for e, k in zip(self.eqns, self.kinds)]
        cost = {v: sum(own[i] for i in d) for v, d in deps.items()}
        mat: dict = {}
        nests: dict = {}
        # Multi-output nests: a stored value joins the latest nest of its shape when
        # every equation reading it comes after that nest's root, so values they share
        # (the two words of a hash round, a value and its gradient) are computed once
        # per element instead of being stored for two nests.
        root_of: dict = {}
        latest: dict = {}  # shape -> root index of the latest multi-output nest
        self.groups: dict = {}  # root index -> stored values it computes, in order
        for n in range(len(self.eqns) - 1, -1, -1):
            eqn = self.eqns[n]
            kind = self.kinds[n]
            if not self.live[n] or kind not in FUSIBLE:
                continue
            v = eqn.outvars[0]
            reason = "output" if v in self.outset else None
            if reason is None and v in capped:
                reason = f"fused expression longer than {MAX_FUSED_OPS} operations"
            roots = set()
            for c in self.consumers.get(v, []):
                if not self.live[c]:
                    continue
                ckind = self.kinds[c]
                cv = self.eqns[c].outvars[0] if self.eqns[c].outvars else None
                if ckind in ("opaque", "control"):
                    reason = reason or f"operand of {self.eqns[c].primitive.name}"
                elif ckind == "scatter" and cost[v] >= COSTLY:
                    # the scatter's loop is serial: costly operands are computed by a
                    # parallel nest first
                    reason = reason or f"costly operand of {self.eqns[c].primitive.name}"
                elif ckind in ("reduction", "scatter"):
                    roots.add(c)
                elif cv in mat:
                    roots.add(root_of[cv])
                else:
                    roots |= nests[cv]
                if ckind == "index" and cost[v] > 0 and \
                        _grows(v.aval.shape, cv.aval.shape):
                    reason = reason or "broadcast of a computed value"
            if len(roots) > 1 and (cost[v] >= COSTLY or _cost(eqn, kind) >= COSTLY):
                reason = reason or f"costly and read by {len(roots)} loop nests"
            if reason is not None:
                mat[v] = reason
                shape = tuple(v.aval.shape)
                root = latest.get(shape)
                readers = [c for c in self.consumers.get(v, []) if self.live[c]]
                if root is None or not all(c > root for c in readers):
                    root = latest[shape] = n
                root_of[v] = root
                self.groups.setdefault(root, []).insert(0, v)
                nests[v] = frozenset({root})
            else:
                nests[v] = frozenset(roots)
        self.root_of = root_of
        return mat, nests

    def _ready_before(self, x, first) -> bool:
        """Whether every array the lazy expression of ``x`` reads exists before the
        nest of equation ``first`` runs (walks the expression once per equation)."""
        stack, seen = [x], set()
        while stack:
            v = stack.pop()
            if not isinstance(v, Var) or v in seen:
                continue
            seen.add(v)
            n = self.producer.get(v)
            if n is None:
                continue  # an argument or constant
            if self.kinds[n] not in FUSIBLE:
                if n >= first:
                    return False
            elif v in self.materialised:
                if self.root_of[v] >= first:
                    return False
            else:
                stack.extend(self.eqns[n].invars)
        return True

    def _sibling_reductions(self):
        groups: dict = {}
        root: dict = {}
        open_: dict = {}  # (operand shape, axes) -> first index of a group
        for n, eqn in enumerate(self.eqns):
            if not self.live[n] or self.kinds[n] != "reduction" \
                    or len(eqn.outvars) != 1 or isinstance(eqn.invars[0], Literal):
                continue
            key = (tuple(eqn.invars[0].aval.shape), tuple(eqn.params.get("axes", ())))
            first = open_.get(key)
            if first is not None and self._ready_before(eqn.invars[0], first):
                groups.setdefault(first, [first]).append(n)
                root[first] = first
                root[n] = first
            else:
                open_[key] = n
        return groups, root

    def __str__(self):
        name = var_namer()
        lines = []
        for n, eqn in enumerate(self.eqns):
            outs = " ".join(f"{name(v)}:{v.aval.str_short()}" for v in eqn.outvars)
            ins = " ".join(str(x) if isinstance(x, Literal) else name(x) for x in eqn.invars)
            kind = self.kinds[n]
            if not self.live[n]:
                note = "dead"
            elif kind in FUSIBLE:
                v = eqn.outvars[0]
                if v in self.materialised:
                    note = f"array ({self.materialised[v]})"
                else:
                    roots = sorted(self.nests.get(v, ()))
                    note = "lazy, in nest " + ", ".join(f"#{r}" for r in roots)
            elif kind == "reduction" and n in self.reduce_root:
                first = self.reduce_root[n]
                others = [f"#{k}" for k in self.reduce_groups[first] if k != n]
                note = "array (reduction loop shared with " + ", ".join(others) + ")"
            elif kind == "reduction":
                note = "array (reduction loop)"
            else:
                note = f"array ({kind} op)"
            lines.append(f"#{n:<3} {outs} = {eqn.primitive.name} {ins}".rstrip()
                         + f"    [{kind}] {note}")
        return "\n".join(lines)


def plan(eqns, outvars, loop_scatters=False) -> Plan:
    """The :class:`Plan` for ``eqns`` computing ``outvars``."""
    return Plan(eqns, outvars, loop_scatters)


def _grows(src_shape, dst_shape) -> bool:
    """An index map from ``src_shape`` to ``dst_shape`` reads elements more than once
    (a broadcast). With symbolic sizes: when the sizes are not the same expression."""
    a, b = size_of(src_shape), size_of(dst_shape)
    if is_static(src_shape) and is_static(dst_shape):
        return b > a
    return not a == b  # noqa: SIM201 - structural comparison of sizes
