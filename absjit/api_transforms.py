"""Public function transformations: ``jvp``, ``linearize``, ``vjp``, ``grad``,
``value_and_grad``, ``jacfwd``, ``jacrev``, ``hessian`` and ``vmap``.

Autodiff traces at the ``concrete`` level by default: a primal that is an actual value
is seen as a ``ConcreteArray``, so Python control flow on values (``if x > 0:``) works
inside ``grad(f)``. Under ``jit`` the primals are ``ShapedArray`` tracers and the same
code raises ``TracerBoolConversionError`` (the strictest level of the composition
wins). ``abstraction="shaped"`` opts into the strict level without ``jit``.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, tree_util
from .core.avals import ShapedArray
from .core.dims import is_dim, unify_shapes, unify_sizes
from .core.shapes import size_of
from .core.levels import get_level
from .core.trace import Tracer, get_aval
from .interpreters import ad, batching
from .interpreters.staging import (DebugInfo, flat_arg_names, fun_signature_info,
                                   positional_names)
from .ops import elementwise as ew
from .ops.structural import iota, reshape, slice_in_dim, transpose
from .ops.values import asarray, asarray_weak
from ._traceback import api_boundary

__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev",
           "hessian", "vmap"]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def _fun_name(fun) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


def _flatten_fun(fun, in_tree, out_box, has_aux=False):
    """``fun`` taking the pytree ``in_tree`` of positional args, as flat -> flat."""
    def flat_fun(*leaves):
        args = tree_util.tree_unflatten(in_tree, list(leaves))
        out = fun(*args)
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"{_fun_name(fun)} was transformed with has_aux=True, so it "
                                "must return a pair (output, auxiliary data); got "
                                f"{type(out).__name__}")
            out, aux = out
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_box.append(("tree", out_tree))
        if has_aux:
            # The auxiliary data leaves as extra outputs, so the transformation hands
            # back their values (never its own tracers); :func:`_split_aux` takes them
            # off again.
            aux_leaves, aux_tree = tree_util.tree_flatten(aux)
            out_box.append(("aux", (len(aux_leaves), aux_tree)))
            return out_leaves + aux_leaves
        return out_leaves
    return flat_fun


def _split_aux(box, leaves, has_aux):
    """``(output leaves, auxiliary pytree or None)`` from a transformed
    :func:`_flatten_fun`'s outputs."""
    if not has_aux:
        return list(leaves), None
    n, aux_tree = _box_get(box, "aux")
    k = len(leaves) - n
    return list(leaves[:k]), tree_util.tree_unflatten(aux_tree, [_as_array(a)
                                                                 for a in leaves[k:]])


def _box_get(box, key):
    for k, v in reversed(box):
        if k == key:
            return v
    raise KeyError(key)


def _as_array(x):
    if isinstance(x, Tracer):
        return x
    return asarray(x)


def _float0_zeros(aval):
    return np.zeros(aval.shape, dtype=dtypes.float0)


def _leaf_aval(leaf, level) -> ShapedArray:
    """The aval a differentiated function sees for ``leaf`` at ``level``."""
    if isinstance(leaf, Tracer):
        aval = leaf.aval
        return aval if level.knows_values else aval.to_shaped()
    return level.abstractify(leaf)


def _leaf_names(fun, args) -> list:
    names = positional_names(fun_signature_info(fun), len(args))
    return flat_arg_names(names, args)


def _check_level(abstraction):
    level = get_level("concrete" if abstraction is None else abstraction)
    return level


