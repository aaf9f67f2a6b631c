"""Compile the cuda backend's kernels to PTX for a real GPU, without a GPU.

Numba's CUDA simulator runs kernels as Python, so it never types them; this script
does: it lowers a few programs (tree, column and serial reductions with warp shuffles,
fused nests, copies, the tiled product) to loop IR, renders every kernel exactly as the
backend does for a GPU, and compiles each with ``numba.cuda.compile_ptx`` for the given
compute capability. It needs NVVM and libdevice (a CUDA toolkit, or the
``nvidia-nvvm``, ``nvidia-cuda-nvrtc`` and ``nvidia-cuda-runtime`` wheels with
``CUDA_HOME`` pointing at them) but no driver and no device.

Usage: ``python scripts/cuda_ptx_check.py [--cc 9.0]``; exit status 0 when every kernel
compiled. ``scripts/gpu_check.sh`` runs it first.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import absjit  # noqa: E402
import absjit.numpy as jnp  # noqa: E402
from absjit.backends.base import CompileOptions  # noqa: E402
from absjit.backends.numba_cuda import dot_epilogue as DE, kernels as K  # noqa: E402
from absjit.backends.numba_cuda import loop_kernels as LK  # noqa: E402
from absjit.backends.numba_cuda import runtime as rt  # noqa: E402
from absjit.compiler import compile_to_ir, ir  # noqa: E402

THREADS = 256


def _float_ops(x):
    from absjit import lax, nn
    pos = jnp.abs(x) + 0.5
    return (jnp.sin(x), jnp.cos(x), jnp.tan(x), jnp.exp(x), jnp.log(pos), jnp.tanh(x),
            jnp.sqrt(pos), lax.rsqrt(pos), jnp.expm1(x), jnp.log1p(pos), jnp.exp2(x),
            jnp.cbrt(x), jnp.floor(x), jnp.ceil(x), jnp.round(x), jnp.sign(x),
            jnp.arctan2(x, pos), jnp.sinh(x), jnp.arcsinh(x), jnp.arctan(x),
            nn.sigmoid(x), jnp.isfinite(x), x ** 3, pos ** x, jnp.fmod(x, 0.7),
            jnp.maximum(x, 0.0), x.astype(jnp.int32), x.astype(jnp.uint8),
            lax.round(x))


def _loops(x, n):
    from absjit import lax
    collatz = lax.while_loop(lambda c: c[0] != 1, lambda c: (
        jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1), (n, 0))[1]
    i, v = lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x))
    s = lax.fori_loop(0, 20, lambda k, a: a * 0.5 + jnp.sin(a + k), x[0, 0])
    return collatz, x * i + v, lax.scan(lambda c, t: (c * t + 1.0, c - t), s, x[:5, 0])


def programs():
    """``(name, function, example arguments)`` covering every kernel family."""
    x, y = np.ones((300, 5), np.float32), np.ones((5, 3000), np.float32)
    a = np.ones((4, 700), np.int8)
    return [
        ("tree/columns/serial reductions", lambda x, y: (
            x.sum(0), y.sum(1), y.max(), jnp.argmax(x, 0), (y > 0).any(1), x.sum(1)), (x, y)),
        ("small-int and bool accumulators", lambda a: (
            a.sum(1), a.max(), (a > 0).all(1), a.astype(jnp.uint32).min(1)), (a,)),
        ("float elementwise", _float_ops, (x,)),
        ("integer elementwise", lambda a: (
            a // 3, a % 3, a * a - 3, abs(a), -a, a << 2, a >> 1, a & 5, ~a,
            jnp.maximum(a, 2), jnp.sign(a), a.astype(jnp.float32)), (a.astype(np.int32),)),
        ("loops in one kernel", _loops, (x, np.int32(27))),
        ("fused elementwise and copies", lambda x: (
            jnp.exp(jnp.sin(x) * 2.0) // 3.0, x.T, x[::-1] + 1), (x,)),
    ]


def numba_sig(params, extra=()):
    import numba
    types = []
    for p in params:
        if isinstance(p, tuple):  # a loop variable of the host
            types.append(numba.int64)
        elif isinstance(p, ir.Buffer):
            types.append(numba.types.Array(numba.from_dtype(p.dtype), p.ndim, "C"))
        else:
            types.append(numba.from_dtype(p.dtype))
    return tuple(types) + tuple(extra)


def kernels_of(program):
    """``(source, signature)`` of every kernel the backend launches for ``program``
    (split into one kernel per loop nest first, as the backend does)."""
    import numba

    from absjit.compiler.rows import unfused
    program = unfused(program)
    out = []
    uses = LK.use_counts(program)
    loops = set()
    for s in ir.walk(program.body):
        if isinstance(s, (ir.While, ir.ForRange)) and not loops & {id(s)}:
            spilled = LK.escaping_syms(s, uses)
            spill_t = tuple(numba.types.Array(numba.from_dtype(v.dtype), 1, "C")
                            for v in spilled)
            shape = LK.elementwise_shape(s)
            if LK.is_scalar_loop(s):
                src, params = LK.render_scalar_loop(s, spilled, lambda v: True)
            elif shape is not None:
                src, params, _ = LK.render_elementwise_loop(s, shape, spilled, lambda v: True)
            else:
                continue
            out.append((src, numba_sig(params, spill_t)))
            loops.update(id(t) for t in ir.walk([s]))  # its statements are in the kernel
        elif id(s) in loops:
            continue
        elif isinstance(s, ir.Nest) and s.vars:
            src, params, _ = K.render_nest(s)
            out.append((src, numba_sig(params)))
        elif isinstance(s, ir.Copy):
            src, params, _ = K.render_copy(s)
            out.append((src, numba_sig(params)))
        elif isinstance(s, ir.Reduce):
            kind, nk, nr, per = K.reduce_plan(s, THREADS, 132 * 32)
            acc = numba.types.Array(numba.from_dtype(np.dtype(s.monoid.acc_dtype)), 1, "C")
            out_t = numba_sig([s.out])
            if kind == "serial":
                src, params, _ = K.render_serial_reduce(s)
                out.append((src, numba_sig(params)))
            elif kind == "columns":
                first, params, second = K.render_column_reduce(s, THREADS, per)
                out += [(first, numba_sig(params, (acc,))), (second, out_t + (acc,))]
            else:
                first, params, second = K.render_reduce(s, THREADS, per)
                out.append((first, numba_sig(params, (acc,) if second else ())))
                if second:
                    out.append((second, out_t + (acc,)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default="9.0", help="compute capability (default 9.0)")
    args = ap.parse_args(argv)
    cc = tuple(int(v) for v in args.cc.split("."))
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)  # real kernels, before numba.cuda loads
    cuda = rt.cuda_module()
    if cuda is None:
        print("numba-cuda is not installed")
        return 2
    # numba-cuda compiles a kernel's device functions for the current device's compute
    # capability; without a device, name the one asked for.
    import types
    from numba.cuda import dispatcher
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    ns = rt.kernel_namespace()
    failures, count, shuffles = 0, 0, 0
    for name, fn, example in programs():
        program = compile_to_ir(absjit.make_jaxpr(fn)(*example), CompileOptions())
        for src, sig in kernels_of(program):
            env = dict(ns)
            exec(compile(src, "<absjit cuda kernel>", "exec"), env)  # noqa: S102
            count += 1
            try:
                ptx, _ = cuda.compile_ptx(env["kernel"], sig, cc=cc)
            except Exception as e:  # noqa: BLE001 - report every failing kernel
                failures += 1
                print(f"FAILED ({name}):\n{src}\n{type(e).__name__}: {e}\n")
                continue
            shuffles += "shfl.sync.down" in ptx
    for trans_a in (False, True):
        for dt in ("float32", "int32"):
            src = K.dot_source(trans_a, not trans_a, dt, 16)
            env = dict(ns)
            exec(compile(src, "<absjit cuda kernel>", "exec"), env)  # noqa: S102
            import numba
            arr = numba.types.Array(numba.from_dtype(np.dtype(dt)), 3, "A")
            count += 1
            try:
                cuda.compile_ptx(env["kernel"], (arr, arr, arr) + (numba.int64,) * 4, cc=cc)
            except Exception as e:  # noqa: BLE001
                failures += 1
                print(f"FAILED (dot_general {dt}):\n{src}\n{type(e).__name__}: {e}\n")
    # the product with a fused epilogue (bias, relu, scaling)
    import numba
    a, b, bias = np.ones((5, 9), np.float32), np.ones((9, 6), np.float32), np.ones(6, np.float32)
    program = compile_to_ir(absjit.make_jaxpr(
        lambda a, b, c: jnp.maximum(a @ b + c, 0.0) * 2.0)(a, b, bias), CompileOptions())
    k = next(i for i, s in enumerate(program.body) if isinstance(s, ir.Opaque))
    alias, nest = DE.match(program.body, k, LK.use_counts(program))
    lines, params, names = DE.render_epilogue(program.body[k].outs[0], alias, nest)
    src = K.dot_source(False, False, "float32", 16, (lines, names))
    env = dict(ns)
    exec(compile(src, "<absjit cuda kernel>", "exec"), env)  # noqa: S102
    f3 = numba.types.Array(numba.float32, 3, "A")
    count += 1
    try:
        cuda.compile_ptx(env["kernel"], (f3, f3, f3) + (numba.int64,) * 4 + (
            numba.types.Array(numba.float32, 2, "C"),) + numba_sig(params), cc=cc)
    except Exception as e:  # noqa: BLE001
        failures += 1
        print(f"FAILED (dot_general with epilogue):\n{src}\n{type(e).__name__}: {e}\n")
    print(f"{count - failures} of {count} kernels compiled to PTX for sm_{cc[0]}{cc[1]} "
          f"({shuffles} with warp shuffles)")
    return 1 if failures or not shuffles else 0


if __name__ == "__main__":
    sys.exit(main())
