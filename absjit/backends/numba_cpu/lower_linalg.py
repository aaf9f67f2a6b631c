"""``lu``, ``cholesky`` and ``triangular_solve`` lowered to calls of LAPACK/BLAS from the
kernel (:mod:`.lapack_kernels`; symbols bound by :mod:`.lapack_symbols`): compiled code, also inside loop and branch bodies,
one routine call per matrix of a stack.

float32/float64 matrices with static shapes only; other dtypes (complex, half) and
symbolic sizes keep the object-mode call of the NumPy implementation
(:func:`.lower_host.host_rule`).
"""
from __future__ import annotations

import numpy as np

from ...core.dims import Dim
from ...core.shapes import shape_code as _shape
from ...ops import linalg_decomp as ld
from .lapack_symbols import LAPACK_DTYPES, ensure_symbols
from .lower_elementwise import dtype_ctor
from .lower_host import host_rule

__all__ = ["RULES", "lower_lu", "lower_cholesky", "lower_triangular_solve"]


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
        f"{outs[0]}.reshape({_stack(in_avals[1].shape)}), {bool(left_side)}, "
        f"{bool(lower)}, {bool(transpose_a)}, {bool(unit_diagonal)})"]


RULES = {ld.lu_p: lower_lu, ld.cholesky_p: lower_cholesky,
         ld.triangular_solve_p: lower_triangular_solve}
