"""Regression tests for inputs that used to give a silently wrong answer: each case
now agrees eagerly, under ``jit(backend="interpret")`` and ``jit(backend="cpu")`` (the
``mode`` fixture), with JAX where it is installed, or raises a clear error."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.base import CompileOptions
from tests.checks import jax, jax_numpy


# -- 1. integer power with negative exponents ------------------------------------------
def _int_pow_ref(x: int, e: int, dtype) -> int:
    """JAX's rule for integer ``x ** e``: binary exponentiation over the six low bits of
    ``e`` (two's complement), wrapping to ``dtype``; ``0 ** e`` is 0 for ``e != 0``."""
    bits = np.iinfo(dtype).bits
    if x == 0 and e != 0:
        return 0
    wrapped = pow(x, e & 63, 1 << bits)  # in [0, 2**bits): reinterpret as signed
    return wrapped - (1 << bits) if wrapped >= 1 << (bits - 1) else wrapped


@pytest.mark.parametrize("dtype", [np.int32, np.int8])
def test_integer_power_with_negative_exponents(mode, dtype):
    x = np.array([3, 2, -1, 1, 0, -2, 5, 7], dtype)
    e = np.array([-1, -1, -3, -5, -1, -2, 64, 3], dtype)
    got = np.asarray(mode(jnp.power)(x, e))
    ref = np.array([_int_pow_ref(int(a), int(b), dtype) for a, b in zip(x, e)], dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, ref)
    # eager and jit run the same program: the old eager path looked at the values
    np.testing.assert_array_equal(np.asarray(jnp.power(x, e)), got)
    if jax_numpy is not None:
        want = np.asarray(jax_numpy.power(x, e))
        if not np.array_equal(want, ref):
            pytest.skip(f"JAX {jax.__version__} changed its integer power rule "
                        f"(gives {want}); absjit follows JAX 0.10's")
        np.testing.assert_array_equal(got, want)


def test_integer_power_static_negative_exponent_is_an_error(mode):
    with pytest.raises(TypeError, match="negative powers"):
        mode(lambda x: jnp.power(x, -1))(np.array([2, 3], np.int32))


# -- 2. searchsorted with NaN ------------------------------------------------------------
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_nan_sorts_last(mode, side):
    a = np.array([1.0, 2.0, np.nan, np.nan], np.float32)
    v = np.array([np.nan, 1.5, 0.0, 3.0, np.inf, 2.0], np.float32)
    got = np.asarray(mode(lambda a, v: jnp.searchsorted(a, v, side=side))(a, v))
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))
    if jax_numpy is not None:
        np.testing.assert_array_equal(got, np.asarray(jax_numpy.searchsorted(a, v, side=side)))
    assert int(jnp.searchsorted(jnp.array([1.0, 2.0, np.nan]), np.nan, side=side)) == \
        (2 if side == "left" else 3)


# -- 3. masked arrays ----------------------------------------------------------------------
_MASKED = np.ma.array([1.0, 1e9, 3.0], mask=[0, 1, 0])


@pytest.mark.parametrize("call", [
    lambda m: jnp.sum(m), lambda m: jnp.add(m, 1.0), lambda m: jnp.asarray(m),
    lambda m: jnp.array(m), lambda m: jnp.searchsorted(jnp.arange(3.0), m),
    lambda m: absjit.jit(jnp.sum)(m), lambda m: absjit.jit(lambda d: d["a"] * 2)({"a": m}),
    lambda m: absjit.jit(jnp.sum, backend="interpret")(m)],
    ids=["sum", "add", "asarray", "array", "searchsorted", "jit", "jit-pytree", "jit-interp"])
def test_masked_arrays_are_rejected(call):
    with pytest.raises(ValueError, match="masked arrays are not supported"):
        call(_MASKED)
    if jax_numpy is not None:  # JAX raises a ValueError too
        with pytest.raises(ValueError, match="masked arrays"):
            jax_numpy.sum(_MASKED)


def test_masked_array_after_a_cached_call_is_rejected(mode):
    f = mode(jnp.sum)
    assert float(f(np.array([1.0, 2.0, 3.0]))) == 6.0  # an entry (and its fast path)
    with pytest.raises(ValueError, match="masked arrays are not supported"):
        f(_MASKED)


