"""The interpret backend and the backend registry/protocol."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import absjit
import absjit.numpy as jnp
from absjit.backends import base, get_backend, select_backend
from absjit.backends.base import Backend, CompileOptions, Executable
from absjit.backends.interpret import InterpretBackend
from tests.checks import assert_close


def test_registered_and_available():
    b = get_backend("interpret")
    assert isinstance(b, InterpretBackend) and b.is_available()
    assert "interpret" in absjit.backends() and "interpret" in base.available_backends()
    assert b.platforms == ("cpu",) and b.version_key()
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        get_backend("nope")


def test_selection_order():
    before = absjit.config.default_backend
    try:
        absjit.config.update("default_backend", "interpret")
        assert select_backend().name == "interpret"
        assert select_backend("interpret").name == "interpret"
        absjit.config.update("default_backend", None)
        expected = "cpu" if "cpu" in absjit.backends() else "interpret"
        assert select_backend().name == expected
    finally:
        absjit.config.update("default_backend", before)


def test_compile_and_call_on_buffers_consts_first():
    c = np.arange(3.0, dtype=np.float32)
    closed = absjit.make_jaxpr(lambda x: jnp.exp(x) + c)(np.ones(3, np.float32))
    assert len(closed.consts) == 1
    exe = get_backend("interpret").compile(closed, CompileOptions())
    assert isinstance(exe, Executable)
    assert exe.as_text() == str(closed)
    (out,) = exe(np.asarray(closed.consts[0]), np.zeros(3, np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, 1.0 + c)


def test_outputs_never_alias_writable_inputs():
    closed = absjit.make_jaxpr(lambda x: (x, x.reshape(3, 1)))(np.ones(3, np.float32))
    exe = get_backend("interpret").compile(closed, CompileOptions())
    a = np.ones(3, np.float32)
    same, view = exe(a)
    assert not np.shares_memory(same, a) and not np.shares_memory(view, a)
    ro = np.ones(3, np.float32)
    ro.flags.writeable = False
    same, _ = exe(ro)
    assert same is ro  # a read-only buffer may be shared


def test_nested_jit_is_evaluated():
    inner = absjit.jit(lambda x: x * 3.0)
    closed = absjit.make_jaxpr(lambda x: inner(x) + 1.0)(np.float32(1.0))
    exe = get_backend("interpret").compile(closed, CompileOptions())
    assert float(exe(np.float32(2.0))[0]) == 7.0


@given(st.lists(st.floats(-10, 10, width=32), min_size=1, max_size=8))
def test_matches_eager(values):
    x = np.asarray(values, np.float32)

    def fn(x):
        return jnp.where(x > 0, jnp.log1p(x), jnp.exp(x) - 1.0), jnp.sum(x * x)

    eager = fn(x)
    jitted = absjit.jit(fn, backend="interpret")(x)
    assert_close(jitted, eager)


def test_base_backend_defaults():
    class Minimal(Backend):
        name = "minimal-test"

    m = Minimal()
    assert m.is_available() and m.version_key() == () and m.to_buffer(1) == 1
    assert repr(m) == "<backend 'minimal-test'>"
    with pytest.raises(NotImplementedError):
        m.compile(None, CompileOptions())
    assert CompileOptions.from_dict({"fastmath": True, "extra": {"zz": 1, "aa": 2}}) == \
        CompileOptions(True, None, (("aa", 2), ("zz", 1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_scalar_loops_match_the_compiled_tier_bit_for_bit(dtype):
    """Loop bodies of rank-0 values run as NumPy scalar arithmetic: the same values as
    the kernels, integer wrap-around included."""
    from absjit import lax

    def prog(x0, r):
        def body(i, c):
            x, n = c
            x = r * x * (dtype(1) - x) if np.dtype(dtype).kind == "f" else r * x + x - dtype(3)
            return x, n + (x > r).astype(np.int32) - (x == r).astype(np.int32)
        x, n = lax.fori_loop(0, 500, body, (x0, np.int32(0)))
        y = lax.while_loop(lambda c: c[1] < 700, lambda c: (-c[0] + c[0] * c[0], c[1] + 1),
                           (x, n))
        return x, n, y

    args = (dtype(0.3) if np.dtype(dtype).kind == "f" else dtype(7),
            dtype(3.7) if np.dtype(dtype).kind == "f" else dtype(5))
    with np.errstate(all="ignore"):
        want = absjit.jit(prog, backend="cpu")(*args)
        got = absjit.jit(prog, backend="interpret")(*args)
    for g, w in zip(absjit.tree_util.tree_leaves(got), absjit.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


# -- intermediates in reused buffers (interpret.Schedule) -----------------------------
def _selu(x):
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)


def test_intermediates_share_buffers_kept_between_calls():
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    exe = get_backend("interpret").compile(absjit.make_jaxpr(_selu)(x))
    # gt, exp, mul, sub, select: bool and float32 intermediates; the float32 chain
    # reuses one buffer (each result takes its dying operand's), the select writes a
    # second (it must not overwrite the case it reads last), the output is never a slot
    assert sorted(str(dt) for _, dt in exe.schedule.slot_avals) == \
        ["bool", "float32", "float32"]
    first = exe(x)[0]
    kept = first.copy()
    second = exe(-x)[0]
    np.testing.assert_array_equal(first, kept)  # the next call wrote elsewhere
    assert not np.shares_memory(first, second)
    want = np.asarray(jax_free_selu(x))
    np.testing.assert_array_equal(first, want)


def jax_free_selu(x):
    """The same program, one primitive at a time, each result a new array."""
    from absjit.ops.call import eval_jaxpr_numpy
    closed = absjit.make_jaxpr(_selu)(x)
    return eval_jaxpr_numpy(closed.jaxpr, closed.consts, x)[0]


def test_a_buffer_read_through_a_view_is_not_reused():
    # b is read by a reversal (NumPy returns a view): its buffer must outlive that
    # view, so it is not a slot that sin's result could take once b itself is dead
    def f(a):
        r = jnp.flip(jnp.exp(a), 0)
        d = jnp.sin(a) * 2.0
        return r + d * r
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    exe = get_backend("interpret").compile(absjit.make_jaxpr(f)(a))
    r, d = np.flip(np.exp(a), 0), np.sin(a) * np.float32(2.0)
    want = r + d * r
    np.testing.assert_array_equal(exe(a)[0], want)
    np.testing.assert_array_equal(exe(a)[0], want)


def test_threads_each_have_their_buffers():
    import threading
    x = np.linspace(-2, 2, 50_000, dtype=np.float32)
    exe = get_backend("interpret").compile(absjit.make_jaxpr(_selu)(x))
    want = {s: exe(x * s)[0] for s in (1, 2, 3, 4)}
    got, errors = {}, []

    def work(s):
        try:
            for _ in range(20):
                r = exe(x * s)[0]
                if not np.array_equal(r, want[s]):
                    errors.append(s)
            got[s] = r
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in want]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(got) == [1, 2, 3, 4]


@given(st.lists(st.sampled_from(["add", "mul", "sub", "exp", "neg", "max", "gt_sel",
                                 "reshape", "sum"]), min_size=1, max_size=12),
       st.sampled_from([np.float32, np.float64, np.int32]))
def test_random_programs_match_one_array_per_result(ops, dtype):
    from absjit.ops.call import eval_jaxpr_numpy

    def f(x, y):
        vals = [x, y]
        for k, op in enumerate(ops):
            a, b = vals[-1], vals[k % len(vals)]
            if op == "add":
                vals.append(a + b)
            elif op == "mul":
                vals.append(a * b)
            elif op == "sub":
                vals.append(a - 1)
            elif op == "exp" and np.dtype(dtype).kind == "f":
                vals.append(jnp.exp(jnp.minimum(a, 3)))
            elif op == "neg":
                vals.append(-a)
            elif op == "max":
                vals.append(jnp.maximum(a, b))
            elif op == "gt_sel":
                vals.append(jnp.where(a > b, a, b))
            elif op == "reshape":
                vals.append(a.reshape(6, 4).T.reshape(4, 6) * 1)
            elif op == "sum":
                vals.append(a + a.sum(axis=0))
        return vals[-1], vals[len(vals) // 2]
    x = (np.arange(24).reshape(4, 6) % 5 - 2).astype(dtype)
    y = (np.arange(24).reshape(4, 6) % 3).astype(dtype)
    closed = absjit.make_jaxpr(f)(x, y)
    exe = get_backend("interpret").compile(closed)
    want = eval_jaxpr_numpy(closed.jaxpr, closed.consts, x, y)
    for _ in range(2):  # the second call runs in the buffers the first one left
        got = exe(x, y)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_a_call_from_inside_a_call_uses_buffers_of_its_own():
    # a is an intermediate in a buffer, live across a callback that calls the same
    # executable again: the inner call must not write into the outer call's buffers
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    box = {}

    def again(v):
        if not box.get("inner"):
            box["inner"] = True
            np.asarray(box["exe"](np.asarray(v) * 3)[0])  # same schedule, same thread
        return np.asarray(v)

    def f(v):
        a = jnp.exp(v) * 2.0
        z = absjit.pure_callback(again, absjit.ShapeDtypeStruct(v.shape, v.dtype), v)
        return a + z
    exe = box["exe"] = get_backend("interpret").compile(absjit.make_jaxpr(f)(x))
    assert exe.schedule.slot_avals  # a is in a buffer
    np.testing.assert_array_equal(exe(x)[0], np.exp(x) * np.float32(2.0) + x)
    assert box["inner"]


def test_a_select_never_writes_over_the_case_it_reads_last():
    def f(x):
        return jnp.where(x > 0, jnp.exp(x) * 2.0, x - 1.0) + 1.0
    x = np.linspace(-2, 2, 101, dtype=np.float32)
    exe = get_backend("interpret").compile(absjit.make_jaxpr(f)(x))
    want = np.where(x > 0, np.exp(x) * np.float32(2), x - np.float32(1)) + np.float32(1)
    for _ in range(2):
        np.testing.assert_array_equal(exe(x)[0], want)
