"""The ``cuda`` backend (alias ``gpu``): the loop IR as Numba CUDA kernels and a host
driver that launches them.

``compile``:

1. ``absjit.compiler`` lowers the jaxpr to loop IR (the same plan and IR as the cpu
   backend: elementwise chains fuse the same way);
2. every top-level loop nest, reduction and copy becomes one ``numba.cuda.jit`` kernel
   (:mod:`.kernels`), compiled once per distinct source in this process;
3. the rest of the program becomes a **driver**, a plain Python function rendered from
   the IR: it allocates device buffers, launches the kernels (asynchronously), runs
   control flow on the host (``cond``/``while`` read their device scalar once per
   decision, which synchronises), and runs whole-array operations: ``dot_general``
   through CuPy/cuBLAS when CuPy is installed, else a tiled shared-memory kernel;
   ``concatenate``, ``pad``, ``dynamic_update_slice``, the scatters and cumulative
   reductions as device kernels (:mod:`.array_ops`); the others (``sort``, ``fft``,
   linear algebra, a contraction over several dimensions…) through their NumPy
   implementation on host copies, with one warning per primitive;
4. a program holding a dtype or primitive the device cannot run (float16, complex)
   runs on the ``cpu`` backend with host copies of its arrays (one warning per name).

Buffers in and out are device arrays; NumPy inputs are copied to the device once per
call. Outputs are freshly allocated by the driver and handed out only when it returns,
so a failed launch never exposes a half-written result.
"""
from __future__ import annotations

import hashlib
import time
import warnings

import numpy as np

from ..._version import __version__
from ..._device import Device
from ...array import Array
from ...compiler import Unsupported, compile_to_ir, ir
from ...compiler.rows import unfused
from ...core.primitive import impl_rules
from ...core.specialize import is_symbolic_jaxpr
from ...core.trace import Tracer, to_numpy
from ...dtypes import is_weakly_typed
from ..base import Backend, Executable, PerShapeExecutable, get_backend
from ..sources import source_hash

# The device kernels compute in these: the cpu backend's types but complex, whose
# arithmetic there calls host helpers (NumPy's division and ordering) that CUDA kernels
# cannot call.
SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64))
from ..numba.render import FunctionRenderer, shape_text
from . import kernels as K
from . import dot_epilogue as DE
from . import loop_kernels as LK
from .array_ops import array_ops
from . import runtime as rt
from .array import CudaArray

__all__ = ["CudaBackend", "CudaExecutable", "render_driver"]


def _package_hash() -> str:
    """This backend's sources, the compiler's, and those shared by the Numba backends
    (:mod:`absjit.backends.numba`: the renderer, scalar spellings, Threefry), as
    :func:`absjit.backends.sources.source_hash`."""
    return source_hash(__package__, also=("absjit.compiler", "absjit.backends.numba"))


DISK_DIR = "numba_cuda"  # this backend's folder in the disk cache


class _Launch:
    """One kernel launch with sizes fixed at compile time: ``launch(*device arrays)``.
    The first launch compiles the kernel for its argument types (numba-cuda compiles
    lazily); when the kernel is disk-cached, the files it wrote are authenticated
    then."""

    __slots__ = ("kernel", "blocks", "threads", "source", "configured", "first", "stats")

    def __init__(self, kernel, blocks, threads, source, stats):
        self.kernel, self.blocks, self.threads, self.source = kernel, blocks, threads, source
        self.configured = _configure(kernel, blocks, threads)  # once, not per launch
        self.first = getattr(kernel, "absjit_module", None) is not None
        self.stats = stats  # the backend's counters: "launches" counts every launch

    def __call__(self, *args):
        self.stats["launches"] += 1
        self.configured(*args)
        if self.first:
            self.first = False
            _authenticate(self.kernel)


