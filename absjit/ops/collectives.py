"""Collectives over a named ``vmap`` axis: ``psum``, ``pmean``, ``pmax``, ``pmin``,
``all_gather``, ``axis_index`` and ``axis_size``.

``vmap(f, axis_name="i")`` gives its mapped axis a name; inside ``f`` a collective
combines the values of every member of that axis (``psum(x, "i")`` is the sum over the
batch, the same for every member). The primitives carry the axis name as a parameter:

- the batching trace of the named axis reduces over its batch dimension and returns an
  unbatched result; the trace of another axis maps the collective over its members;
- differentiation is linear for ``psum`` and ``all_gather`` (a sum's transpose is a sum;
  a gather's is the member's slice of the summed cotangent); ``pmax``/``pmin`` are not
  differentiated, as in JAX;
- inside a ``jit`` under the ``vmap`` they are staged and resolved when the call is
  batched; no backend ever sees one. Outside any ``vmap`` of that name they raise
  ``NameError`` before anything runs.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes, tree_util
from ..core.dims import Dim
from ..core.fusion import Opaque, def_fusion
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import _STATE, _top_main, get_aval
from ..interpreters import ad, batching
from . import elementwise as ew
from . import reductions as red
from . import structural as st
from .values import asarray, asarray_weak

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "psum_p", "pmax_p", "pmin_p", "all_gather_p", "axis_index_p"]


def _batch_main(axis_name):
    """The innermost batching main trace named ``axis_name`` (``NameError`` if none)."""
    from ..interpreters.batching import BatchTrace
    for main in reversed(_STATE.get().stack):
        payload = main.payload
        if main.trace_type is BatchTrace and getattr(payload, "name", None) == axis_name:
            return main
    names = [m.payload.name for m in _STATE.get().stack
             if m.trace_type is BatchTrace and getattr(m.payload, "name", None) is not None]
    raise NameError(f"unbound axis name: {axis_name!r}. The axis names bound by vmap here "
                    f"are: {names}")


def axis_size(axis_name) -> int:
    """The size of the ``vmap`` axis called ``axis_name``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.vmap(lambda x: x * axis_size("i"), axis_name="i")(jnp.ones(3))
    Array([3., 3., 3.], dtype=float32)
    """
    return _batch_main(axis_name).payload.size


def _unbound(*_, axis_name, **__):
    raise NameError(f"unbound axis name: {axis_name!r}: a collective ran outside a vmap "
                    "that names its axis")


class _Collective(Primitive):
    """A primitive over a named axis. Binding it always involves that axis: operands
    that do not reach its batching trace (constants, values of traces below it, such as
    a cotangent seed in a backward pass) are lifted into it, so ``psum(1.0, "i")`` is
    the axis size. Operands of traces above it (a ``grad`` or ``jit`` inside the
    ``vmap``) bind as usual, and those traces pass the collective down."""

    __slots__ = ()

    def bind(self, *args, **params):
        main = _batch_main(params["axis_name"])
        if _top_main(args).level < main.level:
            trace = main.trace_type(main)
            outs = trace.process_primitive(self, [trace.pure(a) for a in args], params)
            outs = [o.full_lower() for o in outs]
            return outs if self.multiple_results else outs[0]
        return super().bind(*args, **params)


def _collective(name, reduce_fn, scale_unbatched):
    prim = _Collective(name, param_order=("axis_name",))
    batching.collective_primitives.add(prim)
    abstract_eval_rules[prim] = lambda aval, *, axis_name: [aval.to_shaped()]
    impl_rules[prim] = _unbound
    def_fusion(prim, Opaque())

    def batch(vals, dims, *, axis_name, batch_axis_name, batch_axis_size):
        (x,), (d,) = vals, dims
        if axis_name != batch_axis_name:      # another axis: map over this one
            return [prim.bind(x, axis_name=axis_name)], [d]
        if d is None:
            return [scale_unbatched(x, batch_axis_size)], [None]
        return [reduce_fn(x, (d,))], [None]
    batch.needs_axis_name = True
    batching.batch_rules[prim] = batch
    return prim


def _times(x, n):
    from . import elementwise as ew
    return ew.mul(x, np.asarray(n, get_aval(x).dtype))


psum_p = _collective("psum", red.reduce_sum, _times)
pmax_p = _collective("pmax", red.reduce_max, lambda x, n: x)
pmin_p = _collective("pmin", red.reduce_min, lambda x, n: x)
ad.deflinear(psum_p, lambda ct, x, **params: [psum_p.bind(ct, **params)])


def _no_jvp(name):
    def rule(primals, tangents, **params):
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")
    return rule


ad.jvp_rules[pmax_p] = _no_jvp("pmax")
ad.jvp_rules[pmin_p] = _no_jvp("pmin")


def _tree_collective(prim, x, axis_name):
    _batch_main(axis_name)   # NameError before anything is staged
    return tree_util.tree_map(lambda v: prim.bind(_as_array(v), axis_name=axis_name), x)


def _as_array(v):
    return asarray(v)


def psum(x, axis_name):
    """The sum of ``x`` (a pytree) over the members of the ``vmap`` axis ``axis_name``;
    every member gets the same result.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.vmap(lambda x: x / psum(x, "i"), axis_name="i")(jnp.array([1.0, 3.0]))
    Array([0.25, 0.75], dtype=float32)
    """
    return _tree_collective(psum_p, x, axis_name)


def pmean(x, axis_name):
    """The mean of ``x`` (a pytree) over the ``vmap`` axis ``axis_name``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.vmap(lambda x: x - pmean(x, "i"), axis_name="i")(jnp.array([1.0, 3.0]))
    Array([-1.,  1.], dtype=float32)
    """
    n = axis_size(axis_name)
    return tree_util.tree_map(lambda s: _true_divide(s, n), psum(x, axis_name))


def _true_divide(s, n):
    """``jnp.true_divide(s, n)`` for the size ``n`` of an axis (a Python int, or a
    symbolic size): promoted as ``jnp`` does, an integer or bool result type becoming
    the default float."""
    n = n.value() if type(n) is Dim else n
    dt, weak = dtypes.result_type_and_weak(s, n)
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    return ew.div(asarray_weak(s, dt, weak), asarray_weak(n, dt, weak))


def pmax(x, axis_name):
    """The maximum of ``x`` (a pytree) over the ``vmap`` axis ``axis_name``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.vmap(lambda x: pmax(x, "i"), axis_name="i")(jnp.array([1.0, 3.0]))
    Array([3., 3.], dtype=float32)
    """
    return _tree_collective(pmax_p, x, axis_name)


def pmin(x, axis_name):
    """The minimum of ``x`` (a pytree) over the ``vmap`` axis ``axis_name``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.vmap(lambda x: pmin(x, "i"), axis_name="i")(jnp.array([1.0, 3.0]))
    Array([1., 1.], dtype=float32)
    """
    return _tree_collective(pmin_p, x, axis_name)


# -- all_gather ----------------------------------------------------------------------
all_gather_p = _Collective("all_gather", param_order=("axis_name", "axis", "tiled"))
batching.collective_primitives.add(all_gather_p)


def _gathered_shape(shape, size, axis, tiled):
    shape = list(shape)
    if tiled:
        shape[axis] = size * shape[axis]
    else:
        shape.insert(axis, size)
    return tuple(shape)


def _all_gather_abstract(aval, *, axis_name, axis_size, axis, tiled):
    return [aval.to_shaped().update(shape=_gathered_shape(aval.shape, axis_size, axis,
                                                          tiled))]


abstract_eval_rules[all_gather_p] = _all_gather_abstract
impl_rules[all_gather_p] = _unbound
def_fusion(all_gather_p, Opaque())


def _all_gather_batch(vals, dims, *, axis_name, axis_size, axis, tiled, batch_axis_name,
                      **_):
    (x,), (d,) = vals, dims
    if axis_name != batch_axis_name:
        out = all_gather_p.bind(x, axis_name=axis_name, axis_size=axis_size, axis=axis,
                                tiled=tiled)
        # the gathered axis is inserted before the member's ``axis``: this batch axis
        # moves one place when it sits at or after it
        return [out], [None if d is None else (d + 1 if d >= axis and not tiled else d)]
    x = batching.bdim_at_front(x, d, axis_size)      # (size, *member shape)
    x = batching.moveaxis(x, 0, axis)
    if tiled:
        shape = list(get_aval(x).shape)
        merged = shape[:axis] + [shape[axis] * shape[axis + 1]] + shape[axis + 2:]
        x = st.reshape(x, tuple(merged))
    return [x], [None]


_all_gather_batch.needs_axis_name = True
batching.batch_rules[all_gather_p] = _all_gather_batch


def _all_gather_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    return [all_gather_p.bind(x, **params)], [all_gather_p.bind(t, **params)]


def _all_gather_transpose(cts, x, *, axis_name, axis_size, axis, tiled):
    ct = psum_p.bind(cts[0], axis_name=axis_name)
    i = axis_index(axis_name)
    aval = x.aval
    n = aval.shape[axis] if tiled else 1
    start = [np.int32(0)] * len(get_aval(ct).shape)
    from . import elementwise as ew
    start[axis] = ew.mul(i, np.int32(n))
    sizes = list(get_aval(ct).shape)
    sizes[axis] = n
    piece = st.dynamic_slice(ct, start, tuple(sizes))
    return [piece if tiled else st.reshape(piece, tuple(aval.shape))]


ad.jvp_rules[all_gather_p] = _all_gather_jvp
ad.transpose_rules[all_gather_p] = _all_gather_transpose


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every member's ``x`` (a pytree) stacked along a new axis ``axis`` (or, with
    ``tiled``, concatenated along ``axis``), over the ``vmap`` axis ``axis_name``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.vmap(lambda x: all_gather(x, "i"), axis_name="i")(jnp.array([1.0, 3.0]))
    Array([[1., 3.],
           [1., 3.]], dtype=float32)
    """
    n = axis_size(axis_name)

    def one(v):
        v = _as_array(v)
        nd = len(get_aval(v).shape)
        limit = nd if tiled else nd + 1
        if not -limit <= axis < limit:
            raise ValueError(f"all_gather: axis {axis} is out of bounds for a value of rank "
                             f"{nd}")
        if tiled and nd == 0:
            raise ValueError("all_gather: tiled=True needs values of rank >= 1")
        return all_gather_p.bind(v, axis_name=axis_name, axis_size=n, axis=axis % limit,
                                 tiled=bool(tiled))
    return tree_util.tree_map(one, x)


