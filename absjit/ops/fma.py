"""``fma``: a fused multiply-add, ``a * b + c`` rounded once, for float32.

XLA's CPU compiler contracts ``a * b + c`` into hardware fused multiply-adds where
LLVM's instruction selector finds them (a product with a single use feeding an add),
so matching its float32 results bit for bit (``erf_inv``, hence ``random.normal``;
``random.uniform``'s scaling) needs the same single rounding. The cpu backend lowers
this primitive to LLVM's ``llvm.fma.f32`` intrinsic, which vectorises to ``vfmadd``.

The NumPy implementation (the reference, used eagerly and by the interpret backend) is
exact as well. The product of two float32 values is exact in float64, but adding
``c`` in float64 and then rounding to float32 rounds twice, which is wrong when the
float64 sum lands on a float32 halfway point it did not start on (``a * b = 1 + 2**-24``
with ``c = 2**-80`` must round up; rounding through float64 gives 1). So the float64
sum is taken with its exact error (Knuth's two-sum) and rounded *to odd* (an inexact
sum with an even last bit moves one ulp toward the exact value), after which one
rounding to float32 is correct: float64 carries more than ``24 + 2`` bits.

Only float32 is accepted: it is the one width where absjit needs XLA's rounding, and
float64 has no wider type to emulate it exactly in NumPy.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.avals import ShapedArray
from ..core.fusion import Elementwise, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, batching
from . import elementwise as ew
from ._util import binop_shape, same_dtypes
from .structural import broadcast_in_dim

__all__ = ["fma_p", "fma"]

fma_p = Primitive("fma")
def_fusion(fma_p, Elementwise(2))


def _fma_abstract(a, b, c):
    dt = same_dtypes("fma", a, b, c)
    if dt != dtypes.float32:
        raise TypeError(f"fma accepts float32 operands only, got {np.dtype(dt).name}")
    return [ShapedArray(binop_shape("fma", a, b, c), dt,
                        a.weak_type and b.weak_type and c.weak_type)]


def _fma_impl(a, b, c):
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        p = a * b  # exact: 24 + 24 significant bits fit in float64's 53
        s = p + c
        bv = s - p
        err = (p - (s - bv)) + (c - bv)  # s + err == p + c exactly (two-sum)
        bits = np.asarray(s).view(np.int64)
        inexact_even = (err != 0) & ((bits & 1) == 0) & np.isfinite(s)
        # Sign-magnitude bits: +1 moves away from zero, -1 toward it.
        step = np.where((err > 0) == (s > 0), 1, -1)
        s = np.where(inexact_even, bits + step, bits).view(np.float64)
        return [np.asarray(s.astype(np.float32))]


abstract_eval_rules[fma_p] = _fma_abstract
impl_rules[fma_p] = _fma_impl


def fma(a, b, c):
    """``a * b + c`` with a single rounding, elementwise, for float32 operands (rank-0
    operands broadcast, as in every ``lax`` elementwise op).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit.ops.fma import fma
    >>> a = np.float32(1 + 2 ** -12)
    >>> float(fma(a, a, np.float32(-1))) == 2 ** -11 + 2 ** -24
    True
    """
    return fma_p.bind(a, b, c)


def _fma_jvp(primals, tangents):
    a, b, c = primals
    ta, tb, tc = tangents
    ans = fma_p.bind(a, b, c)
    aval = get_aval(ans)
    parts = [ew.mul(ta, b) if ta is not None else None,
             ew.mul(a, tb) if tb is not None else None, tc]
    total = None
    for t in parts:
        if t is not None:
            total = t if total is None else ew.add(total, t)
    if total is None:
        return [ans], [ad.zeros_like_aval(aval)]
    if get_aval(total).shape != aval.shape:
        total = broadcast_in_dim(total, aval.shape, ())
    return [ans], [total]


ad.jvp_rules[fma_p] = _fma_jvp
batching.defbroadcasting(fma_p)
