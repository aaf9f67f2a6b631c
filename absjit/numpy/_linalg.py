"""``absjit.numpy`` products: dot matmul vdot inner outer tensordot einsum kron cross.

Every contraction is one ``dot_general``; operands are promoted together first, as in
JAX (``jnp.dot(int32, float32)`` is float32).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..core.dims import is_dim, unify, unify_sizes
from ..core.shapes import as_size, size_of
from ..core.trace import get_aval
from ..errors import IncompatibleShapesError, InconclusiveDimensionError
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops.linalg import dot_general
from ._promote import broadcast_shapes, broadcast_to_shape, check_arraylike, promote_dtypes

__all__ = ["dot", "matmul", "vdot", "vecdot", "inner", "outer", "tensordot", "einsum",
           "kron", "cross"]


def _shape(x):
    return tuple(get_aval(x).shape)


def _promote(name, *args):
    check_arraylike(name, *args)
    return promote_dtypes(*args)


def _pet(preferred_element_type):
    if preferred_element_type is None:
        return None
    return dtypes.canonicalize_dtype(np.dtype(preferred_element_type))


def _cast_pet(args, preferred_element_type):
    """With ``preferred_element_type``, convert operands to it (absjit's ``dot_general``
    computes in its result dtype anyway)."""
    pet = _pet(preferred_element_type)
    if pet is None:
        return args
    return [a if get_aval(a).dtype == pet else ew.convert_element_type(a, pet)
            for a in args]


def _transpose(x, perm):
    perm = tuple(int(p) for p in perm)
    if perm == tuple(range(len(perm))):
        return x
    return st.transpose(x, perm)


def _reshape(x, shape):
    shape = tuple(as_size(s) for s in shape)
    if _shape(x) == shape:
        return x
    return st.reshape(x, shape)


def dot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of two arrays (NumPy's ``dot``).

    0-d operands multiply; otherwise the last axis of ``a`` contracts with the last
    axis of a 1-D ``b`` or the second-to-last axis of ``b``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.dot(jnp.array([1, 2]), jnp.array([3., 4.]))
    Array(11., dtype=float32)
    """
    a, b = _cast_pet(_promote("dot", a, b), preferred_element_type)
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return ew.mul(*_broadcast_pair(a, b))
    contract_b = 0 if len(sb) == 1 else len(sb) - 2
    if not unify(sa[-1], sb[contract_b]):  # contracted sizes must agree
        raise IncompatibleShapesError(
            f"dot: shapes {sa} and {sb} are not aligned: {sa[-1]} (dim {len(sa) - 1}) != "
            f"{sb[contract_b]} (dim {contract_b})")
    return dot_general(a, b, (((len(sa) - 1,), (contract_b,)), ((), ())), precision)


