"""The ``interpret`` backend: runs a jaxpr with the NumPy impl rules.

It is the executable specification every other backend is tested against, and the
fallback when no compiling backend is available. "Compiling" only records the jaxpr;
``as_text()`` is the jaxpr itself.

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> f = absjit.jit(lambda x: x + 1, backend="interpret")
>>> f(jnp.arange(3))
Array([1, 2, 3], dtype=int32)
"""
from __future__ import annotations

import threading

import numpy as np

from ..core.jaxpr import Literal
from ..core.primitive import impl_rules
from ..core.specialize import bind_arguments, is_symbolic_jaxpr, specialize
from ..ops._select import blend_into
from ..ops.call import store_results
from .base import Backend, CompileOptions, Executable, register_backend

__all__ = ["InterpretBackend", "InterpretExecutable"]


class InterpretExecutable(Executable):
    """Runs the jaxpr on ``(*consts, *args)`` buffers with the impl rules, on the
    :class:`Schedule` made for it once (per sizes, at the ``ranked`` level)."""

    __slots__ = ("jaxpr", "num_consts", "symbolic", "specialized", "schedule",
                 "make_schedule")

    def __init__(self, closed_jaxpr):
        self.jaxpr = closed_jaxpr.jaxpr
        self.num_consts = len(self.jaxpr.constvars)
        # Sizes of the ``ranked`` level: bound per call, one concrete copy per sizes.
        self.symbolic = is_symbolic_jaxpr(self.jaxpr)
        self.use_schedule(Schedule)

    def use_schedule(self, make_schedule) -> None:
        """Run with schedules ``make_schedule(jaxpr)`` from now on (a backend's tier 0
        hands parts of them to compiled code)."""
        self.make_schedule = make_schedule
        self.specialized = {}
        self.schedule = None if self.symbolic else make_schedule(self.jaxpr)

    def __call__(self, *buffers) -> list:
        n = self.num_consts
        schedule = self.schedule
        if self.symbolic:
            sizes = bind_arguments(self.jaxpr, buffers)
            key = tuple(sorted(sizes.items()))
            schedule = self.specialized.get(key)
            if schedule is None:
                if len(self.specialized) > 64:
                    self.specialized.clear()
                schedule = self.specialized[key] = self.make_schedule(
                    specialize(self.jaxpr, sizes))
        outs = schedule.run(buffers[:n], buffers[n:])
        # An output may be (a view of) an input buffer; when that input is writable
        # (a caller's NumPy array) the result must not alias it, since jit marks
        # outputs read-only and the caller may keep writing to its array.
        result = []
        for out in outs:
            for b in buffers:
                if type(b) is np.ndarray and b.flags.writeable and np.may_share_memory(out, b):
                    out = out.copy()
                    break
            result.append(out)
        return result

    def as_text(self) -> str:
        return str(self.jaxpr)


# Element types whose ufuncs write into an ``out=`` buffer as they compute a new array.
_NATIVE = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64, np.complex64, np.complex128))
# Primitives whose NumPy implementation never returns (a view of) an operand: a buffer
# read only by them and by ufuncs may be overwritten once its last reader has run.
_FRESH_RESULTS = frozenset({"select_n", "dot_general", "reduce_sum", "reduce_max",
                            "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
                            "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin"})


def _select_into(which, case0, case1, out):
    """``select_n(which, case0, case1)`` for a boolean ``which``, into ``out`` (which
    must not be ``case1``'s buffer: case 0 is written first where the blend does not
    apply)."""
    if blend_into(which, case0, case1, out) is not None:
        return out
    np.copyto(out, case0)
    np.copyto(out, case1, where=which)
    return out


