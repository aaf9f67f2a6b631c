"""Whole-array primitives on the device: ``concatenate``, ``pad``,
``dynamic_update_slice``, the ``scatter`` family and the cumulative reductions.

``array_ops[p](backend, stmt, fastmath) -> op``; ``op(*device arrays) -> tuple of fresh
device arrays``. Each op launches one or a few grid-stride kernels written from the
statement's static shapes and params:

* ``concatenate``: one copy kernel per operand, into its slice of the output;
* ``pad``: a fill kernel, then the operand's elements at ``lo + (interior + 1) * i``
  (negative padding crops);
* ``dynamic_update_slice``: a copy of the operand, then the update at the start
  indices, read on the device from their 0-d arrays and clamped as in the impl rule;
* ``scatter-add`` on float32/float64/int32/int64/uint32/uint64: a copy, then one thread
  per update adding with ``cuda.atomic.add`` (float sums of duplicate indices may round
  in either order); the other scatters fold their updates in order on one thread, which
  keeps "the last duplicate wins" exact;
* ``cumsum``/``cumprod``/``cummax``/``cummin``: one thread per line along the axis.

Primitives not here run through their NumPy implementation on host copies, with one
warning each; :data:`ON_HOST` says why for each (``tests/test_rule_coverage.py`` holds
every whole-array primitive to one of the two).
"""
from __future__ import annotations

import numpy as np

from ...ops import indexing as ix, reductions as red, structural as st
from ..numba.lower_elementwise import dtype_ctor, lower_max, lower_min
from . import runtime as rt

__all__ = ["array_ops", "ON_HOST"]

array_ops: dict = {}

_NO_LIBRARY = "no device library bound yet (cuSOLVER/cuFFT): host LAPACK/FFT"
#: Whole-array primitives the cuda backend runs on host copies, and why.
ON_HOST = {
    "dot_general": "a tiled kernel (with its epilogue fused) where it fits, one "
                   "unbatched float product; others on the host",
    "conv_general_dilated": "no device convolution yet",
    "sort": "no device sort yet", "top_k": "no device selection yet",
    **{name: _NO_LIBRARY for name in ("cholesky", "eig", "eigh", "hessenberg", "lu", "qr",
                                      "schur", "svd", "triangular_solve", "fft")},
    **{name: "calls Python: host by nature" for name in (
        "debug_callback", "debug_print", "io_callback", "pure_callback")},
    **{name: "a collective over a named vmap axis: vmap removes it before any backend "
             "sees it" for name in ("all_gather", "axis_index", "pmax", "pmin", "psum")},
    "custom_lin": "appears only in linearised jaxprs, which are transposed, not run",
}


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _split(flat, names, shape, ind="        ") -> list:
    """Lines binding ``names`` (row-major) from the flat index ``flat``."""
    lines, rest = [], flat
    for k in range(len(names) - 1, -1, -1):
        if k == 0:
            lines.append(f"{ind}{names[k]} = {rest}")
        else:
            lines.append(f"{ind}{names[k]} = {rest} % {int(shape[k])}")
            lines.append(f"{ind}{rest}_{k} = {rest} // {int(shape[k])}")
            rest = f"{rest}_{k}"
    return lines


def _grid_loop(n, names, shape, body, params) -> str:
    """A kernel ``kernel(*params)`` running ``body`` (lines, 8-space indent) for each of
    ``n`` elements with ``names`` bound from the flat index."""
    lines = [f"def kernel({', '.join(params)}):",
             f"    for t in range(cuda.grid(1), {n}, cuda.gridsize(1)):"]
    lines += _split("t", names, shape) + body
    return "\n".join(lines) + "\n"


def _at(names) -> str:
    return ", ".join(names) or "()"


class _Op:
    """Allocates the output, runs ``steps`` (``(dispatcher, blocks, threads, args)``
    where args index into ``ins + [out]``) in order."""

    def __init__(self, out_shape, out_dtype, steps, source):
        self.out_shape, self.out_dtype = tuple(out_shape), np.dtype(out_dtype)
        self.steps, self.source = steps, source

    def __call__(self, *ins):
        out = rt.empty(self.out_shape, self.out_dtype)
        bufs = list(ins) + [out]
        for launch, args in self.steps:
            launch(*[bufs[a] for a in args])
        return (out,)


