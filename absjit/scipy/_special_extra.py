"""More of ``absjit.scipy.special``: the incomplete gamma and beta functions, gamma
and its relatives, the modified Bessel functions of orders 0 and 1, zeta and
polygamma, softmax, the relative entropies and ``erfcx``, with JAX's dtypes and
results (integer inputs promote to the default float).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..core.trace import get_aval
from ..custom_derivatives import custom_jvp

__all__ = ["gammainc", "gammaincc", "betainc", "beta", "gamma", "gammasgn", "loggamma",
           "factorial", "comb", "poch", "i0", "i0e", "i1", "i1e", "zeta", "polygamma",
           "log_softmax", "softmax", "kl_div", "rel_entr", "erfcx", "multigammaln",
           "exp1", "expi", "boxcox", "boxcox1p", "bernoulli"]


def _promote(*args):
    from .special import promote_inexact
    return promote_inexact(*args)


def _strong(x):
    """JAX's results for these are strongly typed even for Python scalar inputs."""
    return _to_weak(x, False) if get_aval(x).weak_type else x


def _weak_as(out, *inputs):
    """JAX's weak type for these: weak exactly when every input is."""
    return _to_weak(out, all(get_aval(i).weak_type for i in inputs))


def _to_weak(x, weak):
    from ..ops import elementwise as ew
    return ew.convert_element_type_p.bind(x, new_dtype=get_aval(x).dtype, weak_type=weak)


def gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``.

    Examples
    --------
    >>> from absjit.scipy.special import gammainc
    >>> round(float(gammainc(1.0, 2.0)), 6)
    0.864665
    """
    a, x = _promote(a, x)
    a, x = jnp.broadcast_arrays(a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    Examples
    --------
    >>> from absjit.scipy.special import gammaincc
    >>> round(float(gammaincc(1.0, 2.0)), 6)
    0.135335
    """
    a, x = _promote(a, x)
    a, x = jnp.broadcast_arrays(a, x)
    return lax.igammac(a, x)


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)`` (differentiable in ``x``).

    Examples
    --------
    >>> from absjit.scipy.special import betainc
    >>> round(float(betainc(2.0, 3.0, 0.3)), 5)
    0.3483
    """
    a, b, x = _promote(a, b, x)
    a, b, x = jnp.broadcast_arrays(a, b, x)
    return lax.betainc(a, b, x)


def gammasgn(x):
    """The sign of the gamma function: 1 for ``x >= 0``, alternating between the poles
    below 0, NaN at the poles ``-1, -2, ...``.

    Examples
    --------
    >>> from absjit.scipy.special import gammasgn
    >>> float(gammasgn(-0.5))
    -1.0
    """
    (x,) = _promote(x)
    fl = jnp.floor(x)
    odd = jnp.remainder(fl, 2) == 1
    sign = jnp.where((x < 0) & odd, -jnp.ones_like(x), jnp.ones_like(x))
    pole = (x < 0) & (x == fl)
    return jnp.where(pole | jnp.isnan(x), jnp.full_like(x, np.nan), sign)


def gamma(x):
    """The gamma function, ``gammasgn(x) * exp(gammaln(x))`` (``inf`` at 0, NaN at the
    negative integers).

    Examples
    --------
    >>> from absjit.scipy.special import gamma
    >>> round(float(gamma(5.0)), 3)
    24.0
    """
    (x,) = _promote(x)
    return _strong(gammasgn(x) * jnp.exp(lax.lgamma(x)))


def loggamma(x):
    """``log(Gamma(x))`` for real ``x > 0`` (NaN for ``x <= 0``, as JAX's real
    version; complex arguments are not supported).

    Examples
    --------
    >>> from absjit.scipy.special import loggamma
    >>> round(float(loggamma(3.0)), 5)
    0.69315
    """
    (x,) = _promote(x)
    if dtypes.is_complex(get_aval(x).dtype):
        raise NotImplementedError("loggamma of complex arguments is not implemented")
    return _weak_as(jnp.where(x > 0, lax.lgamma(x), jnp.full_like(x, np.nan)), x)


def beta(a, b):
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``.

    Examples
    --------
    >>> from absjit.scipy.special import beta
    >>> round(float(beta(2.0, 3.0)), 5)
    0.08333
    """
    a, b = _promote(a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return _strong(sign * jnp.exp(lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)))


