"""A griffe extension for absjit's API reference (``mkdocs.yml`` loads it).

mkdocstrings inspects the live modules (``force_inspection``), which shows what a user
gets, but also what Python attaches to values that are not absjit's:

* a constant (``jnp.pi``) or a dtype (``jnp.float0``) has no docstring of its own, so
  the inspector shows its type's (``float``'s, NumPy's ``VoidDType``'s, with raw rST);
  these get absjit's own words below, and any other value with only its type's
  docstring gets none;
* Sphinx roles (``:func:`grad```) mean nothing to Markdown: they become inline code;
* a value without a readable ``repr`` shows a memory address (``<… object at 0x7f…>``),
  which changes from build to build: the address is dropped;
* ``from __future__ import annotations`` leaves a module attribute ``annotations``,
  which is not part of the API.

``tests/test_docs.py`` builds the site and checks that none of these reach the HTML.
"""
from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|obj|exc|ref|const|term|doc)"
                  r":`~?([^`<]*?)(?:\s*<([^>]*)>)?`")
ADDRESS = re.compile(r" (?:object )?at 0x[0-9a-fA-F]+")

# Module-level values that cannot carry a docstring, by module.
VALUE_DOCS = {
    "absjit.numpy": {
        "pi": "π, the ratio of a circle's circumference to its diameter, as a Python "
              "float (a weakly typed scalar in array expressions, as in JAX).",
        "e": "Euler's number, the base of the natural logarithm, as a Python float.",
        "euler_gamma": "The Euler–Mascheroni constant γ ≈ 0.5772, as a Python float.",
        "inf": "Positive infinity, as a Python float (``-inf`` for negative infinity).",
        "nan": "Not a Number, as a Python float: comparisons with it are false and it "
               "propagates through arithmetic.",
        "newaxis": "``None``, an alias for indexing: ``x[:, newaxis]`` inserts an axis of "
                   "size 1.",
        "float0": "The dtype of tangents of integer and boolean values: ``grad`` with "
                  "``allow_int=True`` returns arrays of it for integer inputs. It holds "
                  "no data (NumPy's zero-size void dtype), as ``jax.dtypes.float0``.",
    },
}
VALUE_DOCS["absjit"] = {"float0": VALUE_DOCS["absjit.numpy"]["float0"]}
VALUE_DOCS["absjit.dtypes"] = {"float0": VALUE_DOCS["absjit.numpy"]["float0"]}


def clean(text: str) -> str:
    """``text`` with Sphinx roles as inline code and memory addresses dropped."""
    text = ROLE.sub(lambda m: f"`{(m.group(2) or m.group(1)).strip()}`", text)
    return ADDRESS.sub("", text)


class AbsjitDocs(griffe.Extension):
    """Cleans docstrings and values as the inspector loads them."""

    def on_instance(self, *, obj, **kwargs):
        if obj.is_alias:
            return
        if obj.docstring is not None:
            obj.docstring.value = clean(obj.docstring.value)

    def on_attribute_instance(self, *, node, attr, **kwargs):
        if attr.value is not None:
            attr.value = ADDRESS.sub("", str(attr.value))
        module = attr.parent.path if attr.parent is not None else ""
        own = VALUE_DOCS.get(module, {}).get(attr.name)
        value = getattr(node, "obj", None)
        if own is not None:
            attr.docstring = griffe.Docstring(own, parent=attr)
        elif value is not None and attr.docstring is not None and \
                getattr(value, "__doc__", None) == getattr(type(value), "__doc__", 0):
            attr.docstring = None  # only its type's docstring: not about this value

    def on_module_members(self, *, mod, **kwargs):
        leaked = mod.members.get("annotations")
        if leaked is not None and not leaked.is_alias and leaked.is_attribute and \
                "_Feature" in str(leaked.value):
            mod.del_member("annotations")
