"""Behaviour that JAX's documentation notebooks print, compared with jax (where it is
installed): ``python scripts/jax_notebooks.py`` runs the notebooks themselves; these
are the fast checks of what it found."""
from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np
import pytest

import absjit
import absjit.numpy as jnp
from tests.checks import jax, jax_numpy

needs_jax = pytest.mark.skipif(jax is None, reason="jax is not installed")


def _printed(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args)
    return buf.getvalue()


def _layers(np_mod, remat):
    def g(W, x):
        y = np_mod.dot(W, x)
        return np_mod.sin(y)

    def f(W1, W2, x):
        x = remat(g)(W1, x)
        x = remat(g)(W2, x)
        return x
    return f


# -- ad_checkpoint.print_saved_residuals ----------------------------------------------
@needs_jax
@pytest.mark.parametrize("remat", [False, True])
def test_print_saved_residuals_matches_jax(remat):
    from absjit.ad_checkpoint import print_saved_residuals
    import jax.ad_checkpoint
    ident = lambda g: g  # noqa: E731
    ours = _layers(jnp, absjit.checkpoint if remat else ident)
    theirs = _layers(jax_numpy, jax.checkpoint if remat else ident)
    args = (np.ones((5, 4), np.float32), np.ones((6, 5), np.float32), np.ones(4, np.float32))
    got = _printed(print_saved_residuals, ours, *args)
    want = _printed(jax.ad_checkpoint.print_saved_residuals, theirs, *args)
    assert got == want
    assert "from the argument W1" in got and f"{Path(__file__).name}:" in got


def _predict_with_names(np_mod, name_fn, named):
    def layer(W, x):
        return np_mod.sin(np_mod.dot(W, x))

    def predict(params, x):
        *Ws, Wlast = params
        for i, W in enumerate(Ws):
            x = layer(W, x)
            if named:
                x = name_fn(x, name=f"layer{i}_output")
        return np_mod.dot(Wlast, x)
    return predict


@needs_jax
def test_names_policy_sees_a_redefined_function():
    """gradient-checkpointing.md: ``loss`` reads the global ``predict``, which the
    notebook redefines (adding names) after checkpointing ``loss`` once. absjit traces
    again and saves ``layer0_output``, as JAX does for a function it has not traced
    before (JAX's notebook output, from its stale trace, lists only the arguments)."""
    from absjit.ad_checkpoint import checkpoint_name, print_saved_residuals
    import jax.ad_checkpoint as jax_ckpt

    def residuals(lib, np_mod, name_fn, printer, warm_first):
        impl = {"predict": _predict_with_names(np_mod, name_fn, named=False)}

        def loss(params, x, y):
            return np_mod.sum((impl["predict"](params, x) - y) ** 2)
        params = [np.ones((4, 4), np.float32)] * 3
        x = y = np.ones(4, np.float32)
        if warm_first:
            dots = lib.checkpoint_policies.dots_with_no_batch_dims_saveable
            _printed(printer, lib.checkpoint(loss, policy=dots), params, x, y)
        impl["predict"] = _predict_with_names(np_mod, name_fn, named=True)
        policy = lib.checkpoint_policies.save_any_names_but_these("layer1_output")
        text = _printed(printer, lib.checkpoint(loss, policy=policy), params, x, y)
        return [line.split(" from ")[0] for line in text.splitlines()]

    got = residuals(absjit, jnp, checkpoint_name, print_saved_residuals, warm_first=True)
    fresh_jax = residuals(jax, jax_numpy, jax_ckpt.checkpoint_name,
                          jax_ckpt.print_saved_residuals, warm_first=False)
    assert got == fresh_jax
    assert "f32[4] named 'layer0_output'" in got


def test_saved_residuals_of_sin_is_cos():
    from absjit.ad_checkpoint import saved_residuals
    (aval, what), = saved_residuals(jnp.sin, 1.0)
    assert aval.shape == () and what.startswith("output of cos")


# -- custom_jvp / custom_vjp: what runs, and in which order --------------------------
def _logged_custom_jvp(lib, np_mod, log):
    @lib.custom_jvp
    def f(x):
        log.append("f")
        return np_mod.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        log.append("f_jvp")
        x, = primals
        t, = tangents
        return f(x), np_mod.cos(x) * t
    return f


def _logged_custom_vjp(lib, np_mod, log):
    @lib.custom_vjp
    def f(x):
        log.append("f")
        return np_mod.sin(x)

    def fwd(x):
        log.append("fwd")
        return f(x), np_mod.cos(x)

    def bwd(cos_x, g):
        log.append("bwd")
        return (cos_x * g,)
    f.defvjp(fwd, bwd)
    return f


