"""Tracers, traces and ``bind``.

Trace state lives in a context variable (``_STATE``), never in module globals: each
thread and each ``contextvars`` context has its own stack. The stack holds one
``MainTrace`` per active transformation; level 0 is the eager ``EvalTrace``. The
*dynamic* main is where operations on plain values go (omnistaging): under ``jit`` or
``make_jaxpr`` that is the staging trace, so ``jnp.log(2.0)`` is staged too.

``bind(prim, args, params)`` finds the highest-level trace among the arguments' tracers
and the dynamic main, raises the arguments into it and lets it process the primitive.
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .. import dtypes
from ..errors import UnexpectedTracerError
from .avals import AbstractValue, ShapedArray
from .dims import Dim
from .primitive import abstract_eval_rules, impl_rules

__all__ = ["MainTrace", "Trace", "Tracer", "EvalTrace", "bind", "new_main", "get_aval",
           "to_numpy", "current_dynamic", "find_top_trace", "is_tracer",
           "register_array_type", "new_array"]


class MainTrace:
    """One active transformation on the trace stack."""

    __slots__ = ("level", "trace_type", "payload", "label", "alive")

    def __init__(self, level: int, trace_type, payload=None, label=None):
        self.level = level
        self.trace_type = trace_type
        self.payload = payload
        self.label = label if label is not None else (level, 0)
        self.alive = True

    def __repr__(self):
        return f"{self.trace_type.__name__}(level={self.label[0]}/{self.label[1]})"


class _TraceState:
    __slots__ = ("stack", "dynamic")

    def __init__(self, stack: tuple, dynamic: MainTrace):
        self.stack = stack
        self.dynamic = dynamic


class Trace:
    """How one transformation interprets primitives (subclass per transform)."""

    __slots__ = ("main",)

    def __init__(self, main: MainTrace):
        self.main = main

    def pure(self, val) -> "Tracer":
        """Wrap a non-tracer value (constant) as a tracer of this trace."""
        raise NotImplementedError

    def lift(self, tracer: "Tracer") -> "Tracer":
        """Wrap a tracer of a lower-level trace as a tracer of this trace."""
        raise NotImplementedError

    def full_raise(self, val) -> "Tracer":
        if not isinstance(val, Tracer):
            return self.pure(val)
        main = val._trace.main
        if main is self.main:
            return val
        if main.level < self.main.level:
            return self.lift(val)
        raise escaped_tracer_error(val, "was used inside a transformation nested below "
                                        "the one that created it")

    def process_primitive(self, primitive, tracers, params) -> list:
        raise NotImplementedError

    def __repr__(self):
        return repr(self.main)


class Tracer:
    """A stand-in for a value during a transformation; its ``aval`` says what is known.

    Python operators and array methods are installed by ``absjit.numpy`` (the same set
    as :class:`absjit.Array`), so traced code reads like NumPy code.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> AbstractValue:
        raise NotImplementedError

    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    @property
    def weak_type(self):
        return self.aval.weak_type

    def full_lower(self):
        return self

    def __bool__(self):
        return self.aval._bool(self)

    def __int__(self):
        return self.aval._int(self)

    def __index__(self):
        return self.aval._index(self)

    def __float__(self):
        return self.aval._float(self)

    def __complex__(self):
        return self.aval._complex(self)

    def __array__(self, dtype=None, copy=None):
        val = self.aval._array(self)
        return np.asarray(val, dtype=dtype)

    def item(self, *args):
        return self._concrete("item").item(*args)

    def tolist(self):
        return self._concrete("tolist").tolist()

    def _concrete(self, method: str) -> np.ndarray:
        """The value, when this tracer's level knows it (``concrete``); otherwise the
        concretization error that names ``method``."""
        value = getattr(self.aval, "concrete_value", lambda: None)()
        if value is None:
            from ..errors import ConcretizationTypeError
            raise ConcretizationTypeError(
                self, f"The problem arose with the `{method}` method.")
        return np.asarray(value)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__} (a traced array)")

    def __setitem__(self, idx, value):
        raise TypeError(
            f"{type(self).__name__!r} object does not support item assignment. absjit "
            "arrays are immutable; use x.at[idx].set(y) instead of x[idx] = y.")

    def __repr__(self):
        return f"Traced<{self.aval!r}>with<{self._trace.main!r}>"

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)


def is_tracer(x) -> bool:
    return isinstance(x, Tracer)


