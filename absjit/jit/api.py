"""``absjit.jit``: trace once per call signature, compile, cache, dispatch.

A call goes one of three ways:

1. **fast hit** — positional arrays and Python scalars, no trace active: a key built
   from the arguments' types, shapes and dtypes finds a runner generated for exactly
   those argument types (see :mod:`absjit.jit.cache`); it calls the executable directly.
2. **general path** — pytrees, keyword and static arguments: arguments are bound to the
   signature (precomputed at ``jit`` time), each dynamic leaf is abstracted at its level,
   and the key ``(context, structure, avals, static values)`` is looked up. A miss
   traces, simplifies, compiles (through the process-wide compile cache) and adds an
   entry.
3. **nested** — called while another transformation traces (an argument is a tracer,
   or a staging trace is active): the function is traced to a jaxpr and staged as a
   ``jit[name=... jaxpr={...}]`` equation.
"""
from __future__ import annotations

import functools
import threading
import time
import types
import weakref

import numpy as np

from .. import _traceback, tree_util
from ..api_contexts import jit_disabled
from ..array import Array, DeviceArray
from ..backends import background
from ..backends.base import CompileOptions, registered_backends, select_backend
from ..config import config
from ..core.avals import ShapedArray
from ..core.passes import simplify
from ..core.trace import _BASE_STATE, _STATE, EVAL_MAIN, Tracer, get_aval, to_numpy
from ..interpreters.staging import DebugInfo, trace_to_jaxpr
from ..ops.call import hoist_consts, jit_p
from . import compile_cache, tiering
from .args import _ArgSpec, _Call, _process
from .cache import CacheEntry, EntryCache, all_caches
from .pickling import JitFunction
from .runners import _arg_kind, _general_runner, _lazy_runner

__all__ = ["jit", "clear_caches", "Lowered", "Compiled", "Traced", "JitFunction"]


# ---------------------------------------------------------------------------
# The context part of every key: flags that change results, and the default backend.
# Kept in a module global refreshed by a config listener so the hit path reads it once.
# ---------------------------------------------------------------------------
def _current_context() -> tuple:
    return config.trace_context() + (config.default_backend,)


_ctx = _current_context()
# The fast key carries a small int standing for ``_ctx`` (cheaper to hash than a tuple).
# While ``config.disable_jit`` is on the int differs, so the hit path finds nothing and
# the miss path runs the function as plain Python.
_ctx_ids: dict = {}
_ctx_id = _ctx_ids.setdefault((_ctx, config.disable_jit), 0)


def _on_config_update(name, value) -> None:
    global _ctx, _ctx_id
    _ctx = _current_context()
    _ctx_id = _ctx_ids.setdefault((_ctx, config.disable_jit), len(_ctx_ids))


config.on_update(_on_config_update)


# ---------------------------------------------------------------------------
# Tracing
# ---------------------------------------------------------------------------
def _check_outputs(fn_name, out):
    leaves, tree = tree_util.tree_flatten(out)
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tracer) or type(leaf) is Array:
            continue
        try:
            get_aval(leaf)
        except TypeError:
            path = tree_util.leaf_paths(out)[i]
            raise TypeError(
                f"jitted function {fn_name} returned a value of type {type(leaf)} at "
                f"output{path or ''} ({leaf!r}), which is not a valid absjit type: return "
                "arrays, scalars, or pytrees of them.") from None
    return leaves, tree


def _trace(spec: _ArgSpec, fun, call: _Call):
    """Trace ``fun`` at ``call``'s avals: ``(closed_jaxpr, out_tree, seconds)``."""
    out_box = []
    args, kwargs = call.args, call.kwargs
    static_pos = call.static_pos
    kw_names = call.in_tree[2]
    trees = call.in_tree[3]

    def flat_fun(*flat):
        values, start = [], 0
        for tree in trees:
            n = tree.num_leaves
            values.append(tree_util.tree_unflatten(tree, flat[start:start + n]))
            start += n
        it = iter(values)
        full_args = [a if i in static_pos else next(it) for i, a in enumerate(args)]
        full_kwargs = {}
        for k in kw_names:
            full_kwargs[k] = kwargs[k] if (spec.all_static or k in spec.static_argnames) \
                else next(it)
        out = fun(*full_args, **full_kwargs)
        leaves, tree = _check_outputs(spec.fn_name, out)
        out_box.append(tree)
        return leaves

    debug = DebugInfo.of(fun, call.leaf_names(), "jit")
    debug.fn_name = spec.fn_name
    t0 = time.perf_counter()
    closed, _ = trace_to_jaxpr(flat_fun, list(call.avals), debug, transform="jit")
    return closed, out_box[0], time.perf_counter() - t0


