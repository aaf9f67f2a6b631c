"""Reduction and cumulative primitives.

``reduce_sum``, ``reduce_max``, ``reduce_min``, ``reduce_prod``, ``reduce_and``,
``reduce_or`` take ``axes``, a sorted tuple of distinct axes, and keep the operand's
dtype and weak type. Reducing a 0-size axis gives the operation's identity (0 for sum,
1 for prod, -inf or the integer minimum for max, True for and, ...), as in JAX.

``argmax``/``argmin`` take ``axes=(axis,)`` and ``index_dtype``; like NumPy the first
extremum wins and the first NaN counts as the extremum. ``cumsum``, ``cumprod``,
``cummax``, ``cummin`` take ``axis`` and ``reverse``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.avals import ShapedArray
from ..core.dims import Dim
from ..core.fusion import Monoid, Reduction, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, batching
from . import elementwise as ew
from ._util import check_dtype_kind
from .structural import broadcast_in_dim

__all__ = [
    "reduce_sum_p", "reduce_sum", "reduce_max_p", "reduce_max", "reduce_min_p",
    "reduce_min", "reduce_prod_p", "reduce_prod", "reduce_and_p", "reduce_and",
    "reduce_or_p", "reduce_or", "argmax_p", "argmax", "argmin_p", "argmin",
    "cumsum_p", "cumsum", "cumprod_p", "cumprod", "cummax_p", "cummax", "cummin_p",
    "cummin", "reduction_identity",
]


def _check_axes(name: str, aval, axes) -> tuple:
    axes = tuple(axes)
    if list(axes) != sorted(set(axes)) or any(not 0 <= a < aval.ndim for a in axes):
        raise ValueError(f"lax.{name}: axes must be sorted, distinct and within the rank "
                         f"of the operand (shape {aval.shape}), got {axes}")
    return axes


def _reduced_shape(shape, axes) -> tuple:
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduction_identity(name: str, dtype) -> np.ndarray:
    """The value a reduction of nothing gives (JAX's identities)."""
    dt = np.dtype(dtype)
    if name in ("sum", "or"):
        return np.zeros((), dt)
    if name == "prod":
        return np.ones((), dt)
    if name == "and":
        return np.array(True) if dt == dtypes.bool_ else np.array(-1).astype(dt)
    low = name == "max"
    if dt == dtypes.bool_:
        return np.array(not low)
    if dtypes.is_integer(dt):
        info = np.iinfo(dt)
        return np.array(info.min if low else info.max, dt)
    return np.array(-np.inf if low else np.inf).astype(dt)


def _make_reduce(name: str, kind: str, np_fn):
    prim = Primitive(f"reduce_{name}")

    def abstract(x, *, axes):
        check_dtype_kind(f"reduce_{name}", x.dtype, kind)
        axes = _check_axes(f"reduce_{name}", x, axes)
        return [ShapedArray(_reduced_shape(x.shape, axes), x.dtype, x.weak_type)]

    def impl(x, *, axes):
        out_shape = _reduced_shape(x.shape, axes)
        if any(x.shape[a] == 0 for a in axes):
            return [np.full(out_shape, reduction_identity(name, x.dtype), x.dtype)]
        with np.errstate(all="ignore"):
            return [np.asarray(np_fn(x, axes)).astype(x.dtype, copy=False)]

    abstract.__name__ = f"reduce_{name}_abstract_eval"
    impl.__name__ = f"reduce_{name}_impl"
    abstract_eval_rules[prim] = abstract
    impl_rules[prim] = impl
    def_fusion(prim, Reduction(_monoid(name)))
    return prim


_COMBINE = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "and": "and",
            "or": "or"}


def _monoid(name):
    def rule(in_aval, out_aval, *, axes):
        dt = np.dtype(in_aval.dtype)
        # float32 sums accumulate in float64, as the impl rule does.
        acc = np.dtype(np.float64) if name == "sum" and dt == np.float32 else dt
        return Monoid(_COMBINE[name], reduction_identity(name, dt)[()], acc, dt)
    rule.__name__ = f"reduce_{name}_monoid"
    return rule