def factorial(n, exact=False):
    """``n!`` as ``Gamma(n + 1)`` (0 for ``n < 0``); ``exact=True`` is not supported
    (as JAX).

    Examples
    --------
    >>> from absjit.scipy.special import factorial
    >>> round(float(factorial(4)), 3)
    24.0
    """
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _promote(n)
    return _weak_as(jnp.where(n < 0, jnp.zeros_like(n), jnp.exp(lax.lgamma(n + 1))), n)


def comb(N, k, *, repetition=False):
    """The number of combinations of ``N`` things taken ``k`` at a time,
    ``Gamma(N + 1) / (Gamma(k + 1) Gamma(N - k + 1))``; 0 outside ``0 <= k <= N``.
    With ``repetition``, ``comb(N + k - 1, k)``.

    Examples
    --------
    >>> from absjit.scipy.special import comb
    >>> round(float(comb(5, 2)), 3)
    10.0
    """
    N, k = _promote(N, k)
    inputs = (N, k)
    if repetition:
        N = N + k - 1
    out = jnp.exp(lax.lgamma(N + 1) - lax.lgamma(k + 1) - lax.lgamma(N - k + 1))
    return _weak_as(jnp.where((k < 0) | (k > N) | (N < 0), jnp.zeros_like(out), out), *inputs)


