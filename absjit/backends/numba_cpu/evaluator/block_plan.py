"""Runs of a jaxpr's elementwise equations as programs of the block evaluator
(:mod:`.block_vm`), for tier 0.

:class:`FusedSchedule` is the NumPy interpreter's :class:`~absjit.backends.interpret.
Schedule` with each run of consecutive equations the evaluator can take replaced by
one step that calls it. A run takes elementwise operations of one float type (and
booleans), views that cost no copy (``slice``, ``broadcast_in_dim``, ``reshape``,
``squeeze``, ``transpose``: they become the strides of a load), type conversions into
that float type, and ``dynamic_update_slice`` at constant offsets. Its equations are
cut into *groups*, one per iteration shape; a group computes its values a block at a
time in registers and stores to memory only what later groups, later steps or the
caller read.

Values match the compiled tier's: the evaluator's operations are the cpu backend's own
scalar rules. Where a run would gain nothing (one small operation: :func:`_worth`),
its equations stay NumPy steps.
"""
from __future__ import annotations

import logging
import threading

import numpy as np

from ....core.jaxpr import Literal
from ....core.primitive import impl_rules
from ...interpret import _FRESH_RESULTS, Schedule
from . import block_vm as vm
from ..parallel import pool
from ..parallel.threads import TIER0

log = logging.getLogger("absjit")

__all__ = ["FusedSchedule", "FusingInterpreter", "fusable_dtypes", "MIN_OPS"]

#: Fewest evaluator operations in a run worth one call (a call costs a few µs; a small
#: NumPy operation about one).
MIN_OPS = 2
#: Elements from which a run of one operation is handed to the evaluator.
MIN_ELEMENTS = 1 << 14
_VIEWS = frozenset({"slice", "broadcast_in_dim", "reshape", "squeeze", "transpose"})
_ALIASES = frozenset({"stop_gradient", "copy", "copy_p", "optimization_barrier"})
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BOOL = np.dtype(np.bool_)
_MAX_RANK = 4


def _dtype(v):
    return np.dtype(v.aval.dtype) if type(v) is not Literal else np.asarray(v.val).dtype


def _shape(v):
    return tuple(v.aval.shape) if type(v) is not Literal else np.shape(v.val)


def _static(shape) -> bool:
    return all(type(d) is int for d in shape)


def _float_of(eqn):
    """The float type an equation computes in, None when it has none (booleans only),
    False when the evaluator cannot run it."""
    found = None
    for v in (*eqn.invars, *eqn.outvars):
        dt = _dtype(v)
        if dt in _FLOATS:
            if found is not None and found != dt:
                return False
            found = dt
    return found


def _op_key(eqn, T):
    """The evaluator's key for an elementwise equation in float type ``T``, or None."""
    name = eqn.primitive.name
    ins = tuple(_BOOL if _dtype(v) == _BOOL else T for v in eqn.invars)
    if name == "integer_pow":
        return (name, ins, (eqn.params["y"],))
    if name == "convert_element_type":
        return (name, ins, (np.dtype(eqn.params["new_dtype"]),))
    if eqn.params:
        return None
    return (name, ins, ())