#: Traced jaxprs kept per jitted function for calls under other transformations.
NESTED_CACHE_SIZE = 64


def _stage_nested(spec, fun, call: _Call, traced=None, cache=None):
    """Stage a ``jit`` equation into the active trace. With ``cache`` (the function's
    :class:`EntryCache`), the jaxpr traced for these argument avals is reused: a helper
    called under ``grad``, ``vmap`` or another ``jit`` is traced once per signature —
    unless it closes over a value of an enclosing transformation, which belongs to that
    one trace."""
    key = (_ctx, call.in_tree, call.avals, call.static_key) if cache is not None \
        else None
    hit = cache.nested.get(key) if key is not None else None
    if hit is None:
        closed, out_tree, _ = traced if traced is not None else _trace(spec, fun, call)
        inner, consts = hoist_consts(simplify(closed))
        if key is not None and not any(isinstance(c, Tracer) for c in consts):
            with cache.lock:
                if len(cache.nested) >= NESTED_CACHE_SIZE:
                    cache.nested.pop(next(iter(cache.nested)))
                cache.nested[key] = (inner, consts, out_tree)
    else:
        inner, consts, out_tree = hit
    outs = jit_p.bind(*consts, *call.leaves, jaxpr=inner, name=spec.fn_name)
    return tree_util.tree_unflatten(out_tree, outs)


_NUMPY_SCALARS = frozenset({np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                            np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                            np.float64, np.complex64, np.complex128})


def _fast_key(args):
    """The fast key of positional ``args``, or None when some argument is not a plain
    array or Python scalar. Flat: ``(context id, shape, dtype, weak, <scalar type>, ...)``
    parses unambiguously, since a scalar contributes one type object and an array a
    shape tuple, a dtype and a flag (None for an ndarray)."""
    key = [_ctx_id]
    for x in args:
        t = type(x)
        if t is Array:
            v = x._value
            key += (v.shape, v.dtype, x._weak_type)
        elif t is float or t is int or t is bool:
            key.append(t)
        elif t is np.ndarray:
            key += (x.shape, x.dtype, None)
        elif t in _NUMPY_SCALARS:
            key.append(t)  # the type fixes the aval (NumPy scalars are strongly typed)
        elif isinstance(x, DeviceArray):  # the flag also says which device's array
            key += (x.shape, x.dtype, (x._weak_type, t))
        else:
            return None
    return tuple(key)


def _ranked_fast_key(args):
    """``_fast_key`` for the ``ranked`` level: each array contributes its rank (an int)
    or, when some axis has size 1, which axes do (a tuple of bools), instead of its
    shape — every size of a rank shares the key, as it shares the entry."""
    key = [_ctx_id, "ranked"]
    for x in args:
        t = type(x)
        if t is Array:
            shape = x._value.shape
            key += (tuple(d == 1 for d in shape) if 1 in shape else len(shape),
                    x._value.dtype, x._weak_type)
        elif t is float or t is int or t is bool:
            key.append(t)
        elif t is np.ndarray:
            shape = x.shape
            key += (tuple(d == 1 for d in shape) if 1 in shape else len(shape), x.dtype,
                    None)
        elif t in _NUMPY_SCALARS:
            key.append(t)
        elif isinstance(x, DeviceArray):
            shape = x.shape
            key += (tuple(d == 1 for d in shape) if 1 in shape else len(shape), x.dtype,
                    (x._weak_type, t))
        else:
            return None
    return tuple(key)


# ---------------------------------------------------------------------------
# Ahead-of-time views: f.trace(...), f.lower(...), .compile()
# ---------------------------------------------------------------------------
class Traced:
    """The result of ``f.trace(*args)``: the jaxpr and its output structure."""

    def __init__(self, spec, fun, call, closed, out_tree, backend_name, options):
        self._spec, self._fun, self._call = spec, fun, call
        self.jaxpr = closed
        self.out_tree = out_tree
        self._backend_name, self._options = backend_name, options

    @property
    def in_avals(self):
        return list(self._call.avals)

    @property
    def out_avals(self):
        return list(self.jaxpr.out_avals)

    def lower(self) -> "Lowered":
        return Lowered(self._spec, self._call, simplify(self.jaxpr), self.out_tree,
                       select_backend(self._backend_name), self._options)


