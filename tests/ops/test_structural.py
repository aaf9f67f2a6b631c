"""Structural lax primitives and gather/scatter: values against NumPy, bad input, the
printed jaxpr, and each primitive's JVP, transpose and batching rules (called
directly, so they are checked independently of the transforms that use them)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as hs

import absjit
import absjit.lax as lax
import absjit.numpy as jnp
from absjit.core.primitive import impl_rules
from absjit.interpreters import ad, batching
from absjit.ops import indexing as gi
from absjit.ops import structural as st
from tests.checks import assert_close

shapes = hs.lists(hs.integers(0, 4), min_size=0, max_size=3).map(tuple)


def _rand(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-5, 5, shape).astype(dtype)


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------
@given(shapes, hs.randoms())
def test_transpose_rev_matches_numpy(shape, r):
    x = _rand(shape)
    perm = list(range(len(shape)))
    r.shuffle(perm)
    dims = tuple(d for d in range(len(shape)) if r.random() < 0.5)
    assert_close(lax.transpose(x, perm), np.transpose(x, perm))
    assert_close(lax.rev(x, dims), np.flip(x, dims) if dims else x)


@given(shapes, hs.randoms())
def test_slice_matches_numpy(shape, r):
    x = _rand(shape)
    starts, limits, strides = [], [], []
    for n in shape:
        lo = r.randint(0, n)
        hi = r.randint(lo, n)
        starts.append(lo)
        limits.append(hi)
        strides.append(r.randint(1, 3))
    expected = x[tuple(slice(a, b, c) for a, b, c in zip(starts, limits, strides))]
    assert_close(lax.slice(x, starts, limits, strides), expected)


def test_structural_ops_under_mode(mode):
    x = _rand((2, 3, 4))

    def f(x):
        a = lax.transpose(x, (2, 0, 1))
        b = lax.squeeze(lax.expand_dims(x, (0,)), (0,))
        c = lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2))
        d = lax.concatenate([x, x], 2)
        e = lax.pad(x, np.float32(-1), ((1, -1, 0), (0, 0, 1), (-2, 1, 0)))
        g = lax.rev(x, (0, 2))
        h = lax.broadcast_in_dim(x[0], (5, 3, 4), (1, 2))
        return a, b, c, d, e, g, h

    got = mode(f)(x)
    ref = (np.transpose(x, (2, 0, 1)), x, x[:, 1:3, ::2], np.concatenate([x, x], 2),
           _np_pad(x, -1, ((1, -1, 0), (0, 0, 1), (-2, 1, 0))), x[::-1, :, ::-1],
           np.broadcast_to(x[0], (5, 3, 4)))
    assert_close(got, ref)


def _np_pad(x, v, config):
    """Reference pad written independently of the impl: interior by strided writes,
    then negative edges by cropping."""
    for ax, (lo, hi, it) in enumerate(config):
        n = x.shape[ax]
        size = n + max(n - 1, 0) * it
        shape = list(x.shape)
        shape[ax] = size
        out = np.full(shape, v, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(0, size, it + 1)
        out[tuple(idx)] = x
        edge = [(0, 0)] * x.ndim
        edge[ax] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, edge, constant_values=v)
        idx[ax] = slice(-min(lo, 0), out.shape[ax] + min(hi, 0))
        x = out[tuple(idx)]
    return x


@given(hs.integers(0, 4), hs.integers(-3, 3), hs.integers(-3, 3), hs.integers(0, 2))
def test_pad_matches_reference(n, lo, hi, interior):
    x = _rand((n, 2), np.int32)
    size = lo + hi + n + max(n - 1, 0) * interior
    if size < 0:
        with pytest.raises(ValueError, match="negative size"):
            lax.pad(x, np.int32(7), ((lo, hi, interior), (0, 0, 0)))
        return
    got = lax.pad(x, np.int32(7), ((lo, hi, interior), (0, 0, 0)))
    assert_close(got, _np_pad(x, 7, ((lo, hi, interior), (0, 0, 0))))


@pytest.mark.parametrize("start,expected", [((0,), [0, 1]), ((4,), [3, 4]), ((-3,), [2, 3]),
                                            ((-1,), [3, 4]), ((-9,), [0, 1]), ((2,), [2, 3])])
def test_dynamic_slice_clamps(mode, start, expected):
    x = np.arange(5, dtype=np.int32)
    got = mode(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))(x, np.int32(start[0]))
    assert_close(got, np.array(expected, np.int32))


def test_dynamic_update_slice_clamps(mode):
    x = np.zeros((3, 4), np.float32)
    u = np.ones((2, 2), np.float32)
    got = mode(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)))(
        x, u, np.int32(5), np.int32(-1))
    expected = x.copy()
    expected[1:3, 2:4] = 1  # -1 counts from the end, then both starts are clamped
    assert_close(got, expected)
    got = mode(lambda x, u: lax.dynamic_update_slice(x, u, (-9, 1)))(x, u)
    expected = x.copy()
    expected[0:2, 1:3] = 1
    assert_close(got, expected)


def test_iota(mode):
    got = mode(lambda: lax.iota(np.int32, (2, 3), 1))()
    assert_close(got, np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3)))
    assert_close(lax.iota(np.float32, 4), np.arange(4, dtype=np.float32))


def test_gather_clamps_and_scatter_drops(mode):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([0, 2, 7, -3], np.int32)

    def f(x, idx):
        g = lax.gather(x, [idx], (1,))
        s = lax.scatter_add(x, np.ones((4, 3), np.float32), [idx], (1,))
        return g, s

    g, s = mode(f)(x, idx)
    assert_close(g, x[:, [0, 2, 3, 0]].T)
    expected = x.copy()
    expected[:, 0] += 1
    expected[:, 2] += 1
    assert_close(s, expected)


@pytest.mark.parametrize("name,ufunc", [("scatter", None), ("scatter_add", np.add),
                                        ("scatter_mul", np.multiply),
                                        ("scatter_min", np.minimum),
                                        ("scatter_max", np.maximum)])
def test_scatter_family(mode, name, ufunc):
    x = _rand((4, 3), np.float32, 1)
    u = _rand((3, 2, 3), np.float32, 2)
    i0 = np.array([[0, 1], [3, 3], [2, 0]], np.int32)
    fn = getattr(lax, name)
    got = mode(lambda x, u: fn(x, u, [i0], (0,)))(x, u)
    expected = x.copy()
    if ufunc is None:
        for (a, b), rows in zip(i0, u):  # unique rows in this example except row 3
            expected[a] = rows[0]
            expected[b] = rows[1]
    else:
        ufunc.at(expected, i0.ravel(), u.reshape(6, 3))
    assert_close(got, expected)


def test_gather_multiple_axes():
    x = _rand((3, 4, 5))
    i = np.array([[0, 2], [1, 1]], np.int32)
    j = np.array([[4, 0], [3, 3]], np.int32)
    got = lax.gather(x, [i, j], (0, 2))
    assert_close(got, np.moveaxis(x[i, :, j], -1, -1))


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: lax.transpose(x, (0, 0, 1)), ValueError, "permutation"),
    (lambda x: lax.squeeze(x, (1,)), ValueError, "size is 3"),
    (lambda x: lax.squeeze(x, (5,)), ValueError, "out of range"),
    (lambda x: lax.slice(x, (0, 0, 0), (2, 4, 4)), ValueError, "invalid slice"),
    (lambda x: lax.slice(x, (0,), (2,)), TypeError, "one entry per"),
    (lambda x: lax.reshape(x, (5, 5)), TypeError, "cannot reshape"),
    (lambda x: lax.concatenate([x, x[0]], 0), TypeError, "shapes must match"),
    (lambda x: lax.concatenate([x, x.astype(np.int32)], 0), TypeError, "same dtypes"),
    (lambda x: lax.pad(x, np.int32(0), ((0, 0, 0),) * 3), TypeError, "same dtypes"),
    (lambda x: lax.pad(x, np.float32(0), ((0, 0, 0),)), TypeError, "one"),
    (lambda x: lax.rev(x, (3,)), ValueError, "out of range"),
    (lambda x: lax.dynamic_slice(x, (0, 0), (1, 1, 1)), TypeError, "start indices"),
    (lambda x: lax.dynamic_slice(x, (0, 0, 0.5), (1, 1, 1)), TypeError, "integer"),
    (lambda x: lax.dynamic_slice(x, (0, 0, 0), (1, 9, 1)), TypeError, "fit"),
    (lambda x: lax.dynamic_update_slice(x, x[:, :, :1].astype(np.int32), (0, 0, 0)),
     TypeError, "same dtypes"),
    (lambda x: lax.gather(x, [np.array([0.5])], (0,)), TypeError, "integer"),
    (lambda x: lax.gather(x, [np.array([0]), np.array([0, 1])], (0, 1)), TypeError,
     "share one shape"),
    (lambda x: lax.gather(x, [np.array([0])], (4,)), ValueError, "out of range"),
    (lambda x: lax.scatter(x, np.ones((2, 3, 4), np.float32), [np.array([0])], (0,)),
     TypeError, "updates must have shape"),
    (lambda x: lax.iota(np.int32, (2,), 1), ValueError, "dimension"),
    (lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1, 2)), TypeError, "broadcast_dimensions"),
])
def test_bad_input(fn, exc, match):
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(exc, match=match):
        fn(x)
    with pytest.raises(exc, match=match):  # the same check runs while tracing
        absjit.make_jaxpr(fn)(x)


def test_gather_from_empty_axis_raises():
    with pytest.raises(IndexError, match="size-0"):
        lax.gather(np.zeros((0, 2), np.float32), [np.array([0], np.int32)], (0,))


# ---------------------------------------------------------------------------
# printing
# ---------------------------------------------------------------------------
def test_jaxpr_printing():
    def f(x, i):
        y = lax.transpose(x, (1, 0))
        y = lax.dynamic_slice(y, (i, 0), (1, 2))
        y = lax.pad(y, np.float32(0), ((0, 0, 0), (1, 0, 1)))
        return lax.gather(y, [jnp.array([0, 3])], (1,))

    text = str(absjit.make_jaxpr(f)(np.zeros((2, 3), np.float32), 1))
    assert text == (
        "{ lambda a:i32[2]; b:f32[2,3] c:i32[]. let\n"
        "    d:f32[3,2] = transpose[permutation=(1, 0)] b\n"
        "    e:bool[] = lt c 0\n"
        "    f:i32[] = add c 3\n"
        "    g:i32[] = select_n e c f\n"
        "    h:f32[1,2] = dynamic_slice[slice_sizes=(1, 2)] d g 0\n"
        "    i:f32[1,4] = pad[padding_config=((0, 0, 0), (1, 0, 1))] h 0.0\n"
        "    j:f32[2,1] = gather[axes=(1,)] i a\n"
        "  in (j,) }")
    text = str(absjit.make_jaxpr(lambda: lax.iota(np.int32, (3,)))())
    assert "iota[dtype=int32 shape=(3,) dimension=0]" in text


# ---------------------------------------------------------------------------
# rules: JVP of linear ops, transposes by the dot-product test, batching by loops
# ---------------------------------------------------------------------------
def _A(x):
    return absjit.Array._new(np.asarray(x), False)


LINEAR_CASES = [
    # (primitive, [args], linear arg positions, params)
    (st.transpose_p, [(2, 3, 4)], [0], dict(permutation=(2, 0, 1))),
    (st.squeeze_p, [(2, 1, 3)], [0], dict(dimensions=(1,))),
    (st.reshape_p, [(2, 3)], [0], dict(new_sizes=(3, 2), dimensions=None)),
    (st.reshape_p, [(2, 3)], [0], dict(new_sizes=(6,), dimensions=(1, 0))),
    (st.broadcast_in_dim_p, [(3, 1)], [0], dict(shape=(2, 3, 4), broadcast_dimensions=(1, 2))),
    (st.slice_p, [(5, 4)], [0], dict(start_indices=(1, 0), limit_indices=(5, 3),
                                     strides=(2, 2))),
    (st.rev_p, [(3, 2)], [0], dict(dimensions=(0, 1))),
    (st.concatenate_p, [(2, 3), (1, 3)], [0, 1], dict(dimension=0)),
    (st.pad_p, [(3, 2), ()], [0, 1], dict(padding_config=((1, -1, 1), (0, 2, 0)))),
    (st.dynamic_slice_p, [(4, 3), np.int32(3), np.int32(1)], [0], dict(slice_sizes=(2, 2))),
    (st.dynamic_update_slice_p, [(4, 3), (2, 2), np.int32(1), np.int32(5)], [0, 1], {}),
    (gi.gather_p, [(4, 3), np.array([[0, 3], [5, -1]], np.int32)], [0], dict(axes=(0,))),
    (gi.scatter_add_p, [(4, 3), (3, 3), np.array([0, 3, 9], np.int32)], [0, 1],
     dict(axes=(0,))),
    (gi.scatter_p, [(4, 3), (2, 4), np.array([2, 0], np.int32)], [0, 1], dict(axes=(1,))),
]


def _materialize(args, seed):
    out = []
    for k, a in enumerate(args):
        out.append(_rand(a, np.float32, seed + k) if isinstance(a, tuple) else np.asarray(a))
    return out


@pytest.mark.parametrize("prim,args,linear,params", LINEAR_CASES,
                         ids=[f"{c[0].name}-{i}" for i, c in enumerate(LINEAR_CASES)])
def test_linear_rules(prim, args, linear, params):
    vals = _materialize(args, 0)
    tans = _materialize(args, 10)
    out = impl_rules[prim](*vals, **params)[0]
    # JVP: the tangent is the op applied to the tangents of its linear inputs.
    tan_in = [tans[k] if k in linear else np.zeros_like(v) for k, v in enumerate(vals)]
    primals_out, tangents_out = ad.jvp_rules[prim]([_A(v) for v in vals],
                                                   [_A(t) for t in tan_in], **params)
    assert_close(primals_out[0], out)
    lin_args = [t if k in linear else v for k, (v, t) in enumerate(zip(vals, tans))]
    assert_close(tangents_out[0], impl_rules[prim](*lin_args, **params)[0], rtol=1e-5)
    # Transpose: <ct, f(t)> == <f^T(ct), t>, one linear input at a time.
    ct = _rand(out.shape, np.float32, 99)
    for k in linear:
        ins = [np.zeros_like(v) if j in linear else v for j, v in enumerate(vals)]
        ins[k] = tans[k]
        lhs = float(np.sum(ct.astype(np.float64) * impl_rules[prim](*ins, **params)[0]))
        targs = [ad.UndefinedPrimal(absjit.ShapedArray(np.shape(v), v.dtype)) if j in linear
                 else _A(v) for j, v in enumerate(vals)]
        cts = ad.transpose_rules[prim]([_A(ct)], *targs, **params)
        assert len(cts) == len(vals)
        rhs = float(np.sum(np.asarray(cts[k], np.float64) * tans[k]))
        assert abs(lhs - rhs) <= 1e-4 * (1 + abs(lhs)), (k, lhs, rhs)


BATCH_CASES = LINEAR_CASES + [
    (gi.scatter_max_p, [(4, 3), (3, 3), np.array([0, 3, 9], np.int32)], [], dict(axes=(0,))),
    (gi.gather_p, [(4, 3, 2), np.array([[0, 3], [1, 1]], np.int32),
                   np.array([[2, 0], [1, 0]], np.int32)], [], dict(axes=(0, 1))),
]


BATCH_PARAMS = [(c, which) for c in BATCH_CASES
                for which in (["all", "first", "rest"] if len(c[1]) > 1 else ["all"])]


@pytest.mark.parametrize("case,which", BATCH_PARAMS,
                         ids=[f"{c[0].name}-{i}-{w}" for i, (c, w) in enumerate(BATCH_PARAMS)])
def test_batch_rules(case, which):
    prim, args, linear, params = case
    size = 3
    per_example = [_materialize(args, 20 * b) for b in range(size)]
    if prim is st.dynamic_slice_p or prim is st.dynamic_update_slice_p:
        for b, ex in enumerate(per_example):  # different starts per example
            for k in range(len(ex)):
                if ex[k].ndim == 0 and ex[k].dtype.kind == "i":
                    ex[k] = np.int32(int(ex[k]) + b - 1)
    if prim is gi.gather_p or prim.name.startswith("scatter"):
        for b, ex in enumerate(per_example):
            for k in range(len(ex)):
                if ex[k].dtype.kind == "i":
                    ex[k] = (ex[k] + b) % 5
    n = len(args)
    batched = {"all": set(range(n)), "first": {0}, "rest": set(range(1, n))}[which]
    vals, dims = [], []
    for k in range(n):
        if k in batched:
            bdim = k % (per_example[0][k].ndim + 1)
            vals.append(_A(np.stack([ex[k] for ex in per_example], axis=bdim)))
            dims.append(bdim)
        else:
            vals.append(_A(per_example[0][k]))
            dims.append(None)
    outs, out_dims = batching.batch_rules[prim](vals, dims, **params)
    got = np.moveaxis(np.asarray(outs[0]), out_dims[0], 0)
    expected = []
    for b, ex in enumerate(per_example):
        ins = [ex[k] if k in batched else per_example[0][k] for k in range(n)]
        expected.append(impl_rules[prim](*ins, **params)[0])
    assert_close(got, np.stack(expected))


def test_rules_are_registered():
    for prim in [st.transpose_p, st.squeeze_p, st.slice_p, st.dynamic_slice_p,
                 st.dynamic_update_slice_p, st.concatenate_p, st.pad_p, st.rev_p,
                 st.broadcast_in_dim_p, st.reshape_p, gi.gather_p, gi.scatter_p,
                 gi.scatter_add_p, gi.scatter_mul_p, gi.scatter_min_p, gi.scatter_max_p]:
        assert prim in batching.batch_rules and prim in ad.jvp_rules


@pytest.mark.parametrize("prim", [gi.scatter_mul_p, gi.scatter_min_p, gi.scatter_max_p])
def test_nonlinear_scatter_jvp_matches_finite_differences(prim):
    absjit.config.update("enable_x64", True)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 2))
    u = rng.standard_normal((3, 2))
    idx = np.array([4, 0, 2], np.int32)
    tx = rng.standard_normal((5, 2))
    tu = rng.standard_normal((3, 2))
    _, (t,) = ad.jvp_rules[prim]([_A(x), _A(u), _A(idx)], [_A(tx), _A(tu), _A(idx * 0)],
                                 axes=(0,))
    eps = 1e-6
    f = impl_rules[prim]
    fd = (f(x + eps * tx, u + eps * tu, idx, axes=(0,))[0]
          - f(x - eps * tx, u - eps * tu, idx, axes=(0,))[0]) / (2 * eps)
    assert_close(t, fd, rtol=1e-5, atol=1e-6)


def test_in_dim_conveniences(mode):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def f(x, i):
        return (lax.dynamic_slice_in_dim(x, i, 2, axis=1),
                lax.dynamic_index_in_dim(x, i, 0, keepdims=False),
                lax.dynamic_update_slice_in_dim(x, np.zeros((3, 1), np.float32), i, 1),
                lax.dynamic_update_index_in_dim(x, np.ones(4, np.float32), i, 0))

    a, b, c, d = mode(f)(x, np.int32(-1))
    assert_close(a, x[:, 2:4])  # -1 wraps to 3, then the window is clamped to start 2
    assert_close(b, x[2])
    expected = x.copy()
    expected[:, 3] = 0
    assert_close(c, expected)
    expected = x.copy()
    expected[2] = 1
    assert_close(d, expected)
    with pytest.raises(ValueError, match="out of range"):
        lax.dynamic_slice_in_dim(x, 0, 1, axis=2)