def _classify(eqn, ops, T):
    """``"op"``, ``"view"``, ``"alias"``, ``"convert"``, ``"dus"`` or None: what the
    evaluator makes of ``eqn`` in a run of float type ``T``."""
    if len(eqn.outvars) != 1 or eqn.primitive.effectful:
        return None
    out = eqn.outvars[0]
    shape = _shape(out)
    if not _static(shape) or len(shape) > _MAX_RANK:
        return None
    name = eqn.primitive.name
    odt = _dtype(out)
    if name in _VIEWS or name in _ALIASES or name in ("convert_element_type",
                                                       "dynamic_update_slice"):
        if any(type(v) is Literal for v in eqn.invars[:2]):
            # a broadcast constant fills a register; other views and conversions of a
            # constant NumPy makes once
            ok = name == "broadcast_in_dim" and np.size(eqn.invars[0].val) == 1 and \
                odt in (T, _BOOL)
            return "fill" if ok else None
    if name in _VIEWS:
        return "view" if odt in (T, _BOOL) else None
    if name in _ALIASES and not eqn.params:
        return "alias" if odt in (T, _BOOL) else None
    if name == "dynamic_update_slice":
        ok = odt == T and all(type(v) is Literal for v in eqn.invars[2:]) and \
            _dtype(eqn.invars[1]) == T
        return "dus" if ok else None
    if name == "convert_element_type":
        src = _dtype(eqn.invars[0])
        if odt == T and src in vm.LOAD_DTYPES:
            return "convert"  # a conversion on load (or none: a bool register is 0/1)
        if odt == _BOOL and src == T:
            return "op" if _op_key(eqn, T) in ops else None
        return None
    if odt not in (T, _BOOL) or any(_dtype(v) not in (T, _BOOL) for v in eqn.invars):
        return None
    if any(_shape(v) not in ((), shape) for v in eqn.invars):
        return None
    return "op" if _op_key(eqn, T) in ops else None


def fusable_dtypes(jaxpr) -> set:
    """The float types of the runs of ``jaxpr`` a fused schedule would hand to the
    evaluator (known before any evaluator is loaded)."""
    tables = {T: (None, vm.opcodes(T)) for T in _FLOATS}
    found = set()
    for i, j, T, kinds in _runs(jaxpr.eqns, tables):
        if _worth(jaxpr.eqns[i:j], kinds):
            found.add(T)
    return found


# -- views: a buffer with an offset and strides, in elements ------------------------------
class _View:
    __slots__ = ("buf", "offset", "strides", "shape")

    def __init__(self, buf, offset, strides, shape):
        self.buf, self.offset = buf, offset
        self.strides, self.shape = tuple(strides), tuple(shape)

    @classmethod
    def whole(cls, buf, shape):
        strides, acc = [], 1
        for d in reversed(shape):
            strides.append(acc)
            acc *= d
        return cls(buf, 0, reversed(strides), shape)

    def contiguous(self) -> bool:
        return self.strides == _View.whole(self.buf, self.shape).strides or \
            int(np.prod(self.shape, dtype=np.int64)) <= 1

    def key(self):
        return (self.buf, self.offset, self.strides, self.shape)


def _apply_view(view, eqn):
    """The view ``eqn`` makes of ``view``, or None when it is not a strided view of the
    same buffer (a reshape of a non-contiguous view)."""
    p, name = eqn.params, eqn.primitive.name
    out_shape = _shape(eqn.outvars[0])
    if name == "slice":
        steps = p["strides"] or (1,) * len(out_shape)
        off = view.offset + sum(s * t for s, t in zip(p["start_indices"], view.strides))
        return _View(view.buf, off, [t * s for t, s in zip(view.strides, steps)], out_shape)
    if name == "broadcast_in_dim":
        strides = [0] * len(out_shape)
        for i, d in enumerate(p["broadcast_dimensions"]):
            if view.shape[i] == out_shape[d]:
                strides[d] = view.strides[i]
        return _View(view.buf, view.offset, strides, out_shape)
    if name == "transpose":
        perm = p["permutation"]
        return _View(view.buf, view.offset, [view.strides[i] for i in perm], out_shape)
    if name == "squeeze":
        dims = {d % len(view.shape) for d in p["dimensions"]}
        keep = [t for i, t in enumerate(view.strides) if i not in dims]
        return _View(view.buf, view.offset, keep, out_shape)
    if name == "reshape" and p.get("dimensions") is None:
        if view.contiguous():
            return _View(view.buf, view.offset, _View.whole(view.buf, out_shape).strides,
                         out_shape)
        # dropping or adding dimensions of size 1 keeps the strides
        inner = [t for d, t in zip(view.shape, view.strides) if d != 1]
        if [d for d in view.shape if d != 1] == [d for d in out_shape if d != 1]:
            it = iter(inner)
            return _View(view.buf, view.offset,
                         [0 if d == 1 else next(it) for d in out_shape], out_shape)
    return None


