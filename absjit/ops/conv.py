"""conv primitives."""
__all__ = []
