"""absjit.ops.segment_{sum,prod,max,min} against a NumPy loop and jax.ops, on every
backend; the ``.at[rows]`` form they share with scatter."""
from __future__ import annotations

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import ops
from absjit.ops import indexing
from tests.checks import assert_close, jax

KINDS = {"sum": (np.add, 0.0), "prod": (np.multiply, 1.0), "max": (np.maximum, -np.inf),
         "min": (np.minimum, np.inf)}


def _reference(kind, data, ids, n, clip=False):
    combine, init = KINDS[kind]
    if data.dtype.kind in "iu" and kind in ("max", "min"):
        info = np.iinfo(data.dtype)
        init = info.min if kind == "max" else info.max
    out = np.full((n,) + data.shape[ids.ndim:], init, data.dtype)
    for pos in np.ndindex(*ids.shape):
        s = int(ids[pos])
        if clip:
            s = min(max(s, 0), n - 1)
        if 0 <= s < n:  # out-of-range ids (negative ones too) are dropped
            out[s] = combine(out[s], data[pos])
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_segment_ops_match_reference_and_jax(mode, rng, kind, dtype):
    data = (rng.standard_normal((40, 3)) * 3).astype(dtype)
    ids = rng.integers(-2, 9, 40).astype(np.int32)  # -2, -1, 7, 8: out of range, dropped
    fn = getattr(ops, f"segment_{kind}")
    got = mode(lambda d, i: fn(d, i, num_segments=7))(data, ids)
    assert got.dtype == dtype and got.shape == (7, 3)
    assert_close(got, _reference(kind, data, ids, 7), rtol=1e-5)
    clipped = mode(lambda d, i: fn(d, i, num_segments=7, mode="clip"))(data, ids)
    assert_close(clipped, _reference(kind, data, ids, 7, clip=True), rtol=1e-5)
    if jax is not None:
        assert_close(got, np.asarray(getattr(jax.ops, f"segment_{kind}")(data, ids, 7)),
                     rtol=1e-5)


def test_segment_sum_of_repeated_ids_is_one_compiled_scatter(rng):
    data = rng.standard_normal((1000, 4)).astype(np.float32)
    ids = np.zeros(1000, np.int32)  # every row into one segment
    f = absjit.jit(lambda d, i: ops.segment_sum(d, i, 3))
    want = np.stack([data.sum(0), np.zeros(4), np.zeros(4)]).astype(np.float32)
    assert_close(f(data, ids), want, rtol=1e-4, atol=1e-4)
    jaxpr = absjit.make_jaxpr(lambda d, i: ops.segment_sum(d, i, 3))(data, ids).jaxpr
    names = [e.primitive.name for e in jaxpr.eqns]
    assert "scatter-add" in names and "gather" not in names
    from absjit.backends.numba_cpu.lowering import lower_arrays
    assert indexing.scatter_add_p in lower_arrays.array_rules  # a loop, not NumPy


def test_segment_sum_without_num_segments_and_grad(rng):
    data = rng.standard_normal(6).astype(np.float32)
    ids = np.array([0, 2, 2, 1, 0, 2], np.int32)
    assert_close(ops.segment_sum(data, ids), _reference("sum", data, ids, 3))
    g = absjit.grad(lambda d: jnp.sum(ops.segment_sum(d, ids, 3) ** 2))(data)
    assert_close(g, 2 * _reference("sum", data, ids, 3)[ids], rtol=1e-5)
    v = absjit.vmap(lambda d: ops.segment_sum(d, ids, 3))(np.stack([data, 2 * data]))
    assert_close(v, np.stack([_reference("sum", data, ids, 3),
                              _reference("sum", 2 * data, ids, 3)]), rtol=1e-5)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: ops.segment_sum(np.ones(3, np.float32), np.array([0., 1., 1.]), 2), TypeError,
     "integer"),
    (lambda: ops.segment_sum(np.ones(3, np.float32), np.array([0, 1]), 2), ValueError,
     "leading dimensions"),
    (lambda: ops.segment_max(np.ones(3, np.complex64), np.array([0, 1, 1]), 2), TypeError,
     "complex"),
    (lambda: ops.segment_sum(np.ones(3, np.float32), np.array([0, 1, 1]), 2, mode="wrap"),
     ValueError, "mode"),
    (lambda: absjit.jit(lambda d, i: ops.segment_sum(d, i))(np.ones(3, np.float32),
                                                            np.array([0, 1, 1])),
     ValueError, "num_segments"),
])
def test_segment_bad_input_raises_before_any_kernel(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("how", ["add", "set", "max"])
def test_at_rows_update_binds_one_index_array(mode, rng, how):
    """``x.at[rows].add(v)`` on a matrix: one index per row of ``v`` (axes=(0,)), not
    a coordinate array per element."""
    x = rng.standard_normal((5, 4)).astype(np.float32)
    v = rng.standard_normal((8, 4)).astype(np.float32)
    rows = np.array([0, 4, 4, -1, 2, 9, 0, 3], np.int32)
    f = lambda x, v, r: getattr(jnp.asarray(x).at[r], how)(v, mode="drop")  # noqa: E731
    jaxpr = absjit.make_jaxpr(f)(x, v, rows).jaxpr
    sc = [e for e in jaxpr.eqns if e.primitive.name.startswith("scatter")]
    assert len(sc) == 1 and sc[0].params["axes"] == (0,)
    want = x.copy()
    for r, row in zip(rows, v):
        r = r + 5 if r < 0 else r
        if 0 <= r < 5:
            want[r] = {"add": want[r] + row, "set": row, "max": np.maximum(want[r], row)}[how]
    got = mode(f)(x, v, rows)
    assert_close(got, want, rtol=1e-6)