def _identity(eqn) -> bool:
    """Whether a view equation returns its operand unchanged."""
    p, name = eqn.params, eqn.primitive.name
    shape = _shape(eqn.invars[0])
    if _shape(eqn.outvars[0]) != shape:
        return False
    if name == "reshape":
        return p.get("dimensions") is None
    if name == "broadcast_in_dim":
        return tuple(p["broadcast_dimensions"]) == tuple(range(len(shape)))
    if name == "transpose":
        return tuple(p["permutation"]) == tuple(range(len(shape)))
    if name == "slice":
        return not any(p["start_indices"]) and all(s in (None, 1) for s in p["strides"]
                                                    or ())
    return name == "squeeze"


# -- groups: one iteration shape, computed a block at a time -----------------------------
class _Ins:
    """One instruction of a group: ``kind`` is ``"load"``, ``"store"``, ``"fill"`` or
    ``"op"``; ``dest`` the value it defines (None for a store), ``reads`` the values it
    reads; ``view`` what a load or store accesses; ``arg`` a fill's constant index."""
    __slots__ = ("kind", "op", "dest", "reads", "view", "arg")

    def __init__(self, kind, op, dest, reads=(), view=None, arg=0):
        self.kind, self.op, self.dest, self.reads = kind, op, dest, tuple(reads)
        self.view, self.arg = view, arg


class _Group:
    def __init__(self, shape):
        self.shape = shape
        self.instrs: list = []  # _Ins, in order
        self.value_of: dict = {}  # jaxpr var -> value number, while the group is open
        self.loads: dict = {}  # view key -> value number
        self.fills: dict = {}  # constant -> value number
        self.writes: set = set()  # buffers it stores into
        self.reads: set = set()  # buffers it loads from
        self.n_values = 0

    def new_value(self) -> int:
        self.n_values += 1
        return self.n_values - 1


