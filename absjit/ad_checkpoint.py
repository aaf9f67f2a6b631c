"""Rematerialisation (``jax.ad_checkpoint``): ``checkpoint``/``remat``, the policy
names, ``checkpoint_name``, and ``print_saved_residuals``/``saved_residuals``, which
list the values reverse-mode differentiation keeps from the forward pass.

:func:`checkpoint` keeps the function's inputs for the backward pass, plus the values
its ``policy`` marks saveable (the results of ``dot_general`` for ``dots_saveable``, the
values tagged by ``checkpoint_name`` for ``save_only_these_names``, ...), and recomputes
everything else, as JAX does. ``checkpoint_name`` returns its argument unchanged.

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> from absjit.ad_checkpoint import checkpoint, checkpoint_policies
>>> f = checkpoint(lambda x: jnp.sin(x) * 2, policy=checkpoint_policies.dots_saveable)
>>> float(absjit.grad(f)(0.0))
2.0
"""
from __future__ import annotations

import types

from ._traceback import user_frame_summary
from .api_utils import checkpoint, checkpoint_names, remat, residual_reads
from .interpreters.staging import record_source

__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name",
           "saved_residuals", "print_saved_residuals"]


def checkpoint_name(x, name: str):
    """``x`` itself (a pytree of arrays), tagged ``name`` for the name-based policies
    of an enclosing :func:`checkpoint` (``save_only_these_names("a")``).

    Examples
    --------
    >>> from absjit.ad_checkpoint import checkpoint_name
    >>> checkpoint_name(3.0, "h")
    3.0
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {name!r}")
    names = checkpoint_names.get()
    describing = record_source.get()
    if names is not None or describing:
        from . import tree_util
        for leaf in tree_util.tree_leaves(x):
            var = _var_of(leaf)
            if var is None:
                continue
            if names is not None:
                names[var] = name
            if describing:
                _describe_named(var, name, user_frame_summary(), _eqns_so_far(leaf))
    return x


def _eqns_so_far(leaf):
    """How many equations the jaxpr being traced had when ``leaf`` was tagged."""
    while leaf is not None and not hasattr(leaf, "_var"):
        leaf = getattr(leaf, "primal", None)
    builder = getattr(getattr(leaf, "_trace", None), "builder", None)
    return len(builder.eqns) if builder is not None else None


def _var_of(leaf):
    """The jaxpr variable a staged value (possibly under a JVP) stands for, or None."""
    while leaf is not None and not hasattr(leaf, "_var"):
        leaf = getattr(leaf, "primal", None)
    return getattr(leaf, "_var", None)


# Values tagged by checkpoint_name while saved_residuals traces, for its report:
# id(var) -> (var, name, source, equations traced before the tag). Bounded: only that
# report fills it.
_NAMED: dict = {}


def _describe_named(var, name, src, position):
    if len(_NAMED) > 4096:
        _NAMED.clear()
    _NAMED[id(var)] = (var, name, src, position)


def _policy(name, saves):
    def policy(prim, *avals, **params) -> bool:
        return saves(prim, params)
    policy.__name__ = policy.__qualname__ = name
    policy.__doc__ = f"JAX's ``{name}`` policy."
    return policy


def _is_dot(prim, params):
    return getattr(prim, "name", "") == "dot_general"


def _is_unbatched_dot(prim, params):
    if not _is_dot(prim, params):
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not tuple(lhs_batch) and not tuple(rhs_batch)


def _is_name(prim, params):
    return getattr(prim, "name", "") == "name"


def _names_policy(kind, saves):
    def make(*names):
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{kind}: names must be strings, got {n!r}")
        return _policy(kind, lambda prim, params: saves(prim, params, set(names)))
    make.__name__ = kind
    return make


def _save_from_both_policies(policy_1, policy_2):
    if not (callable(policy_1) and callable(policy_2)):
        raise TypeError("save_from_both_policies: expected two policies")
    return _policy("save_from_both_policies",
                   lambda prim, params: policy_1(prim, **params) or policy_2(prim, **params))


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=_policy("everything_saveable", lambda prim, params: True),
    nothing_saveable=_policy("nothing_saveable", lambda prim, params: False),
    dots_saveable=_policy("dots_saveable", _is_dot),
    checkpoint_dots=_policy("checkpoint_dots", _is_dot),
    dots_with_no_batch_dims_saveable=_policy("dots_with_no_batch_dims_saveable",
                                             _is_unbatched_dot),
    checkpoint_dots_with_no_batch_dims=_policy("checkpoint_dots_with_no_batch_dims",
                                               _is_unbatched_dot),
    save_only_these_names=_names_policy(
        "save_only_these_names",
        lambda prim, params, names: _is_name(prim, params) and params["name"] in names),
    save_any_names_but_these=_names_policy(
        "save_any_names_but_these",
        lambda prim, params, names: _is_name(prim, params) and params["name"] not in names),
    save_anything_except_these_names=_names_policy(
        "save_anything_except_these_names",
        lambda prim, params, names: not (_is_name(prim, params) and params["name"] in names)),
    save_from_both_policies=_save_from_both_policies,
)


def saved_residuals(f, *args, **kwargs) -> list:
    """The values ``grad``/``vjp`` of ``f`` at ``args`` keep from the forward pass for
    the backward pass, each as ``(aval, description)``.

    A residual is a value computed without tangents that the linear (tangent) part of
    ``f``'s JVP reads. Arguments come first, in order (``"from the argument W1"``), then
    computed values in the order they are computed (``"output of cos from
    file:line:column (function)"``). Under :func:`checkpoint` the residuals of the
    checkpointed call are its inputs whatever the policy (see the module's note), so a
    policy that would save more in JAX lists less here.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.ad_checkpoint import saved_residuals
    >>> [(a.str_short(), d.split(" from")[0]) for a, d in saved_residuals(jnp.sin, 1.0)]
    [('f32[]', 'output of cos')]
    """
    from . import tree_util
    from .core.trace import get_aval
    from .interpreters import ad
    from .interpreters.staging import (DebugInfo, fun_signature_info, flat_arg_names,
                                       positional_names, record_source, trace_to_jaxpr)
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    sig = fun_signature_info(f)
    names = positional_names(sig, len(args)) if sig is not None else \
        [f"args[{i}]" for i in range(len(args))]
    arg_names = flat_arg_names(names, args, kwargs)
    avals = [get_aval(x).to_shaped() for x in leaves]
    mask = [ad._is_differentiable(a) for a in avals]
    n = len(leaves)

    def jvp_fun(*flat):
        primals, rest = list(flat[:n]), iter(flat[n:])
        tangents = [next(rest) if m else None for m in mask]

        def flat_f(*xs):
            a, kw = tree_util.tree_unflatten(in_tree, list(xs))
            return tree_util.tree_leaves(f(*a, **kw))
        p_out, t_out = ad.jvp_flat(flat_f, primals, tangents)
        return list(p_out) + [t for t in t_out if t is not None]

    debug = DebugInfo.of(f, arg_names, "saved_residuals")
    token = record_source.set(True)
    try:
        closed, _ = trace_to_jaxpr(jvp_fun, avals + [a for a, m in zip(avals, mask) if m],
                                   debug, transform="grad")
    finally:
        record_source.reset(token)
    jaxpr = closed.jaxpr
    read = residual_reads(jaxpr, n)
    made_by = {v: eqn for eqn in jaxpr.eqns for v in eqn.outvars}
    out = [(v.aval, f"from the argument {name}")
           for v, name in zip(jaxpr.invars[:n], arg_names) if v in read]
    out += [(v.aval, "from a constant") for v in jaxpr.constvars if v in read]
    computed = []
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.outvars:
            if v in read and made_by.get(v) is eqn:
                # A tagged value is listed where checkpoint_name tagged it, as JAX
                # lists the result of its name equation.
                named = _NAMED.get(id(v))
                at = named[3] - 0.5 if named and named[0] is v and named[3] else i
                computed.append((at, v.aval, _described(eqn, v)))
    computed.sort(key=lambda t: t[0])
    return out + [(aval, what) for _, aval, what in computed]


def _described(eqn, v) -> str:
    """Where ``v``, an output of ``eqn``, was computed: for a call (a nested ``jit``
    or a :func:`checkpoint`), the equation inside it that made the value."""
    named = _NAMED.get(id(v))
    if named is not None and named[0] is v:
        _, name, src, _ = named
        where = f" from {src[0]}:{src[1]}:{src[2]} ({src[3]})" if src else ""
        return f"named {name!r}{where}"
    inner = eqn.params.get("jaxpr")
    inner = getattr(inner, "jaxpr", inner)
    if inner is not None and hasattr(inner, "eqns"):
        out = inner.outvars[list(eqn.outvars).index(v)]
        for e in inner.eqns:
            if out in e.outvars:
                return _described(e, out)
    what = f"output of {eqn.primitive.name}"
    if eqn.source_info is None:
        return what
    file, line, col, fn = eqn.source_info
    return f"{what} from {file}:{line}:{col} ({fn})"


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Print :func:`saved_residuals`, one ``f32[5,4] from the argument W1`` per line.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.ad_checkpoint import print_saved_residuals
    >>> print_saved_residuals(lambda W, x: jnp.dot(W, x), jnp.ones((2, 3)), jnp.ones(3))
    f32[2,3] from the argument W
    f32[3] from the argument x
    """
    for aval, what in saved_residuals(f, *args, **kwargs):
        print(aval.str_short(), what)
