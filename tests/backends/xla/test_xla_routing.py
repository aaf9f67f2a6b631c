"""Backend selection and routing: the pure rule, unit-tested with fake machines (TPU
included, since no test machine has one), and its use by ``jit`` and the cpu backend's
fallback."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends import base
from absjit.backends.base import FallbackExecutable, route_backend
from absjit.backends.numba_cpu import NumbaExecutable
from absjit.backends.xla import XLANotInstalledError, XlaExecutable

from tests.checks import assert_close

ALL = ["interpret", "cpu", "xla"]
NO_JAX = ["interpret", "cpu"]
NO_NUMBA = ["interpret", "xla"]


@pytest.fixture(autouse=True)
def _fresh_compile_cache():
    # Equal programs share compiled code: each test here must see its own compile.
    absjit.jit.compile_cache.clear()
    yield
    absjit.jit.compile_cache.clear()


# ---------------------------------------------------------------------------
# the pure rule
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("requested,backends,platforms,unlowerable,expected", [
    # nothing requested: TPU hosts compile with XLA, others with Numba, else NumPy
    (None, ALL, ("tpu", "cpu"), (), "xla"),
    (None, ALL, ("cpu",), (), "cpu"),
    (None, ALL, ("gpu", "cpu"), (), "cpu"),
    (None, NO_JAX, (), (), "cpu"),
    (None, ["interpret"], (), (), "interpret"),
    (None, NO_NUMBA, ("tpu",), (), "xla"),
    (None, NO_NUMBA, ("cpu",), (), "interpret"),
    # an explicit name wins over the platform; "tpu" is another name for "xla"
    ("cpu", ALL, ("tpu", "cpu"), (), "cpu"),
    ("tpu", ALL, ("tpu", "cpu"), (), "xla"),
    ("xla", ALL, ("cpu",), (), "xla"),
    ("interpret", ALL, ("tpu",), (), "interpret"),
    # what a Numba backend cannot lower goes to XLA when jax is there, else to NumPy
    ("cpu", ALL, ("cpu",), ("sort",), "xla"),
    ("cpu", ALL, ("tpu", "cpu"), ("debug_print in more than one loop or branch",), "xla"),
    ("cpu", NO_JAX, (), ("sort",), "interpret"),
    ("cuda", ALL + ["cuda"], ("gpu", "cpu"), ("conv_general_dilated",), "xla"),
    ("gpu", NO_JAX + ["cuda"], (), ("fft",), "interpret"),
    # backends that are not Numba's keep the program
    ("interpret", ALL, ("cpu",), ("sort",), "interpret"),
    ("xla", ALL, ("cpu",), ("custom_lin",), "xla"),
])
def test_route_backend(requested, backends, platforms, unlowerable, expected):
    assert route_backend(requested, backends, platforms, unlowerable) == expected


def test_route_backend_errors():
    with pytest.raises(ValueError, match=r"'metal'.*available: interpret, cpu, xla"):
        route_backend("metal", ALL, ("cpu",))
    with pytest.raises(ValueError, match=r"'gpu/cuda' is not available.*interpret, cpu"):
        route_backend("gpu", NO_JAX, ())
    for name in ("xla", "tpu"):
        with pytest.raises(XLANotInstalledError, match=r"pip install absjit\[xla\]"):
            route_backend(name, NO_JAX, ())
    assert issubclass(XLANotInstalledError, ImportError)
    with pytest.raises(ValueError, match="must be a string"):
        route_backend(3, ALL, ())
    # As jax: a TPU asked for where there is none is an error, not a run on the CPU.
    with pytest.raises(RuntimeError, match="Unknown backend tpu: this machine has no TPU"):
        route_backend("tpu", ALL, ("cpu",))


# ---------------------------------------------------------------------------
# jit and the registry
# ---------------------------------------------------------------------------
def test_tpu_alias_compiles_with_xla(monkeypatch):
    monkeypatch.setattr(base, "_PLATFORMS", ("tpu", "cpu"))  # as on a TPU host
    x = np.array([3.0, 1.0, 2.0], np.float32)
    f = absjit.jit(lambda a: jnp.sort(a) * 2, backend="tpu")
    assert isinstance(f.lower(x).compile().executable, XlaExecutable)
    assert_close(f(x), np.float32([2, 4, 6]))


def test_tpu_without_a_tpu_raises(monkeypatch):
    monkeypatch.setattr(base, "_PLATFORMS", ("cpu",))
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        absjit.jit(lambda x: x + 1, backend="tpu")
    jax = pytest.importorskip("jax")
    with pytest.raises(RuntimeError, match="Unknown backend"):
        jax.jit(lambda x: x + 1, backend="tpu")(1.0)


def test_unknown_backend_lists_the_available_ones():
    with pytest.raises(ValueError, match=r"unknown backend 'metal'.*interpret, cpu, xla"):
        absjit.jit(lambda x: x, backend="metal")


def test_default_platform_tpu_selects_xla(monkeypatch):
    monkeypatch.setattr(base, "_PLATFORMS", ("tpu", "cpu"))
    assert base.select_backend().name == "xla"
    assert base.select_backend("cpu").name == "cpu"
    monkeypatch.setattr(base, "_PLATFORMS", ("cpu",))
    assert base.select_backend().name == "cpu"


def test_without_jax_xla_asks_for_the_extra(monkeypatch):
    # Simulate a machine without jax: its import is blocked.
    monkeypatch.setitem(sys.modules, "jax", None)
    assert "xla" not in absjit.backends()
    for name in ("xla", "tpu"):
        with pytest.raises(XLANotInstalledError, match=r"pip install absjit\[xla\]"):
            absjit.jit(lambda x: x + 1, backend=name)
        with pytest.raises(ImportError):
            base.get_backend(name)
    # and a program the cpu backend cannot lower runs on the interpret backend
    _without_cpu_rule_for_cosh(monkeypatch)
    x = np.array([3.0, 1.0, 2.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        exe = absjit.jit(_cosh_loop, backend="cpu").lower(x).compile().executable
    assert isinstance(exe, FallbackExecutable) and exe.target == "interpret"
    assert_close(exe(x)[0], np.cosh(np.cosh(x)))


# ---------------------------------------------------------------------------
# the cpu backend's fallback
# ---------------------------------------------------------------------------
def _fresh_cpu_warnings(monkeypatch):
    from absjit.backends.numba_cpu import BACKEND
    monkeypatch.setattr(BACKEND, "_warned", set())


def _without_cpu_rule_for_cosh(monkeypatch):
    """Make ``cosh`` something the cpu backend cannot lower (its scalar rule removed):
    a stand-in for any primitive still without a lowering."""
    from absjit.backends.numba.lower_elementwise import scalar_rules
    from absjit.ops.elementwise import cosh_p
    monkeypatch.delitem(scalar_rules, cosh_p)


def _cosh_loop(a):
    return lax.fori_loop(0, 2, lambda i, c: jnp.cosh(c), a)


def test_unlowerable_primitive_in_a_loop_runs_compiled_on_xla_with_one_warning(monkeypatch):
    _fresh_cpu_warnings(monkeypatch)
    _without_cpu_rule_for_cosh(monkeypatch)
    x = np.array([0.5, -1.0, 0.25], np.float32)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        exe = absjit.jit(_cosh_loop, backend="cpu").lower(x).compile().executable
        absjit.jit(lambda a: lax.fori_loop(0, 3, lambda i, c: jnp.cosh(c) + 1, a),
                   backend="cpu")(x)
    msgs = [str(w.message) for w in rec if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1 and "for cosh;" in msgs[0] and "xla backend" in msgs[0]
    assert isinstance(exe, FallbackExecutable) and exe.target == "xla"
    assert isinstance(exe._inner, XlaExecutable)
    assert exe.as_text().startswith("# runs on the xla backend")
    assert_close(absjit.jit(_cosh_loop, backend="cpu")(x), np.cosh(np.cosh(x)))


def test_unlowered_primitive_in_a_loop_stays_compiled_per_equation():
    # fft has no loop lowering: it runs from an object-mode block of the compiled loop.
    x = np.array([3.0, 1.0, 2.0], np.float32)
    f = lambda a: lax.fori_loop(0, 2, lambda i, c: jnp.fft.fft(c).real, a)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        exe = absjit.jit(f, backend="cpu").lower(x).compile().executable
    assert isinstance(exe, NumbaExecutable)
    assert_close(exe(x)[0], np.fft.fft(np.fft.fft(x).real).real.astype(np.float32),
                 rtol=1e-5, atol=1e-5)


def test_top_level_unlowerable_stays_per_equation():
    # Pieces mode is kept: the sort runs between compiled pieces, the rest is Numba's.
    x = np.array([3.0, 1.0, 2.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        exe = absjit.jit(lambda a: jnp.fft.fft(a).real + 1, backend="cpu").lower(x).compile()
    assert isinstance(exe.executable, NumbaExecutable) and exe.executable.n_pieces >= 2


@pytest.mark.parametrize("dtype", [np.float16, jnp.bfloat16])
def test_16_bit_floats_stay_on_the_cpu_backend(monkeypatch, dtype):
    # float16/bfloat16 are lowered (stored as uint16, computed in float32): no routing.
    _fresh_cpu_warnings(monkeypatch)
    x = (np.arange(4) * 0.5 + 0.25).astype(dtype)
    f = lambda a: lax.fori_loop(0, 2, lambda i, c: c * c + 1, a)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        exe = absjit.jit(f, backend="cpu").lower(x).compile().executable
    assert isinstance(exe, NumbaExecutable)
    assert_close(exe(x)[0], absjit.jit(f, backend="interpret")(x))


def test_a_program_xla_cannot_compile_either_runs_on_interpret(monkeypatch):
    # A program XLA refuses, which the cpu backend reports unlowerable (cosh, here).
    _fresh_cpu_warnings(monkeypatch)
    from absjit.backends.xla import BACKEND as XLA
    from absjit.errors import CompilationError

    def refuse(closed, options):
        raise CompilationError("the xla backend has no rule for custom_lin")
    monkeypatch.setattr(XLA, "compile", refuse)
    _without_cpu_rule_for_cosh(monkeypatch)
    x = np.array([3.0, 1.0, 2.0], np.float32)
    with pytest.warns(RuntimeWarning, match="run on the interpret backend"):
        exe = absjit.jit(_cosh_loop, backend="cpu").lower(x).compile().executable
    assert exe.target == "interpret"
    assert_close(exe(x)[0], np.cosh(np.cosh(x)))
