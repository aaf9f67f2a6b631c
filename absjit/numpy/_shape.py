"""absjit.numpy: shape."""
__all__ = []
