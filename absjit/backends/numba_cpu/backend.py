"""The ``cpu`` backend: the loop IR rendered as Python and compiled by Numba, in pieces.

``compile``:

1. ``absjit.compiler`` lowers the jaxpr to loop IR and optimises it;
2. float16/bfloat16 values are rewritten to ``uint16`` storage computed in float32
   (:mod:`.half`); a program with anything this backend still does not render runs on
   another backend (``Backend.fallback``);
3. a small program is rendered as one function; a large one is cut into pieces
   (:func:`absjit.compiler.pieces.split_program`), each rendered with canonical names
   and compiled once per distinct source — equal loop nests in one program, or in two
   programs, share one compiled function — plus a driver that checks the argument
   shapes and calls the pieces;
4. every function is looked up by the hash of its source, signature, flags and
   versions: first in this process, then in the disk cache (Numba's ``cache=True`` on a
   real module file, :mod:`absjit.backends.diskcache`), and only then compiled.
"""
from __future__ import annotations

import collections
import gc
import hashlib
import importlib.util
import logging
import math
import pickle
import re
import time
import weakref

import numpy as np

from ..._version import __version__
from ...compiler import Unsupported, compile_to_ir, ir
from ...compiler.passes import hoist_invariants
from ...compiler.pieces import outline_loops, split_program
from ...core.primitive import impl_rules
from ...errors import CompilationError
from .. import background, diskcache
from ..sources import source_hash
from ..base import Backend, Executable
from .lowering.dot_fold import fold_dot_transposes
from .lowering.lower_arrays import SYMBOLIC_SIZES, TOP_LEVEL_ON_HOST, array_rules, dot_plan
from . import compile_process, tiers
from .parallel import pool, threads
from .compile_worker import kernel_module
from .lowering.half import lower_half
from ..numba.lower_elementwise import scalar_rules
from ..numba.render import shape_text
from .render import CpuRenderer
from ...core.dim_assumptions import entry_checks
from ...core.dim_format import code_name
from ...core.dims import Dim, is_symbolic

logger = logging.getLogger("absjit")

__all__ = ["NumbaCPUBackend", "NumbaExecutable", "SUPPORTED_DTYPES", "render_program"]

_HEADER = "import math\nimport numpy as np\nfrom numba import prange\n" \
          "from absjit.backends.numba_cpu.runtime import *  # noqa: F401,F403\n\n"

# Dtypes Numba computes with exactly like NumPy. float16/bfloat16 never reach the
# renderer: :func:`.half.lower_half` stores them as uint16 and computes in float32.
SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64, np.complex64, np.complex128))


def _package_hash() -> str:
    """This backend's sources and the compiler's (:mod:`absjit.backends.sources`): a
    change to a rule or to the renderer invalidates every kernel on disk."""
    return source_hash(__package__, also=("absjit.compiler",))




class NumbaExecutable(Executable):
    """A compiled program: called with NumPy buffers (consts, then args)."""

    def __init__(self, dispatcher, source, in_avals, program, n_pieces, compile_seconds,
                 half_views=None):
        # The jit runner calls this first: the bare Numba dispatcher (a tuple back; a
        # TypeError for a buffer it was not compiled for, and then ``__call__`` retries),
        # or, with float16/bfloat16 buffers, a wrapper passing them as uint16 views.
        self._fn = dispatcher if half_views is None else half_views.fast(dispatcher)
        self.fast_call = self._fn
        self.source = source
        self.program = program
        self.n_pieces = n_pieces
        self.compile_seconds = compile_seconds
        self._dtypes = [np.dtype(a.dtype) for a in in_avals]

    def __call__(self, *buffers):
        try:
            return list(self._fn(*buffers))
        except TypeError:
            # Not C-contiguous, a scalar, or another array type: normalise and retry.
            if len(buffers) != len(self._dtypes):
                raise
            fixed = [np.asarray(b, dtype=dt, order="C")
                     for b, dt in zip(buffers, self._dtypes)]
            return list(self._fn(*fixed))

    def as_text(self) -> str:
        return self.source

    def ir_text(self) -> str:
        """The optimised loop IR the kernel was rendered from."""
        from ...compiler import pformat
        return pformat(self.program)


def _numba_type(dtype, ndim, readonly):
    from numba import types as nt
    from numba.np.numpy_support import from_dtype
    if ndim is None:
        return from_dtype(np.dtype(dtype))
    return nt.Array(from_dtype(np.dtype(dtype)), ndim, "C", readonly=readonly)


# Constants a loop body closes over are written into the source up to this size.
MAX_INLINE_CONST = 256


def _runs_on_host(stmt) -> bool:
    return isinstance(stmt, ir.Opaque) and (
        stmt.prim not in array_rules or stmt.prim.name == "dot_general"
        or stmt.prim.name in TOP_LEVEL_ON_HOST)


