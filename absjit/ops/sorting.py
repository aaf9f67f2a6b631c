"""sorting primitives."""
__all__ = []
