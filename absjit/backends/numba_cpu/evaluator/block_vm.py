"""The block evaluator: one Numba function, compiled once per machine and element type,
that runs a fused run of elementwise equations over cache-sized blocks.

Tier 0 (:mod:`absjit.jit.tiering`) runs a program on NumPy while its own kernels
compile. NumPy makes a pass over memory per operation and costs a Python call per
equation: a selu of 10^6 values takes 2.5-3 ms there against 0.2 compiled, and a
170-equation stencil on 32x32 arrays 0.8 ms against 0.02. This evaluator runs such
runs of equations as a small program (:mod:`.block_plan` builds it from the jaxpr):
every operation is applied to a block of up to :data:`BLOCK` elements held in a
register file, so a value makes one trip through memory and a run of a hundred
equations costs one call from Python.

Its program is an ``int64`` table, one row of :data:`WIDTH` words per instruction:

* ``GROUP total ninstr s0 s1 s2 s3 npro``: the next ``npro`` rows (the prologue:
  constants) run once, then the ``ninstr`` after them over the ``total`` elements of
  the iteration shape ``(s0, s1, s2, s3)`` (row-major), block by block. The blocks of
  all groups, numbered in order, are the iterations of one loop on absjit's thread
  pool (:func:`.loop_kernels._pool_for`), each task with registers of its own: the
  caller lets it use several threads only where no group reads what another writes;
* ``LOAD_<dtype> reg buf offset t0 t1 t2 t3``: the block of buffer ``buf`` (an address
  in ``ptrs``, read as ``<dtype>``) at element ``offset + i0*t0 + i1*t1 + i2*t2 +
  i3*t3`` of each index of the iteration shape, converted to the element type (a
  broadcast has stride 0, a slice an offset, a transpose permuted strides);
* ``STORE_<dtype> reg buf offset t0 t1 t2 t3``: the reverse;
* ``FILL reg k``: ``consts[k]`` in every lane;
* one opcode per elementwise operation and operand types (:func:`instances`), spelled
  by the cpu backend's own scalar rules, so a value computes as in the compiled tier.

Booleans live in registers as 0 and 1 of the element type. An evaluator compiles in
~11 s of a core (mostly LLVM on the one large function), once per machine and float
type: it is an entry of absjit's disk cache like any kernel. Its loads and stores are
in :mod:`.block_kernels`.
"""
from __future__ import annotations

import logging
import threading

import numpy as np

from ....core.avals import ShapedArray
from ....core.primitive import abstract_eval_rules, all_primitives
from ...numba.lower_elementwise import dtype_ctor, scalar_rules

log = logging.getLogger("absjit")

__all__ = ["ready", "request", "obtain", "BLOCK", "WIDTH", "GROUP", "FILL", "load_op",
           "store_op", "instances", "opcodes", "source", "fill_value", "LOAD_DTYPES",
           "STORE_DTYPES", "FUNCTION_NAME"]

#: Elements per block: registers of 16 KB at float64, so a dozen stay in L2.
BLOCK = 2048
#: Words per instruction row.
WIDTH = 8
FUNCTION_NAME = "absjit_block_vm"

GROUP, FILL = 0, 1
#: Element types a LOAD reads, and those a STORE writes.
LOAD_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.bool_, np.int32,
                                          np.int64))
STORE_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.bool_))
_LOAD0 = 2
_STORE0 = _LOAD0 + len(LOAD_DTYPES)
_OP0 = _STORE0 + len(STORE_DTYPES)


def load_op(dtype) -> int:
    return _LOAD0 + LOAD_DTYPES.index(np.dtype(dtype))

def store_op(dtype) -> int:
    return _STORE0 + STORE_DTYPES.index(np.dtype(dtype))

# Operations the evaluator implements, by operand count: the common ones of neural
# network and numerical code. Each costs compile time (a transcendental inlines its
# whole kernel); an equation outside the set runs on NumPy.
_UNARY = ("neg", "abs", "sign", "floor", "ceil", "sqrt", "rsqrt", "exp", "log", "log1p",
          "expm1", "tanh", "logistic", "sin", "cos", "is_finite", "not", "square")
_BINARY = ("add", "sub", "mul", "div", "max", "min", "pow", "lt", "le", "gt", "ge", "eq",
           "ne", "and", "or", "xor")
_TERNARY = ("clamp",)
#: ``integer_pow`` exponents with an opcode of their own.
INTEGER_POWERS = (2, 3, 4, -1, -2)

