"""Structured control flow: ``cond``/``switch``, ``while_loop``, ``fori_loop``, ``scan``
and ``map``.

The user's Python functions are traced once into sub-jaxprs, held as ``ClosedJaxpr``
params without constants (closed-over values, including tracers of enclosing
transformations, are hoisted into leading operands). So the equation's text fully
describes it and a backend can emit native branches and loops.

Primitives and operands:

``cond[branches=(...)] index *ops``
    ``branches[index](*ops)``; ``index`` is an int32 scalar, clamped to the range.
``while[body_jaxpr cond_jaxpr body_nconsts cond_nconsts] *cond_consts *body_consts *carry``
``scan[jaxpr length reverse num_consts num_carry unroll] *consts *carry *xs``
    The body maps ``(consts, carry, x) -> (carry, y)``; ``ys`` are stacked on axis 0.

Autodiff splits each primitive into a primal equation and a tangent equation that is
linear in the tangents (it recomputes what it needs of the primal), so reverse mode can
transpose the tangent equation alone. ``scan`` additionally returns the carry seen by
every iteration, which the tangent scan reads as an ``xs`` input.
"""
from __future__ import annotations

import numpy as np

from .._traceback import api_boundary
from .. import dtypes, tree_util
from ..core.jaxpr import ClosedJaxpr, Jaxpr, Var
from ..core.fusion import ControlFlow, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, batching
from .call import eval_jaxpr_numpy, interrupt, python_evaluator, scalar_values
from ._control_flow_util import (_bind, _carry_fixpoint, _convert_to, _effectful_twin,  # noqa: F401
                                 _eval, _from_fun, _join_weak, _name, _pad_invars,
                                 _shaped, _trace, _types_str)

__all__ = ["cond_p", "cond", "switch", "while_p", "while_loop", "fori_loop", "scan_p",
           "scan", "map"]


# ---------------------------------------------------------------------------
# cond / switch
# ---------------------------------------------------------------------------
cond_p = Primitive("cond", multiple_results=True, param_order=("branches",))
def_fusion(cond_p, ControlFlow(("branches",)))


def _cond_abstract(index, *ops, branches):
    if index.shape != () or index.dtype != dtypes.int32:
        raise TypeError(f"cond: the branch index must be an int32 scalar, got "
                        f"{index.str_short()}")
    for b in branches:
        if len(b.in_avals) != len(ops):
            raise TypeError(f"cond: a branch takes {len(b.in_avals)} operands, got {len(ops)}")
        for got, want in zip(ops, b.in_avals):
            if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
                raise TypeError(f"cond: operand of type {got.str_short()} where the branch "
                                f"expects {want.str_short()}")
    # Branches may differ in weak types only (JAX allows it): the result is weak where
    # every branch's is.
    joined = _join_weak([b.out_avals for b in branches])
    return joined if joined is not None else [a.to_shaped() for a in branches[0].out_avals]


def _cond_impl(index, *ops, branches):
    i = int(np.clip(int(index), 0, len(branches) - 1))
    b = branches[i]
    return eval_jaxpr_numpy(b.jaxpr, b.consts, *ops)


abstract_eval_rules[cond_p] = _cond_abstract
impl_rules[cond_p] = _cond_impl


def _trace_branches(branches, ops, names, swap=False):
    leaves, in_tree = tree_util.tree_flatten(tuple(ops))
    avals = [_shaped(x) for x in leaves]
    traced = [_trace(b, avals, in_tree, "cond") for b in branches]
    trees = [t[2] for t in traced]
    def pair(i):  # cond reports true_fun (branch 1) first
        return (i, 0) if swap else (0, i)
    for i in range(1, len(traced)):
        if trees[i] != trees[0]:
            a, b = pair(i)
            raise TypeError(
                f"{names[a]} and {names[b]} output must have same type structure, got "
                f"{trees[a]} and {trees[b]}.")
    outs = [t[0].out_avals for t in traced]
    joined = _join_weak(outs)
    if joined is None:
        for i in range(1, len(outs)):
            if _join_weak([outs[0], outs[i]]) is None:
                a, b = pair(i)
                raise TypeError(
                    f"{names[a]} and {names[b]} output must have identical types, got\n"
                    f"{names[a]}: ({_types_str(outs[a])})\n"
                    f"{names[b]}: ({_types_str(outs[b])})")
    # Branches that differ only in weak types stay as they are (the equation's result
    # is the join), as in JAX: no retrace, no conversion.
    # Every branch takes the constants of all branches, then the operands.
    all_consts = [c for t in traced for c in t[1]]
    const_avals = [[_shaped(c) for c in t[1]] for t in traced]
    padded = []
    for i, t in enumerate(traced):
        before = [a for k in range(i) for a in const_avals[k]]
        after_consts = [a for k in range(i + 1, len(traced)) for a in const_avals[k]]
        j = t[0].jaxpr
        n_own = len(const_avals[i])
        own, rest = list(j.invars[:n_own]), list(j.invars[n_own:])
        pre = [Var(a) for a in before]
        post = [Var(a) for a in after_consts]
        padded.append(ClosedJaxpr(Jaxpr((), pre + own + post + rest, j.eqns, j.outvars), []))
    return tuple(padded), all_consts, leaves, trees[0]


