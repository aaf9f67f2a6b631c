"""``absjit.scipy.special``: ``logsumexp``, the error and gamma functions and the
small helpers of statistics, with JAX's semantics (integer inputs promote to the
default float; ``xlogy(0, y) == 0``; ...).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..core.trace import get_aval
from ..custom_derivatives import custom_jvp

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "gammaln", "digamma", "xlogy", "xlog1py",
           "expit", "logit", "ndtr", "ndtri", "log_ndtr", "entr", "betaln"]


def promote_inexact(*args):
    """Arrays of one inexact dtype (JAX's ``promote_args_inexact``)."""
    arrs = [jnp.asarray(a) for a in args]
    dt = jnp.result_type(*arrs)
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    weak = all(get_aval(a).weak_type for a in arrs)
    return [lax.convert_element_type(a, dt, weak) if get_aval(a).dtype != dt else a
            for a in arrs]


def _unary(lax_fn, name, doc):
    def fn(x):
        (x,) = promote_inexact(x)
        return lax_fn(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erf = _unary(lax.erf, "erf", """The error function.

Examples
--------
>>> from absjit.scipy.special import erf
>>> round(float(erf(1.0)), 5)
0.8427
""")
erfc = _unary(lax.erfc, "erfc", "The complementary error function ``1 - erf(x)``.")
erfinv = _unary(lax.erf_inv, "erfinv", "The inverse of ``erf`` on ``(-1, 1)``.")
gammaln = _unary(lax.lgamma, "gammaln", "``log|Gamma(x)|``.")
digamma = _unary(lax.digamma, "digamma", "The digamma function (NaN at 0, -1, -2, ...).")
expit = _unary(lax.logistic, "expit", "The logistic sigmoid ``1 / (1 + exp(-x))``.")


def logit(x):
    """The log-odds ``log(x / (1 - x))``.

    Examples
    --------
    >>> from absjit.scipy.special import logit
    >>> float(logit(0.5))
    0.0
    """
    (x,) = promote_inexact(x)
    return jnp.log(x / (1 - x))


def betaln(a, b):
    """``log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``."""
    a, b = promote_inexact(a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


@custom_jvp
def _xlogy(x, y):
    return jnp.where(x != 0, x * jnp.log(y), jnp.zeros_like(x))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), tx * jnp.log(y) + ty * x / y


@custom_jvp
def _xlog1py(x, y):
    return jnp.where(x != 0, x * jnp.log1p(y), jnp.zeros_like(x))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), tx * jnp.log1p(y) + ty * x / (1 + y)


def xlogy(x, y):
    """``x * log(y)``, taken as 0 where ``x == 0`` (also for ``y == 0``).

    Examples
    --------
    >>> from absjit.scipy.special import xlogy
    >>> float(xlogy(0.0, 0.0))
    0.0
    """
    x, y = promote_inexact(x, y)
    x, y = jnp.broadcast_arrays(x, y)
    return _xlogy(x, y)


def xlog1py(x, y):
    """``x * log1p(y)``, taken as 0 where ``x == 0``."""
    x, y = promote_inexact(x, y)
    x, y = jnp.broadcast_arrays(x, y)
    return _xlog1py(x, y)


def entr(x):
    """Elementwise entropy ``-x log x`` (0 at 0, ``-inf`` for ``x < 0``)."""
    (x,) = promote_inexact(x)
    return jnp.where(x > 0, -x * jnp.log(jnp.where(x > 0, x, 1)),
                     jnp.where(x == 0, jnp.zeros_like(x), jnp.full_like(x, -np.inf)))


def ndtr(x):
    """The standard normal CDF, accurate in both tails (via ``erf``/``erfc``).

    Examples
    --------
    >>> from absjit.scipy.special import ndtr
    >>> float(ndtr(0.0))
    0.5
    """
    (x,) = promote_inexact(x)
    hs2 = np.sqrt(0.5)
    w = x * hs2
    z = jnp.abs(w)
    y = jnp.where(z < hs2, 1 + lax.erf(w),
                  jnp.where(w > 0, 2 - lax.erfc(z), lax.erfc(z)))
    return 0.5 * y


def ndtri(p):
    """The inverse of ``ndtr``: ``sqrt(2) * erfinv(2 p - 1)``; ``±inf`` at 0 and 1.
    (Relative accuracy degrades for ``p`` below about ``1e-6`` in float32.)"""
    (p,) = promote_inexact(p)
    return np.sqrt(2.0) * lax.erf_inv(2 * p - 1)


def log_ndtr(x):
    """``log(ndtr(x))``, accurate far into the lower tail (an asymptotic series
    below ``-5``) and near 0 for large ``x`` (``log1p(-ndtr(-x))``)."""
    (x,) = promote_inexact(x)
    lower = -20.0 if get_aval(x).dtype == dtypes.float64 else -5.0
    mid = jnp.where(x > 0, jnp.log1p(-ndtr(-jnp.abs(x))), jnp.log(ndtr(jnp.minimum(x, 0))))
    xs = jnp.minimum(x, lower)
    ix2 = 1 / (xs * xs)
    series = 1 + ix2 * (-1 + ix2 * (3 + ix2 * (-15 + ix2 * 105)))
    tail = -0.5 * xs * xs - jnp.log(-xs) - 0.5 * np.log(2 * np.pi) + jnp.log(series)
    return jnp.where(x < lower, tail, mid)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, computed stably (as JAX).

    ``-inf`` entries contribute nothing; an empty reduction gives ``-inf``. With
    ``b``, a negative sum gives NaN unless ``return_sign=True``, which returns
    ``(log|sum|, sign)``. The gradient is the (weighted) softmax.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy.special import logsumexp
    >>> float(logsumexp(jnp.array([0.0, 0.0])))  # log 2
    0.6931471824645996
    """
    if b is not None:
        a, b = promote_inexact(a, b)
        a = jnp.where(b != 0, a, -np.inf)
    else:
        (a,) = promote_inexact(a)
    if where is not None:
        where = jnp.asarray(where)
        a = jnp.where(where, a, -np.inf)
    nd = a.ndim
    if axis is None:
        dims = tuple(range(nd))
    else:
        dims = tuple(sorted(int(d) % max(nd, 1) for d in np.atleast_1d(axis)))
    amax = jnp.max(lax.stop_gradient(a), axis=dims, keepdims=True, initial=-np.inf)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, jnp.zeros_like(amax)))
    exp_a = jnp.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims)
    if not keepdims:
        amax = jnp.squeeze(amax, axis=dims)
    sign = jnp.sign(sumexp)
    out = jnp.log(jnp.abs(sumexp)) + amax
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, jnp.full_like(out, np.nan), out)
    return out


from ._special_extra import *  # noqa: F401,F403,E402
from . import _special_extra  # noqa: E402

__all__ = __all__ + _special_extra.__all__
