"""``custom_jvp`` and ``custom_vjp``: user-defined derivatives.

A decorated function is traced to a jaxpr and staged as one equation that carries the
user's rule as a param:

``custom_jvp_call[call_jaxpr jvp]``
    The JVP trace calls ``jvp(primals, tangents)`` instead of differentiating
    ``call_jaxpr``; every other transform evaluates ``call_jaxpr``.
``custom_vjp_call[call_jaxpr fwd bwd]``
    Under differentiation ``fwd`` runs on the primals and the tangent output is a
    ``custom_lin`` equation, linear in the tangents, whose transpose calls ``bwd``.
"""
from __future__ import annotations

import contextvars
import functools

from . import tree_util
from .core.jaxpr import eval_jaxpr
from .core.fusion import Call, def_fusion
from .core.primitive import Primitive, abstract_eval_rules, impl_rules
from .core.dims import is_dim, same_shape
from .core.avals import ConcreteArray
from .core.trace import EVAL_MAIN, _top_main, get_aval
from .interpreters import ad, batching
from .ops.call import eval_jaxpr_numpy, hoist_consts
from .ops.values import filled_like
from .api_transforms import vmap

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient"]


# While a custom rule runs, the traces of the primal functions made by the call that
# invoked it, by (function, static arguments, input structure and avals): a rule that
# calls the function again (``return f(x), ...``) reuses the trace instead of running
# the Python function once more (JAX runs it once under ``grad`` too). Kept only for the
# duration of the rule, so values the function closes over cannot go stale.
_RULE_TRACES: contextvars.ContextVar = contextvars.ContextVar("absjit_rule_traces",
                                                             default=None)


def _trace_key(owner, static, args):
    leaves, in_tree = tree_util.tree_flatten(tuple(args))
    avals = tuple(get_aval(x).to_shaped() for x in leaves)
    return (id(owner), tuple(id(v) for v in static), in_tree, avals)


def _trace_reusing(owner, static, fun, args):
    """``_trace_flat(fun, args)``, from the invoking call's trace when a rule of
    ``owner`` is running."""
    traces = _RULE_TRACES.get()
    key = _trace_key(owner, static, args) if traces is not None else None
    if key is not None and key in traces:
        closed, consts, _, in_tree, out_tree = traces[key]
        return closed, consts, tree_util.tree_leaves(tuple(args)), in_tree, out_tree
    return _trace_flat(fun, args)


def _running_rule(owner, static, args, traced):
    """A context in which ``owner``'s rule may reuse ``traced`` (see _RULE_TRACES)."""
    traces = dict(_RULE_TRACES.get() or {})
    traces[_trace_key(owner, static, args)] = traced
    return _RULE_TRACES.set(traces)


def _trace_flat(fun, args):
    from .interpreters.staging import DebugInfo, trace_to_jaxpr
    leaves, in_tree = tree_util.tree_flatten(tuple(args))
    box = []

    def flat(*xs):
        out = fun(*tree_util.tree_unflatten(in_tree, list(xs)))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        box.append(out_tree)
        return out_leaves

    # A value known at trace time (grad's primals) stays known, so the function may
    # branch on it in Python, as it may in JAX.
    avals = [a if isinstance(a, ConcreteArray) else a.to_shaped()
             for a in map(get_aval, leaves)]
    closed, _ = trace_to_jaxpr(flat, avals, DebugInfo.of(fun, [], "custom_derivative"))
    closed, consts = hoist_consts(closed)
    return closed, consts, leaves, in_tree, box[-1]


def _jvp_operands(main, leaves):
    """``(trace, primals, tangents)``: ``leaves`` raised to the JVP trace ``main``
    (a tangent is None where the argument is not differentiated)."""
    trace = main.trace_type(main)
    tracers = [trace.full_raise(x) for x in leaves]
    return trace, [t.primal for t in tracers], [t.tangent for t in tracers]


def _call_abstract(*avals, call_jaxpr, **_):
    return [a.to_shaped() for a in call_jaxpr.out_avals]


def _call_impl(*vals, call_jaxpr, **_):
    return eval_jaxpr_numpy(call_jaxpr.jaxpr, [], *vals)


# ---------------------------------------------------------------------------
# custom_jvp
# ---------------------------------------------------------------------------
custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True,
                              param_order=("call_jaxpr",))
