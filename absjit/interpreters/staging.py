"""Staging: tracing a Python function into a jaxpr (``make_jaxpr`` and ``jit``'s trace).

``DynamicJaxprTrace`` records every primitive applied to its tracers as an equation.
It is made the *dynamic* trace while it runs, so operations on constants are staged
too (``jnp.log(2.0)`` becomes ``log 2.0``). Scalars become literals; other constants,
and tracers of enclosing transformations that the function closes over, become
constvars.

At the ``concrete`` level the builder also *propagates values*: when every input of an
equation knows its value, the NumPy impl runs and the result tracer carries a
``ConcreteArray``, so Python may branch on it.

For error messages the builder remembers, for every variable, which arguments it
depends on and which equation produced it.
"""
from __future__ import annotations

import contextvars
import inspect

import numpy as np

from ..core.avals import ConcreteArray, RankedArray, ShapedArray
from ..core.dim_value import dim_value_p
from ..core.dim_env import DimEnv
from ..core.dims import Dim, is_symbolic, unifying
from ..core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from ..core.levels import check_aval, get_level
from ..core.primitive import impl_rules
from ..core.trace import (Trace, Tracer, abstract_eval, current_dynamic, get_aval, new_main,
                          to_numpy)
from .. import tree_util
from .._traceback import api_boundary, user_frame_summary

__all__ = ["DebugInfo", "DynamicJaxprTrace", "DynamicJaxprTracer", "JaxprBuilder",
           "trace_to_jaxpr", "make_jaxpr", "fun_signature_info", "flat_arg_names"]

_EMPTY = frozenset()


# Transformations whose traced function is a body the user hands to a primitive:
# its arguments cannot be made static.
_BODY_TRANSFORMS = frozenset({"scan", "while_loop", "cond", "fori_loop", "switch", "map"})


# Set while tracing for a report that names where each value was computed
# (ad_checkpoint.print_saved_residuals): equations then carry the user's source line.
record_source = contextvars.ContextVar("absjit_record_source", default=False)


def _calls_effects(params) -> bool:
    """Whether a call's params hold a jaxpr with an effect (a ``jit`` whose body
    prints): evaluating it while tracing would run the effect once more."""
    for v in params.values():
        for j in (v if isinstance(v, tuple) else (v,)):
            j = getattr(j, "jaxpr", j)
            if isinstance(j, Jaxpr) and any(
                    e.primitive.effectful or _calls_effects(e.params) for e in j.eqns):
                return True
    return False


class DebugInfo:
    """What is being traced, for error messages: function, source, argument names."""

    __slots__ = ("fn_name", "src", "arg_names", "transform")

    def __init__(self, fn_name: str, src: str, arg_names, transform: str):
        self.fn_name = fn_name
        self.src = src
        self.arg_names = tuple(arg_names)
        self.transform = transform

    @classmethod
    def of(cls, fun, arg_names, transform: str) -> "DebugInfo":
        name = getattr(fun, "__name__", None) or type(fun).__name__
        try:
            code = inspect.unwrap(fun).__code__
            src = f"{code.co_filename}:{code.co_firstlineno}"
        except Exception:  # noqa: BLE001 - partials, builtins, callables
            src = "<unknown>"
        return cls(name, src, arg_names, transform)

    def __str__(self):
        return f"{self.fn_name} at {self.src} traced for {self.transform}"


class DynamicJaxprTracer(Tracer):
    __slots__ = ("_aval", "_var")

    def __init__(self, trace, aval, var):
        self._trace = trace
        self._aval = aval
        self._var = var

    @property
    def aval(self):
        return self._aval


