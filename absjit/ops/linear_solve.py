"""``custom_linear_solve``: a linear solve whose derivatives are defined implicitly.

``custom_linear_solve[const_lengths matvec vecmat solve transpose_solve] *consts *b``

The four params are constant-free sub-jaxprs (``vecmat`` and ``transpose_solve`` are
``None`` when there is no transpose solve). Each takes the operands it closed over, then
a vector with the leaves of ``b``: ``matvec`` (A) and ``vecmat`` (Aᵀ) return a vector,
``solve`` and ``transpose_solve`` a solution, followed by their auxiliary outputs with
``has_aux``. ``const_lengths`` counts the closed-over operands of each, in that order;
the leaves of ``b`` follow them.

Evaluating the equation runs ``solve`` alone: its fusion kind is a call on the solve's
operands, so the compiling backends inline it before planning. The derivative rules
never look inside ``solve``:

* JVP: ``x = solve(b)`` and ``dx = solve(db - (dA) x)``, the second another equation of
  this primitive, linear in its right-hand side (``(dA) x`` is the JVP of ``matvec``
  with respect to the values it closes over, at ``x``);
* transpose: the cotangent of ``b`` solves the transposed system, ``Aᵀ ct_b = ct_x``,
  an equation with ``matvec``/``vecmat`` and ``solve``/``transpose_solve`` swapped. So a
  ``while_loop`` inside the solver is never transposed;
* batching: ``x`` and ``b`` share one batching pattern, grown until all four maps agree
  on it (in the transposed system they swap roles).
"""
from __future__ import annotations

import functools

import numpy as np

from .. import tree_util
from .._traceback import api_boundary
from ..core.avals import ShapedArray
from ..core.fusion import Call, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, batching
from .call import eval_jaxpr_numpy, hoist_consts
from ._control_flow_util import _eval, _shaped, _trace

__all__ = ["custom_linear_solve_p", "custom_linear_solve"]

_ROLES = ("matvec", "vecmat", "solve", "transpose_solve")


def _solve_operands(params, n):
    """Positions of the operands ``solve`` takes: its closed-over values, then ``b``."""
    nm, nv, ns, nt = params["const_lengths"]
    start = nm + nv
    return list(range(start, start + ns)) + list(range(start + ns + nt, n))


custom_linear_solve_p = Primitive("custom_linear_solve", multiple_results=True,
                                  param_order=("const_lengths",) + _ROLES)
def_fusion(custom_linear_solve_p, Call("solve", _solve_operands))


def _split(args, const_lengths):
    """``({role: its closed-over operands}, leaves of b)``."""
    groups, k = {}, 0
    for role, n in zip(_ROLES, const_lengths):
        groups[role] = list(args[k:k + n])
        k += n
    return groups, list(args[k:])


def _same_type(a, b) -> bool:
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


def _linear_solve_abstract(*avals, const_lengths, **jaxprs):
    groups, b = _split(avals, const_lengths)
    if len(const_lengths) != 4 or sum(const_lengths) > len(avals):
        raise TypeError(f"custom_linear_solve: const_lengths {const_lengths} do not fit "
                        f"{len(avals)} operands")
    for role in _ROLES:
        j = jaxprs[role]
        if j is None:
            if groups[role] or role in ("matvec", "solve"):
                raise TypeError(f"custom_linear_solve: {role} is missing")
            continue
        ins = groups[role] + b
        if len(j.in_avals) != len(ins) or not all(map(_same_type, ins, j.in_avals)):
            raise TypeError(f"custom_linear_solve: {role} takes "
                            f"({', '.join(a.str_short() for a in j.in_avals)}), got "
                            f"({', '.join(a.str_short() for a in ins)})")
        outs = j.out_avals
        if len(outs) < len(b) or not all(map(_same_type, outs[:len(b)], b)):
            raise TypeError(f"custom_linear_solve: {role} returns "
                            f"({', '.join(a.str_short() for a in outs)}) for a right-hand "
                            f"side of type ({', '.join(a.str_short() for a in b)})")
    # As in JAX, the solution has the types of b; auxiliary outputs follow.
    x = [ShapedArray(a.shape, a.dtype, a.weak_type) for a in b]
    return x + [a.to_shaped() for a in jaxprs["solve"].out_avals[len(b):]]


def _linear_solve_impl(*args, const_lengths, solve, **_):
    groups, b = _split(args, const_lengths)
    return eval_jaxpr_numpy(solve.jaxpr, [], *groups["solve"], *b)


abstract_eval_rules[custom_linear_solve_p] = _linear_solve_abstract
impl_rules[custom_linear_solve_p] = _linear_solve_impl


