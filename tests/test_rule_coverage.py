"""Every primitive has every rule it needs, or a documented reason why not.

A primitive added without (say) a batching rule or a cpu lowering fails here, instead
of warning at run time in a user's program.
"""
from __future__ import annotations

import pytest

import absjit  # noqa: F401 - registers every primitive
from absjit.backends.numba import lower_elementwise
from absjit.backends.numba_cpu.lowering import lower_arrays
from absjit.core.fusion import Call, ControlFlow, Elementwise, IndexMap, Opaque, Reduction, \
    Value, fusion_kind
from absjit.core.primitive import abstract_eval_rules, all_primitives, impl_rules
from absjit.interpreters import ad, batching

# Primitives that need no JVP or batching rule of their own, and why.
NO_JVP = {
    "iota": "takes no array operands: nothing to differentiate",
    "custom_lin": "the linear part of a custom_vjp: transposed, never differentiated again",
    "axis_index": "takes no array operands: its value is an integer position",
}
NO_BATCH = {
    "iota": "takes no array operands: nothing is ever batched",
    "custom_lin": "appears only inside linearised jaxprs, which vmap never sees",
}

# absjit's own primitives (tests define throwaway ones of their own).
PRIMS = sorted((n, p) for n, p in all_primitives().items() if p.module.startswith("absjit."))


@pytest.mark.parametrize("name,prim", PRIMS, ids=[n for n, _ in PRIMS])
def test_frontend_rules(name, prim):
    assert prim in abstract_eval_rules, f"{name}: no abstract evaluation rule"
    assert prim in impl_rules, f"{name}: no NumPy implementation (the reference)"
    assert prim in ad.jvp_rules or name in NO_JVP, f"{name}: no JVP rule"
    assert prim in batching.batch_rules or name in NO_BATCH, f"{name}: no batching rule"


@pytest.mark.parametrize("name,prim", PRIMS, ids=[n for n, _ in PRIMS])
def test_cpu_lowering_or_documented_fallback(name, prim):
    kind = fusion_kind(prim)
    if isinstance(kind, Elementwise):
        assert prim in lower_elementwise.scalar_rules or \
            name in lower_elementwise.NOT_LOWERED, f"{name}: no scalar spelling"
    elif isinstance(kind, Opaque):
        assert prim in lower_arrays.array_rules or name in lower_arrays.NOT_LOWERED, \
            f"{name}: no array rule and no documented fallback"
    else:
        # Index maps, values, reductions and control flow are lowered by the compiler
        # from their fusion rules; calls are inlined.
        assert isinstance(kind, (IndexMap, Value, Reduction, ControlFlow, Call))


@pytest.mark.parametrize("name,prim", PRIMS, ids=[n for n, _ in PRIMS])
def test_xla_rule_or_documented_reason(name, prim):
    pytest.importorskip("jax")
    from absjit.backends.xla import rules, rules_arrays  # noqa: F401 - registers rules
    assert name in rules.xla_rules or name in rules.NOT_LOWERED, \
        f"{name}: no XLA rule and no documented reason"


def test_documented_exceptions_are_current():
    """A listed exception that now has its rule must leave the list."""
    prims = all_primitives()
    for name in NO_JVP:
        assert prims[name] not in ad.jvp_rules, f"{name} has a JVP rule now"
    for name in NO_BATCH:
        assert prims[name] not in batching.batch_rules, f"{name} has a batching rule now"
    for name in lower_arrays.NOT_LOWERED:
        assert prims[name] not in lower_arrays.array_rules, f"{name} is lowered now"
    for name in lower_elementwise.NOT_LOWERED:
        assert prims[name] not in lower_elementwise.scalar_rules, f"{name} is lowered now"
    try:
        from absjit.backends.xla import rules, rules_arrays  # noqa: F401
    except ImportError:  # the xla extra is not installed
        return
    for name in rules.NOT_LOWERED:
        assert name in prims and name not in rules.xla_rules, f"{name} has an XLA rule now"
    for name in rules.xla_rules:
        assert name in prims, f"XLA rule for {name}, which absjit does not define"
