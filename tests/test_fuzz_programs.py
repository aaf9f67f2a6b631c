"""Differential fuzzing: random well-typed programs over the primitive set, run eagerly,
under ``jit(backend="interpret")``, under ``jit(backend="cpu")`` and, for float
programs, under ``jax.jit`` where JAX is installed; every result must agree.

A program is data (a list of steps over an environment of values whose shapes and
dtypes the generator tracks), so hypothesis shrinks a failure to a short program and
:func:`describe` prints it as Python. Every new program is a Numba compile (~0.3 s),
so CI runs few examples, derandomised; ``ABSJIT_FUZZ_EXAMPLES=500`` runs a longer,
random campaign. ``ABSJIT_FUZZ_PARALLEL=1`` lowers the cpu backend's parallel threshold
to 4 elements for the run, so the small programs exercise its ``prange`` loops too
(otherwise only arrays of ``PARALLEL_MIN_SIZE`` elements and more do).
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as hst

import absjit
import absjit.lax as alax
import absjit.numpy as jnp
from absjit.errors import InconclusiveDimensionError
from tests.checks import jax

_CAMPAIGN = os.environ.get("ABSJIT_FUZZ_EXAMPLES")
EXAMPLES = int(_CAMPAIGN or 15)

F32, I32 = np.dtype(np.float32), np.dtype(np.int32)
UNARY = {F32: ("negative", "abs", "sin", "cos", "tanh", "exp", "square", "sign", "floor",
               "ceil", "log1p_abs", "sqrt_abs"),
         I32: ("negative", "abs", "square", "sign")}
BINARY = ("add", "subtract", "multiply", "maximum", "minimum", "safe_divide")
REDUCE = {F32: ("sum", "max", "min", "mean"), I32: ("sum", "max", "min")}
SLICES = ("rev", "step", "tail", "index", "last_rev", "transpose", "flat")


# -- the program's semantics, written once for absjit and for JAX -------------------------
def _unary(np_, name, a):
    if name == "log1p_abs":
        return np_.log1p(np_.abs(a))
    if name == "sqrt_abs":
        return np_.sqrt(np_.abs(a))
    return getattr(np_, name)(a)


def _binary(np_, name, a, b):
    if name != "safe_divide":
        return getattr(np_, name)(a, b)
    den = np_.abs(b) + 1  # never zero (abs(INT_MIN) + 1 is -2**31 + 1)
    if np_.result_type(a, b) == I32:
        return np_.floor_divide(a, den)
    return a / den


def _slice(np_, kind, a, k):
    if kind == "rev":
        return a[::-1]
    if kind == "step":
        return a[::2]
    if kind == "tail":
        return a[1:]
    if kind == "index":
        return a[k]
    if kind == "last_rev":
        return a[..., ::-1]
    if kind == "transpose":
        return np_.transpose(a)
    return np_.reshape(a, (-1,))


def run_program(prog, np_, lax_, x, y):
    """Execute ``prog`` with ``np_``/``lax_`` being absjit's or JAX's modules."""
    # as absjit/JAX arrays: eagerly, ``x.astype`` on a NumPy input would be NumPy's
    env = [np_.asarray(x), np_.asarray(y)]
    for step in prog["steps"]:
        op, args = step[0], step[1:]
        if op == "unary":
            out = _unary(np_, args[0], env[args[1]])
        elif op == "binary":
            out = _binary(np_, args[0], env[args[1]], env[args[2]])
        elif op == "where":
            a, b, c = (env[i] for i in args)
            out = np_.where(a > 0, b, c)
        elif op == "reduce":
            name, i, axis, keep = args
            out = getattr(np_, name)(env[i], axis=axis, keepdims=keep)
        elif op == "slice":
            out = _slice(np_, args[0], env[args[1]], args[2])
        elif op == "cast":
            out = env[args[0]].astype(args[1])
        elif op == "scalar":
            name, i, c = args
            out = _binary(np_, name, env[i], c)
        elif op == "compare":
            a, b = env[args[0]], env[args[1]]
            out = np_.where(a >= b, a, np_.zeros_like(a))
        elif op == "clip":
            out = np_.clip(env[args[0]], -2, 2)
        elif op == "matmul":
            out = np_.matmul(env[args[0]], env[args[1]])
        elif op == "argreduce":
            name, i, axis = args
            out = getattr(np_, name)(env[i], axis=axis)
        elif op == "sort":
            out = getattr(np_, args[0])(env[args[1]], axis=-1)
        elif op == "intdiv":  # any divisor, zero included: x // 0 == -1, x % 0 == x
            out = getattr(np_, args[0])(env[args[1]], env[args[2]])
        elif op == "take":
            a, idx = env[args[0]], env[args[1]]
            out = np_.take(np_.reshape(a, (-1,)), np_.reshape(idx, (-1,)), mode="clip")
        elif op == "concat":
            out = np_.concatenate([env[args[0]], env[args[1]]], axis=0)
        elif op == "cumsum":
            out = np_.cumsum(env[args[0]], axis=args[1])
        elif op == "broadcast":
            out = np_.broadcast_to(env[args[0]], args[1])
        elif op == "cond":
            out = lax_.cond(np_.sum(env[args[0]]) > 0, lambda a: a * 2, lambda a: a - 1,
                            env[args[1]])
        elif op == "fori":
            v = env[args[0]]
            if v.dtype == F32:
                out = lax_.fori_loop(0, 3, lambda k, c: c * 0.5 + v, v)
            else:
                out = lax_.fori_loop(0, 3, lambda k, c: c + v * k, v)
        else:  # pragma: no cover - the generator only emits the ops above
            raise AssertionError(op)
        env.append(out)
    return tuple(env[i] for i in prog["outputs"])


def describe(prog) -> str:
    """The program as readable pseudo-Python (for failure messages and reports)."""
    lines = [f"x: {prog['x_dtype']}{list(prog['x_shape'])}, "
             f"y: {prog['y_dtype']}{list(prog['y_shape'])}"
             + (" (with NaN/inf/extreme values)" if prog["specials"] else "")]
    for n, step in enumerate(prog["steps"]):
        lines.append(f"v{n + 2} = {step[0]}{step[1:]}")
    lines.append(f"return {['v%d' % i for i in prog['outputs']]}")
    return "\n".join(lines)


# -- the generator: tracks (shape, dtype) of every value ----------------------------------
def _promote(a, b):
    return F32 if F32 in (a, b) else I32


def _bcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


@hst.composite
def programs(draw):
    rank = draw(hst.integers(0, 3))
    x_shape = tuple(draw(hst.lists(hst.integers(1, 4), min_size=rank, max_size=rank)))
    # y broadcasts against x: a suffix of x's shape with some dims set to 1
    k = draw(hst.integers(0, rank))
    y_shape = tuple(d if draw(hst.booleans()) else 1 for d in x_shape[rank - k:])
    x_dtype = draw(hst.sampled_from([F32, I32]))
    y_dtype = draw(hst.sampled_from([F32, I32, x_dtype]))
    env = [(x_shape, x_dtype), (y_shape, y_dtype)]
    steps = []
    for _ in range(draw(hst.integers(1, 10))):
        step, aval = _draw_step(draw, env)
        if step is not None:
            steps.append(step)
            env.append(aval)
    n = len(env)
    outputs = sorted(set([n - 1] + draw(hst.lists(hst.integers(2, n - 1) if n > 2 else
                                                  hst.just(n - 1), max_size=2))))
    return {"x_shape": x_shape, "y_shape": y_shape, "x_dtype": x_dtype, "y_dtype": y_dtype,
            "steps": steps, "outputs": outputs, "specials": draw(hst.booleans())}


def _draw_step(draw, env):
    # mostly the newest values: deeper chains
    i = draw(hst.one_of(hst.integers(max(0, len(env) - 2), len(env) - 1),
                        hst.integers(0, len(env) - 1)))
    shape, dt = env[i]
    op = draw(hst.sampled_from(["unary", "unary", "binary", "binary", "where", "reduce",
                                "slice", "cast", "cumsum", "broadcast", "cond", "fori",
                                "scalar", "compare", "clip", "matmul", "argreduce",
                                "intdiv", "take", "concat", "sort"]))
    if op == "scalar":  # a Python scalar is weakly typed: int32 * 2.5 is float32
        c = draw(hst.sampled_from([2, -3, 0.5, 2.5, -1.25]))
        name = draw(hst.sampled_from(BINARY))
        return ("scalar", name, i, c), (shape, F32 if isinstance(c, float) else dt)
    if op == "compare":
        same = [j for j, (sj, dj) in enumerate(env) if dj == dt and _bcast(shape, sj) == shape]
        return ("compare", i, draw(hst.sampled_from(same))), (shape, dt)
    if op == "clip":
        return ("clip", i), (shape, dt)
    if op == "argreduce":
        axis = draw(hst.sampled_from([None] + list(range(len(shape)))))
        out = () if axis is None else shape[:axis] + shape[axis + 1:]
        return ("argreduce", draw(hst.sampled_from(["argmax", "argmin"])), i, axis), (out, I32)
    if op == "intdiv":
        ints = [j for j, (sj, dj) in enumerate(env) if dj == I32 and _bcast(shape, sj)]
        if dt != I32 or not ints:
            return None, None
        j = draw(hst.sampled_from(ints))
        return ("intdiv", draw(hst.sampled_from(["floor_divide", "remainder"])), i, j), \
            (_bcast(shape, env[j][0]), I32)
    if op == "take":
        ints = [j for j, (_, dj) in enumerate(env) if dj == I32]
        if not ints or not shape:
            return None, None
        j = draw(hst.sampled_from(ints))
        return ("take", i, j), ((int(np.prod(env[j][0])),), dt)
    if op == "concat":
        same = [j for j, (sj, dj) in enumerate(env) if dj == dt and len(sj) == len(shape)
                and sj[1:] == shape[1:]]
        if not shape or not same:
            return None, None
        j = draw(hst.sampled_from(same))
        return ("concat", i, j), ((shape[0] + env[j][0][0],) + shape[1:], dt)
    if op == "matmul":
        fits = [j for j, (sj, dj) in enumerate(env) if dj == dt and 1 <= len(shape) <= 2
                and 1 <= len(sj) <= 2 and shape[-1] == sj[0]]
        if not fits:
            return None, None
        j = draw(hst.sampled_from(fits))
        return ("matmul", i, j), (shape[:-1] + env[j][0][1:], dt)
    if op == "unary":
        return ("unary", draw(hst.sampled_from(UNARY[dt])), i), (shape, dt)
    if op in ("binary", "where"):
        partners = [j for j, (s, _) in enumerate(env) if _bcast(shape, s) is not None]
        j = draw(hst.sampled_from(partners))
        if op == "binary":
            out = (_bcast(shape, env[j][0]), _promote(dt, env[j][1]))
            return ("binary", draw(hst.sampled_from(BINARY)), i, j), out
        same = [m for m in partners if env[m][1] == env[j][1] and
                _bcast(shape, env[j][0], env[m][0]) is not None]
        m = draw(hst.sampled_from(same))
        return ("where", i, j, m), (_bcast(shape, env[j][0], env[m][0]), env[j][1])
    if op == "reduce":
        axis = draw(hst.sampled_from([None] + list(range(len(shape)))))
        keep = draw(hst.booleans())
        name = draw(hst.sampled_from(REDUCE[dt]))
        if axis is None:
            out_shape = (1,) * len(shape) if keep else ()
        else:
            out_shape = tuple(1 if a == axis else d for a, d in enumerate(shape)) if keep \
                else shape[:axis] + shape[axis + 1:]
        return ("reduce", name, i, axis, keep), (out_shape, dt)
    if op == "cast":
        return ("cast", i, "int32" if dt == F32 else "float32"), (shape, I32 if dt == F32
                                                                  else F32)
    if op == "cond":
        j = draw(hst.integers(0, len(env) - 1))
        return ("cond", i, j), env[j]
    if op == "fori":
        return ("fori", i), (shape, dt)
    if op == "broadcast":
        lead = draw(hst.integers(1, 3))
        return ("broadcast", i, (lead,) + shape), ((lead,) + shape, dt)
    if not shape:  # slicing and cumsum need an axis
        return None, None
    if op == "sort":
        name = draw(hst.sampled_from(["sort", "argsort"]))
        return ("sort", name, i), (shape, dt if name == "sort" else I32)
    if op == "cumsum":
        axis = draw(hst.integers(0, len(shape) - 1))
        return ("cumsum", i, axis), (shape, dt)
    kind = draw(hst.sampled_from(SLICES))
    if kind == "tail" and shape[0] < 2:
        kind = "rev"
    k = draw(hst.integers(0, shape[0] - 1))
    out = {"rev": shape, "step": ((shape[0] + 1) // 2,) + shape[1:],
           "tail": (shape[0] - 1,) + shape[1:], "index": shape[1:], "last_rev": shape,
           "transpose": shape[::-1], "flat": (int(np.prod(shape)),)}[kind]
    return ("slice", kind, i, k), (out, dt)


# -- comparing ------------------------------------------------------------------------------
def _inputs(prog, seed):
    rng = np.random.default_rng(seed)

    def make(shape, dt):
        if dt == F32:
            x = rng.uniform(-3, 3, shape).astype(np.float32)
            specials = np.float32([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, 2.5, -0.5])
        else:
            x = rng.integers(-10, 11, shape).astype(np.int32)
            specials = np.int32([0, 0, -1, 2**31 - 1, -2**31, 1])
        if prog["specials"] and x.size:  # a few NaN, inf, -0.0, extremes, zeros
            flat = x.reshape(-1)
            pick = rng.random(flat.size) < 0.3
            flat[pick] = rng.choice(specials, int(pick.sum()))
            x = flat.reshape(shape)
        return x
    return make(prog["x_shape"], prog["x_dtype"]), make(prog["y_shape"], prog["y_dtype"])


def assert_same(got, want, what, prog):
    got, want = np.asarray(got), np.asarray(want)
    msg = f"{what} differs for the program\n{describe(prog)}"
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{msg}\n{got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=msg)
        return
    # float32: chains of ops amplify rounding, reductions reassociate; the tolerance
    # scales with the magnitude of the values involved
    scale = np.nanmax(np.abs(np.where(np.isinf(want), 0, want)), initial=1.0)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5 * scale, equal_nan=True,
                               err_msg=msg)


def _ranked(fn, x, y):
    """``fn`` jitted at the ``ranked`` level on cpu, or None where the program needs a
    concrete size (a documented limit of the level, not a divergence)."""
    try:
        return absjit.jit(fn, abstraction="ranked", backend="cpu")(x, y)
    except InconclusiveDimensionError:
        return None


def check_program(prog, seed=0):
    x, y = _inputs(prog, seed)

    def fn(x, y):
        return run_program(prog, jnp, alax, x, y)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow in exp; fallbacks
        ref = fn(x, y)
        interp = absjit.jit(fn, backend="interpret")(x, y)
        cpu = absjit.jit(fn, backend="cpu")(x, y)
        ranked = _ranked(fn, x, y)
    for n, (r, a, b) in enumerate(zip(ref, interp, cpu)):
        assert_same(a, r, f"output {n}: jit(interpret) vs eager", prog)
        assert_same(b, r, f"output {n}: jit(cpu) vs eager", prog)
    for n, (r, c) in enumerate(zip(ref, ranked or ())):
        assert_same(c, r, f"output {n}: jit(cpu, ranked) vs eager", prog)
    if jax is not None and prog["x_dtype"] == F32 and prog["y_dtype"] == F32 and \
            not any(s[0] == "cast" for s in prog["steps"]):
        import jax.numpy as jax_numpy
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = jax.jit(lambda x, y: run_program(prog, jax_numpy, jax.lax, x, y))(x, y)
        for n, (r, w) in enumerate(zip(ref, want)):
            assert_same(r, w, f"output {n}: absjit vs jax.jit", prog)


@pytest.fixture
def parallel_threshold(monkeypatch):
    # the same setting for every example: function scope is fine here
    if os.environ.get("ABSJIT_FUZZ_PARALLEL"):
        import absjit.compiler.lower as lower
        monkeypatch.setattr(lower, "PARALLEL_MIN_SIZE", 4)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=_CAMPAIGN is None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(programs(), hst.integers(0, 2**16))
def test_random_programs_agree(parallel_threshold, prog, seed):
    check_program(prog, seed)


@pytest.mark.parametrize("steps", [
    [("unary", "sin", 0), ("binary", "add", 2, 1), ("reduce", "sum", 3, 0, False)],
    [("where", 0, 0, 1), ("cumsum", 2, 0), ("fori", 3)],
    [("slice", "rev", 0, 0), ("cond", 2, 1), ("broadcast", 3, (2, 3))],
])
def test_fixed_programs_agree(steps):
    # fixed programs: each step kind runs in CI whatever hypothesis draws
    prog = {"x_shape": (3,), "y_shape": (3,), "x_dtype": F32, "y_dtype": F32,
            "steps": steps, "outputs": [len(steps) + 1], "specials": False}
    check_program(prog)


def test_checker_catches_a_difference():
    # the comparison must be able to fail: a program against a perturbed answer
    prog = {"x_shape": (2,), "y_shape": (2,), "x_dtype": F32, "y_dtype": F32,
            "steps": [("unary", "exp", 0)], "outputs": [2], "specials": False}
    with pytest.raises(AssertionError, match="differs for the program"):
        assert_same(np.float32([1, 2]), np.float32([1, 2.1]), "output 0", prog)
