"""Typed PRNG keys: ``random.key(seed)`` gives an array whose dtype is ``key<fry>``.

A typed key array of shape ``s`` holds a ``uint32[*s, 2]`` array of key words (its
*key data*). It is a pytree node with that one child, so it crosses every transform
the way any registered container does: as a ``jit`` argument or output, batched under
``vmap`` (the batch axes are the leading axes of the key data, so ``in_axes=0`` maps a
batch of keys), in ``scan``/``fori_loop``/``while_loop`` carries and inside other
pytrees; every backend sees only ``uint32`` arrays. What the type adds is the user
contract of JAX's typed keys: ``shape`` is the shape of the key array (``()`` for one
key), the dtype prints as ``key<fry>`` and is a subtype of ``absjit.dtypes.prng_key``,
and arithmetic or a conversion to NumPy raises ``TypeError`` (``random.key_data``
gives the words).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .. import numpy as jnp
from ..core.trace import get_aval, is_tracer
from ..tree_util import register_pytree_node

__all__ = ["KeyArray", "KeyDType", "PRNGImpl", "THREEFRY"]


class PRNGImpl(str):
    """A PRNG implementation's name (``random.key_impl`` returns one): it prints and
    compares as its name, like JAX's ``'threefry2x32'`` spec."""

    def __repr__(self):
        return f"'{str(self)}'"


THREEFRY = PRNGImpl("threefry2x32")


class KeyDType(dtypes.ExtendedDType):
    """The dtype of typed key arrays: ``key<fry>`` for threefry-2x32 keys."""
    type = dtypes.prng_key

    def __init__(self, impl: PRNGImpl = THREEFRY):
        self.impl = impl
        self.name = "key<fry>"

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDType) and other.impl == self.impl

    def __hash__(self):
        return hash(("key", str(self.impl)))

    @property
    def itemsize(self) -> int:
        return 8


_KEY_DTYPE = KeyDType()


def _no_arith(name):
    def method(self, *args, **kwargs):
        others = [getattr(a, "dtype", type(a).__name__) for a in args]
        raise TypeError(f"{name} does not accept dtypes "
                        f"{', '.join(str(d) for d in [self.dtype, *others])}: a typed PRNG "
                        "key is not a number (random.key_data(key) gives its uint32 words)")
    method.__name__ = f"__{name}__"
    return method


class KeyArray:
    """An array of typed PRNG keys (dtype ``key<fry>``) over ``uint32[..., 2]`` data.

    Made by ``random.key``, ``random.wrap_key_data`` and by ``split``/``fold_in`` of
    a typed key; never built directly.

    Examples
    --------
    >>> from absjit import random
    >>> k = random.key(0)
    >>> k.shape, k.dtype
    ((), key<fry>)
    >>> random.split(k, 3).shape
    (3,)
    """
    __slots__ = ("_data",)
    __array_priority__ = 100

    def __init__(self, data):
        self._data = data

    # -- array-like attributes -------------------------------------------------
    @property
    def dtype(self) -> KeyDType:
        return _KEY_DTYPE

    @property
    def shape(self) -> tuple:
        return tuple(get_aval(self._data).shape[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a single PRNG key)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a single PRNG key (shape ())")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        return KeyArray(self._data[(*idx, slice(None))])

    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return KeyArray(jnp.reshape(self._data, (*shape, 2)))

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        return KeyArray(jnp.squeeze(self._data, axis))

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0])
        axes = tuple(range(self.ndim))[::-1] if not axes else tuple(a % self.ndim for a in axes)
        return KeyArray(jnp.transpose(self._data, (*axes, self.ndim)))

    @property
    def T(self):  # noqa: N802 - NumPy's name
        return self.transpose()

    def block_until_ready(self):
        if hasattr(self._data, "block_until_ready"):
            self._data.block_until_ready()
        return self

    # -- what a key is not -------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError("an array with a PRNG key dtype cannot be converted to a NumPy "
                        "array; use absjit.random.key_data(key) for its uint32 words")

    def __bool__(self):
        raise TypeError("the truth value of a PRNG key is undefined")

    def __int__(self):
        raise TypeError("a PRNG key cannot be converted to an int; use random.key_data")

    __float__ = __index__ = __int__

    def __eq__(self, other):
        if not isinstance(other, KeyArray):
            raise TypeError(f"eq does not accept dtypes {self.dtype}, "
                            f"{getattr(other, 'dtype', type(other).__name__)}")
        return jnp.all(jnp.equal(self._data, other._data), axis=-1)

    def __ne__(self, other):
        return jnp.logical_not(self.__eq__(other))

    __hash__ = None

    def __repr__(self):
        if is_tracer(self._data):
            return f"Traced<{self.dtype}{list(self.shape)}> overlaying:\n{self._data!r}"
        return (f"Array({self.shape}, dtype={self.dtype}) overlaying:\n"
                f"{np.asarray(self._data)}")

    __str__ = __repr__


for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv",
              "floordiv", "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul",
              "and", "rand", "or", "ror", "xor", "rxor", "lshift", "rshift", "lt", "le",
              "gt", "ge"):
    setattr(KeyArray, f"__{_name}__", _no_arith(_name.lstrip("r") if _name not in (
        "rshift",) else _name))
for _name in ("neg", "pos", "abs", "invert"):
    setattr(KeyArray, f"__{_name}__", _no_arith(_name))
del _name

register_pytree_node(KeyArray, lambda k: ((k._data,), None),
                     lambda _, children: KeyArray(children[0]))
