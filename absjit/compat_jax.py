"""Run unmodified JAX code on absjit: an opt-in import alias.

After :func:`install`, ``import jax`` gives :mod:`absjit`, ``import jax.numpy as jnp``
gives :mod:`absjit.numpy`, and likewise every ``jax.X`` that absjit has (``jax.lax``,
``jax.random``, ``jax.tree_util``, ``jax.nn``, ``jax.scipy.special``,
``jax.flatten_util``, ``jax.typing``, ``jax.sharding``, ``jax.example_libraries.stax``
…): a ``sys.meta_path`` finder answers for the ``jax`` package. A ``jax.X`` absjit lacks
raises ``ImportError`` naming it. ``jaxlib`` is left alone.

Install it before anything imports jax: modules already imported keep the real jax
they hold. While it is installed, the name ``jax`` means absjit, so absjit's own
``xla`` backend (which runs programs through the real jax) is unavailable;
:func:`uninstall` (or leaving the :func:`installed` context) restores the modules the
alias displaced.

Examples
--------
>>> import absjit.compat_jax
>>> with absjit.compat_jax.installed():
...     import jax
...     import jax.numpy as jnp
...     print(jax.grad(lambda x: jnp.sin(x) * 2)(0.0))
2.0
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["install", "uninstall", "installed", "is_installed"]

ALIAS = "jax"
TARGET = "absjit"

# jax.X whose absjit counterpart has another name.
_RENAMES = {
    "jax.api_util": None,
    # Only the helpers JAX's documentation imports from its private modules.
    "jax._src": "absjit.extend._jax_src",
    "jax._src.util": "absjit.extend._jax_src.util",
}


def _target_name(fullname: str):
    """The absjit module ``fullname`` (``jax`` or ``jax.X...``) stands for, or None."""
    if fullname in _RENAMES:
        return _RENAMES[fullname]
    if fullname.startswith("jax._src."):
        return None
    return TARGET + fullname[len(ALIAS):]


class _AliasLoader(importlib.abc.Loader):
    """Loads ``jax.X`` by importing ``absjit.X`` and handing that module back."""

    def __init__(self, target: str):
        self.target = target
        self.own_spec = None

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # Already executed under its own name. The import system has just stamped the
        # alias's spec on it: give the module its own back (relative imports, reload).
        module.__spec__ = self.own_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``jax`` and ``jax.X`` as absjit's modules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = _target_name(fullname)
        try:
            found = real is not None and importlib.util.find_spec(real) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ImportError(f"{fullname} is not provided by absjit (import alias "
                              f"installed by absjit.compat_jax)", name=fullname)
        spec = importlib.util.spec_from_loader(fullname, _AliasLoader(real),
                                               is_package=True)
        spec.submodule_search_locations = []  # a package: ``jax.X.Y`` asks us again
        return spec


_FINDER = _AliasFinder()
_displaced: dict = {}


def is_installed() -> bool:
    """Whether the alias is installed."""
    return _FINDER in sys.meta_path


def install() -> None:
    """Make ``import jax`` and ``import jax.X`` resolve to absjit's modules.

    Modules named ``jax`` or ``jax.*`` already in ``sys.modules`` (a real jax imported
    earlier) are set aside and put back by :func:`uninstall`. Installing twice is a
    no-op.

    Examples
    --------
    >>> import absjit.compat_jax, sys
    >>> absjit.compat_jax.install()
    >>> import jax.numpy
    >>> jax.numpy is sys.modules["absjit.numpy"]
    True
    >>> absjit.compat_jax.uninstall()
    """
    if is_installed():
        return
    for name in list(sys.modules):
        if name == ALIAS or name.startswith(ALIAS + "."):
            _displaced[name] = sys.modules.pop(name)
    importlib.import_module(TARGET)  # absjit itself imports before the alias is live
    sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Remove the alias: ``jax`` names are forgotten and any real jax modules set
    aside by :func:`install` come back."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in list(sys.modules):
        if name == ALIAS or name.startswith(ALIAS + "."):
            mod = sys.modules[name]
            if getattr(mod, "__name__", "").split(".")[0] == TARGET:
                del sys.modules[name]
    sys.modules.update(_displaced)
    _displaced.clear()


@contextlib.contextmanager
def installed():
    """The alias for the duration of a ``with`` block.

    Examples
    --------
    >>> import absjit.compat_jax
    >>> with absjit.compat_jax.installed():
    ...     from jax import lax
    >>> lax.__name__
    'absjit.lax'
    """
    was = is_installed()
    install()
    try:
        yield
    finally:
        if not was:
            uninstall()
