"""Runners: what a cache hit executes. ``_general_runner`` takes flat leaves;
``_fast_runner`` generates straight-line code for one tuple of positional argument
kinds; ``_lazy_runner`` defers that generation to the first fast hit."""
from __future__ import annotations

import builtins
import types

import numpy as np

from .. import tree_util
from ..array import Array
from ..core.trace import to_numpy

__all__ = ["_general_runner", "_fast_runner", "_lazy_runner", "_arg_kind"]

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
    device_array = getattr(entry.executable, "array_type", None)
    if device_array is not None:  # device buffers stay on their device
        return [device_array._wrap(o, a.weak_type, r)
                for o, a, r in zip(outs, entry.out_avals, entry.result_avals)]
    res = []
    for i, (o, aval) in enumerate(zip(outs, entry.out_avals)):
        if type(o) is not np.ndarray:
            o = np.asarray(o, dtype=aval.dtype)
        if i in entry.passthrough and o.flags.writeable:
            o = o.copy()
        res.append(_new(o, aval.weak_type, entry.result_avals[i]))
    return res


def _general_runner(entry):
    exe, consts, in_avals, tree = entry.executable, entry.consts, entry.in_avals, entry.out_tree

    # A device executable takes the leaves as they are (it moves host values itself).
    raw = getattr(exe, "array_type", None) is not None

    def run(leaves):
        bufs = list(leaves) if raw else [_to_buffer(x, a) for x, a in zip(leaves, in_avals)]
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
    device_array = getattr(exe, "array_type", None)
    device = device_array is not None
    env["dnew"] = device_array._wrap if device else None
    for i, (kind, aval) in enumerate(zip(arg_kinds, entry.in_avals)):
        env[f"d{i}"] = aval.dtype
        if device:  # the executable moves host values to the device itself
            bufs.append(f"a{i}")
        elif kind == "array":
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
        env[f"w{i}"], env[f"v{i}"], env[f"e{i}"] = (aval.weak_type, entry.result_avals[i],
                                                     aval.dtype)
        if device:
            lines.append(f"    r{i} = dnew(o{i}, w{i}, v{i})")
            outs.append(f"r{i}")
            continue
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
             fast_call is not None, is_leaf, device)
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
                cache.fast[fast_key] = real
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
