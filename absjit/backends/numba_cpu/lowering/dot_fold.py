"""Products computed in the layout their consumer wants: a ``transpose`` that swaps the
two free-dimension groups of a ``dot_general`` (``(A @ B).T``) becomes the product with
its operands swapped (``B.T @ A.T``), which BLAS computes from transpose flags — no
transposed copy of the result, and the consumers read it in order.

Reverse-mode differentiation makes this pattern for every weight gradient of a dense
layer (the gradient is computed as ``(dy.T @ x)`` and transposed back to the weight's
layout), so an MLP's backward pass used to write each weight gradient once and read it
back column by column.

Only top-level equations are rewritten, and only when the product feeds nothing but the
transpose (otherwise both layouts are needed and the product is kept).
"""
from __future__ import annotations

from ....core.jaxpr import ClosedJaxpr, Jaxpr, Var
from ....ops.linalg import dot_general_p
from ....ops.structural import transpose_p

__all__ = ["fold_dot_transposes"]


def _swap_permutation(eqn):
    """The permutation a transpose of ``eqn``'s result must have to be the product with
    its operands swapped, or None when ``eqn`` has batch dimensions."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    if lb or rb:
        return None
    la, ra = (x.aval for x in eqn.invars)
    nl, nr = len(la.shape) - len(lc), len(ra.shape) - len(rc)
    if nl == 0 or nr == 0:
        return None  # a vector result: the transpose is the identity
    return tuple(range(nl, nl + nr)) + tuple(range(nl))


def fold_dot_transposes(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with every ``transpose(dot_general(a, b))`` that swaps the product's
    free dimensions replaced by ``dot_general(b, a)`` (same precision and result type);
    ``closed`` itself when there is none."""
    jaxpr = closed.jaxpr
    uses: dict = {}
    for eqn in jaxpr.eqns:
        for x in eqn.invars:
            if isinstance(x, Var):
                uses[x] = uses.get(x, 0) + 1
    for x in jaxpr.outvars:
        if isinstance(x, Var):
            uses[x] = uses.get(x, 0) + 2  # an output is needed in its own layout
    dots = {eqn.outvars[0]: eqn for eqn in jaxpr.eqns if eqn.primitive is dot_general_p}
    folded, drop = {}, set()
    for k, eqn in enumerate(jaxpr.eqns):
        if eqn.primitive is not transpose_p:
            continue
        src = eqn.invars[0]
        dot = dots.get(src) if isinstance(src, Var) else None
        if dot is None or uses.get(src) != 1 or \
                tuple(eqn.params["permutation"]) != _swap_permutation(dot):
            continue
        (lc, rc), _ = dot.params["dimension_numbers"]
        params = dict(dot.params, dimension_numbers=((tuple(rc), tuple(lc)), ((), ())))
        if isinstance(params.get("precision"), tuple):
            params["precision"] = tuple(reversed(params["precision"]))
        folded[k] = dot._replace(invars=(dot.invars[1], dot.invars[0]),
                                 outvars=eqn.outvars, params=params,
                                 source_info=eqn.source_info)
        drop.add(id(dot))
    if not folded:
        return closed
    eqns = [folded.get(k, e) for k, e in enumerate(jaxpr.eqns) if id(e) not in drop]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars),
                       closed.consts)
