"""The cpu backend's lowerings of sort, convolution and complex arithmetic, and the
per-equation fallback inside loops: every result against the interpret backend (the
NumPy implementation), on NaN/inf, signed zeros, empty and non-contiguous inputs.

Several cases share one jitted function where they can: every distinct program is a
Numba compile.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.numba_cpu import NumbaExecutable

from tests.checks import assert_close


def run_both(f, *args):
    """``f`` compiled by the cpu backend (asserting it did not fall back to the
    interpret backend) and run by the interpret backend."""
    compiled = absjit.jit(f, backend="cpu").lower(*args).compile()
    assert isinstance(compiled.executable, NumbaExecutable)
    got = compiled(*args)
    want = absjit.jit(f, backend="interpret")(*args)
    return got, want


def assert_same_bits(got, want):
    """Equal shapes, dtypes and bytes: NaN placement and zero signs included."""
    for g, w in zip(absjit.tree_util.tree_leaves(got), absjit.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        assert g.tobytes() == w.tobytes(), f"\n{g}\n{w}"


SPECIALS = np.array([np.nan, 1.0, -0.0, np.inf, 0.0, -np.inf, -1.0, np.nan, 0.0, -0.0,
                     2.5, -2.5], np.float32)


# -- sort ------------------------------------------------------------------------------
def test_sort_orders_like_numpy_on_specials_short_and_long_rows():
    rng = np.random.default_rng(0)
    short = np.tile(SPECIALS, (3, 1))                        # insertion sort (12)
    long = np.concatenate([SPECIALS] * 4 + [rng.standard_normal(52).astype(np.float32)])
    long = rng.permutation(long).reshape(2, 50)              # merge sort (50)
    ints = rng.integers(-3, 3, (40, 3)).astype(np.int32)     # axis 0, ties
    vals = np.arange(120, dtype=np.float32).reshape(40, 3)

    def f(short, long, ints, vals):
        return (lax.sort(short, dimension=1), lax.sort(long, dimension=1),
                lax.sort(long.T, dimension=0),               # a transposed operand
                lax.sort((ints, vals), dimension=0, num_keys=1),
                lax.sort((ints, -vals, vals), dimension=0, num_keys=2),
                jnp.argsort(long, axis=-1), lax.top_k(long, 7),
                jnp.sort(ints[::2, ::-1], axis=1))            # a strided operand
    got, want = run_both(f, short, long, ints, vals)
    assert_same_bits(got, want)


def test_sort_complex_bool_and_empty_operands():
    c = np.array([1 + 2j, complex(np.nan, 0), 1 + 1j, complex(0, np.nan), -1j, 1 + 1j,
                  complex(np.inf, 0), 0j], np.complex64)
    c_long = np.tile(c, 5)
    b = np.array([True, False, True, False, False], np.bool_)
    e = np.zeros((0, 4), np.float32)

    def f(c, c_long, b, e):
        return (lax.sort(c), lax.sort(c_long), lax.sort((b, jnp.arange(5)), num_keys=1),
                lax.sort(e, dimension=1), lax.sort(e, dimension=0))
    got, want = run_both(f, c, c_long, b, e)
    assert_same_bits(got, want)


def test_sort_in_a_fori_loop_stays_compiled():
    def body(i, x):
        return jnp.sort(x * 1.0001 + 0.5)[::-1] * 0.999

    def f(x):
        return lax.fori_loop(0, 200, body, x)
    x = np.linspace(-1, 1, 16).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning
        got, want = run_both(f, x)
    assert_same_bits(got, want)


# -- one equation falls back, inside loops and branches ---------------------------------
def test_unlowered_equations_inside_loops_run_from_object_mode(monkeypatch):
    from absjit.backends.base import get_backend
    # the warning is once per process and name: another test may have had it already
    monkeypatch.setattr(get_backend("cpu"), "_warned", set())
    calls = []

    def record(x):
        calls.append(float(x))
        return np.asarray(x * 2, np.float32)

    def body(i, x):
        y = jnp.fft.fft(x).real.astype(jnp.float32)          # fft: no loop lowering
        z = lax.cond(i % 2 == 0,
                     lambda v: jnp.linalg.cholesky(jnp.eye(3) * (2.0 + v[0] ** 2))[0, 0],
                     lambda v: v[1], x)
        w = absjit.pure_callback(record, absjit.ShapeDtypeStruct((), jnp.float32), x[0])
        return 1e-3 * (y + z + w) + x

    def f(x):
        return lax.fori_loop(0, 5, body, x)
    x = np.linspace(0, 1, 8).astype(np.float32)
    with pytest.warns(RuntimeWarning, match="object-mode block"):
        compiled = absjit.jit(f, backend="cpu").lower(x).compile()
    assert isinstance(compiled.executable, NumbaExecutable)
    got = compiled(x)
    assert len(calls) == 5  # the callback ran once per iteration, inside the loop
    want = absjit.jit(f, backend="interpret")(x)
    assert_close(got, want, rtol=1e-5)
    assert calls[:5] == calls[5:]  # the same arguments, in the same order


def test_solve_inside_fori_loop_compiles_and_matches_interpret():
    """Newton's method, ``w - solve(H(w), g(w))`` in a ``fori_loop``: the LU pivots are
    a result nothing reads, which Numba used to reject in a loop body."""
    def newton(w0):
        def step(i, w):
            h = jnp.eye(4) * 3.0 + jnp.outer(w, w) * 0.1
            return w - jnp.linalg.solve(h, w ** 3 + w - 1.0)
        return lax.fori_loop(0, 5, step, w0)
    w0 = np.linspace(0.1, 0.4, 4).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got, want = run_both(newton, w0)
    assert_close(got, want, rtol=1e-5)
    assert_close(got, np.full(4, 0.6823278, np.float32), rtol=5e-3, atol=0)


@pytest.mark.parametrize("dtype", [pytest.param(np.float32, marks=pytest.mark.slow),
                                   np.float64])
def test_lapack_lowerings_match_the_reference(dtype):
    """lu (square, wide, tall, stacked), cholesky (with matrices that are not positive
    definite or hold NaN: NaN factors, no exception), every triangular_solve variant, and
    solve with singular and non-finite matrices (NaN/inf, no exception): compiled calls
    of LAPACK agree with the NumPy reference."""
    import itertools
    from absjit.backends.numba_cpu.lowering import lower_arrays, lower_linalg
    from absjit.ops import linalg_decomp as ld
    assert all(lower_arrays.array_rules[p] is r for p, r in lower_linalg.RULES.items())
    absjit.config.update("enable_x64", dtype == np.float64)  # reset by a fixture
    rng = np.random.default_rng(4)
    tol = dict(rtol=2e-4, atol=2e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no object-mode fallback
        for shape in [(5, 5), (3, 4, 6), (2, 6, 4), (2, 3, 7, 7)]:
            got, want = run_both(ld.lu_p.bind, rng.standard_normal(shape).astype(dtype))
            assert_close(got, want, **tol)
        a = rng.standard_normal((3, 6, 6)).astype(dtype)
        spd = a @ a.transpose(0, 2, 1) + 6 * np.eye(6, dtype=dtype)
        bad = spd.copy()
        bad[1], bad[2, 0, 0] = -bad[1], np.nan
        got, want = run_both(lambda m: lax.linalg.cholesky(m), np.concatenate([spd, bad]))
        assert_close(got, want, **tol)
        assert np.isnan(np.asarray(got)[4:]).any() and np.isfinite(np.asarray(got)[:3]).all()
        tri = np.tril(rng.standard_normal((2, 5, 5))).astype(dtype) + 3 * np.eye(5, dtype=dtype)
        # Every variant in one program (one compile): 16 triangular solves.
        variants = list(itertools.product([True, False], repeat=4))
        rhs = {left: rng.standard_normal((2, 5, 3) if left else (2, 3, 5)).astype(dtype)
               for left in (True, False)}

        def solves(lo, up, b_left, b_right):
            return [lax.linalg.triangular_solve(
                lo if lower else up, b_left if left else b_right, left_side=left,
                lower=lower, transpose_a=trans, unit_diagonal=unit)
                for left, lower, trans, unit in variants]
        got, want = run_both(solves, tri, tri.transpose(0, 2, 1).copy(), rhs[True], rhs[False])
        assert len(got) == 16
        assert_close(got, want, **tol)
        m = rng.standard_normal((4, 8, 8)).astype(dtype)
        m[1, :, 3], m[2, 0, 0] = 0, np.inf
        got, want = run_both(lambda m, b: jnp.linalg.solve(m, b[..., None]), m,
                             rng.standard_normal((4, 8)).astype(dtype))
        assert_close(got, want, **tol)
        assert not np.isfinite(np.asarray(got)[1:3]).all()


def _in_loop_body(f):
    """``f`` recomputed inside a ``fori_loop`` body (where its decomposition is a
    compiled LAPACK call; at the top level it runs between pieces)."""
    def g(x):
        return lax.fori_loop(0, 1, lambda i, c: (c[0], f(c[0])), (x, f(x)))[1]
    return g


def _fix_signs(vectors, axis):
    """Each vector along ``axis`` scaled by the sign of its largest component (LAPACK
    builds may return either sign)."""
    idx = np.argmax(np.abs(vectors), axis=axis, keepdims=True)
    return vectors * np.sign(np.take_along_axis(vectors, idx, axis=axis))


def _fix_phases(vectors):
    """Each column of (B, n, n) complex ``vectors`` divided by the phase of its largest
    component."""
    idx = np.argmax(np.abs(vectors), axis=1)[:, None, :]
    lead = np.take_along_axis(vectors, idx, axis=1)
    return vectors * (np.abs(lead) / lead)


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64,
                                                            marks=pytest.mark.slow)])
def test_eigh_eig_qr_svd_in_loop_bodies_are_compiled_lapack_calls(dtype):
    """eigh (either triangle), eig, qr and svd (tall, wide, full or reduced, without
    u/v) inside loop bodies: compiled LAPACK calls, no object mode, agreeing with the NumPy
    reference up to the signs of vectors; a matrix holding NaN gives NaN outputs and the
    other matrices of its stack are unaffected."""
    absjit.config.update("enable_x64", dtype == np.float64)  # reset by a fixture
    rng = np.random.default_rng(8)
    tol = dict(rtol=3e-4, atol=3e-4)
    a = rng.standard_normal((3, 5, 5)).astype(dtype)
    a[1, 3, 1] = np.nan  # below the diagonal: only the lower-triangle call reads it
    a[2, 1, 3] = np.nan  # above it: only the upper-triangle call reads it
    # (function, operand, for each output the axis along which it holds vectors whose
    # sign LAPACK may choose: eigh's and svd's u columns, qr's q columns and r rows,
    # svd's vt rows); one program per operand, so one compile.
    cases = [(lambda m: (*lax.linalg.eigh(m, lower=True, symmetrize_input=False),
                         *lax.linalg.eigh(m, lower=False, symmetrize_input=False)),
              a, (1, None, 1, None))]
    general = rng.standard_normal((3, 5, 5)).astype(dtype)
    general[1, 2, 0] = np.nan
    cases.append((lambda m: tuple(jnp.linalg.eig(m)), general, (None, "phase")))
    tall = rng.standard_normal((2, 6, 4)).astype(dtype)
    wide = rng.standard_normal((2, 4, 6)).astype(dtype)
    tall[1, 0, 0] = wide[1, 0, 0] = np.nan
    cases.append((lambda m: (*jnp.linalg.qr(m, mode="complete"),
                             *jnp.linalg.qr(m, mode="reduced"),
                             *jnp.linalg.svd(m, full_matrices=True),
                             *jnp.linalg.svd(m, full_matrices=False),
                             jnp.linalg.svd(m, compute_uv=False)),
                  tall, (1, 2, 1, 2, 1, None, 2, 1, None, 2, None)))
    cases.append((lambda m: (*jnp.linalg.qr(m, mode="complete"),
                             *jnp.linalg.svd(m, full_matrices=False)),
                  wide, (1, 2, 1, None, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no object-mode fallback
        for f, x, axes in cases:
            compiled = absjit.jit(_in_loop_body(f), backend="cpu").lower(x).compile()
            assert isinstance(compiled.executable, NumbaExecutable)
            assert "objmode" not in compiled.as_text()
            got = compiled(x)
            want = absjit.jit(f, backend="interpret")(x)
            assert len(got) == len(want) == len(axes)
            for g, w, axis in zip(got, want, axes):
                g, w = np.asarray(g), np.asarray(w)
                assert g.shape == w.shape and g.dtype == w.dtype
                bad = np.isnan(w).reshape(len(w), -1).any(axis=1)
                assert bad.sum() == 1 and np.isnan(g[bad]).all()
                assert not np.isnan(g[~bad]).any()
                g, w = g[~bad], w[~bad]
                if axis == "phase":  # complex eigenvectors: up to a unit factor
                    g, w = _fix_phases(g), _fix_phases(w)
                elif axis is not None:
                    g, w = _fix_signs(g, axis), _fix_signs(w, axis)
                assert_close(g, w, **tol)


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64,
                                                            marks=pytest.mark.slow)])
def test_schur_and_hessenberg_in_loop_bodies_are_compiled_lapack_calls(dtype):
    """The real and complex Schur forms and the Hessenberg form inside loop bodies:
    compiled LAPACK calls (``?gees``, ``?gehrd`` + ``?orghr``), no object mode, agreeing
    with SciPy's; orders 1 and 2 (SciPy's shortcut for the Hessenberg form), a matrix
    with complex eigenvalues, and a NaN that poisons its own matrix only."""
    import absjit.scipy.linalg as asl
    absjit.config.update("enable_x64", dtype == np.float64)  # reset by a fixture
    rng = np.random.default_rng(9)
    tol = dict(rtol=2e-4, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-10,
                                                                     atol=1e-10)

    def forms(m):
        return (*asl.schur(m), *asl.schur(m, output="complex"),
                *asl.hessenberg(m, calc_q=True))
    rotation = np.array([[0.0, -2.0, 1.0], [3.0, 0.0, 0.5], [0.0, 0.0, 1.0]])
    stacks = [rng.standard_normal((3, 6, 6)), rotation[None], rng.standard_normal((2, 2, 2)),
              rng.standard_normal((1, 1, 1))]
    stacks[0][1, 4, 2] = np.nan
    stacks = [x.astype(dtype) for x in stacks]

    def every_form(xs):  # one program (one compile) for every stack
        return [forms(x) for x in xs]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no object-mode fallback
        compiled = absjit.jit(_in_loop_body(every_form), backend="cpu").lower(
            stacks).compile()
    assert "objmode" not in compiled.as_text()
    assert "_complex_schur(" in compiled.as_text()
    for x, got, want in zip(stacks, compiled(stacks),
                            absjit.jit(every_form, backend="interpret")(stacks)):
        for g, w in zip(got, want):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype
            bad = np.isnan(w).reshape(len(w), -1).any(axis=1)
            assert np.isnan(g[bad]).all() and not np.isnan(g[~bad]).any()
            assert_close(g[~bad], w[~bad], **tol)
        t, z, tc, zc = (np.asarray(r)[~np.isnan(np.asarray(r)).any(axis=(1, 2))]
                        for r in got[:4])
        assert_close(zc @ tc @ np.conj(np.swapaxes(zc, 1, 2)),
                     x[~np.isnan(x).any(axis=(1, 2))], check_dtype=False, **tol)
        assert (np.tril(tc, -1) == 0).all()


@pytest.mark.parametrize("dtype", [np.complex64, pytest.param(np.complex128,
                                                              marks=pytest.mark.slow)])
def test_complex_factorizations_in_loop_bodies_are_compiled_lapack_calls(dtype):
    """lu, cholesky, triangular_solve (each side, transposed and conjugated), qr and
    hessenberg of complex matrices inside loop bodies: the complex LAPACK routines
    (``?getrf``, ``?potrf``, ``?trsm``, ``?geqrf`` + ``?ungqr``, ``?gehrd`` +
    ``?unghr``), no object mode, agreeing with the NumPy reference; a NaN poisons its
    own matrix only. Conjugating without transposing, which ``?trsm`` cannot do, stays
    correct through the host call."""
    import absjit.scipy.linalg as asl
    absjit.config.update("enable_x64", dtype == np.complex128)  # reset by a fixture
    rng = np.random.default_rng(10)
    tol = dict(rtol=5e-4, atol=5e-4) if dtype == np.complex64 else dict(rtol=1e-10,
                                                                       atol=1e-10)

    def cplx(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    m, b = cplx(3, 5, 5), cplx(3, 5, 2)
    spd = m @ np.conj(np.swapaxes(m, 1, 2)) + 5 * np.eye(5, dtype=dtype)
    m[1, 3, 2] = np.nan

    def forms(m, p, b):
        t = jnp.tril(p)
        return (*lax.linalg.lu(m), lax.linalg.cholesky(p),
                lax.linalg.triangular_solve(t, b, left_side=True, lower=True,
                                            transpose_a=True, conjugate_a=True),
                lax.linalg.triangular_solve(t, jnp.swapaxes(b, 1, 2), left_side=False,
                                            lower=True),
                *jnp.linalg.qr(m), *asl.hessenberg(m, calc_q=True),
                jnp.linalg.solve(m, b))

    def conj_only(p, b):
        return lax.linalg.triangular_solve(jnp.tril(p), b, left_side=True, lower=True,
                                           conjugate_a=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no object-mode fallback
        compiled = absjit.jit(_in_loop_body(lambda a: forms(*a)), backend="cpu").lower(
            (m, spd, b)).compile()
    assert "objmode" not in compiled.as_text()
    got = compiled((m, spd, b))
    want = absjit.jit(lambda a: forms(*a), backend="interpret")((m, spd, b))
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        if g.dtype.kind in "iu":
            np.testing.assert_array_equal(g, w)
            continue
        bad = np.isnan(w).reshape(len(w), -1).any(axis=1)
        assert np.isnan(g[bad]).any(axis=(1, 2)).all() and not np.isnan(g[~bad]).any()
        assert_close(g[~bad], w[~bad], **tol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # its object-mode block
        assert_close(absjit.jit(_in_loop_body(lambda a: conj_only(*a)), backend="cpu")(
            (spd, b)), conj_only(spd, b), **tol)


@pytest.mark.parametrize("dtype", [np.complex64, pytest.param(np.complex128,
                                                              marks=pytest.mark.slow)])
def test_complex_spectral_decompositions_in_loop_bodies_are_compiled(dtype):
    """eigh (either triangle), eig, svd and schur of complex matrices inside loop
    bodies: ``?heevd``, ``?geev``, ``?gesdd`` and ``?gees`` with their real workspaces,
    no object mode; values as the NumPy reference's up to each vector's phase (LAPACK
    builds may choose another), the Schur form checked by its defining properties."""
    import absjit.scipy.linalg as asl
    absjit.config.update("enable_x64", dtype == np.complex128)  # reset by a fixture
    rng = np.random.default_rng(12)
    tol = dict(rtol=5e-4, atol=5e-4) if dtype == np.complex64 else dict(rtol=1e-9,
                                                                       atol=1e-9)
    shape = (3, 5, 5)
    m = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    m[1, 2, 3] = np.nan

    def forms(m):
        h = m + jnp.conj(jnp.swapaxes(m, 1, 2))
        return (*lax.linalg.eigh(h, lower=True, symmetrize_input=False),
                *lax.linalg.eigh(h, lower=False, symmetrize_input=False),
                *jnp.linalg.eig(m), *jnp.linalg.svd(m), jnp.linalg.svd(m, compute_uv=False),
                *asl.schur(m))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no object-mode fallback
        compiled = absjit.jit(_in_loop_body(forms), backend="cpu").lower(m).compile()
    text = compiled.as_text()
    assert "objmode" not in text
    for name in ("_lapack_eigh(", "_lapack_eig_complex(", "_lapack_svd(",
                 "_lapack_schur("):
        assert name in text
    got = [np.asarray(g) for g in compiled(m)]
    want = [np.asarray(w) for w in absjit.jit(forms, backend="interpret")(m)]
    ok = np.ones(3, bool)
    ok[1] = False
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert np.isnan(g[1]).any() and not np.isnan(g[ok]).any()
    fix_rows = lambda a: np.swapaxes(_fix_phases(np.swapaxes(a, 1, 2)), 1, 2)  # noqa: E731
    v1, w1, v2, w2, ew, ev, u, s, vt, s_only, t, z = (a[ok] for a in got)
    rv1, rw1, rv2, rw2, rew, rev, ru, rs, rvt, rs_only = (a[ok] for a in want[:10])
    for a, b in ((w1, rw1), (w2, rw2), (ew, rew), (s, rs), (s_only, rs)):
        assert_close(a, b, **tol)
    for a, b in ((v1, rv1), (v2, rv2), (ev, rev), (u, ru)):
        assert_close(_fix_phases(a), _fix_phases(b), **tol)
    assert_close(fix_rows(vt), fix_rows(rvt), **tol)
    zh = np.conj(np.swapaxes(z, 1, 2))
    assert_close(z @ t @ zh, m[ok], **tol)
    assert_close(z @ zh, np.broadcast_to(np.eye(5, dtype=dtype), z.shape), **tol)
    assert (np.tril(t, -1) == 0).all()
    assert_close(np.sort_complex(np.diagonal(t, axis1=1, axis2=2)), np.sort_complex(rew),
                 **tol)


FFT_CASES = [  # (name, absjit function, NumPy function, operand shape, complex operand)
    ("fft", jnp.fft.fft, np.fft.fft, (3, 16), True),          # radix 2
    ("ifft", jnp.fft.ifft, np.fft.ifft, (2, 12), True),       # Bluestein
    ("fft2", jnp.fft.fft2, np.fft.fft2, (2, 5, 8), True),     # both, over two axes
    ("rfft", jnp.fft.rfft, np.fft.rfft, (3, 15), False),
    ("rfftn", jnp.fft.rfftn, np.fft.rfftn, (2, 3, 10), False),
    ("irfft", lambda v: jnp.fft.irfft(v, 14), lambda v: np.fft.irfft(v, 14), (3, 8), True),
    ("irfft2", lambda v: jnp.fft.irfft2(v, (3, 9)), lambda v: np.fft.irfft2(v, (3, 9)),
     (2, 3, 5), True),
    ("fft_long", jnp.fft.fft, np.fft.fft, (1, 1000), True),   # Bluestein, m = 2048
    ("fft_1", jnp.fft.fft, np.fft.fft, (2, 1), True),
]


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64,
                                                            marks=pytest.mark.slow)])
def test_ffts_in_loop_bodies_are_compiled(dtype):
    """Every transform kind inside a loop body: compiled (no object mode), agreeing with
    NumPy's pocketfft to float32/float64 precision, NaN spreading through its line only."""
    absjit.config.update("enable_x64", dtype == np.float64)  # reset by a fixture
    rng = np.random.default_rng(11)
    ops, want = [], []
    for name, _, theirs, shape, complex_in in FFT_CASES:
        x = rng.standard_normal(shape)
        if complex_in:
            x = x + 1j * rng.standard_normal(shape)
        x = x.astype(np.result_type(dtype, np.complex64) if complex_in else dtype)
        if name == "fft":
            x[1, 3] = np.nan
        ops.append(x)
        want.append(theirs(x))

    def all_ffts(*xs):
        return tuple(ours(x) for (_, ours, *_), x in zip(FFT_CASES, xs))
    body = lambda *xs: lax.fori_loop(  # noqa: E731
        0, 1, lambda i, c: (c[0], all_ffts(*c[0])), (xs, all_ffts(*xs)))[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no object-mode fallback
        compiled = absjit.jit(body, backend="cpu").lower(*ops).compile()
    assert isinstance(compiled.executable, NumbaExecutable)
    assert "objmode" not in compiled.as_text()
    got = compiled(*ops)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for (name, *_), g, w in zip(FFT_CASES, got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, name  # NumPy keeps the width
        # A NaN makes its whole line NaN (which of a complex value's parts is NaN
        # depends on the algorithm's multiplications, so only "either" is compared).
        nan = np.isnan(w)
        np.testing.assert_array_equal(np.isnan(g), nan, err_msg=name)
        scale = np.abs(w[~nan]).max() if (~nan).any() else 1.0
        np.testing.assert_allclose(g[~nan], w[~nan], rtol=0, atol=tol * scale, err_msg=name)


def test_lapack_kernels_are_rendered_without_addresses():
    """The kernel names LAPACK by symbol (bound per process), so its source — and the
    disk cache key made from it — holds no address."""
    from absjit.backends.numba_cpu.kernels import lapack_symbols
    src = absjit.jit(lambda m: lax.linalg.cholesky(m)).lower(
        np.eye(3, dtype=np.float32)).compile().as_text()
    assert "_lapack_cholesky(" in src and "0x" not in src
    assert lapack_symbols.is_bound()


# -- conv_general_dilated -------------------------------------------------------------
CONVS = [
    # lhs shape, rhs shape, strides, padding, lhs_dil, rhs_dil, dimension numbers, fgc, bgc
    ((2, 3, 8, 9), (4, 3, 3, 3), (1, 1), "SAME", None, None, None, 1, 1),
    ((2, 3, 8, 9), (4, 3, 3, 2), (2, 1), [(1, -1), (2, 0)], (1, 2), (2, 1), None, 1, 1),
    ((2, 6, 8, 9), (4, 3, 3, 2), (2, 1), "VALID", None, (2, 1), None, 2, 1),
    ((4, 6, 8, 9), (4, 6, 3, 2), (1, 2), "SAME", (2, 1), None, None, 1, 2),
    ((2, 9, 8, 6), (3, 2, 6, 4), (1, 1), "SAME", None, None, ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 3, 10), (4, 3, 3), (2,), "SAME", (3,), (2,), None, 1, 1),
    ((1, 2, 4, 5, 6), (3, 2, 3, 2, 2), (1, 2, 1), "SAME", (1, 1, 2), None, None, 1, 1),
    ((2, 4, 3, 3), (2, 4, 3, 3), (1, 1), [(-1, 0), (0, 0)], None, None, None, 1, 1),
]


def _conv(spec):
    _, _, strides, padding, ld, rd, dn, fgc, bgc = spec
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, ld, rd, dn, fgc, bgc)


