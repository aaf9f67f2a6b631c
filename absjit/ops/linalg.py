"""linalg primitives."""
__all__ = []
