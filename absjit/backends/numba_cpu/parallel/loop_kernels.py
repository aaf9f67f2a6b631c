"""Parallel loops on absjit's own thread pool (:mod:`.pool`).

A loop nest the IR marks parallel is rendered (:meth:`.render.CpuRenderer.pool_loop`)
as a *chunk function* at module level, ``_loop0(t_lo, t_hi, <values it reads>)``, which
runs iterations ``[t_lo, t_hi)`` of the outermost loop, and a call in the kernel:

    _pool_for(_loop0, n, (arg0, b0, s3))

:func:`_pool_for` compiles the chunk for those argument types straight into the kernel's
library (a subroutine, with the flags of the Numba function the backend made of it:
the kernel's own), and emits a small C-ABI function ``void task(int64 t, int64 ctx)`` next to it that unpacks the
values from a record on the kernel's stack and runs task ``t``'s share of iterations.
The kernel hands ``task`` and the record to ``absjit_pool_for`` (found by name, so the
kernel can be cached on disk), which cuts the loop into :data:`.pool.LOOP_TASKS` tasks
per thread and runs them on the pool: the calling thread and sleeping workers take them
one at a time. An alias (``b3 = b1``) reaches the chunk as one argument, rebound there
(:meth:`.render.CpuRenderer.pool_loop`): as two, an in-place update would fail
LLVM's overlap check and run unvectorised.

Against Numba's ``prange`` on its threading layer: no parfor passes at compile time,
and on a machine other processes keep busy the pool's sleeping workers are woken
straight onto a core where a spinning layer's threads wait their turn (selu on 1e6
float32 measured the same 0.10 ms with 0, 1 or 2 busy processes on 2 cores, against
0.19 ms for ``prange`` limited to the free core).

The chunk's outermost loop runs ``for t_k in range(t_hi - t_lo)`` with ``j = t_lo +
t_k`` after a ``t_lo < 0`` test: with a plain ``range(t_lo, t_hi)`` Numba cannot tell
the index is never negative and the wrap-around of negative indices stops LLVM from
vectorising the loop (5x slower for selu).

A chunk's body is scalar code compiled with NumPy's error model and no bounds checks;
the one thing a generated chunk can fail at is the allocation of a small scratch array
(a row reduction's lanes) when memory is exhausted. A task whose chunk returns an error
marks the record, and once the loop has joined the kernel raises ``MemoryError`` (the
chunk's own exception stays in the worker that ran it), never returning a result
computed from a skipped task.
"""
from __future__ import annotations

from llvmlite import ir as llir
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["_pool_for"]

_I64 = llir.IntType(64)
_HEAD = 3  # the record's first fields: iterations and tasks (``absjit_pool_for``), failed


def _compile_chunk(context, builder, dispatcher, args):
    """The chunk compiled into the kernel's library with the flags of its Numba
    function (the kernel's: error model, fast math, no bounds checks)."""
    from numba.core import compiler
    flags = compiler.Flags()
    dispatcher.targetdescr.options.parse_as_flags(flags, dispatcher.targetoptions)
    return context.compile_subroutine(builder, dispatcher.py_func,
                                      types.none(*args), flags=flags, caching=False)


@intrinsic
def _pool_for(typingctx, chunk, n, values):
    """Run ``chunk(lo, hi, *values)`` over ``[0, n)`` in tasks on the pool."""
    if not isinstance(chunk, types.Dispatcher) or not isinstance(n, types.Integer) \
            or not isinstance(values, types.BaseTuple):
        return None
    args = (types.int64, types.int64) + tuple(values.types)
    sig = types.none(chunk, n, values)

    def codegen(context, builder, sig, llargs):
        _, nval, tup = llargs
        cres = _compile_chunk(context, builder, chunk.dispatcher, args)
        models = [context.data_model_manager[t] for t in values.types]
        record = llir.LiteralStructType([_I64] * _HEAD + [m.get_data_type() for m in models])
        task = _task_function(context, builder.module, cres, record, models)

        slot = cgutils.alloca_once(builder, record)
        failed = cgutils.gep_inbounds(builder, slot, 0, 2)
        builder.store(_I64(0), failed)
        for i, m in enumerate(models):
            v = builder.extract_value(tup, i)
            builder.store(m.as_data(builder, v),
                          cgutils.gep_inbounds(builder, slot, 0, i + _HEAD))
        fnty = llir.FunctionType(llir.VoidType(), [_I64, _I64.as_pointer(), _I64])
        run = cgutils.get_or_insert_function(builder.module, fnty, "absjit_pool_for")
        count = context.cast(builder, nval, n, types.int64)
        builder.call(run, [builder.ptrtoint(task, _I64), builder.bitcast(slot, _I64.as_pointer()),
                           count])
        with builder.if_then(builder.icmp_signed("!=", builder.load(failed), _I64(0)),
                             likely=False):
            context.call_conv.return_user_exc(
                builder, MemoryError, ("out of memory in a task of a parallel loop",))
        return context.get_dummy_value()

    return sig, codegen


def _task_function(context, module, cres, record, models):
    """``void task(int64 t, int64 ctx)``: the chunk over task ``t``'s iterations."""
    fn = llir.Function(module, llir.FunctionType(llir.VoidType(), [_I64, _I64]),
                       module.get_unique_name("absjit_loop_task"))
    fn.linkage = "internal"
    b = llir.IRBuilder(fn.append_basic_block())
    t, ctx = fn.args
    rec = b.inttoptr(ctx, record.as_pointer())
    n = b.load(cgutils.gep_inbounds(b, rec, 0, 0))
    tasks = b.load(cgutils.gep_inbounds(b, rec, 0, 1))
    lo = b.sdiv(b.mul(t, n), tasks)
    hi = b.sdiv(b.mul(b.add(t, _I64(1)), n), tasks)
    vals = [m.from_data(b, b.load(cgutils.gep_inbounds(b, rec, 0, i + _HEAD)))
            for i, m in enumerate(models)]
    callee = context.declare_function(module, cres.fndesc)
    status, _ = context.call_conv.call_function(b, callee, cres.signature.return_type,
                                                cres.signature.args, [lo, hi] + vals)
    with b.if_then(status.is_error, likely=False):
        b.store_atomic(_I64(1), cgutils.gep_inbounds(b, rec, 0, 2), "monotonic", 8)
    b.ret_void()
    return fn

