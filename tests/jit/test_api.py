"""jit's API: decorator forms, static arguments and their reconciliation with the
signature, levels, pytrees, dtypes, methods, pickling, lower/trace/compile."""
from __future__ import annotations

import collections
import functools
import pickle
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import absjit
import absjit.numpy as jnp
from absjit import tree_util
from absjit.core.levels import ShapedLevel
from tests.checks import assert_close, check_against_numpy, jax

BACKENDS = absjit.backends()


@absjit.jit
def module_level_double(x):
    """Doubles x."""
    return x * 2


def test_backends_lists_interpret_and_is_a_package():
    assert "interpret" in absjit.backends()
    assert absjit.backends.base.get_backend("interpret").name == "interpret"


# -- decorator forms ---------------------------------------------------------------
def test_decorator_forms_agree():
    def g(x, n):
        return x * n

    a = absjit.jit(g, static_argnames=["n"])
    b = partial(absjit.jit, static_argnames=["n"])(g)
    c = absjit.jit(static_argnames="n")(g)
    x = jnp.arange(3.0)
    for f in (a, b, c):
        assert_close(f(x, 3), np.arange(3.0, dtype=np.float32) * 3)


def test_wraps_and_repr_metadata():
    assert module_level_double.__name__ == "module_level_double"
    assert module_level_double.__doc__ == "Doubles x."
    assert module_level_double.__wrapped__(3) == 6


def test_pickle_by_reference():
    f = pickle.loads(pickle.dumps(module_level_double))
    assert f is module_level_double


def test_non_callable_is_a_type_error():
    with pytest.raises(TypeError, match="callable"):
        absjit.jit(3)


# -- static arguments ----------------------------------------------------------------
def test_keyword_and_positional_calls_share_one_entry():
    @partial(absjit.jit, static_argnames=["n"])
    def f(x, n):
        return x + n

    x = jnp.ones(3)
    f(x, 2)
    f(x, n=2)
    f(x=x, n=2)
    assert f._cache_size() == 1
    f(x, 3)
    assert f._cache_size() == 2


@pytest.mark.parametrize("spec", [dict(static_argnums=1), dict(static_argnames="n"),
                                  dict(static_argnums=-1), dict(abstraction={"n": "static"})])
def test_static_spec_forms_are_equivalent(spec):
    traces = []

    def f(x, n):
        traces.append(n)
        if n > 0:  # a Python branch on the static value
            return x * n
        return x

    g = absjit.jit(f, **spec)
    x = jnp.arange(3.0)
    assert_close(g(x, 2), np.arange(3.0, dtype=np.float32) * 2)
    assert_close(g(x, n=2), np.arange(3.0, dtype=np.float32) * 2)
    assert_close(g(x, -1), np.arange(3.0, dtype=np.float32))
    assert traces == [2, -1]


def test_defaults_are_honoured():
    @partial(absjit.jit, static_argnames=["n"])
    def f(x, n=3, scale=2.0):
        return x * n * scale

    assert_close(f(jnp.ones(2)), np.full(2, 6.0, np.float32))
    assert_close(f(jnp.ones(2), scale=1.0), np.full(2, 3.0, np.float32))
    assert_close(f(jnp.ones(2), 1), np.full(2, 2.0, np.float32))


def test_static_values_compare_by_value_and_type():
    calls = []

    @partial(absjit.jit, static_argnums=1)
    def f(x, n):
        calls.append(n)
        return x

    x = jnp.ones(2)
    f(x, 1)
    f(x, 1)
    f(x, 1.0)  # equal but of another type: a new entry, as its code may differ
    f(x, (1, 2))
    f(x, (1, 2))
    assert calls == [1, 1.0, (1, 2)]


def test_keyword_only_and_varargs():
    @partial(absjit.jit, static_argnames=["mode"])
    def f(*xs, mode):
        return sum(xs) if mode == "sum" else xs[0]

    assert_close(f(1.0, 2.0, 3.0, mode="sum"), np.float32(6.0))
    assert_close(f(1.0, 2.0, mode="first"), np.float32(1.0))


