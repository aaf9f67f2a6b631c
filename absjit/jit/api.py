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

import builtins
import functools
import inspect
import time
import types
import weakref

import numpy as np

from .. import tree_util
from ..array import Array
from ..backends.base import CompileOptions, select_backend
from ..config import config
from ..core.avals import ConcreteArray, ShapedArray, StaticArg
from ..core.levels import ConcreteLevel, ShapedLevel, StaticLevel, get_level
from ..core.passes import simplify
from ..core.trace import _BASE_STATE, _STATE, EVAL_MAIN, Tracer, get_aval, to_numpy
from ..interpreters.staging import DebugInfo, trace_to_jaxpr
from ..ops.call import hoist_consts, jit_p
from . import compile_cache
from .cache import CacheEntry, EntryCache, all_caches

__all__ = ["jit", "clear_caches", "Lowered", "Compiled", "Traced"]

_SHAPED = get_level("shaped")
_STATIC = get_level("static")
_NO_LIMIT = 1 << 30


# ---------------------------------------------------------------------------
# The context part of every key: flags that change results, and the default backend.
# Kept in a module global refreshed by a config listener so the hit path reads it once.
# ---------------------------------------------------------------------------
def _current_context() -> tuple:
    return config.trace_context() + (config.default_backend,)


_ctx = _current_context()
# The fast key carries a small int standing for ``_ctx`` (cheaper to hash than a tuple).
_ctx_ids: dict = {_ctx: 0}
_ctx_id = 0


def _on_config_update(name, value) -> None:
    global _ctx, _ctx_id
    _ctx = _current_context()
    _ctx_id = _ctx_ids.setdefault(_ctx, len(_ctx_ids))


config.on_update(_on_config_update)