# -- 4. fastmath keeps NaN and infinity -------------------------------------------------
def test_fastmath_keeps_nan_and_inf_semantics():
    def f(x):
        return (jnp.isnan(x), jnp.isinf(x), jnp.isfinite(x), jnp.nansum(x), jnp.nanmax(x),
                jnp.nanmin(x), jnp.nanmean(x), jnp.sum(x * 2.0))

    x = np.array([1.0, np.nan, np.inf, -2.0, np.nan, 0.5], np.float32)
    fast = absjit.jit(f, backend="cpu", compiler_options={"fastmath": True})(x)
    ref = f(x)
    for got, want in zip(fast, ref):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert np.asarray(fast[0]).tolist() == np.isnan(x).tolist()
    assert float(fast[3]) == np.inf and float(fast[5]) == -2.0
    opts = CompileOptions.from_dict({"fastmath": True})
    assert opts.fastmath is True
    assert set(opts.numba_fastmath) == {"nsz", "arcp", "contract", "afn", "reassoc"}
    assert CompileOptions.from_dict({}).numba_fastmath is False


# -- 5. option and config validation -----------------------------------------------------
@pytest.mark.parametrize("options, match", [
    ({"fastmth": True}, "unknown compiler option.*'fastmth'.*accepted: 'fastmath' \\(bool\\)"),
    ({"fastmath": 1}, "'fastmath' must be a bool"),
    ({"fastmath": "yes"}, "'fastmath' must be a bool"),
    ({"parallel": "no"}, "'parallel' must be a bool or None"),
    ({"extra": 3}, "'extra' must be a dict")])
def test_compiler_options_are_validated(options, match):
    with pytest.raises(ValueError, match=match):
        CompileOptions.from_dict(options)
    with pytest.raises(ValueError, match=match):
        absjit.jit(lambda x: x, compiler_options=options)


def test_compiler_options_accept_bools():
    assert CompileOptions.from_dict({"fastmath": np.bool_(True), "parallel": False}) == \
        CompileOptions(True, False, ())


def test_config_update_validates_values_and_names():
    before = absjit.config.enable_x64
    with pytest.raises(ValueError, match="'enable_x64' must be a bool, got 'no'"):
        absjit.config.update("enable_x64", "no")
    assert absjit.config.enable_x64 is before
    with pytest.raises(ValueError, match="'enable_x64' must be a bool"):
        absjit.config.update("enable_x64", 1)
    with pytest.raises(ValueError, match="Unrecognized config option.*Known options: "
                                         "enable_x64, explain_cache_misses"):
        absjit.config.update("enable_x46", True)
    with pytest.raises(AttributeError):  # what an unknown name raised before, as in JAX
        absjit.config.update("no_such_flag", True)
    with pytest.raises(ValueError, match="non-negative int"):
        absjit.config.update("recompile_warning_threshold", True)
    with pytest.raises(ValueError, match="backend name"):
        absjit.config.update("default_backend", 3)
    if "cuda" not in absjit.backends():
        with pytest.raises(ValueError, match="backend 'gpu' is not available on this"):
            absjit.config.update("default_backend", "gpu")
        assert absjit.config.default_backend != "gpu"


def test_config_accepts_jax_spellings():
    absjit.config.update("jax_enable_x64", True)
    assert absjit.config.enable_x64 is True
    assert absjit.config.read("jax_enable_x64") is True
    assert jnp.array(1.0).dtype == np.float64
    absjit.config.update("jax_enable_x64", np.bool_(False))
    assert absjit.config.enable_x64 is False
    assert jnp.array(1.0).dtype == np.float32
    before = absjit.config.default_backend
    try:
        absjit.config.update("jax_platform_name", "interpret")
        assert absjit.config.read("default_backend") == "interpret"
    finally:
        absjit.config.update("default_backend", before)


# -- 6. NaN static arguments -----------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: float("nan"), lambda: np.float32("nan"),
                                  lambda: (1.0, float("nan")), lambda: -float("nan")],
                         ids=["float", "float32", "tuple", "negative"])
def test_nan_static_argument_has_one_cache_entry(make):
    g = absjit.jit(lambda x, s: x * 2.0, static_argnums=1, backend="interpret")
    for _ in range(5):
        g(1.0, make())  # a new NaN object each call: NaN != NaN
    assert g._cache_size() == 1
    g(1.0, 2.0)
    assert g._cache_size() == 2


def test_nan_static_argument_value_reaches_the_function():
    g = absjit.jit(lambda x, s: x * s, static_argnums=1, backend="interpret")
    assert math.isnan(float(g(1.0, float("nan"))))
    assert float(g(1.0, 3.0)) == 3.0