# ---------------------------------------------------------------------------
# Values outside any trace
# ---------------------------------------------------------------------------
#: The type eager results are wrapped as: ``absjit.array.Array``, a layer above this
#: module. ``absjit.array`` registers it here when it is imported
#: (:func:`register_array_type`), which ``import absjit`` does before anything runs.
_array_type = None


def register_array_type(cls) -> None:
    """Make ``cls`` the type of eager results (``absjit.array`` registers ``Array``).

    ``cls._new(value, weak_type, aval)`` wraps a NumPy array without copying it, and
    an instance of exactly ``cls`` carries its value in ``_value`` and its aval (or
    None) in ``_aval``."""
    global _array_type
    _array_type = cls


def new_array(value: np.ndarray, weak_type: bool = False, aval=None):
    """``value`` wrapped, without a copy, as the registered array type (``Array``)."""
    return _array_type._new(value, weak_type, aval)


def _unsupported(x) -> TypeError:
    return TypeError(f"Argument '{x!r}' of type {type(x)} is not a valid absjit type.")


def _masked(x) -> ValueError:
    return ValueError("NumPy masked arrays are not supported as inputs (their mask would "
                      "be ignored); use arr.filled(value) or arr.compressed() to turn it "
                      "into a plain array first.")


def get_aval(x) -> AbstractValue:
    """The ``ShapedArray`` of a concrete value, or a tracer's aval."""
    if isinstance(x, Tracer):
        return x.aval
    aval = getattr(x, "aval", None)
    if isinstance(aval, AbstractValue):
        return aval
    t = type(x)
    if t is float or t is int or t is bool or t is complex:
        return ShapedArray((), dtypes.python_scalar_dtype(x), t is not bool)
    if t is Dim:  # a symbolic size used as a value: a weakly typed int
        return ShapedArray((), dtypes.canonicalize_dtype(np.int64), True)
    if isinstance(x, (np.ndarray, np.generic)):
        if t is not np.ndarray and dtypes.is_masked_array(x):
            raise _masked(x)
        if not dtypes.is_supported(x.dtype) and x.dtype != dtypes.float0:
            raise TypeError(f"Argument of dtype {x.dtype} is not a valid absjit array "
                            "(object, string and datetime arrays are not supported)")
        return ShapedArray(np.shape(x), dtypes.canonicalize_dtype(x.dtype), False)
    raise _unsupported(x)


def to_numpy(x) -> np.ndarray:
    """The canonical NumPy value of a non-tracer input."""
    val = getattr(x, "_value", None)
    if val is not None:
        return val
    t = type(x)
    if t is float or t is int or t is bool or t is complex:
        return np.asarray(x, dtype=dtypes.python_scalar_dtype(x))
    if isinstance(x, (np.ndarray, np.generic)):
        if t is not np.ndarray and dtypes.is_masked_array(x):
            raise _masked(x)
        dt = dtypes.canonicalize_dtype(x.dtype)
        return np.asarray(x, dtype=dt)
    if isinstance(x, Tracer):
        raise escaped_tracer_error(x, "reached the eager interpreter")
    if t is Dim:
        int(x)  # raises InconclusiveDimensionError naming the argument and axis
    raise _unsupported(x)


class EvalTrace(Trace):
    """Eager evaluation with the NumPy impl rules (level 0)."""

    __slots__ = ()

    def pure(self, val):
        return val

    lift = pure

    def process_primitive(self, primitive, args, params):
        return eval_primitive(primitive, args, params)


_ABSTRACT_CACHE: dict = {}


def abstract_eval(primitive, avals_in, params) -> list:
    """Output avals of ``primitive`` on ``avals_in`` (its abstract evaluation rule)."""
    try:
        rule = abstract_eval_rules[primitive]
    except KeyError:
        raise NotImplementedError(
            f"primitive {primitive.name!r} has no abstract evaluation rule") from None
    return rule(*avals_in, **params)


def abstract_eval_cached(primitive, avals_in: tuple, params: dict) -> list:
    """``abstract_eval_rules[primitive]`` memoised on (primitive, avals, params): eager
    execution of the same op on same-typed values skips re-deriving types."""
    try:
        key = (primitive, avals_in, tuple(params.items()) if params else ())
        return _ABSTRACT_CACHE[key]
    except KeyError:
        pass
    except TypeError:  # unhashable params: no caching
        key = None
    avals_out = abstract_eval(primitive, avals_in, params)
    if key is not None and len(_ABSTRACT_CACHE) < 65536:
        _ABSTRACT_CACHE[key] = avals_out
    return avals_out


