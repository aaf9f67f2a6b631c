"""Every whole-array primitive compiles inside a loop body: the cpu backend renders it
into the loop's kernel, with no object-mode block (a round trip through Python at every
iteration), for float32 operands (``test_lowerings.py`` checks the LAPACK routines for
the other float and complex types). The primitives that must call Python, or that never reach a
backend, are listed with the reason; one that is neither listed nor covered here fails
the test.

Elementwise primitives, index maps and reductions are rendered as loops by the compiler
itself (``tests/test_rule_coverage.py`` checks each has its rule).
"""
from __future__ import annotations

import warnings

import numpy as np

import absjit
import absjit.numpy as jnp
import absjit.scipy.linalg as asl
from absjit import lax
from absjit.backends.base import CompileOptions
from absjit.backends.numba_cpu.backend import render_program
from absjit.backends.numba_cpu.lowering.half import lower_half
from absjit.backends.numba_cpu.lowering.lower_host import HOST_CALLS
from absjit.compiler import compile_to_ir
from absjit.core.fusion import Opaque, fusion_kind
from absjit.core.primitive import all_primitives

MUST_CALL_PYTHON = {
    "pure_callback": "calls a Python function",
    "io_callback": "calls a Python function",
    "debug_callback": "calls a Python function",
    "debug_print": "formats and prints from Python",
}
NEVER_IN_A_BACKEND = {
    "psum": "vmap removes collectives over its named axis", "pmax": "as psum",
    "pmin": "as psum", "all_gather": "as psum", "axis_index": "as psum",
    "custom_lin": "only in linearised jaxprs, which are transposed, not run",
}

rng = np.random.default_rng(0)
_m = rng.standard_normal((4, 4)).astype(np.float32)
SPD = _m @ _m.T + 4 * np.eye(4, dtype=np.float32)
TRI = np.tril(_m) + 3 * np.eye(4, dtype=np.float32)
V = rng.standard_normal(8).astype(np.float32)
IDX = np.array([1, 3, 1], np.int32)
UPD = np.array([0.5, -2.0, 4.0], np.float32)
IMG = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
KER = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)

# primitive -> function of ARGS computing it (operands come through the loop's carry)
ARGS = (SPD, TRI, V, IDX, UPD, IMG, KER)
CASES = {
    "cholesky": lambda s, t, v, i, u, im, k: lax.linalg.cholesky(s),
    "concatenate": lambda s, t, v, i, u, im, k: jnp.concatenate([v, v * 2]),
    "conv_general_dilated": lambda s, t, v, i, u, im, k: lax.conv(im, k, (1, 1), "SAME"),
    "cummax": lambda s, t, v, i, u, im, k: lax.cummax(v, axis=0),
    "cummin": lambda s, t, v, i, u, im, k: lax.cummin(v, axis=0),
    "cumprod": lambda s, t, v, i, u, im, k: jnp.cumprod(v),
    "cumsum": lambda s, t, v, i, u, im, k: jnp.cumsum(v),
    "dot_general": lambda s, t, v, i, u, im, k: s @ t,
    "dynamic_update_slice": lambda s, t, v, i, u, im, k: lax.dynamic_update_slice(
        v, u, (i[0],)),
    "eig": lambda s, t, v, i, u, im, k: jnp.linalg.eig(t + s.T),
    "eigh": lambda s, t, v, i, u, im, k: jnp.linalg.eigh(s),
    "fft": lambda s, t, v, i, u, im, k: jnp.fft.fft(v),
    "lu": lambda s, t, v, i, u, im, k: lax.linalg.lu(s),
    "pad": lambda s, t, v, i, u, im, k: lax.pad(v, np.float32(0), [(1, 2, 1)]),
    "qr": lambda s, t, v, i, u, im, k: jnp.linalg.qr(s),
    "svd": lambda s, t, v, i, u, im, k: jnp.linalg.svd(s),
    "hessenberg": lambda s, t, v, i, u, im, k: asl.hessenberg(t + s.T, calc_q=True),
    "schur": lambda s, t, v, i, u, im, k: (asl.schur(t + s.T),
                                            asl.schur(t + s.T, output="complex")),
    "scatter": lambda s, t, v, i, u, im, k: v.at[i].set(u),
    "scatter-add": lambda s, t, v, i, u, im, k: v.at[i].add(u),
    "scatter-max": lambda s, t, v, i, u, im, k: v.at[i].max(u),
    "scatter-min": lambda s, t, v, i, u, im, k: v.at[i].min(u),
    "scatter-mul": lambda s, t, v, i, u, im, k: v.at[i].multiply(u),
    "sort": lambda s, t, v, i, u, im, k: jnp.sort(v),
    "top_k": lambda s, t, v, i, u, im, k: lax.top_k(v, 3),
    "triangular_solve": lambda s, t, v, i, u, im, k: lax.linalg.triangular_solve(
        t, s, left_side=True, lower=True),
}


def test_every_whole_array_primitive_is_covered_or_listed():
    opaque = {n for n, p in all_primitives().items()
              if p.module.startswith("absjit.") and isinstance(fusion_kind(p), Opaque)}
    listed = set(CASES) | set(MUST_CALL_PYTHON) | set(NEVER_IN_A_BACKEND)
    assert opaque - listed == set(), "a whole-array primitive with no case here"
    assert listed - opaque == set(), "a listed name that is not a whole-array primitive"


def _loop_source(cases, args) -> str:
    """The cpu backend's source for one ``fori_loop`` whose body computes every case
    (rendered only: Numba compiling it adds nothing to what is checked here, and each
    lowering's results are tested against the reference in its own test file)."""
    def all_cases(*a):
        return {name: f(*a) for name, f in cases.items()}

    def program(*a):
        return lax.fori_loop(0, 2, lambda i, c: (c[0], all_cases(*c[0])),
                             (a, all_cases(*a)))[1]
    options = CompileOptions()
    closed = absjit.make_jaxpr(program)(*args)
    prog, _ = lower_half(compile_to_ir(closed, options), options)
    return render_program(prog, True)[0]


def test_no_object_mode_in_a_loop_body():
    before = set(HOST_CALLS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        src = _loop_source(CASES, ARGS)
    in_objmode = sorted({HOST_CALLS[key][0].name for key in set(HOST_CALLS) - before
                         if key in src})
    assert in_objmode == [] and "objmode" not in src, in_objmode
    for name in ("_lapack_eigh(", "_fft_c2c_axis(", "_top_k_rows(", "_lapack_svd(",
                 "_lapack_eig(", "_lapack_schur(", "_complex_schur(", "_lapack_hessenberg("):
        assert name in src  # the cases did reach the loop body


def test_the_check_sees_an_object_mode_block():
    """An operand the compiled call does not serve (a complex triangular solve that
    conjugates without transposing, which ``?trsm`` cannot do) does render an
    object-mode block, which the test above would report by name."""
    before = set(HOST_CALLS)
    src = _loop_source({"triangular_solve": lambda s, t, *rest: lax.linalg.triangular_solve(
        t.astype(np.complex64), s.astype(np.complex64), left_side=True, lower=True,
        conjugate_a=True)}, ARGS)
    assert "objmode" in src
    assert {HOST_CALLS[key][0].name for key in set(HOST_CALLS) - before if key in src} \
        == {"triangular_solve"}