# -- axis_index ----------------------------------------------------------------------
# No operands: binding it under its vmap (see _Collective) gives that axis's iota; inside
# a trace above the vmap (a jit under it) it is staged and resolved when the call is
# batched.
axis_index_p = _Collective("axis_index", param_order=("axis_name",))
batching.collective_primitives.add(axis_index_p)


def _axis_index_batch(vals, dims, *, axis_name, batch_axis_name, batch_axis_size):
    if axis_name != batch_axis_name:
        return [axis_index_p.bind(axis_name=axis_name)], [None]
    return [st.iota(np.dtype(np.int32), (batch_axis_size,), 0)], [0]


_axis_index_batch.needs_axis_name = True
batching.batch_rules[axis_index_p] = _axis_index_batch
abstract_eval_rules[axis_index_p] = lambda *, axis_name: [
    get_aval(np.int32(0)).to_shaped()]
impl_rules[axis_index_p] = _unbound
def_fusion(axis_index_p, Opaque())


def axis_index(axis_name):
    """This member's position (int32) on the ``vmap`` axis ``axis_name``.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.vmap(lambda x: x * axis_index("i"), axis_name="i")(jnp.ones(3))
    Array([0., 1., 2.], dtype=float32)
    """
    return axis_index_p.bind(axis_name=axis_name)
