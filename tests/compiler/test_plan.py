"""The fusion planner: kinds come from the primitives' fusion rules, and values become
arrays only for the documented reasons."""
from __future__ import annotations

import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.compiler import explain, plan
from absjit.compiler.plan import MAX_FUSED_OPS
from absjit.core.passes import cse, dce, inline_calls


def plan_of(f, *args):
    jaxpr = dce(cse(inline_calls(absjit.make_jaxpr(f)(*args)).jaxpr))
    return plan(jaxpr.eqns, jaxpr.outvars), jaxpr


def by_prim(p, name):
    return [n for n, e in enumerate(p.eqns) if e.primitive.name == name]


def test_kinds_come_from_the_fusion_table():
    x = np.ones((4, 4), np.float32)
    p, _ = plan_of(lambda a, b: (jnp.exp(a.T) @ b).sum(0) + lax.iota(np.float32, 4), x, x)
    kinds = {e.primitive.name: k for e, k in zip(p.eqns, p.kinds)}
    assert kinds == {"transpose": "index", "exp": "elementwise", "dot_general": "opaque",
                     "reduce_sum": "reduction", "iota": "value", "add": "elementwise"}


def test_general_reshape_is_opaque_and_size_one_reshape_is_an_index_map():
    x = np.ones((4, 6), np.float32)
    p, _ = plan_of(lambda a: (a.reshape(24) + 1, a.reshape(4, 1, 6) * 2), x)
    assert [p.kinds[n] for n in by_prim(p, "reshape")] == ["opaque", "index"]


def test_selu_is_one_nest_rooted_at_the_output():
    def selu(x):
        return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)
    p, jaxpr = plan_of(selu, np.ones(8, np.float32))
    (out,) = jaxpr.outvars
    assert p.materialised == {out: "output"}
    root = p.producer[out]
    assert all(p.nests[e.outvars[0]] == {root} for e in p.eqns)


def test_norm_reductions_and_their_shared_operand():
    def norm(X):
        X = X - X.mean(0)
        return X / jnp.sqrt(jnp.mean(X * X, 0))
    p, jaxpr = plan_of(norm, np.ones((100, 10), np.float32))
    sums = by_prim(p, "reduce_sum")
    assert [p.kinds[n] for n in sums] == ["reduction", "reduction"]
    # The centred value X - mean is cheap: it is recomputed in the variance reduction
    # and in the output's nest, never stored.
    (sub,) = by_prim(p, "sub")
    centred = p.eqns[sub].outvars[0]
    assert centred not in p.materialised
    assert p.nests[centred] == {sums[1], p.producer[jaxpr.outvars[0]]}
    text = explain(absjit.make_jaxpr(norm)(np.ones((100, 10), np.float32)))
    assert text.count("[reduction] array (reduction loop)") == 2


def test_sibling_outputs_share_one_nest_and_their_costly_operand():
    p, jaxpr = plan_of(lambda a: (jnp.exp(a) + 1, jnp.exp(a) * 2), np.ones(5, np.float32))
    (e,) = by_prim(p, "exp")
    c, d = jaxpr.outvars
    assert p.root_of[c] == p.root_of[d] and p.groups[p.root_of[d]] == [c, d]
    assert p.eqns[e].outvars[0] not in p.materialised  # computed once per element


def test_costly_value_read_by_two_nests_is_stored():
    # The sum must finish before the second nest can run: two nests, so exp is stored.
    p, _ = plan_of(lambda a: jnp.exp(a) * jnp.sum(jnp.exp(a)), np.ones(5, np.float32))
    (e,) = by_prim(p, "exp")
    assert p.materialised[p.eqns[e].outvars[0]] == "costly and read by 2 loop nests"


def test_a_value_read_before_a_later_nest_gets_its_own_nest():
    # b is read by the reduction before c's nest: they cannot be one multi-output nest.
    p, jaxpr = plan_of(lambda a: (a * 2, jnp.sum(a * 2) + a), np.ones(5, np.float32))
    b, c = jaxpr.outvars
    assert p.root_of[b] != p.root_of[c]


def test_broadcast_of_a_computed_value_is_stored_once():
    p, _ = plan_of(lambda a: jnp.sin(a)[:, None] * jnp.ones((5, 7)), np.ones(5, np.float32))
    # sin(a) reshaped to (5, 1) is broadcast to (5, 7): stored once, not recomputed 7x.
    (r,) = by_prim(p, "reshape")
    assert p.materialised[p.eqns[r].outvars[0]] == "broadcast of a computed value"
    (s,) = by_prim(p, "sin")
    assert p.nests[p.eqns[s].outvars[0]] == {r}


def test_operands_of_opaque_ops_are_stored_with_the_reason():
    x = np.ones((3, 3), np.float32)
    p, _ = plan_of(lambda a: (a + 1) @ a, x)
    (add,) = by_prim(p, "add")
    assert p.materialised[p.eqns[add].outvars[0]] == "operand of dot_general"


def test_long_chains_are_cut():
    def chain(x):
        for k in range(3 * MAX_FUSED_OPS):
            x = x * 0.5 + k
        return x
    p, _ = plan_of(chain, np.ones(4, np.float32))
    cut = [v for v, why in p.materialised.items() if "longer than" in why]
    assert len(cut) == 5  # every MAX_FUSED_OPS operations, plus the output


def test_dead_equations_are_marked():
    from absjit.core.jaxpr import Jaxpr
    jaxpr = absjit.make_jaxpr(lambda a: (jnp.sin(a), jnp.cos(a)))(np.ones(3, np.float32)).jaxpr
    p = plan(jaxpr.eqns, jaxpr.outvars[:1])
    assert p.live == [True, False]
    assert isinstance(jaxpr, Jaxpr) and "dead" in str(p)
