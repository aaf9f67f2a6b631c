"""Lowering to the loop IR, the IR passes, the printer and the verifier."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends.base import CompileOptions
from absjit.compiler import compile_to_ir, ir, lower_program, pformat
from absjit.compiler.passes import hoist_allocs, reuse_dead, scalarize
from absjit.core.passes import inline_calls


def lowered(f, *args, optimize=True):
    closed = absjit.make_jaxpr(f)(*args)
    if optimize:
        return compile_to_ir(closed, CompileOptions())
    return lower_program(closed, CompileOptions())


def stmts(prog, kind, block=None):
    return [s for s in ir.walk(prog.body if block is None else block) if isinstance(s, kind)]


def loops(prog):
    return stmts(prog, (ir.While, ir.ForRange))


def test_while_carries_of_rank_zero_become_scalar_locals():
    def f(x):
        # The counter is not an output: it can live in a register.
        return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0),
                              (0, x))[1]
    before = lowered(f, np.ones(3, np.float32), optimize=False)
    after = scalarize(before)
    (loop,) = loops(after)
    # The int32 counter lives in a Sym (a register), the array carry in a buffer.
    assert not [a for a in stmts(after, ir.Alloc) if a.buf.ndim == 0]
    carried = [s.sym for s in stmts(after, ir.Let, loop.body) if isinstance(s.expr, ir.Ref)]
    assert any(sym.dtype == np.int32 for sym in carried)
    assert [a.buf.shape for a in stmts(after, ir.Alloc)].count((3,)) >= 1


def test_loop_body_allocations_are_hoisted():
    def f(x):
        return lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) @ jnp.cos(c).T, x)
    prog = hoist_allocs(lowered(f, np.eye(4, dtype=np.float32), optimize=False))
    (loop,) = loops(prog)
    assert not stmts(prog, ir.Alloc, loop.body)
    assert stmts(prog, ir.Alloc)  # they are before the loop


def test_while_body_has_no_shape_guard():
    # Shape guards are not IR statements at all: only the entry of the rendered
    # function checks its parameters (see the renderer's tests).
    def f(x):
        return lax.while_loop(lambda c: c.sum() < 100, lambda c: c * 2 + 1, x)
    prog = lowered(f, np.ones((2, 3), np.float32))
    kinds = {type(s).__name__ for s in ir.walk(prog.body)}
    assert kinds <= {"Alloc", "Let", "Store", "Nest", "Reduce", "While", "Copy", "Alias"}


def test_dead_temporary_is_written_in_place():
    a, w, b = np.ones((8, 16), np.float32), np.ones((16, 4), np.float32), np.ones(4, np.float32)
    raw = lowered(lambda x, y, z: jnp.maximum(x @ y + z, 0), a, w, b, optimize=False)
    prog = reuse_dead(raw)
    (dot,) = stmts(prog, ir.Opaque)
    (alias,) = stmts(prog, ir.Alias)
    assert alias.src is dot.outs[0] and alias.dst is prog.outputs[0]


def test_live_temporary_is_not_overwritten():
    x = np.arange(6, dtype=np.float32)
    prog = lowered(lambda a: ((a @ a) * 2, (a @ a) + jnp.ones(6) * (a @ a)), x)
    check = absjit.jit(lambda a: ((a @ a) * 2, (a @ a) + jnp.ones(6) * (a @ a)), backend="cpu")
    ref = absjit.jit(lambda a: ((a @ a) * 2, (a @ a) + jnp.ones(6) * (a @ a)),
                     backend="interpret")
    for g, r in zip(check(x), ref(x)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r))
    assert ir.verify(prog) is prog


def test_inputs_are_never_returned_or_aliased():
    prog = lowered(lambda a: (a, a.reshape(2, 3), a + 0), np.arange(6, dtype=np.float32))
    params = {id(p) for p in prog.params}
    assert not any(id(o) in params for o in prog.outputs)
    assert not any(id(a.src) in params for a in stmts(prog, ir.Alias))


def test_verify_rejects_use_before_definition():
    b = ir.Buffer("t", (3,), np.dtype(np.float32))
    s = ir.Sym("s", np.dtype(np.float32))
    bad = ir.Program("k", [], [ir.Let(s, ir.Load(b, ()))], [])
    with pytest.raises(ir.IRError, match="before it is defined"):
        ir.verify(bad)
    wrong_rank = ir.Program("k", [b], [ir.Let(s, ir.Load(b, ()))], [])
    with pytest.raises(ir.IRError, match="indexed with 0"):
        ir.verify(wrong_rank)


def test_printer_shows_nests_reductions_and_control_flow():
    def f(x):
        y = lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: v - 1, x)
        return jnp.argmax(y), lax.scan(lambda c, v: (c + v, c), 0.0, y)
    text = pformat(lowered(f, np.arange(5, dtype=np.float32)))
    for word in ("reduce[add", "reduce[argmax", "switch", "case 1:", "for it", "nest i"):
        assert word in text, text


def test_inline_calls_flattens_nested_jit_and_custom_jvp():
    inner = absjit.jit(lambda a: jnp.sin(a) * 2)

    @absjit.custom_jvp
    def g(v):
        return inner(inner(v)) + 1

    g.defjvp(lambda p, t: (g(p[0]), t[0]))
    closed = absjit.make_jaxpr(lambda a: g(a) * 3)(np.ones(3, np.float32))
    flat = inline_calls(closed)
    names = [e.primitive.name for e in flat.jaxpr.eqns]
    assert names == ["sin", "mul", "sin", "mul", "add", "mul"]


def test_twenty_thousand_equation_chain_needs_no_deep_recursion():
    def chain(x):
        for k in range(10_000):
            x = x * 0.999 + (k % 7) * 1e-3
        return x
    closed = absjit.make_jaxpr(chain)(np.ones(4, np.float32))
    assert len(closed.jaxpr.eqns) == 20_000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        prog = compile_to_ir(closed, CompileOptions())
        from absjit.backends.numba_cpu.backend import NumbaCPUBackend
        from absjit.compiler.pieces import split_program
        backend = NumbaCPUBackend()
        pieces = split_program(prog, lambda p: backend.unit_key(p))
        text = pformat(prog)
    finally:
        sys.setrecursionlimit(limit)
    assert len(pieces) >= 20_000 // 256 and text.count("nest") == len(stmts(prog, ir.Nest))
