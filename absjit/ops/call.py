"""The ``jit`` primitive: a nested call to a staged function.

When a jitted function is called while another transformation is tracing (under
``make_jaxpr``, an outer ``jit``, ``grad`` or ``vmap``), it is traced to its own jaxpr
and staged as one equation::

    b:f32[100,2000] = jit[
      name=apply_activation
      jaxpr={ lambda ; c:f32[100,2000]. let d:f32[100,2000] = max 0.0 c in (d,) }
    ] a

Params: ``name`` (the function's name, a ``str``) and ``jaxpr`` (a ``ClosedJaxpr``
without constants). The callee's constants are hoisted into leading operands, so a
closed-over tracer of an enclosing trace is an ordinary operand of the equation and the
inner jaxpr's text fully describes it (the compile cache keys on that text). Backends
inline the equation.
"""
from __future__ import annotations

import threading

import numpy as np

from ..core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ..core.fusion import Call, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules

__all__ = ["jit_p", "call_jit", "hoist_consts", "eval_jaxpr_numpy", "store_results"]

jit_p = Primitive("jit", multiple_results=True, param_order=("name", "jaxpr"))
def_fusion(jit_p, Call("jaxpr"))


def call_jit(*args, jaxpr: ClosedJaxpr, name: str):
    """Apply the constant-free ``jaxpr`` to ``args`` (a list of results)."""
    return jit_p.bind(*args, jaxpr=jaxpr, name=name)


def hoist_consts(closed: ClosedJaxpr) -> tuple:
    """``(constant-free ClosedJaxpr, consts)``: constvars become the first invars."""
    jaxpr = closed.jaxpr
    if not jaxpr.constvars:
        return closed, []
    hoisted = Jaxpr((), jaxpr.constvars + jaxpr.invars, jaxpr.eqns, jaxpr.outvars)
    return ClosedJaxpr(hoisted, []), list(closed.consts)


def _jit_abstract_eval(*avals, jaxpr, name):
    expected = jaxpr.in_avals
    if len(avals) != len(expected):
        raise TypeError(f"jit[name={name}] takes {len(expected)} operands, got {len(avals)}")
    for i, (got, want) in enumerate(zip(avals, expected)):
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            raise TypeError(f"jit[name={name}] operand {i} has type {got.str_short()}, "
                            f"but the callee was traced for {want.str_short()}")
    return list(jaxpr.out_avals)


abstract_eval_rules[jit_p] = _jit_abstract_eval


class TierSwitch(Exception):
    """Raised inside an interpreted loop when the compiled tier became ready
    (:mod:`absjit.jit.tiering`): the call runs again, compiled."""


class _Interrupt(threading.local):
    # Per thread, set for the length of one call: the loop primitives' impl rules call
    # it once per iteration when it is not None.
    check = None


interrupt = _Interrupt()


def eval_jaxpr_numpy(jaxpr: Jaxpr, consts, *args) -> list:
    """Evaluate ``jaxpr`` on NumPy values with the impl rules only.

    Unlike ``eval_jaxpr`` it never calls ``bind``, so it is safe to use from inside a
    trace (value propagation at the ``concrete`` level runs impl rules while a staging
    trace is active). Each result is cast to its variable's dtype and shape, as the
    eager interpreter does.
    """
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        vals = [x.val if type(x) is Literal else env[x] for x in eqn.invars]
        try:
            rule = impl_rules[eqn.primitive]
        except KeyError:
            raise NotImplementedError(
                f"primitive {eqn.primitive.name!r} has no eager rule") from None
        store_results(env, eqn.outvars, rule(*vals, **eqn.params))
    return [x.val if type(x) is Literal else env[x] for x in jaxpr.outvars]


def store_results(env: dict, outvars, outs) -> None:
    """An impl rule's results into ``env``, each as its variable's dtype and shape (a
    rule may return a Python scalar, another dtype, or a broadcastable view)."""
    for v, out in zip(outvars, outs):
        aval = v.aval
        out = np.asarray(out)
        if out.dtype != aval.dtype:
            out = out.astype(aval.dtype)
        if out.shape != aval.shape:
            out = np.broadcast_to(out, aval.shape)
        env[v] = out


