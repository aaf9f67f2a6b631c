"""Jitted functions as Dask array kernels: one compilation per worker for every chunk
shape.

``map_blocks(f, x)`` jits ``f`` at the ``ranked`` level (one compiled kernel for every
size of a rank, so edge chunks of other sizes reuse it) and works out the result's
chunks and dtype by *tracing* ``f`` once — no block is computed to find them. The
trace shows how each output size depends on the input sizes (``x0``, ``x1 - 1``,
``2*x0``, a constant), which says which input axis each output axis follows:

* an output axis whose size is made from one input axis's size follows that axis:
  same blocks, each of the size the trace computes (``x[1:]`` per block gives chunks
  one shorter; ``x.T`` swaps the axes);
* an input axis no output size depends on is *reduced over*: its blocks are
  concatenated, so ``f`` sees the whole axis (``x.sum(0)`` is the sum over all of axis
  0, as Dask's ``drop_axis`` does);
* an output axis of constant size is a new axis with one block (``keepdims=True``
  reductions, ``x[..., None]``, a fixed-size summary per row).

An output size that mixes two input axes (``x.reshape(-1)`` on a 2-d block) cannot be
chunked and is a ``ValueError`` naming the axis and its size, as is a function whose
blocks would disagree (a reduction that is not over a whole axis). :func:`blockwise`
takes the index strings explicitly (``"ij,jk->ik"``-style, as
``dask.array.blockwise``) and :func:`reduction` sums or averages ``f``'s result over
axes with one fused kernel per block.

Functions pickle to the workers by reference when they are importable and by value
(``cloudpickle``) otherwise; each worker traces and compiles on its first block (or
loads the kernel from the disk cache) and reuses that for every other block. Inside
a worker, parallel kernels use at most the worker's share of its Dask ``nthreads``
(see :mod:`absjit.backends.numba_cpu.parallel.threads`). :func:`stats` reports, per process,
what absjit compiled for these kernels (``client.run(absjit.dask.stats)`` collects it
from every worker).

Examples
--------
>>> import dask.array as da, numpy as np
>>> import absjit.dask, absjit.numpy as jnp
>>> x = da.from_array(np.arange(10.0), chunks=4)
>>> y = absjit.dask.map_blocks(lambda b: jnp.sqrt(b) * 2, x)
>>> y.chunks, y.dtype
(((4, 4, 2),), dtype('float32'))
>>> np.allclose(y.compute(), 2 * np.sqrt(np.arange(10.0)))
True
"""
from __future__ import annotations

try:
    import dask.array as da
except ImportError as err:  # pragma: no cover - exercised without dask installed
    raise ImportError(
        "absjit.dask needs Dask's array and distributed packages: "
        "pip install absjit[dask]  (or: pip install \"dask[array,distributed]\")"
    ) from err

import collections
import functools
import itertools
import math
import threading

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from . import numpy as jnp
from . import tree_util
from .config import config
from .core.dims import Dim, evaluate
from .core.specialize import bind_sizes
from .errors import ConcretizationTypeError
from .jit.api import jit
from .jit.pickling import JitFunction

__all__ = ["map_blocks", "blockwise", "reduction", "stats"]

_DEFAULT_LEVEL = "ranked"


# ---------------------------------------------------------------------------
# The task callable
# ---------------------------------------------------------------------------
#: How many kernels :func:`stats` remembers per process (the most recently run).
MAX_REPORTED = 256
_RAN: "collections.OrderedDict[str, JitFunction]" = collections.OrderedDict()
_RAN_LOCK = threading.Lock()