def _broadcast_pair(a, b):
    sa, sb = _shape(a), _shape(b)
    if sa == sb or not sa or not sb:
        return a, b
    shape = broadcast_shapes("multiply", sa, sb)
    return broadcast_to_shape(a, shape), broadcast_to_shape(b, shape)


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's rules (``a @ b``): batch axes broadcast, a 1-D
    operand is a row (left) or column (right) vector whose axis is then dropped.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.matmul(jnp.ones((2, 1, 3, 4)), jnp.ones((5, 4, 2))).shape
    (2, 5, 3, 2)
    """
    a, b = _cast_pet(_promote("matmul", a, b), preferred_element_type)
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        raise ValueError(f"matmul: operands must not be 0-d, got shapes {sa} and {sb}")
    a_vec, b_vec = len(sa) == 1, len(sb) == 1
    if a_vec:
        a, sa = _reshape(a, (1,) + sa), (1,) + sa
    if b_vec:
        b, sb = _reshape(b, sb + (1,)), sb + (1,)
    if not unify(sa[-1], sb[-2]):  # contracted sizes must agree
        raise IncompatibleShapesError(
            f"matmul: contracting dimensions differ: a has shape {_orig(sa, a_vec, True)} "
            f"and b has shape {_orig(sb, b_vec, False)} ({sa[-1]} != {sb[-2]})")
    ba, bb = sa[:-2], sb[:-2]
    if not bb:
        # (..., m, k) @ (k, n): a's batch axes are free axes; no broadcasting needed.
        out = dot_general(a, b, (((len(sa) - 1,), (0,)), ((), ())), precision)
    elif not ba:
        # (m, k) @ (..., k, n): contract, then move m next to n.
        out = dot_general(a, b, (((1,), (len(sb) - 2,)), ((), ())), precision)
        nb = len(bb)
        out = _transpose(out, tuple(range(1, nb + 1)) + (0, nb + 1))
    else:
        batch = broadcast_shapes("matmul", ba, bb)
        a = broadcast_to_shape(a, batch + sa[-2:])
        b = broadcast_to_shape(b, batch + sb[-2:])
        nb = len(batch)
        bd = tuple(range(nb))
        out = dot_general(a, b, (((nb + 1,), (nb,)), (bd, bd)), precision)
    so = _shape(out)
    if a_vec and b_vec:
        return _reshape(out, so[:-2])
    if a_vec:
        return _reshape(out, so[:-2] + so[-1:])
    if b_vec:
        return _reshape(out, so[:-1])
    return out


def _orig(shape, was_vec, left):
    if not was_vec:
        return shape
    return shape[1:] if left else shape[:-1]


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Flattened dot product, conjugating ``a`` if complex.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.vdot(jnp.array([1j, 2]), jnp.array([1j, 1]))
    Array(3.+0.j, dtype=complex64)
    """
    a, b = _promote("vdot", a, b)
    if get_aval(a).dtype.kind == "c":
        a = ew.conj(a)
    na, nb = size_of(_shape(a)), size_of(_shape(b))
    if not unify_sizes(na, nb, "jnp.vdot"):
        raise ValueError(f"vdot: operands must have the same size, got shapes {_shape(a)} "
                         f"and {_shape(b)}")
    return dot(_reshape(a, (na,)), _reshape(b, (nb,)), precision=precision,
               preferred_element_type=preferred_element_type)


