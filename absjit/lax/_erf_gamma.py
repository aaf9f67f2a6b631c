"""Special functions as composites of elementwise primitives: ``erf``, ``erfc``,
``erf_inv``, ``lgamma``, ``digamma`` and ``polygamma(1, x)`` (``trigamma``).

Each follows the algorithm XLA uses on the CPU (StableHLO's CHLO decompositions), so
float32 results agree with ``jax.lax`` to an ulp or two; because they are built from
``lax`` elementwise operations they trace, fuse and compile like any other code (no
new primitive, no new lowering). Each carries a ``custom_jvp`` with the analytic
derivative:

====================  =========================================
``erf``               ``2/sqrt(pi) * exp(-x**2)``
``erfc``              ``-2/sqrt(pi) * exp(-x**2)``
``erf_inv``           ``sqrt(pi)/2 * exp(erf_inv(x)**2)``
``lgamma``            ``digamma(x)``
``digamma``           ``polygamma(1, x)``
``polygamma(1, x)``   ``polygamma(2, x)`` (by its own series)
====================  =========================================

float16 and bfloat16 inputs are computed in float32 and rounded back, as XLA does.

XLA's CPU compiler contracts ``a * b + c`` into fused multiply-adds in the Horner
loops; the float32 ``erf`` and ``erf_inv`` here make the same steps single-rounding
``fma`` operations (``absjit.ops.fma``, a hardware FMA on the cpu backend), and
``erf_inv`` computes ``log1p`` with XLA's own float32 algorithm, so float32
``erf_inv`` (hence ``random.normal``) equals ``jax.lax.erf_inv`` under ``jax.jit`` on the
CPU bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..core.trace import get_aval
from ..custom_derivatives import custom_jvp
from ..ops import elementwise as ew
from ..ops.fma import fma_p
from ..ops.structural import broadcast_in_dim
from ..ops.values import asarray

__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma"]


# ---------------------------------------------------------------------------
# Small helpers: constants of the operand's dtype, broadcasting select
# ---------------------------------------------------------------------------
def _c(v, like):
    return ew._const(v, like)


def _full(v, like):
    aval = get_aval(like)
    return broadcast_in_dim(_c(v, like), aval.shape, ())


def _where(pred, a, b):
    # select_n broadcasts a rank-0 case against a full one: only when neither case
    # has the predicate's shape is one of them broadcast (fewer equations to fuse).
    shape = get_aval(pred).shape
    if get_aval(a).shape != shape and get_aval(b).shape != shape:
        a = broadcast_in_dim(a, shape, ())
    return ew.select(pred, a, b)


def _poly(x, coeffs):
    """Horner's rule, highest coefficient first, starting from 0 (as CHLO does)."""
    p = _full(0.0, x)
    for c in coeffs:
        p = ew.add(ew.mul(p, x), _c(c, x))
    return p


def _float_input(name, x):
    x = asarray(x)
    dt = get_aval(x).dtype
    if dtypes.is_integer(dt) or dtypes.is_bool(dt):
        x = ew.convert_element_type(x, dtypes.default_float(), get_aval(x).weak_type)
    elif not dtypes.is_float(get_aval(x).dtype):
        raise TypeError(f"lax.{name} does not accept dtype {dt.name}. Accepted dtypes are "
                        "subtypes of floating.")
    return x


def _keep_weak(x, y):
    """Custom-JVP outputs are strongly typed; restore the input's weak type."""
    aval = get_aval(x)
    if aval.weak_type and not get_aval(y).weak_type:
        return ew.convert_element_type_p.bind(y, new_dtype=aval.dtype, weak_type=True)
    return y


def _upcast(fn):
    """Run ``fn`` in float32 for float16/bfloat16 inputs, as XLA does."""
    def wrapped(x):
        aval = get_aval(x)
        if aval.dtype == dtypes.float16 or dtypes.is_bfloat16(aval.dtype):
            y = fn(ew.convert_element_type(x, dtypes.float32, aval.weak_type))
            return ew.convert_element_type(y, aval.dtype, aval.weak_type)
        return fn(x)
    wrapped.__name__ = fn.__name__
    return wrapped