class BlockKernel:
    """What a Dask task calls: the jitted function on NumPy blocks, returning a NumPy
    block. Pickles as the jitted function (by reference or by value, see
    :mod:`absjit.jit.pickling`) and the client's ``enable_x64`` setting, which it
    applies in the worker before the first call (dtypes must match the trace)."""

    def __init__(self, jitted: JitFunction, label: str, x64: bool):
        self.jitted, self.label, self.x64 = jitted, label, x64

    def __call__(self, *blocks):
        if config.enable_x64 != self.x64:
            config.update("enable_x64", self.x64)
        if self.label not in _RAN:
            with _RAN_LOCK:
                _RAN[self.label] = self.jitted
                while len(_RAN) > MAX_REPORTED:
                    _RAN.popitem(last=False)
        return np.asarray(self.jitted(*blocks))

    def __repr__(self):
        return f"BlockKernel({self.label})"


def stats() -> dict:
    """What absjit compiled in this process for the Dask kernels it ran.

    Returns
    -------
    dict
        ``{"functions": {label: {"entries", "hits", "misses"}}, "compiles",
        "disk_hits", "memory_hits"}``: per kernel (labelled by the function's name
        and the graph's token) its entry-cache size and counts — ``entries`` stays 1
        across chunks of every size of one rank — and the process's kernel-cache
        counters (:func:`absjit.cache.info`). Collect it from every worker with
        ``client.run(absjit.dask.stats)``.

    Examples
    --------
    >>> import absjit.dask
    >>> sorted(absjit.dask.stats())
    ['compiles', 'disk_hits', 'functions', 'memory_hits']
    """
    from . import cache
    with _RAN_LOCK:
        ran = dict(_RAN)
    functions = {}
    for label, jitted in ran.items():
        info = jitted.cache_info()
        functions[label] = {"entries": jitted._cache_size(), "hits": info.hits,
                            "misses": info.misses}
    counters = cache.info()
    return {"functions": functions, **{k: counters.get(k, 0) for k in
                                       ("compiles", "disk_hits", "memory_hits")}}


# ---------------------------------------------------------------------------
# Jitting the chunk function
# ---------------------------------------------------------------------------
def _prepare(f, kwargs, abstraction, backend, compiler_options):
    """``(function to jit, jit options)``: ``kwargs`` are bound into the function (they
    are Python values fixed for the whole array); a jitted ``f`` is unwrapped and its
    options kept, with ``abstraction`` (default ``ranked``) replacing its level."""
    if not callable(f):
        raise TypeError(f"absjit.dask: expected a function, got {f!r}")
    options = {}
    if isinstance(f, JitFunction):
        options = dict(f._jit_options)
        f = f.__wrapped__
    if options.get("static_argnums") or options.get("static_argnames"):
        raise ValueError("absjit.dask: pass static values as keyword arguments of "
                         "map_blocks; the jitted function must not declare static "
                         "arguments")
    options.pop("static_argnums", None)
    options.pop("static_argnames", None)
    if backend is not None:
        options["backend"] = backend
    if abstraction is not None or options.get("abstraction") is None:
        options["abstraction"] = abstraction or _DEFAULT_LEVEL
    if compiler_options is not None:
        options["compiler_options"] = compiler_options
    fun = functools.partial(f, **kwargs) if kwargs else f
    return fun, options


def _fn_name(fun) -> str:
    while isinstance(fun, functools.partial):
        fun = fun.args[0] if fun.func in (_chunk_sum, _with_whole) else fun.func
    return getattr(fun, "__name__", type(fun).__name__)


