"""reductions primitives."""
__all__ = []