abstract_eval_rules[custom_jvp_call_p] = _call_abstract
impl_rules[custom_jvp_call_p] = _call_impl
def_fusion(custom_jvp_call_p, Call("call_jaxpr"))  # compiled code runs the primal


class custom_jvp:
    """A function with a user-defined JVP rule.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> @absjit.custom_jvp
    ... def f(x):
    ...     return jnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), 2.0 * t
    >>> absjit.grad(f)(0.0)
    Array(2., dtype=float32, weak_type=True)
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff("custom_jvp", nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        """Register ``jvp(primals, tangents) -> (primal_out, tangent_out)``; with
        ``nondiff_argnums``, ``jvp(*nondiff_args, primals, tangents)`` where ``primals``
        and ``tangents`` hold the other arguments."""
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp.defjvp: symbolic_zeros=True is not "
                                      "supported by absjit")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """Register one JVP per (differentiable) argument: ``jvps[i](t_i, primal_out,
        *primals)`` is argument ``i``'s contribution to the output tangent (``None``:
        it contributes nothing). The contributions are summed.

        Examples
        --------
        >>> import absjit, absjit.numpy as jnp
        >>> @absjit.custom_jvp
        ... def f(x, y):
        ...     return x * y
        >>> f.defjvps(lambda tx, out, x, y: tx * y, lambda ty, out, x, y: ty * x)
        >>> absjit.grad(f, argnums=(0, 1))(2.0, 3.0)
        (Array(3., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))
        """
        fun, nondiff = self.fun, self.nondiff_argnums

        def jvp(*rule_args):
            static, (primals, tangents) = rule_args[:-2], rule_args[-2:]
            if len(jvps) != len(primals):
                raise TypeError(f"custom_jvp.defjvps of {self.__name__}: got {len(jvps)} "
                                f"rules for {len(primals)} differentiable arguments")
            primal_out = fun(*_merge(nondiff, static, primals))
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                part = rule(t, primal_out, *primals)
                total = part if total is None else tree_util.tree_map(
                    lambda a, b: a + b, total, part)
            if total is None:
                total = tree_util.tree_map(lambda x: filled_like(x, 0), primal_out)
            return primal_out, total
        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self.__name__} "
                                 "using defjvp.")
        args = _bind_args(self.fun, self.__name__, args, kwargs)
        fun, user_jvp, static = self.fun, self.jvp, ()
        if self.nondiff_argnums:
            static, args = _split(self.nondiff_argnums, args, "custom_jvp")
            nondiff = self.nondiff_argnums
            fun = functools.partial(lambda s, *a: self.fun(*_merge(nondiff, s, a)), static)
            user_jvp = functools.partial(lambda s, p, t: self.jvp(*s, p, t), static)
        leaves, in_tree = tree_util.tree_flatten(tuple(args))
        top = _top_main(leaves)
        if top is EVAL_MAIN:
            return fun(*args)  # no transformation: JAX calls the function as it is
        if top.trace_type is ad.JVPTrace:
            return self._jvp_first(top, fun, user_jvp, leaves, in_tree)
        traced = _trace_reusing(self, static, fun, args)
        closed, consts, leaves, in_tree, out_tree = traced
        nconsts = len(consts)

        def flat_jvp(primals, tangents):
            p = tree_util.tree_unflatten(in_tree, list(primals[nconsts:]))
            t = tree_util.tree_unflatten(in_tree, list(tangents[nconsts:]))
            token = _running_rule(self, static, args, traced)
            try:
                po, to = user_jvp(p, t)
            finally:
                _RULE_TRACES.reset(token)
            po_l, po_t = tree_util.tree_flatten(po)
            to_l, to_t = tree_util.tree_flatten(to)
            if po_t != out_tree or to_t != out_tree:
                raise TypeError(f"custom_jvp rule of {self.__name__} must return primal and "
                                f"tangent outputs with the function's structure {out_tree}; "
                                f"got {po_t} and {to_t}")
            return po_l, to_l

        outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=closed, jvp=flat_jvp)
        return tree_util.tree_unflatten(out_tree, outs)

    def _jvp_first(self, main, fun, user_jvp, leaves, in_tree):
        """Differentiated: call the rule on the primals and tangents, without tracing
        the function first (the rule's own call of the function traces it, at the
        primals' level, as in JAX)."""
        trace, primals, tangents = _jvp_operands(main, leaves)
        if all(t is None for t in tangents):
            return self.__call__(*tree_util.tree_unflatten(in_tree, primals))
        tangents = [ad.instantiate_zeros(t, p) for t, p in zip(tangents, primals)]
        po, to = user_jvp(tree_util.tree_unflatten(in_tree, primals),
                          tree_util.tree_unflatten(in_tree, tangents))
        po_l, po_t = tree_util.tree_flatten(po)
        to_l, to_t = tree_util.tree_flatten(to)
        if po_t != to_t:
            raise TypeError(f"custom_jvp rule of {self.__name__} must return primal and "
                            f"tangent outputs with the same structure; got {po_t} and "
                            f"{to_t}")
        outs = [ad.JVPTracer(trace, p, t).full_lower() for p, t in zip(po_l, to_l)]
        return tree_util.tree_unflatten(po_t, outs)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp):
    return jvp(primals, tangents)


ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