@needs_jax
@pytest.mark.parametrize("make", [_logged_custom_jvp, _logged_custom_vjp])
@pytest.mark.parametrize("how", ["call", "grad", "vjp", "jit"])
def test_custom_rules_run_in_jaxs_order(make, how):
    def run(lib, np_mod):
        log = []
        f = make(lib, np_mod, log)
        if how == "call":
            out = f(3.0)
        elif how == "grad":
            out = lib.grad(f)(3.0)
        elif how == "vjp":
            y, pull = lib.vjp(f, 3.0)
            out = pull(1.0)[0]
        else:
            out = lib.jit(f)(3.0)
        return log, float(out)
    got, want = run(absjit, jnp), run(jax, jax_numpy)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_custom_jvp_branches_on_values_under_grad():
    @absjit.custom_jvp
    def f(x):
        return jnp.sin(x) if x > 0 else jnp.cos(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return f(x), (2 * t if x > 0 else 3 * t)
    assert float(absjit.grad(f)(1.0)) == 2.0 and float(absjit.grad(f)(-1.0)) == 3.0


def test_custom_jvp_called_directly_runs_the_function():
    @absjit.custom_jvp
    def f(x):
        return {"a": x ** 2}
    f.defjvp(lambda p, t: (f(*p), {"a": 2 * p[0] * t[0]}))
    assert f(2.0) == {"a": 4.0}  # a Python float, as in JAX


# -- jax.extend.core: a custom interpreter over make_jaxpr's output ----------------------
def _run_backwards(lib, core, inverses, fun, y):
    """Invert a chain of unary primitives by walking its jaxpr from the end."""
    closed = lib.make_jaxpr(fun)(y)
    jaxpr = closed.jaxpr
    env = dict(zip(jaxpr.outvars, [y]))
    env.update(zip(jaxpr.constvars, closed.literals))
    for eqn in reversed(jaxpr.eqns):
        val = env[eqn.outvars[0]]
        env[eqn.invars[0]] = inverses[eqn.primitive.name](val)
    return env[jaxpr.invars[0]]


@needs_jax
def test_extend_core_interpreter_matches_jax():
    import jax.extend.core
    from absjit.extend import core
    f = lambda np_mod: (lambda x: np_mod.exp(np_mod.tanh(x)))  # noqa: E731
    inv = lambda np_mod: {"exp": np_mod.log, "tanh": np_mod.arctanh}  # noqa: E731
    got = _run_backwards(absjit, core, inv(jnp), f(jnp), 2.0)
    want = _run_backwards(jax, jax.extend.core, inv(jax_numpy), f(jax_numpy), 2.0)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6)
    # Evaluating by bind, with literals read from Literal.val
    closed = absjit.make_jaxpr(lambda x: x * 3.0 + 1.0)(2.0)
    env = {closed.jaxpr.invars[0]: 2.0}
    for eqn in closed.jaxpr.eqns:
        vals = [x.val if type(x) is core.Literal else env[x] for x in eqn.invars]
        env[eqn.outvars[0]] = eqn.primitive.bind(*vals, **eqn.params)
    assert float(env[closed.jaxpr.outvars[0]]) == 7.0


def test_private_util_helpers_through_the_alias():
    import absjit.compat_jax
    with absjit.compat_jax.installed():
        from jax._src.util import safe_map, safe_zip
        with pytest.raises(ImportError, match="jax._src.lax"):
            import jax._src.lax  # noqa: F401
    assert safe_map(lambda a, b: a * b, [1, 2], (3, 4)) == [3, 8]
    with pytest.raises(ValueError):
        safe_zip([1], [1, 2])


# -- io_callback is an effect -------------------------------------------------------------
def _io_runs(lib, how):
    from importlib import import_module
    io_callback = import_module(lib.__name__ + ".experimental").io_callback
    calls = []

    def host(*xs):
        calls.append(len(xs))
        return np.float32(2.0)
    spec = lib.ShapeDtypeStruct((), np.float32)
    if how == "unused":
        f = lib.jit(lambda x: (io_callback(lambda: calls.append(0), None), x)[1])
        out = lib.grad(f)(1.0)
    else:
        f = lib.jit(lambda x: x * io_callback(host, spec))
        out = lib.grad(f)(1.0)
    return calls, float(out)


@needs_jax
def test_io_callback_under_grad_of_jit_runs_once():
    assert _io_runs(absjit, "unused") == _io_runs(jax, "unused")
    # A result that a derivative reads is recomputed by the backward pass of a jit
    # (docs/jax-compatibility.md): same value, one call more than JAX.
    ours, theirs = _io_runs(absjit, "used"), _io_runs(jax, "used")
    assert ours[1] == theirs[1] and len(ours[0]) == len(theirs[0]) + 1