def vecdot(x1, x2, *, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product along ``axis`` (conjugating ``x1``), batch axes broadcast.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.vecdot(jnp.ones((2, 3)), jnp.ones(3))
    Array([3., 3.], dtype=float32)
    """
    x1, x2 = _cast_pet(_promote("vecdot", x1, x2), preferred_element_type)
    if get_aval(x1).dtype.kind == "c":
        x1 = ew.conj(x1)
    s1, s2 = _shape(x1), _shape(x2)
    if not s1 or not s2:
        raise ValueError(f"vecdot: operands must not be 0-d, got shapes {s1} and {s2}")
    ax1 = _norm_axis("vecdot", axis, len(s1))
    ax2 = _norm_axis("vecdot", axis, len(s2))
    if not unify(s1[ax1], s2[ax2]):  # contracted sizes must agree
        raise ValueError(f"vecdot: axis {axis} has size {s1[ax1]} in shape {s1} but "
                         f"{s2[ax2]} in shape {s2}")
    x1 = _transpose(x1, [i for i in range(len(s1)) if i != ax1] + [ax1])
    x2 = _transpose(x2, [i for i in range(len(s2)) if i != ax2] + [ax2])
    s1, s2 = _shape(x1), _shape(x2)
    batch = broadcast_shapes("vecdot", s1[:-1], s2[:-1])
    x1 = broadcast_to_shape(x1, batch + s1[-1:])
    x2 = broadcast_to_shape(x2, batch + s2[-1:])
    nb = len(batch)
    bd = tuple(range(nb))
    return dot_general(x1, x2, (((nb,), (nb,)), (bd, bd)), precision)


def _norm_axis(name, axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Inner product over the last axes of ``a`` and ``b`` (no conjugation).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.inner(jnp.ones((2, 3)), jnp.ones((4, 3))).shape
    (2, 4)
    """
    a, b = _cast_pet(_promote("inner", a, b), preferred_element_type)
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return ew.mul(*_broadcast_pair(a, b))
    if not unify(sa[-1], sb[-1]):  # contracted sizes must agree
        raise ValueError(f"inner: last dimensions must match, got shapes {sa} and {sb}")
    return dot_general(a, b, (((len(sa) - 1,), (len(sb) - 1,)), ((), ())), precision)


def outer(a, b, out=None):
    """Outer product of the flattened operands.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.outer(jnp.array([1, 2]), jnp.array([1, 10, 100]))[1]
    Array([  2,  20, 200], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("outer: the 'out' argument is not supported (arrays are "
                                  "immutable)")
    a, b = _promote("outer", a, b)
    a = _reshape(a, (math.prod(_shape(a)),))  # a product of symbolic sizes stays one
    b = _reshape(b, (math.prod(_shape(b)),))
    return dot_general(a, b, (((), ()), ((), ())))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Sum products over the given axes (NumPy's ``tensordot``).

    ``axes`` is an int ``n`` (last ``n`` axes of ``a`` with the first ``n`` of ``b``) or
    a pair of axis sequences.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.tensordot(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5))).shape
    (2, 5)
    """
    a, b = _cast_pet(_promote("tensordot", a, b), preferred_element_type)
    sa, sb = _shape(a), _shape(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ValueError(f"tensordot: axes={n} must be between 0 and the rank of both "
                             f"operands, got shapes {sa} and {sb}")
        ca, cb = tuple(range(len(sa) - n, len(sa))), tuple(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise TypeError("tensordot: axes must be an int or a pair of axis sequences, "
                            f"got {axes!r}") from None
        ax_a = (ax_a,) if isinstance(ax_a, (int, np.integer)) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, (int, np.integer)) else tuple(ax_b)
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: axes {ax_a} and {ax_b} must have the same length")
        ca = tuple(_norm_axis("tensordot", x, len(sa)) for x in ax_a)
        cb = tuple(_norm_axis("tensordot", x, len(sb)) for x in ax_b)
    for i, j in zip(ca, cb):
        if not unify(sa[i], sb[j]):  # contracted sizes must agree
            raise ValueError(f"tensordot: shape mismatch for sum: axis {i} of {sa} has size "
                             f"{sa[i]} but axis {j} of {sb} has size {sb[j]}")
    return dot_general(a, b, ((ca, cb), ((), ())), precision)


def kron(a, b):
    """Kronecker product.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.kron(jnp.eye(2), jnp.ones((2, 2))).shape
    (4, 4)
    """
    a, b = _promote("kron", a, b)
    sa, sb = _shape(a), _shape(b)
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    a, b = _reshape(a, sa), _reshape(b, sb)
    out = dot_general(a, b, (((), ()), ((), ())))   # a's axes, then b's
    perm = [k for i in range(nd) for k in (i, nd + i)]
    return _reshape(_transpose(out, perm), tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, giving the z component).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.cross(jnp.array([1., 0, 0]), jnp.array([0., 1, 0]))
    Array([0., 0., 1.], dtype=float32)
    """
    a, b = _promote("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        raise ValueError("cross: operands must have at least one dimension")
    axa, axb = _norm_axis("cross", axisa, len(sa)), _norm_axis("cross", axisb, len(sb))
    a = _transpose(a, [i for i in range(len(sa)) if i != axa] + [axa])
    b = _transpose(b, [i for i in range(len(sb)) if i != axb] + [axb])
    sa, sb = _shape(a), _shape(b)
    for d in (sa[-1], sb[-1]):
        if is_dim(d):  # which formula applies depends on the vector size
            raise InconclusiveDimensionError(d, "jnp.cross (vectors of 2 or 3 elements)")
    if sa[-1] not in (2, 3) or sb[-1] not in (2, 3):
        raise ValueError("cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3), got shapes {sa} and {sb}")
    batch = broadcast_shapes("cross", sa[:-1], sb[:-1])

    def comp(x, i):
        s = _shape(x)
        c = st.slice(x, (0,) * (len(s) - 1) + (i,), s[:-1] + (i + 1,))
        return broadcast_to_shape(_reshape(c, s[:-1]), batch)

    a0, a1 = comp(a, 0), comp(a, 1)
    b0, b1 = comp(b, 0), comp(b, 1)
    if sa[-1] == 2 and sb[-1] == 2:
        return ew.sub(ew.mul(a0, b1), ew.mul(a1, b0))
    zero = ew.sub(a0, a0)
    a2 = comp(a, 2) if sa[-1] == 3 else zero
    b2 = comp(b, 2) if sb[-1] == 3 else ew.sub(b0, b0)
    cs = [ew.sub(ew.mul(a1, b2), ew.mul(a2, b1)),
          ew.sub(ew.mul(a2, b0), ew.mul(a0, b2)),
          ew.sub(ew.mul(a0, b1), ew.mul(a1, b0))]
    cs = [st.expand_dims(c, (len(batch),)) for c in cs]
    out = st.concatenate(cs, len(batch))
    axc = _norm_axis("cross", axisc, len(batch) + 1)
    perm = list(range(len(batch)))
    perm.insert(axc, len(batch))
    return _transpose(out, perm)



# ---------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(subscripts, shapes):
    """Operand and output index strings with ``...`` expanded to fresh letters."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} contain more than one '->'")
    explicit = "->" in spec
    lhs, out = spec.split("->") if explicit else (spec, None)
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operands but "
                         f"{len(shapes)} were given")
    for t in terms + ([out] if explicit else []):
        bad = set(t.replace("...", "")) - set(_LETTERS)
        if bad or t.count("...") > 1 or "." in t.replace("...", ""):
            raise ValueError(f"einsum: invalid subscript term {t!r} in {subscripts!r} "
                             "(letters and at most one '...')")
    used = set(lhs) | set(out or "")
    fresh = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for t, s in zip(terms, shapes):
        n_named = len(t.replace("...", ""))
        if "..." in t:
            if n_named > len(s):
                raise ValueError(f"einsum: term {t!r} names more axes than operand of shape "
                                 f"{tuple(s)} has")
            n_ell = max(n_ell, len(s) - n_named)
        elif n_named != len(s):
            raise ValueError(f"einsum: term {t!r} has {n_named} indices but the operand has "
                             f"shape {tuple(s)} (rank {len(s)})")
    if n_ell > len(fresh):
        raise ValueError("einsum: too many axes under '...'")
    ell = fresh[:n_ell]
    expanded = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - len(t.replace("...", ""))
            t = t.replace("...", "".join(ell[n_ell - k:]))
        expanded.append(t)
    if explicit:
        if "..." in out:
            out = out.replace("...", "".join(ell))
        elif any("..." in t for t in terms) and n_ell:
            # NumPy allows dropping broadcast axes only if they are summed; keep it strict.
            pass
        for c in out:
            if c not in "".join(expanded):
                raise ValueError(f"einsum: output index {c!r} of {subscripts!r} does not "
                                 "appear in any operand")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscripts of {subscripts!r} repeat an index")
    else:
        counts = {}
        for t in expanded:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = "".join(ell) + "".join(sorted((c for c, n in counts.items()
                                             if n == 1 and c not in ell),
                                            key=_LETTERS.index))
    return expanded, out


