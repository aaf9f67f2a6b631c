"""absjit.numpy: sorting."""
__all__ = []
