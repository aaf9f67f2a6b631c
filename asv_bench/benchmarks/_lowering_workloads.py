"""Workloads of the cpu backend's lowerings (issue: no performance cliffs), one
definition per implementation, shared by ``bench_cpu_lowerings`` and
``scripts/compare.py``: a ``fori_loop`` whose body sorts, a 2-D convolution,
``tanh`` on 1e6 float32 and ``sin``/``cos`` on 1e6 float32 and float64 (vectorised
kernels, not a libm call per element), ``selu`` on 1e6 float16 (16-bit storage,
float32 arithmetic, every operation rounded), ``top_k`` over rows (a selection, not a
sort), an embedding scatter-add into segments, a 1-D ``convolve`` (tap loops), a batch
of small ``solve`` and a Newton ``solve`` inside a ``fori_loop`` (LAPACK from the kernel),
a real FFT, a float64 Horner polynomial, a softmax cross-entropy picking each row's label
by ``take_along_axis``, and an RNN whose ``scan`` body holds two small products.

Every ``make_*`` returns ``{implementation: zero-argument callable}``, warmed up.
"""
from __future__ import annotations

import numpy as np

import absjit
import absjit.numpy as jnp
from absjit import lax

from ._workloads import ALPHA, LMBDA, _warm, jax, jax_numpy, numba, selu_jnp

__all__ = ["make_fori_sort", "make_conv2d", "make_unary", "make_tanh", "make_sin", "make_cos",
           "make_selu_f16", "make_top_k", "make_segment_sum", "make_convolve", "make_solve",
           "make_newton", "make_rfft", "make_horner64", "make_cross_entropy", "make_rnn_scan",
           "WORKLOADS"]


# -- fori_loop of 20,000 steps whose body sorts 16 values ------------------------------
def _sort_body(np_mod, sort):
    def body(i, x):
        return sort(x * 1.0001 + 0.5)[::-1] * 0.999
    return body


def make_fori_sort(steps=20_000, n=16):
    x = np.linspace(-1, 1, n).astype(np.float32)
    f = absjit.jit(lambda v: lax.fori_loop(0, steps, _sort_body(jnp, jnp.sort), v))
    impls = {"absjit": lambda: f(x)}
    if jax is not None:
        jf = jax.jit(lambda v: jax.lax.fori_loop(0, steps, _sort_body(jax_numpy,
                                                                      jax_numpy.sort), v))
        xj = jax.device_put(x)
        impls["jax"] = lambda: jf(xj)
    return _warm(impls)


# -- conv 3x3, 64 -> 64 channels, 32x32, batch 8 ------------------------------------
def make_conv2d(batch=8, channels=64, size=32):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, channels, size, size)).astype(np.float32)
    k = (rng.standard_normal((channels, channels, 3, 3)) * 0.05).astype(np.float32)
    f = absjit.jit(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME"))
    impls = {"absjit": lambda: f(x, k)}
    if jax is not None:
        jf = jax.jit(lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "SAME"))
        xj, kj = jax.device_put(x), jax.device_put(k)
        impls["jax"] = lambda: jf(xj, kj)
    return _warm(impls)


# -- tanh, sin, cos on 1e6 floats ---------------------------------------------------------
def _unary_loop(fn):
    def loop(x, out):
        for i in range(x.shape[0]):
            out[i] = fn(x[i])
        return out
    return loop


def _with_x64(fn):
    """``fn`` called with 64-bit types on in absjit (a float64 argument stays float64)."""
    def call():
        prev = absjit.config.enable_x64
        absjit.config.update("enable_x64", True)
        try:
            return fn()
        finally:
            absjit.config.update("enable_x64", prev)
    return call