class Lowered:
    """A traced and simplified jaxpr ready to compile (``f.lower(*args)``).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> lowered = absjit.jit(lambda x: x * 2.0).lower(jnp.ones(3))
    >>> print(lowered.as_text())
    { lambda ; a:f32[3]. let b:f32[3] = mul a 2.0 in (b,) }
    >>> lowered.compile()(jnp.ones(3))
    Array([2., 2., 2.], dtype=float32)
    """

    def __init__(self, spec, call, closed, out_tree, backend, options):
        self._spec, self._call = spec, call
        self.jaxpr = closed
        self.out_tree = out_tree
        self.backend = backend
        self._options = options

    @property
    def in_avals(self):
        return list(self._call.avals)

    @property
    def out_avals(self):
        return list(self.jaxpr.out_avals)

    def as_text(self) -> str:
        return str(self.jaxpr)

    def compile(self) -> "Compiled":
        exe = compile_cache.compile(self.jaxpr, self.backend, self._options)
        return Compiled(self, exe)


class Compiled:
    """A compiled specialisation: call it with arguments of the lowered types."""

    def __init__(self, lowered, executable):
        self._lowered = lowered
        self.executable = executable
        call = lowered._call
        consts = [lowered.backend.to_buffer(to_numpy(c)) for c in lowered.jaxpr.consts]
        self._entry = CacheEntry(None, (), lowered.jaxpr, executable, consts,
                                 call.avals, _shaped(lowered.jaxpr.out_avals),
                                 lowered.out_tree, lowered.backend, 0.0, 0.0)
        self._run = _general_runner(self._entry)

    in_avals = property(lambda self: self._lowered.in_avals)
    out_avals = property(lambda self: self._lowered.out_avals)

    def as_text(self, dialect: str = "kernel") -> str:
        """What was compiled: ``"kernel"`` (default) the backend's generated source,
        ``"ir"`` the optimised loop IR it was rendered from, ``"plan"`` the fusion plan
        (which values became arrays, and why)."""
        if dialect == "kernel":
            return self.executable.as_text()
        if dialect == "ir":
            program = getattr(self.executable, "program", None)
            if program is None:
                raise ValueError(f"the {self._lowered.backend.name} backend compiled no "
                                 "loop IR for this function")
            from ..compiler import pformat
            return pformat(program)
        if dialect == "plan":
            from ..compiler import explain
            return explain(self._lowered.jaxpr)
        raise ValueError(f"unknown dialect {dialect!r}: expected 'kernel', 'ir' or 'plan'")

    def __call__(self, *args, **kwargs):
        spec = self._lowered._spec
        call = _process(spec, args, kwargs)
        want = self._lowered._call
        if (call.in_tree, call.avals, call.static_key) != (want.in_tree, want.avals,
                                                            want.static_key):
            raise TypeError(
                f"compiled {spec.fn_name} was lowered for "
                f"{', '.join(f'{n}: {d}' for n, d in want.described())}; called with "
                f"{', '.join(f'{n}: {d}' for n, d in call.described())}")
        return self._run(call.leaves)


def _shaped(avals) -> list:
    return [a.to_shaped() if isinstance(a, ShapedArray) else a for a in avals]


# ---------------------------------------------------------------------------
# jit
# ---------------------------------------------------------------------------
_SHARED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.RLock()


def _check_backend_name(requested) -> None:
    """A ``ValueError`` naming what the user typed and the backends this machine has,
    for a backend name that is not available (``"gpu"`` on a machine without CUDA)."""
    from ..backends.base import _ALIASES, _REGISTRY, available_backends
    from ..errors import BackendUnavailableError
    if not isinstance(requested, str):
        raise ValueError(f"jit: backend must be a string such as 'cpu', got {requested!r}")
    name = _ALIASES.get(requested, requested)
    available = available_backends()
    if name in available:
        return
    listed = f"available backends: {', '.join(available)} (see absjit.backends())"
    if name not in _REGISTRY and name not in _ALIASES.values():
        raise ValueError(f"jit: unknown backend {requested!r}; {listed}")
    missing = _REGISTRY[name].unavailable_error() if name in _REGISTRY else None
    if isinstance(missing, ImportError):  # "xla" without jax: say what to install
        raise missing
    spelled = requested if name == requested else f"{requested}/{name}"
    reason = getattr(_REGISTRY.get(name), "unavailable_reason", lambda: None)()
    raise BackendUnavailableError(
        f"jit: backend {requested!r} is not available on this machine (no {spelled} "
        f"backend); {listed}" + (f". Reason: {reason}" if reason else ""))