# ---------------------------------------------------------------------------
# the public function
# ---------------------------------------------------------------------------
def _shape_checked(fun, name, b_shapes, has_aux):
    """``fun`` raising ValueError (as JAX does) when its solution's leaves are not
    shaped like ``b``'s."""
    def checked(x):
        out = fun(x)
        y = out
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise ValueError(f"{name}() returned {type(out).__name__}, but a pair "
                                 "(solution, auxiliary output) was expected because "
                                 "has_aux=True")
            y = out[0]
        got = [np.shape(leaf) for leaf in tree_util.tree_leaves(y)]
        if got != b_shapes:
            raise ValueError(f"{name}() output shapes must match b, got {got} and "
                             f"{b_shapes}")
        return out
    return checked


def _check_tree(name, out_tree, b_tree, has_aux):
    if has_aux:
        children = tree_util.treedef_children(out_tree)
        if len(children) != 2:
            raise ValueError(f"{name}() produced a pytree with structure {out_tree}, but "
                             "a pair (solution, auxiliary output) was expected because "
                             "has_aux=True")
        out_tree = children[0]
    if out_tree != b_tree:
        raise TypeError(f"{name}() output pytree structure must match b, got {out_tree} "
                        f"and {b_tree}.")


def _check_dtypes(name, closed, b_avals):
    for got, want in zip(closed.out_avals, b_avals):
        if got.dtype != want.dtype:
            raise TypeError(f"{name}() output dtypes must match b, got {got.dtype.name} "
                            f"where b has {want.dtype.name}")


def _transposed(matvec_jaxpr, matvec_consts, b_tree):
    """``vecmat``: the transpose of the linear map ``matvec_jaxpr`` (with respect to its
    vector operands), as a function on pytrees shaped like ``b``."""
    nc = len(matvec_consts)
    n = len(matvec_jaxpr.in_avals) - nc
    t = ad.transpose_jaxpr(matvec_jaxpr, [False] * nc + [True] * n)

    def vecmat(y):
        leaves, tree = tree_util.tree_flatten(y)
        if tree != b_tree:
            raise TypeError(f"vecmat: argument structure {tree} does not match b's "
                            f"{b_tree}")
        return tree_util.tree_unflatten(b_tree, _eval(t, *matvec_consts, *leaves))
    return vecmat