class JaxprBuilder:
    """The equations, inputs and constants a staging trace has recorded so far."""

    def __init__(self, debug_info: DebugInfo | None, propagate_values: bool = False):
        self.debug_info = debug_info
        self.propagate_values = propagate_values
        self.eqns: list = []
        self.invars: list = []
        self.const_vals: dict = {}  # constvar -> value (array, or an outer tracer)
        self._const_tracers: dict = {}  # id(value) -> tracer, to share constvars
        self.deps: dict = {}  # var -> frozenset of flat argument indices
        self.origin: dict = {}  # var -> the equation that produced it
        # The symbolic sizes of ``ranked`` arguments (made on the first one); when set,
        # tracers with symbolic shapes carry ``RankedArray`` avals.
        self.dim_env: DimEnv | None = None
        self.symbolic = False

    def new_arg(self, trace, aval, index: int) -> DynamicJaxprTracer:
        if isinstance(aval, RankedArray) and not aval.is_bound:
            if self.dim_env is None:
                self.dim_env = DimEnv()
            names = self.debug_info.arg_names if self.debug_info is not None else ()
            aval = aval.bind(self.dim_env, names[index] if index < len(names)
                             else f"arg{index}")
        if isinstance(aval, ShapedArray) and is_symbolic(aval.shape):
            self.symbolic = True
        var = Var(aval.to_shaped() if isinstance(aval, ShapedArray) else aval)
        self.invars.append(var)
        self.deps[var] = frozenset((index,))
        return DynamicJaxprTracer(trace, aval, var)

    def deps_of(self, var) -> frozenset:
        return self.deps.get(var, _EMPTY)

    def build(self, out_tracers) -> ClosedJaxpr:
        constvars = list(self.const_vals)
        jaxpr = Jaxpr(constvars, self.invars, self.eqns, [t._var for t in out_tracers])
        return ClosedJaxpr(jaxpr, [self.const_vals[v] for v in constvars])


class DynamicJaxprTrace(Trace):
    """Records primitives into the ``JaxprBuilder`` held by its main trace."""

    __slots__ = ()

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.payload

    def pure(self, val):
        builder = self.builder
        if type(val) is Dim:  # a symbolic size used as a value
            dt = get_aval(val).dtype
            return self.process_primitive(dim_value_p, [], {"size": val, "dtype": dt})[0]
        aval = get_aval(val)
        if aval.shape == ():
            value = to_numpy(val)
            lit = Literal(value, ShapedArray((), aval.dtype, aval.weak_type))
            if builder.propagate_values:
                aval = ConcreteArray(value, weak_type=aval.weak_type)
            return DynamicJaxprTracer(self, aval, lit)
        key = id(val)
        tracer = builder._const_tracers.get(key)
        if tracer is None:
            var = Var(aval)
            builder.const_vals[var] = val
            if builder.propagate_values:
                aval = ConcreteArray(to_numpy(val), weak_type=aval.weak_type)
            tracer = DynamicJaxprTracer(self, aval, var)
            builder._const_tracers[key] = tracer
        return tracer

    def lift(self, tracer):
        # A tracer of an enclosing transformation closed over by the staged function:
        # it becomes a constvar whose "value" is that tracer.
        builder = self.builder
        key = id(tracer)
        got = builder._const_tracers.get(key)
        if got is None:
            aval = tracer.aval
            var = Var(aval.to_shaped() if isinstance(aval, ShapedArray) else aval)
            builder.const_vals[var] = tracer
            got = DynamicJaxprTracer(self, aval, var)
            builder._const_tracers[key] = got
        return got

    def process_primitive(self, primitive, tracers, params):
        builder = self.builder
        avals_in = [t._aval for t in tracers]
        if builder.symbolic:
            with unifying():  # a rule comparing two sizes requires them equal
                avals_out = abstract_eval(primitive, avals_in, params)
        else:
            avals_out = abstract_eval(primitive, avals_in, params)
        outvars = [Var(a.to_shaped()) for a in avals_out]
        invars = tuple(t._var for t in tracers)
        eqn = JaxprEqn(primitive, invars, tuple(outvars), params,
                       user_frame_summary() if record_source.get() else None)
        builder.eqns.append(eqn)
        deps = _EMPTY
        for x in invars:
            if type(x) is Var:
                d = builder.deps.get(x)
                if d:
                    deps = deps | d if deps else d
        for v in outvars:
            builder.deps[v] = deps
            builder.origin[v] = eqn
        if builder.propagate_values and all(type(a) is ConcreteArray for a in avals_in) \
                and not primitive.effectful and primitive in impl_rules \
                and not _calls_effects(params) \
                and not any(is_symbolic(a.shape) for a in avals_out) \
                and not (primitive is dim_value_p and type(params["size"]) is Dim):
            # (a constant broadcast to ``(x0,)``, or the value of ``x0``, is only known
            # at run time)
            vals = impl_rules[primitive](*[a.val for a in avals_in], **params)
            avals_out = [ConcreteArray(np.broadcast_to(np.asarray(v, a.dtype), a.shape),
                                       weak_type=a.weak_type)
                         for v, a in zip(vals, avals_out)]
        elif builder.symbolic:
            # Tracers show their level: sizes are symbolic, so the aval is ranked.
            avals_out = [RankedArray.from_shaped(a) if type(a) is ShapedArray
                         and is_symbolic(a.shape) else a for a in avals_out]
        return [DynamicJaxprTracer(self, a, v) for a, v in zip(avals_out, outvars)]

    # -- error messages ------------------------------------------------------------
    def describe_origin(self, tracer) -> str:
        builder = self.builder
        info = builder.debug_info
        if info is None:
            return ""
        var = tracer._var if isinstance(tracer, DynamicJaxprTracer) else None
        msg = (f"The error occurred while tracing the function {info.fn_name} at {info.src} "
               f"for {info.transform}. ")
        deps = sorted(builder.deps_of(var)) if var is not None else []
        names = [info.arg_names[i] for i in deps if i < len(info.arg_names)]
        if names:
            quoted = ", ".join(f"'{n}'" for n in names)
            plural = "s" if len(names) > 1 else ""
            base = sorted({_base_name(n) for n in names})
            msg += ("This concrete value was not available in Python because it depends on "
                    f"the value of the argument{plural} {quoted}.\n")
            if info.transform in _BODY_TRANSFORMS:
                msg += (f"The arguments of a {info.transform} body are always traced. "
                        "Possible fixes: express the value-dependent choice with lax.cond "
                        "or jnp.where; index absjit arrays (jnp.array), not NumPy arrays, "
                        "with traced indices; compute values that must stay Python values "
                        "outside the body and close over them.")
                return msg
            msg += (f"Possible fixes: mark {', '.join(repr(b) for b in base)} static "
                    f"(static_argnames={base!r}) if it takes few values; trace it at the "
                    f"concrete level (abstraction={{{base[0]!r}: 'concrete'}}); or express "
                    "the value-dependent choice with lax.cond, lax.while_loop or jnp.where.")
        else:
            eqn = builder.origin.get(var)
            how = f" (produced by `{eqn.primitive.name}`)" if eqn is not None else ""
            msg += ("This value does not depend on any argument: it became a tracer because "
                    f"absjit operations on constants were staged{how}.\n"
                    "Possible fix: use NumPy for shape arithmetic and other values that must "
                    "stay Python values, e.g. np.prod(x.shape) instead of "
                    "jnp.array(x.shape).prod().")
        return msg


