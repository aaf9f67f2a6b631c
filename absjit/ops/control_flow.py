"""control_flow primitives."""
__all__ = []