def _configure(kernel, blocks, threads):
    """``kernel[blocks, threads]``, made once. numba-cuda warns about a small grid when
    it is made (``NumbaPerformanceWarning``); a small program's grid is small on purpose.
    The simulator's kernels keep one configuration (``kernel[...]`` sets it on the
    kernel itself), so there it is set at every launch."""
    if rt.simulator():
        return lambda *args: kernel[blocks, threads](*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kernel[blocks, threads]


def _authenticate(kernel) -> None:
    """MAC the disk-cache files a kernel's first compile wrote (if it is disk-cached)."""
    module = getattr(kernel, "absjit_module", None)
    if module is not None:
        from .. import diskcache
        diskcache.record_mac(module, DISK_DIR)


class _TreeLaunch:
    """A tree reduction: the block kernel, then (several blocks per output) the kernel
    folding the partials."""

    def __init__(self, first, second, nk, per, acc_dtype, out_index):
        self.first, self.second, self.nk, self.per = first, second, nk, per
        self.acc_dtype = np.dtype(acc_dtype)
        self.out_index = out_index  # which argument is the reduction's output

    def __call__(self, *args):
        if self.second is None:
            self.first(*args)
            return
        partial = rt.empty((self.nk * self.per,), self.acc_dtype)
        self.first(*args, partial)
        self.second(args[self.out_index], partial)


class _DotOp:
    """``dot_general`` with one contracting dimension, leading batch dimensions (or
    none) and operands of at most 2 dimensions besides them: CuPy's matmul (cuBLAS)
    when CuPy is installed and the dtype is a float, else the tiled kernel. Operands
    are viewed as ``(batch, M, K)`` and ``(batch, K, N)`` stacks (a transpose is read
    in place, never copied)."""

    def __init__(self, backend, stmt, fastmath=False, epilogue=None):
        (lc, rc), (lb, _) = stmt.params["dimension_numbers"]
        la, ra = stmt.in_avals
        nb = len(lb)
        self.out_shape = tuple(stmt.out_avals[0].shape)
        self.dtype = np.dtype(stmt.out_avals[0].dtype)
        self.B = _prod(la.shape[:nb])
        sa, sb = tuple(la.shape[nb:]), tuple(ra.shape[nb:])
        ca, cb = lc[0] - nb, rc[0] - nb
        self.trans_a = len(sa) == 2 and ca == 0
        self.trans_b = len(sb) == 2 and cb == 1
        self.K = sa[ca]
        self.M = sa[1 - ca] if len(sa) == 2 else 1
        self.N = sb[1 - cb] if len(sb) == 2 else 1
        self.a3 = (self.B,) + ((1, self.K) if len(sa) == 1 else sa)
        self.b3 = (self.B,) + ((self.K, 1) if len(sb) == 1 else sb)
        self.cupy = _cupy() if self.dtype.kind == "f" and not rt.simulator() else None
        self.tile = 4 if rt.simulator() else 16
        self.fused = epilogue is not None and self.cupy is None
        if self.cupy is None:
            src = K.dot_source(self.trans_a, self.trans_b, self.dtype, self.tile,
                               epilogue if self.fused else None)
            t = self.tile
            grid = (-(-self.N // t), -(-self.M // t), min(self.B, 65535))
            self.kernel = backend.kernel(src, fastmath)
            self.stats = backend.stats
            self.configured = _configure(self.kernel, grid, (t, t))
            self.first = True
            self.source = src
        else:
            self.source = "# dot_general: cupy.matmul (cuBLAS)\n"

    def __call__(self, a, b, *extra):
        out = rt.empty(self.out_shape, self.dtype)
        a3, b3 = a.reshape(self.a3), b.reshape(self.b3)
        o3 = out.reshape((self.B, self.M, self.N))
        if self.cupy is not None:
            cp = self.cupy
            ca, cb = cp.asarray(a3), cp.asarray(b3)
            cp.matmul(ca.swapaxes(1, 2) if self.trans_a else ca,
                      cb.swapaxes(1, 2) if self.trans_b else cb, out=cp.asarray(o3))
            return (out,)
        self.stats["launches"] += 1
        if self.fused:
            extra = (out,) + extra
        self.configured(a3, b3, o3, self.M, self.N, self.K, self.B, *extra)
        if self.first:
            self.first = False
            _authenticate(self.kernel)
        return (out,)


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= int(x)
    return n


def _cupy():
    try:
        import cupy
    except Exception:  # noqa: BLE001 - CuPy is optional
        return None
    return cupy


def _dot_fits(stmt) -> bool:
    """Whether :class:`_DotOp` computes this ``dot_general``: one contracting dimension,
    batch dimensions leading in both operands, one dtype throughout (not bool)."""
    (lc, rc), (lb, rb) = stmt.params["dimension_numbers"]
    la, ra = stmt.in_avals
    nb = len(lb)
    dt = np.dtype(stmt.out_avals[0].dtype)
    return (tuple(lb) == tuple(rb) == tuple(range(nb)) and len(lc) == 1
            and la.ndim - nb in (1, 2) and ra.ndim - nb in (1, 2) and lc[0] >= nb
            and rc[0] >= nb and dt.kind in "fiu" and np.dtype(la.dtype) == dt
            and np.dtype(ra.dtype) == dt)


class _HostOp:
    """A whole-array primitive through its NumPy implementation on host copies."""

    def __init__(self, stmt):
        self.impl = impl_rules[stmt.prim]
        self.params = dict(stmt.params)
        self.dtypes = [np.dtype(a.dtype) for a in stmt.out_avals]
        self.source = f"# {stmt.prim.name}: NumPy on host copies\n"

    def __call__(self, *ins):
        outs = self.impl(*[rt.to_host(b) for b in ins], **self.params)
        return tuple(rt.to_device(np.asarray(o, dtype=dt)) for o, dt in zip(outs, self.dtypes))


class DriverRenderer(FunctionRenderer):
    """Writes the host driver. Scalar code runs as Python with the cpu spellings; array
    statements become calls of launch objects (``_k0`` …) held in the driver's globals."""


    def __init__(self, backend, fastmath=False):
        super().__init__(parallel_ok=False)
        self.backend = backend
        self.fastmath = bool(fastmath)
        self.env: dict = {}
        self.kernel_sources: list = []
        self.host_prims: list = []
        self.uses = None  # use counts of the program (set by render_driver)

    def _callable(self, obj, source) -> str:
        name = f"_k{len(self.env)}"
        self.env[name] = obj
        self.kernel_sources.append(f"# {name}\n{source}")
        return name

    def expr(self, e, dtype):
        if isinstance(e, ir.Load):  # a device scalar read on the host: synchronises
            return f"_load({self.name(e.buf)}, ({''.join(self._ix(i) + ', ' for i in e.index)}))"
        return super().expr(e, dtype)

    def _args(self, params) -> str:
        return ", ".join(self.loop_var(v[1]) if isinstance(v, tuple) else self.value(v)
                         for v in params)

    def block(self, stmts, depth):
        skip = set()
        for k, s in enumerate(stmts):
            if id(s) in skip:
                continue
            fused = self.fused_dot(stmts, k, depth)
            if fused is not None:
                skip.add(id(fused))  # the epilogue nest ran inside the product
                continue
            self.stmt(s, depth)

    def fused_dot(self, stmts, k, depth):
        """Render ``stmts[k]``, a tiled ``dot_general``, with the nest after it as its
        epilogue (:mod:`.dot_epilogue`); returns that nest, or None (nothing
        rendered) when the pattern does not apply."""
        s = stmts[k]
        if self.uses is None or not isinstance(s, ir.Opaque) or \
                s.prim.name != "dot_general" or not _dot_fits(s) or \
                (_cupy() is not None and not rt.simulator()):
            return None
        found = DE.match(stmts, k, self.uses)
        if found is None:
            return None
        alias, nest = found
        lines, params, names = DE.render_epilogue(s.outs[0], alias, nest)
        self.prims.add(s.prim.name)
        op = _DotOp(self.backend, s, self.fastmath, (lines, names))
        name = self._callable(op, op.source)
        args = ", ".join([self.name(v) for v in s.ins] + [self._args(params)])
        self.emit(f"({self.name(s.outs[0])}, ) = {name}({args.rstrip(', ')})", depth)
        return nest

    def stmt(self, s, depth):
        b = self.backend
        if isinstance(s, ir.Alloc):
            self.emit(f"{self.name(s.buf)} = _empty({shape_text(s.buf.shape)}, "
                      f"_dt('{np.dtype(s.buf.dtype).name}'))", depth)
        elif isinstance(s, ir.Store):
            idx = "".join(self._ix(i) + ", " for i in s.index)
            self.emit(f"_store({self.name(s.buf)}, ({idx}), {self.value(s.value)})", depth)
        elif isinstance(s, ir.Nest) and not s.vars:
            # A rank-0 nest is scalar code (a loop counter, a carry, a branch index):
            # it runs on the host, and the scalars it defines stay host values.
            self.block(s.body, depth)
        elif isinstance(s, ir.Nest):
            src, params, n = K.render_nest(s)
            self._launch(src, params, n, depth)
        elif isinstance(s, ir.Copy):
            src, params, n = K.render_copy(s)
            self._launch(src, params, n, depth)
        elif isinstance(s, ir.Reduce):
            self.reduce_stmt(s, depth)
        elif isinstance(s, ir.Opaque):
            self.prims.add(s.prim.name)
            if s.prim.name == "dot_general" and _dot_fits(s):
                op = _DotOp(b, s, self.fastmath)
            elif s.prim in array_ops:
                op = array_ops[s.prim](b, s, self.fastmath, **s.params)
            else:
                op = _HostOp(s)
                self.host_prims.append(s.prim.name)
            name = self._callable(op, op.source)
            outs = "".join(self.name(v) + ", " for v in s.outs)
            self.emit(f"({outs}) = {name}({', '.join(self.name(v) for v in s.ins)})", depth)
        elif isinstance(s, ir.ConstArray):
            name = self._callable(rt.to_device(np.asarray(s.value, dtype=s.buf.dtype)
                                               .reshape(tuple(s.buf.shape))), "# constant")
            self.emit(f"{self.name(s.buf)} = {name}", depth)
        elif isinstance(s, ir.CallPiece):
            raise Unsupported(["an outlined piece"])
        elif not (isinstance(s, (ir.While, ir.ForRange)) and self.loop_kernel(s, depth)):
            super().stmt(s, depth)

    def loop_kernel(self, s, depth) -> bool:
        """Launch the loop ``s`` as one kernel when :mod:`.loop_kernels` allows; False
        when it stays on the host."""
        if self.uses is None:
            return False
        scalar = LK.is_scalar_loop(s)
        shape = None if scalar else LK.elementwise_shape(s)
        if not scalar and shape is None:
            return False
        spilled = LK.escaping_syms(s, self.uses)

        def defined_before(sym):
            return id(sym) in self.names
        if scalar:
            src, params = LK.render_scalar_loop(s, spilled, defined_before)
            blocks, threads = 1, 1
        else:
            src, params, n = LK.render_elementwise_loop(s, shape, spilled, defined_before)
            blocks, threads = rt.launch_shape(n)
        launch = _Launch(self.backend.kernel(src, self.fastmath), blocks, threads, src,
                         self.backend.stats)
        name = self._callable(launch, src)
        spills = []
        for sym in spilled:
            buf = self.fresh("spill")
            self.emit(f"{buf} = _empty((1,), _dt('{np.dtype(sym.dtype).name}'))", depth)
            spills.append(buf)
        args = [self._args(params)] + spills
        self.emit(f"{name}({', '.join(a for a in args if a)})", depth)
        for sym, buf in zip(spilled, spills):  # read once, after the whole loop
            self.emit(f"{self.name(sym)} = _load({buf}, (0,))", depth)
        return True

    def _launch(self, src, params, n, depth):
        blocks, threads = rt.launch_shape(n)
        launch = _Launch(self.backend.kernel(src, self.fastmath), blocks, threads, src,
                         self.backend.stats)
        name = self._callable(launch, src)
        self.emit(f"{name}({self._args(params)})", depth)

    def reduce_stmt(self, s, depth):
        b = self.backend
        threads = rt.threads_per_block()
        max_blocks = rt.launch_shape(1 << 40)[0]
        kind, nk, nr, per = K.reduce_plan(s, threads, max_blocks)
        if kind == "serial":
            src, params, n = K.render_serial_reduce(s)
            self._launch(src, params, n, depth)
            return
        if kind == "columns":
            first_src, params, second_src = K.render_column_reduce(s, threads, per)
            blocks, _ = rt.launch_shape(nk * per)
            first = _Launch(self.backend.kernel(first_src, self.fastmath), blocks, threads,
                            first_src, b.stats)
            second = _Launch(self.backend.kernel(second_src, self.fastmath),
                             min(nk, max_blocks), threads, second_src, b.stats)
            out_index = next(i for i, v in enumerate(params) if v is s.out)
            tree = _TreeLaunch(first, second, nk, per, s.monoid.acc_dtype, out_index)
            name = self._callable(tree, first_src + second_src)
            self.emit(f"{name}({self._args(params)})", depth)
            return
        first_src, params, second_src = K.render_reduce(s, threads, per)
        first = _Launch(self.backend.kernel(first_src, self.fastmath),
                        min(nk * per, max_blocks), threads, first_src, b.stats)
        second = None
        if second_src is not None:
            b2, t2 = rt.launch_shape(nk)
            second = _Launch(self.backend.kernel(second_src, self.fastmath), b2, t2,
                             second_src, b.stats)
        out_index = next(i for i, v in enumerate(params) if v is s.out)
        tree = _TreeLaunch(first, second, nk, per, s.monoid.acc_dtype, out_index)
        name = self._callable(tree, first_src + (second_src or ""))
        self.emit(f"{name}({self._args(params)})", depth)


def _load(buf, index):
    if not index:
        return buf.reshape((1,))[0]
    return buf[index]


def _store(buf, index, value):
    if not index:
        buf.reshape((1,))[0] = value
    else:
        buf[index] = value


def render_driver(backend, program, fastmath=False) -> tuple:
    """``(driver function, text, renderer)`` for ``program``: text is the driver's
    source then every kernel's."""
    r = DriverRenderer(backend, fastmath)
    r.uses = LK.use_counts(program)
    pnames = r.bind_params(program.params)
    r.block(program.body, 1)
    rets = [r.value(v) for v in program.outputs]
    r.emit(f"return ({''.join(x + ', ' for x in rets)})", 1)
    src = f"def driver({', '.join(pnames)}):\n" + "\n".join(r.lines) + "\n"
    env = dict(rt.host_namespace())
    env.update(r.env)
    stats = backend.stats

    def load(buf, index):
        stats["scalar_transfers"] += 1
        return _load(buf, index)

    def store(buf, index, value):
        stats["scalar_transfers"] += 1
        _store(buf, index, value)
    env.update(_load=load, _store=store, _empty=rt.empty, _dt=np.dtype)
    exec(compile(src, "<absjit cuda driver>", "exec"), env)  # noqa: S102 - our own source
    text = "# driver (host Python)\n" + src + "\n" + "\n".join(r.kernel_sources)
    return env["driver"], text, r


class CudaExecutable(Executable):
    """A compiled program: device buffers in (NumPy arrays are copied to the device),
    device arrays out."""

    array_type = CudaArray

    def __init__(self, driver, text, in_avals, program):
        self._driver = driver
        self.source = text
        self.program = program
        self._avals = [(np.dtype(a.dtype), tuple(a.shape)) for a in in_avals]

    def __call__(self, *buffers):
        if len(buffers) != len(self._avals):
            raise TypeError(f"expected {len(self._avals)} buffers, got {len(buffers)}")
        bufs = []
        for k, (b, (dt, shape)) in enumerate(zip(buffers, self._avals)):
            d = rt.as_device(b, dt)
            if tuple(d.shape) != shape:
                raise ValueError(f"argument {k} must have shape {shape}, got {tuple(d.shape)}")
            bufs.append(d)
        return list(self._driver(*bufs))

    def as_text(self) -> str:
        return self.source

    def ir_text(self) -> str:
        from ...compiler import pformat
        return pformat(self.program)


class _HostExecutable(Executable):
    """Runs another backend's executable on host copies; outputs go back to the device."""

    array_type = CudaArray

    def __init__(self, inner, reason, dtypes):
        self._inner, self.reason, self._dtypes = inner, reason, dtypes

    def __call__(self, *buffers):
        host = []
        for x, dt in zip(buffers, self._dtypes):
            buf = x._buf if isinstance(x, CudaArray) else None
            if buf is None and rt.is_device_array(x):
                buf = x
            value = rt.to_host(buf) if buf is not None else np.asarray(
                getattr(x, "_value", x))
            host.append(np.asarray(value, dtype=dt))
        return [rt.to_device(np.asarray(o)) for o in self._inner(*host)]

    def as_text(self) -> str:
        return f"# runs on the host (no device lowering for {self.reason})\n" + \
            self._inner.as_text()


class CudaBackend(Backend):
    """Compiles a jaxpr to Numba CUDA kernels launched by a host driver."""

    name = "cuda"
    platforms = ("gpu",)
    platform = "gpu"

    def __init__(self):
        super().__init__()
        self._kernels: dict = {}
        # Device work counters: kernel launches, and scalar reads/writes of device
        # memory by the driver (each one a transfer; a read synchronises).
        self.stats.update(launches=0, scalar_transfers=0)

    def is_available(self) -> bool:
        return rt.unavailable_reason() is None

    def unavailable_reason(self):
        """Why this backend cannot run here and what to install (None when it can)."""
        return rt.unavailable_reason()

    def clear_memory(self) -> None:
        with self._lock:
            self._kernels.clear()

    def version_key(self) -> tuple:
        from .compat import numba_cuda_version
        return ("absjit", __version__, "numba_cuda", _package_hash(), numba_cuda_version(),
                rt.device_info()["cc"])

    def to_buffer(self, value):
        return rt.as_device(value)

    # -- arrays on the GPU ------------------------------------------------------------
    def devices(self) -> list:
        return gpu_devices()

    def put(self, leaf, device=None):
        if isinstance(leaf, CudaArray):
            return leaf
        if rt.is_device_array(leaf) and not isinstance(leaf, Array):
            return rt.put(leaf)  # another library's device array: no copy
        return rt.put(to_numpy(leaf), is_weakly_typed(leaf))

    def adopt(self, leaf):
        if isinstance(leaf, Tracer) or not rt.is_device_array(leaf):
            return None
        if not self.is_available():
            raise self.unavailable_error()
        return rt.put(leaf)

    def kernel(self, source: str, fastmath: bool = False):
        """The ``cuda.jit`` dispatcher of a kernel's source, once per source, flags and
        device in this process (the key holds the compute capability and the
        numba-cuda version), and on a GPU also in the disk cache (:meth:`_load`)."""
        key = "\n".join([repr(self.version_key()), f"fastmath={bool(fastmath)}", source])
        digest = hashlib.sha256(key.encode()).hexdigest()[:32]
        with self._lock:
            hit = self._kernels.get(digest)
            if hit is not None:
                self.stats["memory_hits"] += 1
                return hit
            t0 = time.perf_counter()
            disp = self._load(f"absjit_cuda_{digest}", source, bool(fastmath))
            self._kernels[digest] = disp
            self.stats["compiles"] += 1
            self.stats["compile_seconds"] += time.perf_counter() - t0
        return disp

    def _load(self, module_name, source, fastmath):
        """A dispatcher for ``source``. On a GPU with a usable disk cache the source is a
        real module file under ``<cache root>/numba_cuda/`` and numba-cuda's kernel cache
        is pinned beside it; its files are read only after their MAC checks out
        (:mod:`absjit.backends.diskcache`) and authenticated after each compile
        (:class:`_Launch`). The simulator has no compiled code to cache."""
        from . import compat
        from .. import diskcache
        cuda = rt.cuda_module()
        path = f"<absjit cuda kernel {module_name}>"
        use_disk = not rt.simulator() and diskcache.usable(DISK_DIR)
        text = f"# absjit cuda kernel {module_name}\n" + source
        if use_disk:
            try:
                path = diskcache.write_module(module_name, text, DISK_DIR)
                diskcache.verify_or_purge(module_name, DISK_DIR)
            except OSError:
                use_disk = False
        env = dict(rt.kernel_namespace())
        exec(compile(text, path, "exec"), env)  # noqa: S102 - our own source
        disp = cuda.jit(fastmath=fastmath)(env["kernel"])
        if use_disk:
            try:
                compat.pin_cuda_disk_cache(disp, diskcache.numba_dir(DISK_DIR))
                disp.absjit_module = module_name  # _Launch authenticates new files
            except Exception:  # noqa: BLE001 - numba-cuda internals moved: no disk cache
                pass
        return disp

    def fallback(self, closed_jaxpr, options, names, stacklevel=4):
        """The program runs on the ``cpu`` backend (``interpret`` without Numba) with
        host copies of its arrays; one warning per primitive or dtype."""
        with self._lock:
            self.stats["fallbacks"] += 1
        host = "cpu" if _cpu_available() else "interpret"
        self.warn_once(names, f"functions using it run on the {host} backend (arrays are "
                       "copied to the host and back)", stacklevel + 1)
        inner = get_backend(host).compile(closed_jaxpr, options)
        jaxpr = closed_jaxpr.jaxpr
        dtypes = [np.dtype(v.aval.dtype) for v in jaxpr.constvars + jaxpr.invars]
        return _HostExecutable(inner, ", ".join(names), dtypes)

    def compile(self, closed_jaxpr, options) -> Executable:
        if is_symbolic_jaxpr(closed_jaxpr.jaxpr):
            # ranked: kernels and launch sizes are made for concrete shapes, so each
            # new shape compiles once (one jit entry still serves every size)
            return PerShapeExecutable(self, closed_jaxpr, options, array_type=CudaArray)
        try:
            # One kernel per loop nest: row loops and sibling reductions are split.
            program = unfused(compile_to_ir(closed_jaxpr, options))
            _check_dtypes(program)
            driver, text, r = render_driver(self, program, options.fastmath)
        except Unsupported as e:
            return self.fallback(closed_jaxpr, options, e.names)
        if r.host_prims:
            self.warn_once(sorted(set(r.host_prims)), "it runs through its NumPy "
                           "implementation on host copies between kernels", 4)
        header = "\n".join(f"# {line}" for line in program.source.splitlines()) + "\n"
        in_avals = [v.aval for v in closed_jaxpr.jaxpr.constvars + closed_jaxpr.jaxpr.invars]
        return CudaExecutable(driver, header + text, in_avals, program)


_GPUS: list = []


def gpu_devices() -> list:
    """The GPUs (platform ``"gpu"``, printed ``CudaDevice(id=...)`` as in JAX); the
    backend's unavailable error, naming what to install, when it cannot run here."""
    if not _GPUS:
        backend = get_backend("cuda")  # raises, with the reason, when it cannot run here
        _GPUS.extend(Device(i, "gpu", name, backend=backend.name, label="Cuda")
                     for i, name in enumerate(rt.device_names()))
    return list(_GPUS)


def _cpu_available() -> bool:
    from ..base import available_backends
    return "cpu" in available_backends()


def _check_dtypes(program):
    dtypes = {np.dtype(b.dtype) for b in program.params}
    for st in ir.walk(program.body):
        for v in ir.stmt_defs(st):
            dtypes.add(np.dtype(v.dtype))
    bad = [f"dtype {d.name}" for d in dtypes if d not in SUPPORTED_DTYPES]
    if bad:
        raise Unsupported(bad)