def _base_name(leaf_name: str) -> str:
    for i, ch in enumerate(leaf_name):
        if ch in "[.":
            return leaf_name[:i]
    return leaf_name


def _label_for(transform: str, level: int) -> tuple:
    """The ``level=L/S`` shown in tracer reprs, following the seeds: ``make_jaxpr``
    traces at ``1/0``; ``jit`` at ``0/1`` (``1/1`` when nested in ``make_jaxpr``)."""
    parent = current_dynamic()
    if transform == "make_jaxpr":
        return (level, 0)
    if parent.trace_type is DynamicJaxprTrace:
        return (parent.label[0], parent.label[1] + 1)
    return (0, 1)


def trace_to_jaxpr(flat_fun, in_avals, debug_info: DebugInfo | None = None,
                   transform: str = "jit") -> tuple:
    """Trace ``flat_fun`` (flat args -> flat outputs) at ``in_avals``.

    Returns ``(closed_jaxpr, out_tracers_info)`` where the second item is the list of
    output avals as seen by the trace (``ConcreteArray`` when values propagated).
    """
    propagate = any(isinstance(a, ConcreteArray) for a in in_avals)
    builder = JaxprBuilder(debug_info, propagate)
    from ..core.trace import trace_stack
    label = _label_for(transform, len(trace_stack()))
    with new_main(DynamicJaxprTrace, payload=builder, dynamic=True, label=label) as main:
        trace = DynamicJaxprTrace(main)
        try:
            in_tracers = [builder.new_arg(trace, aval, i) for i, aval in enumerate(in_avals)]
            outs = flat_fun(*in_tracers)
            out_tracers = [trace.full_raise(o) for o in outs]
            closed = builder.build(out_tracers)
        finally:
            if builder.dim_env is not None:
                builder.dim_env.close()  # the assumed equalities are final
    return closed, [t.aval for t in out_tracers]


