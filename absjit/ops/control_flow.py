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

from .. import dtypes, tree_util
from ..core.avals import ShapedArray
from ..core.jaxpr import ClosedJaxpr, Jaxpr, Var
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, batching
from .call import eval_jaxpr_numpy, hoist_consts

__all__ = ["cond_p", "cond", "switch", "while_p", "while_loop", "fori_loop", "scan_p",
           "scan", "map"]


# ---------------------------------------------------------------------------
# tracing helpers
# ---------------------------------------------------------------------------
def _name(f) -> str:
    return getattr(f, "__name__", None) or type(f).__name__


def _shaped(x) -> ShapedArray:
    return get_aval(x).to_shaped()


def _trace(fun, in_avals, in_tree, what: str):
    """Trace ``fun(*unflatten(in_tree, avals))`` to a constant-free ClosedJaxpr.

    Returns ``(closed, consts, out_tree)``; ``closed`` takes ``consts + leaves``.
    """
    from ..interpreters.staging import DebugInfo, trace_to_jaxpr
    box = []

    def flat_fun(*leaves):
        args = tree_util.tree_unflatten(in_tree, list(leaves))
        out = fun(*args)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        box.append(out_tree)
        return out_leaves

    names = [f"arg{i}" for i in range(len(in_avals))]
    closed, _ = trace_to_jaxpr(flat_fun, list(in_avals), DebugInfo.of(fun, names, what),
                               transform=what)
    closed, consts = hoist_consts(closed)
    return closed, consts, box[-1]


def _pad_invars(closed: ClosedJaxpr, before, after) -> ClosedJaxpr:
    """``closed`` taking extra unused leading/trailing inputs of the given avals."""
    j = closed.jaxpr
    pre = [Var(a) for a in before]
    post = [Var(a) for a in after]
    return ClosedJaxpr(Jaxpr((), pre + list(j.invars) + post, j.eqns, j.outvars), [])


def _from_fun(fun, in_avals) -> ClosedJaxpr:
    """Trace a flat function at ``in_avals`` to a constant-free ClosedJaxpr (consts, if
    any, must be plain values: they are baked in)."""
    from ..interpreters.staging import trace_to_jaxpr
    closed, _ = trace_to_jaxpr(fun, [a.to_shaped() for a in in_avals], None,
                               transform="control_flow")
    return closed


def _eval(closed: ClosedJaxpr, *args):
    from ..core.jaxpr import eval_jaxpr
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _types_str(avals) -> str:
    return ", ".join(a.str_short() + ("{weak}" if a.weak_type else "") for a in avals)


def _convert_to(x, aval):
    from .elementwise import convert_element_type
    a = get_aval(x)
    if a.dtype == aval.dtype and a.weak_type == aval.weak_type:
        return x
    return convert_element_type(x, aval.dtype, aval.weak_type)


def _join_weak(avals_list):
    """One aval per position, if the lists agree up to weak types (else None)."""
    out = []
    for group in zip(*avals_list):
        a0 = group[0]
        if any(tuple(a.shape) != tuple(a0.shape) or a.dtype != a0.dtype for a in group):
            return None
        out.append(ShapedArray(a0.shape, a0.dtype, all(a.weak_type for a in group)))
    return out


def _has_effects(closed) -> bool:
    return any(e.primitive.effectful for e in closed.jaxpr.eqns)


def _bind(primitive, *args, **params):
    """Bind ``primitive``, or its effectful twin when a sub-jaxpr has effects (a
    ``debug.print`` in a loop body): passes never drop it and value propagation at the
    concrete level never runs it while tracing."""
    subs = []
    for v in params.values():
        if isinstance(v, ClosedJaxpr):
            subs.append(v)
        elif isinstance(v, tuple):
            subs += [j for j in v if isinstance(j, ClosedJaxpr)]
    if any(_has_effects(j) for j in subs):
        primitive = _EFFECTFUL[primitive]
    return primitive.bind(*args, **params)