def instances(dtype) -> list:
    """``[(key, in_dtypes, out_dtype, expr_fn)]``: the operations of the evaluator for
    element type ``dtype``. ``key`` is ``(primitive name, operand dtypes, params
    key)``; ``expr_fn(args)`` spells the result from operand expressions."""
    T, B = np.dtype(dtype), np.dtype(np.bool_)
    prims = all_primitives()
    found = []

    def add(name, ins, params, pkey=()):
        prim = prims.get(name)
        rule = scalar_rules.get(prim)
        if prim is None or rule is None or prim not in abstract_eval_rules:
            return
        avals = [ShapedArray((), d) for d in ins]
        try:
            outs = abstract_eval_rules[prim](*avals, **params)
        except Exception:  # noqa: BLE001 - not defined for these operand types
            return
        if len(outs) != 1 or np.dtype(outs[0].dtype) not in (T, B):
            return
        out = outs[0]

        def expr(args, rule=rule, avals=avals, out=out, params=params):
            return rule(args, avals, out, **params)
        try:
            expr(["x"] * len(ins))
        except Exception:  # noqa: BLE001 - no spelling for these operand types
            return
        found.append(((name, tuple(ins), pkey), tuple(ins), np.dtype(out.dtype), expr))

    for name in _UNARY:
        for ins in ((T,), (B,)):
            add(name, ins, {})
    for name in _BINARY:
        for ins in ((T, T), (B, B)):
            add(name, ins, {})
    for name in _TERNARY:
        add(name, (T, T, T), {})
    for y in INTEGER_POWERS:
        add("integer_pow", (T,), {"y": y}, (y,))
    add("select_n", (B, T, T), {})
    add("select_n", (B, B, B), {})
    add("convert_element_type", (T,), {"new_dtype": B, "weak_type": False}, (B,))
    return found

def opcodes(dtype) -> dict:
    """``key -> opcode`` for :func:`instances` of ``dtype``."""
    return {key: _OP0 + i for i, (key, *_rest) in enumerate(instances(dtype))}

_PRELUDE = '''
from numba import carray
from absjit.backends.numba_cpu.evaluator.block_kernels import _address, _gather, _scatter
from absjit.backends.numba_cpu.parallel.loop_kernels import _pool_for

'''

def _arg(name, dt, T) -> str:
    """An operand of dtype ``dt`` held in local ``name`` (booleans are 0 or 1)."""
    return f"({name} != 0)" if dt == np.bool_ and T != np.bool_ else name

def source(dtype) -> str:
    """The evaluator's module source for element type ``dtype``."""
    T = np.dtype(dtype)
    ctor = dtype_ctor(T)
    lines = [_PRELUDE,
             "def _loop_blocks(lo, hi, code, consts, ptrs, sizes, nregs):",
             f"    R = np.empty((nregs, {BLOCK}), {ctor})",
             "    nrows = code.shape[0]",
             "    pc = 0",
             "    base = 0",
             "    while pc < nrows:",
             "        total = code[pc, 1]",
             "        first = pc + 1",
             "        body = first + code[pc, 7]",
             "        last = body + code[pc, 2]",
             "        s1 = code[pc, 4]",
             "        s2 = code[pc, 5]",
             "        s3 = code[pc, 6]",
             f"        blocks = (total + {BLOCK - 1}) // {BLOCK}",
             f"        start = max(lo - base, 0) * {BLOCK}",
             f"        stop = min(min(hi - base, blocks) * {BLOCK}, total)",
             "        base += blocks",
             "        prologue = True",
             "        while start < stop:",
             "            if prologue:",
             f"                n = min({BLOCK}, total)",
             "                qa, qb = first, body",
             "            else:",
             f"                n = min({BLOCK}, stop - start)",
             "                qa, qb = body, last",
             "            for q in range(qa, qb):",
             "                op = code[q, 0]",
             "                rd = R[code[q, 1]]",
             f"                if op == {FILL}:",
             f"                    v = {ctor}(consts[code[q, 2]])",
             "                    for j in range(n):",
             "                        rd[j] = v"]
    for dt in LOAD_DTYPES:
        lines += [
            f"                elif op == {load_op(dt)}:",
            "                    b = code[q, 2]",
            f"                    src = carray(_address(ptrs[b]), sizes[b], np.{dt.name})",
            "                    _gather(rd, src, code[q, 3], code[q, 4], code[q, 5], "
            "code[q, 6], code[q, 7], s1, s2, s3, start, n)"]
    for dt in STORE_DTYPES:
        lines += [
            f"                elif op == {store_op(dt)}:",
            "                    b = code[q, 2]",
            f"                    dst = carray(_address(ptrs[b]), sizes[b], np.{dt.name})",
            "                    _scatter(rd, dst, code[q, 3], code[q, 4], code[q, 5], "
            f"code[q, 6], code[q, 7], s1, s2, s3, start, n, {dt == np.bool_})"]
    for (key, ins, out, expr), op in zip(instances(T), opcodes(T).values()):
        names = ["ra", "rb", "rc"][:len(ins)]
        # operands read into locals first: a select of two loads is then a select of two
        # values, which vectorises (with the loads in its branches, it branches)
        body = expr([_arg(f"x{i}", d, T) for i, d in enumerate(ins)])
        lines.append(f"                elif op == {op}:  # {key[0]}{key[2] or ''}")
        for i, nm in enumerate(names):
            lines.append(f"                    {nm} = R[code[q, {2 + i}]]")
        lines.append("                    for j in range(n):")
        for i, nm in enumerate(names):
            lines.append(f"                        x{i} = {nm}[j]")
        lines.append(f"                        rd[j] = {ctor}({body})")
    lines += ["            if prologue:",
              "                prologue = False",
              "            else:",
              "                start += n",
              "        pc = last",
              "",
              "",
              f"def {FUNCTION_NAME}(code, consts, ptrs, sizes, nregs, nblocks):",
              "    _pool_for(_loop_blocks, nblocks, (code, consts, ptrs, sizes, nregs))",
              "    return 0", ""]
    return "\n".join(lines)