# ---------------------------------------------------------------------------
# forward mode
# ---------------------------------------------------------------------------
@api_boundary
def jvp(fun, primals, tangents, has_aux=False, abstraction=None):
    """Jacobian-vector product of ``fun`` at ``primals`` along ``tangents``.

    Parameters
    ----------
    fun : callable
        Function of ``len(primals)`` positional pytree arguments.
    primals, tangents : tuple or list
        Same structure; each tangent has its primal's shape and dtype (``float0``
        or zeros for integer and boolean primals).
    has_aux : bool
        ``fun`` returns ``(output, aux)``; ``aux`` is returned unchanged.
    abstraction : str, optional
        ``"concrete"`` (default: Python may branch on values) or ``"shaped"``.

    Returns
    -------
    (primals_out, tangents_out) or (primals_out, tangents_out, aux)

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.jvp(jnp.sin, (0.0,), (2.0,))
    (Array(0., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to absjit.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("primal and tangent arguments to absjit.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    level = _check_level(abstraction)
    tangents_in = []
    for p, t in zip(p_leaves, t_leaves):
        pa = get_aval(p)
        t_dtype = np.asarray(t).dtype if not isinstance(t, Tracer) else t.aval.dtype
        if not ad._is_differentiable(pa):
            if t_dtype != dtypes.float0:
                raise TypeError(
                    "primal and tangent arguments to absjit.jvp do not match; dtypes must be "
                    "equal, or in case of int/bool primal dtype the tangent dtype must be "
                    f"float0. Got primal dtype {pa.dtype.name} and so expected tangent dtype "
                    f"float0, but got tangent dtype {np.dtype(t_dtype).name} instead.")
            tangents_in.append(None)
            continue
        ta = get_aval(t)
        if not unify_shapes(tuple(pa.shape), tuple(ta.shape), "absjit.jvp"):
            raise ValueError("absjit.jvp called with different primal and tangent shapes; "
                             f"got primal shape {tuple(pa.shape)} and tangent shape "
                             f"{tuple(ta.shape)}")
        if pa.dtype != ta.dtype:
            raise TypeError("primal and tangent arguments to absjit.jvp do not match; dtypes "
                            f"must be equal, got {pa.dtype.name} and {ta.dtype.name}")
        tangents_in.append(t)
    box = []
    flat_fun = _flatten_fun(fun, tree_util.tree_structure(tuple(primals)), box, has_aux)
    p_out, t_out = ad.jvp_flat(flat_fun, p_leaves, tangents_in, concrete=level.knows_values)
    out_tree = _box_get(box, "tree")
    p_out, aux = _split_aux(box, p_out, has_aux)
    t_out = t_out[:len(p_out)]
    p_out = [_as_array(p) for p in p_out]
    t_res = []
    for p, t in zip(p_out, t_out):
        aval = get_aval(p).to_shaped()
        if not ad._is_differentiable(aval):
            t_res.append(_float0_zeros(aval))
        elif t is None:
            t_res.append(ad.zeros_like_aval(aval))
        else:
            t_res.append(_as_array(t))
    res = (tree_util.tree_unflatten(out_tree, p_out), tree_util.tree_unflatten(out_tree, t_res))
    return res + (aux,) if has_aux else res


def _linearize(fun, primals, has_aux, abstraction, transform):
    leaves, in_tree = tree_util.tree_flatten(tuple(primals))
    level = _check_level(abstraction)
    avals = [_leaf_aval(x, level) for x in leaves]
    names = _leaf_names(fun, tuple(primals))
    debug = DebugInfo.of(fun, names + [f"tangent of {n}" for n in names], transform)
    box = []
    flat_fun = _flatten_fun(fun, in_tree, box, has_aux)
    lin, mask = ad.linearize_flat(flat_fun, leaves, avals, debug)
    return lin, mask, in_tree, avals, box


@api_boundary
def linearize(fun, *primals, has_aux=False, abstraction=None):
    """``fun(*primals)`` and a function computing its JVP at ``primals``.

    The primal computation runs once; the returned ``f_jvp(*tangents)`` evaluates only
    the linear part.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> y, f_jvp = absjit.linearize(jnp.sin, 0.0)
    >>> f_jvp(2.0)
    Array(2., dtype=float32, weak_type=True)
    """
    lin, mask, in_tree, avals, box = _linearize(fun, primals, has_aux, abstraction,
                                                "linearize")
    out_tree = _box_get(box, "tree")
    out_primals, aux = _split_aux(box, lin.out_primals, has_aux)
    out = tree_util.tree_unflatten(out_tree, [_as_array(p) for p in out_primals])

    @api_boundary
    def f_jvp(*tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
        if t_tree != in_tree:
            raise TypeError(f"linearized function expects tangents with tree structure "
                            f"{in_tree}, got {t_tree}")
        ts = [t for t, m in zip(t_leaves, mask) if m]
        outs = ad.apply_linear(lin, ts)
        res = []
        for p, t in zip(out_primals, outs):
            aval = get_aval(p).to_shaped()
            if not ad._is_differentiable(aval):
                res.append(_float0_zeros(aval))
            else:
                res.append(ad.zeros_like_aval(aval) if t is None else t)
        return tree_util.tree_unflatten(out_tree, res)

    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


# ---------------------------------------------------------------------------
# reverse mode
# ---------------------------------------------------------------------------
@api_boundary
def vjp(fun, *primals, has_aux=False, abstraction=None):
    """``fun(*primals)`` and its pullback (vector-Jacobian product).

    Returns
    -------
    (out, pullback) or (out, pullback, aux)
        ``pullback(cotangent)`` takes a pytree like ``out`` and returns a tuple with
        one cotangent per primal (``float0`` zeros for integer primals).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> y, pullback = absjit.vjp(jnp.sin, 0.0)
    >>> pullback(1.0)
    (Array(1., dtype=float32, weak_type=True),)
    """
    return _vjp(fun, primals, has_aux, abstraction, "vjp")


def _vjp(fun, primals, has_aux, abstraction, transform):
    lin, mask, in_tree, avals, box = _linearize(fun, primals, has_aux, abstraction, transform)
    out_tree = _box_get(box, "tree")
    out_primals, aux = _split_aux(box, lin.out_primals, has_aux)
    out_primals = [_as_array(p) for p in out_primals]
    n_aux = len(lin.out_primals) - len(out_primals)
    out = tree_util.tree_unflatten(out_tree, out_primals)

    @api_boundary
    def pullback(ct):
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"Tree structure of cotangent input {ct_tree}, does not match "
                            f"structure of primal output {out_tree}.")
        cts = []
        for c, p in zip(ct_leaves, out_primals):
            pa, ca = get_aval(p), get_aval(c)
            if ad._is_differentiable(pa) and not unify_shapes(tuple(ca.shape),
                                                              tuple(pa.shape), "vjp"):
                raise ValueError(f"Shape of cotangent input to vjp pullback function "
                                 f"{tuple(ca.shape)} must be the same as the shape of "
                                 f"corresponding primal input {tuple(pa.shape)}.")
            cts.append(c if ad._is_differentiable(pa) else None)
        cts_in = ad.backward_pass(lin, cts + [None] * n_aux)  # (no cotangent for aux)
        it = iter(cts_in)
        res = []
        for aval, m in zip(avals, mask):
            shaped = aval.to_shaped()
            if not m:
                res.append(_float0_zeros(shaped))
                continue
            c = next(it)
            if c is None:
                c = ad.zeros_like_aval(shaped)
            elif get_aval(c).dtype != shaped.dtype:
                c = ew.convert_element_type(c, shaped.dtype, shaped.weak_type)
            res.append(c)
        return tree_util.tree_unflatten(in_tree, res)

    return (out, pullback, aux) if has_aux else (out, pullback)


def _with_args_fixed(fun, args, nums, kwargs=None):
    """``fun`` as a function of the arguments at positions ``nums`` only; the others
    (and ``kwargs``) stay as given in ``args``."""
    kwargs = kwargs or {}

    def partial_fun(*dyn):
        full = list(args)
        for i, d in zip(nums, dyn):
            full[i] = d
        return fun(*full, **kwargs)
    partial_fun.__name__ = _fun_name(fun)
    partial_fun.__wrapped__ = fun
    return partial_fun


def _argnums_tuple(argnums, nargs, fn_name):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for i in nums:
        if not isinstance(i, (int, np.integer)) or not -nargs <= i < nargs:
            raise ValueError(f"argnums {argnums!r} is out of range for {fn_name} called "
                             f"with {nargs} positional arguments")
    return single, tuple(int(i) % nargs for i in nums)


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=(), abstraction=None):
    """A function returning ``(fun(*args), gradient)``; see :func:`grad`.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.value_and_grad(lambda x: x ** 2)(3.0)
    (Array(9., dtype=float32, weak_type=True), Array(6., dtype=float32, weak_type=True))
    """
    name = _fun_name(fun)
    if reduce_axes:
        raise NotImplementedError("grad: reduce_axes is not supported (jax removed it)")
    if isinstance(abstraction, bool):  # the old positional place of holomorphic
        raise TypeError("grad: abstraction must be a level name or None, got a bool; pass "
                        "holomorphic= by keyword")

    @api_boundary
    def value_and_grad_f(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), name)
        for i in nums:
            for leaf in tree_util.tree_leaves(args[i]):
                dt = get_aval(leaf).dtype
                if holomorphic:
                    if dt.kind != "c":
                        raise TypeError("grad with holomorphic=True requires inputs with "
                                        f"complex dtype, but got {dt.name}.")
                    continue
                if allow_int and dt.kind in "iub":
                    continue
                if not (dt.kind in "fc" or ad._is_bf16(dt)):
                    raise TypeError(
                        "grad requires real- or complex-valued inputs (input dtype that is a "
                        f"sub-dtype of np.inexact), but got {dt.name}. If you want to use "
                        "Boolean- or integer-valued inputs, use vjp or set allow_int to True.")

        partial_fun = _with_args_fixed(fun, args, nums, kwargs)
        dyn_args = tuple(args[i] for i in nums)
        res = _vjp(partial_fun, dyn_args, has_aux, abstraction, "grad")
        out, pullback = res[0], res[1]
        leaves = tree_util.tree_leaves(out)
        if len(leaves) != 1:
            raise TypeError(f"Gradient only defined for scalar-output functions. {name} "
                            f"returned a pytree with {len(leaves)} leaves.")
        aval = get_aval(leaves[0])
        if aval.shape != ():
            raise TypeError("Gradient only defined for scalar-output functions. Output had "
                            f"shape: {tuple(aval.shape)}.")
        if holomorphic:
            if aval.dtype.kind != "c":
                raise TypeError("grad with holomorphic=True requires outputs with complex "
                                f"dtype, but got {aval.dtype.name}.")
        elif aval.dtype.kind != "f" and not ad._is_bf16(aval.dtype):
            raise TypeError(
                "grad requires real-valued outputs (output dtype that is a sub-dtype of "
                f"np.floating), but got {aval.dtype.name}. For differentiation of functions "
                "with integer or complex outputs, use absjit.vjp directly.")
        one = asarray_weak(1, aval.dtype, aval.weak_type)
        grads = pullback(tree_util.tree_unflatten(tree_util.tree_structure(out), [one]))
        g = grads[0] if single else tuple(grads)
        if has_aux:
            return (out, res[2]), g
        return out, g

    value_and_grad_f.__name__ = f"value_and_grad({name})"
    value_and_grad_f.__wrapped__ = fun
    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=(),
         abstraction=None):
    """The gradient of the scalar function ``fun`` with respect to ``args[argnums]``.

    Parameters
    ----------
    fun : callable
        Returns a scalar float (or ``(scalar, aux)`` with ``has_aux``).
    argnums : int or tuple of int
        Which positional arguments to differentiate (pytrees allowed).
    has_aux : bool
        ``fun`` returns ``(output, aux)``; the gradient function returns ``(g, aux)``.
    holomorphic : bool
        ``fun`` is holomorphic: complex inputs and output, and the result is the
        complex derivative.
    allow_int : bool
        Integer and bool inputs are allowed (their gradients are ``float0`` zeros).
    reduce_axes : tuple
        Only ``()`` (jax no longer supports it).
    abstraction : str, optional
        Level of the primals while tracing: ``"concrete"`` by default, so Python may
        branch on values; ``"shaped"`` is strict, like ``jit``.

    Examples
    --------
    >>> import absjit
    >>> def f(x):
    ...     return x ** 2 if x > 0 else -x
    >>> absjit.grad(f)(3.0)
    Array(6., dtype=float32, weak_type=True)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes,
                        abstraction)

    @api_boundary
    def grad_f(*args, **kwargs):
        (out, g) = vg(*args, **kwargs)
        if has_aux:
            return g, out[1]
        return g

    grad_f.__name__ = f"grad({_fun_name(fun)})"
    grad_f.__wrapped__ = fun
    return grad_f


