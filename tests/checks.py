"""The comparing helpers every test uses.

``check_against_numpy`` runs an absjit function and a NumPy reference on the same inputs
and compares values (tolerance by dtype) and, where JAX is installed and a JAX reference
is given, result dtypes and weak types.
"""
from __future__ import annotations

import numpy as np

import absjit
from absjit import tree_util

try:  # JAX is a test extra; tests compare against it where present.
    import jax
    import jax.numpy as jax_numpy
    jax.config.update("jax_platforms", "cpu")
except Exception:  # noqa: BLE001
    jax = None
    jax_numpy = None

_TOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12,
        np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-12}


def tolerance(dtype) -> float:
    dt = np.dtype(dtype)
    if absjit.dtypes.bfloat16 is not None and dt == absjit.dtypes.bfloat16:
        return 2e-2
    return _TOL.get(dt, 0.0)


def assert_close(actual, expected, rtol=None, atol=None, check_dtype=True, err_msg=""):
    """Compare pytrees of arrays; NaN equals NaN; dtypes must match when asked."""
    a_leaves, a_tree = tree_util.tree_flatten(actual)
    e_leaves, e_tree = tree_util.tree_flatten(expected)
    assert len(a_leaves) == len(e_leaves), f"{a_tree} vs {e_tree}"
    for a, e in zip(a_leaves, e_leaves):
        a_np, e_np = np.asarray(a), np.asarray(e)
        assert a_np.shape == e_np.shape, f"shape {a_np.shape} != {e_np.shape} {err_msg}"
        if check_dtype:
            assert a_np.dtype == e_np.dtype, f"dtype {a_np.dtype} != {e_np.dtype} {err_msg}"
        tol = tolerance(a_np.dtype) if rtol is None else rtol
        if a_np.dtype.kind in "fc" or (absjit.dtypes.bfloat16 is not None
                                        and a_np.dtype == absjit.dtypes.bfloat16):
            np.testing.assert_allclose(a_np.astype(np.complex128 if a_np.dtype.kind == "c"
                                                   else np.float64),
                                       e_np.astype(np.complex128 if e_np.dtype.kind == "c"
                                                   else np.float64),
                                       rtol=tol, atol=tol if atol is None else atol,
                                       equal_nan=True, err_msg=err_msg)
        else:
            np.testing.assert_array_equal(a_np, e_np, err_msg=err_msg)


def check_against_numpy(fn, np_fn, *args, rtol=None, atol=None, jax_fn=None,
                        check_dtype=True, transform=None, **kwargs):
    """``fn(*args)`` (absjit, optionally under ``transform`` e.g. jit) against
    ``np_fn(*args)`` computed in NumPy; with ``jax_fn`` also the JAX result dtype.

    The NumPy reference is computed on the inputs as absjit sees them (float64 inputs
    are float32 unless x64 is on) and cast to absjit's result dtype before comparing.
    """
    run = fn if transform is None else transform(fn)
    out = run(*args, **kwargs)
    np_args = [np.asarray(a) if isinstance(a, absjit.Array) else a for a in args]
    expected = np_fn(*np_args, **kwargs)
    if jax_fn is not None and jax is not None and check_dtype:
        jax_out = jax_fn(*[np.asarray(a) if isinstance(a, absjit.Array) else a for a in args],
                         **kwargs)
        for o, j in zip(tree_util.tree_leaves(out), tree_util.tree_leaves(jax_out)):
            assert np.dtype(o.dtype) == np.dtype(j.dtype), f"dtype {o.dtype} != JAX {j.dtype}"
            assert bool(getattr(o, "weak_type", False)) == bool(getattr(j, "weak_type", False)), \
                f"weak_type {getattr(o, 'weak_type', False)} != JAX {getattr(j, 'weak_type', False)}"
    out_leaves = tree_util.tree_leaves(out)
    exp_leaves = tree_util.tree_leaves(expected)
    exp_cast = [np.asarray(e).astype(np.asarray(o).dtype) for o, e in zip(out_leaves, exp_leaves)]
    assert_close(out_leaves, exp_cast, rtol=rtol, atol=atol, check_dtype=False)
    return out