def _request_key(static_argnums, static_argnames, abstraction, backend, compiler_options):
    """A hashable summary of ``jit``'s options as given, or None when they do not hash."""
    def freeze(v):
        if isinstance(v, dict):
            return ("dict",) + tuple(sorted((k, freeze(x)) for k, x in v.items()))
        if isinstance(v, (list, tuple)):
            return ("seq",) + tuple(freeze(x) for x in v)
        return v
    key = (freeze(static_argnums), freeze(static_argnames), freeze(abstraction), backend,
           freeze(compiler_options))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _shared_state(fun, request_key, build):
    """``(spec, entry cache, options, weakref to the last wrapper)`` for ``fun`` and
    these options, made by ``build()`` the first time: ``jit(f)`` in a loop reuses the
    signature analysis and the entries. Held weakly by ``fun``; the wrapper is held only
    through a weak reference, since it refers to ``fun``."""
    if request_key is None:
        return build()
    with _SHARED_LOCK:
        try:
            per_fun = _SHARED.get(fun)
            if per_fun is None:
                per_fun = _SHARED[fun] = {}
        except TypeError:  # not weak-referenceable or not hashable
            return build()
        state = per_fun.get(request_key)
        if state is None:
            state = per_fun[request_key] = build()
        return state


_SPECS: dict = {}


def _arg_spec(fun, fn_name, request_key, static_argnums, static_argnames, abstraction):
    """``_ArgSpec`` for ``fun``; shared by plain functions with the same code and the
    same set of defaulted parameters (a lambda re-created in a loop analyses its
    signature once)."""
    key = None
    if request_key is not None and type(fun) is types.FunctionType \
            and "__wrapped__" not in fun.__dict__ and "__signature__" not in fun.__dict__:
        key = (fun.__code__, fn_name, len(fun.__defaults__ or ()),
               tuple(sorted(fun.__kwdefaults__ or ())), request_key)
        spec = _SPECS.get(key)
        if spec is not None:
            return spec
    spec = _ArgSpec(fun, fn_name, static_argnums, static_argnames, abstraction)
    if key is not None:
        if len(_SPECS) > 4096:  # code objects made on the fly (exec): stay bounded
            _SPECS.clear()
        _SPECS[key] = spec
    return spec


def _fn_name(fun) -> str:
    name = getattr(fun, "__name__", None)
    if name is None and isinstance(fun, functools.partial):
        name = getattr(fun.func, "__name__", None)
    return name or type(fun).__name__


def _check_donation(donate_argnums, donate_argnames) -> None:
    """JAX's type checks of ``donate_argnums``/``donate_argnames`` (absjit does not
    donate: arrays are immutable and no executable writes into its arguments)."""
    for value, kind, name in ((donate_argnums, int, "donate_argnums"),
                              (donate_argnames, str, "donate_argnames")):
        if value is None:
            continue
        items = (value,) if isinstance(value, kind) else value
        try:
            items = tuple(items)
        except TypeError:
            items = (value,)
        for item in items:
            if not isinstance(item, kind) or isinstance(item, bool):
                raise TypeError(f"jit: {name} must be {'an int' if kind is int else 'a str'}"
                                f" or a sequence of them, got {value!r}")


