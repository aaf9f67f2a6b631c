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


# Params for rendering the spellings that need them (test_cuda_spellings_resolve).
_SPELLING_PARAMS = {"integer_pow": {"y": 3}, "round": {"rounding_method": 0},
                    "convert_element_type": {"new_dtype": "float32", "weak_type": False},
                    "threefry2x32": {"output": "x0"}}


def _cuda_kernel_names(monkeypatch) -> set:
    """The names a generated CUDA kernel's module defines (its namespace, built as under
    the simulator: no GPU or CUDA import needed)."""
    import types

    from absjit.backends.numba_cuda import runtime
    monkeypatch.setattr(runtime, "simulator", lambda: True)
    stub = types.SimpleNamespace(jit=lambda *args, **flags: (lambda fn: fn))
    monkeypatch.setattr(runtime, "cuda_module", lambda: stub)
    runtime.kernel_namespace.cache_clear()
    try:
        return set(runtime.kernel_namespace())
    finally:
        runtime.kernel_namespace.cache_clear()


def test_cuda_spellings_resolve(monkeypatch):
    """The cuda backend spells elementwise primitives with the shared table and its own
    overrides (:mod:`absjit.backends.numba_cuda.device_rules`): every helper a spelling
    calls must be a name of the kernel namespace (a cpu-only helper would fail only when
    a GPU compiles the kernel)."""
    import re

    import numpy as np

    from absjit.backends.numba.render import _Aval
    from absjit.backends.numba_cuda.device_rules import device_scalar_rules
    known = _cuda_kernel_names(monkeypatch)
    rendered = 0
    for prim, rule in device_scalar_rules.items():
        if prim.name.startswith("half_"):
            continue  # 16-bit floats are widened before the cuda backend renders
        params = _SPELLING_PARAMS.get(prim.name, {})
        dtype = np.uint32 if prim.name == "threefry2x32" else np.float32
        for arity in (1, 2, 3, 4):
            try:
                text = rule(["x0", "x1", "x2", "x3"][:arity], [_Aval(dtype)] * arity,
                            _Aval(dtype), **params)
                break
            except (TypeError, IndexError, ValueError):
                continue
        else:
            raise AssertionError(f"{prim.name}: its spelling did not render")
        rendered += 1
        helpers = set(re.findall(r"\b_[A-Za-z]\w*", text))
        assert helpers <= known, f"{prim.name}: {sorted(helpers - known)} undefined on cuda"
    assert rendered > 60


@pytest.mark.parametrize("name,prim", PRIMS, ids=[n for n, _ in PRIMS])
def test_cuda_array_op_or_documented_host_run(name, prim):
    from absjit.backends.numba_cuda.array_ops import ON_HOST, array_ops
    if isinstance(fusion_kind(prim), Opaque):
        assert prim in array_ops or name in ON_HOST, \
            f"{name}: no cuda array op and no reason to run it on the host"


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
    from absjit.backends.numba_cuda.array_ops import ON_HOST, array_ops
    for name in ON_HOST:
        assert prims[name] not in array_ops, f"{name} has a cuda array op now"
    try:
        from absjit.backends.xla import rules, rules_arrays  # noqa: F401
    except ImportError:  # the xla extra is not installed
        return
    for name in rules.NOT_LOWERED:
        assert name in prims and name not in rules.xla_rules, f"{name} has an XLA rule now"
    for name in rules.xla_rules:
        assert name in prims, f"XLA rule for {name}, which absjit does not define"
