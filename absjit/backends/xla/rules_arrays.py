"""XLA rules for whole-array primitives, control flow, calls and callbacks.

Gather and scatter translate absjit's simple form (one index array per addressed axis,
see :mod:`absjit.ops.indexing`) into XLA's dimension numbers: the addressed axes are
moved to the front, the index arrays stacked on a trailing axis, gather indices clamped
(absjit's rule) and out-of-range scatter indices dropped (``FILL_OR_DROP``). Control
flow becomes ``lax.switch``/``lax.while_loop``/``lax.scan`` whose bodies are the nested
jaxprs lowered by the same rules; nested ``jit`` and custom-derivative calls are
inlined. Callbacks run their NumPy implementation on the host through
``jax.pure_callback``/``jax.debug.callback``.
"""
from __future__ import annotations

import numpy as np
import jax
from jax import lax

from ...core.primitive import impl_rules
from ...ops.linear_solve import _solve_operands
from .rules import _full, register

__all__ = []


# ---------------------------------------------------------------------------
# gather / scatter
# ---------------------------------------------------------------------------
def _front(x, axes):
    ndim = len(np.shape(x))
    perm = tuple(axes) + tuple(d for d in range(ndim) if d not in axes)
    return (x if perm == tuple(range(ndim)) else lax.transpose(x, perm)), perm


def _stack_indices(idx, batch):
    nb = len(batch)
    cols = [lax.broadcast_in_dim(i, tuple(batch) + (1,), tuple(range(nb))) for i in idx]
    return lax.concatenate(cols, nb) if len(cols) > 1 else cols[0]


@register("gather")
def _gather(ctx, x, *idx, axes):
    shape = np.shape(x)
    batch = np.shape(idx[0])
    clamped = []
    for i, a in zip(idx, axes):
        dt = np.dtype(i.dtype)
        # Clamp in the index's own dtype (a uint32 index above 2**31 must clamp to the
        # top, not wrap negative), then narrow.
        hi = max(shape[a] - 1, 0)
        i = lax.clamp(_full(0, dt), i, _full(min(hi, np.iinfo(dt).max), dt))
        clamped.append(lax.convert_element_type(i, np.int32))
    xt, _ = _front(x, axes)
    k, nb = len(axes), len(batch)
    rest = tuple(np.shape(xt)[k:])
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(nb, nb + len(rest))), collapsed_slice_dims=tuple(range(k)),
        start_index_map=tuple(range(k)))
    return [lax.gather(xt, _stack_indices(clamped, batch), dnums, (1,) * k + rest,
                       mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)]


_SCATTER = {"scatter": lax.scatter, "scatter-add": lax.scatter_add,
            "scatter-mul": lax.scatter_mul, "scatter-min": lax.scatter_min,
            "scatter-max": lax.scatter_max}


def _scatter_rule(fn):
    def rule(ctx, x, updates, *idx, axes):
        shape = np.shape(x)
        batch = np.shape(idx[0])
        safe = []
        for i, a in zip(idx, axes):
            dt = np.dtype(i.dtype)
            n = shape[a]
            # Out of range in the index's own dtype -> the index ``n`` (dropped below),
            # so narrowing to int32 can never wrap an index back into range.
            inside = lax.bitwise_and(lax.ge(i, _full(0, dt, batch)),
                                     lax.lt(i, _full(min(n, np.iinfo(dt).max), dt, batch)))
            if n > np.iinfo(dt).max:
                inside = lax.ge(i, _full(0, dt, batch))
            i32 = lax.convert_element_type(
                lax.select(inside, i, _full(0, dt, batch)), np.int32)
            safe.append(lax.select(inside, i32, _full(n, np.int32, batch)))
        xt, perm = _front(x, axes)
        k, nb = len(axes), len(batch)
        rest = tuple(np.shape(xt)[k:])
        dnums = lax.ScatterDimensionNumbers(
            update_window_dims=tuple(range(nb, nb + len(rest))),
            inserted_window_dims=tuple(range(k)),
            scatter_dims_to_operand_dims=tuple(range(k)))
        out = fn(xt, _stack_indices(safe, batch), updates, dnums,
                 mode=lax.GatherScatterMode.FILL_OR_DROP)
        if perm != tuple(range(len(perm))):
            out = lax.transpose(out, tuple(int(p) for p in np.argsort(perm)))
        return [out]
    return rule


for _name, _fn in _SCATTER.items():
    register(_name)(_scatter_rule(_fn))


# ---------------------------------------------------------------------------
# products, convolution, sorting, FFT
# ---------------------------------------------------------------------------
def _precision(precision):
    # absjit's rule computes at full precision (NumPy/BLAS); TPUs would otherwise
    # multiply float32 in bfloat16 passes.
    return lax.Precision.HIGHEST