def _launch(backend, src, n, fastmath, one_thread=False):
    from .backend import _Launch
    blocks, threads = (1, 1) if one_thread else rt.launch_shape(n)
    return _Launch(backend.kernel(src, fastmath), blocks, threads, src, backend.stats)


def _copy_src(shape):
    names = [f"p{k}" for k in range(len(shape))]
    return _grid_loop(_size(shape), names, shape, [f"        out[{_at(names)}] = x[{_at(names)}]"],
                      ["x", "out"])


def lower_concatenate(backend, stmt, fastmath, *, dimension):
    out_aval = stmt.out_avals[0]
    steps, sources, start = [], [], 0
    for k, aval in enumerate(stmt.in_avals):
        names = [f"p{d}" for d in range(aval.ndim)]
        dst = [f"{start} + {nm}" if d == dimension else nm for d, nm in enumerate(names)]
        src = _grid_loop(_size(aval.shape), names, aval.shape,
                         [f"        out[{_at(dst)}] = x[{_at(names)}]"], ["x", "out"])
        steps.append((_launch(backend, src, _size(aval.shape), fastmath), [k, len(stmt.ins)]))
        sources.append(src)
        start += aval.shape[dimension]
    return _Op(out_aval.shape, out_aval.dtype, steps, "".join(sources))


def lower_pad(backend, stmt, fastmath, *, padding_config):
    aval, out_aval = stmt.in_avals[0], stmt.out_avals[0]
    onames = [f"p{d}" for d in range(out_aval.ndim)]
    fill = _grid_loop(_size(out_aval.shape), onames, out_aval.shape,
                      [f"        out[{_at(onames)}] = v[()]"], ["v", "out"])
    names = [f"q{d}" for d in range(aval.ndim)]
    dst, conds = [], []
    for nm, (lo, hi, it), size in zip(names, padding_config, out_aval.shape):
        pos = f"({lo} + {it + 1} * {nm})"
        dst.append(pos)
        if lo < 0 or hi < 0:
            conds.append(f"0 <= {pos} and {pos} < {size}")
    body = [f"        out[{_at(dst)}] = x[{_at(names)}]"]
    if conds:  # negative padding crops
        body = [f"        if {' and '.join(conds)}:", "    " + body[0]]
    inner = _grid_loop(_size(aval.shape), names, aval.shape, body, ["x", "out"])
    steps = [(_launch(backend, fill, _size(out_aval.shape), fastmath), [1, 2]),
             (_launch(backend, inner, _size(aval.shape), fastmath), [0, 2])]
    return _Op(out_aval.shape, out_aval.dtype, steps, fill + inner)


def lower_dynamic_update_slice(backend, stmt, fastmath):
    aval, uaval = stmt.in_avals[0], stmt.in_avals[1]
    n_starts = len(stmt.ins) - 2
    copy = _copy_src(aval.shape)
    names = [f"q{d}" for d in range(uaval.ndim)]
    svars = [f"s{k}" for k in range(n_starts)]
    body = [f"        o{k} = min(max(int({s}[()]), 0), {n - m})"
            for k, (s, n, m) in enumerate(zip(svars, aval.shape, uaval.shape))]
    dst = [f"o{k} + {nm}" for k, nm in enumerate(names)]
    body.append(f"        out[{_at(dst)}] = u[{_at(names)}]")
    upd = _grid_loop(_size(uaval.shape), names, uaval.shape, body, ["u", *svars, "out"])
    out_i = len(stmt.ins)
    steps = [(_launch(backend, copy, _size(aval.shape), fastmath), [0, out_i]),
             (_launch(backend, upd, _size(uaval.shape), fastmath),
              [1, *range(2, 2 + n_starts), out_i])]
    return _Op(aval.shape, aval.dtype, steps, copy + upd)


_ATOMIC_ADD = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                     np.uint32, np.uint64)}


