"""Sibling reductions share one loop nest; a row reduction and the nests consuming its
rows run in one loop over rows. Structure of the plan and the loop IR, and what the
cuda renderer receives."""
from __future__ import annotations

import numpy as np

import absjit
import absjit.numpy as jnp
from absjit.backends.base import CompileOptions
from absjit.compiler import compile_to_ir, ir, pformat, plan
from absjit.compiler.rows import ROW_MIN, unfused
from absjit.core.passes import cse, dce, inline_calls
from absjit.core.shapes import IxVar


def plan_of(f, *args):
    jaxpr = dce(cse(inline_calls(absjit.make_jaxpr(f)(*args)).jaxpr))
    return plan(jaxpr.eqns, jaxpr.outvars)


def reductions(p):
    return [n for n, k in enumerate(p.kinds) if k == "reduction"]


def program(f, *args):
    return compile_to_ir(absjit.make_jaxpr(f)(*args), CompileOptions())


def top(prog, kind):
    return [s for s in prog.body if isinstance(s, kind)]


def softmax(x):
    e = jnp.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5)


X = np.ones((16, 200), np.float32)


def test_sum_and_sum_of_squares_are_one_nest_reading_x_once():
    p = plan_of(lambda x: (x.sum(0), (x * x).sum(0)), X)
    a, b = reductions(p)
    assert p.reduce_groups == {a: [a, b]} and p.reduce_root == {a: a, b: a}
    prog = program(lambda x: (x.sum(0), (x * x).sum(0)), X)
    (red,) = [s for s in ir.walk(prog.body) if isinstance(s, ir.Reduce)]
    assert [acc.out for acc in red.accs()] == prog.outputs
    loads = [s for s in red.body if isinstance(s, ir.Let) and isinstance(s.expr, ir.Load)]
    assert len(loads) == 1  # x is loaded once per element for both sums
    a, b = prog.outputs
    assert f"{a.name}, {b.name} = reduce[add axes=(0,) acc=float64]" in pformat(prog)


def test_max_and_argmax_share_one_nest():
    prog = program(lambda x: (x.max(1), jnp.argmax(x, 1)), X)
    (red,) = [s for s in ir.walk(prog.body) if isinstance(s, ir.Reduce)]
    assert [(a.monoid.combine, a.monoid.arg) for a in red.accs()] == \
        [("max", None), ("max", "max")]


def test_plan_text_names_the_shared_loop():
    f = absjit.jit(lambda x: (x.min(0), x.max(0), x.sum(1)))
    text = f.lower(X).compile().as_text("plan")
    assert text.count("reduction loop shared with") == 2
    assert "array (reduction loop)\n" in text + "\n"  # x.sum(1) reduces other axes


def test_dependent_reductions_are_not_siblings():
    # var reads mean: two nests, the second after the first
    p = plan_of(lambda x: jnp.var(x, 0), X)
    assert p.reduce_groups == {}
    assert len(reductions(p)) == 2


def test_a_reduction_waiting_for_a_later_array_is_not_grouped():
    # the second sum reads a product that exists only after the first sum's position
    def f(x, w):
        return x.sum(0), (x @ w).sum(0)
    p = plan_of(f, np.ones((8, 8), np.float32), np.ones((8, 8), np.float32))
    assert p.reduce_groups == {}


def test_softmax_is_one_loop_over_rows():
    x = np.ones((16, ROW_MIN * 2), np.float32)
    prog = program(softmax, x)
    (rows,) = top(prog, ir.Rows)
    assert not top(prog, ir.Reduce) and len(top(prog, ir.Nest)) == 1
    kinds = [type(s).__name__ for s in rows.body]
    assert kinds == ["Reduce", "Nest", "Reduce", "Nest"]
    assert all(s.out_at == (IxVar(rows.vars[0]),) for s in rows.body
               if isinstance(s, ir.Reduce))
    assert "rows i" in pformat(prog)


def test_layer_norm_is_one_loop_over_rows():
    prog = program(layer_norm, np.ones((4, 3, ROW_MIN), np.float32))
    (rows,) = top(prog, ir.Rows)
    assert rows.shape == (4, 3)
    assert [type(s).__name__ for s in rows.body].count("Reduce") == 2


def test_short_rows_are_left_to_the_flat_loops():
    prog = program(softmax, np.ones((100, ROW_MIN - 1), np.float32))
    assert not top(prog, ir.Rows)


def test_a_consumer_reading_other_rows_is_not_fused():
    def f(x):
        s = x.sum(-1, keepdims=True)
        return x / s[::-1]  # row i divides by the sum of another row
    prog = program(f, np.ones((8, 100), np.float32))
    assert not top(prog, ir.Rows)


def test_column_reductions_are_not_row_fused():
    prog = program(lambda x: x - x.mean(0), X)
    assert not top(prog, ir.Rows)


def test_unfused_gives_the_cuda_renderer_one_statement_per_nest():
    prog = unfused(program(softmax, np.ones((16, 200), np.float32)))
    assert not [s for s in ir.walk(prog.body) if isinstance(s, ir.Rows)]
    assert [type(s).__name__ for s in prog.body if isinstance(s, (ir.Nest, ir.Reduce))] \
        == ["Reduce", "Nest", "Reduce", "Nest"]
    prog = unfused(program(lambda x: (x.sum(0), (x * x).sum(0)), X))
    reds = top(prog, ir.Reduce)
    assert len(reds) == 2 and not any(r.siblings for r in reds)


def test_fused_programs_compute_the_same_as_the_interpreter():
    x = np.random.default_rng(0).normal(size=(16, 200)).astype(np.float32)
    for f in (softmax, layer_norm, lambda x: (x.sum(0), (x * x).sum(0))):
        got = absjit.jit(f)(x)
        want = absjit.jit(f, backend="interpret")(x)
        for g, w in zip(absjit.tree_util.tree_leaves(got),
                        absjit.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-6)