# ---------------------------------------------------------------------------
# erf and erfc
# ---------------------------------------------------------------------------
_ERF64_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
            7.00332514112805075473E3, 5.55923013010394962768E4)
_ERF64_U = (1.0, 3.35617141647503099647E1, 5.21357949780152679795E2,
            4.59432382970980127987E3, 2.26290000613890934246E4, 4.92673942608635921086E4)
_ERFC64_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
             4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
             9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_ERFC64_Q = (1.0, 1.32281951154744992508E1, 8.67072140885989742329E1,
             3.54937778887819891062E2, 9.75708501743205489753E2, 1.82390916687909736289E3,
             2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC64_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
             6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC64_S = (1.0, 2.26052863220117276590E0, 9.39603524938001434673E0,
             1.20489539808096656605E1, 1.70814450747565897222E1, 9.60896809063285878198E0,
             3.36907645100081516050E0)
_ERFC32_P = (2.326819970068386E-2, -1.387039388740657E-1, 3.687424674597105E-1,
             -5.824733027278666E-1, 6.210004621745983E-1, -4.944515323274145E-1,
             3.404879937665872E-1, -2.741127028184656E-1, 5.638259427386472E-1)
_ERFC32_R = (-1.047766399936249E+1, 1.297719955372516E+1, -7.495518717768503E+0,
             2.921019019210786E+0, -1.015265279202700E+0, 4.218463358204948E-1,
             -2.820767439740514E-1, 5.641895067754075E-1)
_ERF32_T = (7.853861353153693E-5, -8.010193625184903E-4, 5.188327685732524E-3,
            -2.685381193529856E-2, 1.128358514861418E-1, -3.761262582423300E-1,
            1.128379165726710E+0)


def _f32(bits):
    return float(np.array(bits, np.uint32).view(np.float32))


# XLA:CPU's float32 erf: x * P(x^2) / Q(x^2) on |x| < 3.8325, sign(x) beyond, with
# every Horner step a fused multiply-add.
_ERF32_CUT = _f32(0x407547CB)
_ERF32_P = tuple(_f32(b) for b in (0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740,
                                   0x3F906EBA))
_ERF32_Q = tuple(_f32(b) for b in (0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4,
                                   0x3DE34C21, 0x3EFEB44A, 0x3F800000))


def _horner_fma(x, coeffs):
    p = _full(coeffs[0], x)
    for c in coeffs[1:]:
        p = _fma32(x, p, _c(c, x))
    return p


def _erf32(x):
    x2 = ew.mul(x, x)
    r = ew.div(ew.mul(x, _horner_fma(x2, _ERF32_P)), _horner_fma(x2, _ERF32_Q))
    big = ew.ge(ew.abs(x), _c(_ERF32_CUT, x))
    return _where(big, ew.sign(x), r)


def _erf64_small(x):
    x2 = ew.mul(x, x)
    return ew.div(ew.mul(x, _poly(x2, _ERF64_T)), _poly(x2, _ERF64_U))


def _erfc64_large(x):
    z = ew.neg(ew.mul(x, x))
    ax = ew.abs(x)
    ez = ew.exp(z)
    small = ew.div(ew.mul(ez, _poly(ax, _ERFC64_P)), _poly(ax, _ERFC64_Q))
    large = ew.div(ew.mul(ez, _poly(ax, _ERFC64_R)), _poly(ax, _ERFC64_S))
    r = _where(ew.lt(ax, _c(8.0, x)), small, large)
    r = _where(ew.lt(z, _c(-7.09782712893383996843E2, x)), _c(0.0, x), r)
    return _where(ew.lt(x, _c(0.0, x)), ew.sub(_c(2.0, x), r), r)


def _erf32_small(x):
    return ew.mul(x, _poly(ew.mul(x, x), _ERF32_T))


def _erfc32_large(x):
    x2 = ew.mul(x, x)
    z = ew.neg(x2)
    ax = ew.abs(x)
    one = _c(1.0, x)
    rx2 = ew.div(one, x2)
    scale = ew.mul(ew.exp(z), ew.div(one, ax))
    poly = _where(ew.lt(ax, _c(2.0, x)), _poly(rx2, _ERFC32_P), _poly(rx2, _ERFC32_R))
    r = ew.mul(scale, poly)
    r = _where(ew.lt(z, _c(-88.72283905206835, x)), _c(0.0, x), r)
    return _where(ew.lt(x, _c(0.0, x)), ew.sub(_c(2.0, x), r), r)


@_upcast
def _erf_impl(x):
    if get_aval(x).dtype == dtypes.float64:
        one = _c(1.0, x)
        return _where(ew.lt(ew.abs(x), one), _erf64_small(x),
                      ew.sub(one, _erfc64_large(x)))
    return _erf32(x)


@_upcast
def _erfc_impl(x):
    one = _c(1.0, x)
    if get_aval(x).dtype == dtypes.float64:
        small, large = _erf64_small, _erfc64_large
    else:
        small, large = _erf32_small, _erfc32_large
    return _where(ew.lt(ew.abs(x), one), ew.sub(one, small(x)), large(x))


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@custom_jvp
def _erf(x):
    return _erf_impl(x)


@_erf.defjvp
def _erf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    d = ew.mul(_c(_TWO_OVER_SQRT_PI, x), ew.exp(ew.neg(ew.mul(x, x))))
    return _erf(x), ew.mul(t, d)


@custom_jvp
def _erfc(x):
    return _erfc_impl(x)


@_erfc.defjvp
def _erfc_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    d = ew.mul(_c(-_TWO_OVER_SQRT_PI, x), ew.exp(ew.neg(ew.mul(x, x))))
    return _erfc(x), ew.mul(t, d)


def erf(x):
    """The error function, elementwise (``jax.lax.erf``).

    Examples
    --------
    >>> from absjit import lax
    >>> lax.erf(0.5)
    Array(0.5204999, dtype=float32, weak_type=True)
    """
    x = _float_input("erf", x)
    return _keep_weak(x, _erf(x))


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate in the tails.

    Examples
    --------
    >>> from absjit import lax
    >>> float(lax.erfc(3.0)) < 3e-5
    True
    """
    x = _float_input("erfc", x)
    return _keep_weak(x, _erfc(x))


# ---------------------------------------------------------------------------
# erf_inv (Giles, "Approximating the erfinv function")
# ---------------------------------------------------------------------------
_ERFINV32_LT5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV32_GE5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_ERFINV64_LT625 = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_ERFINV64_LT16 = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_ERFINV64_GE16 = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)


def _fma32(a, b, c):
    """``a * b + c`` for float32 with one rounding (a fused multiply-add)."""
    return fma_p.bind(a, b, c)


# XLA:CPU's float32 log1p, as its elemental emitter builds it and LLVM contracts it:
# a Cephes-style rational function of x on |x| < 0x3ED413CD (about sqrt(2) - 1), and
# log(1 + x) elsewhere by XLA's own float32 log (mantissa in [sqrt(1/2), sqrt(2)), a
# degree-9 polynomial in Estrin form, the exponent times ln 2 split in two parts).
_LOG1P32_SMALL = _f32(0x3ED413CD)
_LOG1P32_NUM = (float(np.float32(4.527e-05)),) + tuple(
    _f32(b) for b in (0x3EFF40C5, 0x40D284FA, 0x41EF4B9C, 0x4273CC76, 0x426473AD,
                      0x41A05101))
_LOG1P32_DEN = tuple(_f32(b) for b in (0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3,
                                       0x43586D8A, 0x42707982))
_LOG32_P = tuple(_f32(b) for b in (0x3D9021BB, 0xBDEBD1B8, 0xBDFE5D4F, 0x3E11E9BF,
                                   0x3E4CCEAC, 0xBE7FFFFC, 0x3DEF251A, 0xBE2AAE50,
                                   0x3EAAAAAA))
_LN2_LO, _LN2_HI = _f32(0xB95E8083), _f32(0x3F318000)


def _frexp32(y):
    """``(m, e)`` with ``y = m * 2**e``, ``m`` in ``[0.5, 1)``, for ``y`` in
    ``[2**-31, 1)`` (``y = 1`` gives ``(1, 0)``), by exact scalings by powers of two
    (XLA reads the exponent bits; the values are the same)."""
    e = _c(0.0, y)
    for k in (16, 8, 4, 2, 1):
        small = ew.lt(y, _c(2.0 ** -k, y))
        y = _where(small, ew.mul(y, _c(2.0 ** k, y)), y)
        e = _where(small, ew.sub(e, _c(k, y)), e)
    return y, e


def _log32_xla(y):
    """XLA:CPU's float32 ``log(y)`` for ``y = 1 - x*x`` in ``erf_inv``: in
    ``[2**-24, 1]`` (``log(1) = 0`` whether ``1`` splits as ``1 * 2**0`` or as XLA's
    ``0.5 * 2**1``), NaN for ``y < 0``; ``y = 0`` (``|x| = 1``) is ``erf_inv``'s edge
    case, selected there."""
    m, e = _frexp32(y)
    low = ew.lt(m, _c(_f32(0x3F3504F3), y))
    z = ew.add(ew.add(m, _c(-1.0, y)), _where(low, m, _c(0.0, y)))
    e = _where(low, ew.sub(e, _c(1.0, y)), e)
    z2 = ew.mul(z, z)
    z3 = ew.mul(z2, z)
    c = [_c(v, y) for v in _LOG32_P]
    q1 = _fma32(_fma32(z, c[0], c[1]), z, c[6])
    q2 = _fma32(_fma32(z, c[2], c[3]), z, c[7])
    q3 = _fma32(_fma32(z, c[4], c[5]), z, c[8])
    r = _fma32(_fma32(_fma32(q1, z3, q2), z3, q3), z3, ew.mul(e, _c(_LN2_LO, y)))
    t = _fma32(_c(-0.5, y), z2, z)
    out = _fma32(e, _c(_LN2_HI, y), ew.add(t, r))
    return _where(ew.ge(y, _c(0.0, y)), out, _c(np.nan, y))


def _log1p32_xla(x):
    """XLA:CPU's float32 ``log1p``, bit for bit where its result is deterministic."""
    big = _log32_xla(ew.add(x, _c(1.0, x)))
    x2 = ew.mul(x, x)
    num = _full(_LOG1P32_NUM[0], x)
    for v in _LOG1P32_NUM[1:]:
        num = _fma32(num, x, _c(v, x))
    den = ew.add(x, _c(_LOG1P32_DEN[0], x))
    for v in _LOG1P32_DEN[1:]:
        den = _fma32(den, x, _c(v, x))
    small = _fma32(_c(-0.5, x), x2, ew.mul(ew.mul(x, x2), ew.div(num, den)))
    return _where(ew.lt(ew.abs(x), _c(_LOG1P32_SMALL, x)), ew.add(x, small), big)


def _erf_inv32(x):
    w = ew.neg(_log1p32_xla(ew.mul(x, ew.neg(x))))
    lt = ew.lt(w, _c(5.0, x))
    w = _where(lt, ew.sub(w, _c(2.5, x)), ew.sub(ew.sqrt(w), _c(3.0, x)))

    def coef(i):
        return _where(lt, _c(_ERFINV32_LT5[i], x), _c(_ERFINV32_GE5[i], x))

    p = coef(0)
    for i in range(1, 9):
        p = _fma32(p, w, coef(i))
    return ew.mul(p, x)


def _erf_inv64(x):
    w = ew.neg(ew.log1p(ew.mul(x, ew.neg(x))))
    lt625 = ew.lt(w, _c(6.25, x))
    lt16 = ew.lt(w, _c(16.0, x))

    def coef(i):
        c = _full(_ERFINV64_LT625[i], x)
        if i < 19:
            c = _where(lt625, c, _c(_ERFINV64_LT16[i], x))
        if i < 17:
            c = _where(lt16, c, _c(_ERFINV64_GE16[i], x))
        return c

    sw = ew.sub(ew.sqrt(w), _where(lt16, _c(3.25, x), _c(5.0, x)))
    w = _where(lt625, ew.sub(w, _c(3.125, x)), sw)
    p = coef(0)
    for i in range(1, 23):
        step = ew.add(coef(i), ew.mul(p, w))
        p = step if i < 17 else _where(lt16 if i < 19 else lt625, step, p)
    return ew.mul(p, x)


@_upcast
def _erf_inv_impl(x):
    r = _erf_inv64(x) if get_aval(x).dtype == dtypes.float64 else _erf_inv32(x)
    edge = ew.eq(ew.abs(x), _c(1.0, x))
    return _where(edge, ew.mul(x, _c(np.inf, x)), r)


@custom_jvp
def _erf_inv(x):
    return _erf_inv_impl(x)


@_erf_inv.defjvp
def _erf_inv_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _erf_inv(x)
    d = ew.mul(_c(math.sqrt(math.pi) / 2.0, x), ew.exp(ew.mul(y, y)))
    return y, ew.mul(t, d)


def erf_inv(x):
    """The inverse error function on ``(-1, 1)``; ``±inf`` at ``±1``, NaN outside.

    Examples
    --------
    >>> from absjit import lax
    >>> lax.erf_inv(0.5)
    Array(0.47693628, dtype=float32, weak_type=True)
    """
    x = _float_input("erf_inv", x)
    return _keep_weak(x, _erf_inv(x))


# ---------------------------------------------------------------------------
# lgamma, digamma, trigamma (Lanczos approximation, g = 7, n = 9)
# ---------------------------------------------------------------------------
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _reflect_z(x):
    half, one = _c(0.5, x), _c(1.0, x)
    reflect = ew.lt(x, half)
    return reflect, _where(reflect, ew.neg(x), ew.sub(x, one))


def _log_t(z):
    gh = _LANCZOS_G + 0.5
    t = ew.add(_c(gh, z), z)
    log_t = ew.add(_c(math.log(gh), z), ew.log1p(ew.div(z, _c(gh, z))))
    return t, log_t


@_upcast
def _lgamma_impl(x):
    reflect, z = _reflect_z(x)
    a = _full(_LANCZOS_BASE, x)
    for i, c in enumerate(_LANCZOS):
        a = ew.add(a, ew.div(_c(c, x), ew.add(z, _c(i + 1, x))))
    t, log_t = _log_t(z)
    r = ew.mul(ew.sub(ew.add(z, _c(0.5, x)), ew.div(t, log_t)), log_t)
    lg = ew.add(ew.add(_c((math.log(2) + math.log(math.pi)) / 2, x), r), ew.log(a))
    ax = ew.abs(x)
    frac = ew.sub(ax, ew.floor(ax))
    frac = _where(ew.lt(_c(0.5, x), frac), ew.sub(_c(1.0, x), frac), frac)
    denom = ew.log(ew.sin(ew.mul(_c(math.pi, x), frac)))
    refl = ew.sub(ew.sub(_c(math.log(math.pi), x), denom), lg)
    refl = _where(ew.is_finite(denom), refl, ew.neg(denom))
    lg = _where(reflect, refl, lg)
    is_inf = ew.eq(ew.abs(x), _c(np.inf, x))
    return _where(is_inf, _c(np.inf, x), lg)


@_upcast
def _digamma_impl(x):
    reflect, z = _reflect_z(x)
    a = _full(_LANCZOS_BASE, x)
    a_prime = _full(0.0, x)
    for i, c in enumerate(_LANCZOS):
        zi = ew.add(z, _c(i + 1, x))
        a_prime = ew.sub(a_prime, ew.div(_c(c, x), ew.mul(zi, zi)))
        a = ew.add(a, ew.div(_c(c, x), zi))
    t, log_t = _log_t(z)
    dg = ew.sub(ew.add(log_t, ew.div(a_prime, a)), ew.div(_c(_LANCZOS_G, x), t))
    reduced = ew.add(x, ew.abs(ew.floor(ew.add(x, _c(0.5, x)))))
    pix = ew.mul(_c(math.pi, x), reduced)
    refl = ew.sub(dg, ew.div(ew.mul(_c(math.pi, x), ew.cos(pix)), ew.sin(pix)))
    dg = _where(reflect, refl, dg)
    pole = ew.bitwise_and(ew.le(x, _c(0.0, x)), ew.eq(x, ew.floor(x)))
    return _where(pole, _c(np.nan, x), dg)


def _polygamma_series(x, n):
    """``polygamma(n, x)`` for n = 1, 2: shift ``x`` up past 8 with the recurrence
    ``psi_n(x) = psi_n(x + 1) + (-1)**(n+1) n! / x**(n+1)``, then the asymptotic
    series; ``x < 0.5`` by reflection for n = 1 (poles give NaN/inf as scipy does)."""
    one = _c(1.0, x)
    sign = 1.0 if n % 2 else -1.0
    nfact = float(math.factorial(n))
    y = x
    acc = _full(0.0, x)
    for _ in range(8):
        small = ew.lt(y, _c(8.0, x))
        term = ew.div(_c(sign * nfact, x), ew.integer_pow(y, n + 1))
        acc = _where(small, ew.add(acc, term), acc)
        y = _where(small, ew.add(y, one), y)
    iy = ew.div(one, y)
    iy2 = ew.mul(iy, iy)
    if n == 1:   # 1/y + 1/(2y^2) + sum B_2k / y^(2k+1)
        b = (1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730)
        s = _full(0.0, x)
        for c in reversed(b):
            s = ew.add(_c(c, x), ew.mul(s, iy2))
        tail = ew.add(ew.add(iy, ew.mul(_c(0.5, x), iy2)), ew.mul(ew.mul(iy, iy2), s))
    else:        # -(1/y^2 + 1/y^3 + sum (2k+1) B_2k / y^(2k+2))
        b = (3.0 / 6, -5.0 / 30, 7.0 / 42, -9.0 / 30, 11.0 * 5.0 / 66)
        s = _full(0.0, x)
        for c in reversed(b):
            s = ew.add(_c(c, x), ew.mul(s, iy2))
        tail = ew.neg(ew.add(ew.add(iy2, ew.mul(iy, iy2)), ew.mul(ew.mul(iy2, iy2), s)))
    return ew.add(acc, tail)


@_upcast
def _trigamma_impl(x):
    reflect = ew.lt(x, _c(0.5, x))
    pos = _polygamma_series(_where(reflect, ew.sub(_c(1.0, x), x), x), 1)
    s = ew.sin(ew.mul(_c(math.pi, x), x))
    refl = ew.sub(ew.div(_c(math.pi ** 2, x), ew.mul(s, s)), pos)
    out = _where(reflect, refl, pos)
    pole = ew.bitwise_and(ew.le(x, _c(0.0, x)), ew.eq(x, ew.floor(x)))
    return _where(pole, _c(np.inf, x), out)


@_upcast
def _tetragamma_impl(x):
    return _polygamma_series(x, 2)


@custom_jvp
def _trigamma(x):
    return _trigamma_impl(x)


@_trigamma.defjvp
def _trigamma_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _trigamma(x), ew.mul(t, _tetragamma_impl(x))


@custom_jvp
def _digamma(x):
    return _digamma_impl(x)


@_digamma.defjvp
def _digamma_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _digamma(x), ew.mul(t, _trigamma(x))


@custom_jvp
def _lgamma(x):
    return _lgamma_impl(x)


@_lgamma.defjvp
def _lgamma_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _lgamma(x), ew.mul(t, _digamma(x))


def lgamma(x):
    """``log|Gamma(x)|``, elementwise (Lanczos approximation, as XLA).

    Examples
    --------
    >>> from absjit import lax
    >>> round(float(lax.lgamma(5.0)), 4)   # log(24)
    3.1781
    """
    x = _float_input("lgamma", x)
    return _keep_weak(x, _lgamma(x))


def digamma(x):
    """The digamma function ``d/dx lgamma(x)``; NaN at the poles ``0, -1, -2, ...``.

    Examples
    --------
    >>> from absjit import lax
    >>> round(float(lax.digamma(1.0)), 4)   # -euler_gamma
    -0.5772
    """
    x = _float_input("digamma", x)
    return _keep_weak(x, _digamma(x))


def polygamma(n, x):
    """``polygamma(n, x)`` for ``n`` in ``{0, 1}`` (a static Python int): the digamma
    and trigamma functions. Higher orders are not provided.

    Examples
    --------
    >>> from absjit import lax
    >>> round(float(lax.polygamma(1, 1.0)), 4)   # pi**2 / 6
    1.6449
    """
    n = int(n)
    if n == 0:
        return digamma(x)
    if n == 1:
        x = _float_input("polygamma", x)
        return _keep_weak(x, _trigamma(x))
    raise NotImplementedError(f"polygamma is provided for n = 0 and 1, got n = {n}")