class Schedule:
    """How a jaxpr of static shapes runs on NumPy: each equation's impl rule, the values
    that die at it (dropped at once, so memory is reused within the call), and where an
    elementwise result goes.

    An intermediate computed by a ufunc (``add``, ``exp``, ``gt``...) and read only by
    ufuncs and primitives that make new arrays is written into a *slot*: a buffer of
    its shape and dtype that this thread keeps from one call to the next, shared by
    intermediates whose lifetimes do not overlap (a result may take the slot of an
    operand that dies at it). Fresh arrays of a megabyte or more cost the page faults of
    memory the allocator gave back to the system at the previous call (NumPy's selu on
    10^6 float32 took 25 ms a call this way, against 2 ms in reused buffers). Results
    of the call are always new arrays. Values match :func:`eval_jaxpr_numpy`'s: a ufunc
    writes into a slot only where its own result type is the slot's dtype.
    """

    def __init__(self, jaxpr):
        self.jaxpr = jaxpr
        eqns = jaxpr.eqns
        last: dict = {}
        readers: dict = {}
        for i, eqn in enumerate(eqns):
            for v in eqn.invars:
                if type(v) is not Literal:
                    last[v] = i
                    readers.setdefault(v, []).append(eqn)
        keep = {v for v in jaxpr.outvars if type(v) is not Literal}
        keep.update(jaxpr.invars, jaxpr.constvars)  # the caller's buffers are never ours
        self.slot_avals: list = []
        free: dict = {}
        slot_of: dict = {}
        steps = []

        def release(values):  # their slots can take later results
            for v in values:
                if v in slot_of:
                    free.setdefault(self.slot_avals[slot_of[v]], []).append(slot_of[v])

        for i, eqn in enumerate(eqns):
            rule = impl_rules.get(eqn.primitive)
            if rule is None:
                raise NotImplementedError(
                    f"primitive {eqn.primitive.name!r} has no eager rule")
            dead = tuple(v for v in dict.fromkeys(eqn.invars)
                         if type(v) is not Literal and last.get(v) == i and v not in keep)
            ufunc = getattr(rule, "ufunc", None)
            selects = ufunc is None and self._selects_into_slot(eqn, keep, readers)
            if selects:
                ufunc = _select_into  # writes case 0 before reading case 1: no reuse
            else:
                release(dead)  # a ufunc's result may take a dying operand's slot
            slot = None
            if selects or ufunc is not None and self._slotted(eqn, ufunc, keep, readers):
                aval = eqn.outvars[0].aval
                key = (tuple(aval.shape), np.dtype(aval.dtype))
                pool = free.get(key)
                if pool:
                    slot = pool.pop()
                else:
                    slot = len(self.slot_avals)
                    self.slot_avals.append(key)
                slot_of[eqn.outvars[0]] = slot
            if selects:
                release(dead)
            steps.append((eqn, rule, ufunc, slot, dead))
        self.steps = steps
        self._local = threading.local()

    @staticmethod
    def _selects_into_slot(eqn, keep, readers) -> bool:
        """Whether ``eqn`` is a two-way ``select_n`` on a boolean whose result can live
        in a slot (as :meth:`_slotted` asks of a ufunc's)."""
        if eqn.primitive.name != "select_n" or len(eqn.invars) != 3:
            return False
        which = eqn.invars[0]
        if type(which) is Literal or np.dtype(which.aval.dtype) != np.bool_:
            return False
        return Schedule._slot_ok(eqn, keep, readers)

    @staticmethod
    def _slot_ok(eqn, keep, readers) -> bool:
        """An intermediate of a native dtype and static shape, read only where no view
        of it can outlive the read."""
        if len(eqn.outvars) != 1 or eqn.params:
            return False
        out = eqn.outvars[0]
        aval = out.aval
        if out in keep or np.dtype(aval.dtype) not in _NATIVE or \
                not all(type(d) is int for d in aval.shape):
            return False
        for reader in readers.get(out, ()):
            if getattr(impl_rules.get(reader.primitive), "ufunc", None) is None and \
                    reader.primitive.name not in _FRESH_RESULTS:
                return False
        return True

    @staticmethod
    def _slotted(eqn, ufunc, keep, readers) -> bool:
        """Whether ``eqn``'s result can live in a slot: an intermediate of a native
        dtype and static shape, read only where no view of it can outlive the read,
        of the very dtype the ufunc computes for these operand types."""
        if not Schedule._slot_ok(eqn, keep, readers):
            return False
        aval = eqn.outvars[0].aval
        probes = []
        for v in eqn.invars:
            if type(v) is Literal:
                probes.append(v.val)
            else:
                if np.dtype(v.aval.dtype) not in _NATIVE:
                    return False
                probes.append(np.empty((0,), v.aval.dtype))
        try:
            with np.errstate(all="ignore"):
                return ufunc(*probes).dtype == aval.dtype
        except Exception:  # noqa: BLE001 - NumPy refuses these types: the impl rule
            return False

    def _new_slots(self) -> list:
        return [np.empty(shape, dt) for shape, dt in self.slot_avals]

    def run(self, consts, args) -> list:
        jaxpr = self.jaxpr
        if len(args) != len(jaxpr.invars):
            raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(jaxpr.invars, args))
        local, slots = self._local, None
        if self.slot_avals:
            # This thread's buffers, unless a call of this schedule is already running
            # on the thread (a callback that calls the function again): that one
            # takes buffers of its own.
            slots = getattr(local, "slots", None)
            if slots is None:
                slots = local.slots = self._new_slots()
            if getattr(local, "busy", False):
                slots = self._new_slots()
            else:
                local.busy = True
        try:
            return self._run(env, slots)
        finally:
            if slots is not None and slots is getattr(local, "slots", None):
                local.busy = False

    def _run(self, env, slots) -> list:
        jaxpr = self.jaxpr
        # Floating-point warnings are off for the whole call, as compiled code raises
        # none (one context instead of one per transcendental).
        with np.errstate(all="ignore"):
            for eqn, rule, ufunc, slot, dead in self.steps:
                if eqn is None:  # a step of several equations (a fused schedule's)
                    rule(env)
                    for v in dead:
                        del env[v]
                    continue
                vals = [x.val if type(x) is Literal else env[x] for x in eqn.invars]
                if slot is not None:
                    env[eqn.outvars[0]] = ufunc(*vals, out=slots[slot])
                else:
                    store_results(env, eqn.outvars, rule(*vals, **eqn.params))
                for v in dead:
                    del env[v]
        return [x.val if type(x) is Literal else env[x] for x in jaxpr.outvars]


class InterpretBackend(Backend):
    """Reference backend: NumPy, one primitive at a time."""

    name = "interpret"
    platforms = ("cpu",)

    def compile(self, closed_jaxpr, options: CompileOptions | None = None) -> Executable:
        return InterpretExecutable(closed_jaxpr)

    def version_key(self) -> tuple:
        return ("numpy", np.__version__)


interpret_backend = register_backend(InterpretBackend())
