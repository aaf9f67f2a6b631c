"""``lu``, ``cholesky``, ``triangular_solve``, ``eigh``, ``qr``, ``svd``, ``eig``,
``schur`` and ``hessenberg`` lowered to calls of LAPACK/BLAS from the kernel
(:mod:`.lapack_kernels`; symbols bound by :mod:`.lapack_symbols`): compiled code, also
inside loop and branch bodies, one routine call per matrix of a stack.

At the top level of a program all but the first three still run between compiled
pieces (:data:`.lower_arrays.TOP_LEVEL_ON_HOST`): NumPy's batched call is as fast there
and costs no compile; these rules serve loop and branch bodies, where the alternative
is an object-mode block.

Matrices with static shapes, of float32/float64/complex64/complex128; symbolic sizes
(and a triangular solve conjugating without transposing, which ``?trsm`` cannot do)
keep the object-mode call of the NumPy implementation (:func:`.lower_host.host_rule`).
"""
from __future__ import annotations

import numpy as np

from ....core.dims import Dim
from ....core.shapes import shape_code as _shape
from ....ops import linalg_decomp as ld
from ....ops import linalg_schur as lsc
from ....ops import linalg_spectral as ls
from ..kernels.lapack_symbols import dtypes_of, ensure_symbols
from ...numba.lower_elementwise import dtype_ctor
from .lower_host import host_rule

__all__ = ["RULES", "lower_lu", "lower_cholesky", "lower_triangular_solve", "lower_eigh",
           "lower_qr", "lower_svd", "lower_eig", "lower_schur", "lower_hessenberg"]


def _static(*avals) -> bool:
    return all(type(d) is not Dim for a in avals for d in a.shape)


def _compiled(in_avals, out_avals, nonempty, dtypes) -> bool:
    """Whether the LAPACK call serves these operands (else the host call does): an
    element type of ``dtypes``, static shapes, and no empty dimension in the first
    ``nonempty`` operands."""
    return (np.dtype(in_avals[0].dtype) in dtypes and _static(*in_avals, *out_avals)
            and all(int(d) > 0 for a in in_avals[:nonempty] for d in a.shape))


def _batch(shape) -> int:
    """How many matrices a stack of shape ``(..., rows, cols)`` holds."""
    nb = 1
    for d in shape[:-2]:
        nb *= int(d)
    return nb


def _stack(shape) -> str:
    """``(batch, rows, cols)`` of a stack of matrices, as source."""
    return f"({_batch(shape)}, {int(shape[-2])}, {int(shape[-1])})"


def _flag(value) -> str:
    """A flag argument as a run-time bool: a literal ``True`` would make Numba compile
    the routine's kernel once per combination of flags (16 for ``trsm``, ~1 s each)."""
    return f"np.bool_({bool(value)})"


def _alloc(outs, out_avals) -> list:
    return [f"{o} = _empty({_shape(a.shape)}, {dtype_ctor(a.dtype)})"
            for o, a in zip(outs, out_avals)]


def _lapack_rule(prim, *routines, nonempty=1, complex_routines=()):
    """The rule of ``prim``, computed by the LAPACK ``routines`` (by
    ``complex_routines`` instead for complex operands, where given): where
    :func:`_compiled` allows (operands of an element type the routines come in), the
    results allocated and then the routine call ``render(outs, ins, in_avals,
    out_avals, **params)`` gives (source lines, or None for an operand it does not
    serve); elsewhere the host call of the NumPy implementation."""
    dtypes = dtypes_of(*routines)
    if complex_routines:
        dtypes = dtypes | dtypes_of(*complex_routines)

    def wrap(render):
        def rule(ctx, outs, ins, in_avals, out_avals, **params):
            lines = render(outs, ins, in_avals, out_avals, **params) \
                if _compiled(in_avals, out_avals, nonempty, dtypes) else None
            if lines is None:
                return host_rule(prim)(ctx, outs, ins, in_avals, out_avals, **params)
            ensure_symbols()
            return _alloc(outs, out_avals) + lines
        rule.__name__ = rule.__qualname__ = render.__name__
        rule.__doc__ = render.__doc__
        return rule
    return wrap


@_lapack_rule(ld.lu_p, "getrf")
def lower_lu(outs, ins, in_avals, out_avals):
    shape = tuple(int(d) for d in in_avals[0].shape)
    nb = _batch(shape)
    lu, piv, perm = outs
    k = min(shape[-2:])
    return [f"_lapack_lu({ins[0]}.reshape({_stack(shape)}), {lu}.reshape({_stack(shape)}), "
            f"{piv}.reshape(({nb}, {k})), {perm}.reshape(({nb}, {shape[-2]})))"]


@_lapack_rule(ld.cholesky_p, "potrf")
def lower_cholesky(outs, ins, in_avals, out_avals):
    stack = _stack(in_avals[0].shape)
    return [f"_lapack_cholesky({ins[0]}.reshape({stack}), {outs[0]}.reshape({stack}))"]