# ---------------------------------------------------------------------------
# Arguments: Dask arrays with index labels, and values passed whole to every block
# ---------------------------------------------------------------------------
class _Args:
    """The arguments, their index labels (None for a value passed whole) and, after
    ``dask.array.core.unify_chunks``, the chunks of each label."""

    def __init__(self, pairs):
        flat = []
        for value, ind in pairs:
            if not isinstance(value, da.Array) or ind is None:
                raise TypeError(f"absjit.dask: expected a dask array with an index, got "
                                f"{type(value).__name__} with index {ind!r}")
            if any(math.isnan(c) for chunks in value.chunks for c in chunks):
                raise ValueError("absjit.dask: a dask array has unknown chunk sizes; "
                                 "call its compute_chunk_sizes() first")
            if len(ind) != value.ndim:
                raise ValueError(f"absjit.dask: index {''.join(map(str, ind))!r} has "
                                 f"{len(ind)} labels for an array of rank {value.ndim}")
            flat += [value, tuple(ind)]
        self.chunks, unified = da.core.unify_chunks(*flat)
        self.values = list(unified)
        self.inds = [tuple(ind) for ind in flat[1::2]]
        self.labels = list(dict.fromkeys(l for ind in self.inds if ind for l in ind))

    def block_shapes(self, pos: dict):
        """The shape of each argument's block at ``pos`` (label -> block number; a
        label missing from ``pos`` is concatenated whole)."""
        shapes = []
        for value, ind in zip(self.values, self.inds):
            shape = []
            for axis, label in enumerate(ind):
                chunks = value.chunks[axis]
                if label not in pos:
                    shape.append(value.shape[axis])
                else:
                    shape.append(chunks[pos[label] if len(chunks) > 1 else 0])
            shapes.append(tuple(shape))
        return shapes

    def stand_ins(self, shapes):
        """Arguments to trace with: zero-stride arrays of these shapes (nothing is
        allocated or computed)."""
        return [np.broadcast_to(np.zeros((), v.dtype), s)
                for v, s in zip(self.values, shapes)]

    def pairs(self):
        return [x for pair in zip(self.values, self.inds) for x in pair]


def _with_whole(fun, layout, whole, *blocks):
    """Call ``fun`` with ``blocks`` and the values passed whole, in the order
    ``layout`` gives (True: the next block)."""
    blocks, whole = iter(blocks), iter(whole)
    return fun(*[next(blocks) if is_block else next(whole) for is_block in layout])


def _split_whole(fun, pairs):
    """Bind the values passed whole (index None) into ``fun``: they are constants of
    the kernel, known with their shapes while tracing; the rest are block arguments."""
    if all(ind is not None for _, ind in pairs):
        return fun, pairs
    for value, ind in pairs:
        if ind is None:
            _check_whole_value(value)
    layout = tuple(ind is not None for _, ind in pairs)
    whole = tuple(v for v, ind in pairs if ind is None)
    return (functools.partial(_with_whole, fun, layout, whole),
            [(v, ind) for v, ind in pairs if ind is not None])


def _check_whole_value(value):
    if isinstance(value, (bool, int, float, complex, np.generic, np.ndarray)):
        return
    from .array import Array
    if isinstance(value, Array):
        return
    raise TypeError(f"absjit.dask: arguments must be dask arrays, NumPy arrays or "
                    f"scalars, got {type(value).__name__} (pass Python settings as "
                    "keyword arguments)")


