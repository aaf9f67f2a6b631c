"""``scan`` (and ``fori_loop`` with static bounds, ``map``, built on it).

``scan[jaxpr length reverse num_consts num_carry unroll] *consts *carry *xs``: the body
maps ``(consts, carry, x) -> (carry, y)``; ``ys`` are stacked on axis 0. Its JVP is a
primal scan that also returns the carry entering every iteration, and a tangent scan,
linear in the tangents, that reads those carries as ``xs``; the transpose of the tangent
scan runs the transposed body in the opposite direction.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes, tree_util
from ..array import Array
from ..core.avals import ShapedArray
from ..core.dims import Dim, dim_max, unify
from ..core.shapes import as_size
from ..core.fusion import ControlFlow, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, batching
from .call import eval_jaxpr_numpy, interrupt, python_evaluator, scalar_values
from ._control_flow_util import (_bind, _carry_fixpoint, _convert_to, _effectful_twin,
                                 _eval, _from_fun, _name, _shaped, _trace, user_view)
from .._traceback import api_boundary

__all__ = ["scan_p", "scan", "fori_loop", "map"]


# ---------------------------------------------------------------------------
# scan
# ---------------------------------------------------------------------------
scan_p = Primitive("scan", multiple_results=True,
                   param_order=("jaxpr", "length", "num_carry", "num_consts", "reverse",
                                "unroll"))
def_fusion(scan_p, ControlFlow(("jaxpr",)))


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
    consts = scalar_values(args[:num_consts])
    carry = scalar_values(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.empty((length,) + tuple(a.shape), a.dtype) for a in y_avals]
    order = range(length - 1, -1, -1) if reverse else range(length)
    body = python_evaluator(jaxpr.jaxpr, scalar_io=True)
    check = interrupt.check  # set for the whole call (absjit.jit.tiering)
    if not xs and not ys:  # a fori_loop: only carries
        for _ in order:
            if check is not None:
                check()
            carry = body((), *consts, *carry)
        return carry
    for i in order:
        if check is not None:
            check()
        outs = body((), *consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for y, o in zip(ys, outs[num_carry:]):
            y[i] = o
    return carry + ys


abstract_eval_rules[scan_p] = _scan_abstract
impl_rules[scan_p] = _scan_impl


@api_boundary
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
    lengths = _distinct_sizes(as_size(get_aval(x).shape[0]) if get_aval(x).shape else None
                              for x in x_leaves)
    if None in lengths:
        raise ValueError(f"scan of {name}: every leaf of xs must have a leading axis; got "
                         f"shapes {[tuple(get_aval(x).shape) for x in x_leaves]}")
    if length is not None:
        lengths = _distinct_sizes(lengths + [as_size(length)])
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
        cr = args[nc:nc + nk]
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


scan_effect_p = _effectful_twin(scan_p)
def_fusion(scan_effect_p, ControlFlow(("jaxpr",)))


# ---------------------------------------------------------------------------
# fori_loop and map
# ---------------------------------------------------------------------------
def _static_int(x):
    if type(x) is Dim:  # a symbolic size (ranked level): a scan of that length
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    return None


def _distinct_sizes(sizes) -> list:
    """``sizes`` without repeats; symbolic sizes that must agree (scan's leading axes)
    are unified."""
    out = []
    for n in sizes:
        if not any(n is m or (n is not None and m is not None and unify(n, m)) for m in out):
            out.append(n)
    return out


@api_boundary
def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``.

    With Python-int bounds it is a ``scan`` (so it is reverse-differentiable);
    otherwise a ``while``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import lax
    >>> ary = jnp.array([0., 1., 2.])
    >>> lax.fori_loop(0, 3, lambda idx, acc: acc + ary[idx] ** 2, 0)
    Array(5., dtype=float32)

    The body sees ``idx`` as a traced value: index absjit arrays with it, not NumPy
    arrays (``np.ndarray.__getitem__`` needs a concrete integer).
    """
    lo, hi = _static_int(lower), _static_int(upper)
    if lo is not None and hi is not None:
        # Python-int bounds give a weakly typed index, as in JAX (``x + i`` keeps the
        # weak type of ``x``).
        weak = type(lower) is int and type(upper) is int
        one = 1 if weak else np.int32(1)

        def scanned(carry, _):
            i, val = carry
            return (i + one, body_fun(i, val)), None
        scanned.__name__ = _name(body_fun)
        user_view(scanned, body_fun, lambda carry, _: [(0, carry[0]), (1, carry[1])],
                  "fori_loop")
        start = np.int32(lo)
        if weak:
            start = Array._new(np.asarray(lo, np.int32), True)
        (_, out), _ = scan(scanned, (start, init_val), None, length=dim_max(hi - lo, 0))
        return out
    from .control_flow import while_loop
    from .elementwise import convert_element_type, lt
    # Bounds that are int32 already pass as they are; a Python int becomes an int32
    # literal (JAX's jaxpr has no conversion for either).
    lower, upper = (np.int32(b) if type(b) is int else
                    b if getattr(b, "dtype", None) == np.int32 else
                    convert_element_type(b, dtypes.int32) for b in (lower, upper))

    def cond_fun(c):
        return lt(c[0], c[1])

    def body(c):
        i, u, val = c
        return i + np.int32(1), u, body_fun(i, val)
    body.__name__ = _name(body_fun)
    user_view(body, body_fun, lambda c: [(0, c[0]), ("upper", c[1]), (1, c[2])], "fori_loop")
    return while_loop(cond_fun, body, (lower, upper, init_val))[2]


@api_boundary
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
