"""``lu``, ``cholesky``, ``triangular_solve``, ``eigh``, ``qr``, ``svd`` and ``eig`` lowered to calls
of LAPACK/BLAS from the kernel (:mod:`.lapack_kernels`; symbols bound by
:mod:`.lapack_symbols`): compiled code, also inside loop and branch bodies, one routine
call per matrix of a stack.

At the top level of a program ``eigh``, ``qr``, ``svd`` and ``eig`` still run between compiled
pieces (:data:`.lower_arrays.TOP_LEVEL_ON_HOST`): NumPy's batched call is as fast there and costs no
compile; these rules serve loop and branch bodies, where the alternative is an
object-mode block.

float32/float64 matrices with static shapes only; other dtypes (complex, half) and
symbolic sizes keep the object-mode call of the NumPy implementation
(:func:`.lower_host.host_rule`).
"""
from __future__ import annotations

import numpy as np

from ...core.dims import Dim
from ...core.shapes import shape_code as _shape
from ...ops import linalg_decomp as ld
from ...ops import linalg_spectral as ls
from .lapack_symbols import LAPACK_DTYPES, ensure_symbols
from .lower_elementwise import dtype_ctor
from .lower_host import host_rule

__all__ = ["RULES", "lower_lu", "lower_cholesky", "lower_triangular_solve", "lower_eigh",
           "lower_qr", "lower_svd", "lower_eig"]


def _static(*avals) -> bool:
    return all(type(d) is not Dim for a in avals for d in a.shape)


def _compiled(prim, in_avals, out_avals) -> bool:
    """Whether the LAPACK call serves these operands (else the host call does)."""
    return (np.dtype(in_avals[0].dtype) in LAPACK_DTYPES and _static(*in_avals, *out_avals)
            and all(int(d) > 0 for d in in_avals[0].shape))


def _stack(shape) -> str:
    """``(batch, rows, cols)`` of a stack of matrices, as source."""
    nb = 1
    for d in shape[:-2]:
        nb *= int(d)
    return f"({nb}, {int(shape[-2])}, {int(shape[-1])})"


def _flag(value) -> str:
    """A flag argument as a run-time bool: a literal ``True`` would make Numba compile
    the routine's kernel once per combination of flags (16 for ``trsm``, ~1 s each)."""
    return f"np.bool_({bool(value)})"


def _alloc(outs, out_avals) -> list:
    return [f"{o} = _empty({_shape(a.shape)}, {dtype_ctor(a.dtype)})"
            for o, a in zip(outs, out_avals)]


def lower_lu(ctx, outs, ins, in_avals, out_avals):
    if not _compiled(ld.lu_p, in_avals, out_avals):
        return host_rule(ld.lu_p)(ctx, outs, ins, in_avals, out_avals)
    ensure_symbols()
    shape = tuple(int(d) for d in in_avals[0].shape)
    nb = _stack(shape)[1:].split(",")[0]
    lu, piv, perm = outs
    k = min(shape[-2:])
    return _alloc(outs, out_avals) + [
        f"_lapack_lu({ins[0]}.reshape({_stack(shape)}), {lu}.reshape({_stack(shape)}), "
        f"{piv}.reshape(({nb}, {k})), {perm}.reshape(({nb}, {shape[-2]})))"]


def lower_cholesky(ctx, outs, ins, in_avals, out_avals):
    if not _compiled(ld.cholesky_p, in_avals, out_avals):
        return host_rule(ld.cholesky_p)(ctx, outs, ins, in_avals, out_avals)
    ensure_symbols()
    stack = _stack(in_avals[0].shape)
    return _alloc(outs, out_avals) + [
        f"_lapack_cholesky({ins[0]}.reshape({stack}), {outs[0]}.reshape({stack}))"]


def lower_triangular_solve(ctx, outs, ins, in_avals, out_avals, *, left_side, lower,
                           transpose_a, conjugate_a, unit_diagonal):
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    if not (_compiled(ld.triangular_solve_p, in_avals, out_avals)
            and all(int(d) > 0 for d in in_avals[1].shape)):
        return host_rule(ld.triangular_solve_p)(ctx, outs, ins, in_avals, out_avals,
                                                **params)
    ensure_symbols()
    # conjugate_a changes nothing for real matrices.
    return _alloc(outs, out_avals) + [
        f"_blas_trsm({ins[0]}.reshape({_stack(in_avals[0].shape)}), "
        f"{ins[1]}.reshape({_stack(in_avals[1].shape)}), "
        f"{outs[0]}.reshape({_stack(in_avals[1].shape)}), {_flag(left_side)}, "
        f"{_flag(lower)}, {_flag(transpose_a)}, {_flag(unit_diagonal)})"]


