"""lax.conv_general_dilated: values against a direct-loop NumPy reference and JAX,
layouts, padding modes, groups, bad input, and the JVP/transpose/batching rules."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as hst

import absjit
from absjit import lax
from absjit.core.avals import ShapedArray
from absjit.interpreters import ad, batching
from absjit.ops.conv import conv_general_dilated_p
from tests.checks import assert_close, jax


def _naive_conv(x, w, strides, padding, lhs_dil, rhs_dil, fgc=1):
    """Direct definition, NC[spatial]/OI[spatial]: dilate, pad, slide, sum."""
    shape = x.shape[:2] + tuple((d - 1) * r + 1 if d else 0
                                for d, r in zip(x.shape[2:], lhs_dil))
    xd = np.zeros(shape, x.dtype)
    xd[(slice(None), slice(None)) + tuple(slice(None, None, r) for r in lhs_dil)] = x
    for ax, (lo, hi) in enumerate(padding):
        ax += 2
        if lo < 0:
            xd = np.take(xd, range(-lo, xd.shape[ax]), axis=ax)
        if hi < 0:
            xd = np.take(xd, range(0, xd.shape[ax] + hi), axis=ax)
        pw = [(0, 0)] * xd.ndim
        pw[ax] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, pw)
    kext = [(k - 1) * r + 1 for k, r in zip(w.shape[2:], rhs_dil)]
    out_sp = [max(0, (d - k) // s + 1) for d, k, s in zip(xd.shape[2:], kext, strides)]
    o, i = w.shape[:2]
    out = np.zeros((x.shape[0], o) + tuple(out_sp), np.result_type(x, w))
    og = o // fgc
    for n, oc in itertools.product(range(x.shape[0]), range(o)):
        g = oc // og
        for pos in itertools.product(*[range(s) for s in out_sp]):
            acc = 0
            for ic in range(i):
                for kpos in itertools.product(*[range(k) for k in w.shape[2:]]):
                    idx = tuple(p * s + k * r for p, s, k, r in zip(pos, strides, kpos, rhs_dil))
                    acc = acc + xd[(n, g * i + ic) + idx] * w[(oc, ic) + kpos]
            out[(n, oc) + pos] = acc
    return out


def test_seed_full_convolution(mode):
    x = absjit.numpy.array([1, 2, 1])
    y = absjit.numpy.ones(10)

    def f(x, y):
        return lax.conv_general_dilated(x.reshape(1, 1, 3).astype(float), y.reshape(1, 1, 10),
                                        window_strides=(1,), padding=[(9, 9)])
    result = mode(f)(x, y)
    assert result.dtype == np.float32
    assert_close(result[0, 0], np.array([1, 3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 1], np.float32))


@hst.composite
def conv_problems(draw):
    nsp = draw(hst.integers(1, 2))
    fgc = draw(hst.sampled_from([1, 1, 2]))
    n, i = draw(hst.integers(1, 2)), draw(hst.integers(1, 2))
    o = draw(hst.integers(1, 2)) * fgc
    sp = tuple(draw(hst.integers(1, 5)) for _ in range(nsp))
    ks = tuple(draw(hst.integers(1, 3)) for _ in range(nsp))
    strides = tuple(draw(hst.integers(1, 2)) for _ in range(nsp))
    lhs_dil = tuple(draw(hst.integers(1, 2)) for _ in range(nsp))
    rhs_dil = tuple(draw(hst.integers(1, 2)) for _ in range(nsp))
    pad = tuple((draw(hst.integers(-1, 2)), draw(hst.integers(-1, 2))) for _ in range(nsp))
    dtype = draw(hst.sampled_from([np.float32, np.int32, np.complex64]))
    return (n, i * fgc) + sp, (o, i) + ks, strides, pad, lhs_dil, rhs_dil, fgc, dtype


def _rand(rng, shape, dtype):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-3, 4, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@settings(max_examples=15)
@given(conv_problems(), hst.integers(0, 2**31 - 1))
def test_conv_matches_direct_reference_and_jax(problem, seed):
    lshape, rshape, strides, pad, ld, rd, fgc, dtype = problem
    rng = np.random.default_rng(seed)
    dilated = [(d - 1) * r + 1 + lo + hi for d, r, (lo, hi) in zip(lshape[2:], ld, pad)]
    if min(dilated) < 0:  # over-cropping: rejected up front
        with pytest.raises(ValueError, match="negative padding"):
            lax.conv_general_dilated(np.ones(lshape, dtype), np.ones(rshape, dtype), strides,
                                     pad, ld, rd, feature_group_count=fgc)
        return
    x, w = _rand(rng, lshape, dtype), _rand(rng, rshape, dtype)
    out = lax.conv_general_dilated(x, w, strides, pad, ld, rd, feature_group_count=fgc)
    assert out.dtype == np.dtype(dtype)
    expected = _naive_conv(x, w, strides, pad, ld, rd, fgc)
    assert_close(out, expected.astype(dtype), rtol=1e-4, atol=1e-4)
    if jax is not None:
        j = jax.lax.conv_general_dilated(x, w, strides, pad, ld, rd, feature_group_count=fgc)
        assert j.dtype == out.dtype
        assert_close(out, np.asarray(j), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("padding", ["SAME", "VALID", "SAME_LOWER"])
@pytest.mark.parametrize("strides", [(1, 1), (2, 1)])
def test_string_padding_and_layouts(mode, rng, padding, strides):
    x = _rand(rng, (2, 5, 6, 3), np.float32)        # NHWC
    w = _rand(rng, (3, 2, 3, 4), np.float32)        # HWIO
    dn = ("NHWC", "HWIO", "NHWC")
    out = mode(lambda a, b: lax.conv_general_dilated(a, b, strides, padding,
                                                      dimension_numbers=dn))(x, w)
    ref = lax.conv_general_dilated(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), strides,
                                   padding)
    assert_close(out, np.asarray(ref).transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    if jax is not None:
        j = jax.lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=dn)
        assert_close(out, np.asarray(j), rtol=1e-4, atol=1e-4)


def test_batch_group_count(mode, rng):
    x, w = _rand(rng, (4, 3, 6), np.float32), _rand(rng, (4, 3, 2), np.float32)
    out = mode(lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID",
                                                     batch_group_count=2))(x, w)
    assert out.shape == (2, 4, 5)
    # Batch group g (g-major in the lhs batch) feeds output features of group g.
    expected = np.concatenate([_naive_conv(x[2 * g:2 * g + 2], w[2 * g:2 * g + 2], (1,),
                                           ((0, 0),), (1,), (1,)) for g in range(2)], axis=1)
    assert_close(out, expected.astype(np.float32), rtol=1e-4, atol=1e-4)
    if jax is not None:
        j = jax.lax.conv_general_dilated(x, w, (1,), "VALID", batch_group_count=2)
        assert_close(out, np.asarray(j), rtol=1e-4, atol=1e-4)


def test_jaxpr_shows_conv_params():
    text = str(absjit.make_jaxpr(lambda a, b: lax.conv_general_dilated(a, b, (1,), "SAME"))(
        np.ones((1, 1, 5), np.float32), np.ones((1, 1, 3), np.float32)))
    assert "conv_general_dilated[" in text and "padding=((1, 1),)" in text
    assert "f32[1,1,5] = conv_general_dilated" in text


@pytest.mark.parametrize("lshape,rshape,kwargs,exc,match", [
    ((1, 2, 5), (1, 3, 2), {}, TypeError, "feature dimension"),
    ((1, 2, 5), (1, 2, 2, 2), {}, TypeError, "same rank"),
    ((1, 4, 5), (3, 2, 2), {"feature_group_count": 2}, TypeError, "multiple of"),
    ((1, 2, 5), (1, 2, 2), {"padding": "FULL"}, ValueError, "unknown padding"),
    ((1, 2, 5), (1, 2, 2), {"window_strides": (1, 1)}, TypeError, "one entry per spatial"),
    ((1, 2, 5), (1, 2, 2), {"dimension_numbers": ("NCH", "OIW", "NCH")}, TypeError,
     "spatial letters"),
    ((1, 2, 5), (1, 2, 2), {"window_strides": (0,)}, ValueError, "positive"),
])
def test_conv_bad_input(lshape, rshape, kwargs, exc, match):
    args = dict(window_strides=(1,), padding="VALID")
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        lax.conv_general_dilated(np.ones(lshape, np.float32), np.ones(rshape, np.float32),
                                 **args)


def test_conv_mixed_dtypes_rejected():
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv_general_dilated(np.ones((1, 1, 3), np.float32), np.ones((1, 1, 2), np.int32),
                                 (1,), "VALID")


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------
RULE_CASES = [
    dict(window_strides=(1,), padding=((1, 1),)),
    dict(window_strides=(2,), padding=((0, 1),), rhs_dilation=(2,)),
    dict(window_strides=(1, 2), padding=((1, 0), (2, 1)), lhs_dilation=(2, 1)),
    dict(window_strides=(1,), padding=((0, 0),), feature_group_count=2),
    dict(window_strides=(1,), padding=((1, 0),), batch_group_count=2),
    dict(window_strides=(1, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
]


def _operands(rng, case):
    nsp = len(case["window_strides"])
    fgc = case.get("feature_group_count", 1)
    bgc = case.get("batch_group_count", 1)
    x = _rand(rng, (2 * bgc, 2 * fgc) + (5,) * nsp, np.float32)
    w = _rand(rng, (2 * fgc * bgc, 2) + (2,) * nsp, np.float32)
    if case.get("dimension_numbers"):
        x, w = x.transpose(0, 2, 3, 1).copy(), w.transpose(2, 3, 1, 0).copy()
    return x, w


def _params(x, w, case):
    jaxpr = absjit.make_jaxpr(lambda a, b: lax.conv_general_dilated(a, b, **case))(x, w)
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    return inner.eqns[0].params


@pytest.mark.parametrize("case", RULE_CASES)
def test_conv_transpose_is_adjoint(case, rng):
    x, w = _operands(rng, case)
    params = _params(x, w, case)
    out = np.asarray(lax.conv_general_dilated(x, w, **case))
    ct = _rand(rng, out.shape, np.float32)
    rule = ad.transpose_rules[conv_general_dilated_p]
    f32 = np.dtype(np.float32)
    ct_x, _ = rule([ct], ad.UndefinedPrimal(ShapedArray(x.shape, f32)), w, **params)
    _, ct_w = rule([ct], x, ad.UndefinedPrimal(ShapedArray(w.shape, f32)), **params)
    assert ct_x.shape == x.shape and ct_w.shape == w.shape
    inner = float(np.sum(ct * out))
    assert np.isclose(float(np.sum(np.asarray(ct_x) * x)), inner, rtol=1e-4, atol=1e-3)
    assert np.isclose(float(np.sum(np.asarray(ct_w) * w)), inner, rtol=1e-4, atol=1e-3)
    if jax is not None:
        _, vjp = jax.vjp(lambda a, b: jax.lax.conv_general_dilated(a, b, **case), x, w)
        jx, jw = vjp(ct)
        assert_close(ct_x, np.asarray(jx), rtol=1e-4, atol=1e-4)
        assert_close(ct_w, np.asarray(jw), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", RULE_CASES)
def test_conv_jvp_is_bilinear(case, rng):
    x, w = _operands(rng, case)
    tx, tw = _rand(rng, x.shape, np.float32), _rand(rng, w.shape, np.float32)
    params = _params(x, w, case)
    (out,), (t_out,) = ad.jvp_rules[conv_general_dilated_p]([x, w], [tx, tw], **params)
    conv = lambda a, b: np.asarray(lax.conv_general_dilated(a, b, **case))  # noqa: E731
    assert_close(out, conv(x, w))
    assert_close(t_out, conv(tx, w) + conv(x, tw), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", RULE_CASES)
@pytest.mark.parametrize("which", ["both", "lhs", "rhs"])
def test_conv_batch_rule(case, which, rng):
    k = 3
    pairs = [_operands(rng, case) for _ in range(k)]
    xs = np.stack([p[0] for p in pairs], 1)   # vmapped axis 1
    ws = np.stack([p[1] for p in pairs], -1)  # vmapped axis last
    x0, w0 = pairs[0]
    params = _params(x0, w0, case)
    vals = [xs if which != "rhs" else x0, ws if which != "lhs" else w0]
    dims = [1 if which != "rhs" else None, ws.ndim - 1 if which != "lhs" else None]
    (out,), (od,) = batching.batch_rules[conv_general_dilated_p](vals, dims, **params)
    out = np.moveaxis(np.asarray(out), od, 0)
    expected = np.stack([np.asarray(lax.conv_general_dilated(
        pairs[i][0] if which != "rhs" else x0, pairs[i][1] if which != "lhs" else w0, **case))
        for i in range(k)])
    assert_close(out, expected, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# Through the transforms
# ---------------------------------------------------------------------------
def test_grad_through_conv_matches_jax(mode, rng):
    x, w = _rand(rng, (2, 2, 7), np.float32), _rand(rng, (4, 1, 3), np.float32)
    kw = dict(window_strides=(2,), padding="SAME", rhs_dilation=(2,), feature_group_count=2)

    def f(a, b):
        return absjit.numpy.sum(lax.conv_general_dilated(a, b, **kw) ** 2)
    gx, gw = mode(absjit.grad(f, argnums=(0, 1)))(x, w)
    assert gx.shape == x.shape and gw.shape == w.shape
    if jax is not None:
        jf = lambda a, b: jax.numpy.sum(jax.lax.conv_general_dilated(a, b, **kw) ** 2)  # noqa: E731
        jx, jw = jax.grad(jf, argnums=(0, 1))(x, w)
        assert_close(gx, np.asarray(jx), rtol=1e-4, atol=1e-4)
        assert_close(gw, np.asarray(jw), rtol=1e-4, atol=1e-4)


def test_vmap_of_conv(rng):
    x, w = _rand(rng, (3, 1, 2, 6), np.float32), _rand(rng, (3, 2, 3), np.float32)
    out = absjit.vmap(lambda a: lax.conv_general_dilated(a, w, (1,), "VALID"))(x)
    expected = np.stack([np.asarray(lax.conv_general_dilated(x[i], w, (1,), "VALID"))
                         for i in range(3)])
    assert_close(out, expected, rtol=1e-5, atol=1e-5)


def test_low_precision_and_empty_features(mode):
    import absjit.dtypes as adt
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 4)
    w = np.ones((3, 2, 2), np.float32)
    ref = np.asarray(lax.conv_general_dilated(x, w, (1,), "VALID"))
    for dt in [np.float16, adt.bfloat16]:
        out = mode(lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID"))(x.astype(dt),
                                                                              w.astype(dt))
        assert out.dtype == np.dtype(dt)
        assert_close(np.asarray(out).astype(np.float32), ref)
    empty = lax.conv_general_dilated(np.ones((1, 0, 4), np.float32),
                                     np.ones((2, 0, 2), np.float32), (1,), "VALID")
    assert_close(empty, np.zeros((1, 2, 3), np.float32))


@pytest.mark.parametrize("dn, groups, strides, dilation", [
    (("NCHW", "OIHW", "NCHW"), 1, (1, 1), (1, 1)),
    (("NHWC", "HWIO", "NHWC"), 2, (2, 1), (1, 1)),
    (("NCHW", "OIHW", "NCHW"), 1, (1, 1), (2, 2)),
])
def test_large_convolution_runs_its_batch_in_parallel(rng, dn, groups, strides, dilation):
    """Above PARALLEL_MIN_MACS the cpu kernel runs batch elements in a prange loop, each
    with its own window matrix and BLAS product: same values as the NumPy reference."""
    from absjit.backends.numba_cpu.lowering import lower_conv
    n, c, o, size = 3, 32, 32, 28
    lhs = (n, c, size, size) if dn[0] == "NCHW" else (n, size, size, c)
    rhs = (o, c // groups, 3, 3) if dn[1] == "OIHW" else (3, 3, c // groups, o)
    x, w = _rand(rng, lhs, np.float32), _rand(rng, rhs, np.float32)

    def conv(a, b):
        return lax.conv_general_dilated(a, b, strides, "SAME", rhs_dilation=dilation,
                                        dimension_numbers=dn, feature_group_count=groups)
    f = absjit.jit(conv, backend="cpu")
    out = f(x, w)
    macs = int(np.prod(out.shape)) * (c // groups) * 9
    assert macs >= lower_conv.PARALLEL_MIN_MACS
    assert "prange(" in f.lower(x, w).compile().as_text()
    ref = absjit.jit(conv, backend="interpret")(x, w)
    assert_close(out, np.asarray(ref), rtol=1e-4, atol=1e-4)
    xs = x[::-1]  # a reversed (non-contiguous) batch
    assert_close(f(xs, w), np.asarray(absjit.jit(conv, backend="interpret")(xs, w)),
                 rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("lhs, rhs, padding, dilation, groups, dn", [
    ((2, 16, 9, 11), (8, 16, 3, 3), "SAME", (1, 1), 1, None),
    ((2, 16, 9, 11), (8, 16, 3, 2), ((2, 0), (-1, 3)), (1, 2), 1, None),  # crop + pad
    ((1, 32, 20, 20), (12, 16, 1, 1), "VALID", (1, 1), 2, None),          # 1x1, groups
    ((4, 17, 100), (8, 17, 4), ((3, 1),), (3,), 1, None),                 # 1-D, dilated
    ((1, 16, 4, 5, 6), (3, 16, 2, 3, 2), "SAME", (1, 1, 1), 1, None),     # 3-D
    ((2, 8, 10, 32), (3, 3, 16, 12), "SAME", (1, 1), 2, ("NHWC", "HWIO", "NHWC")),
])
def test_stride_one_convolution_by_shifted_products(rng, lhs, rhs, padding, dilation, groups,
                                                    dn):
    """Stride 1 with >= SHIFTED_MIN_FEATURES input features per group: one accumulating
    BLAS product per kernel offset over shifted views of the padded input."""
    from absjit.backends.numba_cpu.lowering import lower_conv
    x, w = _rand(rng, lhs, np.float32), _rand(rng, rhs, np.float32)
    strides = (1,) * (len(lhs) - 2)

    def conv(a, b):
        return lax.conv_general_dilated(a, b, strides, padding, rhs_dilation=dilation,
                                        dimension_numbers=dn, feature_group_count=groups)
    f = absjit.jit(conv, backend="cpu")
    text = f.lower(x, w).compile().as_text()
    assert "_gemm_rows(" in text and "cols_" not in text
    per_group = (rhs[1] if dn is None else rhs[2])
    assert per_group >= lower_conv.SHIFTED_MIN_FEATURES
    ref = np.asarray(absjit.jit(conv, backend="interpret")(x, w))
    assert_close(f(x, w), ref, rtol=1e-4, atol=1e-4)
    absjit.config.update("enable_x64", True)  # restored by the autouse fixture
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    got = absjit.jit(conv, backend="cpu")(x64, w64)
    assert got.dtype == np.float64
    assert_close(got, np.asarray(absjit.jit(conv, backend="interpret")(x64, w64)),
                 rtol=1e-10, atol=1e-10)
