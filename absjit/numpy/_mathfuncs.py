"""Floating-point decomposition (``frexp``, ``ldexp``, ``spacing``), integer ``gcd`` and
``lcm``, the Bessel function ``i0``, ``unwrap``, the real/complex predicates and the
window functions, written with ``jnp`` and ``lax`` (no primitives of their own)."""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.trace import Tracer
from ..errors import ConcretizationTypeError
from ..ops.control_flow import while_loop
from ._creation import arange, asarray, ones, zeros
from ._numeric import diff
from ._promote import asarray_weak, check_arraylike, promote_args, promote_args_inexact
from ._reductions import any as _any, cumsum
from ._shape import broadcast_arrays, concatenate, moveaxis
from ._ufuncs import (abs as _abs, cos, exp, exp2, floor, imag, log2, nextafter, remainder,
                      sqrt, where)

__all__ = ["frexp", "ldexp", "spacing", "gcd", "lcm", "i0", "unwrap", "iscomplex", "isreal",
           "iscomplexobj", "isrealobj", "isscalar", "iterable", "bartlett", "blackman",
           "hamming", "hanning", "kaiser"]


def _int_of(x, dt):
    return asarray_weak(x, dt, False)


def _const(v, like):
    return asarray_weak(np.asarray(v, like.dtype), like.dtype, False)


# ---------------------------------------------------------------------------
# frexp, ldexp, spacing
# ---------------------------------------------------------------------------
def _pow2(e, dt):
    """``2.0 ** e`` for an integer array ``e`` in the float type's normal range."""
    return exp2(asarray_weak(e, dt, False))


