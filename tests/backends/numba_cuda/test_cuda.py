"""The cuda backend against the interpret backend, every op family.

This module needs the cuda backend: a machine with an NVIDIA GPU and numba-cuda, or
Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1`` set before ``numba.cuda`` is first
imported). ``conftest.py`` beside it collects it only where the backend is
available; elsewhere ``test_cuda_simulator.py`` runs it in a subprocess under the
simulator, so the README's single test command covers it. Shapes are tiny: the
simulator runs every GPU thread as a Python thread.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.numba_cuda.array import CudaArray
from absjit.backends.numba_cuda import BACKEND, CudaOutOfMemoryError, runtime
from tests.checks import assert_close

if "cuda" not in absjit.backends():  # named on the command line without the simulator
    pytest.fail("tests/backends/numba_cuda/test_cuda.py needs the cuda backend: run it on "
                "a GPU or with NUMBA_ENABLE_CUDASIM=1 (test_cuda_simulator.py beside it does "
                f"that); here: {BACKEND.unavailable_reason()}", pytrace=False)

RNG = np.random.default_rng(0)


def check(fn, *args, rtol=None, device_outputs=True, **jit_kwargs):
    """``jit(fn, backend="cuda")`` against ``jit(fn, backend="interpret")``: equal
    values and dtypes, and every output a CudaArray on the GPU."""
    got = absjit.jit(fn, backend="cuda", **jit_kwargs)(*args)
    want = absjit.jit(fn, backend="interpret", **jit_kwargs)(*args)
    assert_close(got, want, rtol=rtol)
    if device_outputs:
        for leaf in absjit.tree_util.tree_leaves(got):
            assert isinstance(leaf, CudaArray), type(leaf)
            assert leaf.device.platform == "gpu"
    return got


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


# -- elementwise ----------------------------------------------------------------------
def _unary_floats(x):
    pos = jnp.abs(x) + 0.5
    return (jnp.sin(x), jnp.cos(x), jnp.tan(x), jnp.exp(x), jnp.log(pos), jnp.tanh(x),
            jnp.sqrt(pos), lax.rsqrt(pos), jnp.expm1(x), jnp.log1p(pos), jnp.exp2(x),
            jnp.cbrt(x), jnp.floor(x), jnp.ceil(x), jnp.round(x), jnp.sign(x),
            jnp.arctan2(x, pos), jnp.sinh(x), jnp.arcsinh(x), jnp.arctan(x),
            absjit.nn.sigmoid(x), jnp.isfinite(x / (x - x)), x ** 3, pos ** x,
            jnp.fmod(x, 0.7), jnp.maximum(x, 0.0), jnp.minimum(x, 0.1))


def test_elementwise_floats():
    x = f32(4, 5)
    x[0, 0], x[0, 1] = 0.0, 1.5  # floor/round edge values
    check(_unary_floats, x)


def test_every_scalar_spelling_calls_only_what_kernels_can_see():
    """The device table (the cpu spellings with device overrides) may name helper
    functions: each one must be in the kernels' namespace (fma's and Threefry's were
    not, and every random draw failed on the device)."""
    import re
    from absjit.backends.numba.render import _Aval
    from absjit.backends.numba_cuda.device_rules import device_scalar_rules
    from absjit.core.fusion import Elementwise, fusion_kind
    from absjit.core.avals import ShapedArray
    from absjit.core.primitive import abstract_eval_rules, all_primitives
    from absjit.ops.threefry import threefry2x32_p
    names = set(runtime.kernel_namespace())
    checked = 0
    for name, prim in sorted(all_primitives().items()):
        if not isinstance(fusion_kind(prim), Elementwise) or \
                not prim.module.startswith("absjit."):
            continue
        assert prim in device_scalar_rules, f"{name}: no device spelling"
        cases = [((), dt) for dt in ("float32", "float64", "int32", "uint32", "bool")]
        if prim is threefry2x32_p:
            cases = [({"output": o}, "uint32") for o in ("x0", "x1", "xor")]
        for params, dt in cases:
            params, text = dict(params), None
            for n in (1, 2, 3, 4):  # the operand count the primitive takes for dt
                try:
                    out = abstract_eval_rules[prim](*[ShapedArray((), dt)] * n, **params)
                    out = out[0] if isinstance(out, (list, tuple)) else out
                    text = device_scalar_rules[prim](list("abcd"[:n]), [_Aval(dt)] * n,
                                                     _Aval(out.dtype), **params)
                    break
                except Exception:  # noqa: BLE001 - another count, or not this dtype
                    continue
            if text is None:
                continue  # needs other parameters, or not defined for this dtype
            checked += 1
            for called in re.findall(r"\b(_\w+)\(", text):
                assert called in names, f"{name} ({dt}) calls {called}, not in kernels"
    assert checked > 150


def test_random_draws_on_the_device_equal_the_cpu_backends():
    key = absjit.random.PRNGKey(7)
    for draw in (lambda k: absjit.random.normal(k, (257,)),
                 lambda k: absjit.random.uniform(k, (3, 5)),
                 lambda k: absjit.random.bits(k, (64,))):
        got = absjit.jit(draw, backend="cuda")(key)
        assert isinstance(got, CudaArray)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(absjit.jit(draw)(key)))


def test_elementwise_nan_inf_follow_numpy():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30], np.float32)
    check(lambda x: (jnp.maximum(x, 1.0), jnp.exp(x), jnp.log(x), jnp.sqrt(x),
                     jnp.floor(x), x * 0.0, jnp.isfinite(x)), x)


def test_elementwise_integers_and_bools():
    a = RNG.integers(-50, 50, (3, 7)).astype(np.int32)
    b = RNG.integers(-5, 6, (3, 7)).astype(np.int32)
    check(lambda a, b: (a // b, a % b, a * b - 3, jnp.abs(a), -a, a << 2, a >> 1,
                        lax.shift_right_logical(a, 3), a & b, a | b, a ^ b, ~a,
                        jnp.maximum(a, b), a == b, (a > 0) & (b < 0), ~(a > b),
                        jnp.clip(a, -3, 9), jnp.sign(a)), a, b)
    u = RNG.integers(0, 200, 9).astype(np.uint8)
    check(lambda u: (u + np.uint8(100), u // np.uint8(7), u * u, jnp.sign(u)), u)


def test_elementwise_chain_is_one_kernel():
    f = absjit.jit(lambda x: jnp.exp(jnp.sin(x) * 2.0 + 1.0) - x, backend="cuda")
    x = f32(33)
    text = f.lower(x).compile().as_text()
    assert text.count("def kernel(") == 1  # the whole chain is fused
    assert_close(f(x), np.exp(np.sin(x) * 2 + 1) - x)


def test_casts_select_iota():
    x = np.array([-3.7, -0.5, 0.5, 2.5, 1e10, np.nan, -1e10, 7.0], np.float32)
    check(lambda x: (x.astype(jnp.int32), x.astype(jnp.uint8), x.astype(jnp.bool_),
                     jnp.where(x > 0, x, -x), lax.select(x < 1, x, x * 2),
                     jnp.arange(8) * x, lax.iota(np.int32, 8) + 1,
                     jnp.float32(2) * jnp.arange(8, dtype=jnp.float32)), x)


def test_float64_under_x64():
    absjit.config.update("enable_x64", True)
    x = RNG.uniform(-1, 1, (3, 4))
    check(lambda x: (jnp.exp(x) * 2.0, x.sum(axis=1), jnp.int64(3) + x.astype(jnp.int64)), x)


# -- reductions -----------------------------------------------------------------------
@pytest.mark.parametrize("shape,axis", [((7, 5), 1), ((7, 5), 0), ((7, 5), None),
                                        ((3, 300), 1), ((300, 3), 0), ((2, 3, 200), (0, 2)),
                                        ((1000,), None)],
                         ids=["rows", "cols", "all", "tree-rows", "tree-cols", "tree-3d",
                              "tree-all"])
def test_reductions(shape, axis):
    x = f32(*shape)
    check(lambda x: (x.sum(axis=axis), x.max(axis=axis), x.min(axis=axis),
                     jnp.exp(x).mean(axis=axis), (x > 0).any(axis=axis),
                     (x > -1.9).all(axis=axis)), x, rtol=2e-5)


def test_reductions_int_prod_and_arg():
    a = RNG.integers(-3, 4, (4, 200)).astype(np.int32)
    check(lambda a: (a.sum(), a.sum(axis=1), jnp.prod(a[:, :5], axis=1), a.max(),
                     jnp.argmax(a, axis=1), jnp.argmin(a, axis=0)), a)
    x = f32(5, 6)
    x[1, 2] = np.nan
    check(lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), x.max(axis=1)), x)
    y = f32(200, 3)
    y[50, 1] = np.nan  # NaN wins in a column reduction's partials and its tree too
    check(lambda y: (y.max(axis=0), y.min(axis=0), y.sum(axis=0)), y, rtol=2e-5)


def test_reduction_strategies():
    from absjit.backends.base import CompileOptions
    from absjit.backends.numba_cuda import kernels
    from absjit.compiler import compile_to_ir, ir
    from absjit.compiler.rows import unfused

    def f(x, y):
        return x.sum(0), y.sum(1), x.max(), jnp.argmax(x, 0), x.sum(1)
    x, y = f32(300, 5), f32(5, 300)
    # the kernels see sibling reductions (x.sum(0), argmax(x, 0)) split, in order
    body = unfused(compile_to_ir(absjit.make_jaxpr(f)(x, y), CompileOptions())).body
    plan = [kernels.reduce_plan(s, runtime.threads_per_block(),
                                runtime.launch_shape(1 << 40)[0])[0]
            for s in body if isinstance(s, ir.Reduce)]
    assert plan == ["columns", "serial", "tree", "tree", "serial"]
    check(f, x, y, rtol=2e-5)


def test_fused_reductions_run_unfused_on_the_device():
    x = f32(6, 150)
    x[2, 7] = np.nan

    def softmax(x):
        e = jnp.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    check(lambda x: (softmax(x), x.sum(0), (x * x).sum(0), x.max(1), jnp.argmax(x, 1)),
          x, rtol=2e-5)


def test_float32_sum_accumulates_in_float64():
    x = np.full(4096, 0.1, np.float32)
    x[0] = 1e7
    got = absjit.jit(jnp.sum, backend="cuda")(x)
    want = absjit.jit(jnp.sum, backend="cpu")(x)
    assert float(got) == float(want)


def test_reduction_fuses_its_producer():
    f = absjit.jit(lambda x: jnp.sqrt((x * x).sum(axis=1)), backend="cuda")
    x = f32(6, 150)
    text = f.lower(x).compile().as_text()
    assert "_empty((6, 150, )" not in text  # x * x is never materialised
    assert_close(f(x), np.sqrt((x * x).sum(axis=1)), rtol=1e-5)


def test_tree_reduction_uses_shared_memory_and_partials():
    n = runtime.threads_per_block() * 8 * 3 + 5  # several blocks per output
    f = absjit.jit(jnp.sum, backend="cuda")
    x = f32(n)
    text = f.lower(x).compile().as_text()
    assert "cuda.shared.array" in text and "partial" in text
    assert_close(f(x), x.astype(np.float64).sum().astype(np.float32), rtol=1e-6)


def test_tree_reduction_shuffles_across_several_warps(monkeypatch):
    # Two warps per block: the warps' totals meet in shared memory and are shuffled
    # again; every accumulator dtype (bool, small ints, unsigned) goes through a shuffle.
    monkeypatch.setattr(runtime, "threads_per_block", lambda: 64)
    x = f32(3, 700)
    a = RNG.integers(-100, 100, (3, 700)).astype(np.int8)
    u = RNG.integers(0, 2**32 - 1, (3, 700), dtype=np.uint64).astype(np.uint32)

    def f(x, a, u):
        return (x.sum(1), x.max(1), x.min(), (x > 1.99).any(1), a.sum(1), a.max(1),
                u.max(1), u.min(), (a > -100).all(1))
    text = absjit.jit(f, backend="cuda").lower(x, a, u).compile().as_text()
    for dt in ("float64", "float32", "bool", "int8", "uint32"):
        assert f"_shfl_down_{dt}(" in text, dt
    assert "lane < 2" in text and "cuda.shared.array(2," in text
    check(f, x, a, u, rtol=2e-5)


# -- products ---------------------------------------------------------------------------
def test_dot_general_layouts():
    a, b = f32(5, 7), f32(7, 3)
    check(lambda a, b: (a @ b, a.T.T @ b, jnp.dot(b.T, a.T), a @ b[:, 0], a[0] @ b,
                        jnp.maximum(a @ b + 1.0, 0.0)), a, b, rtol=1e-5)


def test_dot_integer_and_batched():
    a = RNG.integers(-4, 5, (3, 6)).astype(np.int32)
    b = RNG.integers(-4, 5, (6, 2)).astype(np.int32)
    check(lambda a, b: a @ b, a, b)
    x, y, v = f32(2, 3, 4), f32(2, 4, 5), f32(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # on the device
        check(lambda x, y, v: (jnp.einsum("bij,bjk->bik", x, y),
                               jnp.einsum("bji,bjk->bki", x.transpose(0, 2, 1), y),
                               jnp.einsum("bj,bjk->bk", v, y), x @ y), x, y, v, rtol=1e-5)
    BACKEND._warned.discard("dot_general")
    # a contraction over two dimensions is not tiled: NumPy on host copies, one warning
    with pytest.warns(RuntimeWarning, match="no lowering for dot_general"):
        check(lambda x: jnp.tensordot(x, x, axes=([1, 2], [1, 2])), x, rtol=1e-5)


def test_dot_relu_epilogue_in_place():
    f = absjit.jit(lambda a, b: jnp.maximum(a @ b + 1.0, 0.0), backend="cuda")
    a, b = f32(4, 9), f32(9, 6)
    assert_close(f(a, b), np.maximum(a @ b + 1, 0), rtol=1e-5)


def test_dot_epilogue_is_fused_into_the_product_store():
    def dense(a, b, bias, s):
        return jnp.maximum(a @ b + bias, 0.0) * s
    a, b, bias, s = f32(5, 9), f32(9, 6), f32(6), np.float32(0.5)
    f = absjit.jit(dense, backend="cuda")
    text = f.lower(a, b, bias, s).compile().as_text()
    assert text.count("def kernel(") == 1 and "out2[" in text  # one kernel: no epilogue nest
    check(dense, a, b, bias, s, rtol=1e-5)
    assert _device_work(f, a, b, bias, s) == (1, 0)
    # the raw product is an output too: not fused (it must be stored as it is)
    both = absjit.jit(lambda a, b: (a @ b, jnp.tanh(a @ b)), backend="cuda")
    assert "out2[" not in both.lower(a, b).compile().as_text()
    check(lambda a, b: (a @ b, jnp.tanh(a @ b)), a, b, rtol=1e-5)
    ints = RNG.integers(-4, 5, (3, 6)).astype(np.int32)
    check(lambda x: jnp.maximum(x @ x.T - 3, 0), ints)


# -- indexing ---------------------------------------------------------------------------
def test_gather_scatter_dynamic_slices():
    x = f32(6, 4)
    idx = np.array([4, 0, 5, 5, 1], np.int32)
    check(lambda x, i: (x[i], x[:, 1][i], x[1:5:2, ::-1], x.at[i].add(1.0),
                        x.at[i, 0].set(7.0), x.at[2].multiply(3.0), jnp.take(x, i, axis=0)),
          x, idx)
    check(lambda x, s: (lax.dynamic_slice(x, (s, 1), (2, 2)),
                        lax.dynamic_update_slice(x, jnp.ones((2, 2)), (s, s)),
                        lax.dynamic_index_in_dim(x, s, 0, keepdims=False)),
          x, np.int32(3))


def test_structural_ops():
    x = f32(3, 4)
    check(lambda x: (x.reshape(4, 3), x.T, jnp.broadcast_to(x[:, :1], (3, 5)),
                     jnp.concatenate([x, x * 2], axis=1), jnp.pad(x, 1), jnp.cumsum(x, axis=1),
                     jnp.flip(x, 0), jnp.expand_dims(x, 0) + 1.0), x, rtol=1e-5)


def test_array_ops_run_on_the_device_without_warnings():
    x = f32(4, 5)
    i = np.array([3, 0, 3, 1, 0], np.int32)
    a = RNG.integers(-9, 9, (6,)).astype(np.int32)

    def f(x, i, a):
        return (
            x.at[i].add(2.0), x.at[i].set(x[1]), x.at[i].min(-1.0), x.at[i].max(0.5),
            x.at[i].multiply(2.0), a.at[jnp.array([0, 0, 5])].add(a[:3]),
            a.at[jnp.array([2, 9, -20])].set(7, mode="drop"),
            jnp.concatenate([x, x[:2]], axis=0), jnp.concatenate([x[:, :1], x], axis=1),
            lax.pad(x, 0.5, ((1, 2, 1), (-1, 1, 0))), jnp.cumsum(x, axis=0),
            lax.cumprod(x, axis=1, reverse=True), lax.cummax(a), lax.cummin(x, axis=0),
            lax.dynamic_update_slice(x, x[:2, :2] * 10.0, (jnp.int32(3), jnp.int32(-2))))
    text = absjit.jit(f, backend="cuda").lower(x, i, a).compile().as_text()
    assert "host copies" not in text and text.count("cuda.atomic.add") == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no host fallback
        check(f, x, i, a, rtol=1e-5)


# -- control flow -----------------------------------------------------------------------
def test_fori_loop_with_array_carry():
    def f(x):
        return lax.fori_loop(0, 4, lambda i, c: c * 0.5 + jnp.sin(c) + i, x)
    check(f, f32(9))


def test_while_loop_on_a_device_reduction():
    def f(x):
        return lax.while_loop(lambda c: c[0].sum() < 100.0,
                              lambda c: (c[0] * 2.0 + 1.0, c[1] + 1), (x, 0))
    check(f, np.abs(f32(5)))


def test_cond_on_a_device_scalar_and_switch():
    def f(x):
        y = lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
        return lax.switch(jnp.argmax(x) % 3, [jnp.sin, jnp.cos, jnp.exp], y)
    check(f, f32(6))
    check(f, -np.abs(f32(6)))


def test_scan_cumulative():
    def f(xs):
        return lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(3), xs)
    check(f, f32(5, 3), rtol=1e-5)


def test_scalar_body_loop():
    def f(n):
        return lax.fori_loop(0, n, lambda i, acc: acc + i * 2, 0)
    check(f, np.int32(10))


def _device_work(fn, *args):
    """``(launches, scalar transfers)`` of one call of the compiled ``fn``."""
    before = BACKEND.stats["launches"], BACKEND.stats["scalar_transfers"]
    absjit.block_until_ready(fn(*args))
    return (BACKEND.stats["launches"] - before[0],
            BACKEND.stats["scalar_transfers"] - before[1])


def _on_host(monkeypatch, fn, *args):
    """``(result, device work)`` of ``jit(fn)`` compiled with every loop left on the
    host, for comparison."""
    from absjit.backends.numba_cuda import loop_kernels
    with monkeypatch.context() as m:
        m.setattr(loop_kernels, "is_scalar_loop", lambda s: False)
        m.setattr(loop_kernels, "elementwise_shape", lambda s: None)
        absjit.clear_caches()  # no executable compiled with loop kernels is reused
        f = absjit.jit(fn, backend="cuda")
        out = absjit.block_until_ready(f(*args))  # compiled here
        work = _device_work(f, *args)
        absjit.clear_caches()
    return out, work


def test_scalar_loops_run_in_one_thread_of_one_kernel(monkeypatch):
    def collatz(n):  # a while loop on scalars; its counter escapes the loop
        return lax.while_loop(lambda c: c[0] != 1,
                              lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1),
                                         c[1] + 1), (n, 0))[1]

    def series(x):  # fori_loop and scan with scalar carries, a tiny stacked output
        s = lax.fori_loop(0, 20, lambda i, a: a * 0.5 + jnp.sin(a + i), x)
        return s, lax.scan(lambda c, t: (c * t + 1.0, c - t), s, jnp.arange(6.0))
    n, x = np.int32(27), np.float32(0.3)
    on_device = absjit.jit(collatz, backend="cuda"), absjit.jit(series, backend="cuda")
    assert "if cuda.grid(1) == 0:\n        while True:" in \
        on_device[0].lower(n).compile().as_text()
    check(collatz, n)
    check(series, x, rtol=1e-5)
    work = [_device_work(on_device[0], n), _device_work(on_device[1], x)]
    out0, host0 = _on_host(monkeypatch, collatz, n)
    out1, host1 = _on_host(monkeypatch, series, x)
    assert_close(out0, on_device[0](n))
    assert_close(out1, on_device[1](x), rtol=1e-5)
    # 111 iterations: one launch instead of scalar transfers every iteration
    assert work[0] == (1, 2) and host0[1] >= 2 * 111, (work, host0)
    assert work[1][0] <= 3 and sum(host1) >= 26 + sum(work[1]), (work, host1)


def test_elementwise_loop_runs_inside_each_thread(monkeypatch):
    def f(x, b):
        def body(i, c):
            u, v = c
            return u * 0.9 + jnp.sin(v) + i * b, jnp.maximum(v - u * 0.1, -1.0)
        return lax.fori_loop(0, 12, body, (x, x * 2.0))
    x, b = f32(3, 40), np.float32(0.01)  # 120 elements: more than a tiny loop
    on_device = absjit.jit(f, backend="cuda")
    check(f, x, b, rtol=1e-5)
    work = _device_work(on_device, x, b)
    out, host = _on_host(monkeypatch, f, x, b)
    assert_close(out, on_device(x, b), rtol=1e-5)
    assert work[0] + 12 <= host[0], (work, host)  # launches per iteration saved

    def counted(x):  # the loop's counter is read after it: spilled, read once
        i, v = lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))
        return x * i + v
    y = f32(100)
    assert "spill0[0] = " in absjit.jit(counted, backend="cuda").lower(y).compile().as_text()
    check(counted, y, rtol=1e-5)


def test_loops_reading_other_elements_stay_on_the_host():
    from absjit.backends.numba_cuda import loop_kernels
    from absjit.backends.base import CompileOptions
    from absjit.compiler import compile_to_ir, ir

    def f(x):  # element i reads element i - 1: no thread may run ahead
        return lax.fori_loop(0, 3, lambda i, c: c + jnp.roll(c, 1) * 0.5, x)
    x = f32(100)
    body = compile_to_ir(absjit.make_jaxpr(f)(x), CompileOptions()).body
    (loop,) = [s for s in body if isinstance(s, ir.ForRange)]
    assert not loop_kernels.is_scalar_loop(loop) and loop_kernels.elementwise_shape(loop) is None
    check(f, x, rtol=1e-5)


# -- placement ------------------------------------------------------------------------
def test_outputs_stay_on_device_and_chain():
    f = absjit.jit(lambda x: x * 2.0 + 1.0, backend="cuda")
    y = f(np.arange(4, dtype=np.float32))
    assert isinstance(y, CudaArray) and y._host is None  # nothing copied back yet
    z = f(f(y))
    assert z._host is None and y._host is None  # chained on the device
    assert z.block_until_ready() is z
    assert_close(np.asarray(z), (np.arange(4) * 8 + 7).astype(np.float32))
    assert z._host is not None  # np.asarray copied it back, once
    assert np.asarray(z) is np.asarray(z)
    assert z.devices() == {absjit.devices("cuda")[0]}
    assert repr(z) == "Array([ 7., 15., 23., 31.], dtype=float32)"
    g = absjit.jit(lambda x: x * 2.0 + 1.0, backend="gpu")  # the alias
    assert isinstance(g(z), CudaArray)
    assert "nest" in g.lower(z).compile().as_text("ir")  # the same loop IR as the cpu


def test_cpu_array_is_moved_once_per_call():
    f = absjit.jit(lambda x: (x + 1.0, x * 2.0), backend="cuda")
    x = absjit.device_put(np.ones(3, np.float32), "cpu")
    moved = []
    real = runtime.to_device
    try:
        runtime.to_device = lambda v: moved.append(v.shape) or real(v)
        a, b = f(x)
    finally:
        runtime.to_device = real
    assert moved == [(3,)]  # one copy for two kernels
    assert_close((a, b), (np.full(3, 2, np.float32), np.full(3, 2, np.float32)))


def test_device_api():
    (gpu,) = absjit.devices("cuda")
    assert absjit.devices("gpu") == [gpu] and gpu.platform == "gpu"
    assert repr(gpu) == "CudaDevice(id=0)"
    assert absjit.device_count("gpu") == 1
    x = absjit.device_put(np.arange(3, dtype=np.float32), gpu)
    assert isinstance(x, CudaArray) and x.device == gpu
    assert absjit.device_put(x, "gpu") is x
    back = absjit.device_put(x, "cpu")
    assert type(back) is absjit.Array and back.device == absjit.devices("cpu")[0]
    tree = absjit.device_put({"a": np.ones(2), "b": 3.0}, "cuda")
    assert isinstance(tree["a"], CudaArray) and tree["b"].weak_type
    assert absjit.device_get(tree)["a"].tolist() == [1.0, 1.0]
    # eager operations on a device array compute on its host copy
    assert_close(x + 1, np.arange(1, 4, dtype=np.float32))
    with pytest.raises(ValueError, match="unsupported device"):
        absjit.device_put(x, "tpu0")


def test_default_backend_from_config_and_environment(monkeypatch):
    before = absjit.config.default_backend
    try:
        absjit.config.update("default_backend", "gpu")
        assert absjit.default_backend() == "gpu"
        assert absjit.devices()[0].platform == "gpu"
        y = absjit.jit(lambda x: x + 1)(np.zeros(2, np.float32))
        assert isinstance(y, CudaArray)
        assert isinstance(absjit.device_put(np.zeros(2)), CudaArray)
    finally:
        absjit.config.update("default_backend", before)
    assert absjit.default_backend() == "cpu"
    monkeypatch.setenv("ABSJIT_DEFAULT_BACKEND", "cuda")
    assert sys.modules["absjit.config"].Config().default_backend == "cuda"


def test_cuda_array_interface_and_foreign_arrays():
    x = absjit.device_put(np.arange(6, dtype=np.float32).reshape(2, 3), "gpu")
    cai = x.__cuda_array_interface__
    assert cai["shape"] == (2, 3) and cai["typestr"] == "<f4" and cai["version"] == 3
    assert cai["data"][1] is True  # read-only: absjit arrays are immutable
    # a device array of another library goes in through device_put, without a copy
    foreign = runtime.cuda_module().to_device(np.arange(4, dtype=np.float32))
    wrapped = absjit.device_put(foreign, "gpu")
    assert wrapped._buf is foreign
    f = absjit.jit(lambda v: v * 3.0, backend="cuda")
    assert_close(f(wrapped), np.arange(4, dtype=np.float32) * 3)
    # ... and straight into a jitted function: no copy, the result on the device
    moved = []
    real = runtime.to_device
    try:
        runtime.to_device = lambda v: moved.append(v.shape) or real(v)
        y = f(foreign)
        mixed = absjit.jit(lambda a, b: a + b, backend="cuda")(foreign, y)
    finally:
        runtime.to_device = real
    assert moved == [] and isinstance(y, CudaArray) and isinstance(mixed, CudaArray)
    assert_close(mixed, np.arange(4, dtype=np.float32) * 4)
    assert y.__cuda_array_interface__["shape"] == (4,)
    host = absjit.device_put(foreign, "cpu")
    assert type(host) is absjit.Array and host.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert x.__dlpack_device__() == (2, 0)
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is None:
        with pytest.raises(BufferError, match="CuPy"):
            x.__dlpack__()
    else:  # pragma: no cover - needs a GPU with CuPy
        c = cupy.from_dlpack(x)
        assert c.data.ptr == cai["data"][0]
        assert_close(cupy.asnumpy(c), np.asarray(x))
        c4 = cupy.arange(4, dtype=cupy.float32)
        w = absjit.device_put(c4, "gpu")
        assert w.__cuda_array_interface__["data"][0] == c4.data.ptr  # zero-copy in
        assert_close(f(w), np.arange(4) * 3.0)


# -- fallbacks, caches, errors ----------------------------------------------------------
def test_unlowered_dtype_falls_back_with_one_warning():
    x = (np.arange(3) + 1j).astype(np.complex64)
    BACKEND._warned.discard("dtype complex64")
    with pytest.warns(RuntimeWarning, match="no lowering for dtype complex64"):
        y = absjit.jit(lambda z: z * 2, backend="cuda")(x)
    assert isinstance(y, CudaArray)
    assert_close(y, x * 2)
    z = absjit.jit(lambda z, s: z * s, backend="cuda")(absjit.device_put(x, "gpu"), 3.0)
    assert isinstance(z, CudaArray) and z.dtype == np.complex64
    assert_close(z, x * 3)


def test_host_primitive_warns_once_and_stays_correct():
    x = f32(7)
    BACKEND._warned.discard("sort")
    with pytest.warns(RuntimeWarning, match="no lowering for sort"):
        check(lambda x: jnp.sort(x) * 2.0, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(lambda x: jnp.sort(x) + 1.0, x)  # once per primitive


def test_kernels_are_cached_by_source_with_device_key():
    key = BACKEND.version_key()
    assert key[-1] == runtime.device_info()["cc"]  # "sim" under the simulator
    from absjit.backends.numba_cuda.compat import numba_cuda_version
    assert numba_cuda_version() in key
    x = f32(11)
    absjit.jit(lambda x: jnp.cos(x) * 3.25 - 1.5, backend="cuda")(x)
    compiles, hits = BACKEND.stats["compiles"], BACKEND.stats["memory_hits"]
    # another program holding the same loop nest reuses its kernel
    absjit.jit(lambda x: (jnp.cos(x) * 3.25 - 1.5, jnp.argmax(x)), backend="cuda")(x)
    assert BACKEND.stats["memory_hits"] == hits + 1
    assert BACKEND.stats["compiles"] == compiles + 1  # only the argmax kernel is new


def test_out_of_memory_names_the_sizes_and_leaves_caches_clean(monkeypatch):
    f = absjit.jit(lambda x: x * 2.0, backend="cuda")
    x = np.ones((3, 5), np.float32)
    cuda = runtime.cuda_module()

    class FakeOOM(Exception):
        code = 2

    def refuse(shape, dtype, *a, **k):
        raise FakeOOM("CUDA_ERROR_OUT_OF_MEMORY")
    real = cuda.device_array
    monkeypatch.setattr(cuda, "device_array", refuse)
    with pytest.raises(CudaOutOfMemoryError, match=r"shape \(3, 5\) and dtype float32 "
                                                   r"\(60 bytes\)"):
        f(absjit.device_put(x, "gpu"))
    monkeypatch.setattr(cuda, "device_array", real)
    assert_close(f(x), x * 2)  # the same entry works once memory is there
    assert f._cache_size() == 1


def test_failed_launch_exposes_no_output(monkeypatch):
    f = absjit.jit(lambda x: (x + 1.0, jnp.exp(x).sum()), backend="cuda")
    x = absjit.device_put(f32(8), "gpu")
    cuda = runtime.cuda_module()
    real, calls = cuda.device_array, []

    def flaky(shape, dtype, *a, **k):  # the second allocation of the call fails
        calls.append(shape)
        if len(calls) == 2:
            raise RuntimeError("launch failed")
        return real(shape, dtype, *a, **k)
    monkeypatch.setattr(cuda, "device_array", flaky)
    with pytest.raises(RuntimeError, match="launch failed"):
        f(x)
    assert len(calls) == 2  # the first output had been written, and was not returned
    monkeypatch.setattr(cuda, "device_array", real)
    assert_close(f(x), (np.asarray(x) + 1, np.exp(np.asarray(x)).sum()), rtol=1e-5)


def test_ranked_program_compiles_per_shape_under_one_entry():
    """A ``ranked`` function on cuda: kernels are made per concrete shape, one jit
    entry serves every size, and sizes the trace assumed equal are still checked."""
    f = absjit.jit(lambda x, y: jnp.tanh(x) * 2.0 + y[::-1], backend="cuda",
                   abstraction="ranked")
    for n in (5, 9, 5):
        x = RNG.standard_normal(n).astype(np.float32)
        y = RNG.standard_normal(n).astype(np.float32)
        got = f(x, y)
        assert isinstance(got, CudaArray)
        assert_close(np.asarray(got), np.tanh(x) * 2.0 + y[::-1], rtol=1e-6)
    assert f._cache_size() == 1
    text = f.lower(np.zeros(3, np.float32), np.zeros(3, np.float32)).compile().as_text()
    assert "compiled per concrete shape" in text
    with pytest.raises(ValueError, match="assuming they are equal"):
        f(np.zeros(4, np.float32), np.zeros(6, np.float32))
