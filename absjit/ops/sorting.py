"""``sort``: sort one or more same-shaped operands along one axis, ordered by the first
``num_keys`` of them (lexicographically), the others carried along.

Order: NaNs sort to the end (as in NumPy); complex numbers order by real part, then
imaginary part. ``is_stable`` is accepted; the NumPy implementation is always stable.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.dim_assumptions import assume_at_least
from ..core.dims import is_dim
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..interpreters import ad, batching

__all__ = ["sort_p", "sort", "sort_key_val", "top_k_p", "top_k", "total_order_key"]

sort_p = Primitive("sort", multiple_results=True,
                   param_order=("dimension", "is_stable", "num_keys"))


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort ``operand`` (an array, or a sequence of same-shaped arrays) along
    ``dimension`` (``absjit.lax.sort``).

    With a sequence, the first ``num_keys`` operands are the keys (lexicographic) and
    every operand is permuted the same way; the result is a tuple.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.sort(np.array([3., 1., 2.], np.float32))
    Array([1., 2., 3.], dtype=float32)
    """
    from ..core.trace import get_aval
    single = not isinstance(operand, (tuple, list))
    ops = (operand,) if single else tuple(operand)
    if not ops:
        raise TypeError("lax.sort requires at least one operand")
    ndim = len(get_aval(ops[0]).shape)
    dimension = int(dimension)
    if not -ndim <= dimension < max(ndim, 1) or ndim == 0:
        raise ValueError(f"lax.sort: dimension {dimension} is out of range for operands of "
                         f"shape {tuple(get_aval(ops[0]).shape)}")
    outs = sort_p.bind(*ops, dimension=dimension % ndim, is_stable=bool(is_stable),
                       num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """Sort ``keys`` along ``dimension`` and permute ``values`` the same way.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> k, v = lax.sort_key_val(np.array([2, 1], np.int32), np.array([10, 20], np.int32))
    >>> v
    Array([20, 10], dtype=int32)
    """
    return sort((keys, values), dimension, is_stable, 1)


def _sort_abstract(*avals, dimension, is_stable, num_keys):
    shape = avals[0].shape
    for a in avals[1:]:
        if a.shape != shape:
            raise TypeError("lax.sort: all operands must have the same shape, got "
                            f"{', '.join(str(tuple(b.shape)) for b in avals)}")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"lax.sort: dimension {dimension} is out of range for operands "
                         f"of shape {tuple(shape)}")
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"lax.sort: num_keys={num_keys} must be between 1 and the number "
                         f"of operands ({len(avals)})")
    for a in avals[:num_keys]:
        if a.dtype.kind not in "biufc" and a.dtype.name != "bfloat16":
            raise TypeError(f"lax.sort: cannot sort keys of dtype {a.dtype.name}")
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals]


def _sort_key(k):
    # np.lexsort/argsort place NaN last already; bfloat16 has no sort kernel, so widen.
    if k.dtype.kind not in "biufc":
        return k.astype(np.float32)
    return k


def sort_permutation(keys, axis: int) -> np.ndarray:
    """Indices that stably sort ``keys`` (lexicographically, first key major) along
    ``axis``: the NumPy reference shared by ``sort`` and its tests."""
    if len(keys) == 1:
        return np.argsort(_sort_key(keys[0]), axis=axis, kind="stable")
    moved = [np.moveaxis(_sort_key(k), axis, -1) for k in keys]
    lead = moved[0].shape[:-1]
    n = moved[0].shape[-1]
    flat = [m.reshape(-1, n) for m in moved]
    perm = np.empty((flat[0].shape[0], n), dtype=np.intp)
    for row in range(flat[0].shape[0]):
        # lexsort sorts by its last key first.
        perm[row] = np.lexsort([f[row] for f in reversed(flat)])
    return np.moveaxis(perm.reshape(lead + (n,)), -1, axis)


def _sort_impl(*operands, dimension, is_stable, num_keys):
    if operands[0].size == 0:
        return list(operands)
    perm = sort_permutation(operands[:num_keys], dimension)
    return [np.take_along_axis(op, perm, axis=dimension) for op in operands]


abstract_eval_rules[sort_p] = _sort_abstract
impl_rules[sort_p] = _sort_impl


def _iota_like(aval, dimension):
    """int32 indices along ``dimension``, broadcast to ``aval``'s shape."""
    from . import structural
    return structural.iota(np.int32, tuple(aval.shape), dimension)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    # Tangents follow the primal permutation. Sorting the permutation together with an
    # iota gives its inverse; sorting a tangent by that inverse applies the permutation.
    # The tangent path is then ``sort`` with a constant key, which is linear in the
    # carried operand (transpose: sort by the permutation itself).
    from ..core.trace import get_aval
    aval = get_aval(primals[0])
    iota = _iota_like(aval, dimension)
    outs = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)
    primals_out, perm = outs[:-1], outs[-1]
    inv = sort_p.bind(perm, iota, dimension=dimension, is_stable=True, num_keys=1)[1]
    tangents_out = []
    for t in tangents:
        if t is None:
            tangents_out.append(None)
        else:
            tangents_out.append(sort_p.bind(inv, t, dimension=dimension, is_stable=True,
                                            num_keys=1)[1])
    return list(primals_out), tangents_out