def frexp(x, /):
    """Mantissa and exponent: ``x == m * 2**e`` with ``0.5 <= |m| < 1`` (``m = x`` and
    ``e = 0`` for zero, infinities and NaN).

    Subnormal inputs and results are exact, as in NumPy (JAX on the CPU flushes them to
    zero).

    The exponent is ``int32``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.frexp(jnp.array([1.5, 8.0]))
    (Array([0.75, 0.5 ], dtype=float32), Array([1, 4], dtype=int32))
    """
    (a,) = promote_args_inexact("frexp", x)
    if dtypes.is_complex(a.dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    dt = a.dtype
    ordinary = (a != 0) & (_abs(a) < np.inf)
    safe = where(ordinary, _abs(a), _const(1, a))
    e = asarray_weak(floor(log2(safe)), np.int32, False) + 1
    # Scale in two halves so that neither power of two leaves the normal range.
    half = e // 2
    m = safe * _pow2(-half, dt) * _pow2(half - e, dt)
    # ``log2`` may be off by one near powers of two: renormalise into [0.5, 1).
    big, small = m >= 1, m < 0.5
    m = where(big, m * 0.5, where(small, m * 2, m))
    e = e + big.astype(np.int32) - small.astype(np.int32)
    m = where(a < 0, -m, m)
    return (where(ordinary, m, a).astype(dt),
            where(ordinary, e, zeros((), np.int32)))


def ldexp(x1, x2, /):
    """``x1 * 2**x2`` for integer ``x2``, without overflow in the power of two.

    Subnormal results are kept, as in NumPy (JAX on the CPU flushes them to zero).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.ldexp(jnp.array([0.75, 0.5]), jnp.array([1, 4]))
    Array([1.5, 8. ], dtype=float32)
    """
    check_arraylike("ldexp", x1, x2)
    n = asarray(x2)
    if not dtypes.is_integer(n.dtype) or n.dtype == np.bool_:
        raise ValueError(f"ldexp: x2 must be of integer type, got {np.dtype(n.dtype).name}")
    (a,) = promote_args_inexact("ldexp", x1)
    if dtypes.is_complex(a.dtype):
        raise TypeError("ldexp does not support complex-valued inputs")
    dt = a.dtype
    info = dtypes.finfo(dt)
    # Past this every finite result has already over- or underflowed; three factors
    # within the normal exponent range cover the rest.
    lim = 2 * info.maxexp + info.nmant + 2
    n = _int_of(n, np.int32)
    n = where(n > lim, _const(lim, n), where(n < -lim, _const(-lim, n), n))
    third = n // 3
    rest = n - 2 * third
    out = a * _pow2(third, dt) * _pow2(third, dt) * _pow2(rest, dt)
    return out.astype(dt)


def spacing(x, /):
    """The distance from ``x`` to the next representable number away from zero
    (negative for negative ``x``; NaN for infinities).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.spacing(jnp.array([1.0, -1.0]))
    Array([ 1.1920929e-07, -1.1920929e-07], dtype=float32)
    """
    (a,) = promote_args_inexact("spacing", x)
    if dtypes.is_complex(a.dtype):
        raise TypeError("spacing does not support complex-valued inputs")
    away = where(a < 0, _const(-np.inf, a), _const(np.inf, a))
    return nextafter(a, away) - a


# ---------------------------------------------------------------------------
# gcd, lcm
# ---------------------------------------------------------------------------
def _int_args(name, x1, x2):
    a, b = promote_args(name, x1, x2)
    if not dtypes.is_integer(a.dtype) or a.dtype == np.bool_:
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return a, b


def gcd(x1, x2):
    """Elementwise greatest common divisor of integers (non-negative; ``gcd(0, 0) = 0``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.gcd(jnp.array([12, -9, 0]), 6)
    Array([6, 3, 6], dtype=int32)
    """
    a, b = _int_args("gcd", x1, x2)
    a, b = broadcast_arrays(_abs(a), _abs(b))
    zero = _const(0, a)

    def step(ab):
        p, q = ab
        nz = q != 0
        safe = where(nz, q, _const(1, q))
        return where(nz, q, p), where(nz, remainder(p, safe), zero)
    # Euclid's algorithm, every element at once until all remainders are zero.
    g, _ = while_loop(lambda ab: _any(ab[1] != 0), step, (a, b))
    return g


def lcm(x1, x2):
    """Elementwise least common multiple of integers (non-negative; 0 when either is 0).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.lcm(jnp.array([4, 0, -6]), 6)
    Array([12,  0,  6], dtype=int32)
    """
    a, b = _int_args("lcm", x1, x2)
    g = gcd(a, b)
    zero = g == 0
    return where(zero, _const(0, g), _abs(a) // where(zero, _const(1, g), g) * _abs(b))


# ---------------------------------------------------------------------------
# i0
# ---------------------------------------------------------------------------
_I0_SWITCH = 15.0  # below: power series; above: the asymptotic expansion


def i0(x):
    """The modified Bessel function of the first kind of order 0 (differentiable).

    Computed from its power series for ``|x| <= 15`` and its asymptotic expansion above,
    each evaluated on inputs clamped to its own range so that both branches (and their
    gradients) stay finite.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.i0(jnp.array([0.0, 1.0]))
    Array([1.      , 1.266066], dtype=float32)
    """
    (a,) = promote_args_inexact("i0", x)
    if dtypes.is_complex(a.dtype):
        raise NotImplementedError("i0 does not support complex-valued inputs")
    ax = _abs(a)
    switch = _const(_I0_SWITCH, a)
    # sum_k (x^2 / 4)^k / (k!)^2: at |x| = 15 the terms fall below the type's precision
    # by k = 26 (single) or k = 48 (double); fewer terms keep the program small.
    wide = np.dtype(a.dtype).itemsize > 4
    xs = where(ax > switch, switch, ax)
    q = xs * xs * 0.25
    term, total = ones(a.shape, a.dtype), ones(a.shape, a.dtype)
    for k in range(1, 48 if wide else 26):
        term = term * q / float(k * k)
        total = total + term
    # e^x / sqrt(2 pi x) * sum_k ((2k-1)!!)^2 / (k! (8x)^k)
    xl = where(ax > switch, ax, switch)
    inv8x = 1.0 / (8.0 * xl)
    term, series = ones(a.shape, a.dtype), ones(a.shape, a.dtype)
    for k in range(1, 16 if wide else 9):
        term = term * float((2 * k - 1) ** 2) / float(k) * inv8x
        series = series + term
    large = exp(xl) / sqrt(2 * np.pi * xl) * series
    return asarray_weak(where(ax > switch, large, total), a.dtype, a.weak_type)


# ---------------------------------------------------------------------------
# unwrap
# ---------------------------------------------------------------------------
def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """``p`` with jumps larger than ``discont`` (default ``period / 2``) along ``axis``
    replaced by their equivalents modulo ``period``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.unwrap(jnp.array([0.0, 3.0, 6.5]))
    Array([0.      , 3.      , 0.216815], dtype=float32)
    """
    check_arraylike("unwrap", p)
    x, per = promote_args("unwrap", p, period)
    if dtypes.is_complex(x.dtype):
        raise ValueError("jnp.unwrap does not support complex inputs")
    if x.ndim == 0:
        raise ValueError("jnp.unwrap: the input must be at least 1-D")
    if x.dtype == np.bool_:  # as JAX: booleans unwrap as the default integer
        x, per = x.astype(dtypes.default_int()), per.astype(dtypes.default_int())
    # Integer phases stay integers (JAX's promotion with ``period``).
    x = moveaxis(x, axis, -1)
    d = diff(x, axis=-1)
    half = per // 2 if dtypes.is_integer(x.dtype) else per / 2
    discont = half if discont is None else discont
    wrapped = remainder(d + half, per) - half
    # A jump of exactly +period/2 keeps its sign (NumPy's convention).
    wrapped = where((wrapped == -half) & (d > 0), half, wrapped)
    correction = where(_abs(d) < discont, 0, wrapped - d).astype(x.dtype)
    start = zeros(x.shape[:-1] + (1,), x.dtype)
    out = x + concatenate([start, cumsum(correction, axis=-1)], axis=-1)
    return moveaxis(out.astype(x.dtype), -1, axis)


# ---------------------------------------------------------------------------
# Real/complex predicates
# ---------------------------------------------------------------------------
def iscomplex(x):
    """Elementwise: whether the imaginary part is non-zero (False for real dtypes).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.iscomplex(jnp.array([1 + 1j, 2 + 0j]))
    Array([ True, False], dtype=bool)
    """
    check_arraylike("iscomplex", x)
    return imag(x) != 0


def isreal(x):
    """Elementwise: whether the imaginary part is zero (True for real dtypes).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.isreal(jnp.array([1 + 1j, 2 + 0j]))
    Array([False,  True], dtype=bool)
    """
    check_arraylike("isreal", x)
    return imag(x) == 0


def _dtype_of(x):
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype
    return np.dtype(dt)


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (the values are not looked at).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.iscomplexobj(jnp.array([1 + 0j])), jnp.iscomplexobj(1.0)
    (True, False)
    """
    if x is None:
        return False
    return _dtype_of(x).kind == "c"


def isrealobj(x):
    """Whether ``x`` does not have a complex dtype.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.isrealobj(jnp.array([1.0]))
    True
    """
    return not iscomplexobj(x)


def isscalar(element):
    """Whether ``element`` is a scalar: a Python or NumPy scalar, or (as in JAX, unlike
    NumPy) any zero-dimensional array.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.isscalar(1.0), jnp.isscalar(jnp.array(1.0)), jnp.isscalar(jnp.ones(2))
    (True, True, False)
    """
    if np.isscalar(element):
        return True
    if isinstance(element, (Array, Tracer, np.ndarray)):
        return element.ndim == 0
    return False


def iterable(y):
    """Whether ``iter(y)`` works.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.iterable([1, 2]), jnp.iterable(2)
    (True, False)
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True


# ---------------------------------------------------------------------------
# Windows
# ---------------------------------------------------------------------------
def _window_len(name, M):
    if isinstance(M, (Array, Tracer)) and not isinstance(M, Array):
        raise ConcretizationTypeError(M, f"jnp.{name}: M sets the result's size, so it must "
                                         "be a concrete integer.")
    return operator.index(M)


def _cosine_window(name, M, coeffs):
    M = _window_len(name, M)
    dt = dtypes.default_float()
    if M < 1:
        return zeros((0,), dt)
    if M == 1:
        return ones((1,), dt)
    t = arange(M, dtype=dt) * (2 * np.pi / (M - 1))
    out = coeffs[0]
    for k, c in enumerate(coeffs[1:], start=1):
        out = out + c * cos(k * t)
    return asarray_weak(out, dt, False)


def bartlett(M):
    """The triangular (Bartlett) window of ``M`` points.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.bartlett(5)
    Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    M = _window_len("bartlett", M)
    dt = dtypes.default_float()
    if M < 1:
        return zeros((0,), dt)
    if M == 1:
        return ones((1,), dt)
    n = arange(M, dtype=dt)
    return 1 - _abs(n * (2.0 / (M - 1)) - 1)


def blackman(M):
    """The Blackman window of ``M`` points.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.round(jnp.blackman(5), 4)
    Array([-0.  ,  0.34,  1.  ,  0.34, -0.  ], dtype=float32)
    """
    return _cosine_window("blackman", M, (0.42, -0.5, 0.08))


def hamming(M):
    """The Hamming window of ``M`` points.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.round(jnp.hamming(3), 4)
    Array([0.08, 1.  , 0.08], dtype=float32)
    """
    return _cosine_window("hamming", M, (0.54, -0.46))


def hanning(M):
    """The Hann window of ``M`` points.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.hanning(3)
    Array([0., 1., 0.], dtype=float32)
    """
    return _cosine_window("hanning", M, (0.5, -0.5))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.round(jnp.kaiser(3, 2.0), 4)
    Array([0.4387, 1.    , 0.4387], dtype=float32)
    """
    M = _window_len("kaiser", M)
    dt = dtypes.default_float()
    if M < 1:
        return zeros((0,), dt)
    if M == 1:
        return ones((1,), dt)
    (b,) = promote_args_inexact("kaiser", beta)
    n = arange(M, dtype=dt)
    r = n * (2.0 / (M - 1)) - 1
    out = i0(b * sqrt(1 - r * r)) / i0(b)
    return asarray_weak(out, dt, False)