@register("dot_general")
def _dot_general(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    out_dt = np.dtype(ctx.out_avals[0].dtype)
    if np.dtype(lhs.dtype) == np.bool_:
        # or-of-ands: count the true products, then compare with zero.
        lhs = lax.convert_element_type(lhs, np.int32)
        rhs = lax.convert_element_type(rhs, np.int32)
        out = lax.dot_general(lhs, rhs, dimension_numbers)
        return [lax.ne(out, _full(0, np.int32, np.shape(out)))]
    if np.dtype(lhs.dtype) != out_dt:
        lhs = lax.convert_element_type(lhs, out_dt)
        rhs = lax.convert_element_type(rhs, out_dt)
    prec = _precision(precision) if out_dt.kind in "fc" else None
    return [lax.dot_general(lhs, rhs, dimension_numbers, precision=prec)]


@register("conv_general_dilated")
def _conv(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          dimension_numbers, feature_group_count, batch_group_count, precision,
          preferred_element_type):
    dn = lax.ConvDimensionNumbers(*(tuple(s) for s in dimension_numbers))
    out_dt = np.dtype(ctx.out_avals[0].dtype)
    if np.dtype(lhs.dtype) != out_dt:
        lhs = lax.convert_element_type(lhs, out_dt)
        rhs = lax.convert_element_type(rhs, out_dt)
    return [lax.conv_general_dilated(
        lhs, rhs, tuple(window_strides), tuple(tuple(p) for p in padding),
        tuple(lhs_dilation), tuple(rhs_dilation), dn, feature_group_count,
        batch_group_count, precision=_precision(precision) if out_dt.kind in "fc" else None)]


@register("sort")
def _sort(ctx, *operands, dimension, is_stable, num_keys):
    # absjit's rule is always stable; XLA's comparator, like NumPy, treats -0.0 and 0.0
    # as equal and puts NaNs last.
    if 0 in np.shape(operands[0]):
        return list(operands)
    return list(lax.sort(tuple(operands), dimension=dimension, is_stable=True,
                         num_keys=num_keys))


@register("top_k")
def _top_k(ctx, x, *, k):
    # XLA's TopK orders floats by IEEE total order and keeps the lower index of ties,
    # as absjit's rule does.
    return list(lax.top_k(x, k))


@register("fft")
def _fft(ctx, x, *, fft_type, fft_lengths):
    return [lax.fft(x, getattr(fft_type, "name", str(fft_type)), tuple(fft_lengths))]


# ---------------------------------------------------------------------------
# linear algebra
# ---------------------------------------------------------------------------
def _empty(ctx):
    return any(0 in tuple(a.shape) for a in ctx.in_avals)


def _host(ctx, name, *vals, **params):
    """Run the NumPy implementation on the host (used for empty operands, whose
    conventions — identity factors, zero results — XLA's kernels do not share)."""
    from ...core.primitive import all_primitives
    prim = all_primitives()[name]
    specs = [jax.ShapeDtypeStruct(tuple(a.shape), np.dtype(a.dtype)) for a in ctx.out_avals]
    return list(jax.pure_callback(
        lambda *v: impl_rules[prim](*[np.asarray(u) for u in v], **params), specs, *vals))


@register("cholesky")
def _cholesky(ctx, x):
    if _empty(ctx):
        return _host(ctx, "cholesky", x)
    return [lax.linalg.cholesky(x, symmetrize_input=False)]


@register("triangular_solve")
def _triangular_solve(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a,
                      unit_diagonal):
    if _empty(ctx):
        return [_full(0, b.dtype, np.shape(b))]
    return [lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                        transpose_a=transpose_a, conjugate_a=conjugate_a,
                                        unit_diagonal=unit_diagonal)]


@register("lu")
def _lu(ctx, x):
    if _empty(ctx):
        return _host(ctx, "lu", x)
    lu, piv, perm = lax.linalg.lu(x)
    return [lu, lax.convert_element_type(piv, np.int32),
            lax.convert_element_type(perm, np.int32)]


@register("qr")
def _qr(ctx, x, *, full_matrices):
    if _empty(ctx):
        return _host(ctx, "qr", x, full_matrices=full_matrices)
    q, r = lax.linalg.qr(x, full_matrices=full_matrices)
    return [q, r]


@register("eigh")
def _eigh(ctx, x, *, lower, sort_eigenvalues):
    if _empty(ctx):
        return _host(ctx, "eigh", x, lower=lower, sort_eigenvalues=sort_eigenvalues)
    v, w = lax.linalg.eigh(x, lower=lower, symmetrize_input=False,
                           sort_eigenvalues=sort_eigenvalues)
    return [v, w]


@register("eig")
def _eig(ctx, x, *, compute_eigenvectors):
    # XLA's geev runs on the CPU platform only; the NumPy implementation serves all.
    if _empty(ctx) or jax.default_backend() != "cpu":
        return _host(ctx, "eig", x, compute_eigenvectors=compute_eigenvectors)
    outs = lax.linalg.eig(x, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=compute_eigenvectors)
    return list(outs)


