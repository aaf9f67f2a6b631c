"""``dot_general``: batched tensor contraction, the one primitive behind ``dot``,
``matmul``, ``tensordot`` and ``einsum``.

``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``, each a
tuple of axis indices. The result's axes are, in order: the batch axes (in the order
given), the remaining ("free") axes of ``lhs`` in increasing order, then the free axes
of ``rhs`` in increasing order. Operands must share a dtype (``absjit.lax`` does no
promotion); integers accumulate in the operand dtype (wrapping on overflow) unless
``preferred_element_type`` asks for a wider result.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..core.avals import ShapedArray
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..interpreters import ad, batching
from ._util import same_dtypes

__all__ = ["dot_general_p", "dot_general", "dot", "batch_matmul", "Precision"]


class Precision:
    """Accepted for compatibility with JAX's ``precision=`` argument. NumPy and BLAS
    compute at full precision, so every value means the same thing here."""

    DEFAULT = "DEFAULT"
    HIGH = "HIGH"
    HIGHEST = "HIGHEST"


def _free_axes(ndim: int, contract, batch) -> list:
    used = set(contract) | set(batch)
    return [i for i in range(ndim) if i not in used]


_DN_CACHE: dict = {}


def _canonical_dn(dimension_numbers):
    """``dimension_numbers`` as nested tuples of ints (hashable, prints well)."""
    try:
        return _DN_CACHE[dimension_numbers]   # eager calls repeat the same few layouts
    except (KeyError, TypeError):
        pass
    dn = _canonicalize_dn(dimension_numbers)
    if len(_DN_CACHE) < 4096:
        try:
            _DN_CACHE[dimension_numbers] = dn
        except TypeError:   # lists: unhashable, not cached
            pass
    return dn


def _canonicalize_dn(dimension_numbers):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
                (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    except (TypeError, ValueError):
        raise TypeError("lax.dot_general: dimension_numbers must be "
                        "((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), "
                        f"got {dimension_numbers!r}") from None


# ---------------------------------------------------------------------------
# dot_general
# ---------------------------------------------------------------------------
dot_general_p = Primitive("dot_general",
                          param_order=("dimension_numbers", "precision",
                                       "preferred_element_type"))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """General tensor contraction (``absjit.lax.dot_general``).

    Parameters
    ----------
    lhs, rhs : array_like
        Operands of one dtype.
    dimension_numbers : tuple
        ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
    precision : optional
        Accepted for compatibility; ignored.
    preferred_element_type : dtype, optional
        Dtype of the result (operands are converted to it before accumulating).

    Returns
    -------
    Array of shape ``batch + lhs_free + rhs_free``.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> x = np.ones((2, 3), np.float32); y = np.ones((3, 4), np.float32)
    >>> lax.dot_general(x, y, (((1,), (0,)), ((), ()))).shape
    (2, 4)
    """
    dn = _canonical_dn(dimension_numbers)
    pet = None if preferred_element_type is None else \
        dtypes.canonicalize_dtype(np.dtype(preferred_element_type))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn,
                              precision=_canonical_precision(precision),
                              preferred_element_type=pet)


def _canonical_precision(precision):
    if precision is None or isinstance(precision, str):
        return precision
    if isinstance(precision, (tuple, list)):
        return tuple(_canonical_precision(p) for p in precision)
    return str(precision)


def _check_dn(lhs, rhs, dn):
    (lc, rc), (lb, rb) = dn
    where = (f"lhs shape {tuple(lhs.shape)} ({lhs.dtype.name}), rhs shape "
             f"{tuple(rhs.shape)} ({rhs.dtype.name}), dimension_numbers {dn}")
    for name, axes, ndim in (("lhs contracting", lc, lhs.ndim), ("rhs contracting", rc, rhs.ndim),
                             ("lhs batch", lb, lhs.ndim), ("rhs batch", rb, rhs.ndim)):
        if any(not 0 <= d < ndim for d in axes):
            raise TypeError(f"lax.dot_general: {name} dimensions {axes} out of range for "
                            f"an operand of rank {ndim}; {where}")
        if len(set(axes)) != len(axes):
            raise TypeError(f"lax.dot_general: repeated {name} dimensions {axes}; {where}")
    if len(lc) != len(rc):
        raise TypeError("lax.dot_general: lhs and rhs must name the same number of "
                        f"contracting dimensions; {where}")
    if len(lb) != len(rb):
        raise TypeError("lax.dot_general: lhs and rhs must name the same number of "
                        f"batch dimensions; {where}")
    if set(lc) & set(lb) or set(rc) & set(rb):
        raise TypeError("lax.dot_general: a dimension cannot be both batch and "
                        f"contracting; {where}")
    for kind, la, ra in (("contracting", lc, rc), ("batch", lb, rb)):
        for i, j in zip(la, ra):
            if lhs.shape[i] != rhs.shape[j]:
                raise TypeError(f"lax.dot_general: {kind} dimensions must have equal sizes, "
                                f"got lhs dimension {i} of size {lhs.shape[i]} and rhs "
                                f"dimension {j} of size {rhs.shape[j]}; {where}")


def _dot_general_shape(lhs_shape, rhs_shape, dn):
    (lc, rc), (lb, rb) = dn
    return (tuple(lhs_shape[i] for i in lb)
            + tuple(lhs_shape[i] for i in _free_axes(len(lhs_shape), lc, lb))
            + tuple(rhs_shape[i] for i in _free_axes(len(rhs_shape), rc, rb)))


def _dot_general_abstract(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    dt = same_dtypes("dot_general", lhs, rhs)
    if not (dt.kind in "biufc" or dtypes.is_bfloat16(dt)):
        raise TypeError(f"lax.dot_general does not accept dtype {dt.name}")
    _check_dn(lhs, rhs, dimension_numbers)
    shape = _dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)
    out_dt = dt if preferred_element_type is None else np.dtype(preferred_element_type)
    weak = lhs.weak_type and rhs.weak_type and preferred_element_type is None
    return [ShapedArray(shape, out_dt, weak)]


def _as_bmk(x, batch, free, contract):
    """Transpose ``x`` to (batch, free, contract) and flatten each group: (B, M, K)."""
    perm = tuple(batch) + tuple(free) + tuple(contract)
    if perm != tuple(range(x.ndim)):
        x = np.transpose(x, perm)
    nb, nf = len(batch), len(free)
    shape = x.shape
    return x.reshape(math.prod(shape[:nb]), math.prod(shape[nb:nb + nf]),
                     math.prod(shape[nb + nf:]))


def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    out_dt = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    if lhs.dtype != out_dt:
        lhs, rhs = lhs.astype(out_dt), rhs.astype(out_dt)
    if not lb and lhs.ndim <= 2 and rhs.ndim <= 2 and len(lc) == 1 and out_dt.kind in "fc":
        # A vector/matrix product, either operand transposed (as reverse-mode products
        # are): one BLAS call on transposed views, no copies or reshapes. np.matmul, not
        # np.dot: np.dot of an (n, 1) by (1, 1) product scales by the one element and
        # so gives 0 for inf * 0 (IEEE, XLA and the compiled kernels give nan).
        if lhs.ndim == 2 and lc == (0,):
            lhs = lhs.T
        if rhs.ndim == 2 and rc == (1,):
            rhs = rhs.T
        return [np.matmul(lhs, rhs)]
    out_shape = _dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)
    lf = _free_axes(lhs.ndim, lc, lb)
    rf = _free_axes(rhs.ndim, rc, rb)
    a = _as_bmk(lhs, lb, lf, lc)                # (B, M, K)
    b = _as_bmk(rhs, rb, rf, rc)                # (B, N, K)
    if out_dt == np.bool_:
        # NumPy's bool matmul is logical or-of-ands, as in JAX.
        out = np.matmul(a, np.swapaxes(b, 1, 2))
    elif out_dt.kind in "iu" and out_dt.itemsize < 8:
        # np.matmul on small ints has no BLAS path either way; einsum accumulates
        # in the operand dtype (wrapping), like XLA.
        out = np.einsum("bmk,bnk->bmn", a, b)
    else:
        out = np.matmul(a, np.swapaxes(b, 1, 2))
    return [np.asarray(out, dtype=out_dt).reshape(out_shape)]


abstract_eval_rules[dot_general_p] = _dot_general_abstract
impl_rules[dot_general_p] = _dot_general_impl


def _convert(x, dtype):
    from .elementwise import convert_element_type
    from ..core.trace import get_aval
    aval = get_aval(x)
    if aval.dtype == dtype:
        return x
    return convert_element_type(x, dtype, False)


def _transpose_axes(x, perm):
    if tuple(perm) == tuple(range(len(perm))):
        return x
    from . import structural
    return structural.transpose(x, tuple(int(p) for p in perm))


def _dot_transpose_operand(ct, other, operand_aval, dn, ct_free_other, precision):
    """Cotangent of one operand of ``dot_general(operand, other, dn)``.

    ``dn`` is written with the operand as lhs; ``ct_free_other`` lists the axes of
    ``ct`` that hold ``other``'s free axes. Contracting them against ``other``'s free
    axes, batched over the batch axes, leaves (batch, operand free, operand
    contracting-in-``other``-order); a transpose restores the operand's layout.
    """
    from ..core.trace import get_aval
    (xc, yc), (xb, yb) = dn
    x_ndim = len(operand_aval.shape)
    y_ndim = len(get_aval(other).shape)
    x_free = _free_axes(x_ndim, xc, xb)
    y_free = _free_axes(y_ndim, yc, yb)
    nb = len(xb)
    ct_dt = get_aval(ct).dtype
    other = _convert(other, ct_dt)
    dims = ((tuple(ct_free_other), tuple(y_free)), (tuple(range(nb)), tuple(yb)))
    res = dot_general(ct, other, dims, precision=precision)
    # ``other``'s dims left after contracting/batching are its contracting dims, sorted.
    res_as_x = list(xb) + x_free + [xc[yc.index(d)] for d in sorted(yc)]
    perm = [res_as_x.index(i) for i in range(x_ndim)]
    return _convert(_transpose_axes(res, perm), operand_aval.dtype)


def _dot_general_transpose(cts, lhs, rhs, *, dimension_numbers, precision,
                           preferred_element_type):
    from ..core.trace import get_aval
    (ct,) = cts
    if ct is None:
        return [None, None]
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_undef, rhs_undef = ad.is_undefined_primal(lhs), ad.is_undefined_primal(rhs)
    lhs_aval = lhs.aval if lhs_undef else get_aval(lhs)
    rhs_aval = rhs.aval if rhs_undef else get_aval(rhs)
    nb = len(lb)
    n_lf = len(_free_axes(len(lhs_aval.shape), lc, lb))
    n_rf = len(_free_axes(len(rhs_aval.shape), rc, rb))
    ct_lhs = ct_rhs = None
    if lhs_undef:
        ct_lhs = _dot_transpose_operand(ct, rhs, lhs_aval, dimension_numbers,
                                        range(nb + n_lf, nb + n_lf + n_rf), precision)
    if rhs_undef:
        swapped = ((rc, lc), (rb, lb))
        ct_rhs = _dot_transpose_operand(ct, lhs, rhs_aval, swapped,
                                        range(nb, nb + n_lf), precision)
    return [ct_lhs, ct_rhs]


def _dot_general_jvp(primals, tangents, *, dimension_numbers, precision,
                     preferred_element_type):
    lhs, rhs = primals
    t_lhs, t_rhs = tangents
    params = dict(dimension_numbers=dimension_numbers, precision=precision,
                  preferred_element_type=preferred_element_type)
    out = dot_general_p.bind(lhs, rhs, **params)
    t_out = None
    if t_lhs is not None:
        t_out = dot_general_p.bind(t_lhs, rhs, **params)
    if t_rhs is not None:
        t = dot_general_p.bind(lhs, t_rhs, **params)
        t_out = t if t_out is None else ad.add_tangents(t_out, t)
    return [out], [t_out]


def _shift(axes, by=1):
    return tuple(int(a) + by for a in axes)


def _dot_general_batch(vals, dims, *, dimension_numbers, precision, preferred_element_type):
    from ..core.trace import get_aval
    lhs, rhs = vals
    ld, rd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    params = dict(precision=precision, preferred_element_type=preferred_element_type)
    if ld is not None and rd is not None:
        # Both batched: the vmapped axis becomes a leading batch dimension.
        lhs, rhs = batching.moveaxis(lhs, ld, 0), batching.moveaxis(rhs, rd, 0)
        dn = ((_shift(lc), _shift(rc)), ((0,) + _shift(lb), (0,) + _shift(rb)))
        return [dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params)], [0]
    if ld is not None:
        # Only lhs batched: the axis is a free lhs axis, first among them.
        lhs = batching.moveaxis(lhs, ld, 0)
        dn = ((_shift(lc), rc), (_shift(lb), rb))
        return [dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params)], [len(lb)]
    rhs = batching.moveaxis(rhs, rd, 0)
    dn = ((lc, _shift(rc)), (lb, _shift(rb)))
    n_lf = len(_free_axes(len(get_aval(lhs).shape), lc, lb))
    return [dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params)], [len(lb) + n_lf]


ad.jvp_rules[dot_general_p] = _dot_general_jvp
ad.transpose_rules[dot_general_p] = _dot_general_transpose
batching.batch_rules[dot_general_p] = _dot_general_batch


# ---------------------------------------------------------------------------
# Conveniences
# ---------------------------------------------------------------------------
def _ndim(x):
    from ..core.trace import get_aval
    return len(get_aval(x).shape)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product (``absjit.lax.dot``): rank 1 or 2 operands, contracting the
    last axis of ``lhs`` with the first of ``rhs``.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.dot(np.ones(3, np.float32), np.ones(3, np.float32))
    Array(3., dtype=float32)
    """
    ln, rn = _ndim(lhs), _ndim(rhs)
    if ln not in (1, 2) or rn not in (1, 2):
        from ..core.trace import get_aval
        raise TypeError("lax.dot requires operands of rank 1 or 2, got shapes "
                        f"{tuple(get_aval(lhs).shape)} and {tuple(get_aval(rhs).shape)}")
    return dot_general(lhs, rhs, (((ln - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product over all leading axes: ``(..., m, k) @ (..., k, n)``.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.batch_matmul(np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)).shape
    (2, 3, 5)
    """
    ln, rn = _ndim(lhs), _ndim(rhs)
    if ln < 2 or ln != rn:
        from ..core.trace import get_aval
        raise ValueError("lax.batch_matmul requires operands of equal rank >= 2, got shapes "
                         f"{tuple(get_aval(lhs).shape)} and {tuple(get_aval(rhs).shape)}")
    batch = tuple(range(ln - 2))
    return dot_general(lhs, rhs, (((ln - 1,), (rn - 2,)), (batch, batch)), precision)