def _axes_param(name, x, axes) -> tuple:
    nd = get_aval(x).ndim
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    for a in axes:
        if not -nd <= int(a) < nd:
            raise ValueError(f"lax.{name}: axis {int(a)} is out of bounds for an operand of "
                             f"shape {get_aval(x).shape}")
    return _check_axes(name, get_aval(x), sorted({int(a) % nd for a in axes}))


def _reduce_batch(prim):
    def rule(vals, dims, *, axes, **params):
        (x,), (d,) = vals, dims
        x = batching.moveaxis(x, d, 0)
        return [prim.bind(x, axes=tuple(a + 1 for a in axes), **params)], [0]
    rule.__name__ = f"{prim.name}_batch"
    batching.batch_rules[prim] = rule


def _expand(y, shape, axes):
    """Broadcast a reduced value back to the operand's ``shape``."""
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return broadcast_in_dim(y, shape, kept)


# ---------------------------------------------------------------------------
# reduce_sum: linear; its transpose broadcasts the cotangent back
# ---------------------------------------------------------------------------
def _sum_impl(x, axes):
    # Half- and single-precision sums accumulate in float64 (complex128), as the cpu
    # backend does: NumPy's pairwise summation only applies along the contiguous axis,
    # so a plain float32 column sum of 10^4 rows drifts by ~1e-5 relative.
    if x.dtype.kind == "f" and x.dtype.itemsize < 8 or dtypes.is_bfloat16(x.dtype):
        return np.sum(x, axis=axes, dtype=np.float64).astype(x.dtype)
    if x.dtype == np.complex64:
        return np.sum(x, axis=axes, dtype=np.complex128).astype(x.dtype)
    return np.sum(x, axis=axes, dtype=x.dtype)


reduce_sum_p = _make_reduce("sum", "number", _sum_impl)


def reduce_sum(x, axes):
    """Sum over ``axes`` (``lax.reduce_sum``); the dtype is kept.

    Examples
    --------
    >>> lax.reduce_sum(jnp.ones((2, 3)), (0,))  # doctest: +SKIP
    Array([2., 2., 2.], dtype=float32)
    """
    return reduce_sum_p.bind(x, axes=_axes_param("reduce_sum", x, axes))


ad.deflinear(reduce_sum_p, lambda ct, x, *, axes: [_expand(ct, x.aval.shape, axes)])
_reduce_batch(reduce_sum_p)

# ---------------------------------------------------------------------------
# reduce_max / reduce_min: the tangent is shared equally among tied extrema
# ---------------------------------------------------------------------------
reduce_max_p = _make_reduce("max", "any", lambda x, axes: np.max(x, axis=axes))
reduce_min_p = _make_reduce("min", "any", lambda x, axes: np.min(x, axis=axes))


def reduce_max(x, axes):
    """Maximum over ``axes``; NaN propagates; a 0-size reduction gives -inf / int min."""
    return reduce_max_p.bind(x, axes=_axes_param("reduce_max", x, axes))


def reduce_min(x, axes):
    """Minimum over ``axes``; NaN propagates; a 0-size reduction gives inf / int max."""
    return reduce_min_p.bind(x, axes=_axes_param("reduce_min", x, axes))


