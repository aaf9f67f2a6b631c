"""The accumulator updates of float reductions, written so LLVM vectorises the fold.

A float sum written ``acc = acc + x`` is one long dependency chain: without permission
to reorder it, LLVM's loop vectoriser leaves the loop scalar (about 10x slower than a
vector loop on a row of 1000 float32). ``_fold_add`` is an ``fadd`` carrying LLVM's
``reassoc`` flag, on the accumulator update only: the vectoriser may then keep one
partial sum per vector lane (and per unrolled copy) and add them at the end — a blocked
summation, usually more accurate than the sequential one. Nothing else changes:
NaN, infinities and signed zeros behave as IEEE addition, and the values summed are
computed exactly as written (only the chain of ``_fold_add`` calls is reordered, since
reassociation needs the flag on both instructions).

``_fold_max``/``_fold_min`` are ``llvm.maximum``/``llvm.minimum``: NaN-propagating (a
NaN anywhere gives NaN, as ``np.max``) and vectorisable; ``-0.0 < +0.0`` in their order.
The second operand is converted to the accumulator's type (a float32 value into a
float64 sum).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["_fold_add", "_fold_max", "_fold_min"]


def _fold(name: str):
    def typer(typingctx, acc, value):
        if not isinstance(acc, types.Float) or \
                not isinstance(value, (types.Float, types.Integer, types.Boolean)):
            return None
        sig = acc(acc, value)

        def codegen(context, builder, sig, args):
            x = args[0]
            y = context.cast(builder, args[1], sig.args[1], sig.args[0])
            if name == "add":
                return builder.fadd(x, y, flags=("reassoc",))
            fnty = ir.FunctionType(x.type, [x.type, x.type])
            fn = builder.module.declare_intrinsic(f"llvm.{name}", [x.type], fnty)
            return builder.call(fn, [x, y])
        return sig, codegen
    typer.__name__ = f"_fold_{name}"
    return intrinsic(typer)


_fold_add = _fold("add")
_fold_max = _fold("maximum")
_fold_min = _fold("minimum")
