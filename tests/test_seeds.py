"""The seed documents, run as the example scripts in ``examples/``: they print what the
seeds show (traced prints only on new entries, globals closed over at trace time,
static values recompiling, old entries kept, the error cells failing as the seeds say).
"""
from __future__ import annotations

import contextlib
import io
import os
import runpy

import pytest

import absjit

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples")
SHAPED = "Traced<ShapedArray({})>with<DynamicJaxprTrace(level={})>"


def run_example(name: str) -> list:
    """The script's printed lines. It runs on the interpret backend: what the seeds
    show is about tracing and caching, which every backend shares, and the reference
    backend keeps this file fast (the compiling backends have their own tests)."""
    out = io.StringIO()
    before = absjit.config.default_backend
    absjit.config.update("default_backend", "interpret")
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(os.path.join(EXAMPLES, name), run_name="__main__")
    finally:
        absjit.config.update("default_backend", before)
    return out.getvalue().splitlines()


@pytest.fixture(scope="module")
def seed000():
    return run_example("seed_000_jit.py")


@pytest.fixture(scope="module")
def seed002():
    return run_example("seed_002_tracer.py")


@pytest.fixture(scope="module")
def seed003():
    return run_example("seed_003_think.py")


@pytest.fixture(scope="module")
def seed004():
    return run_example("seed_004_jit.py")


LOG2 = ["{ lambda ; a:f32[]. let", "    b:f32[] = log a", "    c:f32[] = log 2.0",
        "    d:f32[] = div b c", "  in (d,) }"]


def test_seed000_jaxprs(seed000):
    assert seed000[:5] == LOG2
    assert seed000[5] == "printed x: " + SHAPED.format("float32[], weak_type=True", "1/0")
    assert seed000[6:11] == LOG2
    assert seed000[11] == "{ lambda ; a:i32[3]. let  in (a,) }"


def test_seed000_jit_cells(seed000):
    errors = [line for line in seed000 if line.startswith("TracerBoolConversionError")]
    assert errors == ["TracerBoolConversionError: Abstract tracer value encountered where "
                      "concrete value is expected: "
                      + SHAPED.format("bool[], weak_type=True", "0/1")] * 2
    i = seed000.index("Array(30, dtype=int32, weak_type=True)")
    assert seed000[i + 1:i + 4] == ["10", "30", "30"]
    for label in ("partials", "lambdas", "caching"):
        assert f"jit called in a loop with {label}:" in seed000


def test_seed002_dotproduct_entries(seed002):
    assert seed002.count("Inside dotproduct") == 2
    for n in (100, 50):
        i = seed002.index(f"x={SHAPED.format(f'float32[{n}]', '0/1')}")
        assert seed002[i + 1] == f"y={SHAPED.format(f'float32[{n}]', '0/1')}"
        assert seed002[i + 2] == f"z={SHAPED.format('float32[]', '0/1')}"
    # np.dot then the jitted result, for each of the four calls
    values = [line for line in seed002[:16] if not line.startswith(("Inside", "x=", "y=", "z="))]
    assert len(values) == 8
    for ref, got in zip(values[0::2], values[1::2]):
        assert got.startswith("Array(") and got.endswith(", dtype=float32)")
        assert abs(float(got[6:-16]) - float(ref)) < 1e-3 * abs(float(ref))


def test_seed002_globals_and_iterators(seed002):
    i = seed002.index("32")
    assert seed002[i:i + 5] == ["32", "1024", "Array(32, dtype=int32, weak_type=True)",
                                "Array(32, dtype=int32, weak_type=True)",
                                "Array([1024., 1024.], dtype=float32)"]
    i = seed002.index("<class 'TypeError'>")
    assert seed002[i - 1] == "Array(5., dtype=float32)"
    assert seed002[i + 1].startswith("Argument 'xs'")
    assert "of type <class 'list_iterator'> is not a valid absjit type" in seed002[i + 1]
    # fori_loop(0, 3, lambda i, a: a + next(it) ** 2, 0): the weakly typed int carry
    # makes the body be traced again, which consumes the iterator; JAX raises an
    # UnexpectedTracerError there, and so does absjit (not a silent Array(3.)).
    i = seed002.index("<class 'absjit.errors.UnexpectedTracerError'>")
    assert "gave a different program each time it was traced" in seed002[i + 1]
    assert "Array(3., dtype=float32)" not in seed002
    assert "Array(5., dtype=float32, weak_type=True)" in seed002
    assert "Array(30., dtype=float32, weak_type=True)" in seed002
    assert "{ lambda ; a:f32[]. let b:f32[] = max 0.0 a in (b,) }" in seed002