# ---------------------------------------------------------------------------
# Working out the result's blocks by tracing
# ---------------------------------------------------------------------------
class _Tracer:
    """Traces of the chunk function at the ``ranked`` level, one per pattern of
    size-1 axes among the blocks (each pattern is one entry of a ranked cache)."""

    def __init__(self, fun, name):
        self.ranked = jit(fun, abstraction="ranked")
        self.name = name
        self.traces: dict = {}

    def out_shape(self, args: _Args, shapes):
        """``(output shape, dtype)`` of one block whose arguments have ``shapes``."""
        key = tuple(tuple(d == 1 for d in s) for s in shapes)
        traced = self.traces.get(key)
        if traced is None:
            traced = self.traces[key] = self._trace(args, shapes)
        in_avals, out_aval = traced
        try:
            sizes = bind_sizes(in_avals, shapes)
        except ValueError as err:
            raise ValueError(f"absjit.dask: {self.name} cannot run on blocks of shapes "
                             f"{_fmt_shapes(shapes)}: {err}") from None
        return tuple(evaluate(d, sizes) if isinstance(d, Dim) else int(d)
                     for d in out_aval.shape), out_aval.dtype

    def _trace(self, args, shapes):
        try:
            traced = self.ranked.trace(*args.stand_ins(shapes))
        except ConcretizationTypeError as err:
            raise ValueError(
                f"absjit.dask: {self.name} needs concrete sizes ({err}). Chunk functions "
                "are traced at the 'ranked' level to work out the result's blocks; "
                "compute sizes with shape arithmetic that works on any size.") from err
        if not tree_util.treedef_is_leaf(traced.out_tree):
            raise ValueError(f"absjit.dask: {self.name} must return one array, got "
                             f"{traced.out_tree}; call map_blocks once per result")
        jaxpr = traced.jaxpr.jaxpr
        return [v.aval for v in jaxpr.invars], traced.out_avals[0]

    def structure(self, args: _Args):
        """Trace once with every axis of size 2 (1 where the whole axis has size 1):
        the output's sizes as expressions, and the labels each depends on."""
        shapes = [tuple(1 if n == 1 else 2 for n in v.shape) for v in args.values]
        key = tuple(tuple(d == 1 for d in s) for s in shapes)
        traced = self.traces.get(key)
        if traced is None:
            traced = self.traces[key] = self._trace(args, shapes)
        in_avals, out_aval = traced
        root_labels: dict = {}
        for aval, ind in zip(in_avals, args.inds):
            for axis, d in enumerate(getattr(aval, "shape", ())):
                atom = d.atom() if isinstance(d, Dim) else None
                if atom is not None:
                    root_labels.setdefault(atom.name, set()).add(ind[axis])
        deps = []
        for d in out_aval.shape:
            labels = set()
            if isinstance(d, Dim):
                for atom in d.atoms():
                    labels |= root_labels.get(atom.name, set())
            deps.append(labels)
        return out_aval, deps


def _fmt_shapes(shapes) -> str:
    return ", ".join(str(tuple(s)) for s in shapes)


def _axis_expr(out_aval, k) -> str:
    return str(out_aval.shape[k])


def _assign_labels(out_aval, deps, args: _Args, name):
    """``out_ind`` for map_blocks: each output axis takes the one label its size
    depends on, or a new label when it is constant."""
    out_ind, used = [], {}
    fresh = itertools.count(max(args.labels, default=-1) + 1)  # map_blocks: int labels
    for k, labels in enumerate(deps):
        if len(labels) > 1:
            raise ValueError(
                f"absjit.dask: output axis {k} of {name} has size "
                f"{_axis_expr(out_aval, k)}, which depends on input axes "
                f"{sorted(labels, key=str)}; a block's size along one output axis may "
                "depend on one input axis only (reshape the result with Dask "
                "instead)")
        if labels:
            (label,) = labels
            if label in used:
                raise ValueError(
                    f"absjit.dask: output axes {used[label]} and {k} of {name} both "
                    f"follow input axis {label!r}; use blockwise with distinct labels")
            used[label] = k
            out_ind.append(label)
        else:
            out_ind.append(next(fresh))
    return tuple(out_ind)


