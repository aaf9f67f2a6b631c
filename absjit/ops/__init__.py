"""Primitives by family, each with all its rules beside its definition."""
from . import elementwise, structural, reductions, linalg, conv, sorting, control_flow  # noqa: F401
