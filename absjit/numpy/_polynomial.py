"""Polynomial arithmetic on coefficient arrays (highest power first): ``poly``,
``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``
(``polyval`` and ``polyfit`` live in ``_numeric.py``)."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..core.avals import ConcreteArray
from ..core.trace import Tracer
from ..errors import ConcretizationTypeError
from ._creation import arange, asarray, eye, ones, zeros
from ._promote import asarray_weak, check_arraylike, promote_dtypes
from ._shape import concatenate, ravel
from ._sorting import convolve

__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "roots"]


def _coeffs(name, *args):
    """The arguments as 1-D coefficient arrays (scalars become length-1 arrays)."""
    check_arraylike(name, *args)
    out = []
    for a in args:
        a = asarray(a)
        if a.ndim > 1:
            raise ValueError(f"jnp.{name}: coefficients must be at most 1-D, got shape "
                             f"{a.shape}")
        out.append(ravel(a))
    return out


def _promote_inexact(*args):
    """Cast to the common dtype, the default float when that is not inexact (shapes
    untouched)."""
    dt, weak = dtypes.result_type_and_weak(*args)
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    return [asarray_weak(a, dt, weak) for a in args]


def _order(name, m):
    if isinstance(m, Tracer) and not isinstance(m.aval, ConcreteArray):
        raise ConcretizationTypeError(m, f"jnp.{name}: the order m sets the result's size, "
                                         "so it must be a concrete integer.")
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"jnp.{name}: the order m must be non-negative, got {m}")
    return m


def _leading_nonzero(name, a, tol=0.0):
    """How many leading entries of ``a`` have ``|a| <= tol`` (needs concrete values)."""
    if isinstance(a, Tracer) and not isinstance(a.aval, ConcreteArray):
        raise ConcretizationTypeError(a, f"jnp.{name}: trim_leading_zeros=True changes the "
                                         "result's size with the values, so they must be "
                                         "concrete.")
    value = a.aval.concrete_value() if isinstance(a, Tracer) else np.asarray(a)
    big = np.nonzero(np.abs(value) > tol)[0]
    return int(big[0]) if big.size else value.shape[0]


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (of the
    characteristic polynomial, for a square matrix).

    As in JAX the result is not made real when complex roots come in conjugate pairs
    (so a matrix's characteristic polynomial is complex).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.poly(jnp.array([1, 2]))
    Array([ 1., -3.,  2.], dtype=float32)
    """
    check_arraylike("poly", seq_of_zeros)
    (z,) = _promote_inexact(asarray(seq_of_zeros))
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        # imported on first use (start-up time): _linalg_decomp loads with jnp.linalg
        from ._linalg_decomp import eigvals
        z = eigvals(z)
    if z.ndim > 1:
        raise ValueError("jnp.poly: input must be 1-D or a square 2-D array")
    z = ravel(z)
    n = z.shape[0]
    if n == 0:
        return ones((), z.dtype)
    # Multiply by (x - r) one root at a time: shift and subtract.
    c = ones((1,), z.dtype)
    zero = zeros((1,), z.dtype)
    for i in range(n):
        c = concatenate([c, zero]) - z[i] * concatenate([zero, c])
    return c