#: Multiply-adds per matrix above which a batched product on the host runs one SciPy
#: ``gemm`` per matrix instead of NumPy's ``matmul`` (about where OpenBLAS starts threads).
HOST_BATCHED_GEMM_MIN_MNK = 1 << 16


def _host_batched_dot(stmt):
    """A batched float product for the driver: one call of SciPy's ``gemm`` per matrix
    of the batch, written into the result, when each matrix is large enough for BLAS to
    thread; None otherwise (the impl rule's ``np.matmul`` runs it).

    NumPy's ``matmul`` calls NumPy's own OpenBLAS, a second library with its own
    threads: run between products on SciPy's (the 2-D ones, below), the two pools spin
    against each other after every call. A transformer block's step (4 heads, 128
    positions) took 24 ms with both, 10-12 ms with one."""
    (lc, rc), (lb, rb) = stmt.params["dimension_numbers"]
    la, ra = stmt.in_avals
    dt = np.dtype(stmt.out_avals[0].dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)) \
            or np.dtype(la.dtype) != dt or np.dtype(ra.dtype) != dt:
        return None
    try:
        lshape = [int(d) for d in la.shape]
        rshape = [int(d) for d in ra.shape]
    except TypeError:  # symbolic sizes
        return None
    from ...ops.linalg import _as_bmk, _free_axes
    lf, rf = _free_axes(len(lshape), lc, lb), _free_axes(len(rshape), rc, rb)
    m = math.prod(lshape[i] for i in lf)
    n = math.prod(rshape[i] for i in rf)
    k = math.prod(lshape[i] for i in lc)
    nb = math.prod(lshape[i] for i in lb)
    if m * n * k < HOST_BATCHED_GEMM_MIN_MNK or nb == 0:
        return None
    out_shape = tuple(stmt.out_avals[0].shape)
    from scipy.linalg import blas
    gemm = blas.sgemm if dt == np.float32 else blas.dgemm

    def call(a, b):
        a3 = _as_bmk(a, lb, lf, lc)  # (B, M, K)
        b3 = _as_bmk(b, rb, rf, rc)  # (B, N, K)
        out = np.empty((nb, m, n), dt)
        for i in range(nb):
            # out[i]^T = b3[i] @ a3[i]^T, a Fortran-ordered (N, M): written in place.
            gemm(1.0, b3[i].T, a3[i].T, beta=0.0, c=out[i].T, trans_a=1,
                 overwrite_c=1)
        return (out.reshape(out_shape),)
    call.__name__ = "host_batched_dot"
    return call


def _host_dot(stmt):
    """A 2-D (or vector) float product for the driver: ``np.dot`` on the operands or
    their transposes, so BLAS gets transpose flags instead of copies; a batched one
    through :func:`_host_batched_dot`; None when neither applies."""
    (lc, rc), (lb, rb) = stmt.params["dimension_numbers"]
    la, ra = stmt.in_avals
    dt = np.dtype(stmt.out_avals[0].dtype)
    if lb or rb:
        return _host_batched_dot(stmt)
    if len(lc) != 1 or la.ndim > 2 or ra.ndim > 2 or dt.kind != "f" \
            or np.dtype(la.dtype) != dt or np.dtype(ra.dtype) != dt:
        return None
    lhs_t = la.ndim == 2 and lc[0] == 0
    rhs_t = ra.ndim == 2 and rc[0] == 1
    if la.ndim == 2 and ra.ndim == 2:
        # SciPy's BLAS (the one Numba's np.dot calls; NumPy's bundled one is 2-4x
        # slower on small products here). For C-contiguous operands the transposes are
        # Fortran-contiguous views, so C^T = op(rhs)^T op(lhs)^T needs no copy, and
        # C = (C^T).T comes back C-contiguous.
        from scipy.linalg import blas
        gemm = blas.sgemm if dt == np.float32 else blas.dgemm

        def call(a, b):
            return ((gemm(1.0, b.T, a.T, trans_a=int(rhs_t), trans_b=int(lhs_t))).T,)
    else:
        def call(a, b):
            out = np.dot(a.T if lhs_t else a, b.T if rhs_t else b)
            return (np.asarray(out, dtype=dt, order="C"),)
    call.__name__ = "host_dot"
    return call


