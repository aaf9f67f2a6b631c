"""The ``ranked`` level while tracing: symbolic dims, unification, printing, errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import absjit
import absjit.numpy as jnp
from absjit.core import Dim, RankedArray, dim_max
from absjit.core.dim_env import DimEnv
from absjit.core.dims import evaluate, unify
from absjit.errors import ConcretizationTypeError, InconclusiveDimensionError


def ranked_jaxpr(f, *args):
    return absjit.make_jaxpr(f, abstraction="ranked")(*args)


# -- the aval and the level -----------------------------------------------------------
def test_ranked_aval_is_the_cache_key_of_every_size():
    lvl = absjit.get_level("ranked")
    a = lvl.abstractify(np.ones((5, 3), np.float32))
    b = lvl.abstractify(np.ones((700, 2), np.float32))
    assert a == b and hash(a) == hash(b)
    assert a == RankedArray(2, np.float32)
    assert str(a.str_short()) == "f32[?,?]"
    unit = lvl.abstractify(np.ones((5, 1), np.float32))
    assert unit != a and unit.unit_dims == (1,) and unit.str_short() == "f32[?,1]"
    assert lvl.abstractify(np.ones(5, np.float32)) != a  # another rank
    assert lvl.abstractify(2.0).weak_type


def test_dims_are_named_after_argument_and_axis_and_shown_in_reprs():
    seen = []

    def f(x, y):
        seen.append((x.shape, repr(x), repr(x + y)))
        return x * 2.0

    absjit.jit(f, abstraction="ranked")(np.ones((4, 3), np.float32), np.ones(3, np.float32))
    shape, rx, rsum = seen[0]
    assert [str(d) for d in shape] == ["x0", "x1"]
    assert all(isinstance(d, Dim) for d in shape)
    assert rx == "Traced<RankedArray(float32[x0,x1])>with<DynamicJaxprTrace(level=0/1)>"
    assert rsum.startswith("Traced<RankedArray(float32[x0,x1])>")


def test_make_jaxpr_prints_dims_by_name():
    text = str(ranked_jaxpr(lambda x, y: (x + y).sum(0), np.ones((4, 3), np.float32),
                            np.ones((4, 3), np.float32)))
    assert text == ("{ lambda ; a:f32[x0,x1] b:f32[x0,x1]. let\n"
                    "    c:f32[x0,x1] = add a b\n"
                    "    d:f32[x1] = reduce_sum[axes=(0,)] c\n"
                    "  in (d,) }")


def test_unit_dims_are_known_and_broadcast_at_trace_time():
    text = str(ranked_jaxpr(lambda x, r: x + r, np.ones((4, 3), np.float32),
                            np.ones((1, 3), np.float32)))
    # (the broadcast's shape is its binder's type, as JAX prints it)
    assert "b:f32[1,x1]" in text and "c:f32[x0,x1] = broadcast_in_dim[" in text


def test_shaped_and_ranked_arguments_mix():
    text = str(absjit.make_jaxpr(lambda x, w: x @ w, abstraction={"x": "ranked"})(
        np.ones((4, 3), np.float32), np.ones((3, 2), np.float32)))
    assert "a:f32[x0,3]" in text and "b:f32[3,2]" in text and ":f32[x0,2]" in text


def test_the_jaxpr_records_one_size_for_unified_dims():
    jaxpr = ranked_jaxpr(lambda x, y: jnp.dot(x, y), np.ones((4, 3), np.float32),
                         np.ones(3, np.float32))
    assert "b:f32[x1]" in str(jaxpr)  # y.shape[0] unified with x.shape[1]


# -- arithmetic on dims ---------------------------------------------------------------
def test_dim_arithmetic_simplifies():
    env = DimEnv()
    n, m = env.atom("x", 0), env.atom("x", 1)
    assert str(n * 3 + 1) == "3*x0 + 1"
    assert (n * 3) // 3 == n and (n * m) // m == n and (n * 4) % 2 == 0
    assert n - n == 0 and isinstance(n - n, int)
    assert str(n // 2) == "floordiv(x0, 2)" and str(n % 2) == "x0 - 2*floordiv(x0, 2)"
    assert dim_max(n, 0) is n and dim_max(n + 2, n) == n + 2
    assert str(dim_max(n, 3)) == "max(x0, 3)"
    assert n >= 0 and not n < 0 and n != 1 and n != -1
    assert evaluate(n * m - 2 * n + dim_max(m, 10), {"x0": 5, "x1": 7}) == 35 - 10 + 10


@given(st.integers(0, 40), st.integers(0, 40), st.integers(1, 5), st.integers(-5, 5))
def test_dim_expressions_evaluate_like_ints(a, b, k, c):
    env = DimEnv()
    n, m = env.atom("a", 0), env.atom("b", 0)
    sizes = {"a0": a, "b0": b}
    for expr, want in [(n + m * c, a + b * c), (n * m - c, a * b - c), ((n + c) // k,
                       (a + c) // k), (n % k, a % k), (dim_max(n, m + c), max(a, b + c)),
                       (c - n, c - a), (k * n // k, a)]:
        assert evaluate(expr, sizes) == want


@given(st.integers(1, 40), st.integers(1, 40), st.integers(-50, 50))
def test_dim_expressions_as_generated_source_evaluate_like_ints(a, b, c):
    # the cpu backend writes sizes as source: a quotient by a product of sizes must
    # keep its brackets (``c // (a0*b0)``, not ``c // a0 * b0``)
    env = DimEnv()
    n, m = env.atom("a", 0), env.atom("b", 0)
    sizes = {"a0": a, "b0": b}
    names = {"_n_a0": a, "_n_b0": b}
    for expr in [c // (n * m), (n + c) // (2 * m), (c - n) // (n * m), (n * m) // (m + 1),
                 c % (n * m), dim_max(c // (n * m), n) // (m * 2), -(c // (n + m))]:
        if isinstance(expr, Dim):
            assert eval(expr.code(), {}, names) == evaluate(expr, sizes), expr.code()


def test_bounds_of_quotients_are_sound():
    # ceil(x0 / 2) as a strided slice writes it: -floordiv(1 - 2*floordiv(x0 + 1, 2), 2).
    # It is at least 0, but nothing bounds it above: ``<= 0`` and ``< 5`` were answered
    # True (a quotient of something negative was taken to be at least 0)
    env = DimEnv()
    n = env.atom("x", 0)
    e = -((1 - 2 * ((n + 1) // 2)) // 2)
    assert e >= 0
    for compare in (lambda: e > 0, lambda: e <= 0, lambda: e < 5):
        with pytest.raises(InconclusiveDimensionError):
            compare()


@pytest.mark.parametrize("fn, args", [
    (lambda x: jnp.broadcast_to(x[::2][::2], (3, 3)), (np.ones(9, np.float32),)),
    (lambda x, y: jnp.where(x[::2] > 0, x[::2], y[::2]),
     (np.ones(5, np.float32), np.ones(5, np.float32))),
    (lambda x: x.reshape(-1) + jnp.ones(12), (np.ones((3, 4), np.float32),)),
])
def test_sizes_with_many_answers_are_inconclusive(fn, args):
    # ceil(x0 / 2) == 3, ceil(x0 / 2) == ceil(y0 / 2), x0 * x1 == 12: no single size
    # follows, so the trace cannot assume one (the shaped level decides per shape)
    with pytest.raises(InconclusiveDimensionError):
        absjit.jit(fn, abstraction="ranked")(*args)
    absjit.jit(fn)(*args)


def test_unification_is_recorded_and_only_where_an_operation_requires_it():
    env = DimEnv()
    n, m = env.atom("x", 0), env.atom("y", 0)
    assert not n == m  # a plain comparison never assumes
    assert unify(n, m) and n == m and str(m) == "x0" and hash(n) == hash(m)
    assert [(str(a), str(b)) for a, b in env.equalities] == [("x0", "y0")]
    env.close()
    k = env.atom("z", 0)
    assert not unify(n, k)  # a closed trace assumes nothing more


# -- what Python may not do -------------------------------------------------------------
@pytest.mark.parametrize("body", [
    lambda x: x * len(range(x.shape[0])),
    lambda x: x * 2 if x.shape[0] > 3 else x,
    lambda x: x * int(x.shape[1]),
    lambda x: x * [1.0, 2.0][x.shape[0]],  # a list index needs the number
])
def test_python_needing_a_size_raises_naming_argument_axis_and_fix(body):
    with pytest.raises(InconclusiveDimensionError) as info:
        absjit.jit(body, abstraction="ranked")(np.ones((4, 5), np.float32))
    msg = str(info.value)
    assert "x.shape[" in msg and "'shaped'" in msg and "abstraction={'x': 'shaped'}" in msg
    assert isinstance(info.value, ConcretizationTypeError)


def test_shape_code_that_the_ranked_level_supports():
    def f(x, y):
        n, k = x.shape
        a = jnp.zeros((n, 3)) + x[:, :1]
        b = jnp.arange(n) * 1.0
        c = x.reshape(-1).reshape(n * k // k, k)
        d = x[1:, ::2].sum() + y[:-1].sum() / y.shape[0]
        return a, b, c, d

    jaxpr = ranked_jaxpr(f, np.ones((4, 3), np.float32), np.ones(4, np.float32))
    outs = [str(v.aval.str_short()) for v in jaxpr.jaxpr.outvars]
    assert outs == ["f32[x0,3]", "f32[x0]", "f32[x0,x1]", "f32[]"]