def _plan(tracer: _Tracer, args: _Args, out_ind, name):
    """``(chunks of each output axis, dtype, new-axis sizes)`` for ``out_ind``, checking
    that every block agrees: an output axis's sizes may depend only on the position
    along its own label."""
    out_aval, deps = tracer.structure(args)
    if len(out_ind) != len(out_aval.shape):
        raise ValueError(f"absjit.dask: {name} returns rank {len(out_aval.shape)}, but "
                         f"the output index {''.join(map(str, out_ind))!r} has rank "
                         f"{len(out_ind)}")
    kept = [l for l in args.labels if l in out_ind]
    for k, (label, labels) in enumerate(zip(out_ind, deps)):
        stray = labels - {label} - (set(args.labels) - set(kept))
        if stray:
            raise ValueError(
                f"absjit.dask: output axis {k} ({label!r}) of {name} has size "
                f"{_axis_expr(out_aval, k)}, which depends on input axes "
                f"{sorted(stray, key=str)} kept in the output; blocks along it would "
                "differ in size")
    # Representative block numbers per kept label: one of size 1 and one not, so
    # that every pattern of size-1 axes (a separate ranked trace) is checked.
    reps = {}
    for l in kept:
        chunks = args.chunks[l]
        picks = {}
        for p, c in enumerate(chunks):
            picks.setdefault(c == 1, p)
        reps[l] = sorted(picks.values())
    chunks_out, dtype = [], None
    for k, label in enumerate(out_ind):
        if label in kept:
            positions = range(len(args.chunks[label]))
            others = [l for l in kept if l != label]
        else:
            positions = [None]
            others = kept
        sizes_k = []
        for p in positions:
            seen = set()
            for combo in itertools.product(*(reps[l] for l in others)):
                pos = dict(zip(others, combo))
                if p is not None:
                    pos[label] = p
                shape, dt = tracer.out_shape(args, args.block_shapes(pos))
                if dtype is None:
                    dtype = dt
                elif dt != dtype:
                    raise ValueError(f"absjit.dask: {name} returns {dt} on some blocks "
                                     f"and {dtype} on others")
                seen.add(shape[k])
            if len(seen) > 1:
                raise ValueError(
                    f"absjit.dask: output axis {k} of {name} has different sizes "
                    f"{sorted(seen)} for blocks in the same row of the block grid")
            sizes_k.append(seen.pop())
        chunks_out.append(tuple(sizes_k))
    if dtype is None:  # rank-0 output: one block
        _, dtype = tracer.out_shape(args, args.block_shapes({l: 0 for l in kept}))
    new_axes = {l: chunks_out[k] for k, l in enumerate(out_ind) if l not in kept}
    return tuple(chunks_out), np.dtype(dtype), new_axes


def _build(f, out_ind, pairs, kwargs, *, abstraction, backend, compiler_options, name,
           chunks_override=None):
    """The Dask array of ``f`` over ``pairs``; ``out_ind`` None means map_blocks'
    inference of the labels."""
    fun, options = _prepare(f, kwargs, abstraction, backend, compiler_options)
    fname = _fn_name(fun)
    fun, pairs = _split_whole(fun, pairs)
    args = _Args(pairs)
    tracer = _Tracer(fun, fname)
    if out_ind is None:
        out_aval, deps = tracer.structure(args)
        out_ind = _assign_labels(out_aval, deps, args, fname)
    out_ind = tuple(out_ind)
    chunks_out, dtype, new_axes = _plan(tracer, args, out_ind, fname)
    if chunks_override is not None:
        chunks_out = _normalize_override(chunks_override, chunks_out, fname)
    token = da.core.tokenize(fun, options, out_ind, *args.pairs(), chunks_out,
                             config.enable_x64)
    label = f"{fname}-{token[:8]}"
    kernel = BlockKernel(jit(fun, **options), label, config.enable_x64)
    adjust = {l: chunks_out[k] for k, l in enumerate(out_ind) if l not in new_axes}
    out = da.blockwise(
        kernel, out_ind, *args.pairs(), name=name or f"absjit-{label}", dtype=dtype,
        adjust_chunks=adjust, new_axes={l: c for l, c in new_axes.items()},
        concatenate=True, align_arrays=False,
        meta=np.empty((0,) * len(out_ind), dtype))
    return out