# (id(jaxpr), scalar_io) -> (jaxpr, function): the jaxpr keeps its id unique
_EVALUATORS: dict = {}

# Operations a loop body of scalars runs as NumPy scalar arithmetic (~0.1 us an operation
# against ~1 us for a ufunc on rank-0 arrays): the same IEEE operations in the same
# dtype, so the same values. Division is not among them (integer division truncates in
# lax; NumPy's ``//`` floors), nor are bools.
_SCALAR_BINARY = {"add": "+", "sub": "-", "mul": "*", "lt": "<", "le": "<=", "gt": ">",
                  "ge": ">=", "eq": "==", "ne": "!="}
_SCALAR_KINDS = "iuf"


def scalar_op(eqn) -> str | None:
    """The Python operator that computes ``eqn`` on NumPy scalars, if there is one."""
    name = eqn.primitive.name
    if name not in _SCALAR_BINARY and name != "neg":
        return None
    for v in list(eqn.invars) + list(eqn.outvars):
        aval = getattr(v, "aval", None)
        if aval is None or aval.shape != ():
            return None
    if any(np.dtype(v.aval.dtype).kind not in _SCALAR_KINDS for v in eqn.invars):
        return None
    if len({np.dtype(v.aval.dtype) for v in eqn.invars}) != 1:
        return None
    return "-" if name == "neg" else _SCALAR_BINARY[name]


def _is_scalar(v) -> bool:
    aval = v.aval
    return aval.shape == () and np.dtype(aval.dtype).kind in _SCALAR_KINDS


def scalar_values(values) -> list:
    """``values`` with rank-0 numeric arrays as NumPy scalars: what a ``scalar_io``
    evaluator computes with fastest (an operator on a rank-0 array goes through the
    ufunc machinery, ~1 us)."""
    return [v[()] if type(v) is np.ndarray and v.ndim == 0 and v.dtype.kind in _SCALAR_KINDS
            else v for v in values]


def python_evaluator(jaxpr: Jaxpr, scalar_io: bool = False):
    """``eval_jaxpr_numpy(jaxpr, consts, *args)`` as a generated Python function
    ``run(consts, *args)``: the same impl rules called in the same order, with the same
    casts of their results, but with locals instead of a dictionary and rules looked up
    once; rank-0 arithmetic and comparisons run as NumPy scalar operations. A loop body
    runs thousands of times: this is what interprets it (a body of scalar operations
    runs about 10x faster than through the dictionary interpreter).

    ``scalar_io``: rank-0 numeric arguments may be NumPy scalars and such results are
    returned as NumPy scalars where they were computed as ones (a loop keeps its
    scalar carries as scalars; converting each trip would cost more than the body)."""
    hit = _EVALUATORS.get((id(jaxpr), scalar_io))
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    names: dict = {}
    scalars: dict = {}  # variable -> the local holding it as a NumPy scalar
    arrays: set = set()  # variables whose array local is up to date
    env = {"asarray": np.asarray, "ndarray": np.ndarray, "broadcast_to": np.broadcast_to}
    lines: list = []

    def name(v):
        if type(v) is Literal:
            key = f"l{len(env)}"
            env[key] = v.val
            return key
        if v not in arrays:  # only its scalar local exists
            lines.append(f"    {names[v]} = asarray({scalars[v]})")
            arrays.add(v)
        return names[v]

    def scalar(v):
        if type(v) is Literal:
            key = f"l{len(env)}"
            env[key] = np.dtype(v.aval.dtype).type(v.val)
            return key
        got = scalars.get(v)
        if got is None:
            got = scalars[v] = f"{names[v]}s"
            lines.append(f"    {got} = {names[v]}[()]")
        return got

    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        names[v] = f"v{len(names)}"
        if scalar_io and v in jaxpr.invars and _is_scalar(v):
            scalars[v] = names[v]  # a scalar or a rank-0 array: operators take both
        else:
            arrays.add(v)
    nconst = len(jaxpr.constvars)
    head = [f"def run(consts, {', '.join(names[v] for v in jaxpr.invars)}):"]
    if nconst:
        head.append(f"    ({''.join(names[v] + ', ' for v in jaxpr.constvars)}) = consts")
    for k, eqn in enumerate(jaxpr.eqns):
        op = scalar_op(eqn)
        if op is not None:
            ins = [scalar(x) for x in eqn.invars]
            (v,) = eqn.outvars
            names[v] = f"v{len(names)}"
            out = scalars[v] = f"{names[v]}s"
            expr = f"{op}{ins[0]}" if len(ins) == 1 else f"{ins[0]} {op} {ins[1]}"
            lines.append(f"    {out} = {expr}")
            continue
        try:
            rule = impl_rules[eqn.primitive]
        except KeyError:
            raise NotImplementedError(
                f"primitive {eqn.primitive.name!r} has no eager rule") from None
        env[f"r{k}"], env[f"p{k}"] = rule, dict(eqn.params)
        args = ", ".join([name(x) for x in eqn.invars])
        lines.append(f"    o = r{k}({args}{', ' if args else ''}**p{k})")
        for j, v in enumerate(eqn.outvars):
            out = names[v] = f"v{len(names)}"
            arrays.add(v)
            env[f"d{out}"], env[f"s{out}"] = v.aval.dtype, v.aval.shape
            lines += [f"    {out} = o[{j}]",
                      f"    if type({out}) is not ndarray: {out} = asarray({out})",
                      f"    if {out}.dtype != d{out}: {out} = {out}.astype(d{out})",
                      f"    if {out}.shape != s{out}: {out} = broadcast_to({out}, s{out})"]
    results = ", ".join([scalars[x] if scalar_io and type(x) is not Literal and x in scalars
                         else name(x) for x in jaxpr.outvars])
    lines.append(f"    return [{results}]")
    exec("\n".join(head + lines), env)  # noqa: S102 - generated from the jaxpr, no user text
    fn = env["run"]
    if len(_EVALUATORS) > 512:
        _EVALUATORS.clear()
    _EVALUATORS[(id(jaxpr), scalar_io)] = (jaxpr, fn)
    return fn