def fill_value(value, dtype) -> float:
    """A literal as the float64 the evaluator's ``consts`` holds (exact for ``dtype``)."""
    return float(np.asarray(value, dtype=np.dtype(dtype))[()])



# -- the evaluators of this process ----------------------------------------------------
_READY: dict = {}  # dtype -> (compiled entry point, opcodes)
_STARTED: set = set()
_LOCK = threading.Lock()


def ready(dtypes) -> dict:
    """``{dtype: (evaluator, opcodes)}`` for those of ``dtypes`` loaded in this process."""
    return {T: _READY[T] for T in dtypes if T in _READY}


def request(dtypes) -> None:
    """Load the evaluators for ``dtypes`` in the background: at once from the disk
    cache, or compiled after the work already queued (a program's own compile comes
    first: the evaluator serves the next programs). It compiles only where the disk
    cache keeps it (it is worth ~10 s of a core once per machine, not per process), and
    in the compile worker process when there is one: a script that exits meanwhile
    does not wait for it. Without a usable disk cache it does nothing: there is nothing
    to load, and a compile would be paid again by every process."""
    from ... import background, diskcache
    if not diskcache.usable():
        return
    for T in map(np.dtype, dtypes):
        with _LOCK:
            if T in _STARTED or T not in (np.float32, np.float64):
                continue
            _STARTED.add(T)

        def load(T=T):
            if not _obtain(T, only_from_disk=True) and diskcache.usable():
                background.submit(lambda: _compile_aside(T))
        background.submit(load)


def _compile_aside(T) -> None:
    from .. import compile_process
    if compile_process.enabled():
        try:
            compile_process.start()
        except compile_process.Unavailable:
            pass  # in this thread, then
    _obtain(T, only_from_disk=False)


def obtain(dtype):
    """``(evaluator, opcodes)`` for ``dtype``, compiling it now if need be."""
    T = np.dtype(dtype)
    with _LOCK:
        _STARTED.add(T)
    if not _obtain(T, only_from_disk=False):
        raise RuntimeError(f"the block evaluator for {T} did not compile")
    return _READY[T]


def _obtain(T, only_from_disk) -> bool:
    if T in _READY:
        return True
    import numba

    from ...base import CompileOptions, get_backend
    backend = get_backend("cpu")
    sig = (numba.int64[:, ::1], numba.float64[::1], numba.int64[::1], numba.int64[::1],
           numba.int64, numba.int64)
    try:
        disp = backend._function(source(T), FUNCTION_NAME, sig, False, CompileOptions(),
                                 (), nogil=True, counted=False,
                                 only_from_disk=only_from_disk)
    except Exception:  # noqa: BLE001 - tier 0 keeps running on NumPy alone
        if not only_from_disk:
            log.warning("absjit: the block evaluator for %s did not compile; tier 0 "
                        "runs on NumPy alone", T, exc_info=True)
        return False
    if disp is None:
        return False
    (cres,) = disp.overloads.values()
    _READY[T] = (cres.entry_point, opcodes(T))
    return True


# python -m absjit.backends.numba_cpu.evaluator.block_vm: compile both evaluators now
if __name__ == "__main__":
    for _T in (np.float32, np.float64):
        obtain(_T)
        print(f"block evaluator for {np.dtype(_T)}: in absjit's disk cache")
