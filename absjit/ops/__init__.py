"""Primitives by family, each with all its rules beside its definition."""
from . import elementwise, structural  # noqa: F401
