"""The xla backend: results against the NumPy reference (interpret) and the cpu backend,
transforms, caches, 64-bit dtypes, buffers and errors."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.xla import BACKEND, XlaExecutable
from absjit.backends.xla.backend import unlowerable
from absjit.core.primitive import Primitive, abstract_eval_rules, impl_rules
from absjit.errors import CompilationError

from tests.checks import assert_close, jax

pytestmark = pytest.mark.skipif(jax is None, reason="the xla extra (jax) is not installed")


def xla(f, **kw):
    return absjit.jit(f, backend="xla", **kw)


def check(f, *args, **kw):
    """``f`` on xla against the interpret backend (the NumPy reference)."""
    got = xla(f)(*args)
    want = absjit.jit(f, backend="interpret")(*args)
    assert_close(got, want, **kw)
    return got


# ---------------------------------------------------------------------------
# transforms and control flow
# ---------------------------------------------------------------------------
def test_grad_vmap_and_control_flow():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)

    def loss(w, x):
        def body(i, c):
            return lax.cond(i % 2 == 0, lambda v: v * w, lambda v: jnp.sin(v) + w, c)
        h = lax.fori_loop(0, 3, body, x)
        s, ys = lax.scan(lambda c, r: (c + r.sum(), c * r), 0.0, h)
        return s + ys.sum()

    def halve(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 0.5), (0, x))

    check(absjit.grad(loss), np.float32(0.7), x, rtol=1e-4)
    check(absjit.vmap(lambda r: loss(np.float32(0.3), r[None])), x, rtol=1e-4)
    check(absjit.vmap(halve), x)
    check(lambda x: lax.switch(2, [jnp.sin, jnp.cos, jnp.tanh], x), x)
    check(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos], x), np.int32(7), x)  # clamps


def test_sort_conv_fft_and_linalg_compile_instead_of_interpreting():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(50).astype(np.float32)
    x[[3, 9]] = np.nan
    check(lambda a: (jnp.sort(a), jnp.argsort(a), lax.sort((a, -a), num_keys=1)), x)
    img = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    k = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    check(lambda a, b: lax.conv_general_dilated(a, b, (2, 1), ((1, 2), (0, 1)),
                                                 rhs_dilation=(1, 2)), img, k, rtol=1e-4)
    check(lambda a: jnp.fft.rfft(a), x[:16].copy(), rtol=1e-4, atol=1e-4)
    m = rng.standard_normal((5, 5)).astype(np.float32)
    spd = m @ m.T + 5 * np.eye(5, dtype=np.float32)
    got = xla(lambda a: (jnp.linalg.cholesky(a), jnp.linalg.eigh(a)[0],
                         jnp.linalg.svd(a, compute_uv=False), jnp.linalg.solve(a, a[0]),
                         jnp.linalg.qr(a)[1]))(spd)
    want = absjit.jit(lambda a: (jnp.linalg.cholesky(a), jnp.linalg.eigh(a)[0],
                                 jnp.linalg.svd(a, compute_uv=False),
                                 jnp.linalg.solve(a, a[0])), backend="interpret")(spd)
    assert_close(got[:4], want, rtol=2e-4, atol=2e-4)
    assert_close(np.abs(np.asarray(got[4])), np.abs(np.linalg.qr(spd)[1]), rtol=2e-4,
                 atol=2e-4)


def test_callbacks_and_debug_print(capsys):
    x = np.arange(3, dtype=np.float32)
    got = xla(lambda a: absjit.pure_callback(lambda v: np.cumsum(v) * 2,
                                             absjit.ShapeDtypeStruct((3,), np.float32), a))(x)
    assert_close(got, np.float32([0, 2, 6]))
    f = lambda a: lax.fori_loop(  # noqa: E731
        0, 2, lambda i, c: (absjit.debug.print("i={} c={}", i, c), c * 2.0)[1], a)
    xla(f)(np.float32(1.0))
    assert capsys.readouterr().out.splitlines() == ["i=0 c=1.0", "i=1 c=2.0"]


# ---------------------------------------------------------------------------
# 64-bit types: absjit's config decides, jax's global flag is left alone
# ---------------------------------------------------------------------------
def test_float64_stays_float64_and_float32_stays_float32():
    assert not jax.config.jax_enable_x64
    f = lambda a: a * 3.0 + 1e-10  # noqa: E731 - 1e-10 vanishes in float32
    absjit.config.update("enable_x64", True)
    x = np.array([1.0, 2.0], np.float64)
    got = xla(f)(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(got), x * 3.0 + 1e-10)
    i = xla(lambda a: a * np.int64(2**40))(np.array([3], np.int64))
    assert i.dtype == np.int64 and int(i[0]) == 3 * 2**40
    assert not jax.config.jax_enable_x64  # a context was used, not the global flag
    absjit.config.update("enable_x64", False)
    got32 = xla(f)(x)
    assert got32.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got32), (x.astype(np.float32) * 3 + 1e-10))


def test_jax_global_x64_does_not_widen_absjit():
    jax.config.update("jax_enable_x64", True)
    try:
        got = xla(lambda a: a.sum() + 1.0)(np.arange(4.0))
        assert got.dtype == np.float32 and float(got) == 7.0
    finally:
        jax.config.update("jax_enable_x64", False)


def test_float_to_int_saturates_like_the_reference():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 0.5], np.float32)
    check(lambda a: (a.astype(jnp.int32), a.astype(jnp.uint8), a.astype(jnp.int16),
                     a.astype(bool)), x)


# ---------------------------------------------------------------------------
# caches and buffers
# ---------------------------------------------------------------------------
def test_equal_programs_compile_once():
    absjit.jit.compile_cache.clear()
    before = BACKEND.stats["compiles"]
    x = np.arange(5, dtype=np.float32)
    for k in range(3):
        f = xla(lambda a: jnp.cumsum(a) * 2.0)  # a fresh lambda each time
        assert_close(f(x), np.cumsum(x) * 2)
    assert BACKEND.stats["compiles"] - before == 1
    assert absjit.jit.compile_cache.stats()["hits"] >= 2


def test_results_are_read_only_views_of_xla_buffers():
    x = np.arange(6, dtype=np.float32)
    exe = xla(lambda a: a * 2).lower(x).compile().executable
    (out,) = exe(x)
    assert type(out) is np.ndarray and not out.flags.owndata  # XLA's buffer, not a copy
    res = xla(lambda a: a * 2)(x)
    assert not np.asarray(res).flags.writeable
    assert type(res) is absjit.Array


def test_persistent_cache_lives_under_the_absjit_cache_dir(tmp_path):
    root = tmp_path / "cache"
    code = textwrap.dedent("""
        import numpy as np, jax, absjit
        absjit.jit(lambda x: x + 1, backend="xla")(np.ones(3, np.float32))
        print(jax.config.jax_compilation_cache_dir)
    """)
    env = dict(os.environ, ABSJIT_CACHE_DIR=str(root), PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[-1] == str(root / "xla" / "jax")
    assert (root / "xla").stat().st_mode & 0o077 == 0


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
def test_a_primitive_without_a_rule_is_a_named_compile_error():
    foreign_p = Primitive("foreign_op")   # defined outside absjit: no XLA rule
    abstract_eval_rules[foreign_p] = lambda x: [x]
    impl_rules[foreign_p] = lambda x: [x]
    f = lambda a: jnp.sin(foreign_p.bind(a))  # noqa: E731
    with pytest.raises(CompilationError, match="no rule for foreign_op"):
        xla(f)(np.ones(2, np.float32))
    closed = absjit.make_jaxpr(lambda a: lax.fori_loop(0, 2, lambda i, c: f(c), a))(
        np.ones(2, np.float32))
    BACKEND._load()
    assert unlowerable(closed.jaxpr, BACKEND._rules) == ["foreign_op"]   # nested too


def test_bad_input_fails_before_running():
    f = xla(lambda a: a + 1)
    f(np.ones(3, np.float32))
    with pytest.raises(TypeError):
        f.lower(np.ones(3, np.float32)).compile()(np.ones(4, np.float32))


# ---------------------------------------------------------------------------
# results on the device (every platform but cpu), exercised here on the CPU
# ---------------------------------------------------------------------------
@pytest.fixture
def resident_backend():
    from absjit.backends import base
    from absjit.backends.xla.backend import XlaBackend
    be = XlaBackend(resident=True)
    be.name = "xla_resident_test"
    base.register_backend(be)
    yield be.name
    del base._REGISTRY[be.name]


def test_results_stay_on_the_device_between_calls(resident_backend):
    from absjit.array import DeviceArray
    w = np.float32([1.0, 2.0, 3.0])   # a closed-over constant: put on the device once
    f = absjit.jit(lambda a: a * 2.0 + w, backend=resident_backend)
    x = np.arange(3, dtype=np.float32)
    y = f(x)
    assert type(y) is DeviceArray and isinstance(y._buf, jax.Array)
    assert y.shape == (3,) and y.dtype == np.float32
    z = f(y)
    assert y._host is None   # y went back in as its device buffer: no host copy
    assert type(z) is DeviceArray
    np.testing.assert_array_equal(np.asarray(z), (x * 2 + w) * 2 + w)
    assert_close(jnp.sin(z), np.sin((x * 2 + w) * 2 + w))   # eager ops read a host copy
    assert "Array([" in repr(z) and z.block_until_ready() is z


@pytest.mark.parametrize("abstraction", ["shaped", "ranked"])
def test_device_arrays_take_the_fast_path(resident_backend, abstraction, monkeypatch):
    from absjit.array import DeviceArray
    from absjit.jit import api
    f = absjit.jit(lambda a, s: a * s + 1.0, abstraction=abstraction,
                   backend=resident_backend)
    y = f(np.arange(3, dtype=np.float32), 2.0)
    z = f(y, 2.0)   # the first call with a device array traces
    monkeypatch.setattr(api, "_process", lambda *a, **k: pytest.fail("not a cache hit"))
    w = f(z, 2.0)   # a hit on the fast path: nothing traced, the buffer passed as it is
    assert type(w) is DeviceArray and z._host is None
    np.testing.assert_array_equal(np.asarray(w), ((np.arange(3) * 2 + 1) * 2 + 1) * 2 + 1)
    assert api._fast_key((z,)) != api._fast_key((np.asarray(z),))  # the device is in it


def test_device_put_and_devices_answer_from_the_backend(resident_backend):
    from absjit.array import DeviceArray
    from absjit.backends.base import get_backend
    be = get_backend(resident_backend)
    assert absjit.devices(resident_backend) == absjit.devices("cpu")  # jax runs on the CPU
    x = be.put(np.arange(3.0))
    assert type(x) is DeviceArray and isinstance(x._buf, jax.Array) and x.weak_type is False
    assert be.put(x) is x
    host = absjit.device_put(x, "cpu")
    assert type(host) is absjit.Array and host.tolist() == [0.0, 1.0, 2.0]
    assert absjit.devices("xla")[0].platform == jax.default_backend()


def test_chained_calls_hand_xla_buffers_back_without_copies():
    from absjit.backends.xla.backend import xla_buffer
    f = xla(lambda a: a * 2.0 + 1.0)
    x = np.arange(4, dtype=np.float32)
    y = f(x)
    back = xla_buffer(np.asarray(y))
    assert isinstance(back, jax.Array)   # the buffer XLA wrote, not a copy
    assert back.unsafe_buffer_pointer() == np.asarray(y).ctypes.data
    sliced = np.asarray(y)[1:]
    assert xla_buffer(sliced) is sliced   # a part of it is copied in as usual
    assert_close(f(y), (x * 2 + 1) * 2 + 1)


def test_fma_and_threefry_rules_equal_the_reference():
    from absjit.ops.fma import fma
    from absjit.ops.threefry import threefry2x32
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(257).astype(np.float32) for _ in range(3))
    # A case double rounding gets wrong: a*b = 1 + 2**-24, c = 2**-80.
    a[0], b[0], c[0] = np.float32(1 + 2.0 ** -23), np.float32(1 - 2.0 ** -24), np.float32(2.0 ** -80)
    f = lambda a, b, c: fma(a, b, c)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(absjit.jit(f, backend="xla")(a, b, c)),
                                  np.asarray(fma(a, b, c)))
    k = rng.integers(0, 2 ** 32, size=(4, 64), dtype=np.uint32)
    for output in ("x0", "x1", "xor"):
        g = lambda *k: threefry2x32(*k, output=output)  # noqa: E731
        np.testing.assert_array_equal(np.asarray(absjit.jit(g, backend="xla")(*k)),
                                      np.asarray(g(*k)))