# ---------------------------------------------------------------------------
# Jacobians
# ---------------------------------------------------------------------------
def _eye(n, dtype):
    """The ``n x n`` identity of ``dtype`` (``n`` a symbolic size), staged."""
    idt = dtypes.default_int()
    same = ew.eq(iota(idt, (n, n), 0), iota(idt, (n, n), 1))
    return ew.convert_element_type(same, dtype, False)


def _std_basis(leaves):
    """Rows of the identity for the flattened inputs, split per leaf."""
    sizes = [size_of(get_aval(x).shape) for x in leaves]
    total = sum(sizes)
    out, off = [], 0
    for x, s in zip(leaves, sizes):
        a = get_aval(x)
        if is_dim(total):  # ranked: the identity of a symbolic size, staged
            piece = slice_in_dim(_eye(total, a.dtype), off, off + s, axis=1)
            out.append(reshape(piece, (total,) + tuple(a.shape)))
        else:
            piece = np.eye(total, dtype=a.dtype)[:, off:off + s]
            out.append(np.ascontiguousarray(piece).reshape((total,) + tuple(a.shape)))
        off += s
    return out, total


def _split_jac(batched, in_leaves, in_shapes_first):
    """``batched`` has a leading axis over flattened inputs (or outputs)."""
    res, off = [], 0
    for x in in_leaves:
        a = get_aval(x)
        s = size_of(a.shape)
        piece = slice_in_dim(batched, off, off + s, axis=0)
        res.append(reshape(piece, tuple(a.shape) + tuple(get_aval(batched).shape[1:])))
        off += s
    return res