def _host_fft(stmt):
    """An FFT for the driver, in the operand's precision, on as many threads as the
    policy allows: DUCC's transforms where the ``ducc0`` package is installed (a
    dependency on the platforms it has wheels for), else SciPy's pocketfft
    (``workers``). NumPy's runs one thread.

    Float32 ``rfft`` on 2 cores (ms, one process): 2^20 values DUCC 5.2, SciPy 9.3,
    NumPy 25, ``jax.jit`` 12.9; 64 x 2^14 DUCC 1.5, SciPy 2.5, ``jax.jit`` 2.1."""
    from ...ops.fft import FftType
    fft_type, lengths = stmt.params["fft_type"], tuple(stmt.params["fft_lengths"])
    dt = np.dtype(stmt.out_avals[0].dtype)
    ndim = len(stmt.in_avals[0].shape)
    axes = tuple(range(ndim - len(lengths), ndim))
    policy = threads._POLICY
    ducc = _ducc_fft()
    if ducc is not None:
        inverse = fft_type in (FftType.IFFT, FftType.IRFFT)
        kw = dict(axes=axes, forward=not inverse, inorm=2 if inverse else 0)
        if fft_type == FftType.RFFT:
            transform = ducc.r2c
        elif fft_type == FftType.IRFFT:
            transform, kw["lastsize"] = ducc.c2r, lengths[-1]
        else:
            transform = ducc.c2c

        def call(x):
            return (np.asarray(transform(x, nthreads=policy.current(), **kw), dtype=dt,
                               order="C"),)
    else:
        import scipy.fft as sfft
        transform = {FftType.FFT: sfft.fftn, FftType.IFFT: sfft.ifftn,
                     FftType.RFFT: sfft.rfftn, FftType.IRFFT: sfft.irfftn}[fft_type]
        shape = lengths if fft_type == FftType.IRFFT else None

        def call(x):
            out = transform(x, s=shape, axes=axes, workers=policy.current())
            return (np.asarray(out, dtype=dt, order="C"),)
    call.__name__ = "host_fft"
    return call


def _ducc_fft():
    """``ducc0.fft``, or None where the package is not installed."""
    try:
        import ducc0
    except ImportError:
        return None
    return ducc0.fft


def _has_dim(x) -> bool:
    """Whether a parameter value holds a symbolic size (in tuples, lists, dicts)."""
    if isinstance(x, Dim):
        return True
    if isinstance(x, (tuple, list)):
        return any(_has_dim(e) for e in x)
    if isinstance(x, dict):
        return any(_has_dim(e) for e in x.values())
    return False


def _host_call(stmt):
    """The driver's call for a host piece: the primitive's NumPy implementation, its
    results made C-contiguous (what the compiled pieces take)."""
    if stmt.prim.name == "dot_general":
        fast = _host_dot(stmt)
        if fast is not None:
            return fast
    if stmt.prim.name == "fft":
        return _host_fft(stmt)
    impl = impl_rules[stmt.prim]
    params = dict(stmt.params)
    dtypes = [np.dtype(a.dtype) for a in stmt.out_avals]

    def call(*ins):
        outs = impl(*ins, **params)
        return tuple(np.asarray(o, dtype=dt, order="C") for o, dt in zip(outs, dtypes))
    call.__name__ = f"host_{stmt.prim.name}"
    return call


def _check_renderable(body, params):
    """Raise :class:`Unsupported` naming every primitive or dtype this backend cannot
    render — before any source is written, so no kernel is ever half generated."""
    missing = []
    dtypes = {np.dtype(b.dtype) for b in params}
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.ConstArray) and stmt.value.size > MAX_INLINE_CONST:
            missing.append(f"a closed-over constant of {stmt.value.size} elements")
        elif isinstance(stmt, ir.Let):
            dtypes.add(np.dtype(stmt.sym.dtype))
            if isinstance(stmt.expr, ir.Op) and stmt.expr.prim not in scalar_rules:
                missing.append(stmt.expr.prim.name)
        for v in ir.stmt_defs(stmt):
            dtypes.add(np.dtype(v.dtype))
    missing += [f"dtype {d.name}" for d in dtypes if d not in SUPPORTED_DTYPES]
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Opaque) and stmt.prim.name not in SYMBOLIC_SIZES \
                and any(is_symbolic(a.shape) for a in stmt.in_avals + stmt.out_avals):
            missing.append(f"{stmt.prim.name} with symbolic sizes (ranked level)")
    top = {id(stmt) for stmt in body}
    nested_prints = sum(1 for stmt in ir.walk(body) if isinstance(stmt, ir.Opaque)
                        and stmt.prim.name == "debug_print" and id(stmt) not in top)
    if nested_prints > 1:
        # Numba 0.68 emits invalid LLVM for object-mode blocks in two different loops
        # or branches of one function.
        missing.append("debug_print in more than one loop or branch")
    elif nested_prints and any(isinstance(s, ir.Opaque) and s.prim not in array_rules
                               and id(s) not in top for s in ir.walk(body)):
        missing.append("debug_print beside an unlowered primitive in a loop or branch")
    if missing:
        raise Unsupported(missing)


# The runtime helpers that call BLAS from inside a kernel.
_BLAS_HELPER = re.compile(r"\b_(dot|bgemm|pgemm_pool|pgemm_prange|gemm_rows)\(")


def _dot_plans(program) -> set:
    return {dot_plan(s.in_avals, s.out_avals[0], s.params["dimension_numbers"])
            for s in ir.walk(program.body)
            if isinstance(s, ir.Opaque) and s.prim.name == "dot_general"}


def _calls_blas(program) -> bool:
    return bool(_dot_plans(program) & {"blas", "parallel blas"})