def test_varargs_with_negative_static_argnum():
    @partial(absjit.jit, static_argnums=-1)
    def f(*args):
        return args[0] * args[-1]

    assert_close(f(jnp.ones(2), 3), np.full(2, 3.0, np.float32))
    assert_close(f(jnp.ones(2), jnp.ones(2), 4), np.full(2, 4.0, np.float32))


# -- methods ---------------------------------------------------------------------------
class Scaler:
    def __init__(self, k):
        self.k = k

    def __hash__(self):
        return hash(self.k)

    def __eq__(self, other):
        return isinstance(other, Scaler) and other.k == self.k

    @partial(absjit.jit, static_argnums=0)
    def apply(self, x):
        return x * self.k

    def plain(self, x):
        return x + self.k


def test_methods():
    s = Scaler(3.0)
    assert_close(s.apply(jnp.ones(2)), np.full(2, 3.0, np.float32))
    assert_close(Scaler(3.0).apply(jnp.ones(2)), np.full(2, 3.0, np.float32))
    assert Scaler.apply._cache_size() == 1
    assert_close(absjit.jit(s.plain)(jnp.ones(2)), np.full(2, 4.0, np.float32))


# -- levels ----------------------------------------------------------------------------
def test_concrete_level_allows_branching_and_keys_by_value():
    traces = []

    @partial(absjit.jit, abstraction={"n": "concrete"})
    def f(x, n):
        traces.append(1)
        return x * 2 if n > 0 else x * 3

    x = jnp.ones(2)
    assert_close(f(x, 1), np.full(2, 2.0, np.float32))
    assert_close(f(x, 1), np.full(2, 2.0, np.float32))
    assert_close(f(x, -1), np.full(2, 3.0, np.float32))
    assert len(traces) == 2


def test_concrete_level_for_every_argument():
    f = absjit.jit(lambda x: x if x > 0 else -x, abstraction="concrete")
    assert_close(f(-2.0), np.float32(2.0))
    assert_close(f(jnp.float32(3.0)), np.float32(3.0))


def test_user_level_class():
    class RoundUpLevel(ShapedLevel):
        """Keys every vector by length rounded up to a multiple of 4 (the trace still
        sees the true shape here: only the key is coarser)."""

    f = absjit.jit(lambda x: x + 1, abstraction=RoundUpLevel)
    assert_close(f(jnp.ones(3)), np.full(3, 2.0, np.float32))


def test_conflicting_static_and_abstraction():
    with pytest.raises(ValueError, match="'n'.*static.*level 'concrete'"):
        absjit.jit(lambda x, n: x, static_argnames=["n"], abstraction={"n": "concrete"})


def test_unknown_level_and_unknown_name_in_abstraction():
    with pytest.raises(ValueError, match="unknown abstraction level 'blurry'"):
        absjit.jit(lambda x: x, abstraction="blurry")
    with pytest.raises(ValueError, match="'y'"):
        absjit.jit(lambda x: x, abstraction={"y": "concrete"})


# -- pytrees, leaves and dtypes ---------------------------------------------------------
Point = collections.namedtuple("Point", ["x", "y"])


@tree_util.register_pytree_node_class
class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pytrees_in_and_out(backend):
    @partial(absjit.jit, backend=backend)
    def f(tree):
        a, (b, c), d = tree["a"], tree["bc"], tree["p"]
        return {"sum": a + b, "pair": [c, None], "p": Point(d.y, d.x),
                "box": Box(tree["box"].value * 2, tree["box"].label)}

    tree = {"a": jnp.ones(2), "bc": (np.arange(2.0), 3), "p": Point(1.0, 2),
            "box": Box(jnp.arange(3), "lbl")}
    out = f(tree)
    assert_close(out["sum"], np.array([1.0, 2.0], np.float32))
    assert out["pair"][1] is None and out["pair"][0].dtype == np.int32
    assert isinstance(out["p"], Point) and out["p"].x.dtype == np.int32
    assert out["box"].label == "lbl"
    assert_close(out["box"].value, np.arange(3, dtype=np.int32) * 2)
    f(tree)
    assert f._cache_size() == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_leaf_kinds_and_weak_types(backend):
    f = absjit.jit(lambda x: x * 2, backend=backend)
    r = f(2.0)
    assert r.dtype == np.float32 and r.weak_type
    r = f(np.float32(2.0))
    assert r.dtype == np.float32 and not r.weak_type
    r = f(np.arange(3.0))  # float64 becomes float32 without x64
    assert r.dtype == np.float32 and not r.weak_type
    r = f(True)
    assert r.dtype == np.int32 if jax is None else r.dtype == jax.jit(lambda x: x * 2)(True).dtype
    if jax is not None:
        for arg in (2.0, 2, np.float32(2.0), np.arange(3.0)):
            want = jax.jit(lambda x: x * 2)(arg)
            got = f(arg)
            assert got.dtype == want.dtype and got.weak_type == want.weak_type