def _move_front_to_back(x, nfront):
    nd = len(get_aval(x).shape)
    perm = tuple(range(nfront, nd)) + tuple(range(nfront))
    return transpose(x, perm)


def jacfwd(fun, argnums=0, has_aux=False, abstraction=None):
    """The Jacobian of ``fun`` by forward mode (one JVP per input element, batched).

    The result for output leaf of shape ``O`` and input leaf of shape ``I`` has shape
    ``O + I``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.jacfwd(lambda x: x * 2.0)(jnp.ones(2))
    Array([[2., 0.],
           [0., 2.]], dtype=float32)
    """
    name = _fun_name(fun)

    @api_boundary
    def jacfun(*args):
        single, nums = _argnums_tuple(argnums, len(args), name)
        dyn = tuple(args[i] for i in nums)
        in_leaves, in_tree = tree_util.tree_flatten(dyn)

        partial_fun = _with_args_fixed(fun, args, nums)

        basis, total = _std_basis(in_leaves)

        def push(*t_leaves):
            tangents = tree_util.tree_unflatten(in_tree, list(t_leaves))
            res = jvp(partial_fun, dyn, tangents, has_aux=has_aux, abstraction=abstraction)
            return res[1] if not has_aux else (res[1], res[2])

        outs = vmap(push)(*basis)
        if has_aux:
            outs, aux = outs
            aux = tree_util.tree_map(lambda a: a[0], aux)
        out_leaves, out_tree = tree_util.tree_flatten(outs)
        per_out = []
        for o in out_leaves:
            pieces = _split_jac(o, in_leaves, True)
            pieces = [_move_front_to_back(p, len(get_aval(x).shape))
                      for p, x in zip(pieces, in_leaves)]
            tree = tree_util.tree_unflatten(in_tree, pieces)
            per_out.append(tree[0] if single else tree)
        jac = tree_util.tree_unflatten(out_tree, per_out)
        return (jac, aux) if has_aux else jac

    jacfun.__name__ = f"jacfwd({name})"
    return jacfun


