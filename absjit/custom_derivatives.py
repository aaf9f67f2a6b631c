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

import functools

from . import tree_util
from .core.jaxpr import eval_jaxpr
from .core.fusion import Call, def_fusion
from .core.primitive import Primitive, abstract_eval_rules, impl_rules
from .core.trace import get_aval
from .interpreters import ad, batching
from .ops.call import eval_jaxpr_numpy, hoist_consts

__all__ = ["custom_jvp", "custom_vjp"]


def _trace_flat(fun, args):
    from .interpreters.staging import DebugInfo, trace_to_jaxpr
    leaves, in_tree = tree_util.tree_flatten(tuple(args))
    box = []

    def flat(*xs):
        out = fun(*tree_util.tree_unflatten(in_tree, list(xs)))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        box.append(out_tree)
        return out_leaves

    avals = [get_aval(x).to_shaped() for x in leaves]
    closed, _ = trace_to_jaxpr(flat, avals, DebugInfo.of(fun, [], "custom_derivative"))
    closed, consts = hoist_consts(closed)
    return closed, consts, leaves, in_tree, box[-1]


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

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.jvp = None

    def defjvp(self, jvp):
        """Register ``jvp(primals, tangents) -> (primal_out, tangent_out)``."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self.__name__} "
                                 "using defjvp.")
        closed, consts, leaves, in_tree, out_tree = _trace_flat(self.fun, args)
        nconsts = len(consts)
        user_jvp = self.jvp

        def flat_jvp(primals, tangents):
            p = tree_util.tree_unflatten(in_tree, list(primals[nconsts:]))
            t = tree_util.tree_unflatten(in_tree, list(tangents[nconsts:]))
            po, to = user_jvp(p, t)
            po_l, po_t = tree_util.tree_flatten(po)
            to_l, to_t = tree_util.tree_flatten(to)
            if po_t != out_tree or to_t != out_tree:
                raise TypeError(f"custom_jvp rule of {self.__name__} must return primal and "
                                f"tangent outputs with the function's structure {out_tree}; "
                                f"got {po_t} and {to_t}")
            return po_l, to_l

        outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=closed, jvp=flat_jvp)
        return tree_util.tree_unflatten(out_tree, outs)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp):
    return jvp(primals, tangents)


ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


def _custom_jvp_call_batch(vals, dims, *, call_jaxpr, jvp):
    from .api_transforms import vmap
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

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} "
                                 "using defvjp.")
        closed, consts, leaves, in_tree, out_tree = _trace_flat(self.fun, args)
        nconsts = len(consts)
        fwd, bwd, name = self.fwd, self.bwd, self.__name__

        def flat_fwd(primals):
            out, res = fwd(*tree_util.tree_unflatten(in_tree, list(primals[nconsts:])))
            out_l, o_tree = tree_util.tree_flatten(out)
            if o_tree != out_tree:
                raise TypeError(f"custom_vjp fwd of {name} must return (output, residuals) "
                                f"with output structure {out_tree}, got {o_tree}")
            res_l, res_tree = tree_util.tree_flatten(res)
            return out_l, res_l, res_tree

        def flat_bwd(res_tree):
            def run(res_l, cts):
                ct_out = tree_util.tree_unflatten(out_tree, cts)
                cts_in = bwd(tree_util.tree_unflatten(res_tree, res_l), ct_out)
                if not isinstance(cts_in, (tuple, list)):
                    raise TypeError(f"custom_vjp bwd of {name} must return a tuple with one "
                                    f"cotangent per argument, got {type(cts_in).__name__}")
                leaves_in, _ = tree_util.tree_flatten(tuple(cts_in))
                return [None] * nconsts + list(leaves_in)
            return run

        outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=closed, fwd=flat_fwd,
                                      bwd=flat_bwd)
        return tree_util.tree_unflatten(out_tree, outs)


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