def test_x64_is_part_of_the_key():
    f = absjit.jit(lambda x: x + 1)
    assert f(np.arange(3.0)).dtype == np.float32
    absjit.config.update("enable_x64", True)
    assert f(np.arange(3.0)).dtype == np.float64
    absjit.config.update("enable_x64", False)
    assert f(np.arange(3.0)).dtype == np.float32
    assert f._cache_size() == 2


def test_writable_numpy_input_is_not_frozen_or_aliased():
    f = absjit.jit(lambda x: x)
    a = np.ones(3, np.float32)
    for _ in range(3):  # the general path, then the fast path (lazy, then generated)
        r = f(a)
        assert a.flags.writeable
        a[0] = 5.0
        assert float(r[0]) == 1.0
        a[0] = 1.0


def test_function_returning_none_and_constants():
    assert absjit.jit(lambda x: None)(1.0) is None
    r = absjit.jit(lambda: 3.0)()
    assert float(r) == 3.0 and r.weak_type
    g = np.arange(4.0)
    r = absjit.jit(lambda x: x + g)(1.0)  # a closed-over constant array
    assert_close(r, np.arange(4.0, dtype=np.float32) + 1)


# Every new shape/dtype is a compile: few examples keep the compiling backends fast.
@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=6)
@given(shape=st.lists(st.integers(0, 4), max_size=3),
       dtype=st.sampled_from([np.float32, np.int32, np.bool_, np.int8]))
def test_matches_numpy(backend, shape, dtype):
    x = (np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 3).astype(dtype)

    def fn(x, y):
        return jnp.maximum(x, y) * 2, x + 1

    def np_fn(x, y):
        return np.maximum(x, y) * 2, x + 1

    check_against_numpy(fn, np_fn, x, x, transform=partial(absjit.jit, backend=backend),
                        jax_fn=jax.jit(lambda a, b: (jax.numpy.maximum(a, b) * 2, a + 1))
                        if jax is not None else None)


# -- lower / trace / compile -------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_lower_and_compile(backend):
    f = absjit.jit(lambda x, y: jnp.log(x) * y, backend=backend)
    lowered = f.lower(jnp.ones(3), np.float32(2.0))
    assert lowered.as_text() == ("{ lambda ; a:f32[3] b:f32[]. let c:f32[3] = log a; "
                                 "d:f32[3] = mul c b in (d,) }")
    assert [a.str_short() for a in lowered.in_avals] == ["f32[3]", "f32[]"]
    assert [a.str_short() for a in lowered.out_avals] == ["f32[3]"]
    compiled = lowered.compile()
    assert isinstance(compiled.as_text(), str) and compiled.as_text()
    assert_close(compiled(jnp.ones(3), np.float32(2.0)), np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="lowered for"):
        compiled(jnp.ones(4), np.float32(2.0))
    assert f._cache_size() == 0  # lowering does not add entries


def test_trace_gives_the_jaxpr():
    traced = absjit.jit(lambda x: x + 1).trace(1.0)
    assert str(traced.jaxpr) == "{ lambda ; a:f32[]. let b:f32[] = add a 1.0 in (b,) }"
    assert traced.lower().compile()(2.0) == 3.0


