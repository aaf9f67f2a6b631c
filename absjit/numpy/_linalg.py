"""absjit.numpy: linalg."""
__all__ = []
