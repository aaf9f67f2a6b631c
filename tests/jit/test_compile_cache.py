"""The process-wide compile cache: equal programs compile once, different ones don't
collide, uncacheable params, concurrency."""
from __future__ import annotations

import threading
from functools import partial

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit import lax
from absjit.backends import get_backend
from absjit.backends.base import CompileOptions
from absjit.core.avals import ShapedArray
from absjit.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from absjit.core.primitive import Primitive, abstract_eval_rules, impl_rules
from absjit.jit import compile_cache

BACKENDS = absjit.backends()


def _compiles():
    return compile_cache.stats()["compiles"]


def unjitted_loop_body(prev_i):
    return prev_i + 1


@pytest.mark.parametrize("make", [lambda: (lambda x: unjitted_loop_body(x)),
                                  lambda: partial(unjitted_loop_body)],
                         ids=["lambda", "partial"])
def test_fresh_wrappers_in_a_loop_compile_once(make):
    traces = []

    def body(x):
        traces.append(1)
        return unjitted_loop_body(x)

    absjit.clear_caches()
    i = 0
    for _ in range(20):
        fresh = make()
        i = absjit.jit(lambda x, fresh=fresh: body(x))(i)
    assert int(i) == 20
    assert len(traces) == 20  # every fresh function traces ...
    assert _compiles() == 1  # ... but compiles once (an int and a weak i32 Array agree)


def test_closures_over_different_constants_share_code():
    absjit.clear_caches()
    outs = []
    for k in range(3):
        c = np.full(4, float(k), np.float32)
        outs.append(np.asarray(absjit.jit(lambda x: x + c)(jnp.ones(4))))
    assert [o.tolist() for o in outs] == [[1.0] * 4, [2.0] * 4, [3.0] * 4]
    assert _compiles() == 1


def test_literal_values_and_dtypes_are_in_the_key():
    backend = get_backend("interpret")
    opts = CompileOptions()
    j1 = absjit.make_jaxpr(lambda x: x + 1.0)(1.0)
    j2 = absjit.make_jaxpr(lambda x: x + 2.0)(1.0)
    assert compile_cache.cache_key(j1, backend, opts) != compile_cache.cache_key(j2, backend, opts)
    i16 = absjit.make_jaxpr(lambda: lax.convert_element_type(np.int16(1), np.float32))()
    i8 = absjit.make_jaxpr(lambda: lax.convert_element_type(np.int8(1), np.float32))()
    assert str(i16) == str(i8)  # the printed text alone would collide
    assert compile_cache.cache_key(i16, backend, opts) != compile_cache.cache_key(i8, backend, opts)
    again = absjit.make_jaxpr(lambda x: x + 1.0)(3.0)
    assert compile_cache.cache_key(j1, backend, opts) == compile_cache.cache_key(again, backend, opts)


def test_options_and_backend_are_in_the_key():
    j = absjit.make_jaxpr(lambda x: x + 1.0)(1.0)
    backend = get_backend("interpret")
    assert compile_cache.cache_key(j, backend, CompileOptions()) != \
        compile_cache.cache_key(j, backend, CompileOptions(fastmath=True))
    if "cpu" in BACKENDS:
        assert compile_cache.cache_key(j, backend, CompileOptions()) != \
            compile_cache.cache_key(j, get_backend("cpu"), CompileOptions())


_apply_p = Primitive("test_apply_callable")
abstract_eval_rules[_apply_p] = lambda x, fn: [x]
impl_rules[_apply_p] = lambda x, fn: [fn(x)]


def _callable_jaxpr(fn):
    a = Var(ShapedArray((), np.float32))
    b = Var(ShapedArray((), np.float32))
    return ClosedJaxpr(Jaxpr((), (a,), (JaxprEqn(_apply_p, (a,), (b,), {"fn": fn}),), (b,)), [])


def test_callable_params_are_uncacheable():
    backend = get_backend("interpret")
    double, triple = _callable_jaxpr(lambda v: v * 2), _callable_jaxpr(lambda v: v * 3)
    assert str(double) == str(triple)
    assert compile_cache.cache_key(double, backend, CompileOptions()) is None
    before = compile_cache.stats()
    e2 = compile_cache.compile(double, backend, CompileOptions())
    e3 = compile_cache.compile(triple, backend, CompileOptions())
    x = np.float32(2.0)
    assert float(e2(x)[0]) == 4.0 and float(e3(x)[0]) == 6.0
    after = compile_cache.stats()
    assert after["uncacheable"] - before["uncacheable"] == 2


def test_concurrent_compiles_of_one_key_compile_once():
    calls = []

    class SlowBackend(type(get_backend("interpret"))):
        name = "slow-test"

        def compile(self, closed, options=None):
            calls.append(1)
            threading.Event().wait(0.05)
            return super().compile(closed, options)

    backend = SlowBackend()
    j = absjit.make_jaxpr(lambda x: x * 7.0)(1.0)
    exes = []
    threads = [threading.Thread(target=lambda: exes.append(
        compile_cache.compile(j, backend, CompileOptions()))) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(exes) == 5 and all(e is exes[0] for e in exes)


def test_failed_compile_caches_nothing():
    class FailingBackend(type(get_backend("interpret"))):
        name = "failing-test"
        fail = True

        def compile(self, closed, options=None):
            if self.fail:
                raise RuntimeError("no")
            return super().compile(closed, options)

    backend = FailingBackend()
    j = absjit.make_jaxpr(lambda x: x * 9.0)(1.0)
    with pytest.raises(RuntimeError):
        compile_cache.compile(j, backend, CompileOptions())
    backend.fail = False
    assert float(compile_cache.compile(j, backend, CompileOptions())(np.float32(1.0))[0]) == 9.0