def test_block_until_ready_and_device_put():
    tree = {"a": jnp.ones(2), "b": [1.0]}
    assert absjit.block_until_ready(tree) is tree
    put = absjit.device_put({"x": np.arange(3.0), "s": 1.0})
    assert isinstance(put["x"], absjit.Array) and put["x"].dtype == np.float32
    assert put["s"].weak_type
    a = np.arange(3.0, dtype=np.float32)
    p = absjit.device_put(a)
    a[0] = 7
    assert float(p[0]) == 0.0
    with pytest.raises(ValueError, match="device"):
        absjit.device_put(1.0, device="tpu:0")


def test_jit_in_a_loop_reuses_one_entry_cache():
    def body(i):
        return i + 1

    sizes = set()
    for _ in range(3):
        g = absjit.jit(body)
        g(1)
        sizes.add(id(g._entry_cache))
    assert len(sizes) == 1
    assert absjit.jit(body)._cache_size() == 1


@pytest.mark.parametrize("scalar", [np.float32(1.5), np.float64(-2.25), np.int8(-3),
                                    np.uint16(7), np.bool_(True), np.complex64(1 - 2j)])
def test_numpy_scalars_take_the_fast_path_with_the_slow_paths_result(scalar):
    f = absjit.jit(lambda v: v * 2 + 1)
    slow = absjit.jit(lambda v: v * 2 + 1, backend="interpret")
    first, again = f(scalar), f(scalar)
    assert f._cache_size() == 1 and f.cache_info().hits >= 1
    key = [k for k in f._entry_cache.fast if type(scalar) in k]
    assert key, "a NumPy scalar argument has a fast-table entry"
    for got in (first, again):
        ref = slow(scalar)
        assert got.dtype == ref.dtype and got.weak_type == ref.weak_type
        assert_close(got, np.asarray(ref))
    f(type(scalar)(0))  # another value of the same type: the same entry
    assert f._cache_size() == 1


def test_functools_partial_and_callable_objects():
    class Mul:
        def __call__(self, x, k):
            return x * k

    f = absjit.jit(functools.partial(Mul(), k=3.0))
    assert_close(f(jnp.ones(2)), np.full(2, 3.0, np.float32))


def test_all_static_abstraction():
    calls = []

    def f(n, scale=2):
        calls.append(n)
        return jnp.arange(n) * scale

    g = absjit.jit(f, abstraction="static")
    assert np.asarray(g(3)).tolist() == [0, 2, 4]
    assert np.asarray(g(3, scale=3)).tolist() == [0, 3, 6]
    g(3)
    assert calls == [3, 3]


def test_callable_without_weakref_gets_a_private_cache():
    class Slotted:
        __slots__ = ()

        def __call__(self, x):
            return x * 2

    f = absjit.jit(Slotted())
    assert float(f(2.0)) == 4.0
    assert float(f(3.0)) == 6.0 and f._cache_size() == 1


def test_python_int_out_of_range_is_an_overflow_error():
    f = absjit.jit(lambda x: x + 1)
    assert int(f(1)) == 2
    for _ in range(2):  # the general path, then the fast path
        with pytest.raises(OverflowError):
            f(2 ** 40)


def test_tracer_attributes_never_hide_array_methods():
    """A tracer's own attributes are private names: ``x.var(0)`` under ``jit`` is the
    array method (a tracer once stored its jaxpr variable as ``var``)."""
    import absjit.interpreters  # noqa: F401 - every tracer class is defined
    from absjit.core.trace import Tracer

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    public = {n for n in dir(absjit.Array) if not n.startswith("_")}
    for cls in subclasses(Tracer):
        for name in getattr(cls, "__slots__", ()):
            assert name.startswith("_") or name not in public, (cls, name)
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    assert_close(absjit.jit(lambda a: a.var(0) + a.std(1).sum())(x),
                 x.var(0) + x.std(1).sum(), rtol=1e-6)
    assert_close(absjit.vmap(lambda a: a.var())(x), x.var(1), rtol=1e-6)