# ---------------------------------------------------------------------------
# Argument specification, computed once per jit
# ---------------------------------------------------------------------------
class _ArgSpec:
    """Everything about ``fun``'s signature that a call needs, precomputed."""

    def __init__(self, fun, fn_name, static_argnums, static_argnames, abstraction):
        self.fn_name = fn_name
        try:
            sig = inspect.signature(fun)
        except (TypeError, ValueError):
            sig = None
        self.sig = sig
        pos_names, posonly, kwonly = [], set(), set()
        self.varargs = self.varkw = None
        if sig is not None:
            for p in sig.parameters.values():
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    pos_names.append(p.name)
                    if p.kind == p.POSITIONAL_ONLY:
                        posonly.add(p.name)
                elif p.kind == p.VAR_POSITIONAL:
                    self.varargs = p.name
                elif p.kind == p.KEYWORD_ONLY:
                    kwonly.add(p.name)
                else:
                    self.varkw = p.name
        self.pos_names = tuple(pos_names)
        # (required, total) positional counts when a purely positional call with a count
        # in that range always binds (no *args, no required keyword-only parameter).
        self.plain_arity = None
        if sig is not None and self.varargs is None and not any(
                p.kind == p.KEYWORD_ONLY and p.default is p.empty
                for p in sig.parameters.values()):
            required = sum(1 for p in sig.parameters.values()
                           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                           and p.default is p.empty)
            self.plain_arity = (required, len(pos_names))
        self.posonly = frozenset(posonly)
        all_names = set(pos_names) | kwonly

        # -- levels ---------------------------------------------------------------
        level_dict = {}
        self.default_level = _SHAPED
        if isinstance(abstraction, dict):
            for name, lvl in abstraction.items():
                if not isinstance(name, str):
                    raise TypeError(f"jit({fn_name}): abstraction keys must be argument "
                                    f"names, got {name!r}")
                if sig is not None and self.varkw is None and name not in all_names \
                        and name != self.varargs:
                    raise ValueError(
                        f"jit({fn_name}): abstraction names argument {name!r}, but "
                        f"{fn_name} has no such parameter (parameters: "
                        f"{', '.join(sig.parameters)})")
                level_dict[name] = get_level(lvl)
        elif abstraction is not None:
            self.default_level = get_level(abstraction)
        self.all_static = isinstance(self.default_level, StaticLevel)

        # -- static arguments, reconciled with the signature as JAX does ------------
        if static_argnums is None:
            argnums = ()
        elif isinstance(static_argnums, int):
            argnums = (static_argnums,)
        else:
            argnums = tuple(static_argnums)
        for i in argnums:
            if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
                raise TypeError(f"jit({fn_name}): static_argnums must be ints, got {i!r}")
        if static_argnames is None:
            argnames = ()
        elif isinstance(static_argnames, str):
            argnames = (static_argnames,)
        else:
            argnames = tuple(static_argnames)
        for n in argnames:
            if not isinstance(n, str):
                raise TypeError(f"jit({fn_name}): static_argnames must be strings, got {n!r}")
        npos = len(pos_names)
        if sig is not None and self.varargs is None:
            for i in argnums:
                if not -npos <= i < npos:
                    raise ValueError(
                        f"jit({fn_name}): static_argnums={argnums!r} is out of range: "
                        f"{fn_name} takes {npos} positional parameter"
                        f"{'s' if npos != 1 else ''} ({', '.join(pos_names)})")
            argnums = tuple(int(i) % npos for i in argnums)
        if sig is not None and self.varkw is None:
            for n in argnames:
                if n not in all_names:
                    raise ValueError(
                        f"jit({fn_name}): static_argnames names {n!r}, but {fn_name} has no "
                        f"such parameter (parameters: {', '.join(sig.parameters)})")
        if static_argnums is not None and static_argnames is None:
            argnames = tuple(pos_names[i] for i in argnums
                             if 0 <= i < npos and pos_names[i] not in posonly)
        elif static_argnames is not None and static_argnums is None:
            argnums = tuple(pos_names.index(n) for n in argnames
                            if n in pos_names and n not in posonly)
        # ``abstraction={"n": "static"}`` is the same as ``static_argnames=["n"]``.
        for name, lvl in level_dict.items():
            is_static_name = name in argnames or (name in pos_names
                                                  and pos_names.index(name) in argnums)
            if isinstance(lvl, StaticLevel):
                if name not in argnames:
                    argnames += (name,)
                if name in pos_names and pos_names.index(name) not in argnums:
                    argnums += (pos_names.index(name),)
            elif is_static_name:
                raise ValueError(
                    f"jit({fn_name}): argument {name!r} is static (static_argnums/"
                    f"static_argnames) but abstraction gives it level {lvl.name!r}; "
                    "choose one.")
        self.level_dict = {k: v for k, v in level_dict.items() if not isinstance(v, StaticLevel)}
        self.static_argnums = tuple(sorted(set(argnums)))
        self.static_argnames = frozenset(argnames)
        self.negative_argnums = tuple(i for i in self.static_argnums if i < 0)
        self.static_pos = frozenset(i for i in self.static_argnums if i >= 0)

        # -- how many leading positional arguments the fast path may take ---------
        if self.all_static or self.negative_argnums or type(self.default_level) is not ShapedLevel:
            limit = 0
        else:
            limit = min(self.static_pos, default=_NO_LIMIT)
            for i, name in enumerate(pos_names):
                if name in self.level_dict:
                    limit = min(limit, i)
                    break
            if self.varargs is not None and self.varargs in self.level_dict:
                limit = min(limit, npos)
        self.fast_limit = limit

    def options_key(self) -> tuple:
        return (self.static_argnums, tuple(sorted(self.static_argnames)),
                tuple(sorted(self.level_dict.items())), self.default_level, self.all_static)

    # -- per call (general path) ---------------------------------------------------
    def positional_name(self, i: int) -> str:
        if i < len(self.pos_names):
            return self.pos_names[i]
        if self.varargs is not None:
            return f"{self.varargs}[{i - len(self.pos_names)}]"
        return f"args[{i}]"

    def canonicalize(self, args, kwargs) -> tuple:
        """Keyword arguments that can be positional become positional, so that
        ``f(x, n=3)`` and ``f(x, 3)`` share an entry."""
        if not kwargs or self.sig is None:
            return args, kwargs
        pos = self.pos_names
        if len(args) >= len(pos) or pos[len(args)] not in kwargs:
            return args, kwargs
        args = list(args)
        kwargs = dict(kwargs)
        while len(args) < len(pos) and pos[len(args)] in kwargs \
                and pos[len(args)] not in self.posonly:
            args.append(kwargs.pop(pos[len(args)]))
        return tuple(args), kwargs

    def static_positions(self, nargs: int) -> frozenset:
        if self.all_static:
            return frozenset(range(nargs))
        if not self.negative_argnums:
            return self.static_pos
        out = set(self.static_pos)
        for i in self.negative_argnums:
            if not -nargs <= i:
                raise ValueError(f"jitted function {self.fn_name}: static_argnums {i} is out "
                                 f"of range for a call with {nargs} positional arguments")
            out.add(i % nargs)
        return frozenset(out)

    def level_of(self, name: str):
        lvl = self.level_dict.get(name)
        if lvl is None and "[" in name:
            lvl = self.level_dict.get(name[:name.index("[")])
        return lvl if lvl is not None else self.default_level

    def check_bind(self, args, kwargs) -> None:
        """Python's own argument check, before tracing (only on a miss)."""
        if self.sig is None:
            return
        if not kwargs and self.plain_arity is not None \
                and self.plain_arity[0] <= len(args) <= self.plain_arity[1]:
            return  # positional only, a count the signature takes: bind cannot fail
        try:
            self.sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.fn_name}() {e}") from None