def _normalize_override(chunks, inferred, name):
    normalized = da.core.normalize_chunks(chunks, tuple(sum(c) for c in inferred))
    if normalized != inferred:
        raise ValueError(f"absjit.dask: chunks={chunks!r} disagree with the blocks "
                         f"{name} returns, {inferred}")
    return normalized


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------
def map_blocks(f, *args, abstraction=None, backend=None, compiler_options=None,
               chunks=None, name=None, **kwargs):
    """Apply a jitted ``f`` to each block of Dask arrays: ``f(*blocks, **kwargs)``.

    Parameters
    ----------
    f : callable
        A function of arrays written with ``absjit.numpy``/``absjit.lax`` (or a jitted
        one), returning one array.
    *args : dask arrays, NumPy arrays or scalars
        Dask arrays are aligned by their trailing axes and broadcast as in
        ``dask.array.map_blocks`` (rechunked to common chunks where needed); other
        values are passed whole to every block.
    abstraction : str, optional
        The level ``f`` is compiled at (default ``"ranked"``: one kernel per worker for
        every block size of a rank; an axis of size 1 is a second kernel).
    backend, compiler_options : optional
        As for :func:`absjit.jit` (``backend="cuda"`` runs the blocks on the worker's
        GPU, at the ``shaped`` level unless ``abstraction`` says otherwise; blocks come
        back as NumPy arrays).
    chunks : tuple, optional
        The result's chunks, when you want them checked against what the trace gives.
    name : str, optional
        The Dask key prefix (default: ``absjit-<function>-<token>``).
    **kwargs
        Python values passed to ``f`` as keyword arguments, fixed for the whole array
        (they become constants of the compiled kernel).

    Returns
    -------
    dask.array.Array
        Chunks and dtype found by tracing ``f`` (see the module docstring for how
        output axes follow input axes).

    Raises
    ------
    ValueError
        When ``f`` needs concrete sizes, returns several arrays, or its output cannot
        be cut into blocks (an output size mixing input axes); when the blocks do not
        satisfy what ``f`` assumes (two axes it adds must be equal).
    TypeError
        For an argument that is not an array or scalar.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import absjit.dask, absjit.numpy as jnp
    >>> x = da.from_array(np.ones((6, 4), np.float32), chunks=(4, 4))
    >>> absjit.dask.map_blocks(lambda b: b.sum(axis=1), x).chunks
    ((4, 2),)
    >>> absjit.dask.map_blocks(lambda b: b[1:], x).chunks    # one shorter per block
    ((3, 1), (4,))
    """
    dask_args = [a for a in args if isinstance(a, da.Array)]
    if not dask_args:
        raise TypeError("absjit.dask.map_blocks needs at least one dask array argument")
    ndim = max(a.ndim for a in dask_args)
    pairs = [(a, tuple(range(ndim - a.ndim, ndim)) if isinstance(a, da.Array) else None)
             for a in args]
    return _build(f, None, pairs, kwargs, abstraction=abstraction, backend=backend,
                  compiler_options=compiler_options, name=name, chunks_override=chunks)


def blockwise(f, out_ind, *args, abstraction=None, backend=None, compiler_options=None,
              name=None, **kwargs):
    """``dask.array.blockwise`` with a jitted ``f``: explicit index labels, result
    chunks and dtype found by tracing.

    Parameters
    ----------
    f : callable
        As for :func:`map_blocks`.
    out_ind : str or tuple
        One label per output axis. A label of the inputs follows their blocks; a new
        label must have a constant size (one block).
    *args
        Pairs ``array, index`` as in ``dask.array.blockwise``; ``value, None`` passes a
        NumPy array or scalar whole. Input labels missing from ``out_ind`` are
        concatenated: ``f`` sees their whole extent.
    abstraction, backend, compiler_options, name, **kwargs
        As for :func:`map_blocks`.

    Returns
    -------
    dask.array.Array

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import absjit.dask
    >>> x = da.from_array(np.ones((6, 4), np.float32), chunks=(3, 2))
    >>> absjit.dask.blockwise(lambda b: b.T * 2, "ji", x, "ij").chunks
    ((2, 2), (3, 3))
    """
    if len(args) % 2:
        raise TypeError("absjit.dask.blockwise: arguments come in pairs (array, index)")
    pairs = [(args[i], tuple(args[i + 1]) if args[i + 1] is not None else None)
             for i in range(0, len(args), 2)]
    return _build(f, tuple(out_ind), pairs, kwargs, abstraction=abstraction,
                  backend=backend, compiler_options=compiler_options, name=name)


