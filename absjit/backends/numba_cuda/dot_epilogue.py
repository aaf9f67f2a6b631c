"""``dot_general``'s elementwise epilogue fused into the tiled product's store.

``relu(a @ b + bias) * s`` lowers to the product into ``t``, then a nest over ``t``'s
shape that reads ``t[i, j]``, computes, and writes back into ``t`` (or a buffer that
aliases it). When the plan has exactly that form, the tiled kernel computes the
epilogue from its accumulator and stores the final value: ``t`` is written once and
never read back, and the nest's launch disappears.

The pattern (:func:`match`): a two-dimensional, unbatched product; optionally an
``Alias`` of its output; then a nest over the same shape whose body is ``Let``
statements and one final ``Store`` into the product's output (or its alias) at the
nest's own element, reading that output only at the same element; and the output read
nowhere else in the program.
"""
from __future__ import annotations

from collections import Counter

from ...compiler import ir
from ...core.shapes import IxVar
from .kernels import KernelRenderer, kernel_params

__all__ = ["match", "render_epilogue"]


def _identity(index, vars_) -> bool:
    return len(index) == len(vars_) and all(
        isinstance(i, IxVar) and i.name == v for i, v in zip(index, vars_))


def match(stmts, k, uses):
    """``(alias or None, nest)`` when the statements after ``stmts[k]`` (a
    ``dot_general``) are its fusable epilogue, else None."""
    dot = stmts[k]
    out = dot.outs[0]
    if len(dot.outs) != 1 or out.ndim != 2 or dot.in_avals[0].ndim != 2 or \
            dot.in_avals[1].ndim != 2:
        return None
    nxt = k + 1
    alias = None
    if nxt < len(stmts) and isinstance(stmts[nxt], ir.Alias) and stmts[nxt].src is out:
        alias = stmts[nxt]
        nxt += 1
    if nxt >= len(stmts) or not isinstance(stmts[nxt], ir.Nest):
        return None
    nest = stmts[nxt]
    if tuple(nest.shape) != tuple(out.shape) or len(nest.vars) != 2 or not nest.body:
        return None
    mine = {id(out)} | ({id(alias.dst)} if alias else set())
    *lets, store = nest.body
    if not isinstance(store, ir.Store) or id(store.buf) not in mine or \
            not _identity(store.index, nest.vars):
        return None
    for s in lets:
        if not isinstance(s, ir.Let):
            return None
        if isinstance(s.expr, ir.Load) and id(s.expr.buf) in mine and \
                not _identity(s.expr.index, nest.vars):
            return None
    inner = Counter(id(v) for s in nest.body for v in ir.stmt_uses(s))
    if uses[id(out)] != inner[id(out)] + (1 if alias else 0):
        return None  # the raw product is read elsewhere
    return alias, nest


class _EpilogueRenderer(KernelRenderer):
    """Reads of the product's output become the accumulator ``acc``."""

    def __init__(self, mine):
        super().__init__()
        self.mine = mine

    def expr(self, e, dtype):
        if isinstance(e, ir.Load) and id(e.buf) in self.mine:
            return "acc"
        return super().expr(e, dtype)


def render_epilogue(dot_out, alias, nest) -> tuple:
    """``(lines, params, names)``: the statements storing the epilogue of ``acc`` at
    ``(row, col)`` into the kernel's 2-d output ``out2`` (indented for
    :func:`.kernels.dot_source`), and the extra kernel parameters (buffers and scalars
    the epilogue reads, then host loop variables) and their names in ``lines``."""
    mine = {id(dot_out)} | ({id(alias.dst)} if alias else set())
    params = [p for p in kernel_params([nest])
              if isinstance(p, tuple) or id(p) not in mine]
    r = _EpilogueRenderer(mine)
    r.bind_params(params)
    for m in mine:
        r.names[m] = "out2"
    r.emit(f"{r.loop_var(nest.vars[0])} = row", 0)
    r.emit(f"{r.loop_var(nest.vars[1])} = col", 0)
    r.block(nest.body, 0)
    names = [r.names[id(p)] if not isinstance(p, tuple) else r.loop_var(p[1])
             for p in params]
    return r.lines, params, names