class _Call:
    """One call's arguments split into static values and dynamic leaves."""

    __slots__ = ("args", "kwargs", "static_pos", "static_key", "dyn_names", "dyn_values",
                 "leaves", "in_tree", "levels", "avals", "has_tracer")

    def leaf_names(self) -> list:
        names = []
        for name, value in zip(self.dyn_names, self.dyn_values):
            names.extend(name + p for p in tree_util.leaf_paths(value))
        return names

    def described(self) -> tuple:
        """``((name, readable), ...)`` for every dynamic leaf and static argument."""
        out = [(n, _aval_str(a)) for n, a in zip(self.leaf_names(), self.avals)]
        for name, s in self.static_key:
            out.append((name if isinstance(name, str) else str(name), f"{s.value!r} (static)"))
        return tuple(out)


def _aval_str(aval) -> str:
    if type(aval) is ConcreteArray:
        return f"{aval.str_short()}={np.array2string(aval.val, threshold=6)}"
    return aval.str_short() if hasattr(aval, "str_short") else repr(aval)


def _invalid_leaf(spec, call, index, leaf) -> TypeError:
    names = call.leaf_names()
    name = names[index] if index < len(names) else f"#{index}"
    return TypeError(
        f"Argument '{name}' of jitted function {spec.fn_name} ({leaf!r}) of type "
        f"{type(leaf)} is not a valid absjit type: pass arrays, scalars, or pytrees (tuple, "
        "list, dict, None, namedtuple, registered classes) of them. Iterators and "
        "generators must be turned into lists or arrays first; other Python values can "
        "be passed as static arguments (static_argnames=[...]).")


def _process(spec: _ArgSpec, args, kwargs) -> _Call:
    args, kwargs = spec.canonicalize(args, kwargs)
    call = _Call()
    call.args, call.kwargs = args, kwargs
    static_pos = spec.static_positions(len(args))
    call.static_pos = static_pos
    static_key = []
    dyn_names, dyn_values = [], []
    for i, a in enumerate(args):
        if i in static_pos:
            static_key.append((spec.positional_name(i), _static(spec, spec.positional_name(i), a)))
        else:
            dyn_names.append(spec.positional_name(i))
            dyn_values.append(a)
    kw_names = sorted(kwargs)
    for k in kw_names:
        if spec.all_static or k in spec.static_argnames:
            static_key.append((k, _static(spec, k, kwargs[k])))
        else:
            dyn_names.append(k)
            dyn_values.append(kwargs[k])
    call.static_key = tuple(static_key)
    call.dyn_names, call.dyn_values = dyn_names, dyn_values
    leaves, trees, levels = [], [], []
    for name, value in zip(dyn_names, dyn_values):
        sub_leaves, tree = tree_util.tree_flatten(value)
        leaves.extend(sub_leaves)
        trees.append(tree)
        levels.extend([spec.level_of(name)] * len(sub_leaves))
    call.leaves, call.levels = leaves, levels
    call.in_tree = (len(args), tuple(static_pos), tuple(kw_names), tuple(trees))
    avals, has_tracer = [], False
    for i, (leaf, lvl) in enumerate(zip(leaves, levels)):
        t = type(leaf)
        if t is Array:
            avals.append(lvl.abstractify(leaf) if lvl is not _SHAPED else _shaped_of_array(leaf))
            continue
        if isinstance(leaf, Tracer):
            has_tracer = True
            avals.append(_tracer_aval(lvl, leaf))
            continue
        try:
            get_aval(leaf)
        except TypeError:
            raise _invalid_leaf(spec, call, i, leaf) from None
        avals.append(lvl.abstractify(leaf))
    call.avals, call.has_tracer = tuple(avals), has_tracer
    return call


def _shaped_of_array(x) -> ShapedArray:
    aval = x.aval
    dt = aval.dtype
    from ..dtypes import canonicalize_dtype
    canon = canonicalize_dtype(dt)
    return aval if canon == dt else ShapedArray(aval.shape, canon, aval.weak_type)


def _tracer_aval(level, tracer):
    aval = tracer.aval
    if isinstance(level, ConcreteLevel) and type(aval) is ConcreteArray:
        return aval
    if type(level) in (ShapedLevel, ConcreteLevel):
        return aval.to_shaped() if isinstance(aval, ShapedArray) else aval
    return level.abstractify(tracer)


def _static(spec, name, value) -> StaticArg:
    try:
        return StaticArg(value)
    except TypeError:
        raise ValueError(
            f"Non-hashable static argument {name!r} of type {type(value)} passed to jitted "
            f"function {spec.fn_name}: static arguments are compared by == and hash. Pass "
            "a hashable value (a tuple instead of a list or array), or make the argument "
            "dynamic.") from None


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


def _stage_nested(spec, fun, call: _Call, traced=None):
    """Stage a ``jit`` equation into the active trace."""
    closed, out_tree, _ = traced if traced is not None else _trace(spec, fun, call)
    closed = simplify(closed)
    inner, consts = hoist_consts(closed)
    outs = jit_p.bind(*consts, *call.leaves, jaxpr=inner, name=spec.fn_name)
    return tree_util.tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------
# Entries and runners
# ---------------------------------------------------------------------------
_new = Array._new


def _to_buffer(x, aval):
    if type(x) is Array:
        v = x._value
        return v if v.dtype == aval.dtype else v.astype(aval.dtype)
    return np.asarray(to_numpy(x), dtype=aval.dtype)


def _wrap_outputs(entry, outs) -> list:
    res = []
    for i, (o, aval) in enumerate(zip(outs, entry.out_avals)):
        if type(o) is not np.ndarray:
            o = np.asarray(o, dtype=aval.dtype)
        if i in entry.passthrough and o.flags.writeable:
            o = o.copy()
        res.append(_new(o, aval.weak_type, aval))
    return res


def _general_runner(entry):
    exe, consts, in_avals, tree = entry.executable, entry.consts, entry.in_avals, entry.out_tree

    def run(leaves):
        bufs = [_to_buffer(x, a) for x, a in zip(leaves, in_avals)]
        outs = exe(*consts, *bufs)
        return tree_util.tree_unflatten(tree, _wrap_outputs(entry, outs))
    return run


def _fast_runner(entry, arg_kinds):
    """A runner generated for one tuple of argument kinds (``array``: an Array whose
    buffer has the entry's dtype; ``array_cast``; ``ndarray`` of the right dtype;
    ``convert``: anything else, through ``np.asarray``). It takes the arguments
    unpacked.

    The generated body is straight-line code: one executable call, then one Array per
    output built in place (the output buffers are fresh, so they are frozen without
    a check; a pass-through output is copied when it is a caller's writable array).
    """
    n = len(arg_kinds)
    exe = entry.executable
    fast_call = getattr(exe, "fast_call", None)
    env = {"exe": exe, "fast": fast_call, "Array": Array,
           "alloc": object.__new__, "asarray": np.asarray, "to_numpy": to_numpy,
           "unflatten": tree_util.tree_unflatten, "tree": entry.out_tree}
    params = [f"a{i}" for i in range(n)]
    bufs = [f"c{i}" for i in range(len(entry.consts))]
    for i, c in enumerate(entry.consts):
        env[f"c{i}"] = c
    for i, (kind, aval) in enumerate(zip(arg_kinds, entry.in_avals)):
        env[f"d{i}"] = aval.dtype
        if kind == "array":
            bufs.append(f"a{i}._value")
        elif kind == "array_cast":
            bufs.append(f"a{i}._value.astype(d{i})")
        elif kind == "ndarray":
            bufs.append(f"a{i}")
        elif kind == "scalar":  # NumPy raises OverflowError for an int out of range
            bufs.append(f"asarray(a{i}, d{i})")
        else:
            bufs.append(f"asarray(to_numpy(a{i}), d{i})")
    lines = [f"def run({', '.join(params)}):"]
    nout = len(entry.out_avals)
    targets = "o0," if nout == 1 else ", ".join(f"o{i}" for i in range(nout)) or "_"
    if fast_call is not None:
        # ``fast_call`` may refuse inputs ``__call__`` would normalise (a strided view):
        # it raises TypeError and the executable's own ``__call__`` takes over.
        lines.append("    try:")
        lines.append(f"        {targets} = fast({', '.join(bufs)})")
        lines.append("    except TypeError:")
        lines.append(f"        {targets} = exe({', '.join(bufs)})")
    else:
        lines.append(f"    {targets} = exe({', '.join(bufs)})")
    outs = []
    for i, aval in enumerate(entry.out_avals):
        env[f"w{i}"], env[f"v{i}"], env[f"e{i}"] = aval.weak_type, aval, aval.dtype
        if i in entry.passthrough:
            lines.append(f"    o{i} = asarray(o{i}, e{i})")
            lines.append(f"    if o{i}.flags.writeable: o{i} = o{i}.copy()")
        else:
            lines.append(f"    if type(o{i}) is not ndarray: o{i} = asarray(o{i}, e{i})")
        lines.append(f"    o{i}.setflags(write=False)")
        lines.append(f"    r{i} = alloc(Array); r{i}._value = o{i}; r{i}._weak_type = w{i}; "
                     f"r{i}._aval = v{i}")
        outs.append(f"r{i}")
    env["ndarray"] = np.ndarray
    is_leaf = tree_util.treedef_is_leaf(entry.out_tree)
    if is_leaf:
        lines.append("    return r0")
    else:
        lines.append(f"    return unflatten(tree, [{', '.join(outs)}])")
    # The source depends only on this shape of things, so its code object is compiled
    # once per shape and bound to each entry's values through the globals.
    shape = (tuple(arg_kinds), len(entry.consts), nout, entry.passthrough,
             fast_call is not None, is_leaf)
    code = _RUNNER_CODE.get(shape)
    if code is None:
        scratch = {}
        exec("\n".join(lines), scratch)  # noqa: S102 - generated from our own templates
        code = _RUNNER_CODE[shape] = scratch["run"].__code__
    env["__builtins__"] = builtins
    return types.FunctionType(code, env, "run")


_RUNNER_CODE: dict = {}


def _lazy_runner(cache, fast_key, entry, kinds):
    """Stands in the fast table until the first fast hit, then generates the real
    runner and takes its place: a function called once (a fresh lambda) never pays for
    generating code."""
    def run(*args):
        real = _fast_runner(entry, kinds)
        with cache.lock:
            if cache.fast.get(fast_key) is run:
                fast = dict(cache.fast)
                fast[fast_key] = real
                cache.fast = fast
        return real(*args)
    return run


def _arg_kind(x, aval) -> str:
    t = type(x)
    if t is Array:
        return "array" if x._value.dtype == aval.dtype else "array_cast"
    if t is np.ndarray and x.dtype == aval.dtype:
        return "ndarray"
    if t is float or t is int or t is bool:
        return "scalar"
    return "convert"


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

    def as_text(self) -> str:
        return self.executable.as_text()

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


def jit(fun=None, *, static_argnums=None, static_argnames=None, abstraction=None,
        backend=None, compiler_options=None):
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
        ``"cpu"`` when available, else ``"interpret"``).
    compiler_options : dict, optional
        Backend options (``fastmath``, ``parallel``, ...); part of cache keys.

    Returns
    -------
    callable
        The jitted function, with ``lower``, ``trace``, ``cache_info``,
        ``clear_cache`` and ``_cache_size``.

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
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, abstraction=abstraction,
                                 backend=backend, compiler_options=compiler_options)
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {fun!r} of type {type(fun)}")
    request_key = _request_key(static_argnums, static_argnames, abstraction, backend,
                               compiler_options)

    def build():
        fn_name = _fn_name(fun)
        spec = _arg_spec(fun, fn_name, request_key, static_argnums, static_argnames,
                         abstraction)
        if backend is not None:
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
                exe = compile_cache.compile(closed, bk, options)
                compile_s = time.perf_counter() - t0
                consts = [bk.to_buffer(to_numpy(c)) for c in closed.consts]
                entry = CacheEntry(key, call.described(), closed, exe, consts, call.avals,
                                   _shaped(closed.jaxpr.out_avals), out_tree, bk,
                                   trace_s, compile_s)
                entry.run = _general_runner(entry)
                cache.add(entry)
            else:
                cache.hits += 1
            if fast_key is not None:
                kinds = tuple(_arg_kind(x, a) for x, a in zip(call.args, entry.in_avals))
                fast = dict(cache.fast)
                fast[fast_key] = _lazy_runner(cache, fast_key, entry, kinds)
                cache.fast = fast
        return entry, None

    def jitted(*args, **kwargs):
        fast_key = None
        if not kwargs and state.get() is base_state and len(args) <= fast_limit:
            # The hit path. The one-array case builds its key inline; it equals what
            # _fast_key returns for it.
            if len(args) == 1 and type(args[0]) is Array:
                x = args[0]
                v = x._value
                fast_key = (_ctx_id, v.shape, v.dtype, x._weak_type)
            else:
                fast_key = _fast_key(args)
            if fast_key is not None:
                run = cache.fast.get(fast_key)
                if run is not None:
                    cache.hits += 1
                    return run(*args)
        call = _process(spec, args, kwargs)
        if call.has_tracer or state.get().dynamic is not EVAL_MAIN:
            return _stage_nested(spec, fun, call)
        key = (_ctx, call.in_tree, call.avals, call.static_key)
        entry = cache.entries.get(key)
        if entry is None or fast_key is not None:
            entry, staged = miss(call, key, fast_key)
            if entry is None:
                return staged
        else:
            cache.hits += 1
        return entry.run(call.leaves)

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
    jitted.trace = trace
    jitted.lower = lower
    jitted.cache_info = cache_info
    jitted.clear_cache = cache.clear
    jitted._cache_size = _cache_size
    jitted._entry_cache = cache
    shared[3] = weakref.ref(jitted)
    return jitted


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
