"""absjit.numpy: reductions."""
__all__ = []