def make_unary(name, dtype=np.float32, n=1_000_000, scale=1.0):
    """``name`` (a NumPy function name) on ``n`` normally distributed values times
    ``scale``: absjit, ``jax.jit``, NumPy and a serial Numba loop calling ``np.<name>``."""
    x = (np.random.default_rng(0).standard_normal(n) * scale).astype(dtype)
    np_fn = getattr(np, name)
    f = absjit.jit(getattr(jnp, name))
    wide = np.dtype(dtype) == np.float64
    impls = {"absjit": _with_x64(lambda: f(x)) if wide else (lambda: f(x)),
             "numpy": lambda: np_fn(x)}
    if jax is not None:
        jf = jax.jit(getattr(jax_numpy, name))
        if wide:
            with jax.enable_x64(True):
                xj = jax.device_put(x)

            def call_jax():
                with jax.enable_x64(True):
                    return jf(xj)
            impls["jax"] = call_jax
        else:
            xj = jax.device_put(x)
            impls["jax"] = lambda: jf(xj)
    if numba is not None:
        serial = numba.njit(error_model="numpy")(_unary_loop(np_fn))
        impls["numba"] = lambda: serial(x, np.empty_like(x))
    return _warm(impls)


def make_tanh(n=1_000_000):
    return make_unary("tanh", np.float32, n)


def make_sin(dtype=np.float32, n=1_000_000):
    return make_unary("sin", dtype, n, scale=3.0)


def make_cos(dtype=np.float32, n=1_000_000):
    return make_unary("cos", dtype, n, scale=3.0)


# -- selu on 1e6 float16 ------------------------------------------------------------------
def make_selu_f16(n=1_000_000):
    x = np.random.default_rng(0).standard_normal(n).astype(np.float16)
    f = absjit.jit(selu_jnp)
    impls = {"absjit": lambda: f(x),
             "numpy": lambda: np.float16(LMBDA) * np.where(
                 x > 0, x, np.float16(ALPHA) * np.exp(x) - np.float16(ALPHA))}
    if jax is not None:
        jf = jax.jit(lambda v: LMBDA * jax_numpy.where(v > 0, v, ALPHA * jax_numpy.exp(v)
                                                       - ALPHA))
        xj = jax.device_put(x)
        impls["jax"] = lambda: jf(xj)
    return _warm(impls)


# -- top_k over rows, segment_sum, 1-D convolve, batched solve, Newton in a fori_loop ---
def _both(make_fn, *args):
    """``{"absjit": …, "jax": …}`` for ``make_fn(numpy module, lax module)`` on ``args``."""
    f = absjit.jit(make_fn(jnp, lax))
    impls = {"absjit": lambda: f(*args)}
    if jax is not None:
        jf = jax.jit(make_fn(jax_numpy, jax.lax))
        jargs = [jax.device_put(a) for a in args]
        impls["jax"] = lambda: jf(*jargs)
    return _warm(impls)


def make_top_k(rows=2000, n=1000, k=10):
    x = np.random.default_rng(0).standard_normal((rows, n)).astype(np.float32)
    return _both(lambda np_, lax_: (lambda v: lax_.top_k(v, k)), x)


def make_segment_sum(n=100_000, width=64, vocab=10_000, segments=1000):
    """An embedding lookup then a scatter-add of its rows into ``segments`` segments."""
    rng = np.random.default_rng(0)
    table = rng.standard_normal((vocab, width)).astype(np.float32)
    ids = rng.integers(0, vocab, n).astype(np.int32)
    seg = rng.integers(0, segments, n).astype(np.int32)
    return _both(lambda np_, lax_: (lambda t, i, s: np_.zeros((segments, width), np_.float32)
                                    .at[s].add(t[i])), table, ids, seg)


def make_convolve(n=100_000, taps=101, mode="same"):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    w = rng.standard_normal(taps).astype(np.float32)
    return _both(lambda np_, lax_: (lambda a, b: np_.convolve(a, b, mode=mode)), x, w)


def make_solve(batch=64, n=32):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((batch, n, n)) + n * np.eye(n) / 4).astype(np.float32)
    b = rng.standard_normal((batch, n, 1)).astype(np.float32)
    return _both(lambda np_, lax_: (lambda m, v: np_.linalg.solve(m, v)), a, b)