@api_boundary
def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged as one
    ``cond`` equation (both branches are traced; only one runs).

    Examples
    --------
    >>> from absjit import lax
    >>> lax.cond(True, lambda x: x + 1, lambda x: x - 1, 1.0)
    Array(2., dtype=float32, weak_type=True)
    """
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"cond: pred must be a scalar, got {aval.str_short()} of shape "
                        f"{tuple(aval.shape)} (in cond of {_name(true_fun)}/{_name(false_fun)})")
    if not (aval.dtype.kind in "biu"):
        raise TypeError(f"cond: pred type must be boolean or integer, got {aval.dtype.name}")
    from .elementwise import convert_element_type, ne
    from .values import asarray_weak
    if aval.dtype != dtypes.bool_:
        pred = ne(pred, asarray_weak(0, aval.dtype, aval.weak_type))
    index = convert_element_type(pred, dtypes.int32)
    return _bind_cond(index, (false_fun, true_fun), operands,
                      [f"false_fun ({_name(false_fun)})", f"true_fun ({_name(true_fun)})"],
                      swap=True)


def _bind_cond(index, funs, operands, names, swap=False):
    branches, consts, leaves, out_tree = _trace_branches(funs, operands, names, swap)
    outs = _bind(cond_p, index, *consts, *leaves, branches=branches)
    return tree_util.tree_unflatten(out_tree, outs)


@api_boundary
def switch(index, branches, *operands):
    """``branches[index](*operands)``, ``index`` clamped to ``[0, len(branches) - 1]``.

    Examples
    --------
    >>> from absjit import lax
    >>> lax.switch(1, [lambda x: x, lambda x: 2 * x], 3.0)
    Array(6., dtype=float32, weak_type=True)
    """
    branches = list(branches)
    if not branches:
        raise ValueError("switch: branches must be a non-empty sequence")
    aval = get_aval(index)
    if aval.shape != () or aval.dtype.kind not in "iu":
        raise TypeError(f"switch: index must be an integer scalar, got {aval.str_short()}")
    from .elementwise import clamp, convert_element_type
    index = convert_element_type(index, dtypes.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    names = [f"branch {i} ({_name(b)})" for i, b in enumerate(branches)]
    return _bind_cond(index, branches, operands, names)


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    t_ops = tangents[1:]
    outs = _bind(cond_p, index, *ops, branches=branches)
    nonzeros = [t is not None for t in t_ops]
    t_branches = tuple(ad.jvp_jaxpr(b, nonzeros) for b in branches)
    t_in = [t for t in t_ops if t is not None]
    t_outs = _bind(cond_p, index, *ops, *t_in, branches=t_branches)
    t_outs = [t if ad._is_differentiable(get_aval(o)) else None for o, t in zip(outs, t_outs)]
    return outs, t_outs


_cond_jvp.symbolic_zeros = True
ad.jvp_rules[cond_p] = _cond_jvp


def _cond_transpose(cts, index, *ops, branches):
    if ad.is_undefined_primal(index):
        raise ValueError("cond: cannot transpose with respect to the branch index")
    mask = [ad.is_undefined_primal(x) for x in ops]
    known = [x for x in ops if not ad.is_undefined_primal(x)]
    t_branches = tuple(ad.transpose_jaxpr(b, mask) for b in branches)
    cts = [ad.zeros_like_aval(a.to_shaped()) if c is None else c
           for c, a in zip(cts, branches[0].out_avals)]
    res = _bind(cond_p, index, *known, *cts, branches=t_branches)
    it = iter(res)
    return [None] + [next(it) if m else None for m in mask]


ad.transpose_rules[cond_p] = _cond_transpose


def _cond_batch(vals, dims, *, branches):
    from .elementwise import clamp, select_n
    from .structural import broadcast_in_dim
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    index, idim = vals[0], dims[0]
    ops, op_dims = vals[1:], dims[1:]
    if idim is not None:
        # A batched predicate: every branch runs and the results are selected.
        index = batching.moveaxis(index, idim, 0)
        index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
        results = []
        for b in branches:
            bj, _ = batching.batch_jaxpr(b, size, op_dims, [True] * len(b.out_avals))
            results.append(_eval(bj, *ops))
        outs = []
        for group in zip(*results):
            shape = get_aval(group[0]).shape
            which = broadcast_in_dim(index, shape, (0,)) if len(shape) > 1 else index
            if len(branches) == 2:
                from .elementwise import convert_element_type
                which = convert_element_type(which, dtypes.bool_)
            outs.append(select_n(which, *group))
        return outs, [0] * len(outs)
    out_batched = [False] * len(branches[0].out_avals)
    for b in branches:
        _, ob = batching.batch_jaxpr(b, size, op_dims)
        out_batched = [x or y for x, y in zip(out_batched, ob)]
    new = tuple(batching.batch_jaxpr(b, size, op_dims, out_batched)[0] for b in branches)
    outs = _bind(cond_p, index, *ops, branches=new)
    return outs, [0 if ob else None for ob in out_batched]


batching.batch_rules[cond_p] = _cond_batch


# ---------------------------------------------------------------------------
# while_loop
# ---------------------------------------------------------------------------
while_p = Primitive("while", multiple_results=True,
                    param_order=("body_jaxpr", "body_nconsts", "cond_jaxpr", "cond_nconsts"))
def_fusion(while_p, ControlFlow(("cond_jaxpr", "body_jaxpr")))


def _while_abstract(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    carry = args[cond_nconsts + body_nconsts:]
    outs = body_jaxpr.out_avals
    for got, want in zip(carry, outs):
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            raise TypeError(f"while: carry of type {got.str_short()} but the body returns "
                            f"{want.str_short()}")
    return [a.to_shaped() for a in carry]


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc = scalar_values(args[:cond_nconsts])
    bc = scalar_values(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = scalar_values(args[cond_nconsts + body_nconsts:])
    cond = python_evaluator(cond_jaxpr.jaxpr, scalar_io=True)
    body = python_evaluator(body_jaxpr.jaxpr, scalar_io=True)
    check = interrupt.check  # set for the whole call (absjit.jit.tiering)
    while cond((), *cc, *carry)[0]:
        if check is not None:
            check()
        carry = body((), *bc, *carry)
    return carry


abstract_eval_rules[while_p] = _while_abstract
impl_rules[while_p] = _while_impl


@api_boundary
def while_loop(cond_fun, body_fun, init_val):
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)``; staged as one ``while``.

    Not reverse-differentiable (use ``scan`` or ``fori_loop`` with static bounds).

    Examples
    --------
    >>> from absjit import lax
    >>> lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1)
    Array(16, dtype=int32, weak_type=True)
    """
    leaves, tree = tree_util.tree_flatten(init_val)
    args_tree = tree_util.tree_structure((init_val,))
    avals0 = [_shaped(x) for x in leaves]

    def trace_body(avals):
        b, bc, btree = _trace(body_fun, avals, args_tree, "while_loop")
        if btree != tree:
            raise TypeError(f"body_fun {_name(body_fun)} output and input must have the same "
                            f"type structure, got {btree} and {tree}")
        return b.out_avals[len(bc) * 0:], b, bc

    (_, body, bconsts), avals = _carry_fixpoint(trace_body, avals0, _name(body_fun),
                                                 "while_loop body_fun")
    leaves = [_convert_to(x, a) for x, a in zip(leaves, avals)]
    cj, cconsts, ctree = _trace(cond_fun, avals, args_tree, "while_loop")
    couts = cj.out_avals
    if len(couts) != 1 or couts[0].shape != () or couts[0].dtype != dtypes.bool_:
        raise TypeError(f"cond_fun {_name(cond_fun)} must return a boolean scalar, but got "
                        f"output type(s) [{_types_str(couts)}].")
    outs = _bind(while_p, *cconsts, *bconsts, *leaves, cond_jaxpr=cj, body_jaxpr=body,
                        cond_nconsts=len(cconsts), body_nconsts=len(bconsts))
    return tree_util.tree_unflatten(tree, outs)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    outs = _bind(while_p, *primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                        cond_nconsts=nc, body_nconsts=nb)
    bconsts = primals[nc:nc + nb]
    carry = primals[nc + nb:]
    t_bconsts = tangents[nc:nc + nb]
    t_carry = tangents[nc + nb:]
    cdiff = [ad._is_differentiable(_shaped(c)) for c in carry]
    nz_consts = [t is not None for t in t_bconsts]
    # Tangent loop: carry = primal carry + tangents of differentiable carries.
    nzs = nz_consts + cdiff
    jb = ad.jvp_jaxpr(body_jaxpr, nzs)
    nbc = len(bconsts)
    ncarry = len(carry)
    n_tc = len([t for t in t_bconsts if t is not None])

    def body(*args):
        pc = args[:nbc]
        tc = args[nbc:nbc + n_tc]
        pcarry = args[nbc + n_tc:nbc + n_tc + ncarry]
        tcarry = args[nbc + n_tc + ncarry:]
        new_p = _eval(body_jaxpr, *pc, *pcarry)
        new_t = _eval(jb, *pc, *pcarry, *tc, *tcarry)
        return list(new_p) + [t for t, d in zip(new_t, cdiff) if d]

    c_avals = [_shaped(c) for c in carry]
    t_avals = [a for a, d in zip(c_avals, cdiff) if d]
    new_body = _from_fun(body, [_shaped(c) for c in bconsts]
                         + [_shaped(t) for t in t_bconsts if t is not None] + c_avals + t_avals)
    new_cond = _pad_invars(cond_jaxpr, [], t_avals)
    t_init = [ad.instantiate_zeros(t, c) for t, c, d in zip(t_carry, carry, cdiff) if d]
    res = _bind(while_p, *primals[:nc], *bconsts, *[t for t in t_bconsts if t is not None],
                       *carry, *t_init, cond_jaxpr=new_cond, body_jaxpr=new_body,
                       cond_nconsts=nc, body_nconsts=nbc + n_tc)
    it = iter(res[ncarry:])
    return outs, [next(it) if d else None for d in cdiff]