def _custom_jvp_call_batch(vals, dims, *, call_jaxpr, jvp):
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    new, _ = batching.batch_jaxpr(call_jaxpr, size, [0] * len(vals),
                                  [True] * len(call_jaxpr.out_avals))

    def batched_jvp(primals, tangents):
        return vmap(lambda p, t: tuple(jvp(list(p), list(t))))(tuple(primals), tuple(tangents))

    outs = custom_jvp_call_p.bind(*vals, call_jaxpr=new, jvp=batched_jvp)
    return outs, [0] * len(outs)


batching.batch_rules[custom_jvp_call_p] = _custom_jvp_call_batch


# ---------------------------------------------------------------------------
# custom_vjp
# ---------------------------------------------------------------------------
custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True,
                              param_order=("call_jaxpr",))
abstract_eval_rules[custom_vjp_call_p] = _call_abstract
impl_rules[custom_vjp_call_p] = _call_impl
def_fusion(custom_vjp_call_p, Call("call_jaxpr"))  # compiled code runs the primal

custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _custom_lin_abstract(*avals, num_res, out_avals, bwd):
    return list(out_avals)


def _custom_lin_impl(*args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


abstract_eval_rules[custom_lin_p] = _custom_lin_abstract
impl_rules[custom_lin_p] = _custom_lin_impl


def _custom_lin_transpose(cts, *args, num_res, out_avals, bwd):
    res = args[:num_res]
    cts_in = bwd(list(res), list(cts))
    return [None] * num_res + list(cts_in)


ad.transpose_rules[custom_lin_p] = _custom_lin_transpose


class custom_vjp:
    """A function with a user-defined VJP: ``fwd(*args) -> (out, residuals)`` and
    ``bwd(residuals, out_cotangent) -> tuple of input cotangents``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> @absjit.custom_vjp
    ... def f(x):
    ...     return jnp.sin(x)
    >>> f.defvjp(lambda x: (f(x), x), lambda x, g: (3.0 * g,))
    >>> absjit.grad(f)(0.0)
    Array(3., dtype=float32, weak_type=True)
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_nondiff("custom_vjp", nondiff_argnums)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Register ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, g)`` (with
        ``nondiff_argnums``: ``bwd(*nondiff_args, residuals, g)``, returning cotangents
        of the other arguments only)."""
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp.defvjp: symbolic_zeros=True is not "
                                      "supported by absjit")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} "
                                 "using defvjp.")
        args = _bind_args(self.fun, self.__name__, args, kwargs)
        fun, fwd, bwd, name, static = self.fun, self.fwd, self.bwd, self.__name__, ()
        if self.nondiff_argnums:
            static, args = _split(self.nondiff_argnums, args, "custom_vjp")
            nd = self.nondiff_argnums
            fun = functools.partial(lambda s, *a: self.fun(*_merge(nd, s, a)), static)
            fwd = functools.partial(lambda s, *a: self.fwd(*_merge(nd, s, a)), static)
            bwd = functools.partial(lambda s, r, g: self.bwd(*s, r, g), static)
        leaves, in_tree = tree_util.tree_flatten(tuple(args))
        top = _top_main(leaves)
        if top is EVAL_MAIN:
            return fun(*args)  # no transformation: JAX calls the function as it is
        # Under a JVP, fwd runs first and the function is not traced (fwd's own call of
        # it is, as in JAX); otherwise the function is traced for the equation.
        jvp_first = top.trace_type is ad.JVPTrace
        if jvp_first:
            state = {"nconsts": 0, "out_tree": None}
        else:
            traced = _trace_reusing(self, static, fun, args)
            closed, consts, leaves, in_tree, out_tree = traced
            state = {"nconsts": len(consts), "out_tree": out_tree}

        def flat_fwd(primals):
            nconsts = state["nconsts"]
            token = None if jvp_first else _running_rule(self, static, args, traced)
            try:
                out, res = fwd(*tree_util.tree_unflatten(in_tree, list(primals[nconsts:])))
            finally:
                if token is not None:
                    _RULE_TRACES.reset(token)
            out_l, o_tree = tree_util.tree_flatten(out)
            if state["out_tree"] is None:
                state["out_tree"] = o_tree
            elif o_tree != state["out_tree"]:
                raise TypeError(f"custom_vjp fwd of {name} must return (output, residuals) "
                                f"with output structure {state['out_tree']}, got {o_tree}")
            res_l, res_tree = tree_util.tree_flatten(res)
            return out_l, res_l, res_tree

        arg_trees = [tree_util.tree_structure(a) for a in args]
        arg_avals = [get_aval(x) for x in leaves]

        def flat_bwd(res_tree):
            def run(res_l, cts):
                ct_out = tree_util.tree_unflatten(state["out_tree"], cts)
                cts_in = bwd(tree_util.tree_unflatten(res_tree, res_l), ct_out)
                return [None] * state["nconsts"] + _bwd_leaves(name, cts_in, arg_trees,
                                                               arg_avals)
            return run

        if jvp_first:
            trace, primals, tangents = _jvp_operands(top, leaves)
            if all(t is None for t in tangents):
                return self.__call__(*tree_util.tree_unflatten(in_tree, primals))
            po, to = _custom_vjp_call_jvp(primals, tangents, call_jaxpr=None,
                                          fwd=flat_fwd, bwd=flat_bwd)
            outs = [ad.JVPTracer(trace, p, t).full_lower() for p, t in zip(po, to)]
            return tree_util.tree_unflatten(state["out_tree"], outs)
        outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=closed, fwd=flat_fwd,
                                      bwd=flat_bwd)
        return tree_util.tree_unflatten(out_tree, outs)