@api_boundary
def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """Solve ``matvec(x) == b`` with ``solve``, differentiated implicitly.

    ``x = solve(matvec, b)``; derivatives do not differentiate through ``solve``
    (which may use ``while_loop``): forward mode solves ``matvec(dx) == db - dA(x)``
    with ``solve`` again, where ``dA`` is the derivative of ``matvec`` with respect to
    the arrays it closes over; reverse mode solves the transposed system with
    ``transpose_solve(vecmat, ct)``, ``vecmat`` being the transpose of ``matvec``.

    Parameters
    ----------
    matvec : callable
        A linear function; ``matvec(x)`` has the structure and shapes of ``b``.
    b : pytree of arrays
        The right-hand side.
    solve : callable
        ``solve(matvec, b)`` returns ``x`` (structured like ``b``).
    transpose_solve : callable, optional
        ``transpose_solve(vecmat, b)`` solves the transposed system; needed for
        reverse mode unless ``symmetric``.
    symmetric : bool
        ``matvec`` is its own transpose: ``vecmat`` is ``matvec`` and, when
        ``transpose_solve`` is not given, ``solve`` serves for it.
    has_aux : bool
        ``solve`` (and ``transpose_solve``) return ``(x, aux)``; so does this function.
        ``aux`` has zero derivative.

    Returns
    -------
    x, or ``(x, aux)`` with ``has_aux``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> from absjit import lax
    >>> a = jnp.array([[2.0, 1.0], [1.0, 3.0]])
    >>> solve = lambda matvec, b: jnp.linalg.solve(a, b)
    >>> lax.custom_linear_solve(lambda x: a @ x, jnp.array([3.0, 5.0]), solve,
    ...                         symmetric=True)
    Array([0.8, 1.4], dtype=float32)
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, b_tree = tree_util.tree_flatten(b)
    b_shapes = [np.shape(x) for x in b_leaves]
    avals = [_shaped(x) for x in b_leaves]
    args_tree = tree_util.tree_structure((b,))
    what = "custom_linear_solve"

    def trace(fun, name, aux):
        closed, consts, out_tree = _trace(_shape_checked(fun, name, b_shapes, aux), avals,
                                          args_tree, what)
        _check_tree(name, out_tree, b_tree, aux)
        _check_dtypes(name, closed, avals)
        return closed, consts, out_tree

    mv, mv_consts, _ = trace(matvec, "matvec", False)
    sv, sv_consts, out_tree = trace(functools.partial(solve, matvec), "solve", has_aux)
    if transpose_solve is None:
        vm = ts = None
        vm_consts = ts_consts = []
    else:
        if symmetric:
            vecmat, vm, vm_consts = matvec, mv, mv_consts
        else:
            vecmat = _transposed(mv, mv_consts, b_tree)
            vm, vm_consts, _ = trace(vecmat, "vecmat", False)
        ts, ts_consts, _ = trace(functools.partial(transpose_solve, vecmat),
                                 "transpose_solve", has_aux)
    groups = (mv_consts, vm_consts, sv_consts, ts_consts)
    outs = custom_linear_solve_p.bind(
        *[c for g in groups for c in g], *b_leaves,
        const_lengths=tuple(len(g) for g in groups),
        matvec=mv, vecmat=vm, solve=sv, transpose_solve=ts)
    return tree_util.tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------
# derivatives
# ---------------------------------------------------------------------------
def _linear_solve_jvp(primals, tangents, *, const_lengths, **jaxprs):
    from .elementwise import neg, sub
    x = custom_linear_solve_p.bind(*primals, const_lengths=const_lengths, **jaxprs)
    groups, b = _split(primals, const_lengths)
    dgroups, db = _split(tangents, const_lengths)
    nb = len(b)
    rhs = list(db)
    if any(t is not None for t in dgroups["matvec"]):
        # (dA) x: the JVP of matvec in the values it closes over, at the solution.
        matvec = jaxprs["matvec"]
        _, dax = ad.jvp_flat(lambda *a: _eval(matvec, *a), groups["matvec"] + x[:nb],
                             dgroups["matvec"] + [None] * nb)
        rhs = [r if d is None else (neg(d) if r is None else sub(r, d))
               for r, d in zip(rhs, dax)]
    if all(r is None for r in rhs):
        return x, [None] * len(x)
    rhs = [ad.instantiate_zeros(r, p) for r, p in zip(rhs, x[:nb])]
    dx = custom_linear_solve_p.bind(*primals[:sum(const_lengths)], *rhs,
                                    const_lengths=const_lengths, **jaxprs)
    return x, list(dx[:nb]) + [None] * (len(x) - nb)  # aux outputs: zero derivative


_linear_solve_jvp.symbolic_zeros = True
ad.jvp_rules[custom_linear_solve_p] = _linear_solve_jvp


def _linear_solve_transpose(cts, *args, const_lengths, **jaxprs):
    if jaxprs["transpose_solve"] is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    groups, b = _split(args, const_lengths)
    if any(ad.is_undefined_primal(x) for g in groups.values() for x in g):
        raise NotImplementedError("custom_linear_solve: transposing with respect to the "
                                  "values matvec or solve close over is not supported")
    nb = len(b)
    ct_x = [ad.zeros_like_aval(p.aval if ad.is_undefined_primal(p) else _shaped(p))
            if c is None else c for c, p in zip(cts[:nb], b)]
    nm, nv, ns, nt = const_lengths
    ct_b = custom_linear_solve_p.bind(
        *groups["vecmat"], *groups["matvec"], *groups["transpose_solve"], *groups["solve"],
        *ct_x, const_lengths=(nv, nm, nt, ns), matvec=jaxprs["vecmat"],
        vecmat=jaxprs["matvec"], solve=jaxprs["transpose_solve"],
        transpose_solve=jaxprs["solve"])
    return [None] * sum(const_lengths) + list(ct_b[:nb])


ad.transpose_rules[custom_linear_solve_p] = _linear_solve_transpose


# ---------------------------------------------------------------------------
# batching
# ---------------------------------------------------------------------------
def _linear_solve_batch(vals, dims, *, const_lengths, **jaxprs):
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    vals = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    groups, b = _split(vals, const_lengths)
    group_bat, b_bat0 = _split([d is not None for d in dims], const_lengths)
    nb = len(b)
    present = [r for r in _ROLES if jaxprs[r] is not None]

    def batched(role, v_bat, force=None):
        flags = group_bat[role] + v_bat
        return batching.batch_jaxpr(jaxprs[role], size, [0 if f else None for f in flags],
                                    force)

    # One pattern for x and b (the transposed system swaps them): batched wherever b is,
    # or wherever any of the four maps makes its vector result batched.
    v_bat = list(b_bat0)
    for _ in range(nb + 1):
        new = list(v_bat)
        for role in present:
            _, out_bat = batched(role, v_bat)
            new = [p or q for p, q in zip(new, out_bat[:nb])]
        if new == v_bat:
            break
        v_bat = new
    new_jaxprs, new_groups, aux_bat = {}, {}, []
    for role in _ROLES:
        if jaxprs[role] is None:
            new_jaxprs[role], new_groups[role] = None, []
            continue
        n_aux = len(jaxprs[role].out_avals) - nb
        closed, out_bat = batched(role, v_bat, v_bat + [False] * n_aux)
        if role == "solve":
            aux_bat = out_bat[nb:]
        closed, consts = hoist_consts(closed)
        new_jaxprs[role], new_groups[role] = closed, consts + groups[role]
    b = [batching.bdim_at_front(x, None, size) if f and not f0 else x
         for x, f, f0 in zip(b, v_bat, b_bat0)]
    outs = custom_linear_solve_p.bind(
        *[c for r in _ROLES for c in new_groups[r]], *b,
        const_lengths=tuple(len(new_groups[r]) for r in _ROLES), **new_jaxprs)
    return outs, [0 if f else None for f in v_bat + list(aux_bat)]


batching.batch_rules[custom_linear_solve_p] = _linear_solve_batch
