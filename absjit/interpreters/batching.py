"""Batching (``vmap``): rule table and helpers for defining rules.

``batch_rules[p](vals, dims, **params) -> (vals_out, dims_out)``
    ``vals`` are the batched operands; ``dims[i]`` is the batch axis of ``vals[i]`` or
    ``None`` when that operand is not batched. Returns lists.

Helpers: :func:`defvectorized` (unary elementwise: the batch axis passes through) and
:func:`defbroadcasting` (n-ary elementwise: batch axes are moved to 0 and unbatched
non-scalar operands are broadcast).
"""
from __future__ import annotations

__all__ = ["batch_rules", "not_mapped", "moveaxis", "bdim_at_front", "defvectorized",
           "defbroadcasting", "BatchTrace", "BatchTracer", "batch_flat", "matchaxis",
           "batch_jaxpr"]

import contextvars

from ..core.jaxpr import eval_jaxpr
from ..core.trace import Trace, Tracer, get_aval, new_main
from . import array_ops
from .staging import trace_to_jaxpr

batch_rules: dict = {}
not_mapped = None
#: Primitives that act across the members of a named axis (``psum`` …): their batching
#: rules run even when no operand is batched, and receive the trace's axis name and
#: size as ``batch_axis_name``/``batch_axis_size`` (rules marked ``needs_axis_name``).
collective_primitives: set = set()


def moveaxis(x, src: int, dst: int):
    """Move axis ``src`` of ``x`` to ``dst`` with a ``transpose`` primitive."""
    ndim = len(get_aval(x).shape)
    src, dst = src % ndim, dst % ndim
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return array_ops.transpose(x, tuple(int(p) for p in perm))


