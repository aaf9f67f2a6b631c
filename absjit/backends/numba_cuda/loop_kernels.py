"""Whole loops as one kernel launch.

The driver runs ``while``/``fori_loop``/``scan`` loops on the host by default: each
iteration launches its kernels, and reads or writes its device scalars with a transfer
(a synchronisation). Two kinds of loop move onto the device instead:

* a **scalar loop**: every statement inside is scalar code, or array work of at most
  :data:`TINY` elements (a small carry, one row of a ``scan`` output), with no
  allocation and no whole-array primitive. The whole loop runs in one thread of one
  kernel (:func:`render_scalar_loop`);
* an **elementwise loop**: every array the loop writes has one shape ``S``, and each of
  its nests and copies covers ``S`` and touches those arrays only at its own element
  (``c = c * 0.5 + sin(c)``, repeated). Element ``e`` of every carry then depends on
  element ``e`` alone, so each thread runs the whole loop for its elements
  (:func:`render_elementwise_loop`): one launch instead of several per iteration, and
  the carries stay in registers' reach. Scalar code in the loop (a counter, a
  ``while`` condition on scalars) runs in every thread alike.

A scalar the loop defines and the rest of the program reads (a counter returned from
``while_loop``) is *spilled*: the kernel's first thread writes it to a one-element
device array that the driver reads once, after the launch.
"""
from __future__ import annotations

from collections import Counter

from ...compiler import ir
from ...core.shapes import IxVar
from .kernels import KernelRenderer, _size, kernel_params

__all__ = ["TINY", "is_scalar_loop", "elementwise_shape", "escaping_syms",
           "render_scalar_loop", "render_elementwise_loop", "use_counts"]

# Array work of at most this many elements may run serially inside a scalar loop.
TINY = 64

_LOOPS = (ir.While, ir.ForRange)


def _children(stmt) -> list:
    return [s for s in ir.walk([stmt]) if s is not stmt]


def is_scalar_loop(stmt) -> bool:
    """Whether ``stmt`` (a ``While``/``ForRange``) can run in one device thread."""
    if not isinstance(stmt, _LOOPS):
        return False
    for s in _children(stmt):
        if isinstance(s, (ir.Let, ir.Store, ir.Switch, ir.While, ir.ForRange)):
            continue
        if isinstance(s, (ir.Nest, ir.Reduce)) and _static_size(s.shape) <= TINY:
            continue
        if isinstance(s, ir.Copy) and _static_size(s.src.shape[len(s.src_at):]) <= TINY:
            continue
        return False
    return True


def _static_size(shape) -> float:
    try:
        return _size(shape)
    except TypeError:  # a symbolic size
        return float("inf")


def _identity(index, vars_) -> bool:
    return len(index) == len(vars_) and all(
        isinstance(i, IxVar) and i.name == v for i, v in zip(index, vars_))


def elementwise_shape(stmt):
    """The shared shape ``S`` of the arrays an elementwise loop writes (see the module
    docstring), or None when ``stmt`` is not one."""
    if not isinstance(stmt, _LOOPS):
        return None
    inner = _children(stmt)
    written = {}
    for s in inner:
        for b in ir.stmt_defs(s):
            if isinstance(b, ir.Buffer):
                written[id(b)] = b
    shapes = {tuple(b.shape) for b in written.values()}
    if len(shapes) != 1:
        return None
    (shape,) = shapes
    if not shape or _static_size(shape) <= TINY:
        return None
    in_nest, per_element = set(), set()
    for s in inner:
        if id(s) not in in_nest and any(id(v) in per_element for v in ir.stmt_uses(s)):
            return None  # a value of one element read outside its nest
        if isinstance(s, ir.Nest) and s.vars:
            if tuple(s.shape) != shape:
                return None
            for t in ir.walk(s.body):
                in_nest.add(id(t))
                if isinstance(t, ir.Let):
                    per_element.add(id(t.sym))
                    if isinstance(t.expr, ir.Load) and id(t.expr.buf) in written and \
                            not _identity(t.expr.index, s.vars):
                        return None
                elif isinstance(t, ir.Store):
                    if not _identity(t.index, s.vars):
                        return None
                else:
                    return None
        elif id(s) in in_nest:
            continue
        elif isinstance(s, ir.Copy):
            if s.dst_at or s.src_at or tuple(s.src.shape) != shape:
                return None
        elif isinstance(s, ir.Let):
            # scalar code outside the nests: every thread computes it, so it may not
            # read an element another thread owns
            if any(id(v) in written for v in ir.expr_values(s.expr)):
                return None
        elif not isinstance(s, (ir.Nest, ir.Switch, ir.While, ir.ForRange)):
            return None  # a store outside a nest, a reduction, an allocation…
    return shape


