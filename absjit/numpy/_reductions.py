"""Reductions of ``absjit.numpy`` written with the lax reduction primitives.

Result dtypes follow JAX: sums and products promote small integers and bools to the
default integer (``uint8`` to the default unsigned), means and variances of integers
are floats, and reductions are never weakly typed. ``axis`` is an int, a tuple of ints
(negative allowed) or ``None``; ``keepdims``, ``dtype``, ``where`` and ``initial`` work
where NumPy has them.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dim_assumptions import assume_at_least
from ..core.dims import Dim, unify_shapes, unify_sizes
from ..core.shapes import size_of
from ..core.trace import get_aval
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops._util import canonical_axes
from ..ops._joining import concatenate_values
from ._promote import broadcast_to_shape, check_arraylike, promote_args, promote_dtypes
from . import _ufuncs as uf

__all__ = ["sum", "prod", "product", "mean", "var", "std", "max", "min", "amax", "amin",
           "argmax", "argmin", "any", "all", "cumsum", "cumprod", "cumulative_sum",
           "cumulative_prod", "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar",
           "nanstd", "nanargmax", "nanargmin", "nancumsum", "nancumprod", "ptp", "average",
           "count_nonzero", "isclose", "allclose", "array_equal", "array_equiv"]


def _aval(x):
    return get_aval(x)


def _asarray(name, a):
    check_arraylike(name, a)
    (x,) = promote_args(name, a)
    if _aval(x).weak_type:  # reductions are strongly typed, as in JAX
        x = ew.convert_element_type(x, _aval(x).dtype, False)
    return x


def _cast(x, dt):
    dt = np.dtype(dt)
    aval = _aval(x)
    if aval.dtype == dt and not aval.weak_type:
        return x
    return ew.convert_element_type(x, dt, False)


def _user_dtype(dtype):
    return None if dtype is None else dtypes.user_dtype(dtype)


def _promote_integers(dt):
    """Sums and products accumulate small integers in the default integer type."""
    if dtypes.is_bool(dt):
        return dtypes.default_int()
    if dtypes.is_integer(dt):
        base = dtypes.default_uint() if dt.kind == "u" else dtypes.default_int()
        return base if dt.itemsize < base.itemsize else dt
    return dt


def _keep(x, shape, axes):
    """Put size-1 dimensions back where ``axes`` were reduced (``keepdims=True``)."""
    new = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return st.reshape(x, new)


def _check_out(name, out):
    if out is not None:
        raise TypeError(f"{name}: the 'out' argument is not supported (arrays are immutable)")


def _reduce(name, kind, a, axis, dtype, keepdims, initial, where, promote=False):
    """The shared body of sum/prod/max/min/any/all.

    ``kind`` is the lax reduction (``sum``, ``prod``, ``max``, ``min``, ``and``, ``or``).
    """
    x = _asarray(name, a)
    shape = _aval(x).shape
    axes = canonical_axes(name, axis, len(shape))
    want = _user_dtype(dtype)
    if kind in ("and", "or"):
        x = uf._to_bool(x)
    elif want is not None:
        x = _cast(x, want)
    elif promote:
        x = _cast(x, _promote_integers(_aval(x).dtype))
    dt = _aval(x).dtype
    if kind in ("max", "min") and initial is None:
        if where is not None:
            raise ValueError(f"{name}: reduction with 'where' requires 'initial'")
        _assume_nonempty([shape[ax] for ax in axes], name, "pass initial=")
        if builtins.any(shape[ax] == 0 for ax in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
    if where is not None:
        check_arraylike(name, where)
        mask = uf._to_bool(promote_args(name, where)[0])
        mask = broadcast_to_shape(mask, shape)
        ident = Array._new(red.reduction_identity(kind, dt))
        x = uf._where(mask, x, ident)
    lax_fn = {"sum": red.reduce_sum, "prod": red.reduce_prod, "max": red.reduce_max,
              "min": red.reduce_min, "and": red.reduce_and, "or": red.reduce_or}[kind]
    out = lax_fn(x, axes)
    if initial is not None:
        init = _cast(promote_args(name, initial)[0], dt)
        combine = {"sum": ew.add, "prod": ew.mul, "max": ew.max, "min": ew.min,
                   "and": ew.bitwise_and, "or": ew.bitwise_or}[kind]
        if dtypes.is_bool(dt) and kind in ("sum", "max"):
            combine = ew.bitwise_or
        elif dtypes.is_bool(dt) and kind in ("prod", "min"):
            combine = ew.bitwise_and
        out = combine(out, init)
    if keepdims:
        out = _keep(out, shape, axes)
    return out


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,  # noqa: A001
        where=None, promote_integers=True):
    """Sum of elements over ``axis``; bools and small integers sum as int32.

    Examples
    --------
    >>> jnp.sum(jnp.array([[1, 2], [3, 4]]), axis=0)  # doctest: +SKIP
    Array([4, 6], dtype=int32)
    """
    _check_out("sum", out)
    return _reduce("sum", "sum", a, axis, dtype, keepdims, initial, where,
                   promote=promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """Product of elements over ``axis``.

    Examples
    --------
    >>> jnp.prod(jnp.array([1., 2., 3.]))  # doctest: +SKIP
    Array(6., dtype=float32)
    """
    _check_out("prod", out)
    return _reduce("prod", "prod", a, axis, dtype, keepdims, initial, where,
                   promote=promote_integers)


product = prod


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over ``axis`` (NaN propagates); empty reductions need ``initial``.

    Examples
    --------
    >>> jnp.max(jnp.array([[1, 5], [3, 2]]), axis=1)  # doctest: +SKIP
    Array([5, 3], dtype=int32)
    """
    _check_out("max", out)
    return _reduce("max", "max", a, axis, None, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over ``axis`` (NaN propagates); empty reductions need ``initial``."""
    _check_out("min", out)
    return _reduce("min", "min", a, axis, None, keepdims, initial, where)


amax, amin = max, min


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether any element over ``axis`` is true (empty: False)."""
    _check_out("any", out)
    return _reduce("any", "or", a, axis, None, keepdims, None, where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether every element over ``axis`` is true (empty: True)."""
    _check_out("all", out)
    return _reduce("all", "and", a, axis, None, keepdims, None, where)


def _count(shape, axes, where, name):
    """Number of elements reduced: a Python int, or an int32 array under ``where``."""
    if where is None:
        n = 1
        for ax in axes:
            n *= shape[ax]
        return n
    mask = broadcast_to_shape(uf._to_bool(promote_args(name, where)[0]), shape)
    return red.reduce_sum(_cast(mask, dtypes.default_int()), axes)


def _real_dtype(dt):
    return {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}.get(np.dtype(dt), np.dtype(dt))


def _float_dtype(dt):
    return dt if dtypes.is_inexact(dt) else dtypes.default_float()


def _divide_by_count(total, count):
    dt = _aval(total).dtype
    if isinstance(count, int):
        return ew.div(total, Array._new(np.asarray(count, dt)))
    return ew.div(total, _cast(count, dt))


def _compute_dtype(dt):
    """float16/bfloat16 statistics accumulate in float32, as JAX does."""
    if dt == np.float16 or dtypes.is_bfloat16(dt):
        return np.dtype(np.float32)
    return dt


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis``; integers and bools give the default float.

    Examples
    --------
    >>> jnp.mean(jnp.array([1, 2, 3, 4]))  # doctest: +SKIP
    Array(2.5, dtype=float32)
    """
    _check_out("mean", out)
    x = _asarray("mean", a)
    shape = _aval(x).shape
    axes = canonical_axes("mean", axis, len(shape))
    want = _user_dtype(dtype)
    res_dt = want if want is not None else _float_dtype(_aval(x).dtype)
    comp = _compute_dtype(res_dt)
    total = _reduce("mean", "sum", _cast(x, comp), axes, None, False, None, where)
    res = _cast(_divide_by_count(total, _count(shape, axes, where, "mean")), res_dt)
    return _keep(res, shape, axes) if keepdims else res


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Variance over ``axis`` with ``ddof`` (or ``correction``) degrees of freedom;
    real for complex inputs.

    Examples
    --------
    >>> jnp.var(jnp.array([1., 2., 3., 4.]), ddof=1)  # doctest: +SKIP
    Array(1.6666666, dtype=float32)
    """
    _check_out("var", out)
    if correction is not None:
        ddof = correction
    x = _asarray("var", a)
    shape = _aval(x).shape
    axes = canonical_axes("var", axis, len(shape))
    want = _user_dtype(dtype)
    in_dt = _float_dtype(_aval(x).dtype)
    comp = _compute_dtype(in_dt)
    x = _cast(x, comp)
    centered = uf.subtract(x, mean(x, axes, keepdims=True, where=where))
    if dtypes.is_complex(comp):
        sq = ew.real(ew.mul(centered, ew.conj(centered)))
    else:
        sq = ew.mul(centered, centered)
    total = _reduce("var", "sum", sq, axes, None, False, None, where)
    count = _count(shape, axes, where, "var")
    if isinstance(count, int):
        count = count - ddof
    else:
        count = ew.sub(count, Array._new(np.asarray(ddof, _aval(count).dtype)))
    res_dt = want if want is not None else _real_dtype(in_dt)
    res = _cast(_divide_by_count(total, count), res_dt)
    return _keep(res, shape, axes) if keepdims else res


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Standard deviation over ``axis`` (``sqrt(var)``).

    Examples
    --------
    >>> jnp.std(jnp.array([1., 3.]))  # doctest: +SKIP
    Array(1., dtype=float32)
    """
    _check_out("std", out)
    v = var(a, axis, None, None, ddof, keepdims, where=where, correction=correction)
    res = ew.sqrt(v)
    return res if dtype is None else _cast(res, _user_dtype(dtype))


def _ravel(x):
    return st.reshape(x, (size_of(_aval(x).shape),))


def _assume_nonempty(sizes, name, fix):
    """Symbolic sizes (ranked level) an operation with no identity reduces over are
    assumed non-empty; a call with an empty array raises ``ValueError`` at entry."""
    for n in sizes:
        if type(n) is Dim:
            assume_at_least(n, 1, f"{name} of an empty array has no identity; {fix}")


def _arg(name, lax_fn, a, axis, keepdims):
    x = _asarray(name, a)
    if dtypes.is_complex(_aval(x).dtype):
        raise TypeError(f"{name} does not support complex inputs")
    shape = _aval(x).shape
    _assume_nonempty(shape if axis is None else
                     [shape[ax] for ax in canonical_axes(name, axis, len(shape))],
                     name, "NumPy raises for it too")
    if axis is None:
        out = lax_fn(_ravel(x), 0, dtypes.default_int())
        return st.reshape(out, (1,) * len(shape)) if keepdims else out
    (ax,) = canonical_axes(name, axis, len(shape))
    out = lax_fn(x, ax, dtypes.default_int())
    return _keep(out, shape, (ax,)) if keepdims else out


def argmax(a, axis=None, out=None, keepdims=False):
    """Index of the first maximum (the first NaN counts as the maximum).

    Examples
    --------
    >>> jnp.argmax(jnp.array([1, 7, 7]))  # doctest: +SKIP
    Array(1, dtype=int32)
    """
    _check_out("argmax", out)
    return _arg("argmax", red.argmax, a, axis, keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    """Index of the first minimum (the first NaN counts as the minimum)."""
    _check_out("argmin", out)
    return _arg("argmin", red.argmin, a, axis, keepdims)


def _cumulative(name, lax_fn, a, axis, dtype, nan_ident=None):
    x = _asarray(name, a)
    want = _user_dtype(dtype)
    if want is not None:
        x = _cast(x, want)
    elif dtypes.is_bool(_aval(x).dtype):
        x = _cast(x, dtypes.default_int())
    if nan_ident is not None and dtypes.is_inexact(_aval(x).dtype):
        x = uf._where(uf.isnan(x), Array._new(np.asarray(nan_ident, _aval(x).dtype)), x)
    if axis is None:
        x, axis = _ravel(x), 0
    (ax,) = canonical_axes(name, axis, _aval(x).ndim)
    return lax_fn(x, ax)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum along ``axis`` (over the flattened array when ``None``).

    Examples
    --------
    >>> jnp.cumsum(jnp.array([1, 2, 3]))  # doctest: +SKIP
    Array([1, 3, 6], dtype=int32)
    """
    _check_out("cumsum", out)
    return _cumulative("cumsum", red.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    """Running product along ``axis`` (over the flattened array when ``None``)."""
    _check_out("cumprod", out)
    return _cumulative("cumprod", red.cumprod, a, axis, dtype)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Running sum treating NaN as 0."""
    _check_out("nancumsum", out)
    return _cumulative("nancumsum", red.cumsum, a, axis, dtype, nan_ident=0)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Running product treating NaN as 1."""
    _check_out("nancumprod", out)
    return _cumulative("nancumprod", red.cumprod, a, axis, dtype, nan_ident=1)


def _cumulative_api(name, running, identity, x, axis, dtype, include_initial):
    """Array-API running reduction: ``axis`` may be omitted only for rank <= 1;
    ``include_initial`` prepends ``identity``."""
    x = _asarray(name, x)
    if axis is None:
        if _aval(x).ndim > 1:
            raise ValueError(f"{name}: axis is required for arrays of rank > 1")
        axis = 0
    if dtype is None and running is cumsum:
        # As sum (and jax): bools and small integers accumulate in the default integer.
        dtype = _promote_integers(_aval(x).dtype)
    out = running(x, axis, dtype)
    return _with_initial(out, axis, identity) if include_initial else out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API running sum; ``include_initial`` prepends a zero."""
    return _cumulative_api("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array-API running product; ``include_initial`` prepends a one."""
    return _cumulative_api("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


def _with_initial(out, axis, value):
    aval = _aval(out)
    (ax,) = canonical_axes("cumulative", axis, aval.ndim)
    shape = aval.shape[:ax] + (1,) + aval.shape[ax + 1:]
    first = st.broadcast_in_dim(Array._new(np.asarray(value, aval.dtype)), shape, ())
    return concatenate_values(promote_dtypes(first, out), ax)


def _nan_to(x, value):
    if not dtypes.is_inexact(_aval(x).dtype):
        return x
    return uf._where(uf.isnan(x), Array._new(np.asarray(value, _aval(x).dtype)), x)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaN as 0."""
    _check_out("nansum", out)
    return sum(_nan_to(_asarray("nansum", a), 0), axis, dtype, None, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaN as 1."""
    _check_out("nanprod", out)
    return prod(_nan_to(_asarray("nanprod", a), 1), axis, dtype, None, keepdims, initial,
                where)


def _nan_extreme(name, fn, fill, a, axis, keepdims, initial, where):
    x = _asarray(name, a)
    if not dtypes.is_inexact(_aval(x).dtype):
        return fn(x, axis, None, keepdims, initial, where)
    nan = uf.isnan(x)
    res = fn(_nan_to(x, fill), axis, None, keepdims, initial, where)
    # A slice of nothing but NaN gives NaN.
    all_nan = all(nan, axis, None, keepdims, where=where)
    return uf._where(all_nan, Array._new(np.asarray(np.nan, _aval(res).dtype)), res)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum ignoring NaN (NaN where a slice is all NaN)."""
    _check_out("nanmax", out)
    return _nan_extreme("nanmax", max, -np.inf, a, axis, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum ignoring NaN (NaN where a slice is all NaN)."""
    _check_out("nanmin", out)
    return _nan_extreme("nanmin", min, np.inf, a, axis, keepdims, initial, where)


def _not_nan(x):
    return uf.logical_not(uf.isnan(x))


def _and_where(mask, where):
    return mask if where is None else uf.logical_and(mask, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Mean of the non-NaN elements."""
    _check_out("nanmean", out)
    x = _asarray("nanmean", a)
    if not dtypes.is_inexact(_aval(x).dtype):
        return mean(x, axis, dtype, None, keepdims, where=where)
    return mean(x, axis, dtype, None, keepdims, where=_and_where(_not_nan(x), where))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    """Variance of the non-NaN elements."""
    _check_out("nanvar", out)
    x = _asarray("nanvar", a)
    if not dtypes.is_inexact(_aval(x).dtype):
        return var(x, axis, dtype, None, ddof, keepdims, where=where)
    return var(x, axis, dtype, None, ddof, keepdims, where=_and_where(_not_nan(x), where))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    """Standard deviation of the non-NaN elements."""
    return ew.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where))


def _nanarg(name, fn, fill, a, axis, keepdims):
    x = _asarray(name, a)
    if not dtypes.is_inexact(_aval(x).dtype):
        return fn(x, axis, None, keepdims)
    nan = uf.isnan(x)
    idx = fn(_nan_to(x, fill), axis, None, keepdims)
    all_nan = all(nan, axis, None, keepdims)
    return uf._where(all_nan, Array._new(np.asarray(-1, _aval(idx).dtype)), idx)


def nanargmax(a, axis=None, out=None, keepdims=False):
    """Index of the maximum ignoring NaN (-1 where a slice is all NaN)."""
    _check_out("nanargmax", out)
    return _nanarg("nanargmax", argmax, -np.inf, a, axis, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=False):
    """Index of the minimum ignoring NaN (-1 where a slice is all NaN)."""
    _check_out("nanargmin", out)
    return _nanarg("nanargmin", argmin, np.inf, a, axis, keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range (``max - min``) over ``axis``."""
    _check_out("ptp", out)
    x = _asarray("ptp", a)
    if dtypes.is_bool(_aval(x).dtype):
        raise TypeError("ptp does not support bool inputs (subtracting booleans)")
    return ew.sub(max(x, axis, None, keepdims), min(x, axis, None, keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    """Number of non-zero elements over ``axis`` (int32)."""
    x = _asarray("count_nonzero", a)
    return sum(_cast(uf._to_bool(x), dtypes.default_int()), axis, None, None, keepdims)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean over ``axis``; with ``returned`` also the sum of the weights.

    Examples
    --------
    >>> jnp.average(jnp.array([1., 2., 3.]), weights=jnp.array([3, 1, 0]))  # doctest: +SKIP
    Array(1.25, dtype=float32)
    """
    x = _asarray("average", a)
    shape = _aval(x).shape
    if weights is None:
        avg = mean(x, axis, keepdims=keepdims)
        axes = canonical_axes("average", axis, len(shape))
        n = 1
        for ax in axes:
            n *= shape[ax]
        return (avg, Array._new(np.asarray(n, _aval(avg).dtype))) if returned else avg
    w = _asarray("average", weights)
    wshape = _aval(w).shape
    dt = dtypes.result_type(x, w)
    dt = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    x, w = _cast(x, dt), _cast(w, dt)  # dtypes only: the shapes are checked below
    if not (len(wshape) == len(shape) and unify_shapes(wshape, shape, "average")):
        if axis is None:
            raise ValueError("average: axis must be given when the shapes of a and weights "
                             f"differ ({shape} vs {wshape})")
        if not isinstance(axis, (int, np.integer)) or len(wshape) != 1:
            raise ValueError("average: 1-D weights need a single integer axis")
        (ax,) = canonical_axes("average", axis, len(shape))
        if not unify_sizes(wshape[0], shape[ax], "average"):
            raise ValueError(f"average: weights of length {wshape[0]} do not match axis "
                             f"{ax} of shape {shape}")
        w = st.broadcast_in_dim(w, shape, (ax,))

    wsum = sum(w, axis, keepdims=keepdims)
    avg = ew.div(sum(ew.mul(x, w), axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg


# ---------------------------------------------------------------------------
# Comparing whole arrays (elementwise tests reduced with ``all``)
# ---------------------------------------------------------------------------
@uf._quiet
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` elementwise; infinities are close only to
    themselves, NaN only with ``equal_nan``.

    Examples
    --------
    >>> jnp.isclose(jnp.array([1., 1.1]), 1.)  # doctest: +SKIP
    Array([ True, False], dtype=bool)
    """
    x, y = promote_args("isclose", a, b)
    dt = _aval(x).dtype
    if not dtypes.is_inexact(dt):
        return ew.convert_element_type(ew.eq(x, y), np.bool_, False)  # strong, as JAX
    real_dt = np.dtype(np.float32) if dt == np.complex64 else (
        np.dtype(np.float64) if dt == np.complex128 else dt)
    rt = Array._new(np.asarray(rtol, real_dt), False)
    at = Array._new(np.asarray(atol, real_dt), False)
    close = ew.le(ew.abs(ew.sub(x, y)), ew.add(at, ew.mul(rt, ew.abs(y))))
    inf_x, inf_y = uf.isinf(x), uf.isinf(y)
    close = ew.bitwise_and(close, ew.bitwise_not(ew.bitwise_or(inf_x, inf_y)))
    close = ew.bitwise_or(close, ew.bitwise_and(ew.bitwise_and(inf_x, inf_y), ew.eq(x, y)))
    if equal_nan:
        close = ew.bitwise_or(close, ew.bitwise_and(uf.isnan(x), uf.isnan(y)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` and ``b`` is :func:`isclose` (a bool Array)."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have the same shape and elements (a bool Array)."""
    check_arraylike("array_equal", a1, a2)
    if np.shape(a1) != np.shape(a2):
        return Array._new(np.asarray(False))
    x, y = promote_args("array_equal", a1, a2)
    eq = ew.eq(x, y)
    if equal_nan:
        eq = ew.bitwise_or(eq, ew.bitwise_and(uf.isnan(x), uf.isnan(y)))
    return ew.convert_element_type(all(eq), np.bool_, False)


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` are equal after broadcasting (False if they cannot be)."""
    check_arraylike("array_equiv", a1, a2)
    try:
        uf.broadcast_shapes("array_equiv", np.shape(a1), np.shape(a2))
    except ValueError:
        return Array._new(np.asarray(False))
    return ew.convert_element_type(all(uf.equal(a1, a2)), np.bool_, False)
