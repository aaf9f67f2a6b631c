"""``threefry2x32``: the Threefry-2x32 block cipher (20 rounds), the hash behind
``absjit.random`` (JAX's default PRNG).

One primitive instead of ~130 ``uint32`` operations: a random sampler inside a
``while_loop`` body (``gamma``'s rejection loop hashes keys four times per trip) then
compiles as a few calls to one shared helper rather than hundreds of scalar
statements, and the cpu helper rotates by literal amounts, which LLVM turns into
packed rotate instructions in a vectorised loop.

It is elementwise (rank-0 operands broadcast) over ``uint32`` operands ``k0, k1``
(the key words) and ``x0, x1`` (the counter words). The cipher has two output words;
the ``output`` parameter picks ``"x0"``, ``"x1"`` or their ``"xor"`` (the 32 random bits
JAX draws per element with ``jax_threefry_partitionable``), so the common case hashes
once per element. Results are integers: zero tangents under ``grad``.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.fusion import COSTLY, Elementwise, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..interpreters import ad, batching
from ._util import binop_shape

__all__ = ["threefry2x32_p", "threefry2x32", "ROTATIONS", "KEY_PARITY", "OUTPUTS"]

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
KEY_PARITY = 0x1BD11BDA  # the Threefry key-schedule constant
OUTPUTS = ("x0", "x1", "xor")
_U32 = np.dtype(np.uint32)

threefry2x32_p = Primitive("threefry2x32")
def_fusion(threefry2x32_p, Elementwise(COSTLY * 8))


def _threefry_abstract(k0, k1, x0, x1, *, output):
    if output not in OUTPUTS:
        raise ValueError(f"threefry2x32: output must be one of {OUTPUTS}, got {output!r}")
    if any(a.dtype != _U32 for a in (k0, k1, x0, x1)):
        raise TypeError(f"threefry2x32 requires uint32 arguments, got "
                        f"{[a.dtype.name for a in (k0, k1, x0, x1)]}")
    return [ShapedArray(binop_shape("threefry2x32", k0, k1, x0, x1), _U32, False)]


def _threefry_impl(k0, k1, x0, x1, *, output):
    """The reference: the cipher in NumPy ``uint32`` arithmetic (wrapping)."""
    k0, k1, x0, x1 = (np.asarray(v, _U32) for v in (k0, k1, x0, x1))
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(KEY_PARITY))
    with np.errstate(over="ignore"):
        x0 = x0 + ks[0]
        x1 = x1 + ks[1]
        for i in range(5):
            for r in ROTATIONS[i % 2]:
                x0 = x0 + x1
                x1 = ((x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))) ^ x0
            x0 = x0 + ks[(i + 1) % 3]
            x1 = x1 + ks[(i + 2) % 3] + np.uint32(i + 1)
    out = {"x0": x0, "x1": x1, "xor": x0 ^ x1}[output]
    return [np.asarray(out, _U32)]


abstract_eval_rules[threefry2x32_p] = _threefry_abstract
impl_rules[threefry2x32_p] = _threefry_impl
ad.defjvp_zero(threefry2x32_p)
batching.defbroadcasting(threefry2x32_p)


def threefry2x32(k0, k1, x0, x1, output="xor"):
    """One word of the Threefry-2x32 hash of counters ``(x0, x1)`` under key
    ``(k0, k1)`` (all ``uint32``): ``output`` is ``"x0"``, ``"x1"`` or ``"xor"``.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit.ops.threefry import threefry2x32
    >>> z = np.zeros(1, np.uint32)
    >>> hex(int(threefry2x32(np.uint32(0), np.uint32(0), z, z, output="x0")[0]))
    '0x6b200159'
    """
    return threefry2x32_p.bind(k0, k1, x0, x1, output=output)