def use_counts(program) -> Counter:
    """How often each buffer and symbol (by ``id``) is read in ``program``."""
    uses = Counter(id(v) for s in ir.walk(program.body) for v in ir.stmt_uses(s))
    uses.update(id(v) for v in program.outputs)
    return uses


def escaping_syms(stmt, uses) -> list:
    """Scalars ``stmt`` (re)defines that statements outside it read."""
    inner = Counter(id(v) for s in ir.walk([stmt]) for v in ir.stmt_uses(s))
    out, seen = [], set()
    for s in ir.walk([stmt]):
        if isinstance(s, ir.Let) and id(s.sym) not in seen:
            seen.add(id(s.sym))
            if uses[id(s.sym)] > inner[id(s.sym)]:
                out.append(s.sym)
    return out


def _params(stmt, spilled, defined_before):
    """The kernel's parameters: :func:`kernel_params`, plus each spilled scalar defined
    before the loop (its value when the loop body never runs)."""
    params = kernel_params([stmt])
    have = {id(p) for p in params if not isinstance(p, tuple)}
    loops = [p for p in params if isinstance(p, tuple)]
    values = [p for p in params if not isinstance(p, tuple)]
    values += [s for s in spilled if id(s) not in have and defined_before(s)]
    return values + loops


def _spill(r, spilled, depth):
    for k, sym in enumerate(spilled):
        r.emit(f"spill{k}[0] = {r.name(sym)}", depth)


def _source(r, pnames, spilled) -> str:
    names = pnames + [f"spill{k}" for k in range(len(spilled))]
    return f"def kernel({', '.join(names)}):\n" + "\n".join(r.lines) + "\n"


def render_scalar_loop(stmt, spilled, defined_before) -> tuple:
    """``(source, params)`` of a one-thread kernel running the loop ``stmt``; the
    kernel takes one trailing one-element array per scalar of ``spilled``."""
    params = _params(stmt, spilled, defined_before)
    r = KernelRenderer()
    pnames = r.bind_params(params)
    r.emit("if cuda.grid(1) == 0:", 1)
    r.stmt(stmt, 2)
    _spill(r, spilled, 2)
    return _source(r, pnames, spilled), params


class _ElementRenderer(KernelRenderer):
    """Renders an elementwise loop for the element whose index variables are bound:
    each nest and copy over the loop's shape runs at that element only."""

    def __init__(self, element_vars):
        super().__init__()
        self.element_vars = element_vars

    def stmt(self, s, depth):
        if isinstance(s, ir.Nest) and s.vars:
            for v, e in zip(s.vars, self.element_vars):
                self.emit(f"{self.loop_var(v)} = {e}", depth)
            self.block(s.body, depth)
        elif isinstance(s, ir.Copy):
            at = ", ".join(self.element_vars)
            self.emit(f"{self.name(s.dst)}[{at}] = {self.name(s.src)}[{at}]", depth)
        else:
            super().stmt(s, depth)


def render_elementwise_loop(stmt, shape, spilled, defined_before) -> tuple:
    """``(source, params, n)`` of a kernel running the loop ``stmt`` once per element of
    ``shape`` (``n`` elements, grid-stride), with the loop inside each thread."""
    params = _params(stmt, spilled, defined_before)
    evars = [f"e{k}" for k in range(len(shape))]
    r = _ElementRenderer(evars)
    pnames = r.bind_params(params)
    # Scalars the loop reassigns restart from their parameter for every element a
    # thread runs: each gets a local name, set at the top of the grid-stride loop.
    redefined = {id(s.sym) for s in ir.walk([stmt]) if isinstance(s, ir.Let)}
    restart = []
    for p in params:
        if isinstance(p, ir.Sym) and id(p) in redefined:
            local = r.fresh("l")
            restart.append((local, r.names[id(p)]))
            r.names[id(p)] = local
    n = _size(shape)
    r.emit(f"for t in range(cuda.grid(1), {n}, cuda.gridsize(1)):", 1)
    r.split_names("t", evars, shape, 2)
    for local, param in restart:
        r.emit(f"{local} = {param}", 2)
    r.stmt(stmt, 2)
    if spilled:
        r.emit("if t == 0:", 2)
        _spill(r, spilled, 3)
    return _source(r, pnames, spilled), params, n