def test_io_callback_errors_match_jax():
    from absjit.experimental import io_callback
    calls = []

    def host(x):
        calls.append(x)
        return x
    f = absjit.jit(lambda x: io_callback(host, x, x, ordered=True))
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        absjit.vmap(f)(jnp.ones(3))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        absjit.grad(lambda x: f(x))(1.0)
    assert calls == []  # neither error ran the callback
    g = absjit.jit(lambda x: io_callback(host, x, x))
    np.testing.assert_array_equal(absjit.vmap(g)(jnp.arange(3.0)), [0.0, 1.0, 2.0])
    assert len(calls) == 3  # once per element


def test_debug_callback_in_jit_under_grad_runs_once():
    seen = []
    f = absjit.jit(lambda x: (absjit.debug.callback(seen.append, x), x * x)[1])
    assert float(absjit.grad(f)(3.0)) == 6.0
    assert [float(v) for v in seen] == [3.0]


# -- printing -------------------------------------------------------------------------------
@needs_jax
def test_treedef_repr_matches_jax():
    import collections
    Point = collections.namedtuple("Point", ["x", "y"])

    class Box:
        def __init__(self, v):
            self.v = v
    for tu in (absjit.tree_util, jax.tree_util):
        tu.register_pytree_node(Box, lambda b: ((b.v,), "box"), lambda a, ch: Box(*ch))
    trees = [Point(1, (2, 3)), {"a": Point(1, 2), "b": [None, 1]}, Box(1.0),
             collections.OrderedDict(b=1, a=2), (1,)]
    for t in trees:
        assert repr(absjit.tree_util.tree_structure(t)) == \
            repr(jax.tree_util.tree_structure(t))


@needs_jax
def test_fori_loop_with_python_bounds_keeps_weak_types():
    for init in (0, 0.5):
        got = absjit.lax.fori_loop(0, 10, lambda i, x: x + i, init)
        want = jax.lax.fori_loop(0, 10, lambda i, x: x + i, init)
        assert repr(got) == repr(want)
    got = absjit.lax.fori_loop(0, 4, lambda i, x: x + i, jnp.int32(1))
    assert repr(got) == "Array(7, dtype=int32)"


@needs_jax
def test_array_sharding_repr_matches_jax():
    assert repr(jnp.ones(2).sharding) == repr(jax_numpy.ones(2).sharding)
    assert jnp.ones(2).sharding.memory_kind == "device"


# -- errors: JAX's types and, where programs print them, its words ------------------------
@needs_jax
def test_errors_programs_print_match_jax():
    def message(np_mod):
        try:
            np_mod.ones(100) * np_mod.ones((100, 10))
        except ValueError as e:
            return str(e)
    assert message(jnp) == message(jax_numpy)
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        absjit.tree_util.tree_leaves({1: 7, "y": 42})
    with pytest.raises(ValueError):
        jax.tree_util.tree_leaves({1: 7, "y": 42})
    for np_mod in (jnp, jax_numpy):
        with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
            np_mod.asarray(None)


# -- the comparison in scripts/jax_notebooks.py ------------------------------------------
def _script():
    import runpy
    return runpy.run_path(str(Path(__file__).resolve().parent.parent / "scripts"
                              / "jax_notebooks.py"))


def test_notebook_comparison_folds_only_deliberate_differences(tmp_path):
    nb = _script()
    same = nb["first_difference"]
    assert same("Array([1.       , 2.0000002], dtype=float32)",
                "Array([1., 2.], dtype=float32)") is None
    assert same("b:f32[] = mul a 2.0", "b:f32[] = mul a 2.0:f32[]") is None
    assert same("Traced<ShapedArray(float32[])>with<DynamicJaxprTrace(level=1/0)>",
                "JitTracer(~float32[])") is None
    assert same("<function f at 0x7f00>", "<function f at 0x7e11>") is None
    assert same("1.2993813", "1.3041496") is not None
    assert same("Array(1., dtype=float32)", "Array(1., dtype=float32, weak_type=True)")
    md = tmp_path / "nb.md"
    md.write_text("---\njupytext:\n  x: 1\n---\n# t\n```{code-cell}\n:tags: [raises-exception]\n"
                  "x = 1\n```\ntext\n```{code-cell} ipython3\nx\n```\n")
    cells = nb["read_cells"](md)
    assert [c["source"] for c in cells] == ["x = 1", "x"]
    assert cells[0]["tags"] == ["raises-exception"]
    ours = {"stdout": "", "shown": "", "etype": "TracerBoolConversionError",
            "error": "...", "mro": ["TracerBoolConversionError", "TypeError"]}
    assert nb["compare_cell"](ours, dict(ours, etype="TypeError", mro=[])) is None
    assert nb["compare_cell"](ours, dict(ours, etype="ValueError", mro=[])) is not None


