"""Jaxpr-to-jaxpr passes. Each returns a new jaxpr and ends with ``typecheck``."""
from __future__ import annotations

from .fusion import Call, fusion_kind
from .jaxpr import ClosedJaxpr, Jaxpr, Literal, Var, typecheck

__all__ = ["dce", "cse", "simplify", "hashable_params", "inline_calls"]


def dce(jaxpr: Jaxpr, used_outputs=None) -> Jaxpr:
    """Drop equations whose results are never used (effectful ones always stay).

    ``used_outputs`` (a list of bools) prunes outputs too; unused invars are kept so the
    signature does not change.
    """
    outvars = jaxpr.outvars
    if used_outputs is not None:
        outvars = tuple(v for v, u in zip(outvars, used_outputs) if u)
    live = {v for v in outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if eqn.primitive.effectful or any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(x for x in eqn.invars if isinstance(x, Var))
    kept.reverse()
    constvars = [v for v in jaxpr.constvars]
    return typecheck(Jaxpr(constvars, jaxpr.invars, kept, outvars))


def _freeze(value):
    """A hashable stand-in for a param value (sub-jaxprs by identity of their text)."""
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return ("jaxpr", str(value), id(value))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    try:
        hash(value)
        return value
    except TypeError:
        return ("unhashable", id(value))


def hashable_params(params: dict) -> tuple:
    return tuple(sorted((k, _freeze(v)) for k, v in params.items()))


def cse(jaxpr: Jaxpr) -> Jaxpr:
    """Common-subexpression elimination: an equation equal to an earlier one (same
    primitive, params and operands) is replaced by the earlier results."""
    rename: dict = {}
    seen: dict = {}
    new_eqns = []

    def atom_key(x):
        if isinstance(x, Literal):
            return ("lit",) + x.key()
        return rename.get(x, x)

    for eqn in jaxpr.eqns:
        invars = tuple(x if isinstance(x, Literal) else rename.get(x, x) for x in eqn.invars)
        if not eqn.primitive.effectful:
            key = (eqn.primitive, tuple(atom_key(x) for x in invars),
                   hashable_params(eqn.params))
            prev = seen.get(key)
            if prev is not None:
                for old, new in zip(eqn.outvars, prev.outvars):
                    rename[old] = new
                continue
        new_eqn = eqn._replace(invars=invars)
        if not eqn.primitive.effectful:
            seen[key] = new_eqn
        new_eqns.append(new_eqn)
    outvars = [x if isinstance(x, Literal) else rename.get(x, x) for x in jaxpr.outvars]
    return typecheck(Jaxpr(jaxpr.constvars, jaxpr.invars, new_eqns, outvars))


def simplify(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The standard pipeline run before compiling: CSE then DCE."""
    return ClosedJaxpr(dce(cse(closed.jaxpr)), closed.consts)


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Replace every call-like equation (nested ``jit``, the primal computation of
    ``custom_jvp``/``custom_vjp``, the ``solve`` of ``custom_linear_solve``: primitives
    whose fusion kind is ``Call``) by its body, at any depth. Constants of inlined bodies
    become constants of the result.

    Works with an explicit stack, so a chain of thousands of nested calls needs no deep
    recursion. The results of inlined equations get fresh variables: a body called
    twice (a ``jit`` helper whose jaxpr is cached) is inlined twice.
    """
    constvars = list(closed.jaxpr.constvars)
    consts = list(closed.consts)
    eqns: list = []
    subst: dict = {}

    def read(x):
        return subst.get(x, x) if isinstance(x, Var) else x

    # Each frame: (equation iterator, substitution to apply to its results on exit).
    stack = [(iter(closed.jaxpr.eqns), None)]
    while stack:
        it, exit_map = stack[-1]
        eqn = next(it, None)
        if eqn is None:
            stack.pop()
            if exit_map is not None:
                outvars, inner_outs = exit_map
                for v, r in zip(outvars, inner_outs):
                    subst[v] = read(r)
            continue
        kind = fusion_kind(eqn.primitive)
        if isinstance(kind, Call):
            body = eqn.params[kind.body_param]
            inner = body.jaxpr
            for cv, c in zip(inner.constvars, body.consts):
                nv = Var(cv.aval)
                constvars.append(nv)
                consts.append(c)
                subst[cv] = nv
            ins = eqn.invars if kind.operands is None else \
                [eqn.invars[i] for i in kind.operands(eqn.params, len(eqn.invars))]
            for iv, x in zip(inner.invars, ins):
                subst[iv] = read(x)
            stack.append((iter(inner.eqns), (eqn.outvars, inner.outvars)))
            continue
        invars = tuple(read(x) for x in eqn.invars)
        if len(stack) > 1:
            # Inside an inlined body: fresh result variables, since one body may be
            # called (and so inlined) more than once.
            outvars = []
            for v in eqn.outvars:
                subst[v] = nv = Var(v.aval)
                outvars.append(nv)
            eqns.append(eqn._replace(invars=invars, outvars=tuple(outvars)))
        else:
            eqns.append(eqn._replace(invars=invars))
    outvars = [read(v) for v in closed.jaxpr.outvars]
    jaxpr = Jaxpr(constvars, closed.jaxpr.invars, eqns, outvars)
    return ClosedJaxpr(typecheck(jaxpr), consts)