def jit(fun=None, *, static_argnums=None, static_argnames=None, abstraction=None,
        backend=None, compiler_options=None, inline=False, donate_argnums=None,
        donate_argnames=None):
    """Compile ``fun``: trace it once per call signature and run compiled code.

    Parameters
    ----------
    fun : callable
        A function of arrays, scalars and pytrees of them, returning the same.
    static_argnums, static_argnames : int, str or sequences of them, optional
        Arguments passed as Python values: they may be branched on, must be hashable,
        and every new value traces and compiles again. Either one is completed from
        the other using ``fun``'s signature.
    abstraction : str, Level, or dict, optional
        The level dynamic arguments are traced at (default ``"shaped"``); a dict maps
        argument names to levels (``"static"`` there means static).
    backend : str, optional
        ``"cpu"``, ``"interpret"``, ... (default: ``config.default_backend``, then
        ``"cpu"`` when available, else ``"interpret"``). A name this machine does not
        have is a ``ValueError`` listing ``absjit.backends()``.
    compiler_options : dict, optional
        ``{"fastmath": bool, "parallel": bool or None, "extra": dict}`` (see
        :class:`absjit.backends.base.CompileOptions` for what fast math may change);
        part of cache keys. An unknown key or a value of the wrong type is a
        ``ValueError``.
    inline : bool
        Accepted as in JAX. absjit inlines every nested ``jit`` call before compiling
        anyway, so it changes nothing.
    donate_argnums, donate_argnames : int, str or sequences of them, optional
        Accepted as in JAX and checked; absjit never writes into an argument's buffer
        (arrays are immutable), so donating changes nothing.

    Returns
    -------
    JitFunction
        The jitted function, with ``lower``, ``trace``, ``cache_info``,
        ``clear_cache`` and ``_cache_size``. It pickles as the function it wraps and
        these options (by reference when importable by name), and compiles again,
        lazily, where it is unpickled (see :mod:`absjit.jit.pickling`).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> from functools import partial
    >>> @partial(absjit.jit, static_argnames=["n"])
    ... def power(x, n):
    ...     return x ** n if n > 0 else jnp.ones_like(x)
    >>> power(jnp.arange(3.0), 2)
    Array([0., 1., 4.], dtype=float32)
    >>> power._cache_size()
    1
    """
    if not isinstance(inline, bool):
        raise TypeError(f"jit: inline must be a bool, got {inline!r}")
    _check_donation(donate_argnums, donate_argnames)
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, abstraction=abstraction,
                                 backend=backend, compiler_options=compiler_options,
                                 inline=inline, donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames)
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {fun!r} of type {type(fun)}")
    request_key = _request_key(static_argnums, static_argnames, abstraction, backend,
                               compiler_options)

    def build():
        fn_name = _fn_name(fun)
        spec = _arg_spec(fun, fn_name, request_key, static_argnums, static_argnames,
                         abstraction)
        if backend is not None:
            _check_backend_name(backend)
            select_backend(backend)  # an unknown name fails here, not at the first call
        options = compiler_options if isinstance(compiler_options, CompileOptions) \
            else CompileOptions.from_dict(compiler_options)
        return [spec, EntryCache(fn_name), options, None]

    shared = _shared_state(fun, request_key, build)
    alive = shared[3]() if shared[3] is not None else None
    if alive is not None:
        return alive
    spec, cache, options, _ = shared
    fast_limit = spec.fast_limit
    fast_table = cache.fast  # updated in place, never replaced: the closure keeps it
    state = _STATE
    base_state = _BASE_STATE

    def miss(call: _Call, key, fast_key):
        with cache.lock:
            entry = cache.entries.get(key)
            if entry is None:
                cache.misses += 1
                spec.check_bind(call.args, call.kwargs)
                if config.explain_cache_misses:
                    cache.explain_miss(key[0], call.described())
                bk = select_backend(backend)
                traced = _trace(spec, fun, call)
                closed, out_tree, trace_s = traced
                if any(isinstance(c, Tracer) for c in closed.consts):
                    # ``fun`` closes over a value of an enclosing transformation: stage it
                    # into that transformation rather than caching a compiled entry.
                    return None, _stage_nested(spec, fun, call, traced)
                t0 = time.perf_counter()
                closed = simplify(closed)
                exe = tiering.compile_for_miss(closed, bk, options, spec.fn_name)
                compile_s = time.perf_counter() - t0
                consts = [bk.to_buffer(to_numpy(c)) for c in closed.consts]
                entry = CacheEntry(key, call.described(), closed, exe, consts, call.avals,
                                   _shaped(closed.jaxpr.out_avals), out_tree, bk,
                                   trace_s, compile_s)
                entry.run = _general_runner(entry)
                cache.add(entry)
                if isinstance(exe, tiering.TieredExecutable):
                    exe.listeners.append(functools.partial(_switch_tier, cache, entry))
            else:
                cache.hits += 1
            if fast_key is not None:
                kinds = tuple(_arg_kind(x, a) for x, a in zip(call.args, entry.in_avals))
                cache.fast[fast_key] = _lazy_runner(cache, fast_key, entry, kinds)
                if isinstance(entry.executable, tiering.TieredExecutable):
                    entry.fast_kinds[fast_key] = kinds
        exe = entry.executable
        if isinstance(exe, tiering.TieredExecutable) and exe.compiled is not None:
            _switch_tier(cache, entry, exe.compiled)  # it finished before we listened
        return entry, None

    key_of = _ranked_fast_key if spec.ranked_fast else _fast_key

    def jitted(*args, **kwargs):
        fast_key = None
        if not kwargs and state.get() is base_state and len(args) <= fast_limit:
            # The hit path. The one-array case builds its key inline; it equals what
            # _fast_key returns for it.
            if len(args) == 1 and type(args[0]) is Array and key_of is _fast_key:
                x = args[0]
                v = x._value
                fast_key = (_ctx_id, v.shape, v.dtype, x._weak_type)
            else:
                fast_key = key_of(args)
            if fast_key is not None:
                run = fast_table.get(fast_key)
                if run is not None:
                    cache.hits += 1
                    return run(*args)
        if jit_disabled():
            return fun(*args, **kwargs)
        try:  # the miss path traces the user's function: filter its tracebacks
            call = _process(spec, args, kwargs)
            if call.has_tracer or state.get().dynamic is not EVAL_MAIN:
                return _stage_nested(spec, fun, call, cache=cache)
            key = (_ctx, call.in_tree, call.avals, call.static_key)
            entry = cache.entries.get(key)
            if entry is None or fast_key is not None:
                entry, staged = miss(call, key, fast_key)
                if entry is None:
                    return staged
            else:
                cache.hits += 1
            return entry.run(call.leaves)
        except Exception as err:
            if _traceback.should_filter(err):
                raise _traceback.filtered(err)
            raise

    def trace(*args, **kwargs) -> Traced:
        """Trace for these arguments without compiling or caching."""
        call = _process(spec, args, kwargs)
        spec.check_bind(call.args, call.kwargs)
        closed, out_tree, _ = _trace(spec, fun, call)
        return Traced(spec, fun, call, closed, out_tree, backend, options)

    def lower(*args, **kwargs) -> Lowered:
        """Trace and simplify for these arguments; ``.compile()`` compiles."""
        return trace(*args, **kwargs).lower()

    def cache_info():
        """Entries (readable key, trace and compile seconds), hits and misses."""
        return cache.info()

    def _cache_size() -> int:
        return len(cache.entries)

    functools.update_wrapper(jitted, fun)
    # The wrapper calls ``jitted`` directly; it adds pickling (absjit.jit.pickling).
    wrapper = JitFunction(jitted, fun, dict(
        static_argnums=static_argnums, static_argnames=static_argnames,
        abstraction=abstraction, backend=backend, compiler_options=compiler_options))
    wrapper.trace = trace
    wrapper.lower = lower
    wrapper.cache_info = cache_info
    wrapper.clear_cache = cache.clear
    wrapper._cache_size = _cache_size
    wrapper._entry_cache = cache
    shared[3] = weakref.ref(wrapper)
    return wrapper