# -- 7. backend names ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gpu", "cuda", "tpu", "nonsense"])
def test_unavailable_backend_message(name):
    from absjit.backends.base import _ALIASES
    if name == "tpu" and "xla" in absjit.backends():
        from absjit.backends.base import default_platforms
        if "tpu" not in default_platforms():  # as jax: no TPU here is an error
            with pytest.raises(RuntimeError, match="Unknown backend tpu"):
                absjit.jit(lambda x: x, backend=name)
            return
    if _ALIASES.get(name, name) in absjit.backends():   # "tpu" is xla where jax is
        # Then the name must work: a jitted function runs on it.
        assert float(absjit.jit(lambda x: x + 1, backend=name)(1.0)) == 2.0
        return
    with pytest.raises(ValueError) as info:
        absjit.jit(lambda x: x, backend=name)
    msg = str(info.value)
    assert repr(name) in msg
    assert ("is not available on this machine" in msg) == (name != "nonsense")
    assert ("unknown backend" in msg) == (name == "nonsense")
    assert "available backends: " + ", ".join(absjit.backends()) in msg
    if name == "gpu":
        assert "no gpu/cuda backend" in msg


# -- 8. loop bodies traced twice ------------------------------------------------------
def test_fori_loop_body_consuming_an_iterator_raises():
    ary = jnp.array([0.0, 1.0, 2.0])
    for init in (0, 0.0):  # both are weakly typed: the body is traced again
        it = iter(ary)
        with pytest.raises(absjit.errors.UnexpectedTracerError,
                           match="different program each time it was traced"):
            lax.fori_loop(0, 3, lambda i, a: a + next(it) ** 2, init)
    if jax is not None:  # JAX raises for the seed's case too
        it = iter(jax_numpy.array([0.0, 1.0, 2.0]))
        with pytest.raises(jax.errors.UnexpectedTracerError):
            jax.lax.fori_loop(0, 3, lambda i, a: a + next(it) ** 2, 0)


def test_while_loop_body_with_side_effect_raises():
    seen = []

    def body(c):
        seen.append(1)
        return c + float(len(seen))
    with pytest.raises(absjit.errors.UnexpectedTracerError):
        lax.while_loop(lambda c: c < 10, body, 0)


def test_pure_bodies_with_promoted_carry_still_work(mode):
    ary = jnp.array([0.0, 1.0, 2.0])

    def f(a):
        a = jnp.asarray(a)
        return (lax.fori_loop(0, 3, lambda i, acc: acc + a[i] ** 2 + ary[i], 0),
                lax.while_loop(lambda c: c < 10, lambda c: c + a[1] + 1.0, 0))
    s, w = mode(f)(np.asarray(ary))
    assert float(s) == 8.0 and float(w) == 10.0


# -- 9. float -> int casts ---------------------------------------------------------------
def _float_to_int_ref(v: float, dtype) -> int:
    info = np.iinfo(dtype)
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return info.max if v > 0 else info.min
    return max(info.min, min(info.max, math.trunc(v)))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32])
def test_float_to_int_saturates(mode, dtype):
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.7, -2.7, 127.9, 128.0, -129.0,
                  255.5, 256.0, -0.5, 3e9, -3e9, 65535.9], np.float32)
    got = np.asarray(mode(lambda x: lax.convert_element_type(x, dtype))(x))
    ref = np.array([_float_to_int_ref(float(v), dtype) for v in x], dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(np.asarray(mode(lambda x: jnp.asarray(x).astype(dtype))(x)), ref)


def test_float64_to_int64_saturates():
    absjit.config.update("enable_x64", True)
    x = np.array([np.nan, 2.0 ** 63, -2.0 ** 63, 1e300, -1e300, 2.0 ** 62, -7.9])
    got = np.asarray(lax.convert_element_type(x, np.int64))
    ref = np.array([_float_to_int_ref(float(v), np.int64) for v in x], np.int64)
    np.testing.assert_array_equal(got, ref)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value encountered in cast"
        np.testing.assert_array_equal(
            np.asarray(absjit.jit(lambda x: x.astype(np.uint64), backend="interpret")(x)),
            np.array([_float_to_int_ref(float(v), np.uint64) for v in x], np.uint64))


def test_negative_zero_scalars_do_not_share_a_cached_array_with_zero():
    # 0.0 == -0.0 and they hash alike: the memo of Python-scalar arrays must not return
    # one for the other (a -0.0 seen first made jnp.sin(0.0) print -0.)
    for first, second in ((-0.0, 0.0), (0.0, -0.0)):
        a = jnp.asarray(first) + 0.0 * 0  # goes through the scalar memo
        b = jnp.sin(second)
        assert math.copysign(1.0, float(jnp.asarray(first))) == math.copysign(1.0, first)
        assert math.copysign(1.0, float(b)) == math.copysign(1.0, second)
        del a
    assert math.copysign(1.0, complex(jnp.asarray(0j)).imag) == 1.0
    assert math.copysign(1.0, complex(jnp.asarray(complex(0.0, -0.0))).imag) == -1.0
