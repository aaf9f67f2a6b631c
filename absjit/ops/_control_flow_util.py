"""Helpers shared by the control-flow primitives (``control_flow.py``, ``scan.py``):
tracing user functions into constant-free sub-jaxprs, carry type checking, and the
effectful twins of the primitives."""
from __future__ import annotations

import inspect

import numpy as np

from .. import tree_util
from ..array import Array
from ..errors import UnexpectedTracerError
from ..core.avals import ShapedArray
from ..core.jaxpr import ClosedJaxpr, Jaxpr, Var
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import Tracer, get_aval
from ..interpreters import ad, batching
from .call import hoist_consts

# ---------------------------------------------------------------------------
# tracing helpers
# ---------------------------------------------------------------------------
def _name(f) -> str:
    return getattr(f, "__name__", None) or type(f).__name__


def _shaped(x) -> ShapedArray:
    return get_aval(x).to_shaped()


def _positional_names(fun) -> list:
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):  # builtins, some callables
        return []
    return [p.name for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def user_view(wrapper, user_fun, roots, what: str | None = None):
    """Mark ``wrapper`` (a function absjit wrote around ``user_fun``, such as
    ``fori_loop``'s scan body) so that errors raised while tracing it name
    ``user_fun`` and its parameters. ``roots(args)`` maps the wrapper's positional
    arguments to ``[(parameter index or name, the value it receives), ...]``;
    ``what`` names the user's API (``fori_loop``) in place of the primitive's."""
    wrapper._user_view = (user_fun, roots, what)
    return wrapper


def _leaf_names(fun, in_tree, n: int):
    """The user's function and a name for each flattened input: the parameter's name
    followed by the leaf's pytree path (``carry[0]``, ``params['w']``)."""
    from .._tree_paths import keystr
    user_fun, roots, _ = getattr(fun, "_user_view", (fun, None, None))
    params = _positional_names(user_fun)
    args = tree_util.tree_unflatten(in_tree, list(range(n)))
    pairs = list(enumerate(args)) if roots is None else roots(*args)
    names = [f"arg{i}" for i in range(n)]
    for which, value in pairs:
        if isinstance(which, str):
            base = which
        else:
            base = params[which] if which < len(params) else f"arg{which}"
        for path, leaf in tree_util.tree_flatten_with_path(value)[0]:
            names[leaf] = base + keystr(path)
    return user_fun, names


def _trace(fun, in_avals, in_tree, what: str):
    """Trace ``fun(*unflatten(in_tree, avals))`` to a constant-free ClosedJaxpr.

    Returns ``(closed, consts, out_tree)``; ``closed`` takes ``consts + leaves``.
    Errors while tracing name the user's function and arguments (see :func:`user_view`).
    """
    from ..interpreters.staging import DebugInfo, trace_to_jaxpr
    box = []

    def flat_fun(*leaves):
        args = tree_util.tree_unflatten(in_tree, list(leaves))
        out = fun(*args)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        box.append(out_tree)
        return out_leaves

    user_fun, names = _leaf_names(fun, in_tree, len(in_avals))
    what = getattr(fun, "_user_view", (None, None, None))[2] or what
    closed, _ = trace_to_jaxpr(flat_fun, list(in_avals), DebugInfo.of(user_fun, names, what),
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



def _carry_fixpoint(trace_body, carry_avals, fn_name: str, what: str):
    """Trace the loop body; a weakly typed carry whose dtype the body changes is
    promoted to the body's type (as JAX does) and traced again; any other change is a
    TypeError naming both types."""
    retraced = False
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
            if retraced:
                _check_same_trace(trace_body, carry_avals, traced, fn_name, what)
            return traced, carry_avals
        carry_avals = new
        retraced = True
    raise TypeError(f"{what} {fn_name}: the carry type does not settle")


def _same_value(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, ClosedJaxpr) and isinstance(b, ClosedJaxpr):
        return str(a) == str(b) and len(a.consts) == len(b.consts) and all(
            _same_value(x, y) for x, y in zip(a.consts, b.consts))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return False
    if isinstance(a, (Array, np.ndarray, np.generic)) or isinstance(b, (Array, np.ndarray,
                                                                         np.generic)):
        x, y = np.asarray(a), np.asarray(b)
        return x.dtype == y.dtype and x.shape == y.shape and \
            bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an uncomparable value counts as different
        return False


def _check_same_trace(trace_body, carry_avals, traced, fn_name, what):
    """The body was traced again because the carry's type changed (a weakly typed
    ``0`` becoming float32). A pure body traced twice at the same types gives the same
    program; one with Python side effects (``next(iterator)``, a mutated global) does
    not, and the loop would silently use whatever the last trace saw. Trace once more
    and compare; a difference is an ``UnexpectedTracerError``."""
    try:
        again = trace_body(carry_avals)
        same = _same_value(list(traced[1:]), list(again[1:]))
    except Exception as err:  # noqa: BLE001 - a body that fails when re-run is impure
        same, cause = False, err
    else:
        cause = None
    if not same:
        raise UnexpectedTracerError(
            f"{what} {fn_name} gave a different program each time it was traced. The "
            "body is traced more than once when the carry's type changes (a weakly typed "
            "Python scalar initial value, such as 0, promoted to the type the body "
            "returns), so it must be a pure function of its arguments: Python side "
            "effects such as next(iterator), or reading state the body itself changes, "
            "would give a wrong result. Pass the values as arguments (e.g. index an array "
            "with the loop counter) and give the initial carry its final type (e.g. 0.0 "
            "instead of 0).") from cause


# plain primitive -> its effectful twin (registered by each primitive's module)
_EFFECTFUL: dict = {}


def _effectful_twin(p):
    from ..core import primitive as _primitive
    twin = Primitive(p.name, multiple_results=True, effectful=True,
                     param_order=p.param_order)
    _primitive._ALL[p.name] = p  # the registry lists the plain primitive under the name
    for table in (abstract_eval_rules, impl_rules, ad.jvp_rules, ad.transpose_rules,
                  batching.batch_rules):
        if p in table:
            table[twin] = table[p]
    _EFFECTFUL[p] = twin
    return twin
