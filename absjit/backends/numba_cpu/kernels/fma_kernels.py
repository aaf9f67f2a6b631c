"""``_fma_float32``: LLVM's ``llvm.fma.f32`` intrinsic, the cpu lowering of ``fma``.

A single-rounding multiply-add that LLVM's loop vectoriser widens to packed
``vfmadd`` instructions (and that falls back to libm's correctly rounded ``fmaf`` on a
CPU without FMA units), so a fused loop that calls it stays vectorised.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["_fma_float32"]


@intrinsic
def _fma_float32(typingctx, a, b, c):
    if not all(t == types.float32 for t in (a, b, c)):
        return None

    def codegen(context, builder, sig, args):
        fn = builder.module.declare_intrinsic("llvm.fma", [ir.FloatType()] * 3)
        return builder.call(fn, list(args))
    return types.float32(types.float32, types.float32, types.float32), codegen