def _pad_front(a, n):
    k = a.shape[0]
    return a if k == n else concatenate([zeros((n - k,), a.dtype), a])


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter padded with leading zeros).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.polyadd(jnp.array([1, 2, 3]), jnp.array([1, 1]))
    Array([1, 3, 4], dtype=int32)
    """
    a, b = promote_dtypes(*_coeffs("polyadd", a1, a2))
    n = max(a.shape[0], b.shape[0])
    return _pad_front(a, n) + _pad_front(b, n)


def polysub(a1, a2):
    """The difference of two polynomials (the shorter padded with leading zeros).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.polysub(jnp.array([1, 2, 3]), jnp.array([1, 1]))
    Array([1, 1, 2], dtype=int32)
    """
    a, b = promote_dtypes(*_coeffs("polysub", a1, a2))
    n = max(a.shape[0], b.shape[0])
    return _pad_front(a, n) - _pad_front(b, n)


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (a full convolution), always inexact.

    Leading zeros are kept (so the length is static) unless ``trim_leading_zeros=True``,
    which needs concrete coefficients. An empty polynomial counts as zero.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.polymul(jnp.array([1, 1]), jnp.array([1, -1]))
    Array([ 1.,  0., -1.], dtype=float32)
    """
    a, b = _promote_inexact(*_coeffs("polymul", a1, a2))
    if trim_leading_zeros:
        a = a[min(_leading_nonzero("polymul", a), a.shape[0] - 1):] if a.shape[0] else a
        b = b[min(_leading_nonzero("polymul", b), b.shape[0] - 1):] if b.shape[0] else b
    if a.shape[0] == 0:
        a = zeros((1,), a.dtype)
    if b.shape[0] == 0:
        b = zeros((1,), b.dtype)
    return convolve(a, b, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of polynomial long division ``u / v``, always inexact.

    The remainder keeps ``u``'s length (static) unless ``trim_leading_zeros=True``
    (concrete values) drops its leading entries below ``sqrt(eps)``. A leading zero in
    ``v`` divides by zero, as in JAX.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> q, r = jnp.polydiv(jnp.array([1.0, 3.0, 3.0]), jnp.array([1.0, 1.0]))
    >>> q, r
    (Array([1., 2.], dtype=float32), Array([0., 0., 1.], dtype=float32))
    """
    num, den = _promote_inexact(*_coeffs("polydiv", u, v))
    m, n = num.shape[0] - 1, den.shape[0] - 1
    if n < 0:
        raise ValueError("jnp.polydiv: the divisor must not be empty")
    inv_lead = 1 / den[0]
    q = zeros((max(m - n + 1, 1),), num.dtype)
    for k in range(m - n + 1):
        d = num[k] * inv_lead
        q = q.at[k].set(d)
        num = num.at[k:k + n + 1].add(-d * den)
    if trim_leading_zeros:
        tol = float(np.sqrt(dtypes.finfo(num.dtype).eps))
        cut = min(_leading_nonzero("polydiv", num, tol), num.shape[0] - 1)
        num = num[cut:]
    return q, num


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial, always inexact.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.polyder(jnp.array([1, 2, 3]))
    Array([2., 2.], dtype=float32)
    """
    (c,) = _promote_inexact(*_coeffs("polyder", p))
    m = _order("polyder", m)
    for _ in range(m):
        n = c.shape[0]
        if n == 0:
            break
        c = c[:-1] * arange(n - 1, 0, -1, dtype=c.dtype)
    return c


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial, always inexact.

    ``k`` holds the integration constants in the order of integration (a scalar is used
    for every step); they default to zero.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.polyint(jnp.array([3.0, 2.0, 1.0]), k=5.0)
    Array([1., 1., 1., 5.], dtype=float32)
    """
    m = _order("polyint", m)
    (c, ks) = _promote_inexact(*_coeffs("polyint", p, 0 if k is None else k))
    if ks.shape[0] == 1:
        ks = concatenate([ks] * m) if m else ks[:0]
    if ks.shape[0] != m:
        raise ValueError("jnp.polyint: k must be a scalar or a 1-D array of length 1 or m")
    for i in range(m):
        n = c.shape[0]
        c = concatenate([c / arange(n, 0, -1, dtype=c.dtype), ks[i:i + 1]])
    return c


def roots(p, *, strip_zeros=True):
    """The roots of a polynomial: the eigenvalues of its companion matrix (complex, in
    LAPACK's order).

    ``strip_zeros=True`` drops leading zero coefficients first, which needs concrete
    values; with ``strip_zeros=False`` (traceable) a leading zero gives NaN roots, as
    in JAX (here all of them are NaN then). Trailing zeros give zero roots through the
    eigenvalues (NumPy instead appends exact zeros).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.roots(jnp.array([1.0, -3.0, 2.0]))
    Array([2.+0.j, 1.+0.j], dtype=complex64)
    """
    # imported on first use (start-up time): _linalg_decomp loads with jnp.linalg
    from ._linalg_decomp import eigvals
    (c,) = _promote_inexact(*_coeffs("roots", p))
    if strip_zeros and c.shape[0]:
        c = c[_leading_nonzero("roots", c):]
    n = c.shape[0]
    ct = np.result_type(np.dtype(c.dtype), np.complex64)
    if n < 2:
        return zeros((0,), ct)
    companion = eye(n - 1, k=-1, dtype=c.dtype).at[0].set(-c[1:] / c[0])
    return eigvals(companion)