def _switch_tier(cache, entry, compiled) -> None:
    """Serve ``entry`` from its compiled executable from now on: the entry's runner and
    its fast runners are made again for it, so later hits skip the tiered wrapper."""
    with cache.lock:
        tiered = entry.executable
        if not isinstance(tiered, tiering.TieredExecutable):
            return  # switched already
        entry.executable = compiled
        entry.compile_seconds = tiered.compile_seconds or entry.compile_seconds
        entry.run = _general_runner(entry)
        if cache.entries.get(entry.key) is entry:  # not cleared meanwhile
            for fast_key, kinds in entry.fast_kinds.items():
                cache.fast[fast_key] = _lazy_runner(cache, fast_key, entry, kinds)
        entry.fast_kinds = {}


def _after_fork_in_child() -> None:
    """Locks a thread the child does not have may hold (a background compile switching
    an entry, a jit() call) are made new."""
    global _SHARED_LOCK
    _SHARED_LOCK = threading.RLock()
    for cache in all_caches():
        cache.lock = threading.RLock()
    for backend in registered_backends():
        backend._lock = threading.RLock()


background.at_fork_reinit(_after_fork_in_child)
background.at_fork_reinit(compile_cache._after_fork_in_child)


def clear_caches() -> None:
    """Empty every jitted function's entry cache and the compile cache.

    Examples
    --------
    >>> import absjit
    >>> absjit.clear_caches()
    """
    for cache in all_caches():
        cache.clear()
    compile_cache.clear()