@register("schur")
def _schur(ctx, x, *, output):
    # SciPy's ?gees on the host: one Schur form on every backend.
    return _host(ctx, "schur", x, output=output)


@register("hessenberg")
def _hessenberg(ctx, x):
    return _host(ctx, "hessenberg", x)


@register("svd")
def _svd(ctx, x, *, full_matrices, compute_uv):
    if _empty(ctx):
        return _host(ctx, "svd", x, full_matrices=full_matrices, compute_uv=compute_uv)
    if not compute_uv:
        return [lax.linalg.svd(x, full_matrices=full_matrices, compute_uv=False)]
    u, s, vt = lax.linalg.svd(x, full_matrices=full_matrices, compute_uv=True)
    return [s, u, vt]


# ---------------------------------------------------------------------------
# control flow and calls
# ---------------------------------------------------------------------------
@register("cond")
def _cond(ctx, index, *ops, branches):
    fns = [ctx.as_function(b) for b in branches]
    return list(lax.switch(index, fns, *ops))


@register("while")
def _while(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc = args[:cond_nconsts]
    bc = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = tuple(args[cond_nconsts + body_nconsts:])
    cond_fn, body_fn = ctx.as_function(cond_jaxpr), ctx.as_function(body_jaxpr)
    avals = body_jaxpr.out_avals

    def body(c):
        return tuple(ctx.cast(v, a) for v, a in zip(body_fn(*bc, *c), avals))
    return list(lax.while_loop(lambda c: cond_fn(*cc, *c)[0], body,
                               tuple(ctx.cast(v, a) for v, a in zip(carry, avals))))


@register("scan")
def _scan(ctx, *args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts = args[:num_consts]
    carry = tuple(args[num_consts:num_consts + num_carry])
    xs = tuple(args[num_consts + num_carry:])
    fn = ctx.as_function(jaxpr)
    avals = jaxpr.out_avals

    def body(c, x):
        outs = [ctx.cast(v, a) for v, a in zip(fn(*consts, *c, *x), avals)]
        return tuple(outs[:num_carry]), tuple(outs[num_carry:])
    carry = tuple(ctx.cast(v, a) for v, a in zip(carry, avals))
    out_carry, ys = lax.scan(body, carry, xs, length=length, reverse=reverse,
                             unroll=unroll)
    return list(out_carry) + list(ys)


@register("jit")
def _jit(ctx, *args, jaxpr, name):
    return ctx.as_function(jaxpr)(*args)


@register("custom_jvp_call", "custom_vjp_call")
def _custom_call(ctx, *args, call_jaxpr, **_):
    # Compiled code runs the primal; the derivative rules were used when tracing.
    return ctx.as_function(call_jaxpr)(*args)


@register("custom_linear_solve")
def _custom_linear_solve(ctx, *args, const_lengths, solve, **params):
    # Compiled code runs the solve; the derivative rules were used when tracing.
    picked = _solve_operands({"const_lengths": const_lengths}, len(args))
    return ctx.as_function(solve)(*[args[i] for i in picked])


# ---------------------------------------------------------------------------
# callbacks: the NumPy implementation, on the host
# ---------------------------------------------------------------------------
def _host_results(prim, result_avals, **params):
    """``(specs, host)``: the result shapes a jax callback declares, and a host
    function running ``prim``'s NumPy implementation on the callback's arguments."""
    specs = [jax.ShapeDtypeStruct(tuple(a.shape), np.dtype(a.dtype)) for a in result_avals]
    impl = impl_rules[prim]

    def host(*v):
        return impl(*[np.asarray(u) for u in v], result_avals=result_avals, **params)
    return specs, host


@register("pure_callback")
def _pure_callback(ctx, *vals, callback, result_avals, vmap_method):
    from ..._callbacks import pure_callback_p
    specs, host = _host_results(pure_callback_p, result_avals, callback=callback,
                                vmap_method=vmap_method)
    return list(jax.pure_callback(host, specs, *vals))


@register("io_callback")
def _io_callback(ctx, *vals, callback, result_avals, ordered):
    from jax.experimental import io_callback as jax_io_callback

    from ..._callbacks import io_callback_p
    specs, host = _host_results(io_callback_p, result_avals, callback=callback,
                                ordered=ordered)
    return list(jax_io_callback(host, specs, *vals, ordered=ordered))


def _effect(prim, **params):
    impl = impl_rules[prim]

    def host(*v):
        impl(*[np.asarray(u) for u in v], **params)
    return host


@register("debug_callback")
def _debug_callback(ctx, *vals, callback):
    from ..._callbacks import debug_callback_p
    jax.debug.callback(_effect(debug_callback_p, callback=callback), *vals, ordered=True)
    return []


@register("debug_print")
def _debug_print(ctx, *vals, fmt, in_tree):
    from ...debug import debug_print_p
    jax.debug.callback(_effect(debug_print_p, fmt=fmt, in_tree=in_tree), *vals,
                       ordered=True)
    return []