def jacrev(fun, argnums=0, has_aux=False, abstraction=None):
    """The Jacobian of ``fun`` by reverse mode (one VJP per output element, batched).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.jacrev(lambda x: x * 2.0)(jnp.ones(2))
    Array([[2., 0.],
           [0., 2.]], dtype=float32)
    """
    name = _fun_name(fun)

    @api_boundary
    def jacfun(*args):
        single, nums = _argnums_tuple(argnums, len(args), name)
        dyn = tuple(args[i] for i in nums)

        partial_fun = _with_args_fixed(fun, args, nums)

        res = _vjp(partial_fun, dyn, has_aux, abstraction, "jacrev")
        out, pullback = res[0], res[1]
        out_leaves, out_tree = tree_util.tree_flatten(out)
        basis, total = _std_basis(out_leaves)

        def pull(*ct_leaves):
            return pullback(tree_util.tree_unflatten(out_tree, list(ct_leaves)))

        cts = vmap(pull)(*basis)  # tuple over dyn args, leading axis over outputs
        in_leaves_b, in_tree = tree_util.tree_flatten(cts)
        # per input leaf: (total, *in_shape) -> split rows per output leaf
        per_out = [[] for _ in out_leaves]
        for c in in_leaves_b:
            pieces = _split_jac(c, out_leaves, True)
            for k, p in enumerate(pieces):
                per_out[k].append(p)
        trees = []
        for pieces in per_out:
            tree = tree_util.tree_unflatten(in_tree, pieces)
            trees.append(tree[0] if single else tree)
        jac = tree_util.tree_unflatten(out_tree, trees)
        return (jac, res[2]) if has_aux else jac

    jacfun.__name__ = f"jacrev({name})"
    return jacfun