class _Builder:
    """Translates one run of equations into an evaluator program."""

    def __init__(self, T, ops, needed_after):
        self.T, self.ops = T, ops
        self.needed_after = needed_after  # vars read after the run (or outputs)
        self.groups: list = []
        self.group = None
        self.buffers: list = []  # [kind, shape, dtype, var]: "in", "out" or "temp"
        self.inputs: dict = {}  # var -> buffer
        self.view_of: dict = {}  # var -> _View (a value in memory)
        self.reg_of: dict = {}  # var -> (group, value): a value in a group's registers
        self.consts: list = []
        self.constant_of: dict = {}  # var -> the Literal it holds everywhere

    # buffers and views
    def _buffer(self, kind, shape, dtype, var=None) -> int:
        self.buffers.append([kind, tuple(shape), np.dtype(dtype), var])
        return len(self.buffers) - 1

    def view(self, v):
        """``v`` as a view of memory (storing it from its group if it is a register)."""
        got = self.view_of.get(v)
        if got is not None:
            return got
        if v in self.constant_of:  # a broadcast constant: filled and stored
            self.close()
            group = self._open(_shape(v))
            value = self.operand(group, v)
            self.close()
            self.reg_of[v] = (group, value)
        if v in self.reg_of:
            group, value = self.reg_of[v]
            buf = self._buffer("temp", _shape(v), _dtype(v), v)
            view = _View.whole(buf, _shape(v))
            self._store(group, value, view)
            self.view_of[v] = view
            return view
        buf = self.inputs.get(v)
        if buf is None:
            buf = self.inputs[v] = self._buffer("in", _shape(v), _dtype(v), v)
        view = self.view_of[v] = _View.whole(buf, _shape(v))
        return view

    def _store(self, group, value, view):
        dt = self.buffers[view.buf][2]
        group.instrs.append(_Ins("store", vm.store_op(dt), None, (value,), view))
        group.writes.add(view.buf)

    # groups
    def _open(self, shape):
        if self.group is not None and self.group.shape == shape:
            return self.group
        self.close()
        self.group = _Group(shape)
        self.groups.append(self.group)
        return self.group

    def close(self):
        if self.group is not None:
            self.group.value_of.clear()
            self.group = None

    def operand(self, group, v) -> int:
        """A value number of ``group`` holding operand ``v``."""
        v = self.constant_of.get(v, v)
        if type(v) is Literal:
            c = vm.fill_value(v.val, self.T if _dtype(v) != _BOOL else _BOOL)
            got = group.fills.get(c)
            if got is None:
                got = group.fills[c] = group.new_value()
                self.consts.append(c)
                group.instrs.append(_Ins("fill", vm.FILL, got, arg=len(self.consts) - 1))
            return got
        if v in group.value_of:
            return group.value_of[v]
        view = self.view(v)
        if view.shape != group.shape:  # a scalar operand, broadcast
            assert view.shape == (), (view.shape, group.shape)
            view = _View(view.buf, view.offset, [0] * len(group.shape), group.shape)
        key = view.key()
        got = group.loads.get(key)
        if got is None:
            got = group.loads[key] = group.new_value()
            dt = self.buffers[view.buf][2]
            group.instrs.append(_Ins("load", vm.load_op(dt), got, view=view))
            group.reads.add(view.buf)
        return got

    def _hazard(self, group, eqn) -> bool:
        """Whether ``eqn`` reads memory ``group`` writes (it must wait for the group to
        finish: a block would read what a later block has not stored yet)."""
        for v in eqn.invars:
            if type(v) is Literal or v in group.value_of:
                continue
            if v in self.reg_of:  # a register of a closed group: memory written before
                continue
            view = self.view_of.get(v)
            if view is not None and view.buf in group.writes:
                return True
        return False

    # equations
    def add(self, eqn, kind):
        out = eqn.outvars[0]
        if kind == "fill":
            self.constant_of[out] = Literal(np.asarray(eqn.invars[0].val).reshape(()),
                                            eqn.invars[0].aval)
            return
        if kind == "view" and _identity(eqn):
            kind = "alias"
        if kind == "view":
            view = _apply_view(self.view(eqn.invars[0]), eqn)
            if view is None:  # copy it to contiguous memory first
                src = eqn.invars[0]
                self._copy_to_temp(src)
                view = _apply_view(self.view_of[src], eqn)
            self.view_of[out] = view
            return
        if kind in ("alias", "convert"):
            src = eqn.invars[0]
            if self.group is not None and src in self.group.value_of and \
                    _shape(src) == _shape(out):
                self.group.value_of[out] = self.group.value_of[src]
                self.reg_of[out] = self.reg_of[src]
            else:
                self.view_of[out] = self.view(src)  # loads convert to the float type
            return
        if kind == "dus":
            self._dus(eqn)
            return
        shape = _shape(out)
        if self.group is not None and (self.group.shape != shape or
                                       self._hazard(self.group, eqn)):
            self.close()
        group = self._open(shape)
        args = [self.operand(group, v) for v in eqn.invars]
        dest = group.new_value()
        group.instrs.append(_Ins("op", self.ops[_op_key(eqn, self.T)], dest, args))
        group.value_of[out] = dest
        self.reg_of[out] = (group, dest)

    def _copy_to_temp(self, v):
        view = self.view(v)
        self.close()
        group = self._open(view.shape)
        value = self.operand(group, v)
        buf = self._buffer("temp", view.shape, self.buffers[view.buf][2], v)
        dest = _View.whole(buf, view.shape)
        self._store(group, value, dest)
        self.close()
        self.view_of[v] = dest

    def _dus(self, eqn):
        from ....ops.structural import _clamped_starts
        x, u = eqn.invars[:2]
        out = eqn.outvars[0]
        starts = _clamped_starts(_shape(x), [int(v.val) for v in eqn.invars[2:]], _shape(u))
        buf = self._buffer("temp", _shape(out), self.T, out)
        whole = _View.whole(buf, _shape(out))
        window = _View(buf, sum(s * t for s, t in zip(starts, whole.strides)),
                       whole.strides, _shape(u))
        current = self.group
        src = x if type(x) is not Literal else None
        in_current = current is not None and src is not None and (
            src in current.value_of or (self.view(src).buf in current.writes))
        if current is not None and u in current.value_of and not in_current:
            # copy x first (a group of its own before the current one), then store the
            # update from the current group's registers
            copy = _Group(_shape(out))
            value = self.operand(copy, x)
            self._store(copy, value, whole)
            self.groups.insert(self.groups.index(current), copy)
            self._store(current, current.value_of[u], window)
        else:
            self.close()
            group = self._open(_shape(out))
            self._store(group, self.operand(group, x), whole)
            self.close()
            group = self._open(_shape(u))
            self._store(group, self.operand(group, u), window)
            self.close()
        self.view_of[out] = whole

    def finish(self):
        """Make every value read after the run an output buffer."""
        self.close()
        for v in self.needed_after:
            view = self.view_of.get(v)
            if view is None and (v in self.reg_of or v in self.constant_of):
                view = self.view(v)  # stores it from its group
            if view is None:
                continue
            kind, shape, dt, owner = self.buffers[view.buf]
            if owner is v and kind == "temp" and view.contiguous() and view.offset == 0 \
                    and dt == _dtype(v):
                self.buffers[view.buf][0] = "out"
            else:  # a view of other memory (or an input): copy it out
                group = _Group(_shape(v))
                self.groups.append(group)
                value = self.operand(group, v)
                buf = self._buffer("out", _shape(v), _dtype(v), v)
                self._store(group, value, _View.whole(buf, _shape(v)))