# ---------------------------------------------------------------------------
# cond / switch
# ---------------------------------------------------------------------------
cond_p = Primitive("cond", multiple_results=True, param_order=("branches",))


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
    return [a.to_shaped() for a in branches[0].out_avals]


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
    if any(list(o) != joined for o in outs):
        # Branches differ only in weak types: retrace converting to the joined type.
        def fix(b):
            def fb(*a):
                res = b(*a)
                lv, tr = tree_util.tree_flatten(res)
                return tree_util.tree_unflatten(tr, [_convert_to(x, j) for x, j in zip(lv, joined)])
            fb.__name__ = _name(b)
            return fb
        traced = [_trace(fix(b), avals, in_tree, "cond") for b in branches]
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
    from ..numpy._promote import asarray_weak
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


def _while_abstract(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    carry = args[cond_nconsts + body_nconsts:]
    outs = body_jaxpr.out_avals
    for got, want in zip(carry, outs):
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            raise TypeError(f"while: carry of type {got.str_short()} but the body returns "
                            f"{want.str_short()}")
    return [a.to_shaped() for a in carry]


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc = list(args[:cond_nconsts])
    bc = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(eval_jaxpr_numpy(cond_jaxpr.jaxpr, [], *cc, *carry)[0]):
        carry = eval_jaxpr_numpy(body_jaxpr.jaxpr, [], *bc, *carry)
    return carry


abstract_eval_rules[while_p] = _while_abstract
impl_rules[while_p] = _while_impl


def _carry_fixpoint(trace_body, carry_avals, fn_name: str, what: str):
    """Trace the loop body; a weakly typed carry whose dtype the body changes is
    promoted to the body's type (as JAX does) and traced again; any other change is a
    TypeError naming both types."""
    for _ in range(3):
        traced = trace_body(carry_avals)
        outs = traced[0]
        new = []
        changed = False
        for i, (a, o) in enumerate(zip(carry_avals, outs)):
            same = tuple(a.shape) == tuple(o.shape) and a.dtype == o.dtype
            if same and a.weak_type == o.weak_type:
                new.append(a)
            elif tuple(a.shape) == tuple(o.shape) and (a.weak_type or same):
                new.append(ShapedArray(o.shape, o.dtype, o.weak_type and a.weak_type))
                changed = True
            else:
                raise TypeError(
                    f"{what} {fn_name}: the input carry component {i} has type "
                    f"{a.str_short()} but the corresponding output carry component has type "
                    f"{o.str_short()}, so the "
                    f"{'shapes' if tuple(a.shape) != tuple(o.shape) else 'dtypes'} do not "
                    "match. The carry must keep its type across iterations.")
        if not changed:
            return traced, carry_avals
        carry_avals = new
    raise TypeError(f"{what} {fn_name}: the carry type does not settle")


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


# ---------------------------------------------------------------------------
# scan
# ---------------------------------------------------------------------------
scan_p = Primitive("scan", multiple_results=True,
                   param_order=("jaxpr", "length", "num_carry", "num_consts", "reverse",
                                "unroll"))


def _scan_abstract(*args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts = args[:num_consts]
    carry = args[num_consts:num_consts + num_carry]
    xs = args[num_consts + num_carry:]
    ins = jaxpr.in_avals
    x_avals = []
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan: xs of type {x.str_short()} must have leading dimension "
                            f"{length}")
        x_avals.append(ShapedArray(x.shape[1:], x.dtype, x.weak_type))
    for got, want in zip(list(consts) + list(carry) + x_avals, ins):
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            raise TypeError(f"scan: operand of type {got.str_short()} where the body expects "
                            f"{want.str_short()}")
    outs = jaxpr.out_avals
    for got, want in zip(carry, outs[:num_carry]):
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            raise TypeError(f"scan: carry of type {got.str_short()} but the body returns "
                            f"{want.str_short()}")
    ys = [ShapedArray((length,) + tuple(a.shape), a.dtype, a.weak_type)
          for a in outs[num_carry:]]
    return [a.to_shaped() for a in carry] + ys


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.empty((length,) + tuple(a.shape), a.dtype) for a in y_avals]
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        outs = eval_jaxpr_numpy(jaxpr.jaxpr, [], *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for y, o in zip(ys, outs[num_carry:]):
            y[i] = o
    return carry + ys


abstract_eval_rules[scan_p] = _scan_abstract
impl_rules[scan_p] = _scan_impl


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the final
    carry and the stacked ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(3.0, dtype=np.float32))
    (Array(3., dtype=float32), Array([0., 0., 1.], dtype=float32))
    """
    name = _name(f)
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    lengths = {int(get_aval(x).shape[0]) if get_aval(x).shape else None for x in x_leaves}
    if None in lengths:
        raise ValueError(f"scan of {name}: every leaf of xs must have a leading axis; got "
                         f"shapes {[tuple(get_aval(x).shape) for x in x_leaves]}")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError(f"scan of {name} got values with different leading axis sizes: "
                         f"{', '.join(str(tuple(get_aval(x).shape)[0]) for x in x_leaves)}"
                         + (f" (length={length})" if length is not None else "") + ".")
    if not lengths:
        raise ValueError(f"scan of {name}: xs is empty, so length must be given")
    n = lengths.pop()
    c_leaves, c_tree = tree_util.tree_flatten(init)
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype, get_aval(x).weak_type)
               for x in x_leaves]
    in_tree = tree_util.tree_structure((init, xs))

    def trace_body(c_avals):
        j, consts, out_tree = _trace(f, list(c_avals) + x_avals, in_tree, "scan")
        if out_tree.kind != out_tree.TUPLE or len(out_tree.children) != 2:
            raise TypeError(f"scan body {name} must return a pair (carry, y), got {out_tree}")
        if out_tree.children[0] != c_tree:
            raise TypeError(f"scan body {name}: the carry output has structure "
                            f"{out_tree.children[0]} but the input carry has {c_tree}")
        return j.out_avals[:len(c_avals)], j, consts, out_tree

    (_, body, consts, out_tree), c_avals = _carry_fixpoint(
        trace_body, [_shaped(c) for c in c_leaves], name, "scan body")
    c_leaves = [_convert_to(x, a) for x, a in zip(c_leaves, c_avals)]
    outs = _bind(scan_p, *consts, *c_leaves, *x_leaves, jaxpr=body, length=n,
                       reverse=bool(reverse), num_consts=len(consts),
                       num_carry=len(c_leaves), unroll=int(unroll))
    carry = tree_util.tree_unflatten(c_tree, outs[:len(c_leaves)])
    ys = tree_util.tree_unflatten(out_tree.children[1], outs[len(c_leaves):])
    return carry, ys


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nc, nk = num_consts, num_carry
    consts, carry, xs = primals[:nc], primals[nc:nc + nk], primals[nc + nk:]
    t_consts, t_xs = tangents[:nc], tangents[nc + nk:]
    t_carry = tangents[nc:nc + nk]
    cdiff = [ad._is_differentiable(_shaped(c)) for c in carry]
    # Primal scan that also returns the carry entering every iteration.
    c_avals = [_shaped(c) for c in carry]
    x_avals = [a.to_shaped() for a in jaxpr.in_avals[nc + nk:]]
    k_avals = [_shaped(c) for c in consts]

    def primal_body(*args):
        cs, cr = args[:nc], args[nc:nc + nk]
        outs = _eval(jaxpr, *args)
        return list(outs) + list(cr)

    pj = _from_fun(primal_body, k_avals + c_avals + x_avals)
    res = _bind(scan_p, *primals, jaxpr=pj, length=length, reverse=reverse, num_consts=nc,
                      num_carry=nk, unroll=unroll)
    n_out = len(jaxpr.out_avals)
    outs, stacked = res[:n_out], res[n_out:]
    # Tangent scan: linear carry; primal carries and xs are read as xs.
    nz_c = [t is not None for t in t_consts]
    nz_x = [t is not None for t in t_xs]
    jb = ad.jvp_jaxpr(jaxpr, nz_c + cdiff + nz_x)
    tc_avals = [a for a, z in zip(k_avals, nz_c) if z]
    tk_avals = [a for a, d in zip(c_avals, cdiff) if d]
    tx_avals = [a for a, z in zip(x_avals, nz_x) if z]
    ntc, ntk = len(tc_avals), len(tk_avals)

    def tangent_body(*args):
        i = 0
        pc = args[i:i + nc]; i += nc  # noqa: E702
        tc = args[i:i + ntc]; i += ntc  # noqa: E702
        tk = args[i:i + ntk]; i += ntk  # noqa: E702
        pk = args[i:i + nk]; i += nk  # noqa: E702
        px = args[i:i + len(x_avals)]; i += len(x_avals)  # noqa: E702
        tx = args[i:]
        t_out = _eval(jb, *pc, *pk, *px, *tc, *tk, *tx)
        t_carry_out = [t for t, d in zip(t_out[:nk], cdiff) if d]
        return t_carry_out + list(t_out[nk:])

    tj = _from_fun(tangent_body, k_avals + tc_avals + tk_avals + c_avals + x_avals + tx_avals)
    t_init = [ad.instantiate_zeros(t, c) for t, c, d in zip(t_carry, carry, cdiff) if d]
    t_res = _bind(scan_p, *consts, *[t for t in t_consts if t is not None], *t_init,
                        *stacked, *xs, *[t for t in t_xs if t is not None],
                        jaxpr=tj, length=length, reverse=reverse, num_consts=nc + ntc,
                        num_carry=ntk, unroll=unroll)
    it = iter(t_res[:ntk])
    t_carry_out = [next(it) if d else None for d in cdiff]
    t_ys = [t if ad._is_differentiable(_shaped(o)) else None
            for t, o in zip(t_res[ntk:], outs[nk:])]
    return outs, t_carry_out + t_ys


_scan_jvp.symbolic_zeros = True
ad.jvp_rules[scan_p] = _scan_jvp


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nc, nk = num_consts, num_carry
    consts, carry, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    lin_c = [ad.is_undefined_primal(c) for c in consts]
    lin_x = [ad.is_undefined_primal(x) for x in xs]
    # The carry of a tangent scan is linear; a known carry is a materialised zero
    # tangent, so it is transposed as linear too and its cotangent dropped.
    mask = lin_c + [True] * nk + lin_x
    tb = ad.transpose_jaxpr(jaxpr, mask)
    k_known = [c for c, m in zip(consts, lin_c) if not m]
    x_known = [x for x, m in zip(xs, lin_x) if not m]
    lc_avals = [c.aval.to_shaped() for c, m in zip(consts, lin_c) if m]
    carry_avals = [c.aval.to_shaped() if ad.is_undefined_primal(c) else _shaped(c)
                   for c in carry]
    y_avals = [a.to_shaped() for a in jaxpr.out_avals[nk:]]
    ct_carry = [ad.zeros_like_aval(a) if c is None else c for c, a in zip(cts[:nk], carry_avals)]
    ct_ys = [ad.zeros_like_aval(ShapedArray((length,) + tuple(a.shape), a.dtype))
             if c is None else c for c, a in zip(cts[nk:], y_avals)]
    nkk, nxk, nlc = len(k_known), len(x_known), len(lc_avals)

    def body(*a):
        kk = a[:nkk]
        ct_c = a[nkk:nkk + nk]
        acc = a[nkk + nk:nkk + nk + nlc]
        xk = a[nkk + nk + nlc:nkk + nk + nlc + nxk]
        ct_y = a[nkk + nk + nlc + nxk:]
        res = _eval(tb, *kk, *xk, *ct_c, *ct_y)
        ct_lc, ct_carry_in, ct_lx = res[:nlc], res[nlc:nlc + nk], res[nlc + nk:]
        acc = [ad.add_tangents(x, y) for x, y in zip(acc, ct_lc)]
        return list(ct_carry_in) + acc + list(ct_lx)

    xk_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in x_known]
    bj = _from_fun(body, [_shaped(k) for k in k_known] + carry_avals + lc_avals + xk_avals
                   + y_avals)
    acc0 = [ad.zeros_like_aval(a) for a in lc_avals]
    res = _bind(scan_p, *k_known, *ct_carry, *acc0, *x_known, *ct_ys, jaxpr=bj, length=length,
                      reverse=not reverse, num_consts=nkk, num_carry=nk + nlc, unroll=unroll)
    ct_init, ct_lc, ct_lx = res[:nk], res[nk:nk + nlc], res[nk + nlc:]
    it_c, it_x = iter(ct_lc), iter(ct_lx)
    ct_init = [c if ad.is_undefined_primal(k) else None for c, k in zip(ct_init, carry)]
    return ([next(it_c) if m else None for m in lin_c] + ct_init
            + [next(it_x) if m else None for m in lin_x])


ad.transpose_rules[scan_p] = _scan_transpose


def _scan_batch(vals, dims, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    nc, nk = num_consts, num_carry
    consts, carry, xs = vals[:nc], vals[nc:nc + nk], vals[nc + nk:]
    cd, kd, xd = dims[:nc], dims[nc:nc + nk], dims[nc + nk:]
    consts = [batching.moveaxis(c, d, 0) if d is not None else c for c, d in zip(consts, cd)]
    cdims = [0 if d is not None else None for d in cd]
    # Per iteration, a batched x has its batch axis first: store xs batched at axis 1.
    xs = [batching.moveaxis(x, d, 1) if d is not None else x for x, d in zip(xs, xd)]
    xdims = [0 if d is not None else None for d in xd]
    carry_b = [d is not None for d in kd]
    for _ in range(nk + 1):
        _, ob = batching.batch_jaxpr(jaxpr, size, cdims + [0 if b else None for b in carry_b]
                                     + xdims)
        new = [x or y for x, y in zip(carry_b, ob[:nk])]
        if new == carry_b:
            break
        carry_b = new
    carry = [batching.matchaxis(c, d, 0, size) if b else c
             for c, d, b in zip(carry, kd, carry_b)]
    _, ob = batching.batch_jaxpr(jaxpr, size, cdims + [0 if b else None for b in carry_b]
                                 + xdims)
    force = carry_b + ob[nk:]
    bj, _ = batching.batch_jaxpr(jaxpr, size, cdims + [0 if b else None for b in carry_b]
                                 + xdims, force)
    outs = _bind(scan_p, *consts, *carry, *xs, jaxpr=bj, length=length, reverse=reverse,
                       num_consts=nc, num_carry=nk, unroll=unroll)
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in ob[nk:]]


batching.batch_rules[scan_p] = _scan_batch


# ---------------------------------------------------------------------------
# effectful twins: same name, same rules
# ---------------------------------------------------------------------------
def _effectful_twin(p):
    from ..core import primitive as _primitive
    twin = Primitive(p.name, multiple_results=True, effectful=True,
                     param_order=p.param_order)
    _primitive._ALL[p.name] = p  # the registry lists the plain primitive under the name
    for table in (abstract_eval_rules, impl_rules, ad.jvp_rules, ad.transpose_rules,
                  batching.batch_rules):
        if p in table:
            table[twin] = table[p]
    return twin


cond_effect_p = _effectful_twin(cond_p)
while_effect_p = _effectful_twin(while_p)
scan_effect_p = _effectful_twin(scan_p)
_EFFECTFUL = {cond_p: cond_effect_p, while_p: while_effect_p, scan_p: scan_effect_p}


# ---------------------------------------------------------------------------
# fori_loop and map
# ---------------------------------------------------------------------------
def _static_int(x):
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    return None


def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``.

    With Python-int bounds it is a ``scan`` (so it is reverse-differentiable);
    otherwise a ``while``.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> ary = np.array([0., 1., 2.], dtype=np.float32)
    >>> lax.fori_loop(0, 3, lambda idx, acc: acc + ary[idx] ** 2, 0)
    Array(5., dtype=float32)
    """
    lo, hi = _static_int(lower), _static_int(upper)
    if lo is not None and hi is not None:
        def scanned(carry, _):
            i, val = carry
            return (i + np.int32(1), body_fun(i, val)), None
        scanned.__name__ = _name(body_fun)
        (_, out), _ = scan(scanned, (np.int32(lo), init_val), None, length=max(hi - lo, 0))
        return out
    from .elementwise import convert_element_type, lt
    lower = convert_element_type(lower, dtypes.int32)
    upper = convert_element_type(upper, dtypes.int32)

    def cond_fun(c):
        return lt(c[0], c[1])

    def body(c):
        i, u, val = c
        return i + np.int32(1), u, body_fun(i, val)
    body.__name__ = _name(body_fun)
    return while_loop(cond_fun, body, (lower, upper, init_val))[2]


def map(f, xs):  # noqa: A001 - lax.map
    """``f`` applied to every slice of ``xs`` along axis 0, stacked (a ``scan``).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.map(lambda x: x * 2, np.arange(3, dtype=np.int32))
    Array([0, 2, 4], dtype=int32)
    """
    def body(_, x):
        return None, f(x)
    body.__name__ = _name(f)
    _, ys = scan(body, None, xs)
    return ys