def _sort_transpose(cts, *args, dimension, is_stable, num_keys):
    # Linear only in carried (non-key) operands: out_j = op_j[perm], so
    # ct_op_j = ct_out_j permuted by the inverse: sort (perm, ct) by perm.
    if any(ad.is_undefined_primal(a) for a in args[:num_keys]):
        raise TypeError("sort is not linear in its keys; cannot transpose it with respect "
                        "to a key operand")
    from ..core.trace import get_aval
    keys = args[:num_keys]
    perm = None
    result = [None] * len(args)
    for j, (a, ct) in enumerate(zip(args, cts)):
        if j < num_keys or not ad.is_undefined_primal(a) or ct is None:
            continue
        if perm is None:
            iota = _iota_like(get_aval(keys[0]), dimension)
            perm = sort_p.bind(*keys, iota, dimension=dimension, is_stable=is_stable,
                               num_keys=num_keys)[-1]
        result[j] = sort_p.bind(perm, ct, dimension=dimension, is_stable=True,
                                num_keys=1)[1]
    return result


def _sort_batch(vals, dims, *, dimension, is_stable, num_keys):
    from ..core.trace import get_aval
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    outs = sort_p.bind(*moved, dimension=dimension + 1, is_stable=is_stable,
                       num_keys=num_keys)
    return list(outs), [0] * len(outs)


ad.jvp_rules[sort_p] = _sort_jvp
ad.transpose_rules[sort_p] = _sort_transpose
batching.batch_rules[sort_p] = _sort_batch


top_k_p = Primitive("top_k", multiple_results=True, param_order=("k",))


def top_k(operand, k: int):
    """The ``k`` largest entries along the last axis, in descending order, and their
    indices (``absjit.lax.top_k``).

    The order is JAX's: floats by IEEE total order (a NaN with the sign bit clear
    above ``inf``, one with it set below ``-inf``, ``0.0`` above ``-0.0``); equal
    entries keep the lower index first.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> vals, idx = lax.top_k(np.array([1., 3., 2.], np.float32), 2)
    >>> idx
    Array([1, 2], dtype=int32)
    """
    from ..core.trace import get_aval
    aval = get_aval(operand)
    k = int(k)
    if not aval.shape:
        raise ValueError("lax.top_k requires an operand of rank >= 1")
    if aval.dtype.kind == "c":
        raise TypeError("lax.top_k does not accept complex operands")
    n = aval.shape[-1]
    if k < 0:
        raise ValueError(f"lax.top_k: k={k} must be nonnegative")
    if is_dim(n):  # ranked: checked when the compiled program is entered
        assume_at_least(n, k, f"lax.top_k with k={k} needs at least {k} elements")
    elif k > n:
        raise ValueError(f"lax.top_k: k={k} must be no larger than the last dimension "
                         f"({n}) of an operand of shape {tuple(aval.shape)}")
    vals, idx = top_k_p.bind(operand, k=k)
    return vals, idx


def _top_k_abstract(aval, *, k):
    if not aval.shape:
        raise ValueError("lax.top_k requires an operand of rank >= 1")
    if aval.dtype.kind not in "biuf" and aval.dtype.name != "bfloat16":
        raise TypeError(f"lax.top_k: cannot order entries of dtype {aval.dtype.name}")
    shape = tuple(aval.shape[:-1]) + (k,)
    return [ShapedArray(shape, aval.dtype, aval.weak_type),
            ShapedArray(shape, np.dtype(np.int32))]


def total_order_key(x: np.ndarray) -> np.ndarray:
    """Signed integers ordered as ``x`` is by JAX's ``top_k`` (IEEE total order for
    floats: ``-nan < -inf < … < -0.0 < 0.0 < … < inf < nan``)."""
    if x.dtype.kind in "biu":
        return x.astype(np.int64) if x.dtype.kind != "u" else x
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:  # float16, bfloat16: exact widening
        x = x.astype(np.float32)
    bits = x.view(np.int32 if x.dtype.itemsize == 4 else np.int64)
    return np.where(bits < 0, bits ^ np.iinfo(bits.dtype).max, bits)


def _top_k_impl(x, *, k):
    key = total_order_key(np.asarray(x))
    # Descending and stable: sort the bitwise complement (order-reversing, no overflow).
    perm = np.argsort(~key, axis=-1, kind="stable")[..., :k]
    return [np.take_along_axis(x, perm, axis=-1), perm.astype(np.int32)]


def _top_k_jvp(primals, tangents, *, k):
    from . import indexing
    (x,), (t,) = primals, tangents
    vals, idx = top_k_p.bind(x, k=k)
    if t is None:
        return [vals, idx], [None, None]
    return [vals, idx], [_take_last(t, idx, indexing), None]


def _take_last(x, idx, indexing):
    """``x`` read along its last axis at ``idx`` (same leading shape): a gather with
    iota indices for the leading axes."""
    from ..core.trace import get_aval
    from . import structural
    shape = tuple(get_aval(idx).shape)
    lead = [structural.iota(np.int32, shape, d) for d in range(len(shape) - 1)]
    return indexing.gather(x, lead + [idx], tuple(range(len(shape))))


def _top_k_batch(vals, dims, *, k):
    (x,), (d,) = vals, dims
    from ..core.trace import get_aval
    x = batching.bdim_at_front(x, d, get_aval(x).shape[d])
    return list(top_k_p.bind(x, k=k)), [0, 0]


abstract_eval_rules[top_k_p] = _top_k_abstract
impl_rules[top_k_p] = _top_k_impl
ad.jvp_rules[top_k_p] = _top_k_jvp
batching.batch_rules[top_k_p] = _top_k_batch