def make_newton(n=8, steps=20):
    """``w - solve(H(w), g(w))`` in a ``fori_loop``: LAPACK inside a loop body."""
    w0 = np.linspace(0.1, 0.4, n).astype(np.float32)

    def make(np_, lax_):
        def step(i, w):
            h = np_.eye(n) * 3.0 + np_.outer(w, w) * 0.1
            return w - np_.linalg.solve(h, w ** 3 + w - 1.0)
        return lambda w: lax_.fori_loop(0, steps, step, w)
    return _both(make, w0)


# -- rfft, float64 Horner, cross-entropy by take_along_axis, an RNN scan ---------------
def make_rfft(n=1 << 20, batch=1):
    """``jnp.fft.rfft`` of ``batch`` float32 signals of length ``n`` (last axis)."""
    shape = (n,) if batch == 1 else (batch, n)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return _both(lambda np_, lax_: (lambda v: np_.fft.rfft(v)), x)


HORNER_COEFFS = tuple(1.0 / (k + 1) for k in range(13))  # degree 12


def make_horner64(n=1_000_000, coeffs=HORNER_COEFFS):
    """A float64 polynomial by Horner's rule on ``n`` values (64-bit types on)."""
    x = np.random.default_rng(0).uniform(-1.0, 1.0, n)

    def horner(v):
        acc = v * 0.0 + coeffs[-1]
        for c in coeffs[-2::-1]:
            acc = acc * v + c
        return acc
    f = absjit.jit(horner)
    impls = {"absjit": _with_x64(lambda: f(x)), "numpy": lambda: horner(x)}
    if jax is not None:
        jf = jax.jit(horner)
        with jax.enable_x64(True):
            xj = jax.device_put(x)

        def call_jax():
            with jax.enable_x64(True):
                return jf(xj)
        impls["jax"] = call_jax
    return _warm(impls)


def make_cross_entropy(rows=1024, classes=1000):
    """Mean softmax cross-entropy of float32 logits against integer labels."""
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((rows, classes)).astype(np.float32)
    labels = rng.integers(0, classes, rows).astype(np.int32)

    def make(np_, lax_):
        def loss(z, y):
            z = z - z.max(axis=1, keepdims=True)
            logp = z - np_.log(np_.exp(z).sum(axis=1, keepdims=True))
            return -np_.take_along_axis(logp, y[:, None], axis=1).mean()
        return loss
    return _both(make, logits, labels)


def make_rnn_scan(steps=200, batch=32, hidden=128):
    """A tanh RNN over ``steps`` inputs by ``lax.scan``; the final state."""
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    u = (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
    xs = rng.standard_normal((steps, batch, hidden)).astype(np.float32)
    h0 = np.zeros((batch, hidden), np.float32)

    def make(np_, lax_):
        def run(w, u, xs, h0):
            def step(h, x):
                h = np_.tanh(h @ w + x @ u)
                return h, None
            return lax_.scan(step, h0, xs)[0]
        return run
    return _both(make, w, u, xs, h0)


WORKLOADS = {"fori_loop + sort(16)": make_fori_sort, "conv 3x3 64ch 32x32 b8": make_conv2d,
             "tanh 1e6 f32": make_tanh, "sin 1e6 f32": make_sin, "cos 1e6 f32": make_cos,
             "sin 1e6 f64": lambda: make_sin(np.float64),
             "cos 1e6 f64": lambda: make_cos(np.float64), "selu 1e6 f16": make_selu_f16,
             "top_k(10) 2000x1000 f32": make_top_k,
             "segment scatter-add 1e5x64 -> 1000": make_segment_sum,
             "convolve 1e5 x 101 same": make_convolve, "solve 64 x 32x32": make_solve,
             "Newton: solve in fori_loop(20), 8x8": make_newton,
             "rfft 2^20 f32": make_rfft, "Horner deg 12 1e6 f64": make_horner64,
             "cross-entropy 1024x1000 take_along_axis": make_cross_entropy,
             "RNN scan 200 x 32x128": make_rnn_scan}
