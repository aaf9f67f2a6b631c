"""``hoist_invariants``: scalars a nest's body computes without its loop variables move
before the nest (what moves, what stays), and the cpu backend's results are unchanged."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import absjit
import absjit.numpy as jnp
from absjit.backends.base import CompileOptions
from absjit.compiler import compile_to_ir, ir
from absjit.compiler.passes import hoist_invariants
from absjit.core.shapes import IxVar, ix_const
from tests.checks import assert_close


def program(f, *args):
    return compile_to_ir(absjit.make_jaxpr(f)(*args), CompileOptions(), loop_scatters=True)


def nests_with_leading_lets(prog):
    """``(nest, the Let statements at the start of its body)`` for every plain nest."""
    found = []
    for stmt in ir.walk(prog.body):
        if type(stmt) is ir.Nest:
            lets = []
            for s in stmt.body:
                if not isinstance(s, ir.Let):
                    break
                lets.append(s)
            found.append((stmt, lets))
    return found


def segment_sum(segments):
    return lambda t, i, s: jnp.zeros((segments, t.shape[1]), t.dtype).at[s].add(t[i])


def _segment_args(n=50, width=8, vocab=30, segments=7, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((vocab, width)).astype(np.float32),
            rng.integers(-vocab, vocab, n).astype(np.int32),  # negative ids wrap
            rng.integers(-segments, segments + 3, n).astype(np.int32))  # some dropped


def test_a_scatter_reads_its_row_index_once_per_row():
    args = _segment_args()
    before = program(segment_sum(7), *args)
    inner = [(n, lets) for n, lets in nests_with_leading_lets(before) if n.shape == (8,)]
    assert inner and inner[0][1], "the row loop starts by loading the gathered row index"
    after = hoist_invariants(program(segment_sum(7), *args))
    (row_loop,) = [n for n, _ in nests_with_leading_lets(after) if n.shape == (8,)]
    # what is left reads the row's elements: every load names the row loop's variable
    for s in row_loop.body:
        if isinstance(s, ir.Let) and isinstance(s.expr, ir.Load):
            assert any(row_loop.vars[0] in ir.ix_vars(ix) for ix in s.expr.index)


def test_what_stays_in_the_loop():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    # loads that name the nest's variables stay
    prog = hoist_invariants(program(lambda a: a * 2 + 1, x))
    assert not [s for s in prog.body if isinstance(s, ir.Let)]
    # a nest that may run no iteration keeps its body: for j0 in range(0): s0 = a[0] ...
    f32 = np.dtype(np.float32)
    a, out = ir.Buffer("a", (0,), f32), ir.Buffer("o", (0,), f32)
    load = ir.Let(ir.Sym("s0", f32), ir.Load(a, (ix_const(0),)))
    nest = ir.Nest(("j0",), (0,), [load, ir.Store(out, (IxVar("j0"),), load.sym)])
    prog = hoist_invariants(ir.Program("k", [a, out], [nest], []))
    assert prog.body == [nest] and nest.body[0] is load


def test_a_load_of_a_buffer_the_nest_writes_stays():
    # for j0 in range(2): s0 = b[0]; b[j0] = s0  (b[0] changes at the first iteration)
    body = [ir.Let(ir.Sym("s0", np.dtype(np.float32)),
                   ir.Load(ir.Buffer("b", (2,), np.dtype(np.float32)), (ix_const(0),)))]
    buf = body[0].expr.buf
    body.append(ir.Store(buf, (IxVar("j0"),), body[0].sym))
    nest = ir.Nest(("j0",), (2,), body)
    prog = ir.Program("k", [buf], [nest], [])
    out = hoist_invariants(prog)
    assert out.body == [nest] and len(nest.body) == 2


@settings(max_examples=6)
@given(n=st.integers(1, 40), width=st.integers(1, 9), segments=st.integers(1, 6),
       seed=st.integers(0, 5))
def test_scatters_equal_the_interpreter(n, width, segments, seed):
    args = _segment_args(n, width, 11, segments, seed)
    f = segment_sum(segments)
    assert_close(absjit.jit(f)(*args), absjit.jit(f, backend="interpret")(*args),
                 rtol=1e-5, atol=1e-5)