def lower_eigh(ctx, outs, ins, in_avals, out_avals, *, lower, sort_eigenvalues):
    if not _compiled(ls.eigh_p, in_avals, out_avals):
        return host_rule(ls.eigh_p)(ctx, outs, ins, in_avals, out_avals, lower=lower,
                                    sort_eigenvalues=sort_eigenvalues)
    ensure_symbols()
    shape = in_avals[0].shape
    nb = _stack(shape)[1:].split(",")[0]
    v, w = outs
    return _alloc(outs, out_avals) + [   # ?syevd sorts ascending either way
        f"_lapack_eigh({ins[0]}.reshape({_stack(shape)}), {v}.reshape({_stack(shape)}), "
        f"{w}.reshape(({nb}, {int(shape[-1])})), {_flag(lower)})"]


def lower_qr(ctx, outs, ins, in_avals, out_avals, *, full_matrices):
    if not _compiled(ls.qr_p, in_avals, out_avals):
        return host_rule(ls.qr_p)(ctx, outs, ins, in_avals, out_avals,
                                  full_matrices=full_matrices)
    ensure_symbols()
    q, r = outs
    return _alloc(outs, out_avals) + [
        f"_lapack_qr({ins[0]}.reshape({_stack(in_avals[0].shape)}), "
        f"{q}.reshape({_stack(out_avals[0].shape)}), "
        f"{r}.reshape({_stack(out_avals[1].shape)}))"]


def lower_svd(ctx, outs, ins, in_avals, out_avals, *, full_matrices, compute_uv):
    if not _compiled(ls.svd_p, in_avals, out_avals):
        return host_rule(ls.svd_p)(ctx, outs, ins, in_avals, out_avals,
                                   full_matrices=full_matrices, compute_uv=compute_uv)
    ensure_symbols()
    shape = in_avals[0].shape
    nb = _stack(shape)[1:].split(",")[0]
    k = min(int(shape[-2]), int(shape[-1]))
    lines = _alloc(outs, out_avals)
    if compute_uv:
        u = f"{outs[1]}.reshape({_stack(out_avals[1].shape)})"
        vt = f"{outs[2]}.reshape({_stack(out_avals[2].shape)})"
    else:  # placeholders the routine does not touch
        u = vt = f"_empty((1, 1, 1), {dtype_ctor(in_avals[0].dtype)})"
    return lines + [f"_lapack_svd({ins[0]}.reshape({_stack(shape)}), "
                    f"{outs[0]}.reshape(({nb}, {k})), {u}, {vt}, {_flag(compute_uv)})"]


def lower_eig(ctx, outs, ins, in_avals, out_avals, *, compute_eigenvectors):
    if not _compiled(ls.eig_p, in_avals, out_avals):
        return host_rule(ls.eig_p)(ctx, outs, ins, in_avals, out_avals,
                                   compute_eigenvectors=compute_eigenvectors)
    ensure_symbols()
    shape = in_avals[0].shape
    nb = _stack(shape)[1:].split(",")[0]
    n = int(shape[-1])
    if compute_eigenvectors:
        v = f"{outs[1]}.reshape({_stack(shape)})"
    else:  # a placeholder the routine does not touch
        v = f"_empty((1, 1, 1), {dtype_ctor(out_avals[0].dtype)})"
    return _alloc(outs, out_avals) + [
        f"_lapack_eig({ins[0]}.reshape({_stack(shape)}), {outs[0]}.reshape(({nb}, {n})), "
        f"{v}, {_flag(compute_eigenvectors)})"]


RULES = {ld.lu_p: lower_lu, ld.cholesky_p: lower_cholesky,
         ld.triangular_solve_p: lower_triangular_solve, ls.eigh_p: lower_eigh,
         ls.qr_p: lower_qr, ls.svd_p: lower_svd, ls.eig_p: lower_eig}