def _chunk_sum(fun, axes, *blocks):
    return jnp.sum(fun(*blocks), axis=axes, keepdims=True)


def reduction(f, *args, axis=None, op="sum", keepdims=False, split_every=None,
              abstraction=None, backend=None, compiler_options=None, **kwargs):
    """The sum or mean of ``f(*args)`` over ``axis``, with one fused kernel per block
    (``f`` and the block's partial sum) and a tree reduction of the partial sums.

    ``f`` must keep the block structure: its result's axis ``k`` follows the
    arguments' (aligned) axis ``k``, as an elementwise function does.

    Parameters
    ----------
    f : callable
        As for :func:`map_blocks`.
    *args
        As for :func:`map_blocks`.
    axis : int, tuple of int or None
        Axes of ``f``'s result to reduce (default: all).
    op : {"sum", "mean"}
        Sums follow ``absjit.numpy.sum``'s dtype; means divide the total by the count.
    keepdims : bool
    split_every : int, optional
        Partial sums combined per step of the tree reduction (Dask's default if None).
    abstraction, backend, compiler_options, **kwargs
        As for :func:`map_blocks`.

    Returns
    -------
    dask.array.Array

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import absjit.dask, absjit.numpy as jnp
    >>> x = da.from_array(np.arange(10.0), chunks=3)
    >>> float(absjit.dask.reduction(lambda b: b * b, x, op="mean").compute())
    28.5
    """
    if op not in ("sum", "mean"):
        raise ValueError(f"absjit.dask.reduction: op must be 'sum' or 'mean', got {op!r}")
    dask_args = [a for a in args if isinstance(a, da.Array)]
    if not dask_args:
        raise TypeError("absjit.dask.reduction needs at least one dask array argument")
    ndim = max(a.ndim for a in dask_args)
    pairs = [(a, tuple(range(ndim - a.ndim, ndim)) if isinstance(a, da.Array) else None)
             for a in args]
    fun, _ = _prepare(f, kwargs, abstraction, backend, compiler_options)
    fname = _fn_name(fun)
    fun, pairs = _split_whole(fun, pairs)
    args_ = _Args(pairs)
    tracer = _Tracer(fun, fname)
    out_aval, deps = tracer.structure(args_)
    out_ind = tuple(range(ndim))
    if len(out_aval.shape) != ndim or any(labels - {k} for k, labels in enumerate(deps)):
        raise ValueError(
            f"absjit.dask.reduction: {fname} must keep the block structure (output axis "
            f"k following input axis k, as an elementwise function does); its result "
            f"has shape ({', '.join(map(str, out_aval.shape))}). Use map_blocks, then "
            "reduce the result with Dask")
    f_chunks, f_dtype, _ = _plan(tracer, args_, out_ind, fname)
    axes = tuple(range(ndim)) if axis is None else tuple(
        normalize_axis_tuple(axis, ndim))
    total = int(np.prod([sum(f_chunks[a]) for a in axes], dtype=np.int64))

    # Along the reduced axes each block's partial sum has size 1: the trace says so.
    partials = _build(functools.partial(_chunk_sum, fun, axes), out_ind, pairs, {},
                      abstraction=abstraction, backend=backend,
                      compiler_options=compiler_options, name=None)
    summed = partials.sum(axis=axes, keepdims=keepdims, split_every=split_every,
                          dtype=partials.dtype)
    if op == "sum":
        return summed
    mean_dtype = np.dtype(jnp.mean(jnp.zeros(1, f_dtype)).dtype)
    return (summed / total).astype(mean_dtype) if total else summed.astype(mean_dtype)