def eval_primitive(primitive, args, params) -> list:
    """Run one primitive eagerly: abstract eval first (checks), then the NumPy impl."""
    Array = _array_type
    avals_in = []
    vals = []
    for a in args:
        if type(a) is Array:
            avals_in.append(a._aval or a.aval)
            vals.append(a._value)
        else:
            avals_in.append(get_aval(a))
            vals.append(to_numpy(a))
    avals_out = abstract_eval_cached(primitive, tuple(avals_in), params)
    try:
        impl = impl_rules[primitive]
    except KeyError:
        raise NotImplementedError(f"primitive {primitive.name!r} has no eager rule") from None
    return wrap_outputs(impl(*vals, **params), avals_out)


def wrap_outputs(outs, avals_out) -> list:
    """An impl rule's results as ``Array`` values of ``avals_out`` (dtype cast and
    broadcast where the rule returned something looser)."""
    Array = _array_type
    results = []
    for out, aval in zip(outs, avals_out):
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        if out.dtype is not aval.dtype and out.dtype != aval.dtype:
            out = out.astype(aval.dtype)
        if out.shape != aval.shape:  # impl returned a broadcastable view
            out = np.broadcast_to(out, aval.shape)
        results.append(Array._new(out, aval.weak_type, aval))
    return results


# ---------------------------------------------------------------------------
# The trace stack
# ---------------------------------------------------------------------------
EVAL_MAIN = MainTrace(0, EvalTrace, label=(0, 0))
_BASE_STATE = _TraceState((EVAL_MAIN,), EVAL_MAIN)
_STATE: contextvars.ContextVar = contextvars.ContextVar("absjit_trace_state",
                                                          default=_BASE_STATE)


def current_dynamic() -> MainTrace:
    return _STATE.get().dynamic


def trace_stack() -> tuple:
    return _STATE.get().stack


@contextlib.contextmanager
def new_main(trace_type, payload=None, dynamic: bool = False, label=None):
    """Push a ``MainTrace`` of ``trace_type``; with ``dynamic`` it also receives
    operations on plain values (staging)."""
    state = _STATE.get()
    main = MainTrace(len(state.stack), trace_type, payload, label)
    token = _STATE.set(_TraceState(state.stack + (main,),
                                   main if dynamic else state.dynamic))
    try:
        yield main
    finally:
        _STATE.reset(token)
        main.alive = False


def escaped_tracer_error(tracer, how: str) -> UnexpectedTracerError:
    main = tracer._trace.main
    payload = main.payload
    where = getattr(payload, "debug_info", None)
    fn = f" The function being traced when the value leaked was {where}." if where else ""
    return UnexpectedTracerError(
        "Encountered an unexpected tracer. A function transformed by absjit had a side "
        "effect, allowing for a reference to an intermediate value with type "
        f"{tracer.aval.str_short() if hasattr(tracer.aval, 'str_short') else tracer.aval} "
        f"wrapped in a {type(tracer).__name__} to escape the scope of the "
        f"transformation; it {how}.{fn}\n"
        "absjit transformations require that functions explicitly return their outputs, "
        "and disallow saving intermediate values to global state.")


def _top_main(args) -> MainTrace:
    """The highest-level live main among the dynamic one and the tracers in ``args``."""
    top = _STATE.get().dynamic
    for a in args:
        if isinstance(a, Tracer):
            main = a._trace.main
            if not main.alive:
                raise escaped_tracer_error(a, "was used after its transformation finished")
            if main.level > top.level:
                top = main
    return top


def find_top_trace(args) -> Trace:
    top = _top_main(args)
    return top.trace_type(top)


def bind(primitive, args, params) -> list:
    """Apply ``primitive`` to ``args`` in the innermost relevant trace; returns a list."""
    top = _top_main(args)
    if top is EVAL_MAIN:
        return eval_primitive(primitive, args, params)
    trace = top.trace_type(top)
    tracers = [trace.full_raise(a) for a in args]
    outs = trace.process_primitive(primitive, tracers, params)
    return [o.full_lower() if isinstance(o, Tracer) else o for o in outs]


from . import primitive as _primitive_module  # noqa: E402

_primitive_module._bind = bind