_while_jvp.symbolic_zeros = True
ad.jvp_rules[while_p] = _while_jvp


def _while_transpose(cts, *args, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
        "static (Python int) start/stop values.")


ad.transpose_rules[while_p] = _while_transpose


def _while_batch(vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    from .elementwise import select_n
    from .reductions import reduce_or
    from .structural import broadcast_in_dim
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    nc, nb = cond_nconsts, body_nconsts
    vals = [batching.moveaxis(v, d, 0) if d is not None else v for v, d in zip(vals, dims)]
    dims = [0 if d is not None else None for d in dims]
    cc, bc, carry = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
    ccd, bcd, cd = dims[:nc], dims[nc:nc + nb], dims[nc + nb:]
    carry_b = [d is not None for d in cd]
    for _ in range(len(carry) + 1):
        _, ob = batching.batch_jaxpr(body_jaxpr, size, bcd + [0 if b else None for b in carry_b])
        new = [x or y for x, y in zip(carry_b, ob)]
        if new == carry_b:
            break
        carry_b = new
    _, (pred_b,) = batching.batch_jaxpr(cond_jaxpr, size, ccd + [0 if b else None for b in carry_b])
    if pred_b:
        carry_b = [True] * len(carry)
    carry = [batching.matchaxis(c, d, 0 if b else None, size) if b else c
             for c, d, b in zip(carry, cd, carry_b)]
    cdims = [0 if b else None for b in carry_b]
    bj, _ = batching.batch_jaxpr(body_jaxpr, size, bcd + cdims, carry_b)
    cj, _ = batching.batch_jaxpr(cond_jaxpr, size, ccd + cdims, [pred_b])
    if not pred_b:
        outs = _bind(while_p, *cc, *bc, *carry, cond_jaxpr=cj, body_jaxpr=bj,
                            cond_nconsts=nc, body_nconsts=nb)
        return outs, cdims
    # A batched predicate: loop while any member continues; finished members keep
    # their carry.
    c_avals = [_shaped(c) for c in carry]
    cc_avals = [_shaped(c) for c in cc]
    bc_avals = [_shaped(c) for c in bc]

    def new_cond(*args):
        p = _eval(cj, *args)[0]
        return [reduce_or(p, (0,))]

    def new_body(*args):
        ccs, bcs, cs = args[:nc], args[nc:nc + nb], args[nc + nb:]
        p = _eval(cj, *ccs, *cs)[0]
        new = _eval(bj, *bcs, *cs)
        outs = []
        for n_, o in zip(new, cs):
            shape = get_aval(o).shape
            which = broadcast_in_dim(p, shape, (0,)) if len(shape) > 1 else p
            outs.append(select_n(which, o, n_))
        return outs

    cj2 = _from_fun(new_cond, cc_avals + c_avals)
    bj2 = _from_fun(new_body, cc_avals + bc_avals + c_avals)
    outs = _bind(while_p, *cc, *cc, *bc, *carry, cond_jaxpr=cj2, body_jaxpr=bj2,
                        cond_nconsts=nc, body_nconsts=nc + nb)
    return outs, cdims


batching.batch_rules[while_p] = _while_batch


cond_effect_p = _effectful_twin(cond_p)
while_effect_p = _effectful_twin(while_p)
def_fusion(cond_effect_p, ControlFlow(("branches",)))
def_fusion(while_effect_p, ControlFlow(("cond_jaxpr", "body_jaxpr")))

from .scan import fori_loop, map, scan, scan_effect_p, scan_p  # noqa: E402,F401