class _BlockStep:
    """One call of the evaluator for a run of equations: reads its inputs from the
    environment, writes its outputs into it. The evaluator runs the blocks of its
    groups as tasks of absjit's thread pool (:mod:`.pool`); a run of at least
    :data:`SPLIT_ELEMENTS` elements whose groups read nothing another group writes
    (``independent``) runs them on the threads tier 0 may use
    (:data:`.threads.TIER0`), any other on the calling thread, in order."""

    def __init__(self, evaluator, T, code, consts, n_registers, buffers,
                 independent=False):
        self.evaluator, self.T = evaluator, T
        self.code, self.consts = code, np.asarray(consts, np.float64)
        self.n_registers = max(n_registers, 1)
        self.in_vars = [(b[3], b[2]) for b in buffers if b[0] == "in"]
        self.out_specs = [(b[3], b[1], b[2]) for b in buffers if b[0] == "out"]
        order = _buffer_order(buffers)
        # kept outputs and temporaries: this thread's memory, reused by every call
        self.kept_vars = [buffers[i][3] for i in order if buffers[i][0] == "kept"]
        self.temp_specs = [(buffers[i][1], buffers[i][2]) for i in order
                           if buffers[i][0] in ("kept", "temp")]
        self.sizes = np.array([int(np.prod(buffers[i][1], dtype=np.int64))
                               for i in order], np.int64)
        totals = code[code[:, 0] == vm.GROUP, 1]
        self.n_blocks = int(((totals + vm.BLOCK - 1) // vm.BLOCK).sum())
        self.splittable = independent and int(totals.sum()) >= SPLIT_ELEMENTS
        self._local = threading.local()

    def _temporaries(self):
        """This thread's temporaries and their addresses (fresh ones for a call made
        while another runs on this thread: a callback calling the function again)."""
        local = self._local
        got = getattr(local, "temps", None)
        if got is None or getattr(local, "busy", False):
            temps = [np.empty(shape, dt) for shape, dt in self.temp_specs]
            got = (temps, [t.ctypes.data for t in temps])
            if getattr(local, "temps", None) is None:
                local.temps = got
        return got

    def __call__(self, env):
        local = self._local
        temps, temp_addrs = self._temporaries()
        nested = getattr(local, "busy", False)
        local.busy = True
        try:
            addrs, keep = [], []
            for v, dt in self.in_vars:
                a = env[v]
                if type(a) is not np.ndarray or a.dtype != dt or not a.flags.c_contiguous:
                    a = np.ascontiguousarray(a, dtype=dt)
                    keep.append(a)
                addrs.append(a.ctypes.data)
            outs = [np.empty(shape, dt) for _, shape, dt in self.out_specs]
            addrs += [o.ctypes.data for o in outs]
            addrs += temp_addrs
            pool.set_loop_threads(TIER0["threads"] if self.splittable else 1)
            self.evaluator(self.code, self.consts, np.array(addrs, np.int64),
                           self.sizes, self.n_registers, self.n_blocks)
        finally:
            if not nested:
                local.busy = False
        for (v, _, _), o in zip(self.out_specs, outs):
            env[v] = o
        for v, t in zip(self.kept_vars, temps):
            env[v] = t


#: Elements from which an independent run is shared between threads (2^17 float32
#: elements of a selu take ~100 µs on one core).
SPLIT_ELEMENTS = 1 << 17


def _encode(builder):
    """``(code, number of registers)`` of a finished builder; buffers are numbered
    inputs, outputs, temporaries."""
    position = {b: i for i, b in enumerate(_buffer_order(builder.buffers))}
    rows, n_registers = [], 0
    for group in builder.groups:
        if not group.instrs:
            continue
        shape, accesses = _collapse(group)
        registers, n = _allocate(group)
        n_registers = max(n_registers, n)
        total = int(np.prod(shape, dtype=np.int64))
        prologue = [ins for ins in group.instrs if _hoisted(ins)]
        body = [ins for ins in group.instrs if not _hoisted(ins)]
        rows.append([vm.GROUP, total, len(body), *shape, len(prologue)])
        for ins in prologue + body:
            if ins.view is not None:
                view = accesses[id(ins.view)]
                value = ins.dest if ins.kind == "load" else ins.reads[0]
                rows.append([ins.op, registers[value], position[view.buf], view.offset,
                             *view.strides])
            elif ins.kind == "fill":
                rows.append([ins.op, registers[ins.dest], ins.arg] + [0] * (vm.WIDTH - 3))
            else:
                args = [registers[a] for a in ins.reads]
                rows.append([ins.op, registers[ins.dest], *args] +
                            [0] * (vm.WIDTH - 2 - len(args)))
    return np.array(rows, np.int64).reshape(-1, vm.WIDTH), n_registers


def _buffer_order(buffers) -> list:
    return [i for kind in ("in", "out", "kept", "temp")
            for i, b in enumerate(buffers) if b[0] == kind]


def _collapse(group):
    """The group's iteration shape padded to rank 4, and its accesses' strides, with
    adjacent dimensions merged where every access walks them as one."""
    views = [ins.view for ins in group.instrs if ins.view is not None]
    keep = [i for i, d in enumerate(group.shape) if d != 1]  # size 1: index 0 only
    shape = [group.shape[i] for i in keep]
    strides = [[v.strides[i] for i in keep] for v in views]
    for i in range(len(shape) - 2, -1, -1):
        if all(st[i] == st[i + 1] * shape[i + 1] for st in strides):
            shape[i:i + 2] = [shape[i] * shape[i + 1]]
            for st in strides:
                st[i:i + 2] = [st[i + 1]]
    if not shape:
        shape, strides = [1], [[1] for _ in views]  # one element
    pad = _MAX_RANK - len(shape)
    shape = [1] * pad + shape
    accesses = {id(v): _View(v.buf, v.offset, [0] * pad + st, shape)
                for v, st in zip(views, strides)}
    return shape, accesses


def _hoisted(ins) -> bool:
    """Whether ``ins`` fills its register with one value (a constant, a scalar): it runs
    once before the group's blocks."""
    return ins.kind == "fill" or (ins.kind == "load" and not any(ins.view.strides))


def _allocate(group):
    """``(register of each value, registers used)``: a value's register is free after
    its last read. An operation never writes a register it reads: LLVM vectorises a
    loop only after checking at run time that its arrays do not overlap, and an
    operation in place fails that check (it then runs one lane at a time, 10x slower)."""
    last = {}
    for i, ins in enumerate(group.instrs):
        for a in ins.reads:
            last[a] = i
    hoisted = {ins.dest for ins in group.instrs if _hoisted(ins)}
    registers, free, n = {}, [], 0
    for ins in group.instrs:  # constants hold their registers for the whole group
        if _hoisted(ins):
            registers[ins.dest] = n
            n += 1
    for i, ins in enumerate(group.instrs):
        if ins.dest is not None and not _hoisted(ins):
            if free:
                registers[ins.dest] = free.pop()
            else:
                registers[ins.dest] = n
                n += 1
        for a in dict.fromkeys(ins.reads):
            if last[a] == i and a not in hoisted:
                free.append(registers[a])
        if ins.dest is not None and ins.dest not in last and not _hoisted(ins):
            free.append(registers[ins.dest])
    return registers, n


# -- the schedule ----------------------------------------------------------------------
class FusedSchedule(Schedule):
    """:class:`~absjit.backends.interpret.Schedule` with runs of equations handed to
    the block evaluator. ``evaluators`` maps each float type to ``(dispatcher,
    opcodes)``; runs of other types stay on NumPy."""

    def __init__(self, jaxpr, evaluators):
        if evaluators:
            jaxpr = _sink_views(jaxpr)
        super().__init__(jaxpr)
        self.fused_runs = 0
        if evaluators:
            self._fuse(evaluators)

    def _fuse(self, evaluators):
        eqns = self.jaxpr.eqns
        last_read = {}
        for i, eqn in enumerate(eqns):
            for v in eqn.invars:
                if type(v) is not Literal:
                    last_read[v] = i
        outvars = {v for v in self.jaxpr.outvars if type(v) is not Literal}
        readers: dict = {}
        for eqn in eqns:
            for v in eqn.invars:
                if type(v) is not Literal:
                    readers.setdefault(v, []).append(eqn)

        def reusable(v):  # like a NumPy step's slot: no view of it outlives the call
            return v not in outvars and all(
                getattr(impl_rules.get(r.primitive), "ufunc", None) is not None or
                r.primitive.name in _FRESH_RESULTS for r in readers.get(v, ()))
        steps = []
        for i, j, T, kinds in _runs(eqns, evaluators):
            if not _worth(eqns[i:j], kinds):
                steps.extend(self.steps[i:j])
                continue
            defined = {v for e in eqns[i:j] for v in e.outvars}
            needed = [v for e in eqns[i:j] for v in e.outvars
                      if v in outvars or last_read.get(v, -1) >= j]
            try:
                step = _build(eqns[i:j], kinds, T, evaluators[T], needed, reusable)
            except Exception:  # noqa: BLE001 - NumPy runs what the planner cannot
                log.debug("a run of %d equations stays on NumPy", j - i, exc_info=True)
                steps.extend(self.steps[i:j])
                continue
            dead = tuple(v for s in self.steps[i:j] for v in s[4] if v not in defined)
            steps.append((None, step, None, None, dead))
            self.fused_runs += 1
        self.steps = steps


def _worth(eqns, kinds) -> bool:
    """Whether a run gains from one evaluator call: :data:`MIN_OPS` operations, or one
    on :data:`MIN_ELEMENTS` elements (one pass instead of NumPy's temporaries)."""
    ops = [e for e, k in zip(eqns, kinds) if k in ("op", "dus")]
    if len(ops) >= MIN_OPS:
        return True
    return any(int(np.prod(_shape(e.outvars[0]), dtype=np.int64)) >= MIN_ELEMENTS
               for e in ops)


def _runs(eqns, evaluators):
    """``(first, end, float type, kinds)`` of each maximal run of equations the
    evaluators of ``evaluators``' types can take; an equation they cannot take is a run
    of its own with no kinds."""
    any_T = next(iter(evaluators))
    i, n = 0, len(eqns)
    while i < n:
        T, kinds, j = None, [], i
        while j < n:
            eqn = eqns[j]
            t = _float_of(eqn)
            if t is False or (t is not None and (t not in evaluators or
                                                 T not in (None, t))):
                break
            kind = _classify(eqn, evaluators[t or T or any_T][1], t or T or any_T)
            if kind is None:
                break
            T = T or t
            kinds.append(kind)
            j += 1
        if j == i:
            yield i, i + 1, None, []
            i += 1
        else:
            yield i, j, T or any_T, kinds
            i = j


def _sink_views(jaxpr):
    """``jaxpr`` with each view equation moved down to just before its first reader, so
    that it joins its reader's run (a transposed gradient read by an update is then a
    strided load, not a copy NumPy made earlier)."""
    from ....core.jaxpr import Jaxpr
    eqns = jaxpr.eqns
    first_read = {}
    for i, eqn in enumerate(eqns):
        for v in eqn.invars:
            if type(v) is not Literal:
                first_read.setdefault(v, i)
    before: dict = {}  # reader's index -> indices of the views moved before it
    for i, eqn in enumerate(eqns):
        reader = first_read.get(eqn.outvars[0]) if len(eqn.outvars) == 1 else None
        if eqn.primitive.name in _VIEWS and reader is not None and reader > i + 1:
            before.setdefault(reader, []).append(i)
    if not before:
        return jaxpr
    moved = {i for group in before.values() for i in group}
    order = []

    def emit(i):
        for k in before.get(i, ()):
            emit(k)
        order.append(eqns[i])
    for i in range(len(eqns)):
        if i not in moved:
            emit(i)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, order, jaxpr.outvars)


def _build(eqns, kinds, T, evaluator, needed, reusable=lambda v: False):
    dispatcher, ops = evaluator
    builder = _Builder(T, ops, needed)
    for eqn, kind in zip(eqns, kinds):
        builder.add(eqn, kind)
    builder.finish()
    code, n_registers = _encode(builder)
    if n_registers > 64:
        raise ValueError(f"{n_registers} registers")
    for b in builder.buffers:
        if b[0] == "out" and reusable(b[3]):
            b[0] = "kept"  # an output in memory kept from one call to the next
    written: set = set()
    independent = True
    for group in builder.groups:
        independent = independent and not (group.reads & written)
        written |= group.writes
    return _BlockStep(dispatcher, T, code, builder.consts, n_registers, builder.buffers,
                      independent)


class FusingInterpreter:
    """The cpu backend's tier 0: the NumPy interpreter, switched to fused schedules once
    the block evaluators its runs need are loaded (:func:`.block_vm.request` loads them
    in the background; until then every equation runs on NumPy).

    They are asked for when the first call returns, not before: loading one imports
    Numba, whose import holds the GIL for a good part of ~0.3 s, and the first call
    (which a user waits for) would share the interpreter with it."""

    def __init__(self, executable, dtypes):
        self.executable = executable
        self.waiting = set(dtypes)
        self.requested = False

    def __call__(self, *buffers):
        if self.waiting:
            if not self.requested:
                try:
                    return self.executable(*buffers)
                finally:
                    self.requested = True
                    vm.request(self.waiting)
            got = vm.ready(self.waiting)
            if len(got) == len(self.waiting):
                self.waiting = set()
                self.executable.use_schedule(lambda j: FusedSchedule(j, got))
        return self.executable(*buffers)

    def as_text(self) -> str:
        return self.executable.as_text()