def _jit_impl(*args, jaxpr, name):
    return eval_jaxpr_numpy(jaxpr.jaxpr, jaxpr.consts, *args)


impl_rules[jit_p] = _jit_impl

# Autodiff and batching rules: each transforms the inner jaxpr and binds ``jit_p``
# again, so the staged call survives transformation.
def _jit_jvp(primals, tangents, *, jaxpr, name):
    from ..core.trace import get_aval
    from ..interpreters import ad
    outs = jit_p.bind(*primals, jaxpr=jaxpr, name=name)
    nonzeros = [t is not None for t in tangents]
    # The tangent call is separate from the primal one so that it is linear in the
    # tangents (reverse mode transposes it alone).
    t_jaxpr = ad.jvp_jaxpr(jaxpr, nonzeros)
    t_outs = jit_p.bind(*primals, *[t for t in tangents if t is not None],
                        jaxpr=t_jaxpr, name=f"jvp({name})")
    return outs, [t if ad._is_differentiable(get_aval(o)) else None
                  for o, t in zip(outs, t_outs)]


def _jit_transpose(cts, *args, jaxpr, name):
    from ..interpreters import ad
    mask = [ad.is_undefined_primal(x) for x in args]
    known = [x for x in args if not ad.is_undefined_primal(x)]
    cts = [ad.zeros_like_aval(a.to_shaped()) if c is None else c
           for c, a in zip(cts, jaxpr.out_avals)]
    t_jaxpr = ad.transpose_jaxpr(jaxpr, mask)
    res = iter(jit_p.bind(*known, *cts, jaxpr=t_jaxpr, name=f"transpose({name})"))
    return [next(res) if m else None for m in mask]


def _jit_batch(vals, dims, *, jaxpr, name):
    from ..core.trace import get_aval
    from ..interpreters import batching
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    new, out_batched = batching.batch_jaxpr(jaxpr, size, list(dims))
    outs = jit_p.bind(*vals, jaxpr=new, name=name)
    return outs, [0 if b else None for b in out_batched]


def _register_transform_rules():
    from ..interpreters import ad, batching
    _jit_jvp.symbolic_zeros = True
    ad.jvp_rules[jit_p] = _jit_jvp
    ad.transpose_rules[jit_p] = _jit_transpose
    batching.batch_rules[jit_p] = _jit_batch


_register_transform_rules()
