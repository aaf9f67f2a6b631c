"""Large programs compile in content-addressed pieces: equal structure compiles once,
the driver checks shapes once at entry, constants are parameters of pieces."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.backends.numba_cpu import BACKEND, NumbaExecutable
from absjit.compiler import ir

from tests.checks import assert_close


@pytest.fixture(autouse=True)
def _tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ABSJIT_CACHE_DIR", str(tmp_path))
    BACKEND.clear_memory()


def jacobi(sweeps, omega=0.8):
    def f(u, src):
        for _ in range(sweeps):
            avg = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                          - 1e-3 * src[1:-1, 1:-1])
            u = u.at[1:-1, 1:-1].set((1 - omega) * u[1:-1, 1:-1] + omega * avg)
        return u
    return f


def compiled(f, *args):
    exe = absjit.jit(f, backend="cpu").lower(*args).compile().executable
    assert isinstance(exe, NumbaExecutable)
    return exe


def test_equal_sweeps_compile_once_and_match_the_reference():
    rng = np.random.default_rng(0)
    u, s = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    before = BACKEND.stats["compiles"]
    exe = compiled(jacobi(10), u, s)
    assert exe.n_pieces >= 5  # two sweeps a piece
    assert BACKEND.stats["compiles"] - before <= 2  # the sweep, and maybe the last one
    got = exe(u, s)[0]
    want = absjit.jit(jacobi(10), backend="interpret")(u, s)
    assert_close(got, want, rtol=1e-5)
    # Another program made of the same sweeps reuses their code.
    before = BACKEND.stats["compiles"]
    compiled(jacobi(13), u, s)
    assert BACKEND.stats["compiles"] - before <= 1


def test_pieces_differing_only_in_constants_share_code():
    def chain(x):
        for k in range(600):
            x = x * 0.999 + (k % 5) * 1e-3
        return x
    x = np.linspace(0, 1, 8).astype(np.float32)
    before = BACKEND.stats["compiles"]
    exe = compiled(chain, x)
    # Pieces alternate between two structures (the cut falls after a mul or an add),
    # plus the first (reads the argument) and the last (shorter): at most 4 compiles.
    assert exe.n_pieces >= 8 and BACKEND.stats["compiles"] - before <= 4
    assert_close(exe(x)[0], absjit.jit(chain, backend="interpret")(x), rtol=1e-4)


def test_driver_checks_shapes_once_at_entry():
    rng = np.random.default_rng(1)
    u, s = (rng.standard_normal((12, 12)).astype(np.float32) for _ in range(2))
    exe = compiled(jacobi(6), u, s)
    driver = exe.as_text().split("# driver (Python)\n")[1].split("\n\n")[0]
    assert driver.count("raise ValueError") == 2  # one per array argument
    pieces = exe.as_text().split("# driver (Python)\n")[1].split("\n\n", 1)[1]
    assert "raise ValueError" not in pieces
    with pytest.raises(ValueError, match="must have shape"):
        exe(np.ones((3, 3), np.float32), s)


def test_single_function_kernel_guards_before_any_loop():
    x = np.ones((3, 4), np.float32)
    from absjit import lax
    exe = compiled(lambda a: lax.while_loop(lambda c: c.sum() < 1e3, lambda c: c * 2, a), x)
    assert exe.n_pieces == 1
    lines = [line.strip() for line in exe.as_text().splitlines() if not line.startswith("#")]
    raises = [k for k, line in enumerate(lines) if line.startswith("raise ValueError")]
    loops = [k for k, line in enumerate(lines) if line.startswith(("while", "for"))]
    assert len(raises) == 1 and raises[0] < loops[0]


def test_products_in_large_programs_run_between_pieces():
    rng = np.random.default_rng(2)
    ws = [rng.standard_normal((16, 16)).astype(np.float32) / 4 for _ in range(12)]
    x = rng.standard_normal((8, 16)).astype(np.float32)

    def mlp(ws, x):
        for w in ws:
            x = jnp.tanh(x @ w + 0.1) * 1.5 + jnp.sin(x)
        return jnp.sum(x * x)
    exe = compiled(mlp, ws, x)
    hosts = [s for s in ir.walk(exe.program.body) if isinstance(s, ir.Opaque)]
    assert len(hosts) == 12 and exe.n_pieces > 12
    got = absjit.jit(mlp, backend="cpu")(ws, x)
    assert_close(got, absjit.jit(mlp, backend="interpret")(ws, x), rtol=1e-4)


def test_pieces_load_from_the_disk_cache_in_a_new_process(tmp_path):
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent("""
        import numpy as np, absjit
        from absjit.backends.numba_cpu import stats
        from tests.backends.numba_cpu.test_pieces import jacobi
        u = np.ones((10, 10), np.float32)
        absjit.jit(jacobi(8))(u, u).block_until_ready()
        print(stats["compiles"], stats["disk_hits"])
    """)
    env = dict(__import__("os").environ, ABSJIT_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300, cwd=str(__import__("pathlib").Path(
                               __file__).parents[3])) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first = [int(v) for v in runs[0].stdout.split()]
    second = [int(v) for v in runs[1].stdout.split()]
    assert first[0] >= 1 and second == [0, first[0]]


def test_large_loop_bodies_are_outlined_into_pieces():
    from absjit import lax

    def f(u, src):
        step = jacobi(8)
        return lax.fori_loop(0, 3, lambda i, v: step(v, src) * 0.5, u)
    rng = np.random.default_rng(3)
    u, s = (rng.standard_normal((12, 12)).astype(np.float32) for _ in range(2))
    exe = compiled(f, u, s)
    calls = [st for st in ir.walk(exe.program.body) if isinstance(st, ir.CallPiece)]
    assert len(calls) >= 2  # the loop calls its body's pieces
    assert_close(exe(u, s)[0], absjit.jit(f, backend="interpret")(u, s), rtol=1e-4)


def test_outlined_scan_bodies_take_the_scan_index():
    """A scan body big enough to be outlined reads its slice of ``xs`` at the scan's
    loop variable: the pieces take that variable as a parameter (it was a NameError)."""
    from absjit import lax, random
    from absjit.random._more import _binomial

    def f(key, ns, p):
        def body(k, n):
            k, sub = random.split(k)
            return k, _binomial(sub, n, p, np.dtype(np.float32)) + jacobi(2)(n, n)
        return lax.scan(body, key, ns)[1]
    key = random.PRNGKey(0)
    ns = np.abs(np.random.default_rng(4).standard_normal((3, 6, 6))).astype(np.float32) * 9
    p = np.full(6, 0.3, np.float32)
    exe = compiled(f, key, ns, p)
    pieces = [st.piece for st in ir.walk(exe.program.body) if isinstance(st, ir.CallPiece)]
    assert any(isinstance(v, ir.LoopIndex) for pc in pieces for v in pc.params)
    assert_close(exe(key, ns, p)[0], absjit.jit(f, backend="interpret")(key, ns, p))


def test_driver_type_checks_its_arguments_before_unchecked_calls():
    rng = np.random.default_rng(4)
    u, s = (rng.standard_normal((12, 12)).astype(np.float32) for _ in range(2))
    exe = compiled(jacobi(6), u, s)
    assert exe.n_pieces > 1
    with pytest.raises(TypeError, match="C-contiguous float32"):
        exe.fast_call(u.astype(np.float64), s)
    with pytest.raises(TypeError):
        exe.fast_call(np.asfortranarray(u), s)
    # The executable's general call path normalises such buffers instead.
    want = exe(u, s)[0]
    assert_close(exe(np.asfortranarray(u), s)[0], want)
    assert_close(exe(u.astype(np.float64), s)[0], want)


@pytest.mark.parametrize("lc,rc,sa,sb", [((1,), (0,), (3, 4), (4, 5)), ((0,), (0,), (4, 3), (4, 5)),
                                         ((1,), (1,), (3, 4), (5, 4)), ((0,), (1,), (4, 3), (5, 4))])
def test_host_products_pass_transposes_to_blas(lc, rc, sa, sb):
    from absjit.backends.numba_cpu.backend import _host_dot
    from absjit.core.avals import ShapedArray
    from absjit.ops.linalg import dot_general_p
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in (sa, sb))
    stmt = ir.Opaque(dot_general_p, [], [], [ShapedArray(sa, np.float32),
                                             ShapedArray(sb, np.float32)],
                     [ShapedArray((3, 5), np.float32)],
                     {"dimension_numbers": ((lc, rc), ((), ())), "precision": None,
                      "preferred_element_type": None})
    (out,) = _host_dot(stmt)(a, b)
    assert out.flags.c_contiguous and out.dtype == np.float32
    np.testing.assert_allclose(out, np.tensordot(a, b, (lc, rc)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("dn,sa,sb", [
    ((((2,), (1,)), ((0,), (0,))), (3, 40, 50), (3, 50, 60)),        # bij,bjk->bik
    ((((2,), (2,)), ((1,), (1,))), (64, 4, 32), (48, 4, 32)),        # qhd,khd->hqk
    ((((2,), (0,)), ((0,), (1,))), (4, 64, 48), (48, 4, 32)),        # hqk,khd->hqd
    ((((1,), (1,)), ((0, 3), (0, 3))), (2, 60, 33, 3), (2, 60, 41, 3)),  # two batch dims
])
def test_host_batched_products_run_one_blas_call_per_matrix(dt, dn, sa, sb):
    """Batched products between pieces use SciPy's BLAS, as 2-D ones do (NumPy's matmul
    would bring a second OpenBLAS whose threads spin against the first)."""
    from absjit.backends.numba_cpu.backend import _host_dot
    from absjit.core.avals import ShapedArray
    from absjit.ops.linalg import _dot_general_impl, _dot_general_shape, dot_general_p
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(sa).astype(dt), rng.standard_normal(sb).astype(dt)
    a.flat[7] = np.inf  # inf * 0 must stay nan, as in XLA and the compiled kernels
    b[..., 0] = 0
    out_shape = _dot_general_shape(sa, sb, dn)
    stmt = ir.Opaque(dot_general_p, [], [], [ShapedArray(sa, dt), ShapedArray(sb, dt)],
                     [ShapedArray(out_shape, dt)],
                     {"dimension_numbers": dn, "precision": None,
                      "preferred_element_type": None})
    call = _host_dot(stmt)
    assert call.__name__ == "host_batched_dot"
    (out,) = call(a, b)
    (want,) = _dot_general_impl(a, b, dimension_numbers=dn, precision=None,
                                preferred_element_type=None)
    assert out.shape == want.shape and out.dtype == dt and out.flags.c_contiguous
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_small_batched_products_stay_with_numpy():
    from absjit.backends.numba_cpu.backend import _host_dot
    from absjit.core.avals import ShapedArray
    from absjit.ops.linalg import dot_general_p
    stmt = ir.Opaque(dot_general_p, [], [], [ShapedArray((100, 4, 4), np.float32)] * 2,
                     [ShapedArray((100, 4, 4), np.float32)],
                     {"dimension_numbers": (((2,), (1,)), ((0,), (0,))), "precision": None,
                      "preferred_element_type": None})
    assert _host_dot(stmt) is None


FFTS = {"fft": (jnp.fft.fft, np.fft.fft, True), "ifft": (jnp.fft.ifft, np.fft.ifft, True),
        "rfft": (jnp.fft.rfft, np.fft.rfft, False),
        "irfft": (lambda v: jnp.fft.irfft(v, 30), lambda v: np.fft.irfft(v, 30), True),
        "irfft_odd": (lambda v: jnp.fft.irfft(v, 31), lambda v: np.fft.irfft(v, 31), True),
        "fft2": (jnp.fft.fft2, np.fft.fft2, True), "ifft2": (jnp.fft.ifft2, np.fft.ifft2, True),
        "rfftn": (jnp.fft.rfftn, np.fft.rfftn, False),
        "irfft2": (lambda v: jnp.fft.irfft2(v, (4, 30)), lambda v: np.fft.irfft2(v, (4, 30)),
                   True)}


@pytest.fixture(params=["ducc", "scipy"])
def fft_library(request, monkeypatch):
    """The FFT library between pieces: DUCC where ``ducc0`` is installed, and SciPy
    (what runs without it)."""
    from absjit.backends.numba_cpu import backend
    if request.param == "ducc":
        if backend._ducc_fft() is None:
            pytest.skip("ducc0 is not installed")
    else:
        monkeypatch.setattr(backend, "_ducc_fft", lambda: None)
    return request.param


@pytest.mark.parametrize("dt", [np.float32, pytest.param(np.float64, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", sorted(FFTS))
def test_ffts_between_pieces_match_numpy(name, dt, fft_library):
    """An FFT between compiled pieces runs threaded (DUCC or SciPy), in the operand's
    precision, matching NumPy's transform, NaN included."""
    ours, theirs, complex_in = FFTS[name]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 16)).astype(dt)
    if complex_in:
        x = (x + 1j * rng.standard_normal(x.shape)).astype(np.result_type(dt, np.complex64))
    x.flat[5] = np.nan  # a NaN spreads through its transform as NumPy's does
    absjit.config.update("enable_x64", dt == np.float64)  # reset after each test
    # A fresh function each time: the executable must be built with this library.
    got = np.asarray(absjit.jit(lambda v: ours(v * 2) + 1, backend="cpu")(x))
    want = theirs(x * 2) + 1
    real_out = name.startswith("irfft")
    assert got.dtype.itemsize == np.dtype(dt).itemsize * (1 if real_out else 2)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    tol = 1e-4 if dt == np.float32 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("fft_type,shape,lengths,out_shape,out_dt", [
    ("RFFT", (4, 64), (64,), (4, 33), np.complex64),
    ("IRFFT", (4, 33), (64,), (4, 64), np.float32),
    ("FFT", (2, 8, 6), (8, 6), (2, 8, 6), np.complex64),
    ("IFFT", (5,), (5,), (5,), np.complex64)])
def test_host_fft_uses_the_policys_threads(fft_library, monkeypatch, fft_type, shape, lengths,
                                           out_shape, out_dt):
    from absjit.backends.numba_cpu import backend
    from absjit.backends.numba_cpu.parallel import threads
    from absjit.core.avals import ShapedArray
    from absjit.ops.fft import _fft_impl, fft_p
    calls = []
    real_current = threads._POLICY.current
    monkeypatch.setattr(threads._POLICY, "current",
                        lambda: calls.append(1) or max(2, real_current()))
    in_dt = np.float32 if fft_type == "RFFT" else np.complex64
    stmt = ir.Opaque(fft_p, [], [], [ShapedArray(shape, in_dt)],
                     [ShapedArray(out_shape, out_dt)],
                     {"fft_type": fft_type, "fft_lengths": lengths})
    call = backend._host_call(stmt)
    assert call.__name__ == "host_fft"
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    if in_dt == np.complex64:
        x = (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
    (out,) = call(x)
    (want,) = _fft_impl(x, fft_type=fft_type, fft_lengths=lengths)
    assert calls and out.dtype == out_dt and out.shape == out_shape and out.flags.c_contiguous
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