def hessian(fun, argnums=0, abstraction=None):
    """The Hessian of the scalar function ``fun``: ``jacfwd(jacrev(fun))``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.hessian(lambda x: jnp.sum(x ** 3))(jnp.array([1.0, 2.0]))
    Array([[ 6.,  0.],
           [ 0., 12.]], dtype=float32)
    """
    return jacfwd(jacrev(fun, argnums, abstraction=abstraction), argnums,
                  abstraction=abstraction)


# ---------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------
def _broadcast_prefix(prefix, tree, what: str, fn_name: str) -> list:
    """One entry of ``prefix`` per leaf of ``tree`` (``prefix`` is a tree prefix)."""
    out: list = []

    def walk(p, t):
        if p is None or isinstance(p, (int, np.integer)):
            n = len(tree_util.tree_leaves(t))
            out.extend([None if p is None else int(p)] * n)
            return
        p_leaves, p_tree = tree_util.tree_flatten(p, is_leaf=lambda x: x is None)
        t_tree = tree_util.tree_structure(t)
        if tree_util.treedef_is_leaf(p_tree) or t_tree.kind != p_tree.kind \
                or len(p_tree.children) != len(t_tree.children) \
                or (t_tree.kind in (t_tree.DICT, t_tree.NAMEDTUPLE, t_tree.CUSTOM)
                    and t_tree.data != p_tree.data):
            raise ValueError(
                f"vmap {what} specification must be a tree prefix of the corresponding "
                f"value, got specification {prefix!r} for value tree {tree_util.tree_structure(tree)} "
                f"(in vmap of {fn_name}).")
        if isinstance(t, dict):
            for k in sorted(t):
                walk(p[k], t[k])
        elif isinstance(t, (tuple, list)):
            for pc, tc in zip(p, t):
                walk(pc, tc)
        else:
            p_children = tree_util.tree_flatten(p, is_leaf=lambda x: x is None)[0]
            t_children = tree_util._REGISTRY[type(t)][0](t)[0]  # noqa: SLF001
            for pc, tc in zip(p_children, t_children):
                walk(pc, tc)

    walk(prefix, tree)
    return out


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None, spmd_axis_name=None):
    """Vectorise ``fun`` over a mapped axis of its arguments.

    Parameters
    ----------
    fun : callable
    in_axes : int, None, or a pytree prefix of the arguments (tuple over positional
        arguments)
        Which axis of each argument is mapped; ``None`` broadcasts the argument.
        Negative axes count from the end.
    out_axes : int, None, or a pytree prefix of the output
        Where the mapped axis appears in each output.
    axis_size : int, optional
        Needed only when no argument is mapped.
    axis_name : hashable, optional
        A name for the mapped axis: collectives (``lax.psum``, ``lax.pmean``,
        ``lax.all_gather``, ``lax.axis_index`` …) inside ``fun`` combine the members of
        the axis they name.
    spmd_axis_name : optional
        Accepted for JAX compatibility; absjit runs on one device and ignores it.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.vmap(lambda x, y: x * y, in_axes=(0, None))(jnp.arange(3.0), 2.0)
    Array([0., 2., 4.], dtype=float32)
    """
    name = _fun_name(fun)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @api_boundary
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                f"the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)} (in vmap of {name}).")
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        axes = _broadcast_prefix(in_axes, args, "in_axes", name) + \
            [0] * len(tree_util.tree_leaves(kwargs))
        names = _leaf_names(fun, args) + [k for k, v in sorted(kwargs.items())
                                          for _ in tree_util.tree_leaves(v)]
        sizes, dims = {}, []
        for leaf, ax, nm in zip(leaves, axes, names):
            if ax is None:
                dims.append(None)
                continue
            shape = get_aval(leaf).shape
            if not -len(shape) <= ax < max(len(shape), 1) or not shape:
                raise ValueError(
                    f"vmap was requested to map its argument along axis {ax}, which implies "
                    f"that its rank should be at least {ax + 1 if ax >= 0 else -ax}, but is "
                    f"only {len(shape)} (its shape is {tuple(shape)}); argument {nm!r} of "
                    f"{name}.")
            ax %= len(shape)
            dims.append(ax)
            sizes[nm] = (shape[ax], tuple(shape), ax)
        mapped = [s for s, _, _ in sizes.values()]
        if axis_size is not None:
            mapped.append(int(axis_size))
        # Sizes of the ranked level are equal when the program says so: vmap does.
        if not all(unify_sizes(s, mapped[0], f"vmap of {name}") for s in mapped[1:]):
            lines = "\n".join(f"  * argument {nm} has shape {shp} and axis {ax} is to be "
                              f"mapped" for nm, (s, shp, ax) in sizes.items())
            if axis_size is not None:
                lines += f"\n  * axis_size is {axis_size}"
            raise ValueError("vmap got inconsistent sizes for array axes to be mapped "
                             f"(in vmap of {name}):\n{lines}")
        if not mapped:
            raise ValueError(f"vmap of {name} must have at least one non-None value in "
                             "in_axes, or an axis_size")
        size = mapped[0]
        box = []

        def flat_fun(*flat):
            a, kw = tree_util.tree_unflatten(in_tree, list(flat))
            out = fun(*a, **kw)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            box.append((out, out_tree))
            return out_leaves

        outs, odims = batching.batch_flat(flat_fun, leaves, dims, size, axis_name)
        out_struct, out_tree = box[-1]
        o_axes = _broadcast_prefix(out_axes, out_struct, "out_axes", name)
        res = []
        for o, d, oa in zip(outs, odims, o_axes):
            if oa is None:
                if d is not None:
                    raise ValueError(f"vmap of {name} has a mapped output but out_axes is "
                                     "None for it")
                res.append(_as_array(o))
                continue
            rank = len(get_aval(o).shape) + (d is None)
            if not -rank <= oa < rank:
                raise ValueError(f"vmap out_axes {oa} is out of bounds for an output of "
                                 f"rank {rank} (in vmap of {name})")
            res.append(batching.matchaxis(o, d, oa % rank, size))
        return tree_util.tree_unflatten(out_tree, res)

    vmap_f.__name__ = f"vmap({name})"
    vmap_f.__wrapped__ = fun
    return vmap_f