def test_masked_array_check_while_numpy_ma_is_half_imported(monkeypatch):
    import types
    from absjit import dtypes
    monkeypatch.setitem(sys.modules, "numpy.ma", types.ModuleType("numpy.ma"))
    assert dtypes.is_masked_array(np.ones(2)) is False


def _named_layers(lib, np_mod, name_fn):
    def f(W, x):
        a = name_fn(np_mod.sin(np_mod.dot(W, x)), "a")
        b = name_fn(np_mod.sin(np_mod.dot(W, a)), "b")
        return np_mod.sum(np_mod.dot(W, b))
    return f


@needs_jax
@pytest.mark.parametrize("policy", [None, "dots_with_no_batch_dims_saveable",
                                    "save_only_these_names", "save_any_names_but_these"])
def test_checkpoint_policies_save_what_jax_saves(policy):
    from absjit import ad_checkpoint as ours_ac
    import jax.ad_checkpoint as jax_ac
    W = np.full((3, 3), 0.5, np.float32)
    x = np.linspace(0, 1, 3).astype(np.float32)
    printed, grads = [], []
    for lib, np_mod, ac in ((absjit, jnp, ours_ac), (jax, jax_numpy, jax_ac)):
        f = _named_layers(lib, np_mod, ac.checkpoint_name)
        if policy is not None:
            make = getattr(lib.checkpoint_policies, policy)
            pol = make("b") if "names" in policy else make
            f = lib.checkpoint(f, policy=pol)
        printed.append(_printed(ac.print_saved_residuals, f, W, x))
        grads.append(np.asarray(lib.grad(f)(W, x)))
    assert printed[0] == printed[1]
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5)


def test_checkpoint_policies_keep_gradients_under_jit_and_vmap():
    from absjit.ad_checkpoint import checkpoint_name

    def f(W, x):
        a = checkpoint_name(jnp.sin(W @ x), "a")
        return jnp.sum(jnp.tanh(W @ a))
    W, x = jnp.full((3, 3), 0.3), jnp.arange(3.0)
    want = np.asarray(absjit.grad(f)(W, x))
    pols = absjit.checkpoint_policies
    for pol in (pols.dots_saveable, pols.everything_saveable, pols.nothing_saveable,
                pols.save_only_these_names("a")):
        g = absjit.grad(absjit.checkpoint(f, policy=pol))
        np.testing.assert_allclose(absjit.jit(g, backend="interpret")(W, x), want,
                                   rtol=1e-6)
        np.testing.assert_allclose(absjit.vmap(g, (None, 0))(W, jnp.stack([x, x]))[1],
                                   want, rtol=1e-6)


def _jaxpr_text(lib, np_mod, fn, *args):
    import re
    text = str(lib.make_jaxpr(fn(lib, np_mod))(*args))
    text = re.sub(r"(\d(?:[\d.e+-]*)|True|False):[a-z]+\d*\[\]", r"\1", text)  # bare literals
    return re.sub(r"\s+", "", text)


def _fori_traced_bound(lib, np_mod):
    def f(arg, n):
        ones = np_mod.ones(arg.shape)
        return lib.lax.fori_loop(0, n, lambda i, c: c + ones * 3.0 + arg, arg + ones)
    return f


def _cond_weak_branch(lib, np_mod):
    def f(a, pair):
        return lib.lax.cond(a >= 0.0, lambda p: p[0], lambda p: np_mod.array([1]) + p[1], pair)
    return f


def _unused_result(lib, np_mod):
    return lambda x: (np_mod.log(x), x * 2.0)[1]


@needs_jax
@pytest.mark.parametrize("fn, args", [
    (_fori_traced_bound, (np.ones(4, np.float32), 5)),
    (_cond_weak_branch, (5.0, (np.zeros(1, np.float32), 2.0))),
    (_unused_result, (1.0,)),
])
def test_jaxprs_print_as_jax_010_prints_them(fn, args):
    """Where the seed documents print nothing alike, jaxprs print as JAX 0.10's:
    broadcast_in_dim without its shape, ``_`` for unread results, no conversion of int32 loop bounds, cond branches
    differing in weak type only left alone."""
    assert _jaxpr_text(absjit, jnp, fn, *args) == _jaxpr_text(jax, jax_numpy, fn, *args)