def _check_nondiff(name, nondiff_argnums) -> tuple:
    if isinstance(nondiff_argnums, int):
        nondiff_argnums = (nondiff_argnums,)
    if isinstance(nondiff_argnums, str) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in
            (nondiff_argnums if hasattr(nondiff_argnums, "__iter__") else [None])):
        raise TypeError(f"{name}: nondiff_argnums must be an int or a sequence of ints, "
                        f"got {nondiff_argnums!r}")
    try:
        out = tuple(sorted(set(int(i) for i in nondiff_argnums)))
    except TypeError:
        raise TypeError(f"{name}: nondiff_argnums must be an int or a sequence of ints, "
                        f"got {nondiff_argnums!r}") from None
    if any(i < 0 for i in out):
        raise ValueError(f"{name}: nondiff_argnums must be non-negative, got {out}")
    return out


def _bind_args(fun, name, args, kwargs) -> tuple:
    """Keyword arguments bound to positions (the rules take positional arguments)."""
    if not kwargs:
        return args
    import inspect
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _split(nondiff, args, name):
    if nondiff and nondiff[-1] >= len(args):
        raise ValueError(f"{name}: nondiff_argnums {nondiff} out of range for "
                         f"{len(args)} arguments")
    static = tuple(args[i] for i in nondiff)
    rest = tuple(a for i, a in enumerate(args) if i not in nondiff)
    return static, rest


def _merge(nondiff, static, rest) -> list:
    """The full argument list from the non-differentiable and the other arguments."""
    out, s, r = [], iter(static), iter(rest)
    for i in range(len(static) + len(rest)):
        out.append(next(s) if i in nondiff else next(r))
    return out