@pytest.mark.parametrize("dtype,cases", [(np.float32, CONVS), (np.float64, CONVS[1:4]),
                                         (np.int32, CONVS[2:5]), (np.complex64, CONVS[:2])])
def test_conv_matches_the_reference(dtype, cases):
    rng = np.random.default_rng(1)
    args = []
    for spec in cases:
        x, w = (rng.standard_normal(s) * 3 for s in spec[:2])
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(x.shape)
        args += [x.astype(dtype), w.astype(dtype)]

    def f(*args):
        return [_conv(s)(args[2 * k], args[2 * k + 1]) for k, s in enumerate(cases)]
    absjit.config.update("enable_x64", dtype == np.float64)  # reset by a fixture
    got, want = run_both(f, *args)
    single = dtype in (np.float32, np.complex64)
    assert_close(got, want, rtol=1e-4 if single else None, atol=1e-3 if single else None)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,k", [(2000, 101), (5000, 7), (6, 9), (4097, 4097)])
def test_convolve_and_correlate_as_tap_loops(mode, n, k):
    """1-D convolve/correlate take the per-tap axpy loops (no window matrix), blocked
    over output positions: every block edge, kernel longer than the signal, and
    inf/NaN inputs agree with the NumPy reference and with JAX."""
    from absjit.backends.numba_cpu.lowering import lower_conv
    from absjit.backends.numba_cpu.lowering.lower_conv import _axpy_applies, _Geometry
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n).astype(np.float32)
    w = rng.standard_normal(k).astype(np.float32)
    x[n // 2] = np.inf if n > 10 else x[n // 2]
    got, want = run_both(lambda a, b: (jnp.convolve(a, b, mode=mode),
                                       jnp.correlate(a, b, mode=mode)), x, w)
    assert_close(got, want, rtol=1e-4, atol=1e-3)
    try:
        import jax
        jx = jax.jit(lambda a, b: (jax.numpy.convolve(a, b, mode=mode),
                                   jax.numpy.correlate(a, b, mode=mode)))(x, w)
        assert_close(got, [np.asarray(v) for v in jx], rtol=1e-4, atol=1e-3)
    except ImportError:
        pass
    jaxpr = absjit.make_jaxpr(lambda a, b: jnp.convolve(a, b, mode=mode))(x, w).jaxpr
    eqn = next(e for e in jaxpr.eqns if e.primitive.name == "conv_general_dilated")
    geo = _Geometry([v.aval for v in eqn.invars], [v.aval for v in eqn.outvars], eqn.params)
    assert _axpy_applies(geo) and lower_conv.AXPY_MAX_FEATURE_PAIRS >= 1


def test_conv_blas_path_specials_empty_and_noncontiguous():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 16, 12, 12)).astype(np.float32)
    x[0, 3, 4, 5] = np.nan
    x[1, 2, 0, 0] = np.inf
    w = rng.standard_normal((3, 3, 16, 8)).astype(np.float32)   # HWIO, 18k MACs/out row
    empty = np.zeros((0, 3, 5, 5), np.float32)
    k = np.ones((2, 3, 2, 2), np.float32)

    def f(x, w, empty, k):
        xt = jnp.transpose(x, (0, 2, 3, 1))                       # NHWC, not contiguous
        return (lax.conv_general_dilated(xt, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC")),
                lax.conv_general_dilated(x[:, :, ::2, ::2], jnp.transpose(w, (3, 2, 0, 1)),
                                         (2, 1), [(2, 1), (0, 3)], rhs_dilation=(2, 1)),
                lax.conv_general_dilated(empty, k, (1, 1), "VALID"))
    got, want = run_both(f, x, w, empty, k)
    assert_close(got, want, rtol=1e-4, atol=1e-4)


# -- complex arithmetic ---------------------------------------------------------------
_CVALS = np.array([0, -0.0, 1 + 2j, -3.5 - 0.5j, 0.25j, np.inf, -np.inf, complex(np.inf, 1),
                   complex(1, np.inf), complex(np.nan, 0), complex(0, np.nan), 2 - 1e-3j],
                  np.complex128)

_UNARY = [jnp.exp, jnp.log, jnp.sqrt, jnp.sin, jnp.cos, jnp.tan, jnp.arcsin, jnp.arccos,
          jnp.arctan, jnp.sinh, jnp.cosh, jnp.tanh, jnp.arcsinh, jnp.arccosh, jnp.arctanh,
          jnp.sign, jnp.abs, jnp.real, jnp.imag, jnp.conj, jnp.negative,
          lambda z: z ** 3, lambda z: 1 / z, lax.rsqrt]


# complex128 runs the rules with special cases of their own (one compile is ~1 s).
_UNARY_128 = [jnp.sinh, jnp.cosh, jnp.tanh, jnp.arccosh, jnp.sign, lambda z: 1 / z]


@pytest.mark.parametrize("dtype,unary", [(np.complex64, _UNARY), (np.complex128, _UNARY_128)])
def test_complex_elementwise_ops_match_numpy(dtype, unary):
    z = _CVALS.astype(dtype)
    y = np.roll(z, 3)

    def f(z, y):
        outs = [fn(z) for fn in unary]
        if dtype == np.complex128:
            return outs + [z / y, z < y, z >= y, jnp.maximum(z, y)]
        outs += [z + y, z - y, z * y, z / y, z[2:5] ** z[2:5], z == y, z != y, z < y, z <= y, z > y,
                 z >= y, jnp.maximum(z, y), jnp.minimum(z, y), jnp.where(z == z, z, y),
                 z.real.astype(jnp.int32), jnp.sum(z * 2), jnp.prod(z[2:5]),
                 jnp.dot(z[:4], y[:4]), z.real + 1j * y.imag]
        return outs
    absjit.config.update("enable_x64", dtype == np.complex128)
    with np.errstate(all="ignore"):
        got, want = run_both(f, z, y)
    assert_close(got, want)


_LARGE_SORT = r"""
import os, numpy as np
os.environ["ABSJIT_DISABLE_DISK_CACHE"] = "1"
import absjit, absjit.numpy as jnp
x = np.random.default_rng(0).standard_normal(200_003).astype(np.float32)
x[::97] = np.nan
f = absjit.jit(lambda v: (jnp.sort(v)[::-1] * 2, jnp.argsort(v) + 1), backend="cpu")
s, i = f(x)
want = "prange(" if os.environ.get("ABSJIT_POOL_LOOPS") == "0" else "_pool_for("
assert want in f.lower(x).compile().as_text()
np.testing.assert_array_equal(np.asarray(s), np.sort(x)[::-1] * 2)
np.testing.assert_array_equal(np.asarray(i), np.argsort(x, kind="stable") + 1)
print("ok")
"""


@pytest.mark.parametrize("pool_loops", ["0", "1"])
def test_large_sort_with_parallel_consumer_compiles(pool_loops):
    # A merge sort that swapped two buffer variables sent Numba's parallel passes into
    # endless copy propagation once the kernel also held a prange loop (>= 2**17
    # elements): the first call never returned.
    import os
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", _LARGE_SORT], capture_output=True,
                          text=True, timeout=240,
                          env=dict(os.environ, ABSJIT_POOL_LOOPS=pool_loops))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