def _chooser_jvp(prim):
    def rule(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        aval = get_aval(x)
        if not dtypes.is_inexact(aval.dtype):
            return [ans], [ad.zeros_like_aval(get_aval(ans))]
        hit = ew.eq(x, _expand(ans, aval.shape, axes))
        one = ew.convert_element_type(hit, aval.dtype)
        count = reduce_sum_p.bind(one, axes=axes)
        return [ans], [ew.div(reduce_sum_p.bind(ew.mul(t, one), axes=axes), count)]
    rule.__name__ = f"{prim.name}_jvp"
    ad.jvp_rules[prim] = rule


for _p in (reduce_max_p, reduce_min_p):
    _chooser_jvp(_p)
    _reduce_batch(_p)

# ---------------------------------------------------------------------------
# reduce_prod
# ---------------------------------------------------------------------------
reduce_prod_p = _make_reduce("prod", "number", lambda x, axes: np.prod(x, axis=axes,
                                                                      dtype=x.dtype))


def reduce_prod(x, axes):
    """Product over ``axes``; the dtype is kept (integers wrap around)."""
    return reduce_prod_p.bind(x, axes=_axes_param("reduce_prod", x, axes))


def _pair_shape(aval, axis):
    """``[..., i, j, ...]``: the operand's shape with a copy of ``axis`` right after it."""
    return aval.shape[:axis + 1] + (aval.shape[axis],) + aval.shape[axis + 1:]


def _along(x, shape, axis, which):
    """Broadcast ``x`` so its ``axis`` runs along i (``which=0``) or j (``which=1``)."""
    nd = len(shape)
    skip = axis + 1 if which == 0 else axis
    return broadcast_in_dim(x, shape, tuple(d for d in range(nd) if d != skip))


def _pair_mask(mat, shape, axis):
    return broadcast_in_dim(Array._new(mat), shape, (axis, axis + 1))


def _band(n, shape, axis, lo, hi):
    """``[..., i, j, ...]``: whether ``lo <= j - i <= hi`` (``None``: unbounded), an
    ``n x n`` mask: from NumPy for a static ``n``, else from iotas (ranked)."""
    if type(n) is not Dim:
        ones = np.ones((n, n), bool)
        mat = ones if lo is None else np.triu(ones, lo)
        mat = mat if hi is None else mat & np.tril(ones, hi)
        return _pair_mask(mat, shape, axis)
    from .structural import iota
    i, j = iota(np.int32, shape, axis), iota(np.int32, shape, axis + 1)
    diff = ew.sub(j, i)
    mask = None
    for bound, compare in ((lo, ew.ge), (hi, ew.le)):
        if bound is not None:
            m = compare(diff, broadcast_in_dim(ew._const(bound, diff), shape, ()))
            mask = m if mask is None else ew.bitwise_and(mask, m)
    return mask


def _prod_others(x, axis):
    """For each element, the product of the *other* elements along ``axis``. Written
    without division so that zeros are exact; costs ``n`` times the operand."""
    aval = get_aval(x)
    shape = _pair_shape(aval, axis)
    eye = _band(aval.shape[axis], shape, axis, 0, 0)
    ones = broadcast_in_dim(ew._const(1, x), shape, ())
    return reduce_prod_p.bind(ew.select(eye, ones, _along(x, shape, axis, 1)),
                              axes=(axis + 1,))


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    if not dtypes.is_inexact(get_aval(x).dtype):
        return [ans], [ad.zeros_like_aval(get_aval(ans))]
    # Reduce one axis at a time (last first, so earlier axis numbers stay valid).
    y, ty = x, t
    for a in sorted(axes, reverse=True):
        others = _prod_others(y, a)
        y, ty = reduce_prod_p.bind(y, axes=(a,)), reduce_sum_p.bind(ew.mul(ty, others),
                                                                     axes=(a,))
    return [ans], [ty]


ad.jvp_rules[reduce_prod_p] = _reduce_prod_jvp
_reduce_batch(reduce_prod_p)

# ---------------------------------------------------------------------------
# reduce_and / reduce_or (bool: all/any; integers: bitwise)
# ---------------------------------------------------------------------------
reduce_and_p = _make_reduce(
    "and", "int_or_bool", lambda x, axes: np.bitwise_and.reduce(x, axis=axes))
reduce_or_p = _make_reduce(
    "or", "int_or_bool", lambda x, axes: np.bitwise_or.reduce(x, axis=axes))


def reduce_and(x, axes):
    """Logical (bool) or bitwise (integer) AND over ``axes``; empty gives True / -1."""
    return reduce_and_p.bind(x, axes=_axes_param("reduce_and", x, axes))


def reduce_or(x, axes):
    """Logical (bool) or bitwise (integer) OR over ``axes``; empty gives False / 0."""
    return reduce_or_p.bind(x, axes=_axes_param("reduce_or", x, axes))


for _p in (reduce_and_p, reduce_or_p):
    ad.defjvp_zero(_p)
    _reduce_batch(_p)

# ---------------------------------------------------------------------------
# argmax / argmin
# ---------------------------------------------------------------------------


def _make_arg(name: str, np_fn):
    prim = Primitive(name)

    def abstract(x, *, axes, index_dtype):
        if len(axes) != 1:
            raise ValueError(f"lax.{name}: expected exactly one axis, got {axes}")
        _check_axes(name, x, axes)
        if x.shape[axes[0]] == 0:
            raise ValueError(f"lax.{name}: attempt to get {name} of an empty sequence "
                             f"(axis {axes[0]} of shape {x.shape} has size 0)")
        if not dtypes.is_integer(index_dtype):
            raise TypeError(f"lax.{name}: index_dtype must be an integer dtype, got "
                            f"{np.dtype(index_dtype).name}")
        return [ShapedArray(_reduced_shape(x.shape, axes), index_dtype, False)]

    def impl(x, *, axes, index_dtype):
        return [np_fn(x, axis=axes[0]).astype(index_dtype)]

    abstract_eval_rules[prim] = abstract
    impl_rules[prim] = impl
    ad.defjvp_zero(prim)

    def batch(vals, dims, *, axes, index_dtype):
        x = batching.moveaxis(vals[0], dims[0], 0)
        return [prim.bind(x, axes=(axes[0] + 1,), index_dtype=index_dtype)], [0]
    batching.batch_rules[prim] = batch

    def monoid(in_aval, out_aval, *, axes, index_dtype):
        dt = np.dtype(in_aval.dtype)
        return Monoid(name[3:], np.zeros((), dt)[()], dt, np.dtype(index_dtype), arg=name[3:])
    def_fusion(prim, Reduction(monoid))
    return prim


argmax_p = _make_arg("argmax", np.argmax)
argmin_p = _make_arg("argmin", np.argmin)


def _arg_params(name, x, axis, index_dtype):
    (ax,) = _axes_param(name, x, (axis,))
    idt = dtypes.user_dtype(index_dtype)
    return dict(axes=(ax,), index_dtype=idt)


def argmax(x, axis: int, index_dtype=np.int32):
    """Index of the first maximum along ``axis`` (the first NaN, if any).

    Examples
    --------
    >>> lax.argmax(jnp.array([1., 3., 3.]), 0, jnp.int32)  # doctest: +SKIP
    Array(1, dtype=int32)
    """
    return argmax_p.bind(x, **_arg_params("argmax", x, axis, index_dtype))


def argmin(x, axis: int, index_dtype=np.int32):
    """Index of the first minimum along ``axis`` (the first NaN, if any)."""
    return argmin_p.bind(x, **_arg_params("argmin", x, axis, index_dtype))


# ---------------------------------------------------------------------------
# Cumulative reductions
# ---------------------------------------------------------------------------


def _make_cum(name: str, kind: str, np_fn):
    prim = Primitive(name)

    def abstract(x, *, axis, reverse):
        check_dtype_kind(name, x.dtype, kind)
        if not 0 <= axis < max(x.ndim, 1) or x.ndim == 0:
            raise ValueError(f"lax.{name}: axis {axis} is out of bounds for an operand of "
                             f"shape {x.shape}")
        return [ShapedArray(x.shape, x.dtype, x.weak_type)]

    def impl(x, *, axis, reverse):
        if reverse:
            x = np.flip(x, axis)
        with np.errstate(all="ignore"):
            out = np.asarray(np_fn(x, axis)).astype(x.dtype, copy=False)
        return [np.flip(out, axis) if reverse else out]

    abstract_eval_rules[prim] = abstract
    impl_rules[prim] = impl

    def batch(vals, dims, *, axis, reverse):
        x = batching.moveaxis(vals[0], dims[0], 0)
        return [prim.bind(x, axis=axis + 1, reverse=reverse)], [0]
    batching.batch_rules[prim] = batch
    return prim


cumsum_p = _make_cum("cumsum", "number", lambda x, a: np.cumsum(x, axis=a, dtype=x.dtype))
cumprod_p = _make_cum("cumprod", "number", lambda x, a: np.cumprod(x, axis=a, dtype=x.dtype))
cummax_p = _make_cum("cummax", "any", lambda x, a: np.maximum.accumulate(x, axis=a))
cummin_p = _make_cum("cummin", "any", lambda x, a: np.minimum.accumulate(x, axis=a))


def _cum_params(name, x, axis, reverse):
    nd = get_aval(x).ndim
    axis = int(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"lax.{name}: axis {axis} is out of bounds for an operand of "
                         f"shape {get_aval(x).shape}")
    return dict(axis=axis % nd, reverse=bool(reverse))


def cumsum(x, axis: int = 0, reverse: bool = False):
    """Running sum along ``axis`` (from the end when ``reverse``).

    Examples
    --------
    >>> lax.cumsum(jnp.array([1, 2, 3]))  # doctest: +SKIP
    Array([1, 3, 6], dtype=int32)
    """
    return cumsum_p.bind(x, **_cum_params("cumsum", x, axis, reverse))


def cumprod(x, axis: int = 0, reverse: bool = False):
    """Running product along ``axis``."""
    return cumprod_p.bind(x, **_cum_params("cumprod", x, axis, reverse))


def cummax(x, axis: int = 0, reverse: bool = False):
    """Running maximum along ``axis`` (NaN propagates)."""
    return cummax_p.bind(x, **_cum_params("cummax", x, axis, reverse))


def cummin(x, axis: int = 0, reverse: bool = False):
    """Running minimum along ``axis`` (NaN propagates)."""
    return cummin_p.bind(x, **_cum_params("cummin", x, axis, reverse))


# cumsum is linear; its transpose runs the other way.
ad.deflinear(cumsum_p, lambda ct, x, *, axis, reverse:
             [cumsum_p.bind(ct, axis=axis, reverse=not reverse)])


def _cum_matrix_jvp(prim):
    """JVP of a running product/max/min along one axis through the pairwise matrix
    ``d out[i] / d x[j]`` (quadratic in the axis length; exact with zeros and ties)."""
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        aval = get_aval(x)
        if not dtypes.is_inexact(aval.dtype):
            return [ans], [ad.zeros_like_aval(get_aval(ans))]
        n = aval.shape[axis]
        shape = _pair_shape(aval, axis)
        # window[i, j]: x[j] takes part in out[i]; after[i, j]: i comes strictly after j.
        # (triu(k) is j - i >= k; tril(k) is j - i <= k)
        window = _band(n, shape, axis, 0, None) if reverse else _band(n, shape, axis, None, 0)
        after = _band(n, shape, axis, 1, None) if reverse else _band(n, shape, axis, None, -1)
        before = _band(n, shape, axis, None, -1) if reverse else _band(n, shape, axis, 1, None)
        tj = _along(t, shape, axis, 1)
        zeros = broadcast_in_dim(ew._const(0, x), shape, ())
        if prim is cumprod_p:
            one = broadcast_in_dim(ew._const(1, x), shape, ())
            # out[i] = pre[j] * x[j] * mid[i, j] with pre[j] the product of the elements
            # strictly before j and mid[i, j] those strictly after j up to i.
            pre = reduce_prod_p.bind(ew.select(before, _along(x, shape, axis, 0), one),
                                     axes=(axis,))
            pre = broadcast_in_dim(pre, shape, tuple(d for d in range(len(shape))
                                                     if d != axis))
            mid = cumprod_p.bind(ew.select(after, _along(x, shape, axis, 0), one),
                                 axis=axis, reverse=reverse)
            terms = ew.select(window, ew.mul(tj, ew.mul(pre, mid)), zeros)
            return [ans], [reduce_sum_p.bind(terms, axes=(axis + 1,))]
        # cummax/cummin: the tangent comes from the window's elements equal to the
        # running extremum, shared equally among ties.
        hit = ew.bitwise_and(window, ew.eq(_along(x, shape, axis, 1),
                                           _along(ans, shape, axis, 0)))
        count = reduce_sum_p.bind(ew.convert_element_type(hit, aval.dtype),
                                  axes=(axis + 1,))
        num = reduce_sum_p.bind(ew.select(hit, tj, zeros), axes=(axis + 1,))
        return [ans], [ew.div(num, count)]
    rule.__name__ = f"{prim.name}_jvp"
    ad.jvp_rules[prim] = rule


for _p in (cumprod_p, cummax_p, cummin_p):
    _cum_matrix_jvp(_p)