def _bwd_leaves(name, cts_in, arg_trees, arg_avals) -> list:
    """The flat input cotangents of a custom bwd result: one entry per argument, each
    with that argument's structure and leaf shapes (``None`` for a zero cotangent of a
    whole argument); anything else raises, as a wrong shape would corrupt the
    gradient."""
    if not isinstance(cts_in, (tuple, list)):
        raise TypeError(f"custom_vjp bwd of {name} must return a tuple with one "
                        f"cotangent per argument, got {type(cts_in).__name__}")
    if len(cts_in) != len(arg_trees):
        raise TypeError(f"custom_vjp bwd of {name} must return one cotangent per argument: "
                        f"got {len(cts_in)} for {len(arg_trees)} arguments")
    out, k = [], 0
    for i, (ct, tree) in enumerate(zip(cts_in, arg_trees)):
        avals = arg_avals[k:k + tree.num_leaves]
        k += tree.num_leaves
        if ct is None:
            out += [None] * tree.num_leaves
            continue
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != tree:
            raise TypeError(f"custom_vjp bwd of {name}: the cotangent of argument {i} has "
                            f"structure {ct_tree}, the argument {tree}")
        for leaf, aval in zip(ct_leaves, avals):
            shape = tuple(get_aval(leaf).shape)
            if not same_shape(shape, tuple(aval.shape)) and not (
                    any(map(is_dim, shape + tuple(aval.shape)))):
                raise ValueError(f"custom_vjp bwd of {name}: the cotangent of argument {i} "
                                 f"has shape {shape}, the argument has shape "
                                 f"{tuple(aval.shape)}")
        out += ct_leaves
    return out


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd):
    out, res, res_tree = fwd(primals)
    t_in = [ad.instantiate_zeros(t, p) for t, p in zip(tangents, primals)]
    out_avals = tuple(get_aval(o).to_shaped() for o in out)
    t_out = custom_lin_p.bind(*res, *t_in, num_res=len(res), out_avals=out_avals,
                              bwd=_BwdWrapper(bwd(res_tree)))
    return out, t_out


_custom_vjp_call_jvp.symbolic_zeros = True
ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp


class _BwdWrapper:
    """The user's bwd as a param; it printed as its function name."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, res, cts):
        return self.fn(res, cts)

    def __repr__(self):
        return "bwd"


def _custom_vjp_call_batch(vals, dims, *, call_jaxpr, fwd, bwd):
    # Batching evaluates the function itself (the custom rule is not batched).
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    new, ob = batching.batch_jaxpr(call_jaxpr, size, list(dims),
                                   [True] * len(call_jaxpr.out_avals))
    outs = eval_jaxpr(new.jaxpr, new.consts, *vals)
    return outs, [0] * len(outs)


batching.batch_rules[custom_vjp_call_p] = _custom_vjp_call_batch


def custom_gradient(fun):
    """A function with its own gradient, written as one Python function:
    ``fun(*args)`` returns ``(value, vjp)``, where ``vjp(cotangent)`` gives one
    cotangent per positional argument (a tuple; a single value for a single argument).

    Built on :class:`custom_vjp`: the residuals are the arguments, and the backward
    pass calls ``fun`` again to rebuild ``vjp`` (``fun`` must be pure; its forward
    computation runs twice when differentiated).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> @absjit.custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: (10.0 * g,)
    >>> f(3.0), absjit.grad(f)(3.0)  # called directly, it runs as written (as in JAX)
    (9.0, Array(10., dtype=float32, weak_type=True))
    """
    if not callable(fun):
        raise TypeError(f"custom_gradient: fun must be callable, got {type(fun).__name__}")

    def split(args):
        result = fun(*args)
        if not (isinstance(result, (tuple, list)) and len(result) == 2
                and callable(result[1])):
            raise TypeError(f"custom_gradient: {getattr(fun, '__name__', 'fun')} must "
                            "return a pair (value, vjp function)")
        return result

    @custom_vjp
    def wrapped(*args):
        return split(args)[0]

    def fwd(*args):
        return split(args)[0], args

    def bwd(args, ct):
        cts = split(args)[1](ct)
        if not isinstance(cts, (tuple, list)):
            cts = (cts,)
        if len(cts) != len(args):
            raise TypeError(f"custom_gradient: the vjp of "
                            f"{getattr(fun, '__name__', 'fun')} returned {len(cts)} "
                            f"cotangents for {len(args)} arguments")
        return tuple(cts)

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped
