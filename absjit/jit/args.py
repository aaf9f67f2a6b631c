"""Argument handling for ``jit``: the signature analysed once per function
(``_ArgSpec``), and each call split into static values and dynamic leaves abstracted at
their levels (``_process``)."""
from __future__ import annotations

import inspect

import numpy as np

from .. import tree_util
from ..array import Array
from ..dtypes import canonicalize_dtype, is_masked_array
from ..core.avals import ConcreteArray, ShapedArray, StaticArg
from ..core.levels import (ConcreteLevel, RankedLevel, ShapedLevel, StaticLevel, check_aval,
                           get_level)
from ..core.trace import Tracer, get_aval
from ..backends.base import adopt_foreign

__all__ = ["_ArgSpec", "_Call", "_process"]

_SHAPED = get_level("shaped")
_BUILTIN = (ShapedLevel, ConcreteLevel, RankedLevel, StaticLevel)
_NO_LIMIT = 1 << 30


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
        # Under ``ranked`` the fast key holds ranks and unit axes instead of shapes.
        self.ranked_fast = type(self.default_level) is RankedLevel
        if self.all_static or self.negative_argnums or \
                type(self.default_level) not in (ShapedLevel, RankedLevel):
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
            if lvl is _SHAPED:
                avals.append(_shaped_of_array(leaf))
            elif type(lvl) in _BUILTIN:
                avals.append(lvl.abstractify(leaf))
            else:  # a user's level: its avals must be able to serve as keys
                avals.append(check_aval(lvl, lvl.abstractify(leaf)))
            continue
        if isinstance(leaf, Tracer):
            has_tracer = True
            avals.append(_tracer_aval(lvl, leaf))
            continue
        foreign = adopt_foreign(leaf)  # a device array of CuPy, PyTorch...: no copy
        if foreign is not None:
            leaf = leaves[i] = foreign
        if is_masked_array(leaf):
            names = call.leaf_names()
            raise ValueError(
                f"Argument '{names[i] if i < len(names) else i}' of jitted function "
                f"{spec.fn_name} is a NumPy masked array: masked arrays are not supported "
                "as inputs (their mask would be ignored); use arr.filled(value) or "
                "arr.compressed() to turn it into a plain array first.")
        try:
            get_aval(leaf)
        except TypeError:
            raise _invalid_leaf(spec, call, i, leaf) from None
        avals.append(lvl.abstractify(leaf) if type(lvl) in _BUILTIN
                     else check_aval(lvl, lvl.abstractify(leaf)))
    call.avals, call.has_tracer = tuple(avals), has_tracer
    return call


def _shaped_of_array(x) -> ShapedArray:
    aval = x.aval
    dt = aval.dtype
    canon = canonicalize_dtype(dt)
    return aval if canon == dt else ShapedArray(aval.shape, canon, aval.weak_type)


def _tracer_aval(level, tracer):
    aval = tracer.aval
    if isinstance(level, ConcreteLevel) and type(aval) is ConcreteArray:
        return aval
    if type(level) in (ShapedLevel, ConcreteLevel):
        return aval.to_shaped() if isinstance(aval, ShapedArray) else aval
    return level.abstractify(tracer)


class _NaNKey:
    """Stands for a NaN static argument in cache keys: NaN != NaN, so the raw value
    would add a cache entry on every call. All NaNs of one Python type are equal."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return type(other) is _NaNKey and type(other.value) is type(self.value)

    def __hash__(self):
        return hash((_NaNKey, type(self.value)))

    def __repr__(self):
        return repr(self.value)


def _nan_safe(value):
    """``value`` with NaN floats (also inside plain tuples) replaced by ``_NaNKey``."""
    t = type(value)
    if t is float or t is complex or isinstance(value, (np.floating, np.complexfloating)):
        return _NaNKey(value) if value != value else value
    if t is tuple and any(type(v) is tuple or v != v for v in value
                          if isinstance(v, (float, complex, tuple, np.floating,
                                            np.complexfloating))):
        return tuple(_nan_safe(v) for v in value)
    return value


def _static(spec, name, value) -> StaticArg:
    try:
        return StaticArg(_nan_safe(value))
    except TypeError:
        raise ValueError(
            f"Non-hashable static argument {name!r} of type {type(value)} passed to jitted "
            f"function {spec.fn_name}: static arguments are compared by == and hash. Pass "
            "a hashable value (a tuple instead of a list or array), or make the argument "
            "dynamic.") from None