@_lapack_rule(ld.triangular_solve_p, "trsm", nonempty=2)
def lower_triangular_solve(outs, ins, in_avals, out_avals, *, left_side, lower,
                           transpose_a, conjugate_a, unit_diagonal):
    conjugate = conjugate_a and np.dtype(in_avals[0].dtype).kind == "c"
    if conjugate and not transpose_a:
        return None  # ?trsm conjugates only with the transpose
    return [f"_blas_trsm({ins[0]}.reshape({_stack(in_avals[0].shape)}), "
            f"{ins[1]}.reshape({_stack(in_avals[1].shape)}), "
            f"{outs[0]}.reshape({_stack(in_avals[1].shape)}), {_flag(left_side)}, "
            f"{_flag(lower)}, {_flag(transpose_a)}, {_flag(conjugate)}, "
            f"{_flag(unit_diagonal)})"]


@_lapack_rule(ls.eigh_p, "syevd", complex_routines=("heevd",))
def lower_eigh(outs, ins, in_avals, out_avals, *, lower, sort_eigenvalues):
    shape = in_avals[0].shape
    v, w = outs
    return [   # ?syevd and ?heevd sort ascending either way
        f"_lapack_eigh({ins[0]}.reshape({_stack(shape)}), "
        f"{v}.reshape({_stack(shape)}), "
        f"{w}.reshape(({_batch(shape)}, {int(shape[-1])})), {_flag(lower)})"]


@_lapack_rule(ls.qr_p, "geqrf", "orgqr")
def lower_qr(outs, ins, in_avals, out_avals, *, full_matrices):
    q, r = outs
    return [f"_lapack_qr({ins[0]}.reshape({_stack(in_avals[0].shape)}), "
            f"{q}.reshape({_stack(out_avals[0].shape)}), "
            f"{r}.reshape({_stack(out_avals[1].shape)}))"]


def _untouched(dtype) -> str:
    """A placeholder array for an output the routine is told not to compute."""
    return f"_empty((1, 1, 1), {dtype_ctor(dtype)})"


@_lapack_rule(ls.svd_p, "gesdd", complex_routines=("gesdd_complex",))
def lower_svd(outs, ins, in_avals, out_avals, *, full_matrices, compute_uv):
    shape = in_avals[0].shape
    k = min(int(shape[-2]), int(shape[-1]))
    if compute_uv:
        u = f"{outs[1]}.reshape({_stack(out_avals[1].shape)})"
        vt = f"{outs[2]}.reshape({_stack(out_avals[2].shape)})"
    else:
        u = vt = _untouched(in_avals[0].dtype)
    return [f"_lapack_svd({ins[0]}.reshape({_stack(shape)}), "
            f"{outs[0]}.reshape(({_batch(shape)}, {k})), {u}, {vt}, {_flag(compute_uv)})"]


@_lapack_rule(ls.eig_p, "geev", complex_routines=("geev_complex",))
def lower_eig(outs, ins, in_avals, out_avals, *, compute_eigenvectors):
    shape = in_avals[0].shape
    v = f"{outs[1]}.reshape({_stack(shape)})" if compute_eigenvectors else \
        _untouched(out_avals[0].dtype)
    kernel = "_lapack_eig_complex" if np.dtype(in_avals[0].dtype).kind == "c" else \
        "_lapack_eig"  # (a complex matrix's eigenvalues come whole, not in pairs)
    return [f"{kernel}({ins[0]}.reshape({_stack(shape)}), "
            f"{outs[0]}.reshape(({_batch(shape)}, {int(shape[-1])})), {v}, "
            f"{_flag(compute_eigenvectors)})"]


@_lapack_rule(lsc.schur_p, "gees", complex_routines=("gees_complex",))
def lower_schur(outs, ins, in_avals, out_avals, *, output):
    stack = _stack(in_avals[0].shape)
    t, z = (f"{o}.reshape({stack})" for o in outs)
    if np.dtype(in_avals[0].dtype).kind == "c" or np.dtype(out_avals[0].dtype).kind != "c":
        return [f"_lapack_schur({ins[0]}.reshape({stack}), {t}, {z})"]
    # the real form first, then made complex (as the NumPy implementation does)
    real = dtype_ctor(in_avals[0].dtype)
    tr, zr = f"{outs[0]}_real", f"{outs[1]}_real"
    return [f"{tr} = _empty({stack}, {real})", f"{zr} = _empty({stack}, {real})",
            f"_lapack_schur({ins[0]}.reshape({stack}), {tr}, {zr})",
            f"_complex_schur({tr}, {zr}, {t}, {z})"]


@_lapack_rule(lsc.hessenberg_p, "gehrd", "orghr")
def lower_hessenberg(outs, ins, in_avals, out_avals):
    stack = _stack(in_avals[0].shape)
    h, q = (f"{o}.reshape({stack})" for o in outs)
    return [f"_lapack_hessenberg({ins[0]}.reshape({stack}), {h}, {q})"]


RULES = {ld.lu_p: lower_lu, ld.cholesky_p: lower_cholesky,
         ld.triangular_solve_p: lower_triangular_solve, ls.eigh_p: lower_eigh,
         ls.qr_p: lower_qr, ls.svd_p: lower_svd, ls.eig_p: lower_eig,
         lsc.schur_p: lower_schur, lsc.hessenberg_p: lower_hessenberg}