def bdim_at_front(x, bdim, size: int):
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast to ``size``."""
    if bdim is None:
        shape = get_aval(x).shape
        return array_ops.broadcast_in_dim(x, (size,) + tuple(shape),
                                           tuple(range(1, len(shape) + 1)))
    return moveaxis(x, bdim, 0)


def defvectorized(primitive):
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        return [primitive.bind(x, **params)], [d]
    rule.__name__ = f"{primitive.name}_batch"
    batch_rules[primitive] = rule
    return rule


def broadcast_batched(vals, dims, keep=None) -> list:
    """Operands of an elementwise op with the batch axis first and every operand
    broadcast to the full batched shape ``(size, *shape)``.

    lax elementwise operands are rank 0 or share one shape; unbatched rank-0 operands
    whose ``keep`` flag is set stay rank 0 (lax broadcasts them for free).
    """
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    shape = ()
    for v, d in zip(vals, dims):
        s = list(get_aval(v).shape)
        if d is not None:
            del s[d]
        if s:
            shape = tuple(s)
            break
    full = (size,) + shape
    keep = [True] * len(vals) if keep is None else keep
    out = []
    for v, d, k in zip(vals, dims, keep):
        nd = len(get_aval(v).shape)
        if d is None and nd == 0 and k:
            out.append(v)
        elif d is not None:
            v = moveaxis(v, d, 0)
            out.append(v if get_aval(v).shape == full
                       else array_ops.broadcast_in_dim(v, full, (0,)))
        else:
            out.append(array_ops.broadcast_in_dim(
                v, full, tuple(range(1 + len(shape) - nd, 1 + len(shape)))))
    return out


def defbroadcasting(primitive):
    def rule(vals, dims, **params):
        return [primitive.bind(*broadcast_batched(vals, dims), **params)], [0]
    rule.__name__ = f"{primitive.name}_batch"
    batch_rules[primitive] = rule
    return rule


# ---------------------------------------------------------------------------
# The batching trace
# ---------------------------------------------------------------------------
# The name of the axis whose batching rule is running (see BatchTrace.process_primitive).
_AXIS_NAME: contextvars.ContextVar = contextvars.ContextVar("absjit_batch_axis_name",
                                                            default=None)


class BatchInfo:
    """Payload of a batching main trace: the size of the mapped axis."""

    __slots__ = ("size", "name")

    def __init__(self, size: int, name=None):
        self.size = size
        self.name = name


class BatchTracer(Tracer):
    """A batch of values stacked along ``bdim`` (``None``: the same for every member)."""

    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        a = get_aval(self.val)
        if self.bdim is None:
            return a
        # Each member sees its own slice; its value is not one Python value, so the
        # member's aval never knows a value.
        shape = list(a.shape)
        del shape[self.bdim]
        return a.to_shaped().update(shape=tuple(shape))

    def full_lower(self):
        if self.bdim is None:
            v = self.val
            return v.full_lower() if isinstance(v, Tracer) else v
        return self


class BatchTrace(Trace):
    __slots__ = ()

    @property
    def axis_size(self) -> int:
        return self.main.payload.size

    def pure(self, val):
        return BatchTracer(self, val, None)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        if all(d is None for d in dims) and primitive not in collective_primitives:
            outs = primitive.bind(*vals, **params)
            outs = outs if primitive.multiple_results else [outs]
            return [BatchTracer(self, o, None) for o in outs]
        rule = batch_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
        name = self.main.payload.name
        # Rules of higher-order primitives batch their bodies in a trace of their own:
        # it takes this axis's name, so collectives in the body find it.
        token = _AXIS_NAME.set(name) if name is not None or _AXIS_NAME.get() is not None \
            else None
        try:
            if getattr(rule, "needs_axis_name", False):
                outs, dims_out = rule(vals, dims, batch_axis_name=name,
                                      batch_axis_size=self.axis_size, **params)
            elif getattr(rule, "needs_axis_size", False):
                outs, dims_out = rule(vals, dims, axis_size=self.axis_size, **params)
            else:
                outs, dims_out = rule(vals, dims, **params)
        finally:
            if token is not None:
                _AXIS_NAME.reset(token)
        return [BatchTracer(self, o, d) for o, d in zip(outs, dims_out)]

    def describe_origin(self, tracer) -> str:
        v = tracer.val
        describe = getattr(getattr(v, "_trace", None), "describe_origin", None)
        return describe(v) if describe is not None else ""


_INHERIT = object()


def batch_flat(fun, vals, dims, size: int, axis_name=_INHERIT):
    """Run ``fun`` (flat -> flat) on batched ``vals``; returns ``(outs, out_dims)``.
    ``axis_name`` names the axis for collectives; by default a body batched by a rule
    takes the name of the axis whose rule is running."""
    if axis_name is _INHERIT:
        axis_name = _AXIS_NAME.get()
    with new_main(BatchTrace, payload=BatchInfo(size, axis_name)) as main:
        trace = BatchTrace(main)
        ins = [BatchTracer(trace, v, d) if d is not None else v for v, d in zip(vals, dims)]
        outs = [trace.full_raise(o) for o in fun(*ins)]
        return [o.val for o in outs], [o.bdim for o in outs]


def matchaxis(x, src, dst, size: int):
    """``x`` with its batch axis at ``dst`` (broadcast when ``src`` is None);
    ``dst=None`` requires ``src`` to be None."""
    if src == dst:
        return x
    if dst is None:
        raise ValueError("vmap has mapped output but out_axes is None")
    if src is None:
        x = bdim_at_front(x, None, size)
        src = 0
    return moveaxis(x, src, dst)


def batch_jaxpr(closed, size: int, dims_in, force_out_dims=None):
    """A ClosedJaxpr computing ``closed`` on a batch: inputs batched at ``dims_in``
    (``None`` = unbatched), outputs batched at 0 or unbatched.

    Returns ``(batched_closed_jaxpr, out_batched)``; with ``force_out_dims`` (a list of
    bools) the outputs marked True are batched at 0 even when they do not depend on
    a batched input.
    """
    in_avals = []
    for a, d in zip(closed.in_avals, dims_in):
        a = a.to_shaped()
        if d is not None:
            shape = list(a.shape)
            shape.insert(d, size)
            a = a.update(shape=tuple(shape))
        in_avals.append(a)
    out_box = []

    def fun(*args):
        outs, odims = batch_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                 list(args), list(dims_in), size)
        res = []
        for i, (o, d) in enumerate(zip(outs, odims)):
            want = d is not None or (force_out_dims is not None and force_out_dims[i])
            res.append(matchaxis(o, d, 0, size) if want else o)
        out_box.append([d is not None or (force_out_dims is not None and force_out_dims[i])
                        for i, d in enumerate(odims)])
        return res

    new, _ = trace_to_jaxpr(fun, in_avals, None, transform="vmap")
    return new, out_box[-1]