def _written(body) -> set:
    """Ids of buffers ``body`` writes to (directly or through an alias)."""
    out = set()
    for s in ir.walk(body):
        if isinstance(s, ir.CallPiece):
            out |= _written(s.piece.body)
        elif isinstance(s, ir.Store):
            out.add(id(s.buf))
        elif isinstance(s, ir.Copy):
            out.add(id(s.dst))
        elif isinstance(s, ir.Reduce):
            out.update(id(a.out) for a in s.accs())
        elif isinstance(s, ir.Alias):
            out.add(id(s.src))
    return out


def _readonly_ids(program) -> set:
    """Buffers whose storage is a caller's argument (read-only arrays in Numba)."""
    ro = {id(b) for b in program.params}
    for s in ir.walk(program.body):
        if isinstance(s, (ir.View, ir.Alias)) and id(s.src) in ro:
            ro.add(id(s.dst))
    return ro


def shape_guards(params, names) -> list:
    """Source lines checking every array parameter's shape: sizes are literals in the
    generated code, so a buffer of another shape must never get in."""
    lines = []
    for v, nm in zip(params, names):
        if isinstance(v, ir.Buffer) and v.ndim:
            lines += [f"    if {nm}.shape != {shape_text(v.shape)}:",
                      f"        raise ValueError('argument {v.name} must have shape "
                      f"{tuple(int(d) for d in v.shape)}')"]
    return lines


def _symbolic(params) -> bool:
    """Whether a parameter's shape holds symbolic sizes (``ranked``), even ones the
    program fixed to a number: their checks name the argument and axis."""
    return any(is_symbolic(v.shape) for v in params if isinstance(v, ir.Buffer))


def size_bindings(params, names, atoms, guards) -> tuple:
    """``(lines, parameters)`` binding the symbolic sizes ``atoms`` (``ranked`` level) a
    function uses: each is read from the first parameter with that size on an axis
    (``_n_x0 = arg0.shape[0]``); one no parameter has becomes a trailing parameter the
    caller passes. With ``guards`` (a program's entry) every other axis is checked
    against its size — each equality the trace assumed — or its literal, before any
    loop runs: a mismatch is a ``ValueError`` naming both arguments and sizes."""
    lines, bound = [], {}
    for v, nm in zip(params, names):
        if not isinstance(v, ir.Buffer):
            continue
        for axis, d in enumerate(v.shape):
            r = d.resolved() if type(d) is Dim else int(d)
            if type(r) is int:  # a literal, or a size an operation fixed (``x1 == 3``)
                if guards:
                    what = _origin(d) if type(d) is Dim else f"{v.name}.shape[{axis}]"
                    lines += [f"    if {nm}.shape[{axis}] != {r}:",
                              f"        raise ValueError('{what} must be {r}, got ' + "
                              f"str({nm}.shape[{axis}]))"]
                continue
            atom = d.atom()
            if atom is None:
                continue  # an expression of sizes bound elsewhere
            if atom.name not in bound:
                bound[atom.name] = (v, axis, d)
                lines.append(f"    {code_name(atom)} = {nm}.shape[{axis}]")
            elif guards:
                first = bound[atom.name][2]
                lines += [
                    f"    if {nm}.shape[{axis}] != {code_name(atom)}:",
                    f"        raise ValueError('{_origin(d)} must equal {_origin(first)}: the "
                    f"function was traced at the ranked level assuming they are equal "
                    f"(dimension {atom.name}); got sizes ' + str({nm}.shape[{axis}]) + "
                    f"' and ' + str({code_name(atom)}))"]
    if guards:
        for d, k, why in entry_checks(atoms):
            if all(a.name in bound for a in d.atoms()):
                lines += [f"    if {d.code()} < {k}:",
                          f"        raise ValueError('{' * '.join(d.origins())}: the function "
                          f"was traced at the ranked level assuming {d} >= {k} ({why}); "
                          f"got ' + str({d.code()}))"]
    extra = [code_name(a) for a in atoms if a.name not in bound]
    return lines, extra


def _origin(d) -> str:
    """``x.shape[0]`` for the atom ``d`` was made as (before unification)."""
    for m in d._terms:
        for f in m:
            return f.origin().replace("'", "")
    return str(d)


def render_function(name, params, body, results, parallel_ok, guards=False,
                    lift_consts=False, call_piece=None, parallel_blas=False):
    """Source of one function: ``(text, renderer)``; with ``lift_consts`` the function
    takes the scalar constants as trailing parameters (``renderer.consts``), then the
    symbolic sizes no parameter has (``renderer.size_params``)."""
    r = CpuRenderer(parallel_ok, lift_consts, parallel_blas,
                         pool_loops=parallel_ok and pool.loops_enabled())
    r.call_piece = call_piece
    pnames = r.bind_params(params)
    atoms = ir.size_atoms(params, body, results)
    if atoms or _symbolic(params):
        lines, r.size_params = size_bindings(params, pnames, atoms, guards)
        r.lines += lines
    elif guards:
        r.lines += shape_guards(params, pnames)
    r.block(body, 1)
    rets = [r.value(v) for v in results]
    r.emit(f"return ({''.join(x + ', ' for x in rets)})", 1)
    cnames = [f"c{k}" for k in range(len(r.consts))]
    head = f"def {name}({', '.join(pnames + cnames + r.size_params)}):"
    return "".join(c + "\n\n" for c in r.chunks) + "\n".join([head] + r.lines) + "\n", r