def _scatter(kind):
    def rule(backend, stmt, fastmath, *, axes):
        aval, uaval = stmt.in_avals[0], stmt.in_avals[1]
        dt = np.dtype(aval.dtype)
        nb = stmt.in_avals[2].ndim
        n_idx = len(stmt.ins) - 2
        ctor = dtype_ctor(dt)
        copy = _copy_src(aval.shape)
        names = [f"q{d}" for d in range(uaval.ndim)]
        bidx, rest = names[:nb], iter(names[nb:])
        ivars = [f"i{k}" for k in range(n_idx)]
        body, pos, conds = [], [], []
        for d in range(aval.ndim):
            if d in axes:
                k = axes.index(d)
                body.append(f"        t{k} = int({ivars[k]}[{_at(bidx)}])")
                pos.append(f"t{k}")
                conds.append(f"0 <= t{k} and t{k} < {aval.shape[d]}")
            else:
                pos.append(next(rest))
        tgt, val = f"out[{_at(pos)}]", f"u[{_at(names)}]"
        atomic = kind == "add" and dt in _ATOMIC_ADD
        if atomic:
            new = f"cuda.atomic.add(out, ({', '.join(pos)},), {val})"
        else:
            combined = {"set": val, "add": f"{tgt} + {val}", "mul": f"{tgt} * {val}",
                        "min": lower_min([tgt, val], [_A(dt)] * 2, None),
                        "max": lower_max([tgt, val], [_A(dt)] * 2, None)}[kind]
            new = f"{tgt} = {ctor}({combined})"
        body += [f"        if {' and '.join(conds)}:", f"            {new}"]
        n = _size(uaval.shape)
        if atomic:
            upd = _grid_loop(n, names, uaval.shape, body, ["u", *ivars, "out"])
        else:  # in order, on one thread: the last of duplicate updates wins
            lines = [f"def kernel({', '.join(['u', *ivars, 'out'])}):",
                     f"    for t in range({n}):"]
            upd = "\n".join(lines + _split("t", names, uaval.shape) + body) + "\n"
        out_i = len(stmt.ins)
        steps = [(_launch(backend, copy, _size(aval.shape), fastmath), [0, out_i]),
                 (_launch(backend, upd, n, fastmath, one_thread=not atomic),
                  [1, *range(2, 2 + n_idx), out_i])]
        return _Op(aval.shape, dt, steps, copy + upd)
    return rule


class _A:
    def __init__(self, dt):
        self.dtype = dt


def _cumulative(kind):
    def rule(backend, stmt, fastmath, *, axis, reverse):
        aval = stmt.in_avals[0]
        dt = np.dtype(aval.dtype)
        ctor = dtype_ctor(dt)
        n = aval.shape[axis]
        others = [d for d in range(aval.ndim) if d != axis]
        names = [f"p{d}" for d in others]
        sub = dict(zip(others, names))

        def at(arr, p):
            return f"{arr}[{', '.join(p if d == axis else sub[d] for d in range(aval.ndim))}]"
        prev = "r + 1" if reverse else "r - 1"
        a, b = at("out", prev), at("x", "r")
        combined = {"sum": f"{a} + {b}", "prod": f"{a} * {b}",
                    "max": lower_max([a, b], [_A(dt)] * 2, None),
                    "min": lower_min([a, b], [_A(dt)] * 2, None)}[kind]
        order = f"range({n} - 1, -1, -1)" if reverse else f"range({n})"
        body = [f"        for r in {order}:",
                f"            if r == {n - 1 if reverse else 0}:",
                f"                {at('out', 'r')} = {at('x', 'r')}",
                "            else:",
                f"                {at('out', 'r')} = {ctor}({combined})"]
        lines = _size(aval.shape[d] for d in others)
        src = _grid_loop(lines if n else 0, names, [aval.shape[d] for d in others], body,
                         ["x", "out"])
        steps = [(_launch(backend, src, lines, fastmath), [0, 1])]
        return _Op(aval.shape, dt, steps, src)
    return rule


array_ops[st.concatenate_p] = lower_concatenate
array_ops[st.pad_p] = lower_pad
array_ops[st.dynamic_update_slice_p] = lower_dynamic_update_slice
for _p, _k in ((ix.scatter_p, "set"), (ix.scatter_add_p, "add"), (ix.scatter_mul_p, "mul"),
               (ix.scatter_min_p, "min"), (ix.scatter_max_p, "max")):
    array_ops[_p] = _scatter(_k)
for _p, _k in ((red.cumsum_p, "sum"), (red.cumprod_p, "prod"), (red.cummax_p, "max"),
               (red.cummin_p, "min")):
    array_ops[_p] = _cumulative(_k)
