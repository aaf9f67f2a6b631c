"""Jitted functions and Arrays pickle: by reference when importable, by value (with
cloudpickle) otherwise, and compile lazily where they are loaded."""
import copy
import os
import pickle
import subprocess
import sys
import textwrap

import cloudpickle
import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from absjit.jit.pickling import JitFunction, received

from . import _kernels

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_python(code: str, stdin: bytes = b"") -> bytes:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], input=stdin, env=env, cwd=ROOT,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def test_module_level_jitted_pickles_by_reference():
    for dumps in (pickle.dumps, cloudpickle.dumps):
        data = dumps(_kernels.doubled)
        assert len(data) < 200  # a name, not code
        assert pickle.loads(data) is _kernels.doubled
    assert isinstance(_kernels.doubled, JitFunction)


def test_closure_pickles_by_value_and_compiles_lazily():
    f = absjit.jit(_kernels.make_scaled(3.0), abstraction="ranked")
    f(np.ones(2, np.float32))
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(f)  # plain pickle cannot carry a closure's code
    data = cloudpickle.dumps(f)
    g = pickle.loads(data)
    assert g is not f and g._cache_size() == 0  # nothing compiled travels
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(g(x)), x * 3)
    np.testing.assert_array_equal(np.asarray(g(np.arange(7, dtype=np.float32))),
                                  np.arange(7, dtype=np.float32) * 3)
    assert g._cache_size() == 1  # ranked: one entry for both sizes
    # One process loading the same wrapper again (one pickle per task) gets the one
    # it rebuilt, entries and all.
    assert pickle.loads(data) is g and g in received()


def test_lambda_at_module_level_and_options_survive():
    g = pickle.loads(cloudpickle.dumps(_kernels.doubled_ranked))
    assert g._jit_options["abstraction"] == "ranked"
    for n in (3, 9):
        np.testing.assert_array_equal(np.asarray(g(np.ones(n, np.float32))),
                                      np.full(n, 3, np.float32))
    assert g._cache_size() == 1


def test_static_arguments_survive_pickling():
    def power(x, n):
        return x ** n
    f = absjit.jit(power, static_argnames=["n"])
    g = pickle.loads(cloudpickle.dumps(f))
    np.testing.assert_allclose(np.asarray(g(jnp.arange(4.0), 3)), np.arange(4.0) ** 3)


def test_jitted_function_on_a_class_binds_self_and_copies_are_itself():
    class Scale:
        factor = 4.0
        apply = absjit.jit(lambda self, x: x * self.factor, static_argnums=0)

        def __hash__(self):
            return 0

        def __eq__(self, other):
            return isinstance(other, Scale)

    np.testing.assert_array_equal(np.asarray(Scale().apply(jnp.ones(2))), [4.0, 4.0])
    assert copy.copy(_kernels.doubled) is _kernels.doubled
    assert copy.deepcopy(_kernels.doubled) is _kernels.doubled
    assert "doubled" in repr(_kernels.doubled)


def test_arrays_pickle_as_data():
    x = jnp.arange(6.0).reshape(2, 3)
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is absjit.Array and y.dtype == x.dtype and y.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    assert b"absjit.array" in pickle.dumps(x) and len(pickle.dumps(x)) < 400


def test_round_trip_through_a_fresh_process():
    """A closure (by value), a module-level function (by reference) and an Array,
    pickled here and run in a plain new Python process."""
    payload = cloudpickle.dumps((absjit.jit(_kernels.make_scaled(2.5),
                                            abstraction="ranked"),
                                 _kernels.doubled, jnp.arange(4.0)))
    out = _run_python(textwrap.dedent("""
        import pickle, sys
        import numpy as np
        scaled, doubled, x = pickle.loads(sys.stdin.buffer.read())
        a = np.asarray(scaled(x)); b = np.asarray(scaled(np.ones(9, np.float32)))
        c = np.asarray(doubled(x))
        sys.stdout.buffer.write(pickle.dumps((a, b, c, scaled._cache_size(),
                                              type(x).__name__)))
    """), stdin=payload)
    a, b, c, entries, x_type = pickle.loads(out)
    np.testing.assert_array_equal(a, np.arange(4.0, dtype=np.float32) * 2.5)
    np.testing.assert_array_equal(b, np.full(9, 2.5, np.float32))
    np.testing.assert_array_equal(c, np.arange(4.0, dtype=np.float32) * 2)
    assert entries == 1 and x_type == "Array"


def test_function_of_main_pickles_by_value_with_cloudpickle():
    """A script's ``@jit`` function (module ``__main__``) travels by value, as Dask
    sends it, and runs in a process that does not have it."""
    data = _run_python(textwrap.dedent("""
        import sys, pickle, cloudpickle
        import absjit, absjit.numpy as jnp
        @absjit.jit
        def cube(x):
            return x * x * x
        assert pickle.loads(pickle.dumps(cube)) is cube  # plain pickle: by name
        sys.stdout.buffer.write(cloudpickle.dumps(cube))
    """))
    out = _run_python(textwrap.dedent("""
        import sys, pickle
        import numpy as np
        cube = pickle.loads(sys.stdin.buffer.read())
        sys.stdout.write(repr(np.asarray(cube(np.arange(4.0))).tolist()))
    """), stdin=data)
    assert out.decode() == repr([0.0, 1.0, 8.0, 27.0])