def render_program(program, parallel_ok, parallel_blas=False):
    """The source of ``program`` as one function (no pieces)."""
    return render_function("kernel", program.params, program.body, program.outputs,
                           parallel_ok, guards=True, parallel_blas=parallel_blas)


class NumbaCPUBackend(Backend):
    """Compiles a jaxpr to Numba functions (fused loops, BLAS dots), in pieces."""

    name = "cpu"
    platforms = ("cpu",)

    def __init__(self):
        super().__init__()
        self._functions: dict = {}  # key -> dispatcher
        self._version_key = None
        # dispatcher -> what the compile worker needs to build it again (callees)
        self._specs = weakref.WeakKeyDictionary()
        self.stats["worker_compiles"] = 0  # compiled by the worker process

    def is_available(self) -> bool:
        return importlib.util.find_spec("numba") is not None

    def clear_memory(self) -> None:
        with self._lock:
            self._functions.clear()

    def environment(self) -> dict:
        return {"threading layer": threads.info().get("layer_requested") or "not started"}

    def version_key(self) -> tuple:
        key = self._version_key
        if key is None:
            from ...compat import host_cpu_name, kernel_opt_level, numba_versions
            # The process's first import of Numba (0.5 s or more) happens here, as
            # a compiler step: a fork waits for it. A child forked while another thread
            # held the import's module lock would wait for that lock forever.
            with background.step():
                key = ("absjit", __version__, "numba_cpu", _package_hash()) + \
                    numba_versions() + (host_cpu_name(), f"O{kernel_opt_level()}")
            self._version_key = key
        return key

    def settings_key(self) -> tuple:
        return (pool.loops_enabled(),)  # ``ABSJIT_POOL_LOOPS``

    def interpreted(self, closed_jaxpr, options, compiling=lambda: False):
        exe = super().interpreted(closed_jaxpr, options)
        from ...config import config
        if config.tier0_evaluator:
            from .evaluator.block_plan import FusingInterpreter, fusable_dtypes
            dtypes = fusable_dtypes(closed_jaxpr.jaxpr)
            if dtypes:
                exe = FusingInterpreter(exe, dtypes)
        return threads.tier0_guard(exe, compiling)

    def prepare_background_compiles(self, expected_seconds: float) -> None:
        # The worker's own start (Python, NumPy, Numba: ~0.5-1 s of a core) pays only
        # where tier 0 serves for long; a short compile stays in the background thread
        # (later ones use the worker once it runs).
        if expected_seconds >= compile_process.WORKER_MIN_SECONDS and \
                compile_process.enabled():
            try:
                compile_process.start()
            except compile_process.Unavailable as e:
                logger.debug("background compiles run in this process: %s", e)

    # -- compile ---------------------------------------------------------------------
    def compile(self, closed_jaxpr, options) -> Executable:
        gc_was_on = gc.isenabled()
        gc.disable()  # planning makes no garbage cycles: long programs plan ~30% faster
        try:
            closed_jaxpr = fold_dot_transposes(closed_jaxpr)
            program = hoist_invariants(compile_to_ir(closed_jaxpr, options,
                                                     loop_scatters=True))
            program, half_views = lower_half(program, options)
            par = options.parallel
            parallel_ok = (not _calls_blas(program)) if par is None else bool(par)
            # A whole-array op at the top level with no lowering here runs in the driver
            # through its NumPy implementation (so does a float product: BLAS either
            # way, and no compile); elsewhere it sends the program to ``interpret``.
            unrendered = [s for s in program.body if isinstance(s, ir.Opaque) and (
                s.prim not in array_rules or s.prim.name in TOP_LEVEL_ON_HOST)]
            sized = sorted({s.prim.name for s in unrendered if _has_dim(s.params)})
            if sized:  # the driver's NumPy call would get symbolic parameters
                raise Unsupported([f"{n} with symbolic parameters (ranked level)"
                                   for n in sized])
            skip = {id(s) for s in unrendered}
            _check_renderable([s for s in program.body if id(s) not in skip],
                              program.params)
            nested = sorted({s.prim.name for s in ir.walk(program.body)
                             if isinstance(s, ir.Opaque) and s.prim not in array_rules
                             and id(s) not in skip})
            if nested:
                self.warn_once(nested, "it runs through its NumPy implementation from "
                               "an object-mode block inside the compiled loop", 6)
            pieces = split_program(program, lambda p: self.unit_key(p, parallel_ok),
                                   host=_runs_on_host, force=bool(unrendered))
        except Unsupported as e:
            return self.fallback(closed_jaxpr, options, e.names)
        finally:
            if gc_was_on:
                gc.enable()
        in_avals = [v.aval for v in closed_jaxpr.jaxpr.constvars + closed_jaxpr.jaxpr.invars]
        t0 = time.perf_counter()
        header = "\n".join(f"# {line}" for line in program.source.splitlines()) + "\n"
        # Large products run as blocks in Numba's threads (BLAS at one thread) in a
        # program compiled as one function (a driver runs its products through SciPy),
        # unless the user keeps the thread counts to themselves.
        parallel_blas = pieces is None and options.parallel is not False and \
            threads.adaptive() and "parallel blas" in _dot_plans(program)
        if parallel_blas:
            threads.configure_layer()  # before Numba compiles ``_pgemm_prange``
        if pieces is None:
            src, r = render_program(program, parallel_ok, parallel_blas)
            sig = tuple(_numba_type(b.dtype, b.ndim, True) for b in program.params)
            if (r.uses_parallel or r.uses_pool_loops) and \
                    ir.size_atoms(program.params, program.body, program.outputs):
                # ranked: a serial tier now, the parallel one in the background
                disp = self._tiered(program, src, sig, options, r.prims, r.uses_parallel)
            else:
                disp = self._function(src, "kernel", sig, r.uses_parallel, options,
                                      r.prims)
            text = header + src
            n = 1
        else:
            disp, text = self._compile_pieces(program, pieces, parallel_ok,
                                              _readonly_ids(program), options)
            text = header + text
            n = len(pieces)
        seconds = time.perf_counter() - t0
        # The thread policy runs before kernels with prange loops or BLAS products (a
        # dot, or a convolution's products through the helpers). A kernel whose parallel
        # loops call BLAS (blocked products, a convolution's batch) runs every Numba
        # thread on tasks taken one at a time, BLAS at one thread.
        parallel = "prange(" in text
        in_kernel_blas = _BLAS_HELPER.search(text) is not None
        disp = threads.guard(disp, parallel=parallel,
                             blas=_calls_blas(program) or in_kernel_blas,
                             blas_blocks=parallel_blas or (parallel and in_kernel_blas
                                                           and threads.adaptive()),
                             pool_loops="_pool_for(" in text)
        return NumbaExecutable(disp, text, in_avals, program, n, seconds, half_views)

    def _tiered(self, program, src, sig, options, prims, uses_prange):
        """A ranked kernel as :class:`.tiers.Tiered`: its serial variant compiled now
        (``nogil``), its parallel source ``src`` (``prange`` loops, or loops on the
        pool) compiled in a background thread."""
        if uses_prange:
            threads.configure_layer()  # now: the thread guard reads which layer runs
        serial_src, r = render_program(program, False)
        serial = self._function(serial_src, "kernel", sig, False, options, r.prims,
                                nogil=True)
        return tiers.Tiered(serial, lambda: self._function(src, "kernel", sig, uses_prange,
                                                           options, prims))

    def _compile_pieces(self, program, pieces, parallel_ok, ro, options):
        """Compile each distinct piece once and write the driver: a plain Python function
        that checks the argument shapes and calls the pieces (a Numba-compiled driver
        would link and re-optimise every piece's code, costing more than the pieces)."""
        sources, globals_, calls, consts = {}, {}, [], []
        for k, piece in enumerate(pieces):
            if piece.host:
                (stmt,) = piece.body
                if stmt.prim not in array_rules:
                    self.warn_once([stmt.prim.name], "it runs through its NumPy "
                                   "implementation between compiled pieces", 6)
                fname = f"host{k}_{stmt.prim.name}"
                globals_[fname] = _host_call(stmt)
                # Operands as the op lists them (one buffer may appear twice); every
                # result is bound.
                calls.append((fname, list(stmt.ins), [], list(stmt.outs)))
                continue
            outline_loops(piece.body)
            fname, disp, consts_k, sizes_k = self._compile_piece(piece, parallel_ok, ro,
                                                                 options, sources)
            # The driver checks its arguments' types once (below), and every other
            # value it passes was made by a piece, a host op or the compiler, with
            # exactly the piece's types: it calls the compiled entry point directly,
            # skipping Numba's per-call type dispatch (~1 us a piece).
            globals_[fname] = _entry_point(disp)
            cnames = []
            for c in consts_k:
                cnames.append(f"k{len(consts)}")
                consts.append(c)
            calls.append((fname, piece.params, cnames + sizes_k, piece.results))
        globals_.update((f"k{n}", c) for n, c in enumerate(consts))
        r = CpuRenderer(False)
        pnames = r.bind_params(program.params)
        lines = [f"def kernel({', '.join(pnames)}):"]
        for n, (v, nm) in enumerate(zip(program.params, pnames)):
            globals_[f"_dt{n}"] = np.dtype(v.dtype)
            lines += [f"    if type({nm}) is not _ndarray or {nm}.dtype != _dt{n} or "
                      f"not {nm}.flags.c_contiguous:",
                      f"        raise TypeError('argument {v.name}: a C-contiguous "
                      f"{np.dtype(v.dtype).name} array is expected')"]
        globals_["_ndarray"] = np.ndarray
        atoms = ir.size_atoms(program.params, program.body, program.outputs)
        if atoms or _symbolic(program.params):
            lines += size_bindings(program.params, pnames, atoms, True)[0]
        else:
            lines += shape_guards(program.params, pnames)
        for fname, params, cnames, results in calls:
            args = ", ".join([r.value(v) for v in params] + cnames)
            if results:
                outs = "".join(r.value(v) + ", " for v in results)
                lines.append(f"    ({outs}) = {fname}({args})")
            else:
                lines.append(f"    {fname}({args})")
        lines.append(f"    return ({''.join(r.value(v) + ', ' for v in program.outputs)})")
        driver = "\n".join(lines) + "\n"
        namespace = dict(globals_)
        exec(compile(driver, "<absjit driver>", "exec"), namespace)  # noqa: S102
        return namespace["kernel"], ("# driver (Python)\n" + driver + "\n"
                                     + "\n".join(sources.values()))

    def _compile_piece(self, piece, parallel_ok, ro, options, sources):
        """``(function name, dispatcher, constants to pass)`` for one piece; pieces it
        calls (outlined loop bodies) are compiled first."""
        src, r = render_function(
            "piece", piece.params, piece.body, piece.results, parallel_ok,
            lift_consts=True,
            call_piece=lambda sub: self._compile_piece(sub, parallel_ok, ro, options,
                                                       sources))
        writes = _written(piece.body)
        sig = tuple(
            _numba_type(v.dtype, v.ndim if isinstance(v, ir.Buffer) else None,
                        id(v) in ro or id(v) not in writes)
            for v in piece.params) + tuple(_numba_type(c.dtype, None, True)
                                           for c in r.consts) + \
            tuple(_numba_type(np.int64, None, True) for _ in r.size_params)
        fname = f"piece_{_digest(src + repr(sig))[:12]}"
        named = src.replace("def piece(", f"def {fname}(", 1)
        disp = self._function(named, fname, sig, r.uses_parallel, options, r.prims,
                              r.callees)
        sources.setdefault(fname, f"# {fname}: " + named)
        return fname, disp, r.consts, r.size_params

    def unit_key(self, piece, parallel_ok=True) -> str:
        """The canonical source of one unit (grouping follows repeated structure)."""
        src, _ = render_function("piece", piece.params, piece.body, piece.results,
                                 parallel_ok, lift_consts=True)
        return src

    # -- one function: memory, disk, compile -----------------------------------------
    def _function(self, src, fn_name, sig, parallel, options, prims, callees=None,
                  nogil=False, counted=True, only_from_disk=False):
        """The dispatcher of generated function ``fn_name`` of ``src`` compiled for
        ``sig``: from memory, the disk cache or a compile. ``counted=False`` leaves it out
        of :attr:`stats` (absjit's own machinery, not a user's program);
        ``only_from_disk`` returns None instead of compiling."""
        versions = self.version_key()  # first: it imports Numba as a compiler step
        if parallel:
            threads.configure_layer()  # a fork-safe layer, before Numba starts one
        # Python calls the kernels and pieces (through their CPython entry points) and
        # compiled pieces call outlined loop bodies natively: no C entry points.
        flags = {"parallel": bool(parallel), "fastmath": options.numba_fastmath,
                 "error_model": "numpy", "boundscheck": False, "no_cfunc_wrapper": True}
        if nogil:
            flags["nogil"] = True
        key_text = "\n".join([repr(versions), repr(sorted(flags.items())),
                              repr(sig), src])
        digest = _digest(key_text)[:32]
        stats = self.stats if counted else collections.Counter()
        hit = self._functions.get(digest)
        if hit is not None:  # no lock for a hit: a background compile may hold it
            stats["memory_hits"] += 1
            return hit
        module_name = f"absjit_k_{digest}"
        if only_from_disk and not (diskcache.usable() and
                                   diskcache.verify_or_purge(module_name)):
            return None
        with background.step(), self._lock:
            hit = self._functions.get(digest)
            if hit is not None:
                stats["memory_hits"] += 1
                return hit
            t0 = time.perf_counter()
            text = f"# absjit kernel {digest}\n# flags: {sorted(flags.items())}\n" + \
                _HEADER + src
            disp, loaded = self._load(module_name, text, fn_name, flags, sig, src, prims,
                                      callees or {})
            seconds = time.perf_counter() - t0
            if loaded:
                stats["disk_hits"] += 1
            else:
                stats["compiles"] += 1
                stats["compile_seconds"] += seconds
            self._functions[digest] = disp
        return disp

    def _load(self, module_name, text, fn_name, flags, sig, src, prims, callees):
        """``(dispatcher, loaded from disk)`` for one generated function. The disk cache
        is used only when it is trusted (:func:`diskcache.usable`), and Numba reads an
        entry only after its MAC checks out; any trouble with the files (deleted by a
        concurrent ``clear()``, unreadable) means a compile without the disk cache.
        In the background thread, a function not on disk is compiled by the worker
        process when it can be (:mod:`.compile_process`)."""
        import numba

        from ...compat import (dispatcher_cache_counts, numba_opt_level, pin_disk_cache,
                               save_rebuilt)
        use_disk = diskcache.usable()
        on_disk = False
        path = f"<absjit kernel {module_name}>"
        if use_disk:
            try:
                path = diskcache.write_module(module_name, text)
                on_disk = diskcache.verify_or_purge(module_name)
            except OSError:
                use_disk = False  # an unwritable cache directory is not an error
        uses_pool = "_pgemm_pool(" in text or "_pool_for(" in text
        if uses_pool and not pool.ensure():
            # its symbols, before the kernel links against them (from disk)
            raise CompilationError(f"absjit's thread pool could not be built here "
                                   f"({pool.failure()}); ABSJIT_POOL_LOOPS=0 runs parallel "
                                   "loops on Numba's threads instead")
        fn = kernel_module(module_name, path, text, callees, flags).__dict__[fn_name]
        spec = {"module": module_name, "text": text, "fn": fn_name, "flags": flags,
                "sig": sig, "pool": uses_pool,
                "callees": {nm: self._specs[d] for nm, d in callees.items()
                            if d in self._specs}}
        disp, from_worker = None, False
        if not on_disk and background.on_background_thread() and \
                len(spec["callees"]) == len(callees) and compile_process.running():
            got = self._from_worker(spec, fn, path, prims, src)
            from_worker = got is not None
            if from_worker:
                disp, payload = got
            if from_worker and use_disk:
                try:
                    pin_disk_cache(disp, diskcache.numba_dir())
                    (cres,) = disp.overloads.values()
                    save_rebuilt(disp, sig, cres, payload)
                    diskcache.record_mac(module_name)
                except Exception:  # noqa: BLE001 - the kernel runs; it is just not saved
                    logger.debug("%s was not saved to the disk cache", module_name,
                                 exc_info=True)
                    diskcache.purge(module_name, keep_module=True)
        for attempt_disk in () if from_worker else \
                ((True, False) if use_disk else (False,)):
            disp = numba.njit(**flags)(fn)
            try:
                if attempt_disk:
                    pin_disk_cache(disp, diskcache.numba_dir())
                with numba_opt_level():
                    disp.compile(sig)
                break
            except numba.core.errors.NumbaError as e:
                if use_disk:
                    diskcache.purge(module_name)
                raise _refused(prims, path, str(e), src) from None
            except Exception:  # noqa: BLE001 - cache files vanished or unreadable
                if not attempt_disk:
                    raise
                diskcache.purge(module_name, keep_module=True)
                use_disk = False
        hits, _ = dispatcher_cache_counts(disp) if use_disk else (0, 0)
        if use_disk and not hits and not from_worker:
            diskcache.record_mac(module_name)
        self._specs[disp] = spec
        disp.disable_compile()
        return disp, bool(hits)

    def _from_worker(self, spec, fn, path, prims, src):
        """``(dispatcher, payload)``: ``fn`` compiled by the worker process and linked
        here, or None when this thread must compile it (the worker cannot, or is
        gone)."""
        import numba
        from numba.core.compiler import CompileResult
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.runtime import rtsys
        try:
            payload = pickle.loads(compile_process.compile_remote(spec))
        except compile_process.NumbaRefused as e:
            raise _refused(prims, path, str(e), src) from None
        except compile_process.Unavailable as e:
            if background.cancelled():
                raise background.Cancelled from None
            logger.debug("%s compiles in this process: %s", spec["module"], e)
            return None
        disp = numba.njit(**spec["flags"])(fn)
        ctx = disp.targetctx
        with global_compiler_lock:
            rtsys.initialize(ctx)
            cres = CompileResult._rebuild(ctx, *payload)
            if not cres.objectmode:
                ctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            disp.add_overload(cres)
        self.stats["worker_compiles"] += 1
        return disp, payload


def _refused(prims, path, message, src) -> CompilationError:
    where = f" (primitives: {', '.join(sorted(prims))})" if prims else ""
    return CompilationError(f"Numba could not compile a kernel{where} ({path}):\n"
                            f"{_first_lines(message)}\n--- generated source ---\n{src}")


def _entry_point(dispatcher):
    """The compiled function behind a dispatcher with one signature: it unboxes its
    arguments as that signature says, without checking them first."""
    (cres,) = dispatcher.overloads.values()
    return cres.entry_point


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _first_lines(message: str, limit=2000) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", message).strip()[:limit]
