"""float16 and bfloat16 on the cpu backend: stored in 16 bits, computed in float32.

Numba has no 16-bit float type. :func:`lower_half` rewrites a program's loop IR so that
no 16-bit float is left in it:

* every float16/bfloat16 buffer becomes a ``uint16`` buffer of the same bits (the
  caller's arrays are passed as zero-copy ``.view(np.uint16)`` views, and results are
  viewed back: :class:`HalfViews`);
* every load from such a buffer widens the bits to float32 (exact), every store narrows
  a float32 (or float64) value to the nearest 16-bit value, ties to even
  (:mod:`.half_kernels`): float16 overflows to ``inf`` from 65520 up, subnormals and
  ``-0.0`` are exact, NaN stays NaN;
* arithmetic runs on float32 scalars. By default the result of each operation is
  rounded to the 16-bit format right away (and kept in a float32 register), so a fused
  chain gives bit for bit what the interpret backend gives — NumPy and ml_dtypes compute
  each 16-bit ufunc in float32 and round its result — and what ``jax.jit`` gives on a
  CPU. With ``compiler_options={"fastmath": True}`` intermediate results keep float32's
  precision and only stored values (and explicit casts) are rounded: faster, and more
  accurate, but no longer the same bits as the reference;
* reductions accumulate in float32 (the float32 result is rounded once, on store);
  ``argmax``/``argmin``, ``max`` and ``min`` compare the exact widened values;
* whole-array operations (``dot_general``, sorts, cumulative sums, convolutions…) run
  on float32 copies of their 16-bit operands and round their results; operations that
  only move elements (``concatenate``, ``pad``, a general ``reshape``,
  ``dynamic_update_slice``, ``scatter``) move the 16-bit patterns themselves
  (``debug_print`` prints them as 16-bit values); one with
  no loop lowering here (a callback, LAPACK…) runs its NumPy implementation on the
  16-bit arrays themselves (viewed from and back to ``uint16``), that equation only.

``nextafter`` steps in the 16-bit format itself. Conversions from float64 to float16
and bfloat16 round once (as NumPy's ``astype`` to float16 does; through float32 rounded
to odd in the kernels), never twice through float32 to nearest.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .... import dtypes
from ....compiler import PARALLEL_MIN_SIZE, ir
from ....compiler.rows import unfused
from ....core.primitive import impl_rules
from ....core.shapes import IxVar, maybe_more_than, size_of
from .lower_arrays import array_rules
from ...numba.lower_elementwise import scalar_rules

__all__ = ["lower_half", "HalfViews"]

_F32, _F64, _U16 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.uint16)

_F16 = np.dtype(np.float16)


def _kind(dt):
    """The name of the conversion kernels of a 16-bit float dtype: ``"f16"``, ``"bf16"``
    (``None`` for other dtypes). Never imports ml_dtypes (see absjit.dtypes)."""
    dt = np.dtype(dt)
    if dt == _F16:
        return "f16"
    return "bf16" if dtypes.is_bfloat16(dt) else None


def _half_dtype(kind) -> np.dtype:
    """The dtype whose kernels are named ``kind``."""
    return _F16 if kind == "f16" else dtypes.bfloat16


class _Conversion:
    """A scalar operation this rewrite inserts (not a jaxpr primitive: it exists only
    in the cpu backend's loop IR). Its spelling is registered in ``scalar_rules``."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


def _suffix(kind) -> str:
    """float16 conversions have a hardware and an integer-only form (see
    :mod:`.half_kernels`); the name in the source says which the kernel uses."""
    if kind == "bf16":
        return ""
    # imports Numba: only when a kernel is made
    from ..kernels.half_kernels import NATIVE_HALF
    return "_native" if NATIVE_HALF else "_soft"


def _narrow_text(x, src, kind) -> str:
    return f"_f{np.dtype(src).itemsize * 8}_to_{kind}{_suffix(kind)}({x})"


def _widen_text(x, kind) -> str:
    return f"_{kind}_to_f32{_suffix(kind)}({x})"


# ``widen``: uint16 bits -> float32; ``narrow``: float32/float64 -> uint16 bits, rounded
# to nearest even; ``quantize``: float32/float64 -> the float32 of the nearest 16-bit
# value; ``nextafter``: the next 16-bit value, as a float32.
WIDEN, NARROW, QUANTIZE, NEXTAFTER = (_Conversion(f"half_{n}") for n in
                                      ("widen", "narrow", "quantize", "nextafter"))


def lower_half_widen(args, in_avals, out_aval, *, kind):
    return _widen_text(args[0], kind)


def lower_half_narrow(args, in_avals, out_aval, *, kind):
    return _narrow_text(args[0], in_avals[0].dtype, kind)


def lower_half_quantize(args, in_avals, out_aval, *, kind):
    return _widen_text(_narrow_text(args[0], in_avals[0].dtype, kind), kind)


def lower_half_nextafter(args, in_avals, out_aval, *, kind):
    return f"_nextafter_{kind}{_suffix(kind)}({args[0]}, {args[1]})"


for _op, _rule in ((WIDEN, lower_half_widen), (NARROW, lower_half_narrow),
                   (QUANTIZE, lower_half_quantize), (NEXTAFTER, lower_half_nextafter)):
    scalar_rules[_op] = _rule

# Operations whose result is one of their operands, or an integer-valued function of
# one: on 16-bit inputs it is a 16-bit value already, so no rounding is needed.
_EXACT = {"neg", "abs", "max", "min", "select_n", "clamp", "stop_gradient", "floor",
          "ceil", "round", "sign", "real", "conj", "rem"}
# Whole-array operations that only move elements: they run on the 16-bit patterns.
_MOVES_BITS = {"reshape", "concatenate", "pad", "dynamic_update_slice", "scatter"}


class _OnBits:
    """``prim`` run through its NumPy implementation on ``uint16`` views of 16-bit float
    arrays: the operands are viewed as float16/bfloat16, the results viewed back. The
    ``half_dtypes`` parameter names the views (and keeps cache keys of host calls apart
    from genuine ``uint16`` ones)."""

    def __init__(self, prim):
        self.prim = prim
        self.name = prim.name

    def __repr__(self):
        return self.name


_ON_BITS: dict = {}


def _on_bits(prim) -> _OnBits:
    got = _ON_BITS.get(prim)
    if got is None:
        got = _ON_BITS[prim] = _OnBits(prim)
        impl = impl_rules[prim]

        def run(*ins, half_dtypes, **params):
            in_dts, out_dts = ([None if n is None else np.dtype(n) for n in names]
                               for names in half_dtypes)
            outs = impl(*[x if dt is None else np.asarray(x).view(dt)
                          for x, dt in zip(ins, in_dts)], **params)
            return [o if dt is None else
                    np.ascontiguousarray(np.asarray(o, dtype=dt)).view(_U16)
                    for o, dt in zip(outs, out_dts)]
        run.__name__ = f"{prim.name}_impl_on_16_bit_floats"
        impl_rules[got] = run
    return got


@dataclasses.dataclass
class HalfViews:
    """How a compiled program with 16-bit float buffers is called: which parameters
    and results are float16/bfloat16 (``None`` for the others)."""

    ins: list
    outs: list

    def fast(self, fn):
        """``fn`` (which takes ``uint16`` views) called with 16-bit float arrays: a
        TypeError for anything but an ndarray of the exact dtype, which the caller
        normalises (:meth:`NumbaExecutable.__call__`)."""
        ins, outs = self.ins, self.outs
        u16, ndarray = _U16, np.ndarray

        def call(*buffers):
            if len(buffers) != len(ins):
                raise TypeError(f"expected {len(ins)} buffers, got {len(buffers)}")
            args = []
            for b, dt in zip(buffers, ins):
                if dt is not None:
                    if type(b) is not ndarray or b.dtype != dt:
                        raise TypeError(f"a {dt.name} array is expected")
                    b = b.view(u16)
                args.append(b)
            res = fn(*args)
            return tuple(r if dt is None else r.view(dt) for r, dt in zip(res, outs))
        return call


class _Rewrite:
    """One program's rewrite (see the module docstring)."""

    def __init__(self, options):
        self.excess = bool(getattr(options, "fastmath", False))
        self.parallel = getattr(options, "parallel", None)
        self.kinds = {}  # id(Buffer | Sym) -> "f16" | "bf16", for the original dtype
        self.count = 0
        self.lets = {}  # id(Sym) -> how many Lets define it (carries have several)
        self.fresh_syms = set()  # ids of the symbols made here (each defined once)
        # For a store of a symbol defined once: id(sym) -> (kind, bits) when it widens
        # loaded bits (the store writes them back as they are), or (kind, x, dtype) when
        # it rounds a fresh x (the store narrows x itself).
        self.origin = {}

    # -- helpers -------------------------------------------------------------------
    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def sym(self, dtype):
        s = ir.Sym(self.fresh("hs"), np.dtype(dtype))
        self.fresh_syms.add(id(s))
        return s

    def kind_of(self, v):
        if isinstance(v, ir.Const):
            return _kind(v.dtype)
        return self.kinds.get(id(v))

    def scalar(self, v):
        """A scalar operand with 16-bit constants as float32 (exact)."""
        if isinstance(v, ir.Const) and _kind(v.dtype):
            return ir.Const(np.float32(np.asarray(v.value, dtype=v.dtype)[()]), _F32)
        return v

    def _par(self, shape) -> bool:
        if self.parallel is not None:
            return bool(self.parallel) and len(shape) > 0 and maybe_more_than(shape[0], 1)
        return len(shape) > 0 and maybe_more_than(shape[0], 1) and \
            maybe_more_than(size_of(shape), PARALLEL_MIN_SIZE - 1)

    def convert_nest(self, dst, src, kind, to_bits):
        """A nest copying ``src`` into ``dst`` element by element, narrowing float32 to
        16 bits (``to_bits``) or widening 16 bits to float32."""
        vars_ = tuple(self.fresh("hv") for _ in dst.shape)
        idx = tuple(IxVar(v) for v in vars_)
        a = self.sym(src.dtype)
        b = self.sym(_U16 if to_bits else _F32)
        op = ir.Op(NARROW if to_bits else WIDEN, (a,), (src.dtype,), b.dtype,
                   {"kind": kind})
        body = [ir.Let(a, ir.Load(src, idx)), ir.Let(b, op), ir.Store(dst, idx, b)]
        return ir.Nest(vars_, tuple(dst.shape), body, self._par(tuple(dst.shape)))

    # -- the rewrite -----------------------------------------------------------------
    def mark(self, program):
        """Record which buffers and symbols are 16-bit floats, then retype them:
        buffers to ``uint16``, symbols to float32. (The objects are shared by every
        statement that names them, so retyping them once retypes every use.)"""
        values = list(program.params) + list(program.outputs)
        for stmt in ir.walk(program.body):
            values += ir.stmt_defs(stmt) + [v for v in ir.stmt_uses(stmt)
                                            if isinstance(v, (ir.Buffer, ir.Sym))]
            if isinstance(stmt, ir.Let):
                self.lets[id(stmt.sym)] = self.lets.get(id(stmt.sym), 0) + 1
        for v in values:
            kind = _kind(v.dtype) if isinstance(v, (ir.Buffer, ir.Sym)) else None
            if kind is not None and id(v) not in self.kinds:
                self.kinds[id(v)] = kind
                v.dtype = _U16 if isinstance(v, ir.Buffer) else _F32

    def block(self, stmts) -> list:
        out = []
        for s in stmts:
            if isinstance(s, (ir.Nest, ir.ForRange)):
                s.body = self.block(s.body)
            elif isinstance(s, ir.Switch):
                s.branches = [self.block(b) for b in s.branches]
            elif isinstance(s, ir.While):
                s.cond_body = self.block(s.cond_body)
                s.body = self.block(s.body)
            if isinstance(s, ir.Let):
                out += self.let(s)
            elif isinstance(s, ir.Store):
                out += self.store(s)
            elif isinstance(s, ir.Reduce):
                out += self.reduce(s)
            elif isinstance(s, ir.Opaque):
                out += self.opaque(s)
            elif isinstance(s, ir.ConstArray) and id(s.buf) in self.kinds:
                value = np.asarray(s.value)
                out.append(ir.ConstArray(s.buf, np.ascontiguousarray(value).view(_U16)))
            else:
                out.append(s)
        return out

    def round_to(self, sym, value, src_dtype, kind) -> ir.Let:
        """``sym = value`` rounded to the 16-bit format ``kind`` (as a float32)."""
        if self.lets.get(id(sym)) == 1 and id(value) in self.fresh_syms:
            self.origin[id(sym)] = (kind, value, np.dtype(src_dtype))
        return ir.Let(sym, ir.Op(QUANTIZE, (value,), (np.dtype(src_dtype),), _F32,
                                 {"kind": kind}))

    def let(self, s) -> list:
        e, kind = s.expr, self.kinds.get(id(s.sym))
        if isinstance(e, ir.Load):
            bkind = self.kinds.get(id(e.buf))
            if bkind is None:
                return [s]
            bits = self.sym(_U16)
            if self.lets.get(id(s.sym)) == 1:
                self.origin[id(s.sym)] = (bkind, bits)
            return [ir.Let(bits, e),
                    ir.Let(s.sym, ir.Op(WIDEN, (bits,), (_U16,), _F32, {"kind": bkind}))]
        if isinstance(e, ir.Op):
            return self.op(s.sym, e, kind)
        if isinstance(e, ir.IndexValue) and kind is not None:
            t = self.sym(_F32)
            return [ir.Let(t, ir.IndexValue(e.ix, _F32)), self.round_to(s.sym, t, _F32, kind)]
        if isinstance(e, ir.Ref):
            src_kind = self.kind_of(e.value)
            value = self.scalar(e.value)
            if kind is None or src_kind == kind:
                return [ir.Let(s.sym, ir.Ref(value))]
            src = np.dtype(value.dtype)
            if src not in (_F32, _F64):
                t = self.sym(_F32)
                return [ir.Let(t, ir.Ref(value)), self.round_to(s.sym, t, _F32, kind)]
            return [self.round_to(s.sym, value, src, kind)]
        return [s]

    def op(self, sym, e, kind) -> list:
        args = tuple(self.scalar(a) for a in e.args)
        in_kinds = [_kind(d) for d in e.in_dtypes]
        in_dtypes = tuple(_F32 if k else np.dtype(d) for d, k in zip(e.in_dtypes, in_kinds))
        name = e.prim.name
        if name == "nextafter" and in_kinds[0] is not None:
            return [ir.Let(sym, ir.Op(NEXTAFTER, args, in_dtypes, _F32,
                                      {"kind": in_kinds[0]}))]
        if name == "convert_element_type" and kind is not None:
            return self.convert_to_half(sym, e, args, in_dtypes, in_kinds[0], kind)
        if kind is None:
            return [ir.Let(sym, ir.Op(e.prim, args, in_dtypes, e.out_dtype, e.params))]
        op = ir.Op(e.prim, args, in_dtypes, _F32, e.params)
        values = in_kinds[1:] if name == "select_n" else in_kinds  # not the predicate
        exact = name in _EXACT and all(k == kind for k in values)
        if self.excess or exact:
            return [ir.Let(sym, op)]
        t = self.sym(_F32)
        return [ir.Let(t, op), self.round_to(sym, t, _F32, kind)]

    def convert_to_half(self, sym, e, args, in_dtypes, src_kind, kind) -> list:
        """A cast to a 16-bit format always rounds (also under fastmath). float64 (and
        complex128's real part) reach float16 and bfloat16 with a single rounding;
        everything else goes through float32, as NumPy/ml_dtypes do."""
        (x,), src = args, in_dtypes[0]
        if src_kind == kind:
            return [ir.Let(sym, ir.Ref(x))]
        via = _F64 if src in (_F64, np.dtype(np.complex128)) else _F32
        out = []
        if src != via:
            t = self.sym(via)
            out.append(ir.Let(t, ir.Op(e.prim, (x,), (src,), via,
                                       dict(e.params, new_dtype=via))))
            x = t
        return out + [self.round_to(sym, x, via, kind)]

    def store(self, s) -> list:
        kind = self.kinds.get(id(s.buf))
        if kind is None:
            return [s]
        v = s.value
        if isinstance(v, ir.Const):
            bits = np.asarray(v.value, dtype=v.dtype).astype(
                _half_dtype(kind)).view(_U16)[()]
            return [ir.Store(s.buf, s.index, ir.Const(bits, _U16))]
        # A value stored as loaded is stored as its bits; a rounded one is narrowed from
        # its unrounded source (rounding twice to nearest gives what rounding once does).
        got = self.origin.get(id(v), ())
        if got[:1] == (kind,) and len(got) == 2:
            return [ir.Store(s.buf, s.index, got[1])]
        src = np.dtype(v.dtype)
        if got[:1] == (kind,):
            _, v, src = got
        bits = self.sym(_U16)
        return [ir.Let(bits, ir.Op(NARROW, (v,), (src,), _U16, {"kind": kind})),
                ir.Store(s.buf, s.index, bits)]

    def reduce(self, s) -> list:
        s.body = self.block(s.body)
        m = s.monoid
        changes = {}
        if _kind(m.acc_dtype):
            changes["acc_dtype"] = _F32
        if _kind(m.out_dtype):
            changes["out_dtype"] = _F32
        if changes:
            s.monoid = dataclasses.replace(m, **changes)
        kind = self.kinds.get(id(s.out))
        if kind is None:
            return [s]
        # The float32 result goes to a temporary and is rounded into the output.
        out = s.out
        acc = ir.Buffer(self.fresh("ht"), out.shape, _F32)
        s.out = acc
        return [ir.Alloc(acc), s, self.convert_nest(out, acc, kind, to_bits=True)]

    def opaque(self, s) -> list:
        half_in = [self.kinds.get(id(b)) for b in s.ins]
        half_out = [self.kinds.get(id(b)) for b in s.outs]
        if not any(half_in + half_out):
            return [s]
        params = {k: (_F32 if isinstance(v, np.dtype) and _kind(v) else v)
                  for k, v in s.params.items()}
        host = s.prim not in array_rules
        if s.prim.name == "debug_print":  # prints the 16-bit values themselves
            params = dict(s.params, views=tuple(np.dtype(a.dtype).name if k else None
                                                for a, k in zip(s.in_avals, half_in)))
        if host or s.prim.name in _MOVES_BITS or s.prim.name == "debug_print":
            if host:
                names = tuple(tuple(np.dtype(a.dtype).name if k else None
                                    for a, k in zip(avals, kinds))
                              for avals, kinds in ((s.in_avals, half_in),
                                                   (s.out_avals, half_out)))
                s.prim, params = _on_bits(s.prim), dict(s.params, half_dtypes=names)
            s.in_avals = [a.update(dtype=_U16) if k else a for a, k in zip(s.in_avals, half_in)]
            s.out_avals = [a.update(dtype=_U16) if k else a
                           for a, k in zip(s.out_avals, half_out)]
            s.params = params
            return [s]
        before, after = [], []
        ins, outs = list(s.ins), list(s.outs)
        for n, (b, k) in enumerate(zip(s.ins, half_in)):
            if k is not None:
                w = ir.Buffer(self.fresh("ht"), b.shape, _F32)
                before += [ir.Alloc(w), self.convert_nest(w, b, k, to_bits=False)]
                ins[n] = w
        for n, (b, k) in enumerate(zip(s.outs, half_out)):
            if k is not None:
                w = ir.Buffer(self.fresh("ht"), b.shape, _F32)
                after += [ir.Alloc(b), self.convert_nest(b, w, k, to_bits=True)]
                outs[n] = w
        in_avals = [a.update(dtype=_F32) if k else a for a, k in zip(s.in_avals, half_in)]
        out_avals = [a.update(dtype=_F32) if k else a for a, k in zip(s.out_avals, half_out)]
        return before + [ir.Opaque(s.prim, outs, ins, in_avals, out_avals, params)] + after


def lower_half(program, options):
    """``(program, views)``: ``program`` without 16-bit floats (see the module
    docstring) and the :class:`HalfViews` its callers need, or ``(program, None)``
    when it has none. The program is rewritten in place."""
    def is_half(v):
        return isinstance(v, (ir.Buffer, ir.Sym)) and _kind(v.dtype) is not None
    if not (any(map(is_half, program.params)) or any(map(is_half, program.outputs)) or
            any(is_half(v) for s in ir.walk(program.body) for v in ir.stmt_defs(s))):
        return program, None
    # The rewrite works statement by statement on whole-array nests and reductions.
    program = unfused(program)
    ins = [np.dtype(b.dtype) if _kind(b.dtype) else None for b in program.params]
    outs = [np.dtype(b.dtype) if _kind(b.dtype) else None for b in program.outputs]
    rw = _Rewrite(options)
    rw.mark(program)
    program.body = _drop_unused_conversions(rw.block(program.body))
    return ir.verify(program), HalfViews(ins, outs)


def _drop_unused_conversions(body) -> list:
    """``body`` without the conversions whose result nothing reads (a value loaded only
    to be stored again is stored as its bits)."""
    used = set()
    for stmt in ir.walk(body):
        used.update(id(v) for v in ir.stmt_uses(stmt))
        if isinstance(stmt, ir.Reduce):
            used.add(id(stmt.value))
        elif isinstance(stmt, ir.While):
            used.add(id(stmt.cond))

    def keep(stmt):
        return not (isinstance(stmt, ir.Let) and isinstance(stmt.expr, ir.Op)
                    and stmt.expr.prim in (WIDEN, QUANTIZE) and id(stmt.sym) not in used)

    def prune(block):
        out = []
        for stmt in block:
            if not keep(stmt):
                continue
            if isinstance(stmt, (ir.Nest, ir.Reduce, ir.ForRange)):
                stmt.body = prune(stmt.body)
            elif isinstance(stmt, ir.Switch):
                stmt.branches = [prune(b) for b in stmt.branches]
            elif isinstance(stmt, ir.While):
                stmt.cond_body, stmt.body = prune(stmt.cond_body), prune(stmt.body)
            out.append(stmt)
        return out
    return prune(body)