def poch(z, m):
    """The rising factorial ``Gamma(z + m) / Gamma(z)`` (1 for ``m == 0``).

    Examples
    --------
    >>> from absjit.scipy.special import poch
    >>> round(float(poch(2.0, 3.0)), 3)
    24.0
    """
    z, m = _promote(z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    out = sign * jnp.exp(lax.lgamma(z + m) - lax.lgamma(z))
    return _strong(jnp.where(m == 0, jnp.ones_like(out), out))


def i0e(x):
    """``exp(-|x|) I0(x)``, the exponentially scaled modified Bessel function of order 0.

    Examples
    --------
    >>> from absjit.scipy.special import i0e
    >>> round(float(i0e(1.0)), 5)
    0.46576
    """
    (x,) = _promote(x)
    return lax.bessel_i0e(x)


def i1e(x):
    """``exp(-|x|) I1(x)``, the exponentially scaled modified Bessel function of order 1.

    Examples
    --------
    >>> from absjit.scipy.special import i1e
    >>> round(float(i1e(1.0)), 5)
    0.20791
    """
    (x,) = _promote(x)
    return lax.bessel_i1e(x)


def i0(x):
    """The modified Bessel function of order 0, ``exp(|x|) * i0e(x)``.

    Examples
    --------
    >>> from absjit.scipy.special import i0
    >>> round(float(i0(1.0)), 5)
    1.26607
    """
    (x,) = _promote(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    """The modified Bessel function of order 1, ``exp(|x|) * i1e(x)``.

    Examples
    --------
    >>> from absjit.scipy.special import i1
    >>> round(float(i1(1.0)), 5)
    0.56516
    """
    (x,) = _promote(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


def zeta(x, q=None):
    """The Hurwitz zeta function ``sum_k (q + k) ** -x`` for ``x > 1``.

    ``q=None`` gives the Riemann zeta function for ``x > 1`` (``q = 1``; JAX raises
    ``NotImplementedError`` there); below ``x = 1`` the result is NaN (SciPy continues
    the Riemann function analytically).

    Examples
    --------
    >>> from absjit.scipy.special import zeta
    >>> round(float(zeta(2.0, 1.0)), 5)
    1.64493
    """
    if q is None:
        (x,) = _promote(x)
        q = jnp.ones_like(x)
    x, q = _promote(x, q)
    x, q = jnp.broadcast_arrays(x, q)
    return lax.zeta(x, q)


def polygamma(n, x):
    """The ``n``-th derivative of the digamma function, for integer ``n >= 0``:
    ``(-1)**(n+1) n! zeta(n + 1, x)`` for ``n >= 1``; NaN at the poles.

    Examples
    --------
    >>> from absjit.scipy.special import polygamma
    >>> round(float(polygamma(1, 1.0)), 5)   # pi**2 / 6
    1.64493
    """
    n_arr = jnp.asarray(n)
    if not dtypes.is_integer(get_aval(n_arr).dtype):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{get_aval(n_arr).dtype.name}.")
    n, x = _promote(n_arr, x)
    n, x = jnp.broadcast_arrays(n, x)
    nfact = jnp.exp(lax.lgamma(n + 1))
    sign = jnp.where(jnp.remainder(n, 2) == 0, -jnp.ones_like(n), jnp.ones_like(n))
    high = sign * nfact * lax.zeta(n + 1, x)
    # At the poles odd orders are +inf (zeta's pole); even orders have no sign: NaN.
    pole = (x <= 0) & (x == jnp.floor(x)) & (sign < 0)
    high = jnp.where(pole, jnp.full_like(high, np.nan), high)
    return _to_weak(jnp.where(n == 0, lax.digamma(x), high), get_aval(x).weak_type)


def _axes(x, axis):
    return tuple(range(get_aval(x).ndim)) if axis is None else axis


def log_softmax(x, /, *, axis=None):
    """``x - logsumexp(x, axis)``; ``axis=None`` reduces over all axes (as JAX's
    ``scipy.special`` version).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy.special import log_softmax
    >>> log_softmax(jnp.array([0.0, 0.0]))
    Array([-0.6931472, -0.6931472], dtype=float32)
    """
    (x,) = _promote(x)
    axes = _axes(x, axis)
    shifted = x - lax.stop_gradient(jnp.max(x, axes, keepdims=True))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axes, keepdims=True))


def softmax(x, /, *, axis=None):
    """``exp(x) / sum(exp(x), axis)``, stably; ``axis=None`` normalizes over all axes.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy.special import softmax
    >>> softmax(jnp.array([0.0, 0.0]))
    Array([0.5, 0.5], dtype=float32)
    """
    (x,) = _promote(x)
    axes = _axes(x, axis)
    e = jnp.exp(x - lax.stop_gradient(jnp.max(x, axes, keepdims=True)))
    return e / jnp.sum(e, axes, keepdims=True)


def rel_entr(p, q):
    """Elementwise relative entropy ``p log(p / q)``: 0 where ``p == 0 <= q``, ``inf``
    where either is negative or ``q == 0 < p``.

    Examples
    --------
    >>> from absjit.scipy.special import rel_entr
    >>> round(float(rel_entr(1.0, 2.0)), 5)
    -0.69315
    """
    p, q = _promote(p, q)
    p, q = jnp.broadcast_arrays(p, q)
    both = (p > 0) & (q > 0)
    safe_p = jnp.where(both, p, jnp.ones_like(p))
    safe_q = jnp.where(both, q, jnp.ones_like(q))
    out = jnp.where(both, safe_p * jnp.log(safe_p / safe_q), jnp.full_like(p, np.inf))
    return _weak_as(jnp.where((p == 0) & (q >= 0), jnp.zeros_like(p), out), p, q)


def kl_div(p, q):
    """Elementwise Kullback-Leibler divergence ``p log(p / q) - p + q`` (``q`` where
    ``p == 0 <= q``; ``inf`` where either is negative or ``q == 0 < p``).

    Examples
    --------
    >>> from absjit.scipy.special import kl_div
    >>> round(float(kl_div(1.0, 2.0)), 5)
    0.30685
    """
    p, q = _promote(p, q)
    p, q = jnp.broadcast_arrays(p, q)
    both = (p > 0) & (q > 0)
    safe_p = jnp.where(both, p, jnp.ones_like(p))
    safe_q = jnp.where(both, q, jnp.ones_like(q))
    out = jnp.where(both, safe_p * jnp.log(safe_p / safe_q) - safe_p + safe_q,
                    jnp.full_like(p, np.inf))
    return _weak_as(jnp.where((p == 0) & (q >= 0), q, out), p, q)


# erfcx: exp(x**2) erfc(x) directly below _ERFCX_CUT, the continued fraction of erfc
# (evaluated bottom-up with a fixed depth, enough for float64 there) above it.
_ERFCX_CUT = 3.0
_ERFCX_DEPTH = 30


def _erfcx_impl(x):
    ax = jnp.maximum(x, _ERFCX_CUT)
    frac = ax
    for k in range(_ERFCX_DEPTH, 0, -1):
        frac = ax + (k / 2) / frac
    cf = 1 / (math.sqrt(math.pi) * frac)
    xs = jnp.minimum(x, _ERFCX_CUT)
    direct = jnp.exp(xs * xs) * lax.erfc(xs)
    out = jnp.where(x > _ERFCX_CUT, cf, direct)
    out = jnp.where(x == np.inf, jnp.zeros_like(x), out)
    return jnp.where(x == -np.inf, jnp.full_like(x, np.inf), out)


@custom_jvp
def _erfcx(x):
    return _erfcx_impl(x)


@_erfcx.defjvp
def _erfcx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _erfcx(x)
    return y, t * (2 * x * y - 2 / math.sqrt(math.pi))


def erfcx(x):
    """The scaled complementary error function ``exp(x**2) * erfc(x)``, accurate for
    large positive ``x`` (where ``erfc`` underflows). Strongly typed, as in JAX.

    Examples
    --------
    >>> from absjit.scipy.special import erfcx
    >>> round(float(erfcx(1.0)), 5)
    0.42758
    """
    (x,) = _promote(x)
    return _erfcx(x)


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (a concrete
    integer): ``d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2)``.

    Examples
    --------
    >>> from absjit.scipy.special import multigammaln
    >>> round(float(multigammaln(2.5, 2)), 5)
    0.85705
    """
    d = _concrete_d(d)
    (a,) = _promote(a)
    total = jnp.zeros_like(a) + (d * (d - 1) / 4) * math.log(math.pi)
    for j in range(d):
        total = total + lax.lgamma(a - j / 2)
    return total


def bernoulli(n):
    """The Bernoulli numbers ``B_0, ..., B_n`` (``B_1 = -1/2``), for a concrete
    integer ``n >= 0``, computed exactly and rounded to the default float (JAX's
    values come from an approximation and differ in the last digits).

    Examples
    --------
    >>> from absjit.scipy.special import bernoulli
    >>> bernoulli(4)
    Array([ 1.        , -0.5       ,  0.16666667,  0.        , -0.03333334],
          dtype=float32)
    """
    from fractions import Fraction
    n = int(n)   # a tracer raises ConcretizationTypeError here
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    row = [Fraction(0)] * (n + 1)
    out = []
    for m in range(n + 1):   # Akiyama-Tanigawa gives B_1 = +1/2; SciPy's sign is -
        row[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(-row[0] if m == 1 else row[0])
    return jnp.asarray(np.array([float(b) for b in out]), dtype=dtypes.default_float())


def _concrete_d(d):
    from ..errors import ConcretizationTypeError
    try:
        return int(d)
    except ConcretizationTypeError:
        raise
    except TypeError as e:
        raise TypeError(f"multigammaln needs a concrete integer d, got {d!r}") from e


# ---------------------------------------------------------------------------
# Exponential integrals
# ---------------------------------------------------------------------------
_EULER = 0.57721566490153286061
_E1_CUT = 2.0        # series below, continued fraction above (1.0 in float32, where
                     # the series' cancellation near 2 costs a few ulps)
_E1_SERIES = 30      # 2**30 / (30 * 30!) ~ 1e-25
_E1_DEPTH = 40       # the even contraction of the continued fraction: ~1e-14 at 2
_EI_CUT = 40.0       # series below, asymptotic expansion above (its smallest term
_EI_SERIES = 150     # at k ~ x is ~ exp(-x))
_EI_ASYMP = 40


def _e1_positive(x):
    """``E1(x)`` for ``x > 0``: the alternating power series where ``x <= 2``, the
    continued fraction ``exp(-x) / (x + 1 - 1/(x + 3 - 4/(x + 5 - ...)))`` above."""
    cut = _E1_CUT if get_aval(x).dtype == np.float64 else 1.0
    xs = jnp.minimum(x, cut)
    term = jnp.ones_like(x)
    total = jnp.zeros_like(x)
    for k in range(1, _E1_SERIES + 1):
        term = -term * xs / k
        total = total - term / k
    series = -_EULER - jnp.log(xs) + total
    xl = jnp.maximum(x, cut)
    frac = xl + (2 * _E1_DEPTH + 1)
    for k in range(_E1_DEPTH, 0, -1):
        frac = xl + (2 * k - 1) - (k * k) / frac
    cf = jnp.exp(-xl) / frac
    return jnp.where(x <= cut, series, cf)


def _ei_positive(x):
    """``Ei(x)`` for ``x > 0``: the power series (all terms positive) where
    ``x <= 40``, the asymptotic expansion ``exp(x)/x sum k!/x**k`` above."""
    xs = jnp.minimum(x, _EI_CUT)

    def body(k, carry):
        term, total = carry
        kf = lax.convert_element_type(k, get_aval(x).dtype)
        term = term * xs / kf
        return term, total + term / kf
    _, total = lax.fori_loop(1, _EI_SERIES + 1, body, (jnp.ones_like(x), jnp.zeros_like(x)))
    series = _EULER + jnp.log(xs) + total
    xl = jnp.maximum(x, _EI_CUT)
    term = jnp.ones_like(x)
    acc = jnp.ones_like(x)
    for k in range(1, _EI_ASYMP):
        term = term * k / xl
        acc = acc + term
    asymp = jnp.exp(xl) / xl * acc
    return jnp.where(x <= _EI_CUT, series, asymp)


def _e1_impl(x):
    pos = jnp.where(x > 0, x, jnp.ones_like(x))
    out = _e1_positive(pos)
    out = jnp.where(x == 0, jnp.full_like(x, np.inf), out)
    out = jnp.where(x == np.inf, jnp.zeros_like(x), out)
    return jnp.where((x < 0) | jnp.isnan(x), jnp.full_like(x, np.nan), out)


def _ei_impl(x):
    ax = jnp.where(x == 0, jnp.ones_like(x), jnp.abs(x))
    out = jnp.where(x > 0, _ei_positive(ax), -_e1_positive(ax))
    out = jnp.where(x == 0, jnp.full_like(x, -np.inf), out)
    out = jnp.where(x == np.inf, jnp.full_like(x, np.inf), out)
    return jnp.where(x == -np.inf, jnp.zeros_like(x), out)


@custom_jvp
def _exp1(x):
    return _e1_impl(x)


@_exp1.defjvp
def _exp1_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _exp1(x), t * (-jnp.exp(-x) / x)


@custom_jvp
def _expi(x):
    return _ei_impl(x)


@_expi.defjvp
def _expi_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _expi(x), t * (jnp.exp(x) / x)


def exp1(x):
    """The exponential integral ``E1(x) = int_1^inf exp(-x t) / t dt`` for ``x >= 0``
    (NaN below 0, ``inf`` at 0). Strongly typed, as JAX. At ``x = inf`` it gives
    SciPy's limit 0 (JAX gives NaN).

    Examples
    --------
    >>> from absjit.scipy.special import exp1
    >>> round(float(exp1(1.0)), 5)
    0.21938
    """
    (x,) = _promote(x)
    return _exp1(x)


def expi(x):
    """The exponential integral ``Ei(x)`` (``-E1(-x)`` for ``x < 0``). Strongly typed,
    as JAX. At ``0`` and ``±inf`` it gives SciPy's limits ``-inf``, ``inf`` and 0
    (JAX gives NaN there).

    Examples
    --------
    >>> from absjit.scipy.special import expi
    >>> round(float(expi(1.0)), 5)
    1.89512
    """
    (x,) = _promote(x)
    return _expi(x)


def boxcox(x, lmbda):
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log(x)`` for
    ``lmbda == 0``).

    Examples
    --------
    >>> from absjit.scipy.special import boxcox
    >>> float(boxcox(2.0, 2.0))
    1.5
    """
    x, lmbda = _promote(x, lmbda)
    logx = jnp.log(x)
    safe = jnp.where(lmbda == 0, jnp.ones_like(lmbda), lmbda)
    return _weak_as(jnp.where(lmbda == 0, logx, jnp.expm1(lmbda * logx) / safe), x, lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of ``1 + x``, accurate for small ``x``.

    Examples
    --------
    >>> from absjit.scipy.special import boxcox1p
    >>> float(boxcox1p(1.0, 2.0))
    1.5
    """
    x, lmbda = _promote(x, lmbda)
    logx = jnp.log1p(x)
    safe = jnp.where(lmbda == 0, jnp.ones_like(lmbda), lmbda)
    return _weak_as(jnp.where(lmbda == 0, logx, jnp.expm1(lmbda * logx) / safe), x, lmbda)