def test_seed002_control_flow_and_static_args(seed002):
    i = seed002.index("<class 'absjit.errors.TracerBoolConversionError'>")
    assert seed002[i + 1] == ("Abstract tracer value encountered where concrete value is "
                              "expected: " + SHAPED.format("bool[], weak_type=True", "0/1"))
    assert "depends on the value of the argument 'n'" in "\n".join(seed002[i:i + 5])
    tail = seed002[seed002.index("Array(37., dtype=float32, weak_type=True)"):]
    x = "x=" + SHAPED.format("float32[], weak_type=True", "0/1")
    assert tail == [
        "Array(37., dtype=float32, weak_type=True)",  # f(2., 5.) with the jitted g
        f"{x} n=5.0", "Array(37., dtype=float32, weak_type=True)",
        "Array(104., dtype=float32, weak_type=True)",
        f"{x} n=3.0", "Array(35., dtype=float32, weak_type=True)",
        f"{x} n=5.0", "Array(37., dtype=float32, weak_type=True)",
        "Array(104., dtype=float32, weak_type=True)",
        f"{x} n=4.0", "Array(36., dtype=float32, weak_type=True)"]


def test_seed003_jit_mechanics(seed003):
    assert seed003[0] == "True"  # np.allclose(norm(X), norm_compiled(X), atol=1E-6)
    neg = [line for line in seed003 if line.startswith("NonConcreteBooleanIndexError")]
    assert len(neg) == 1 and "Array boolean indices must be concrete" in neg[0]
    i = seed003.index("Running f():")
    assert seed003[i + 1:i + 4] == ["  x = " + SHAPED.format("float32[3,4]", "0/1"),
                                    "  y = " + SHAPED.format("float32[4]", "0/1"),
                                    "  result = " + SHAPED.format("float32[3]", "0/1")]
    assert seed003.count("Running f():") == 1
    assert "Array(-1, dtype=int32, weak_type=True)" in seed003
    assert "Array(1, dtype=int32, weak_type=True)" in seed003
    assert any(line.startswith("TracerIntegerConversionError") for line in seed003)
    i = seed003.index("x = " + SHAPED.format("float32[2,3]", "0/1"))
    assert seed003[i + 1:i + 3] == [
        "x.shape = (2, 3)",
        "jnp.array(x.shape).prod() = " + SHAPED.format("int32[]", "0/1")]
    assert seed003[-1] == "Array([1., 1., 1., 1., 1., 1.], dtype=float32)"


def test_seed004(seed004):
    assert seed004[0] == "Compile" and seed004[2] == "Compile"
    assert seed004.count("Compile") == 3  # two first calls, then make_jaxpr's trace
    i = seed004.index("{ lambda ; a:f32[100,2000]. let")
    assert seed004[i:i + 6] == [
        "{ lambda ; a:f32[100,2000]. let",
        "    b:f32[100,2000] = jit[",
        "      name=apply_activation",
        "      jaxpr={ lambda ; c:f32[100,2000]. let d:f32[100,2000] = max 0.0 c in (d,) }",
        "    ] a",
        "  in (b,) }"]
    i = seed004.index("Received:  " + SHAPED.format("int32[], weak_type=True", "1/1"))
    assert seed004[i + 1:i + 7] == [
        "{ lambda ; a:i32[]. let",
        "    b:i32[] = jit[",
        "      name=number_squared",
        "      jaxpr={ lambda ; c:i32[]. let d:i32[] = integer_pow[y=2] c in (d,) }",
        "    ] a",
        "  in (b,) }"]
    assert seed004[i + 7:i + 19] == [
        "Iteration:  1", "Received:  " + SHAPED.format("int32[], weak_type=True", "0/1"),
        "Result:  4", "=" * 50, "Iteration:  2", "Result:  16", "=" * 50,
        "Iteration:  3", "Result:  64", "=" * 50,
        "TracerBoolConversionError Abstract tracer value encountered where concrete value "
        "is expected: " + SHAPED.format("bool[], weak_type=True", "0/1"),
        "The problem arose with the `bool` function."]
    assert "depends on the value of the argument 'x'" in seed004[i + 19]