def _sum_axes(x, axes):
    if not axes:
        return x
    return red.reduce_sum(x, tuple(sorted(axes)))


def _take_diagonal(x, idx, i, j):
    """Keep entries where axes ``i`` and ``j`` agree, then drop axis ``j``."""
    shape = _shape(x)
    eye = ew.eq(st.iota(np.int32, shape, i), st.iota(np.int32, shape, j))
    zeros = st.broadcast_in_dim(np.zeros((), get_aval(x).dtype), shape, ())
    return red.reduce_sum(ew.select(eye, x, zeros), (j,)), idx[:j] + idx[j + 1:]


def einsum(subscripts, *operands, optimize=None, precision=None,
           preferred_element_type=None):
    """Einstein summation (``absjit.numpy.einsum``).

    Supports explicit (``'ij,jk->ik'``) and implicit (``'ij,jk'``) outputs, ``...``
    broadcasting, repeated indices (diagonals and traces) and any number of operands.
    Operands are contracted pairwise, left to right, each pair by one ``dot_general``;
    indices that appear in only one operand and not in the output are summed first.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.einsum('ij,jk->ik', jnp.ones((2, 3)), jnp.ones((3, 4))).shape
    (2, 4)
    >>> jnp.einsum('ii', jnp.eye(3))
    Array(3., dtype=float32)
    """
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    ops = list(_cast_pet(_promote("einsum", *operands), preferred_element_type))
    shapes = [_shape(o) for o in ops]
    terms, out = _parse_einsum(subscripts, shapes)
    sizes = {}
    for t, s in zip(terms, shapes):
        for c, d in zip(t, s):
            if c in sizes and not (d == 1 or sizes[c] == 1
                                   or unify_sizes(d, sizes[c], f"einsum {subscripts!r}")):
                raise ValueError(f"einsum: index {c!r} of {subscripts!r} has inconsistent "
                                 f"sizes {sizes[c]} and {d} (operand shapes "
                                 f"{', '.join(str(x) for x in shapes)})")
            if c not in sizes or (type(sizes[c]) is int and sizes[c] == 1):
                sizes[c] = d  # (equal sizes, or a 1 that broadcasts)

    items = []
    for x, t in zip(ops, terms):
        # Repeated indices within one operand: take the diagonal.
        while len(set(t)) != len(t):
            c = next(c for c in t if t.count(c) > 1)
            i = t.index(c)
            x, t = _take_diagonal(x, t, i, t.index(c, i + 1))
        # A size-1 axis broadcast against a larger one carries no information: drop it
        # (its single value is constant along the broadcast).
        s = _shape(x)
        drop = [k for k, c in enumerate(t) if s[k] == 1 and sizes[c] != 1]
        if drop:
            x = _reshape(x, tuple(d for k, d in enumerate(s) if k not in drop))
            t = "".join(c for k, c in enumerate(t) if k not in drop)
        items.append((x, t))

    def needed_elsewhere(c, skip):
        return c in out or any(c in t for k, (_, t) in enumerate(items) if k not in skip)

    def sum_unneeded(k):
        x, t = items[k]
        axes = [i for i, c in enumerate(t) if not needed_elsewhere(c, (k,))]
        if axes:
            x = _sum_axes(x, axes)
            t = "".join(c for i, c in enumerate(t) if i not in axes)
        items[k] = (x, t)

    for k in range(len(items)):
        sum_unneeded(k)
    while len(items) > 1:
        (x, tx), (y, ty) = items[0], items[1]
        later = [t for _, t in items[2:]]
        shared = [c for c in tx if c in ty]
        batch = [c for c in shared if c in out or any(c in t for t in later)]
        contract = [c for c in shared if c not in batch]
        dn = ((tuple(tx.index(c) for c in contract), tuple(ty.index(c) for c in contract)),
              (tuple(tx.index(c) for c in batch), tuple(ty.index(c) for c in batch)))
        z = dot_general(x, y, dn, precision)
        tz = "".join(batch) + "".join(c for c in tx if c not in shared) + \
            "".join(c for c in ty if c not in shared)
        items = [(z, tz)] + items[2:]
        sum_unneeded(0)
    x, t = items[0]
    # Bring the result to the output order; indices dropped as size-1 broadcasts
    # come back by broadcasting.
    present = [c for c in out if c in t]
    x = _transpose(x, [t.index(c) for c in present])
    out_shape = tuple(sizes[c] for c in out)
    if len(present) != len(out):
        x = st.broadcast_in_dim(x, out_shape, tuple(out.index(c) for c in present))
    return x