# ---------------------------------------------------------------------------
# Argument handling shared by make_jaxpr and jit
# ---------------------------------------------------------------------------
def fun_signature_info(fun):
    """``inspect.Signature`` of ``fun`` or None when it has none."""
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def flat_arg_names(names, args, kwargs=None) -> list:
    """A readable name for every leaf: ``x``, ``xs[0]``, ``params['w']``."""
    out = []
    for name, arg in zip(names, args):
        for path in tree_util.leaf_paths(arg):
            out.append(name + path)
    for k, v in (kwargs or {}).items():
        for path in tree_util.leaf_paths(v):
            out.append(k + path)
    return out


@api_boundary
def make_jaxpr(fun, static_argnums=(), abstraction=None):
    """Trace ``fun`` and return a function that builds its jaxpr.

    Parameters
    ----------
    fun : callable
        The function to trace. Python side effects in it run during tracing.
    static_argnums : int or tuple of int
        Positional arguments passed as Python values, not traced.
    abstraction : str, Level, or dict, optional
        The level dynamic arguments are traced at (default ``"shaped"``); a dict maps
        argument names to levels.

    Returns
    -------
    callable
        ``make_jaxpr(fun)(*args, **kwargs)`` returns a :class:`ClosedJaxpr`.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> print(absjit.make_jaxpr(lambda x: jnp.maximum(0., x))(5.))
    { lambda ; a:f32[]. let b:f32[] = max 0.0 a in (b,) }
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = tuple(static_argnums)

    def make_jaxpr_f(*args, **kwargs):
        sig = fun_signature_info(fun)
        nargs = len(args)
        static = {i % nargs if nargs else i for i in static_argnums}
        for i in static_argnums:
            if not -nargs <= i < nargs:
                raise ValueError(f"static_argnums {i} is out of range for {nargs} "
                                 "positional arguments")
        names = positional_names(sig, nargs)
        dyn_args, dyn_names = [], []
        for i, a in enumerate(args):
            if i in static:
                try:
                    hash(a)
                except TypeError:
                    raise ValueError(
                        f"Non-hashable static argument {names[i]!r} of type {type(a)}: "
                        "static arguments must be hashable (use a tuple instead of a list)."
                    ) from None
                continue
            dyn_args.append(a)
            dyn_names.append(names[i])
        leaves, in_tree = tree_util.tree_flatten((tuple(dyn_args), kwargs))
        leaf_names = flat_arg_names(dyn_names, dyn_args, kwargs)
        levels = _levels_for(abstraction, leaf_names)
        in_avals = []
        for leaf, lvl, nm in zip(leaves, levels, leaf_names):
            _check_leaf(leaf, nm)
            in_avals.append(check_aval(lvl, lvl.abstractify(leaf)))
        out_tree_box = []

        def flat_fun(*flat):
            d_args, d_kwargs = tree_util.tree_unflatten(in_tree, list(flat))
            it = iter(d_args)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            out = fun(*full, **d_kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_leaves

        debug = DebugInfo.of(fun, leaf_names, "make_jaxpr")
        closed, _ = trace_to_jaxpr(flat_fun, in_avals, debug, transform="make_jaxpr")
        return closed

    make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
    return make_jaxpr_f


def positional_names(sig, nargs: int) -> list:
    """A name for each of ``nargs`` positional arguments (``args[i]`` past the signature)."""
    names = []
    if sig is not None:
        for p in sig.parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
            elif p.kind == p.VAR_POSITIONAL:
                names.extend(f"{p.name}[{i}]" for i in range(nargs - len(names)))
                break
    names.extend(f"args[{i}]" for i in range(len(names), nargs))
    return names[:nargs]


def _levels_for(abstraction, leaf_names) -> list:
    if abstraction is None:
        lvl = get_level("shaped")
        return [lvl] * len(leaf_names)
    if isinstance(abstraction, dict):
        default = get_level("shaped")
        return [get_level(abstraction[_base_name(n)]) if _base_name(n) in abstraction
                else default for n in leaf_names]
    lvl = get_level(abstraction)
    return [lvl] * len(leaf_names)


def _check_leaf(leaf, name: str) -> None:
    if isinstance(leaf, Tracer):
        return
    try:
        get_aval(leaf)
    except TypeError:
        raise TypeError(
            f"Argument '{name}' ({leaf!r}) of type {type(leaf)} is not a valid absjit type: "
            "pass arrays, scalars, or pytrees (tuple, list, dict, None, namedtuple, "
            "registered classes) of them; iterators and generators must be turned into "
            "lists first.") from None
